// A Timeseal receipt (docs/FORMAT.md §3b), given as a file or carried by a proof bundle: the token, its chain
// to the TSA root, the document's hash, and whether the promise it makes (the hash in that day's ledger) is kept.
import { ledgerPath, parseDays } from '../../../../core/archive.ts';
import { fromUtf8, toHex } from '../../../../core/encoding.ts';
import type { Ledger } from '../../../../core/ledger.ts';
import { checkReceipt, digestLength, judgePromise, type ReceiptFacts } from '../../../../core/receipt.ts';
import type { ClassifiedInput } from '../inputs.ts';
import { documentMatch, type Context } from './context.ts';
import { fail, info, message, ok, pending, short, type Check, type Section } from './report.ts';

/**
 * A Timeseal receipt (docs/FORMAT.md §3b; core/receipt.ts): the token (signature, TSA certificate, Timeseal's
 * policy), its chain to the TSA root the person drops (timeseal-tsa-root.pem from /keys/), the document's hash,
 * and its promise, judged from the day's ledger when that day's files checked out, else from what the person
 * gave about which days are published (a later day's signed ledger, or days.json). A receipt carried by a proof
 * bundle (`within`, timeseal-proof/3) must be for the bundle's hash; what it still waits for (the root, the day)
 * is named there without holding back the bundle's verdict.
 */
export function receiptSection(ctx: Context, input: ClassifiedInput, within?: { hash: string }): Section {
  const section: Section = { title: `Timeseal receipt ${input.name}`, checks: [] };
  const authority = ctx.inputs.authority;
  const label = 'Receipt (RFC 3161 time-stamp)';
  const row = pending(label, 'checking…');
  section.checks.push(row);
  ctx.later.push(
    checkReceipt(input.bytes, authority?.certs ?? []).then(
      (f) => {
        const time = `${f.genTime.toISOString()} (UTC)`;
        const imprint = toHex(f.imprint);
        section.checks.unshift(
          info(
            'Claim',
            `${f.imprintAlgorithm} ${short(imprint)} existed at ${time}, stamped by ${f.tsaName}; promised to be in the ledger of ${f.date}`,
          ),
        );
        Object.assign(
          row,
          ok(label, [
            `Time ${time}`,
            `TSA ${f.tsaName}`,
            `Serial ${f.serialNumber}`,
            `${f.imprintAlgorithm} ${imprint}`,
            ...(f.ledgerHash === imprint ? [] : [`In the ledger as ${f.ledgerHash} (the SHA-256 of its TSTInfo)`]),
          ]),
        );
        const chain = `Certificates ${f.chain.join(' → ')}`;
        section.checks.push(
          f.anchored
            ? ok('Chain to the TSA root', [chain, `Root from ${authority!.source}`])
            : pending('Chain to the TSA root', 'not checked against a root: add timeseal-tsa-root.pem from /keys/', [
                chain,
              ]),
          receiptDocument(ctx, f, imprint),
          receiptPromise(ctx, f),
        );
        if (within) {
          if (f.ledgerHash !== within.hash)
            section.checks.push(
              fail("The bundle's hash", `the receipt is for ${f.ledgerHash}, not the bundle's ${within.hash}`),
            );
          for (const c of section.checks)
            if (c.state === 'pending')
              Object.assign(c, info(c.label, c.verdict.replace('Not verified: ', 'not checked here: '), c.details));
        }
      },
      (err) =>
        Object.assign(
          row,
          fail(
            label,
            `${message(err)}${authority ? ' (the Timeseal TSA root is timeseal-tsa-root.pem in /keys/)' : ''}`,
          ),
        ),
    ),
  );
  return section;
}

function receiptDocument(ctx: Context, f: ReceiptFacts, imprint: string): Check {
  const algorithm = f.imprintAlgorithm;
  if (algorithm === 'SHA-256') return documentMatch(ctx, imprint, 'the receipt');
  const doc = ctx.inputs.document;
  const label = 'Hash matches the document';
  const hash = doc?.digests?.[algorithm] ?? (doc?.hash.length === 2 * digestLength(algorithm) ? doc.hash : undefined);
  if (hash)
    return hash === imprint
      ? ok(label, [`${algorithm} ${hash}`])
      : fail(label, `your document's ${algorithm} ${hash} is not the receipt's ${imprint}`);
  return {
    ...pending(label, `a ${algorithm} receipt: choose the original file, or paste its ${algorithm} hash`),
    needsDigest: algorithm,
  };
}

/** The promise of a Timeseal receipt (its ledger hash in the ledger of its day), judged from what was given. */
export function receiptPromise(ctx: Context, f: ReceiptFacts): Check {
  const { date } = f;
  const label = `Promise: in the ledger of ${date}`;
  const judged = (ledger: Ledger | null, lastPublished: string | null, details: string[]): Check => {
    const v = judgePromise(f, ledger, lastPublished);
    if (v.state === 'kept')
      return ok(label, [`Leaf ${v.leafIndex}`, `Recorded at ${v.recordedAt} (the ledger's time)`, ...details]);
    if (v.state === 'pending') return pending(label, v.reason, details);
    // Evidence against Timeseal only when the receipt is Timeseal's: its chain must reach the root.
    return f.anchored
      ? fail(label, v.reason, details)
      : pending(
          label,
          `its chain was not checked against a root (add timeseal-tsa-root.pem): if the receipt is Timeseal's, ${v.reason}`,
          details,
        );
  };
  const ledger = ctx.verified.get(date);
  if (ledger) return judged(ledger, null, [`From ${ledgerPath(date)}, checked above`]);
  const add = `add ${ledgerPath(date)} with its .sig, .dilithium.sig, .signatures.json and .checkpoint`;
  if (ctx.ledgers.some((l) => (l.input.date ?? l.ledger?.date) === date))
    return pending(label, `${ledgerPath(date)} is given but not verified with its signature files: see Ledger ${date}`);
  // A later day's signed ledger names the day before it: the receipt's day has no ledger when it is skipped.
  const later = [...ctx.verified.values()].filter((l) => l.date > date).sort((a, b) => (a.date < b.date ? -1 : 1))[0];
  if (later) {
    const before = later.previous?.date;
    const details = [
      `The signed ledger of ${later.date} names ${before ? `${before} as the day before it` : 'no day before it'}`,
    ];
    if (before === date) return pending(label, `the ledger of ${date} is published: ${add}`, details);
    if (!before || before < date) return judged(null, later.date, details);
    return pending(label, `${ledgerPath(date)} was not given, and later days are published: ${add}`, details);
  }
  const daysFile = ctx.inputs.files.find((x) => x.kind === 'days');
  if (daysFile) {
    let days: string[];
    try {
      days = parseDays(fromUtf8(daysFile.bytes)).days.map((d) => d.date);
    } catch (err) {
      return fail(label, `${daysFile.name}: ${message(err)}`);
    }
    const details = [`Published days from ${daysFile.name} (it is not signed; the days' signed ledgers show the same)`];
    return days.includes(date)
      ? pending(label, `the ledger of ${date} is published: ${add}`, details)
      : judged(null, days.at(-1) ?? null, details);
  }
  return pending(label, `the ledger of ${date} was not given: ${add} (or days.json, to see whether it is published)`);
}
