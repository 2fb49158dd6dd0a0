// `timeseal-client stamp --pdf FILE.pdf` and `timeseal-client verify FILE.pdf` (client/src/pdf.ts). Stamping
// writes FILE.timestamped.pdf beside the input (or under --out-dir), never over the input, and not over an
// existing file unless --force; only the digest over the ByteRange is sent. Verifying checks every document
// time-stamp offline against the pinned TSA roots: pending (valid so far) while a Timeseal promise is not in the
// PDF, failed when a time-stamp does not check or there is none.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { TimesealClientError } from '../errors.ts';
import { EXIT_CODES, worstOutcome, type Outcome } from '../../../core/exit-codes.ts';
import { checkPdf, stampPdf, type PdfReport } from '../pdf.ts';
import { pinServer } from '../trust.ts';
import { outcomeOfState } from '../verify.ts';
import { httpOf, loadTrust, printer, saveTrust, serverOf, shown, trustPath, type Common } from './common.ts';
import { proofPathFor } from './files.ts';

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
      outcomes.push('ok');
      out.record(
        {
          file,
          output: shown(target),
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

/** Which of `paths` are PDFs to check as timestamped PDFs: named by --pdf, or PDF files without a proof file. */
export function pdfsAmong(paths: string[], outDir: string | undefined): { pdfs: string[]; rest: string[] } {
  const pdfs: string[] = [];
  const rest: string[] = [];
  for (const p of paths) {
    const abs = path.resolve(p);
    let head = '';
    try {
      if (fs.statSync(abs).isFile() && !fs.existsSync(proofPathFor(abs, outDir))) {
        const fd = fs.openSync(abs, 'r');
        const b = Buffer.alloc(5);
        fs.readSync(fd, b, 0, 5, 0);
        fs.closeSync(fd);
        head = b.toString('latin1');
      }
    } catch {
      // not a readable file: left to the proof files' verify, which reports it
    }
    (head === '%PDF-' ? pdfs : rest).push(p);
  }
  return { pdfs, rest };
}

export async function runVerifyPdf(files: string[], opts: Common): Promise<Outcome> {
  const out = printer(!!opts.json);
  const trust = loadTrust(trustPath(opts));
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
    try {
      report = await checkPdf(pdf, { trust, inflate });
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
        timeStamps: report.timeStamps,
        otherSignatures: report.otherSignatures,
        afterLastTimeStamp: report.afterLastTimeStamp,
        problems: report.problems,
      },
      () => humanPdf(file, report),
    );
  }
  if (files.length === 0) throw new TimesealClientError('usage', 'nothing to verify');
  return worstOutcome(outcomes);
}

function humanPdf(file: string, r: PdfReport): string[] {
  const n = `${r.timeStamps.length} document time-stamp${r.timeStamps.length === 1 ? '' : 's'}`;
  const earliest = r.timeStamps
    .filter((s) => s.state === 'valid' && s.server !== null)
    .map((s) => s.token!)
    .sort((a, b) => a.genTime.localeCompare(b.genTime))[0];
  const bound = earliest ? `, existed no later than ${earliest.genTime} (${earliest.tsa})` : '';
  const head =
    r.state === 'invalid'
      ? `INVALID: ${r.problems[0]}`
      : r.state === 'pending'
        ? `PENDING (valid so far): ${n}${bound}`
        : `COMPLETE: ${n}${bound}`;
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
    if (s.ledger !== null)
      lines.push(
        `  ${'pending'.padEnd(8)}${`promise ${s.index}`.padEnd(16)}the ledger of ${s.ledger.date} must hold ${s.ledger.hash}: the PDF holds the receipt, not the ledger's proof (timeseal receipt check --pdf, or /verify, checks it against the published ledger)`,
      );
  }
  if (r.otherSignatures > 0)
    lines.push(
      `  ${'note'.padEnd(8)}${'signatures'.padEnd(16)}${r.otherSignatures} other signature(s), not checked here`,
    );
  if (r.afterLastTimeStamp) lines.push(`  ${'note'.padEnd(8)}${'after'.padEnd(16)}${r.afterLastTimeStamp.text}`);
  return lines;
}
