// What kind of Timeseal evidence a file is, told from its bytes (and its name where the bytes cannot), and which
// of our readers checks each kind (docs/FORMAT.md names the formats). A reader given a kind it does not check says
// so in one sentence naming the file's kind and the readers that check it — never "Not verified" for evidence
// that may be valid. Pure. Every kind is told from a file's first 64 KiB but a PDF's time-stamps, which may be
// anywhere in it (bytes appended after the last one, or earlier ones further back): a PDF is searched whole,
// from its end back, a piece at a time (sniffEvidenceSync / sniffEvidenceAsync read a large file that way), for
// the words of a time-stamp; one that has them is read whole once more, and is a timestamped PDF only when one
// of its own objects is a time-stamp's signature dictionary (the words in a page's text or a comment are not).
//
//   const kind = sniffEvidence(bytes, name);                      // 'timestamped-pdf', 'receipt', … or null
//   const kind = sniffEvidenceSync(size, (at, n) => readAt(at, n), name);   // a large file, in pieces
//   if (kind && !READERS[kind].includes('offline-page')) say(notCheckedHere(kind, 'offline-page'));
import { indirectObjectValues, isName, PdfDict, PdfString, type PdfValue } from './pdf-syntax.ts';

export type EvidenceKind =
  | 'proof-bundle'
  | 'client-proof'
  | 'receipt'
  | 'ots'
  | 'tlog-proof'
  | 'timestamped-pdf'
  | 'cose-receipt'
  | 'transparent-statement';

export type Reader = 'verify-page' | 'offline-page' | 'client' | 'cli';

/** What each kind is, in a few words. */
export const EVIDENCE_NAME: Record<EvidenceKind, string> = {
  'proof-bundle': 'a Timeseal proof bundle (timeseal-proof)',
  'client-proof': 'a timeseal-client proof file (timeseal-client-proof/1 or /2)',
  receipt: 'an RFC 3161 receipt (.tsr)',
  ots: 'an OpenTimestamps proof (.ots)',
  'tlog-proof': 'a transparency-log proof (c2sp.org/tlog-proof)',
  'timestamped-pdf': 'a timestamped PDF (document time-stamps inside it)',
  'cose-receipt': 'a COSE receipt (RFC 9942, .receipt.cose)',
  'transparent-statement': 'a SCITT Transparent Statement (a Signed Statement with its receipts, RFC 9943)',
};

/** Which of our readers check each kind. */
export const READERS: Record<EvidenceKind, Reader[]> = {
  'proof-bundle': ['offline-page'],
  'client-proof': ['offline-page', 'client'],
  receipt: ['verify-page', 'offline-page', 'cli'],
  ots: ['offline-page'],
  'tlog-proof': ['offline-page'],
  'timestamped-pdf': ['verify-page', 'offline-page', 'client', 'cli'],
  'cose-receipt': ['verify-page', 'offline-page', 'client', 'cli'],
  'transparent-statement': ['offline-page', 'client', 'cli'],
};

/** How a person reaches each reader. */
export const READER_NAME: Record<Reader, string> = {
  'verify-page': 'the Verify page (/verify)',
  'offline-page': 'the offline verifier (/offline-verifier.html)',
  client: '`timeseal-client verify`',
  cli: '`timeseal receipt check`',
};

const READER_FOR: Partial<Record<EvidenceKind, Partial<Record<Reader, string>>>> = {
  'timestamped-pdf': {
    'verify-page': "the Verify page's “Check a timestamped PDF” (/verify)",
    client: '`timeseal-client verify FILE.pdf`',
    cli: '`timeseal receipt check --pdf FILE.pdf`',
  },
  receipt: { 'verify-page': "the Verify page's “Check a receipt” (/verify)" },
  'cose-receipt': {
    'verify-page': "the Verify page's “Check a receipt” (/verify)",
    client: '`timeseal-client verify FILE.receipt.cose`',
    cli: '`timeseal receipt check FILE.receipt.cose --file FILE`',
  },
  'transparent-statement': {
    client: '`timeseal-client verify FILE`',
    cli: '`timeseal receipt check FILE`',
  },
};

const readerName = (kind: EvidenceKind, r: Reader): string => READER_FOR[kind]?.[r] ?? READER_NAME[r];

/**
 * The one sentence `reader` gives for a file of `kind` it does not check; `reader` null for one card of a page
 * whose other card may check it (the Verify page's receipt and PDF cards): every reader is then named.
 */
export function notCheckedHere(kind: EvidenceKind, reader: Reader | null): string {
  const others = READERS[kind].filter((r) => r !== reader).map((r) => readerName(kind, r));
  const list = others.length <= 1 ? (others[0] ?? '') : `${others.slice(0, -1).join(', ')} or ${others.at(-1)}`;
  const what = EVIDENCE_NAME[kind];
  return others.length === 0
    ? `This is ${what}, which no Timeseal reader checks yet.`
    : `This is ${what}, which ${reader === null ? 'this card' : reader.endsWith('-page') ? 'this page' : 'this command'} does not check: check it with ${list}.`;
}

const ascii = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));

function indexOf(haystack: Uint8Array, needle: Uint8Array, from = 0, to = haystack.length): number {
  outer: for (let i = from; i + needle.length <= Math.min(to, haystack.length); i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

const WINDOW = 65_536;
const PDF_MARKERS = ['/ETSI.RFC3161', '/DocTimeStamp'].map(ascii);
/** id-ct-TSTInfo (1.2.840.113549.1.9.16.1.4), DER, inside every RFC 3161 token. */
const TST_INFO_OID = Uint8Array.of(0x06, 0x0b, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x10, 0x01, 0x04);
/** The OpenTimestamps file magic ("\x00OpenTimestamps\x00\x00Proof\x00" and its version-independent start). */
const OTS_MAGIC = Uint8Array.of(
  0x00,
  0x4f,
  0x70,
  0x65,
  0x6e,
  0x54,
  0x69,
  0x6d,
  0x65,
  0x73,
  0x74,
  0x61,
  0x6d,
  0x70,
  0x73,
);

/** A PDF starts with its header within its first KiB (ISO 32000-2 §7.5.2, as readers allow). */
export const isPdf = (head: Uint8Array): boolean => indexOf(head, ascii('%PDF-'), 0, 1024) >= 0;

/** A PDF is searched for a time-stamp's dictionary this much at a time, from its end back. */
const PDF_PIECE = 1 << 20;
/** Each piece overlaps the next by a marker's length less one, so a marker across their boundary is found. */
const MARKER_OVERLAP = Math.max(...PDF_MARKERS.map((m) => m.length)) - 1;

/**
 * Whether one of the file's own objects is a document time-stamp's signature dictionary: a dictionary with
 * /SubFilter /ETSI.RFC3161 or /Type /DocTimeStamp (as core/pdf-timestamp.ts inspect tells a time-stamp from a
 * signature), a /ByteRange array and a /Contents string — not the words in a content stream, a comment, a string
 * or bytes that are not objects (core/pdf-syntax.ts indirectObjectValues).
 */
function hasTimeStampDictionary(pdf: Uint8Array): boolean {
  const isTimeStamp = (v: PdfValue, depth: number): boolean => {
    if (Array.isArray(v)) return depth < 8 && v.some((x) => isTimeStamp(x, depth + 1));
    if (!(v instanceof PdfDict)) return false;
    if (
      (isName(v.get('SubFilter'), 'ETSI.RFC3161') || isName(v.get('Type'), 'DocTimeStamp')) &&
      Array.isArray(v.get('ByteRange')) &&
      v.get('Contents') instanceof PdfString
    )
      return true;
    return depth < 8 && [...v.entries.values()].some((x) => isTimeStamp(x, depth + 1));
  };
  for (const v of indirectObjectValues(pdf)) if (isTimeStamp(v, 0)) return true;
  return false;
}

/** Whether `piece` holds a word of a document time-stamp (`/DocTimeStamp`, `/ETSI.RFC3161`), found by their '/': a
 * PDF without them has none, one with them is then read whole (hasTimeStampDictionary). */
function hasTimeStampMarker(piece: Uint8Array): boolean {
  for (let i = piece.indexOf(0x2f); i >= 0; i = piece.indexOf(0x2f, i + 1))
    for (const m of PDF_MARKERS) {
      let j = 1;
      while (j < m.length && piece[i + j] === m[j]) j++;
      if (j === m.length) return true;
    }
  return false;
}
/** The unprotected header labels that tell the two COSE kinds apart: RFC 9942 §2's vdp (396), a receipt's
 * inclusion proofs, and RFC 9943 §7's receipts (394), a Transparent Statement's. */
const VDP = 396;
const RECEIPTS = 394;
/** vdp as CBOR (0x19 0x01 0x8c), for a receipt whose unprotected header has a smaller label first. */
const VDP_BYTES = Uint8Array.of(0x19, 0x01, 0x8c);

/**
 * The first label of the unprotected header of a tagged COSE_Sign1 (tag 18, an array of four: 0xd2 0x84, RFC 9052
 * §4.2), read from the CBOR heads alone: the protected header (a byte string) skipped, then the map's first key
 * when it is an unsigned integer. Undefined for anything else.
 */
function firstUnprotectedLabel(b: Uint8Array): number | undefined {
  if (b[0] !== 0xd2 || b[1] !== 0x84) return undefined;
  /** A CBOR head at `at` of major type `major`: its argument and where its content starts. */
  const head = (at: number, major: number): [number, number] | undefined => {
    const first = b[at];
    if (first === undefined || first >> 5 !== major) return undefined;
    const info = first & 0x1f;
    if (info < 24) return [info, at + 1];
    const size = info === 24 ? 1 : info === 25 ? 2 : info === 26 ? 4 : 0;
    if (size === 0 || at + 1 + size > b.length) return undefined;
    let value = 0;
    for (let i = 1; i <= size; i++) value = value * 256 + b[at + i]!;
    return [value, at + 1 + size];
  };
  const protectedHeader = head(2, 2);
  if (protectedHeader === undefined) return undefined;
  const map = head(protectedHeader[0] + protectedHeader[1], 5);
  if (map === undefined || map[0] === 0) return undefined;
  return head(map[1], 0)?.[0];
}

/** What the sniffer reads of a file, one request at a time: [offset, length] in, those bytes back. */
type Sniff = Generator<[number, number], EvidenceKind | null, Uint8Array>;

/** The kind of evidence a file of `size` bytes is: its first 64 KiB, and for a PDF the whole of it from the end
 * back, a piece at a time until a time-stamp is found. */
function* sniff(size: number, name: string): Sniff {
  const head = yield [0, Math.min(size, WINDOW)];
  const label = firstUnprotectedLabel(head);
  if (label === RECEIPTS) return 'transparent-statement';
  if (
    /\.receipt\.cose$/i.test(name) ||
    label === VDP ||
    (label !== undefined && indexOf(head, VDP_BYTES, 0, 4096) >= 0)
  )
    return 'cose-receipt';
  if (isPdf(head)) {
    for (let end = size; end > 0; end -= PDF_PIECE)
      if (
        hasTimeStampMarker(
          yield [Math.max(0, end - PDF_PIECE - MARKER_OVERLAP), Math.min(end, PDF_PIECE + MARKER_OVERLAP)],
        )
      )
        return hasTimeStampDictionary(size <= head.length ? head : yield [0, size]) ? 'timestamped-pdf' : null;
    return null;
  }
  if (indexOf(head, OTS_MAGIC, 0, OTS_MAGIC.length) === 0) return 'ots';
  if (head[0] === 0x30 && indexOf(head, TST_INFO_OID, 0, 4096) >= 0) return 'receipt';
  const text = new TextDecoder().decode(head);
  if (/^c2sp\.org\/tlog-proof@/.test(text)) return 'tlog-proof';
  if (/"format":\s*"timeseal-client-proof\//.test(text)) return 'client-proof';
  if (/"format":\s*"timeseal-proof\//.test(text)) return 'proof-bundle';
  return null;
}

/** The kind of evidence a file is, read through `read(offset, length)` (a file too large to hold whole). */
export function sniffEvidenceSync(
  size: number,
  read: (offset: number, length: number) => Uint8Array,
  name = '',
): EvidenceKind | null {
  const steps = sniff(size, name);
  for (let step = steps.next(); ;) {
    if (step.done) return step.value;
    step = steps.next(read(...step.value));
  }
}

/** sniffEvidenceSync for a reader that answers later (a browser's File.slice). */
export async function sniffEvidenceAsync(
  size: number,
  read: (offset: number, length: number) => Promise<Uint8Array>,
  name = '',
): Promise<EvidenceKind | null> {
  const steps = sniff(size, name);
  for (let step = steps.next(); ;) {
    if (step.done) return step.value;
    step = steps.next(await read(...step.value));
  }
}

/** The kind of evidence `bytes` (a whole file) is, or null (a document, or something else). */
export function sniffEvidence(bytes: Uint8Array, name = ''): EvidenceKind | null {
  return sniffEvidenceSync(bytes.length, (at, n) => bytes.subarray(at, at + n), name);
}
