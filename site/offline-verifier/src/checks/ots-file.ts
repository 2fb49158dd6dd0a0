// An OpenTimestamps proof given as a file (any .ots): what it starts at (the document, a ledger file, a bundle's
// hash) and its attestations.
import { toHex } from '../../../../core/encoding.ts';
import { formatDetached, parseDetached, type DetachedTimestampFile } from '../../../../core/ots.ts';
import type { ClassifiedInput } from '../inputs.ts';
import { attestationChecks } from './bitcoin.ts';
import type { Context } from './context.ts';
import { fail, info, message, ok, pending, type Check, type Section } from './report.ts';

export function otsSection(ctx: Context, input: ClassifiedInput): Section {
  const title = `OpenTimestamps proof ${input.name}`;
  let d: DetachedTimestampFile;
  try {
    d = parseDetached(input.bytes);
  } catch (err) {
    return { title, checks: [fail('OpenTimestamps file', message(err))] };
  }
  const digest = toHex(d.timestamp.message);
  const checks: Check[] = [];
  const label = 'Proof starts at';
  const doc = ctx.inputs.document;
  const ledger = ctx.ledgers.find((l) => l.sha256 === digest);
  const bundle = ctx.bundles.find((b) => b.bundle?.hash === digest);
  if (d.fileHashOp !== 'sha256') {
    checks.push(info(label, `the ${d.fileHashOp} digest ${digest} (Timeseal uses SHA-256; compare it yourself)`));
  } else if (doc && doc.hash === digest) {
    checks.push(ok('Hash matches the document', [`The .ots starts at your document's SHA-256 ${digest}`]));
  } else if (ledger) {
    checks.push(ok(label, [`The SHA-256 of ${ledger.input.name}: ${digest}`]));
  } else if (bundle) {
    checks.push(ok(label, [`The hash of ${bundle.input.name}: ${digest}`]));
  } else if (doc) {
    checks.push(fail('Hash matches the document', `the .ots is for ${digest}, not your document's hash ${doc.hash}`));
  } else {
    checks.push(
      pending(
        'Hash matches the document',
        `no document given: the .ots is for ${digest}; choose the original file or paste its hash`,
      ),
    );
  }
  checks.push(...attestationChecks(d, ctx.pool, ctx.network));
  return { title, checks, tree: formatDetached(d) };
}
