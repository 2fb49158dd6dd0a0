// `timeseal-client verify`: files, folders, proof files or digests, checked offline layer by layer, a few at once,
// reported in order. What a file given is comes from core/evidence.ts, the sniffer every reader uses: a proof file
// (by its name or its content), a COSE receipt (`.receipt.cose`, checked with the pinned receipt keys of the log it
// names, for its document beside it or --digest), a timestamped PDF (cli/pdf.ts), or a kind of evidence this
// command does not check (an RFC 3161 receipt, a proof bundle, an .ots, a tlog-proof: one sentence naming the
// readers that do); anything else is a document whose proof file is looked for.
import fs from 'node:fs';
import path from 'node:path';
import { notCheckedHere, READERS } from '../../../core/evidence.ts';
import { VerifyCache } from '../cache.ts';
import { EXIT_CODES, worstOutcome, type Outcome } from '../../../core/exit-codes.ts';
import { receiptIss, transparentStatementParts, verifyCoseReceipt, verifyTransparentStatement } from '../cose.ts';
import { loadKeys } from '../keys.ts';
import { TimesealClientError } from '../errors.ts';
import { checkHash } from '../hash.ts';
import { parseProofFile, PROOF_SUFFIX } from '../proof-file.ts';
import { mapInOrder } from '../pool.ts';
import { keyFilesFrom } from '../trust.ts';
import type { KeyFiles, ProofFile, TrustData, VerifyReport } from '../types.ts';
import { outcomeOfState, verify } from '../verify.ts';
import { loadTrust, networkOf, printer, saveTrust, shown, trustPath, type Common } from './common.ts';
import { controller } from './exit.ts';
import { isPdfToCheck, runVerifyPdf } from './pdf.ts';
import {
  besideProof,
  digestProofPath,
  evidenceOf,
  globToRegExp,
  hashFile,
  nodeDigests,
  proofPathFor,
  readIfExists,
  RECEIPT_SUFFIX,
  walk,
  type Skipped,
} from './files.ts';

/** Files verified at once. */
const VERIFY_CONCURRENCY = 8;

interface VerifyPair {
  display: string;
  doc: string | null;
  digest?: string;
  proofPath: string;
}

export async function runVerify(
  given: string[],
  opts: Common & { digest: string[]; proof?: string; keys?: string },
): Promise<Outcome> {
  const out = printer(!!opts.json);
  const walkOptions = { all: !!opts.all, exclude: opts.exclude.map(globToRegExp) };
  const pairs: VerifyPair[] = [];
  /** Timestamped PDFs found in folders with the proof of their time-stamp beside them (cli/pdf.ts). */
  const pdfs: string[] = [];
  const outcomes: Outcome[] = [];
  const notFound = (file: string, why: string, extra: Record<string, unknown> = {}) => {
    outcomes.push('not-found');
    out.record({ file, state: 'not-found', exitCode: EXIT_CODES['not-found'], error: why, ...extra }, () => [
      `${file}: NOT FOUND: ${why}`,
    ]);
  };
  // What each file given is (core/evidence.ts): proof files by name or content, COSE receipts apart, kinds this
  // command does not check said so.
  const kinds = new Map(given.map((p) => [p, p.endsWith(PROOF_SUFFIX) ? ('client-proof' as const) : evidenceOf(p)]));
  const coseReceipts = given.filter((p) => kinds.get(p) === 'cose-receipt');
  const statements = given.filter((p) => kinds.get(p) === 'transparent-statement');
  for (const p of given) {
    const kind = kinds.get(p);
    if (kind == null || READERS[kind].includes('client')) continue;
    outcomes.push('failed');
    const reason = notCheckedHere(kind, 'client');
    out.record({ file: p, kind, state: 'not-checked', exitCode: EXIT_CODES.failed, reason }, () => [
      `${p}: NOT CHECKED: ${reason}`,
    ]);
  }
  const paths = given.filter((p) => {
    const kind = kinds.get(p);
    return kind == null || kind === 'client-proof' || kind === 'timestamped-pdf';
  });
  const isProof = (p: string) => kinds.get(p) === 'client-proof';
  // One COSE receipt and one --digest: the digest is the receipt's.
  const receiptDigest = coseReceipts.length === 1 && opts.digest.length === 1 ? opts.digest[0] : undefined;
  const digests = receiptDigest === undefined ? opts.digest : [];
  const proofs = paths.filter(isProof);
  const docs = paths.filter((p) => !isProof(p));
  for (const d of digests) {
    const hash = checkHash(d, '--digest');
    const given =
      opts.proof ?? (digests.length === 1 && docs.length === 0 && proofs.length === 1 ? proofs[0] : undefined);
    pairs.push({
      display: hash,
      doc: null,
      digest: hash,
      proofPath: given !== undefined ? path.resolve(given) : digestProofPath(hash, opts.outDir),
    });
  }
  if (digests.length === 0) {
    const pairedProof = opts.proof ?? (docs.length === 1 && proofs.length === 1 ? proofs[0] : undefined);
    if (pairedProof !== undefined) {
      if (docs.length !== 1)
        throw new TimesealClientError('usage', '--proof goes with exactly one file (or one --digest)');
      pairs.push({ display: docs[0]!, doc: path.resolve(docs[0]!), proofPath: path.resolve(pairedProof) });
    } else {
      for (const p of paths) {
        const abs = path.resolve(p);
        if (isProof(p)) {
          pairs.push({ display: p, doc: null, proofPath: abs });
          continue;
        }
        const st = fs.statSync(abs, { throwIfNoEntry: false });
        if (st === undefined) notFound(p, 'no such file or folder');
        else if (st.isDirectory()) {
          const skipped: Skipped[] = [];
          for (const f of walk(abs, walkOptions, skipped, shown))
            if (isPdfToCheck(f, opts.outDir) && fs.existsSync(proofPathFor(f, opts.outDir))) pdfs.push(shown(f));
            else pairs.push({ display: shown(f), doc: f, proofPath: proofPathFor(f, opts.outDir) });
        } else pairs.push({ display: p, doc: abs, proofPath: proofPathFor(abs, opts.outDir) });
      }
    }
  }
  if (
    pairs.length === 0 &&
    pdfs.length === 0 &&
    outcomes.length === 0 &&
    coseReceipts.length === 0 &&
    statements.length === 0
  )
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
      readBeside: besideProof(pair.proofPath),
      digests: nodeDigests,
    });
    return {
      outcome: outcomeOfState(report.state),
      record: { file: display, proof: shown(pair.proofPath), ...report },
      human: () => humanReport(display, report),
    };
  };
  for (const receipt of coseReceipts) {
    const o = await verifyCoseFile(receipt, receiptDigest, keys, trust);
    outcomes.push(o.outcome);
    out.record(o.record, o.human);
  }
  for (const statement of statements) {
    const o = verifyStatementFile(statement, keys, trust);
    outcomes.push(o.outcome);
    out.record(o.record, o.human);
  }
  if (pdfs.length > 0) outcomes.push(await runVerifyPdf(pdfs, opts));
  // A few files at once, printed in order: reading a file and Web Crypto's checks wait on other threads.
  await mapInOrder(pairs, VERIFY_CONCURRENCY, verifyPair, (o) => {
    outcomes.push(o.outcome);
    out.record(o.record, o.human);
  });
  saveTrust(trustFile, trust);
  return worstOutcome(outcomes);
}

/**
 * A `.receipt.cose` alone: for its document beside it (`<name>.receipt.cose` → `<name>`) or the --digest given,
 * with the receipt keys of --keys, else those pinned for the server whose log the receipt names (its `iss`).
 */
async function verifyCoseFile(
  receiptPath: string,
  digest: string | undefined,
  keys: KeyFiles | undefined,
  trust: TrustData,
): Promise<{ outcome: Outcome; record: Record<string, unknown>; human: () => string[] }> {
  const bytes = new Uint8Array(fs.readFileSync(receiptPath));
  const doc = receiptPath.endsWith(RECEIPT_SUFFIX) ? receiptPath.slice(0, -RECEIPT_SUFFIX.length) : null;
  let hash = digest === undefined ? undefined : checkHash(digest, '--digest');
  let documentHash: string | undefined;
  if (hash === undefined) {
    if (doc === null || !fs.statSync(doc, { throwIfNoEntry: false })?.isFile()) {
      const why = `the receipt's document ${doc === null ? '' : `${shown(doc)} `}is not there: give it beside the receipt, or --digest HEX`;
      return {
        outcome: 'not-found',
        record: { file: receiptPath, state: 'not-found', exitCode: EXIT_CODES['not-found'], error: why },
        human: () => [`${receiptPath}: NOT FOUND: ${why}`],
      };
    }
    hash = documentHash = await hashFile(doc, undefined, controller.signal);
  }
  const report = verifyCoseReceipt(bytes, {
    hash,
    ...(documentHash === undefined ? {} : { documentHash }),
    ...receiptKeysOf(receiptIss(bytes), keys, trust),
  });
  const display = doc !== null && documentHash !== undefined ? shown(doc) : receiptPath;
  return {
    outcome: outcomeOfState(report.state),
    record: { file: display, receipt: shown(receiptPath), ...report },
    human: () => humanReport(display, report),
  };
}

/** The receipt keys for a receipt of the log `iss`: those of --keys, else those pinned for its server; `why` when none. */
function receiptKeysOf(iss: string | null, keys: KeyFiles | undefined, trust: TrustData) {
  const pinned = Object.entries(trust.servers).find(([, s]) => iss !== null && s.origin === iss);
  const files = keys ?? pinned?.[1].keys;
  return {
    keys: files === undefined ? null : loadKeys(files).receiptKeys,
    why:
      files === undefined
        ? `no server whose log is ${iss ?? 'the one this receipt names'} is pinned in the trust store: run stamp or upgrade online once (it pins its keys), or give the keys folder (--keys DIR)`
        : `no receipt keys (receipt-es256.pem, receipt-mldsa65.pem) ${keys !== undefined ? 'in the keys given' : `are pinned for ${pinned![0]}`}`,
  };
}

/** A Transparent Statement: its receipts for its entry, with the keys of the log its first receipt names. */
function verifyStatementFile(
  file: string,
  keys: KeyFiles | undefined,
  trust: TrustData,
): { outcome: Outcome; record: Record<string, unknown>; human: () => string[] } {
  const bytes = new Uint8Array(fs.readFileSync(file));
  const parts = transparentStatementParts(bytes);
  const iss = typeof parts === 'string' ? null : receiptIss(parts.receipts[0]!);
  const report = verifyTransparentStatement(bytes, receiptKeysOf(iss, keys, trust));
  return {
    outcome: outcomeOfState(report.state),
    record: { file, kind: 'transparent-statement', ...report },
    human: () => humanReport(file, report),
  };
}

function humanReport(name: string, r: VerifyReport): string[] {
  const head =
    r.state === 'complete'
      ? `COMPLETE${r.existedNoLaterThan ? `: existed no later than ${r.existedNoLaterThan.time} (${r.existedNoLaterThan.by})` : ''}`
      : r.state === 'pending'
        ? `PENDING (valid so far)${r.existedNoLaterThan ? `: existed no later than ${r.existedNoLaterThan.time} (${r.existedNoLaterThan.by})` : ''}`
        : r.state === 'broken'
          ? `BROKEN: ${r.problems[0] ?? ''}`
          : `INVALID: ${r.problems[0] ?? ''}`;
  return [
    `${name}: ${head}`,
    ...r.layers.map(
      (l) =>
        `  ${l.status.padEnd(8)}${l.layer.padEnd(16)}${l.checked}${l.bound ? ` — existed no later than ${l.bound.time} (${l.bound.by})` : ''}`,
    ),
  ];
}
