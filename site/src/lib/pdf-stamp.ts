// A PDF time-stamped in the browser (the drop zone's "Timestamp this PDF", islands/PdfStamp.tsx, which loads this
// module only when asked): a PDF document time-stamp (ISO 32000-2 §12.8.5, PAdES B-LT; docs/FORMAT.md §3c) made
// with core/pdf-timestamp.ts, with nothing but a digest leaving the device.
//   1. prepare: the incremental update with the DocTimeStamp and its /Contents placeholder, FlateDecode read with
//      the platform's DecompressionStream('deflate'); an encrypted or damaged PDF is refused here (PdfError, one
//      sentence) and nothing is sent.
//   2. POST /tsa: an RFC 3161 TimeStampReq (core/tsa-client.ts: the SHA-256 over the ByteRange, a random nonce,
//      certReq) of about 70 bytes, the only request that says anything about the file.
//   3. The answer checked as a Timeseal receipt (core/receipt.ts) for that digest, chained to the TSA root this
//      site publishes (/keys/timeseal-tsa-root.pem), before it goes into the file.
//   4. complete: the token into /Contents and a DSS update with the authority's chain (the token's certificates
//      and the root), so the original bytes stay a byte-for-byte prefix of `<name>.timestamped.pdf`.
import { equalBytes, toHex } from '../../../core/encoding.ts';
import { complete, PdfError, prepare, tokenCertificates, type Inflate } from '../../../core/pdf-timestamp.ts';
import { checkReceipt } from '../../../core/receipt.ts';
import { pemCertificates } from '../../../core/rfc3161.ts';
import { timeStampRequest } from '../../../core/tsa-client.ts';

export const TSA_URL = '/tsa';
export const TSA_ROOT_URL = '/keys/timeseal-tsa-root.pem';

/** FlateDecode with the platform's DecompressionStream (zlib framing, as PDF's FlateDecode is). */
export const platformInflate: Inflate = async (data) => {
  const stream = new Blob([data as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
};

export type StampStep = 'reading' | 'preparing' | 'asking' | 'completing';

export type StampOutcome =
  /** The timestamped PDF, and what its time-stamp says. */
  | {
      kind: 'stamped';
      bytes: Uint8Array;
      name: string;
      /** SHA-256 over the ByteRange, hex: the one thing sent, and the hash today's ledger will hold. */
      digest: string;
      genTime: string;
      ledgerDate: string;
      serialNumber: string;
    }
  /** The PDF cannot be stamped (encrypted, damaged, unsupported): nothing was sent. */
  | { kind: 'refused'; reason: string }
  /** The time-stamp authority did not give a sound token. */
  | { kind: 'failed'; reason: string };

/** `report.pdf` → `report.timestamped.pdf` (a name without .pdf gets the suffix appended). */
export function timestampedName(name: string): string {
  const base = name.replace(/\.pdf$/i, '');
  return `${base || 'document'}.timestamped.pdf`;
}

async function tsaRoots(): Promise<Uint8Array[]> {
  const res = await fetch(TSA_ROOT_URL);
  if (!res.ok) throw new Error(`the TSA root (${TSA_ROOT_URL}) could not be read: ${res.status} ${res.statusText}`);
  const roots = pemCertificates(await res.text());
  if (roots.length === 0) throw new Error(`${TSA_ROOT_URL} holds no certificate`);
  return roots;
}

async function askTsa(digest: Uint8Array): Promise<Uint8Array> {
  const nonce = crypto.getRandomValues(new Uint8Array(8));
  const res = await fetch(TSA_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' },
    body: timeStampRequest(digest, nonce) as Uint8Array<ArrayBuffer>,
  });
  if (!res.ok) {
    const text = (await res.text().catch(() => '')).trim();
    throw new Error(`the time-stamp authority answered ${res.status}${text ? `: ${text}` : ''}`);
  }
  return new Uint8Array(await res.arrayBuffer());
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Time-stamps `file` (a PDF) as described above; `onStep` names what is under way. Never throws. */
export async function stampPdfFile(
  file: Blob & { name: string },
  onStep?: (step: StampStep) => void,
): Promise<StampOutcome> {
  onStep?.('reading');
  const pdf = new Uint8Array(await file.arrayBuffer());
  onStep?.('preparing');
  let prepared;
  try {
    prepared = await prepare(pdf, { inflate: platformInflate });
  } catch (err) {
    if (err instanceof PdfError) return { kind: 'refused', reason: err.message };
    return { kind: 'refused', reason: `This PDF could not be read: ${message(err)}.` };
  }
  onStep?.('asking');
  try {
    const [roots, answer] = await Promise.all([tsaRoots(), askTsa(prepared.digest)]);
    const facts = await checkReceipt(answer, roots, prepared.digest);
    onStep?.('completing');
    const carried = tokenCertificates(answer);
    const certificates = [...carried, ...roots.filter((r) => !carried.some((c) => equalBytes(c, r)))];
    return {
      kind: 'stamped',
      bytes: complete(prepared, answer, { certificates }),
      name: timestampedName(file.name),
      digest: toHex(prepared.digest),
      genTime: facts.genTime.toISOString(),
      ledgerDate: facts.date,
      serialNumber: facts.serialNumber,
    };
  } catch (err) {
    return { kind: 'failed', reason: message(err) };
  }
}
