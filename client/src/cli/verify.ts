// `timeseal-client verify`: files, folders, proof files or digests, checked offline layer by layer, a few at once,
// reported in order.
import fs from 'node:fs';
import path from 'node:path';
import { VerifyCache } from '../cache.ts';
import { EXIT_CODES, worstOutcome, type Outcome } from '../../../core/exit-codes.ts';
import { TimesealClientError } from '../errors.ts';
import { checkHash } from '../hash.ts';
import { parseProofFile, PROOF_SUFFIX } from '../proof-file.ts';
import { mapInOrder } from '../pool.ts';
import { keyFilesFrom } from '../trust.ts';
import type { KeyFiles, ProofFile, VerifyReport } from '../types.ts';
import { outcomeOfState, verify } from '../verify.ts';
import { loadTrust, networkOf, printer, saveTrust, shown, trustPath, type Common } from './common.ts';
import { controller } from './exit.ts';
import { digestProofPath, globToRegExp, hashFile, proofPathFor, readIfExists, walk, type Skipped } from './files.ts';

/** Files verified at once. */
const VERIFY_CONCURRENCY = 8;

interface VerifyPair {
  display: string;
  doc: string | null;
  digest?: string;
  proofPath: string;
}

export async function runVerify(
  paths: string[],
  opts: Common & { digest: string[]; proof?: string; keys?: string },
): Promise<Outcome> {
  const out = printer(!!opts.json);
  const walkOptions = { all: !!opts.all, exclude: opts.exclude.map(globToRegExp) };
  const pairs: VerifyPair[] = [];
  const outcomes: Outcome[] = [];
  const notFound = (file: string, why: string, extra: Record<string, unknown> = {}) => {
    outcomes.push('not-found');
    out.record({ file, state: 'not-found', exitCode: EXIT_CODES['not-found'], error: why, ...extra }, () => [
      `${file}: NOT FOUND: ${why}`,
    ]);
  };
  const proofs = paths.filter((p) => p.endsWith(PROOF_SUFFIX));
  const docs = paths.filter((p) => !p.endsWith(PROOF_SUFFIX));
  for (const d of opts.digest) {
    const hash = checkHash(d, '--digest');
    const given =
      opts.proof ?? (opts.digest.length === 1 && docs.length === 0 && proofs.length === 1 ? proofs[0] : undefined);
    pairs.push({
      display: hash,
      doc: null,
      digest: hash,
      proofPath: given !== undefined ? path.resolve(given) : digestProofPath(hash, opts.outDir),
    });
  }
  if (opts.digest.length === 0) {
    const pairedProof = opts.proof ?? (docs.length === 1 && proofs.length === 1 ? proofs[0] : undefined);
    if (pairedProof !== undefined) {
      if (docs.length !== 1)
        throw new TimesealClientError('usage', '--proof goes with exactly one file (or one --digest)');
      pairs.push({ display: docs[0]!, doc: path.resolve(docs[0]!), proofPath: path.resolve(pairedProof) });
    } else {
      for (const p of paths) {
        const abs = path.resolve(p);
        if (p.endsWith(PROOF_SUFFIX)) {
          pairs.push({ display: p, doc: null, proofPath: abs });
          continue;
        }
        const st = fs.statSync(abs, { throwIfNoEntry: false });
        if (st === undefined) notFound(p, 'no such file or folder');
        else if (st.isDirectory()) {
          const skipped: Skipped[] = [];
          for (const f of walk(abs, walkOptions, skipped, shown))
            pairs.push({ display: shown(f), doc: f, proofPath: proofPathFor(f, opts.outDir) });
        } else pairs.push({ display: p, doc: abs, proofPath: proofPathFor(abs, opts.outDir) });
      }
    }
  }
  if (pairs.length === 0 && outcomes.length === 0)
    throw new TimesealClientError('usage', 'nothing to verify: give files, folders, proof files or --digest HEX');

  const trustFile = trustPath(opts);
  const trust = loadTrust(trustFile);
  let keys: KeyFiles | undefined;
  if (opts.keys !== undefined) {
    const dir = path.resolve(opts.keys);
    keys = keyFilesFrom((name) => {
      try {
        return new Uint8Array(fs.readFileSync(path.join(dir, name)));
      } catch {
        return undefined;
      }
    });
  }
  const network = networkOf(opts);
  const cache = new VerifyCache();
  /** What verifying one pair gives: its outcome and its record. */
  interface Verified {
    outcome: Outcome;
    record: Record<string, unknown>;
    human: () => string[];
  }
  const missing = (file: string, why: string, extra: Record<string, unknown> = {}): Verified => ({
    outcome: 'not-found',
    record: { file, state: 'not-found', exitCode: EXIT_CODES['not-found'], error: why, ...extra },
    human: () => [`${file}: NOT FOUND: ${why}`],
  });
  const verifyPair = async (pair: VerifyPair): Promise<Verified> => {
    const proofText = readIfExists(pair.proofPath);
    if (proofText === undefined)
      return missing(pair.display, `no proof file ${shown(pair.proofPath)}`, { proof: shown(pair.proofPath) });
    let proof: ProofFile;
    try {
      proof = parseProofFile(proofText);
    } catch (err) {
      return {
        outcome: 'failed',
        record: {
          file: pair.display,
          proof: shown(pair.proofPath),
          state: 'invalid',
          exitCode: EXIT_CODES.failed,
          problems: [(err as Error).message],
        },
        human: () => [`${pair.display}: INVALID: ${shown(pair.proofPath)}: ${(err as Error).message}`],
      };
    }
    let doc = pair.doc;
    let display = pair.display;
    if (doc === null && pair.digest === undefined && proof.file !== null) {
      doc = path.resolve(path.dirname(pair.proofPath), proof.file);
      display = shown(doc);
    }
    let hash = pair.digest;
    if (doc !== null) {
      try {
        hash = await hashFile(doc, undefined, controller.signal);
      } catch (err) {
        if (controller.signal.aborted) throw err;
        if ((err as NodeJS.ErrnoException).code === 'ENOENT')
          return missing(display, `the document is missing (its proof is ${shown(pair.proofPath)})`, {
            proof: shown(pair.proofPath),
          });
        throw err;
      }
    }
    const report = await verify(proof, {
      trust,
      ...(keys === undefined ? {} : { keys }),
      ...(hash === undefined ? {} : { hash }),
      network,
      signal: controller.signal,
      cache,
    });
    return {
      outcome: outcomeOfState(report.state),
      record: { file: display, proof: shown(pair.proofPath), ...report },
      human: () => humanReport(display, report),
    };
  };
  // A few files at once, printed in order: reading a file and Web Crypto's checks wait on other threads.
  await mapInOrder(pairs, VERIFY_CONCURRENCY, verifyPair, (o) => {
    outcomes.push(o.outcome);
    out.record(o.record, o.human);
  });
  saveTrust(trustFile, trust);
  return worstOutcome(outcomes);
}

function humanReport(name: string, r: VerifyReport): string[] {
  const head =
    r.state === 'complete'
      ? `COMPLETE${r.existedNoLaterThan ? `: existed no later than ${r.existedNoLaterThan.time} (${r.existedNoLaterThan.by})` : ''}`
      : r.state === 'pending'
        ? `PENDING (valid so far)${r.existedNoLaterThan ? `: existed no later than ${r.existedNoLaterThan.time} (${r.existedNoLaterThan.by})` : ''}`
        : `INVALID: ${r.problems[0] ?? ''}`;
  return [
    `${name}: ${head}`,
    ...r.layers.map(
      (l) =>
        `  ${l.status.padEnd(8)}${l.layer.padEnd(16)}${l.checked}${l.bound ? ` — existed no later than ${l.bound.time} (${l.bound.by})` : ''}`,
    ),
  ];
}
