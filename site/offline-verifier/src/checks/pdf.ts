// A timestamped PDF (docs/PDF.md; docs/FORMAT.md §3c): each document time-stamp judged as every reader judges it
// (core/pdf-check.ts: its ByteRange covers its revision but /Contents, the token is sound, for the digest over the
// ByteRange, and chains to the authority dropped), a Timeseal token's promise judged from the day's files like a
// receipt's (checks/receipt.ts), and what follows the last time-stamp named.
import { checkPdfTimeStamps, type PdfCheck } from '../../../../core/pdf-check.ts';
import type { ClassifiedInput } from '../inputs.ts';
import type { Context } from './context.ts';
import { receiptPromise } from './receipt.ts';
import { fail, info, message, ok, pending, type Check, type Section } from './report.ts';

/** FlateDecode for the PDF's xref and object streams, with the platform's DecompressionStream (browsers, Node). */
async function inflate(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Each timestamped PDF given, checked once: the section shows it, and its time-stamps' digests are known first. */
export type PdfChecks = Map<ClassifiedInput, Promise<PdfCheck>>;

export function checkPdfs(pdfs: ClassifiedInput[], authority: Uint8Array[]): PdfChecks {
  return new Map(pdfs.map((p) => [p, checkPdfTimeStamps(p.bytes, { inflate, authority })]));
}

/** The digest over the ByteRange of each sound time-stamp of the PDFs, and which time-stamp of which PDF it is. */
export async function pdfDigests(checks: PdfChecks): Promise<Map<string, string>> {
  const digests = new Map<string, string>();
  for (const [input, check] of checks) {
    const report = await check.catch(() => null); // a PDF that cannot be read says so in its section
    for (const s of report?.stamps ?? [])
      if (s.state === 'valid') digests.set(s.digest, `time-stamp ${s.index} of ${input.name}`);
  }
  return digests;
}

export function pdfSection(ctx: Context, input: ClassifiedInput, check: Promise<PdfCheck>): Section {
  const section: Section = { title: `Timestamped PDF ${input.name}`, checks: [] };
  const row = pending('Document time-stamps', 'checking…');
  section.checks.push(row);
  const authority = ctx.inputs.authority;
  ctx.later.push(
    check.then(
      (report) => {
        section.checks = stampChecks(ctx, report, authority?.source);
      },
      (err) => Object.assign(row, fail('Document time-stamps', message(err))),
    ),
  );
  return section;
}

function stampChecks(ctx: Context, report: PdfCheck, authority: string | undefined): Check[] {
  const checks: Check[] = [];
  if (report.stamps.length === 0) return [fail('Document time-stamps', 'this PDF holds no document time-stamp')];
  for (const s of report.stamps) {
    const label = `Time-stamp ${s.index}${s.field ? ` (${s.field})` : ''}`;
    const [a0, a, b, c] = s.byteRange;
    const covers = `Covers bytes 0 to ${s.revisionEnd - 1} except its own token (ByteRange [${a0} ${a} ${b} ${c}])`;
    if (s.state === 'invalid') {
      checks.push(fail(label, s.reason ?? 'it does not check', [covers]));
      continue;
    }
    const t = s.token!;
    const details = [
      `Time ${t.genTime.toISOString()} (UTC)`,
      `TSA ${t.tsaName}`,
      `Serial ${t.serialNumber}`,
      covers,
      `SHA-256 over the ByteRange ${s.digest}`,
    ];
    checks.push(ok(label, details));
    const chain = `Certificates ${t.chain.join(' → ')}`;
    checks.push(
      t.anchored
        ? ok(`Time-stamp ${s.index}: chain to the TSA root`, [chain, `Root from ${authority}`])
        : pending(
            `Time-stamp ${s.index}: chain to the TSA root`,
            'not checked against a root: add timeseal-tsa-root.pem from /keys/ (or the TSA’s root certificate)',
            [chain],
          ),
    );
    if (s.receipt) {
      const promise = receiptPromise(ctx, s.receipt);
      checks.push({ ...promise, label: `Time-stamp ${s.index}: ${promise.label.toLowerCase()}` });
    }
  }
  const after = report.inspection.afterLastTimeStamp;
  if (after)
    checks.push(info('After the last time-stamp', `${after.text.charAt(0).toUpperCase()}${after.text.slice(1)}`));
  if (report.otherSignatures > 0)
    checks.push(
      info('Other signatures', `${report.otherSignatures}, not document time-stamps: a PDF reader checks them`),
    );
  return checks;
}
