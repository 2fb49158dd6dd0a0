// PDF document time-stamps (ISO 32000-2 §12.8.5; ETSI EN 319 142-1 PAdES, the B-LT level's DSS), appended as
// incremental updates (ISO 32000-2 §7.5.6) so the original bytes stay a byte-for-byte prefix and signatures
// already in the file stay valid. Pure: FlateDecode is injected (`inflate`; core/pdf-syntax.ts), nothing else.
//
//   const prepared = await prepare(pdf, { inflate });        // refuses encrypted or damaged PDFs (PdfError)
//   const token = await askTsa(prepared.digest);             // SHA-256 over the ByteRange: all that leaves
//   const out = complete(prepared, token, { certificates }); // token into /Contents; the DSS in a 2nd update
//   const report = await inspect(out, { inflate });          // every time-stamp and signature, and what follows
//
// prepare(pdf) appends one update: a signature dictionary `/Type /DocTimeStamp /Filter /Adobe.PPKLite
// /SubFilter /ETSI.RFC3161` with `/ByteRange [0 a b c]` and `/Contents <00…>` (RESERVE bytes, room for a token
// with its certificates), its invisible widget on page 1 (a signature field added to the catalog's /AcroForm
// /Fields, keeping the others, /SigFlags 3), the page and catalog revised, and an xref section of the kind the
// file's last one is (a table after a table, a stream after a stream) whose /Prev is that one. It returns the
// bytes and the SHA-256 over the ByteRange (everything but /Contents).
//
// complete(prepared, token, dss) writes the token (a TimeStampToken, or the TimeStampResp holding one) as hex
// into /Contents, zero-padded, and, when `dss` holds certificates (the TSA's chain), a second update with the
// catalog's /DSS (PAdES B-LT: validation data after the time-stamp, so the time-stamped ByteRange is unchanged).
//
// inspect(pdf) lists every signature field's signature: whether it is a document time-stamp, its ByteRange,
// whether that covers the whole file up to the end of its revision except /Contents, the SHA-256 over it, and
// the DER in /Contents; and the bytes after the last time-stamp, named: a DSS update (validation data, normal)
// or other changes (not covered by any time-stamp). Checking the tokens is core/pdf-check.ts.
import { sha256 as nobleSha256, sha384 as nobleSha384, sha512 as nobleSha512 } from '@noble/hashes/sha2.js';
import { children, decode, encoding, expectTag, integer, readElement, readInteger, sequence, TAG } from './der.ts';
import {
  ascii,
  type Inflate,
  isName,
  isSpace,
  lastStartxref,
  PdfDict,
  PdfError,
  PdfFile,
  PdfName,
  PdfNumber,
  PdfRef,
  PdfStream,
  PdfString,
  type PdfValue,
  serialize,
  type XrefKind,
} from './pdf-syntax.ts';

export { PdfError, type Inflate } from './pdf-syntax.ts';

/** Bytes reserved in /Contents for the token, by default: ten times a Timeseal token with its two certificates
 * (1,535 bytes, ECDSA P-256), six times an RSA-2048 authority's (2,480 bytes, openssl ts; docs/FORMAT.md §3c). */
export const DEFAULT_RESERVE = 16_384;

export interface PrepareOptions {
  inflate: Inflate;
  /** Bytes of DER the token may take (DEFAULT_RESERVE). */
  reserve?: number;
}

/** What prepare() made; plain data (it survives structuredClone and JSON of its fields). */
export interface PreparedPdf {
  /** The input, then the update; /Contents still zeros. */
  bytes: Uint8Array;
  /** SHA-256 over the ByteRange: the digest to time-stamp. */
  digest: Uint8Array;
  byteRange: [number, number, number, number];
  /** Bytes of DER /Contents holds. */
  reserve: number;
  /** The input's length: `bytes` starts with it unchanged. */
  originalLength: number;
  /** The field's name (/T), unique in the document. */
  fieldName: string;
  /** What the DSS update needs, so complete() reads nothing again. */
  next: {
    xref: XrefKind;
    /** Offset of the update's xref section (the next /Prev). */
    startxref: number;
    size: number;
    root: { num: number; gen: number };
    /** The catalog as the update wrote it, serialized, without /DSS. */
    catalog: string;
    /** /Info and /ID for the next trailer, serialized ('' when absent). */
    trailerExtra: string;
    /** The entries of a /DSS already in the file, serialized, kept in the new one. */
    dss: { certs: string[]; crls: string[]; ocsps: string[]; rest: string };
  };
}

const fail = (why: string): never => {
  throw new PdfError('damaged', `This PDF is damaged: ${why}.`);
};

const ENCRYPTED =
  'This PDF is encrypted, so a time-stamp cannot be added without its password: save an unencrypted copy and stamp that.';

/** Appends the time-stamp's incremental update; refuses encrypted, damaged or unreadable PDFs (PdfError). */
export async function prepare(pdf: Uint8Array, options: PrepareOptions): Promise<PreparedPdf> {
  const reserve = options.reserve ?? DEFAULT_RESERVE;
  if (!Number.isInteger(reserve) || reserve < 64 || reserve > 1_048_576)
    throw new RangeError(`reserve must be a whole number of bytes from 64 to 1048576, got ${reserve}`);
  const file = await PdfFile.open(pdf, options.inflate);
  if (file.sections.some((s) => s.trailer.get('Encrypt') !== undefined)) throw new PdfError('encrypted', ENCRYPTED);
  const trailer = file.trailer;
  const rootRef = trailer.get('Root');
  if (!(rootRef instanceof PdfRef)) return fail('its trailer names no document catalog (/Root)');
  const root = rootRef;
  const cat = await file.resolve(root);
  if (!(cat instanceof PdfDict) || !isName(cat.get('Type'), 'Catalog'))
    return fail(`its document catalog (object ${root.num}) is missing or is not a catalog`);
  const size = trailer.get('Size');
  if (!(size instanceof PdfNumber)) return fail('its trailer has no /Size');
  let next = size.value;
  for (const num of file.xref.keys()) if (num >= next) next = num + 1;
  const take = (): number => next++;

  const page = await firstPage(file, cat);
  const acroRef = cat.get('AcroForm');
  const acro = await file.resolve(acroRef);
  if (acro !== null && !(acro instanceof PdfDict)) fail("its catalog's /AcroForm is not a dictionary");
  const form = new PdfDict(new Map(acro instanceof PdfDict ? acro.entries : []));
  const fieldsValue = await file.resolve(form.get('Fields'));
  const fields = Array.isArray(fieldsValue) ? fieldsValue : [];
  const fieldName = await uniqueName(file, fields);

  const sigNum = take();
  const widgetNum = take();
  form.entries.set('Fields', [...fields, new PdfRef(widgetNum, 0)]);
  form.entries.set('SigFlags', new PdfNumber(numberValue(form.get('SigFlags')) | 3));
  const annotsValue = await file.resolve(page.dict.get('Annots'));
  const annots = Array.isArray(annotsValue) ? annotsValue : [];
  const pageDict = new PdfDict(new Map(page.dict.entries));
  pageDict.entries.set('Annots', [...annots, new PdfRef(widgetNum, 0)]);
  const newCatalog = new PdfDict(new Map(cat.entries));
  if (!(acroRef instanceof PdfRef)) newCatalog.entries.set('AcroForm', form);
  const dssEntries = await existingDss(file, cat.get('DSS'));

  const w = new Writer(pdf);
  // The signature dictionary; the ByteRange's numbers go into a fixed slot once the offsets are known.
  const slot = ' '.repeat(3 * 11);
  w.object(sigNum, 0, '<< /Type /DocTimeStamp /Filter /Adobe.PPKLite /SubFilter /ETSI.RFC3161 /ByteRange ');
  const byteRangeAt = w.length;
  w.raw(`[0${slot}] /Contents <`);
  const contentsStart = w.length - 1;
  w.raw('0'.repeat(2 * reserve));
  const contentsEnd = w.length + 1;
  w.raw('> >>\nendobj\n');
  w.object(
    widgetNum,
    0,
    `<< /Type /Annot /Subtype /Widget /FT /Sig /T ${serialize(new PdfString(utf16(fieldName)))} /F 132 /Rect [0 0 0 0] /P ${page.ref.num} ${page.ref.gen} R /V ${sigNum} 0 R >>\nendobj\n`,
  );
  w.object(page.ref.num, page.ref.gen, `${serialize(pageDict)}\nendobj\n`);
  if (acroRef instanceof PdfRef) w.object(acroRef.num, acroRef.gen, `${serialize(form)}\nendobj\n`);
  w.object(root.num, root.gen, `${serialize(newCatalog)}\nendobj\n`);
  newCatalog.entries.delete('DSS');
  const kind = file.sections[0]!.kind;
  const trailerExtra = ['Info', 'ID']
    .filter((k) => trailer.get(k) !== undefined)
    .map((k) => ` /${k} ${serialize(trailer.get(k)!)}`)
    .join('');
  const startxref = w.xref(kind, next, root, trailerExtra, file.sections[0]!.offset, take);
  const bytes = w.bytes();

  const byteRange: [number, number, number, number] = [0, contentsStart, contentsEnd, bytes.length - contentsEnd];
  bytes.set(ascii(`[0 ${byteRange[1]} ${byteRange[2]} ${byteRange[3]}]`.padEnd(slot.length + 3)), byteRangeAt);
  const digest = await digestOf('SHA-256', [bytes.subarray(0, contentsStart), bytes.subarray(contentsEnd)]);
  return {
    bytes,
    digest,
    byteRange,
    reserve,
    originalLength: pdf.length,
    fieldName,
    next: {
      xref: kind,
      startxref,
      size: next,
      root: { num: root.num, gen: root.gen },
      catalog: serialize(newCatalog),
      trailerExtra,
      dss: dssEntries,
    },
  };
}

export interface DssData {
  /** DER certificates: the TSA's chain (`tokenCertificates(token)`, and its root). */
  certificates?: Uint8Array[];
  crls?: Uint8Array[];
  ocsps?: Uint8Array[];
}

/**
 * Puts the token (a DER TimeStampToken, or a granted TimeStampResp holding one) into /Contents and, when `dss`
 * holds anything, appends the DSS update. Throws when the token does not fit the reserved room.
 */
export function complete(prepared: PreparedPdf, token: Uint8Array, dss: DssData = {}): Uint8Array {
  const der = timeStampToken(token);
  if (der.length > prepared.reserve)
    throw new RangeError(
      `the token is ${der.length} bytes, more than the ${prepared.reserve} reserved in /Contents: prepare again with a larger reserve`,
    );
  const base = Uint8Array.from(prepared.bytes);
  base.set(ascii(hex(der)), prepared.byteRange[1] + 1);
  const lists = { certs: dss.certificates ?? [], crls: dss.crls ?? [], ocsps: dss.ocsps ?? [] };
  if (lists.certs.length + lists.crls.length + lists.ocsps.length === 0) return base;

  const n = prepared.next;
  let next = n.size;
  const w = new Writer(base);
  const refs = { certs: [...n.dss.certs], crls: [...n.dss.crls], ocsps: [...n.dss.ocsps], rest: n.dss.rest };
  for (const key of ['certs', 'crls', 'ocsps'] as const) {
    for (const item of lists[key]) {
      const num = next++;
      w.stream(num, item);
      refs[key].push(`${num} 0 R`);
    }
  }
  const dssNum = next++;
  w.object(dssNum, 0, `${dssDict(refs)}\nendobj\n`);
  w.object(n.root.num, n.root.gen, `${n.catalog.slice(0, -2)}/DSS ${dssNum} 0 R >>\nendobj\n`);
  w.xref(n.xref, next, new PdfRef(n.root.num, n.root.gen), n.trailerExtra, n.startxref, () => next++);
  return w.bytes();
}

function dssDict(d: PreparedPdf['next']['dss']): string {
  let s = '<< /Type /DSS';
  if (d.certs.length) s += ` /Certs [${d.certs.join(' ')}]`;
  if (d.crls.length) s += ` /CRLs [${d.crls.join(' ')}]`;
  if (d.ocsps.length) s += ` /OCSPs [${d.ocsps.join(' ')}]`;
  return `${s}${d.rest} >>`;
}

/** The entries of a /DSS already in the file (PAdES B-LT of an earlier signature), kept in the new one. */
async function existingDss(file: PdfFile, v: PdfValue | undefined): Promise<PreparedPdf['next']['dss']> {
  const out = { certs: [] as string[], crls: [] as string[], ocsps: [] as string[], rest: '' };
  const dss = await file.resolve(v);
  if (!(dss instanceof PdfDict)) return out;
  for (const [key, name] of [
    ['certs', 'Certs'],
    ['crls', 'CRLs'],
    ['ocsps', 'OCSPs'],
  ] as const) {
    const list = await file.resolve(dss.get(name));
    if (Array.isArray(list)) out[key] = list.map(serialize);
  }
  for (const [k, x] of dss.entries)
    if (!['Type', 'Certs', 'CRLs', 'OCSPs'].includes(k)) out.rest += ` /${k} ${serialize(x)}`;
  return out;
}

/** Builds the update's bytes after `prefix`, recording each object's offset for the xref section. */
class Writer {
  private readonly parts: Uint8Array[] = [];
  private readonly prefix: Uint8Array;
  length: number;
  readonly offsets = new Map<number, { offset: number; gen: number }>();
  constructor(prefix: Uint8Array) {
    this.prefix = prefix;
    this.length = prefix.length;
    const last = prefix[prefix.length - 1];
    if (last !== 0x0a && last !== 0x0d) this.raw('\n');
  }
  raw(text: string | Uint8Array): void {
    const b = typeof text === 'string' ? ascii(text) : text;
    this.parts.push(b);
    this.length += b.length;
  }
  object(num: number, gen: number, body: string): void {
    this.offsets.set(num, { offset: this.length, gen });
    this.raw(`${num} ${gen} obj\n${body}`);
  }
  stream(num: number, data: Uint8Array): void {
    this.offsets.set(num, { offset: this.length, gen: 0 });
    this.raw(`${num} 0 obj\n<< /Length ${data.length} >>\nstream\n`);
    this.raw(data);
    this.raw('\nendstream\nendobj\n');
  }
  /** Writes the xref section (a table or a stream) and trailer; returns its offset. */
  xref(kind: XrefKind, size: number, root: PdfRef, extra: string, prev: number, take: () => number): number {
    const at = this.length;
    if (kind === 'table') {
      const rows = [...this.offsets].sort((a, b) => a[0] - b[0]);
      let s = 'xref\n0 1\n0000000000 65535 f\r\n';
      for (let i = 0; i < rows.length;) {
        let j = i;
        while (j + 1 < rows.length && rows[j + 1]![0] === rows[j]![0] + 1) j++;
        s += `${rows[i]![0]} ${j - i + 1}\n`;
        for (let k = i; k <= j; k++)
          s += `${String(rows[k]![1].offset).padStart(10, '0')} ${String(rows[k]![1].gen).padStart(5, '0')} n\r\n`;
        i = j + 1;
      }
      this.raw(
        `${s}trailer\n<< /Size ${size} /Root ${root.num} ${root.gen} R${extra} /Prev ${prev} >>\nstartxref\n${at}\n%%EOF\n`,
      );
      return at;
    }
    const self = take();
    this.offsets.set(self, { offset: at, gen: 0 });
    const rows = [...this.offsets].sort((a, b) => a[0] - b[0]);
    const data = new Uint8Array(rows.length * 7);
    const index: number[] = [];
    rows.forEach(([num, { offset, gen }], i) => {
      if (i === 0 || rows[i - 1]![0] !== num - 1) index.push(num, 1);
      else index[index.length - 1]!++;
      data[i * 7] = 1;
      for (let k = 0; k < 4; k++) data[i * 7 + 1 + k] = Math.floor(offset / 256 ** (3 - k)) & 0xff;
      data[i * 7 + 5] = gen >> 8;
      data[i * 7 + 6] = gen & 0xff;
    });
    if (at >= 2 ** 32) throw new PdfError('unsupported', 'This PDF is larger than 4 GB, more than this code writes.');
    this.raw(
      `${self} 0 obj\n<< /Type /XRef /Size ${size + 1} /W [1 4 2] /Index [${index.join(' ')}] /Root ${root.num} ${root.gen} R${extra} /Prev ${prev} /Length ${data.length} >>\nstream\n`,
    );
    this.raw(data);
    this.raw(`\nendstream\nendobj\nstartxref\n${at}\n%%EOF\n`);
    return at;
  }
  bytes(): Uint8Array {
    const out = new Uint8Array(this.length);
    out.set(this.prefix);
    let at = this.prefix.length;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

const hex = (b: Uint8Array): string => {
  let s = '';
  for (const x of b) s += x.toString(16).padStart(2, '0');
  return s;
};

function utf16(text: string): Uint8Array {
  if (/^[\x20-\x7e]*$/.test(text)) return ascii(text);
  const out = [0xfe, 0xff];
  for (let i = 0; i < text.length; i++) out.push(text.charCodeAt(i) >> 8, text.charCodeAt(i) & 0xff);
  return Uint8Array.from(out);
}

const numberValue = (v: PdfValue | undefined): number => (v instanceof PdfNumber ? v.value : 0);

/** Page 1: down the page tree's first kids from the catalog's /Pages (§7.7.3). */
async function firstPage(file: PdfFile, catalog: PdfDict): Promise<{ ref: PdfRef; dict: PdfDict }> {
  let ref = catalog.get('Pages');
  for (let depth = 0; depth < 64; depth++) {
    if (!(ref instanceof PdfRef)) break;
    const node = await file.resolve(ref);
    if (!(node instanceof PdfDict)) break;
    if (isName(node.get('Type'), 'Page')) return { ref, dict: node };
    const kids = await file.resolve(node.get('Kids'));
    if (!Array.isArray(kids) || kids.length === 0) return fail('its page tree has no pages');
    ref = kids[0];
  }
  return fail('its page tree does not lead to a first page');
}

/** "Timeseal time-stamp", or with a number after it when a field of that name exists. */
async function uniqueName(file: PdfFile, fields: PdfValue[]): Promise<string> {
  const names = new Set<string>();
  for (const f of fields) {
    const d = await file.resolve(f);
    const t = d instanceof PdfDict ? d.get('T') : undefined;
    if (t instanceof PdfString) names.add(textString(t.bytes));
  }
  let name = 'Timeseal time-stamp';
  for (let i = 2; names.has(name); i++) name = `Timeseal time-stamp ${i}`;
  return name;
}

/** A text string (§7.9.2.2): UTF-16BE with its byte-order mark, else PDFDocEncoding (read as Latin-1 here). */
export function textString(b: Uint8Array): string {
  if (b[0] === 0xfe && b[1] === 0xff) {
    let s = '';
    for (let i = 2; i + 1 < b.length; i += 2) s += String.fromCharCode((b[i]! << 8) | b[i + 1]!);
    return s;
  }
  return String.fromCharCode(...b);
}

// --- The token's DER (core/der.ts): out of a TimeStampResp, back into one, its certificates.

/** The TimeStampToken (a CMS ContentInfo) itself, from a token or a granted TimeStampResp (RFC 3161 §2.4.2). */
export function timeStampToken(der: Uint8Array): Uint8Array {
  try {
    const outer = expectTag(decode(der, 'the token'), TAG.SEQUENCE, 'the token');
    const [first, token, ...more] = children(outer, 'the token');
    if (first?.tag === TAG.OID) return der;
    const [status] = children(expectTag(first, TAG.SEQUENCE, 'the status'), 'the status');
    const granted = readInteger(status, 'the status');
    if (granted.length !== 1 || granted[0]! > 1) throw new Error('the time-stamp authority did not grant the request');
    if (more.length > 0) throw new Error('the answer has more than a status and a token');
    return encoding(expectTag(token, TAG.SEQUENCE, 'the token'));
  } catch (err) {
    throw new Error(`the token is neither a TimeStampToken nor a granted TimeStampResp (${(err as Error).message})`, {
      cause: err,
    });
  }
}

/** A TimeStampResp (status granted) around a TimeStampToken, for readers of answers (core/rfc3161.ts). */
export function timeStampResp(token: Uint8Array): Uint8Array {
  return sequence(sequence(integer(0)), token);
}

/** The DER certificates a TimeStampToken carries (SignedData `certificates` [0], RFC 5652 §5.1). */
export function tokenCertificates(token: Uint8Array): Uint8Array[] {
  const ci = decode(timeStampToken(token), 'the token');
  const [, wrap] = children(ci, 'the token');
  const [signedData] = children(expectTag(wrap, 0xa0, 'the SignedData'), 'the SignedData');
  const certs = children(expectTag(signedData, TAG.SEQUENCE, 'the SignedData'), 'the SignedData').find(
    (e) => e.tag === 0xa0,
  );
  return certs ? children(certs, 'the certificates').map((c) => Uint8Array.from(encoding(c))) : [];
}

// --- inspect

export interface PdfSignatureReport {
  /** 'document-time-stamp' for /Type /DocTimeStamp or /SubFilter /ETSI.RFC3161; else 'signature'. */
  kind: 'document-time-stamp' | 'signature';
  /** The field's name (/T), or null. */
  field: string | null;
  subFilter: string | null;
  byteRange: number[];
  /** Where the ByteRange ends: b + c. */
  revisionEnd: number;
  /** The ByteRange is [0 a b c] with [a, b) exactly this /Contents and a + … + c the end of a revision. */
  coversRevision: boolean;
  /** Why it does not, in a sentence (null when it does). */
  problem: string | null;
  /** SHA-256 over the ByteRange (empty when the ranges are not in the file). */
  digest: Uint8Array;
  /** The DER in /Contents, without its zero padding. */
  contents: Uint8Array;
}

export interface PdfInspection {
  length: number;
  signatures: PdfSignatureReport[];
  /** What follows the last document time-stamp (null: none in the file). */
  afterLastTimeStamp: {
    from: number;
    bytes: number;
    /** 'none', 'validation-data' (only a DSS update: PAdES B-LT, normal) or 'changes' (not covered). */
    kind: 'none' | 'validation-data' | 'changes';
    text: string;
  } | null;
}

/** Every signature and document time-stamp of the file, and what follows the last time-stamp. */
export async function inspect(pdf: Uint8Array, options: { inflate: Inflate }): Promise<PdfInspection> {
  const file = await PdfFile.open(pdf, options.inflate);
  for (const s of file.sections)
    if (s.trailer.get('Encrypt') !== undefined)
      throw new PdfError('encrypted', 'This PDF is encrypted, so its signatures cannot be read without its password.');
  const ends = revisionEnds(pdf);
  const catalog = await file.resolve(file.trailer.get('Root'));
  if (!(catalog instanceof PdfDict)) fail('its trailer names no document catalog');
  const acro = await file.resolve((catalog as PdfDict).get('AcroForm'));
  const signatures: PdfSignatureReport[] = [];
  const seen = new Set<PdfDict>();
  const visit = async (v: PdfValue, inheritedFt: PdfValue | undefined, depth: number): Promise<void> => {
    const f = await file.resolve(v);
    if (!(f instanceof PdfDict) || depth > 32) return;
    const ft = f.get('FT') ?? inheritedFt;
    const kids = await file.resolve(f.get('Kids'));
    if (Array.isArray(kids)) for (const k of kids) await visit(k, ft, depth + 1);
    if (!isName(ft, 'Sig')) return;
    const sig = await file.resolve(f.get('V'));
    if (!(sig instanceof PdfDict) || seen.has(sig)) return;
    seen.add(sig);
    const t = f.get('T');
    signatures.push(await report(pdf, sig, t instanceof PdfString ? textString(t.bytes) : null, ends));
  };
  const fields = acro instanceof PdfDict ? await file.resolve(acro.get('Fields')) : null;
  if (Array.isArray(fields)) for (const f of fields) await visit(f, undefined, 0);
  signatures.sort((a, b) => a.revisionEnd - b.revisionEnd);
  const stamps = signatures.filter((s) => s.kind === 'document-time-stamp' && s.coversRevision);
  const last = stamps.at(-1);
  return {
    length: pdf.length,
    signatures,
    afterLastTimeStamp: last ? await after(file, last.revisionEnd, options.inflate) : null,
  };
}

async function report(
  pdf: Uint8Array,
  sig: PdfDict,
  field: string | null,
  ends: Set<number>,
): Promise<PdfSignatureReport> {
  const sub = sig.get('SubFilter');
  const kind =
    isName(sig.get('Type'), 'DocTimeStamp') || isName(sub, 'ETSI.RFC3161') ? 'document-time-stamp' : 'signature';
  const br = sig.get('ByteRange');
  const contents = sig.get('Contents');
  const byteRange = Array.isArray(br) ? br.map((x) => (x instanceof PdfNumber ? x.value : NaN)) : [];
  const der = contents instanceof PdfString ? trimDer(contents.bytes) : new Uint8Array(0);
  const base = { kind, field, subFilter: sub instanceof PdfName ? sub.name : null, byteRange, contents: der } as const;
  const [a0, a, b, c] = byteRange as [number, number, number, number];
  const whole = byteRange.length === 4 && byteRange.every((x) => Number.isInteger(x) && x >= 0);
  if (!whole || a > b || b + c > pdf.length)
    return {
      ...base,
      revisionEnd: whole ? b + c : 0,
      coversRevision: false,
      problem: 'its /ByteRange is not four numbers within the file',
      digest: new Uint8Array(0),
    };
  const digest = await digestOf('SHA-256', [pdf.subarray(a0, a0 + a), pdf.subarray(b, b + c)]);
  let problem: string | null = null;
  if (byteRange.length !== 4 || a0 !== 0) problem = 'its /ByteRange does not start at the first byte';
  else if (!(contents instanceof PdfString) || contents.start !== a || contents.end !== b)
    problem = 'its /ByteRange leaves out more (or other) bytes than its /Contents';
  else if (!ends.has(b + c)) problem = 'its /ByteRange does not end where a revision of the file ends';
  return { ...base, revisionEnd: b + c, coversRevision: problem === null, problem, digest };
}

/**
 * The digest of `parts` one after another (a ByteRange's two ranges): Web Crypto where the platform offers it
 * (browsers on secure pages, Node: about 15 times @noble/hashes' speed on 20 MB, docs/BENCHMARKS.md), at the cost
 * of one copy; else @noble/hashes over the parts as they are.
 */
export async function digestOf(algorithm: 'SHA-256' | 'SHA-384' | 'SHA-512', parts: Uint8Array[]): Promise<Uint8Array> {
  const subtle = globalThis.crypto?.subtle;
  if (subtle !== undefined) {
    const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      all.set(p, at);
      at += p.length;
    }
    return new Uint8Array(await subtle.digest(algorithm, all));
  }
  const h = (algorithm === 'SHA-256' ? nobleSha256 : algorithm === 'SHA-384' ? nobleSha384 : nobleSha512).create();
  for (const p of parts) h.update(p);
  return h.digest();
}

/** The DER element at the start of `b` (a signature's /Contents), without the zeros padding it. */
function trimDer(b: Uint8Array): Uint8Array {
  try {
    const e = readElement(b, 0, b.length, 'the signature contents');
    if (b.subarray(e.end).every((x) => x === 0)) return b.subarray(0, e.end);
  } catch {
    // not DER: the bytes as they are, trailing zeros removed
  }
  let end = b.length;
  while (end > 0 && b[end - 1] === 0) end--;
  return b.subarray(0, end);
}

/** Where revisions end: after each `%%EOF` that follows a startxref, with or without the end-of-line after it. */
function revisionEnds(pdf: Uint8Array): Set<number> {
  const ends = new Set<number>();
  const mark = ascii('%%EOF');
  const sx = ascii('startxref');
  for (let i = pdf.indexOf(0x25); i >= 0 && i + 5 <= pdf.length; i = pdf.indexOf(0x25, i + 1)) {
    if (pdf[i + 1] !== 0x25 || pdf[i + 2] !== 0x45 || !mark.every((m, k) => pdf[i + k] === m)) continue;
    let near = false;
    for (let j = Math.max(0, i - 40); j < i && !near; j++) near = sx.every((m, k) => pdf[j + k] === m);
    if (!near) continue;
    let e = i + 5;
    ends.add(e);
    if (pdf[e] === 0x0d) e++;
    if (pdf[e] === 0x0a) e++;
    ends.add(e);
  }
  return ends;
}

/** Whether nothing but white space follows the `%%EOF` after the file's last `startxref` (ISO 32000-2 §7.5.5):
 * bytes past it belong to no revision, so no DSS update holds them. */
function endsAtLastRevision(buf: Uint8Array): boolean {
  const last = lastStartxref(buf);
  return last !== null && last.eofEnd >= 0 && buf.subarray(last.eofEnd).every((b) => isSpace(b));
}

/** What follows a time-stamp's revision: nothing, a DSS update only, or other changes. */
async function after(
  file: PdfFile,
  from: number,
  inflate: Inflate,
): Promise<NonNullable<PdfInspection['afterLastTimeStamp']>> {
  const bytes = file.buf.length - from;
  if (bytes === 0 || file.buf.subarray(from).every((x) => x === 0x0a || x === 0x0d || x === 0x20))
    return { from, bytes, kind: 'none', text: 'nothing follows the last time-stamp: it covers the whole file' };
  const changes = {
    from,
    bytes,
    kind: 'changes' as const,
    text: `${bytes} bytes after the last time-stamp are not covered by it (changes made after it was stamped)`,
  };
  if (!endsAtLastRevision(file.buf)) return changes;
  const later = file.sections.filter((s) => s.offset >= from);
  if (later.length === 0 || later.some((s) => s.freed.some((n) => n !== 0))) return changes;
  let before: PdfFile;
  try {
    before = await PdfFile.open(file.buf.subarray(0, from), inflate);
  } catch {
    return changes;
  }
  const root = file.trailer.get('Root');
  const now = await file.resolve(root);
  const then = await before.resolve(root);
  if (!(now instanceof PdfDict) || !(then instanceof PdfDict) || now.get('DSS') === undefined) return changes;
  const strip = (d: PdfDict): string => serialize(new PdfDict(new Map([...d.entries].filter(([k]) => k !== 'DSS'))));
  if (strip(now) !== strip(then)) return changes;
  // Every object the later sections write is the catalog or reachable from its /DSS.
  const reachable = new Set<number>();
  const walk = async (v: PdfValue | undefined, depth: number): Promise<void> => {
    if (depth > 16 || v === undefined) return;
    if (v instanceof PdfRef) {
      if (reachable.has(v.num)) return;
      reachable.add(v.num);
      return walk(await file.resolve(v), depth + 1);
    }
    if (Array.isArray(v)) for (const x of v) await walk(x, depth + 1);
    else if (v instanceof PdfDict) for (const x of v.entries.values()) await walk(x, depth + 1);
    else if (v instanceof PdfStream) for (const x of v.dict.entries.values()) await walk(x, depth + 1);
  };
  await walk(now.get('DSS'), 0);
  const written = later.flatMap((s) => s.objects);
  const selfXref = new Set(later.filter((s) => s.kind === 'stream').map((s) => s.selfNumber));
  if (!written.every((n) => n === (root as PdfRef).num || reachable.has(n) || selfXref.has(n))) return changes;
  return {
    from,
    bytes,
    kind: 'validation-data',
    text: `${bytes} bytes after the last time-stamp are a DSS update (validation data: the authority's certificates), which PAdES adds after a time-stamp; the time-stamp does not cover them and need not`,
  };
}
