// `timeseal-client stamp --pdf FILE.pdf` and `timeseal-client verify FILE.pdf` (client/src/pdf.ts). Stamping
// writes FILE.timestamped.pdf beside the input (or under --out-dir), never over the input, and not over an
// existing file unless --force; only the digest over the ByteRange is sent. Beside the output goes the proof file
// of that digest, FILE.timestamped.pdf.timeseal.json (no `file`: it is a digest's, not the PDF's bytes'), which
// `upgrade` completes like any other. Verifying checks every document time-stamp offline against the pinned TSA
// roots and each Timeseal promise against the proof file of its digest (beside the PDF, `<digest>.timeseal.json`
// in its folder, or the proof of another PDF of its folder: an earlier version stamped before): pending (valid
// so far) while there is none or it is not upgraded, kept once it holds the day's signed ledger; failed when a
// time-stamp does not check, a promise is broken, or there is no time-stamp.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { TimesealClientError } from '../errors.ts';
import { EXIT_CODES, worstOutcome, type Outcome } from '../../../core/exit-codes.ts';
import { checkPdfTimeStamps } from '../../../core/pdf-check.ts';
import { checkPdf, stampPdf, type PdfReport } from '../pdf.ts';
import { encodeProofFile, newProofFile, parseProofFile, PROOF_SUFFIX } from '../proof-file.ts';
import { pinServer } from '../trust.ts';
import type { ProofFile, ReadBeside, TrustData } from '../types.ts';
import { outcomeOfState } from '../verify.ts';
import { httpOf, loadTrust, printer, saveTrust, serverOf, shown, trustPath, type Common } from './common.ts';
import { besideProof, proofPathFor, readIfExists, writeAtomic } from './files.ts';

const inflate = async (data: Uint8Array): Promise<Uint8Array> =>
  new Uint8Array(await new Promise<Buffer>((ok, no) => zlib.inflate(data, (e, r) => (e ? no(e) : ok(r)))));

/** FILE.pdf → FILE.timestamped.pdf (a name without .pdf gets .timestamped.pdf added). */
export function timestampedName(file: string): string {
  return /\.pdf$/i.test(file) ? file.replace(/\.pdf$/i, (ext) => `.timestamped${ext}`) : `${file}.timestamped.pdf`;
}

export async function runStampPdf(files: string[], opts: Common & { force?: boolean }): Promise<Outcome> {
  const out = printer(!!opts.json);
  const server = serverOf(opts, true)!;
  const http = httpOf(opts);
  const trustFile = trustPath(opts);
  const trust = loadTrust(trustFile);
  const pin = await pinServer(trust, server, http);
  if (pin.pinned === 'new') out.note(`pinned the keys of ${server} in ${trustFile}`);
  for (const n of pin.notes) out.note(n);
  saveTrust(trustFile, trust);
  const outcomes: Outcome[] = [];
  for (const file of files) {
    const abs = path.resolve(file);
    const target =
      opts.outDir === undefined
        ? timestampedName(abs)
        : path.join(path.resolve(opts.outDir), path.relative(process.cwd(), timestampedName(abs)));
    const fail = (outcome: Outcome, state: string, error: string) => {
      outcomes.push(outcome);
      out.record({ file, state, exitCode: EXIT_CODES[outcome], error }, () => [
        `${file}: ${state.toUpperCase()}: ${error}`,
      ]);
    };
    let pdf: Uint8Array;
    try {
      pdf = new Uint8Array(fs.readFileSync(abs));
    } catch (err) {
      fail(
        'not-found',
        'not-found',
        `cannot read it: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
      continue;
    }
    if (fs.existsSync(target) && !opts.force) {
      fail('failed', 'refused', `${shown(target)} exists already: move it away, or give --force to replace it`);
      continue;
    }
    try {
      const stamped = await stampPdf(pdf, { ...http, server, trust, inflate });
      writeBytesAtomic(target, stamped.bytes);
      const proofPath = `${target}${PROOF_SUFFIX}`;
      const proof = newProofFile({
        hash: stamped.digest,
        server,
        submittedAt: stamped.genTime,
        ledgerDate: stamped.ledgerDate,
        receipt: stamped.receipt,
      });
      writeAtomic(proofPath, encodeProofFile(proof));
      outcomes.push('ok');
      out.record(
        {
          file,
          output: shown(target),
          proof: shown(proofPath),
          state: 'stamped',
          exitCode: EXIT_CODES.ok,
          digest: stamped.digest,
          field: stamped.field,
          genTime: stamped.genTime,
          tsa: stamped.tsa,
          serialNumber: stamped.serialNumber,
          ledgerDate: stamped.ledgerDate,
          bytes: stamped.bytes.length,
          appended: stamped.bytes.length - pdf.length,
        },
        () => [
          `${file}: STAMPED: ${shown(target)} (${stamped.bytes.length - pdf.length} bytes appended; the original bytes unchanged)`,
          `  time-stamp "${stamped.field}" at ${stamped.genTime} by ${stamped.tsa} (serial ${stamped.serialNumber}), for SHA-256 ${stamped.digest} over the ByteRange; the ledger of ${stamped.ledgerDate} will hold it`,
          `  its proof file ${shown(proofPath)}: run timeseal-client upgrade ${shown(target)} once the day is published, then verify shows the promise kept`,
        ],
      );
    } catch (err) {
      if (err instanceof TimesealClientError && err.code === 'pdf') fail('failed', 'refused', err.message);
      else throw err;
    }
  }
  return worstOutcome(outcomes);
}

/** Writes `bytes` to a temporary file beside `file`, then renames it: a reader never sees half a PDF. */
function writeBytesAtomic(file: string, bytes: Uint8Array): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  fs.writeFileSync(tmp, bytes);
  fs.renameSync(tmp, file);
}

/** The proof file at `file`, or undefined when there is none or it cannot be read as one. */
function proofAt(file: string): ProofFile | undefined {
  try {
    const text = readIfExists(file);
    return text === undefined ? undefined : parseProofFile(text);
  } catch {
    return undefined;
  }
}

/**
 * Whether `abs` is a PDF to check as a timestamped PDF rather than as a document against its proof file: a PDF
 * without a proof file beside it, or whose proof file is a digest's (`stamp --pdf` writes the proof of its
 * time-stamp's digest there, with no `file`), not the proof of its bytes.
 */
export function isPdfToCheck(abs: string, outDir: string | undefined): boolean {
  const head = Buffer.alloc(5);
  try {
    if (!fs.statSync(abs).isFile()) return false;
    const fd = fs.openSync(abs, 'r');
    try {
      fs.readSync(fd, head, 0, 5, 0);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false; // not a readable file: left to the proof files' verify, which reports it
  }
  // The proof beside it is read only for a PDF (a folder's other files are not read twice).
  if (head.toString('latin1') !== '%PDF-') return false;
  const proofPath = proofPathFor(abs, outDir);
  return !fs.existsSync(proofPath) || proofAt(proofPath)?.file === null;
}

/** Which of `paths` are PDFs to check as timestamped PDFs (named by --pdf, or isPdfToCheck), and the rest. */
export function pdfsAmong(paths: string[], outDir: string | undefined): { pdfs: string[]; rest: string[] } {
  const pdfs: string[] = [];
  const rest: string[] = [];
  for (const p of paths) (isPdfToCheck(path.resolve(p), outDir) ? pdfs : rest).push(p);
  return { pdfs, rest };
}

/**
 * The proof files of the Timeseal time-stamps of `pdf` (for upgrade), found as verify finds them (PdfProofs); none
 * when it is not a PDF to check as a timestamped PDF (isPdfToCheck), cannot be read as one, or has no such proof.
 */
export async function proofsOfPdf(pdf: string, outDir: string | undefined): Promise<string[]> {
  if (!isPdfToCheck(pdf, outDir)) return [];
  let hashes: string[];
  try {
    const check = await checkPdfTimeStamps(new Uint8Array(fs.readFileSync(pdf)), { inflate, authority: [] });
    hashes = check.stamps.flatMap((s) => (s.receipt === null ? [] : [s.receipt.ledgerHash]));
  } catch {
    return []; // not readable as a PDF: the caller says there is no proof file
  }
  const found = new PdfProofs(outDir).for(pdf);
  for (const h of hashes) found.lookup(h);
  return [...new Set(found.used.values())];
}

/**
 * For `upgrade` of a timestamped PDF: the proof file of each valid Timeseal time-stamp whose digest has none (a
 * PDF stamped in the browser), written as `stamp --pdf` writes it: the digest, its server (the pinned one whose
 * TSA root the token chains to), the token's time and day, and the PDF's own token as the receipt. It goes beside
 * the PDF (or under --out-dir) when that place is free, else `<digest>.timeseal.json` in its folder (where
 * verify looks too). What cannot be done is said: a Timeseal token whose server is not pinned (give --server).
 */
export async function writeMissingPdfProofs(
  pdf: string,
  outDir: string | undefined,
  trust: TrustData,
): Promise<{ written: string[]; unpinned: number[] }> {
  const none = { written: [], unpinned: [] };
  if (!isPdfToCheck(pdf, outDir)) return none;
  let report: PdfReport;
  const found = new PdfProofs(outDir).for(pdf);
  try {
    report = await checkPdf(new Uint8Array(fs.readFileSync(pdf)), { trust, inflate, proofFor: found.lookup });
  } catch {
    return none; // not readable as a PDF: the caller says there is no proof file
  }
  const written: string[] = [];
  const unpinned: number[] = [];
  for (const s of report.timeStamps) {
    if (s.ledger === null || s.state !== 'valid') continue;
    if (s.server === null) {
      if (found.lookup(s.ledger.hash) === undefined) unpinned.push(s.index);
      continue;
    }
    if (s.promise?.proof !== false) continue;
    const beside = proofPathFor(pdf, outDir);
    const file = fs.existsSync(beside) ? path.join(path.dirname(pdf), `${s.ledger.hash}${PROOF_SUFFIX}`) : beside;
    if (fs.existsSync(file)) continue; // a proof of another kind is there: left alone
    const proof = newProofFile({
      hash: s.ledger.hash,
      server: s.server,
      submittedAt: s.token!.genTime,
      ledgerDate: s.ledger.date,
      receipt: s.receipt,
    });
    writeAtomic(file, encodeProofFile(proof));
    written.push(file);
  }
  return { written, unpinned };
}

/**
 * The proof files of a PDF's time-stamps, by digest: the one beside it (or under --out-dir), `<digest>.timeseal.json`
 * in its folder, then the proof of another PDF of its folder (`*.pdf.timeseal.json`: an earlier version stamped
 * before this one). Only proofs of a digest (no `file`) count. The folders' proofs are read once a run.
 */
class PdfProofs {
  private readonly folders = new Map<string, Array<{ file: string; proof: ProofFile }>>();
  private readonly outDir: string | undefined;
  constructor(outDir: string | undefined) {
    this.outDir = outDir;
  }

  for(pdf: string): {
    lookup: (hash: string) => ProofFile | undefined;
    used: Map<string, string>;
    beside: (hash: string) => ReadBeside | undefined;
  } {
    const used = new Map<string, string>();
    const dir = path.dirname(pdf);
    const lookup = (hash: string): ProofFile | undefined => {
      const mine = (p: ProofFile | undefined) => p !== undefined && p.file === null && p.hash === hash;
      const direct = [
        proofPathFor(pdf, this.outDir),
        `${pdf}${PROOF_SUFFIX}`,
        path.join(dir, `${hash}${PROOF_SUFFIX}`),
      ];
      const found =
        direct.map((file) => ({ file, proof: proofAt(file) })).find((c) => mine(c.proof)) ??
        this.folder(dir).find((c) => mine(c.proof));
      if (found === undefined) return undefined;
      used.set(hash, found.file);
      return found.proof!;
    };
    /** The files beside the proof file found for `hash` (its kept ledger). */
    const beside = (hash: string): ReadBeside | undefined => {
      const file = used.get(hash);
      return file === undefined ? undefined : besideProof(file);
    };
    return { lookup, used, beside };
  }

  private folder(dir: string): Array<{ file: string; proof: ProofFile }> {
    let proofs = this.folders.get(dir);
    if (proofs === undefined) {
      let names: string[] = [];
      try {
        names = fs.readdirSync(dir).filter((n) => /\.pdf\.timeseal\.json$/i.test(n));
      } catch {
        // an unreadable folder holds no proof here
      }
      proofs = names.sort().flatMap((n) => {
        const file = path.join(dir, n);
        const proof = proofAt(file);
        return proof === undefined ? [] : [{ file, proof }];
      });
      this.folders.set(dir, proofs);
    }
    return proofs;
  }
}

export async function runVerifyPdf(files: string[], opts: Common): Promise<Outcome> {
  const out = printer(!!opts.json);
  const trust = loadTrust(trustPath(opts));
  const proofs = new PdfProofs(opts.outDir);
  const outcomes: Outcome[] = [];
  for (const file of files) {
    let pdf: Uint8Array;
    try {
      pdf = new Uint8Array(fs.readFileSync(path.resolve(file)));
    } catch (err) {
      outcomes.push('not-found');
      const error = `cannot read it: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
      out.record({ file, state: 'not-found', exitCode: EXIT_CODES['not-found'], error }, () => [
        `${file}: NOT FOUND: ${error}`,
      ]);
      continue;
    }
    let report: PdfReport;
    const found = proofs.for(path.resolve(file));
    try {
      report = await checkPdf(pdf, { trust, inflate, proofFor: found.lookup, readBesideFor: found.beside });
    } catch (err) {
      if (!(err instanceof TimesealClientError && err.code === 'pdf')) throw err;
      outcomes.push('failed');
      out.record({ file, state: 'invalid', exitCode: EXIT_CODES.failed, problems: [err.message] }, () => [
        `${file}: INVALID: ${err.message}`,
      ]);
      continue;
    }
    outcomes.push(outcomeOfState(report.state));
    out.record(
      {
        file,
        state: report.state,
        exitCode: report.exitCode,
        timeStamps: report.timeStamps.map((s) =>
          s.promise === null
            ? s
            : { ...s, promise: { ...s.promise, proofFile: proofShown(found.used, s.promise.hash) } },
        ),
        otherSignatures: report.otherSignatures,
        afterLastTimeStamp: report.afterLastTimeStamp,
        problems: report.problems,
      },
      () => humanPdf(file, report, (hash) => proofShown(found.used, hash)),
    );
  }
  if (files.length === 0) throw new TimesealClientError('usage', 'nothing to verify');
  return worstOutcome(outcomes);
}

const proofShown = (used: Map<string, string>, hash: string): string | null => {
  const f = used.get(hash);
  return f === undefined ? null : shown(f);
};

function humanPdf(file: string, r: PdfReport, proofOf: (hash: string) => string | null): string[] {
  const n = `${r.timeStamps.length} document time-stamp${r.timeStamps.length === 1 ? '' : 's'}`;
  const earliest = r.timeStamps
    .filter((s) => s.state === 'valid' && s.server !== null)
    .map((s) => s.token!)
    .sort((a, b) => a.genTime.localeCompare(b.genTime))[0];
  const bound = earliest ? `, existed no later than ${earliest.genTime} (${earliest.tsa})` : '';
  const promises = r.timeStamps.filter((s) => s.promise !== null).length;
  const kept = promises === 0 ? '' : promises === 1 ? '; its promise kept' : `; all ${promises} promises kept`;
  const head =
    r.state === 'invalid'
      ? `INVALID: ${r.problems[0]}`
      : r.state === 'broken'
        ? `BROKEN: ${r.problems[0]}`
        : r.state === 'pending'
          ? `PENDING (valid so far): ${n}${bound}`
          : `COMPLETE: ${n}${bound}${kept}`;
  const lines = [`${file}: ${head}`];
  for (const s of r.timeStamps) {
    const label = `time-stamp ${s.index}`.padEnd(16);
    if (s.state === 'invalid' || s.server === null) {
      lines.push(`  ${'failed'.padEnd(8)}${label}${s.reason ?? 'its token does not chain to a pinned TSA root'}`);
      continue;
    }
    const t = s.token!;
    lines.push(
      `  ${'ok'.padEnd(8)}${label}${s.field ? `field "${s.field}": ` : ''}the ByteRange covers the file up to byte ${s.revisionEnd} except /Contents; RFC 3161 token of ${t.tsa} (serial ${t.serialNumber}), chain to the TSA root pinned for ${s.server} checked, for its SHA-256 ${s.digest} — existed no later than ${t.genTime} (${t.tsa})`,
    );
    if (s.promise !== null) {
      const status = { kept: 'ok', pending: 'pending', broken: 'failed', invalid: 'failed' }[s.promise.state];
      const proof = proofOf(s.promise.hash);
      lines.push(
        `  ${status.padEnd(8)}${`promise ${s.index}`.padEnd(16)}${s.promise.checked}${proof === null ? '' : ` (its proof file ${proof})`}`,
      );
    }
  }
  if (r.otherSignatures > 0)
    lines.push(
      `  ${'note'.padEnd(8)}${'signatures'.padEnd(16)}${r.otherSignatures} other signature(s), not checked here`,
    );
  if (r.afterLastTimeStamp) lines.push(`  ${'note'.padEnd(8)}${'after'.padEnd(16)}${r.afterLastTimeStamp.text}`);
  return lines;
}
