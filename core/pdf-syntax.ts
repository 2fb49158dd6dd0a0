// PDF's object syntax and cross-reference chain (ISO 32000-2 §7.3 objects, §7.5 file structure), as much of it as
// appending an incremental update and reading signatures needs: a lexer and parser of every object type that
// records where strings lie in the file (a signature's /Contents must be exactly the gap of its /ByteRange),
// a serializer for the dictionaries an update rewrites, and the trailer chain — classic xref tables (§7.5.4),
// xref streams and object streams (§7.5.7, §7.5.8; FlateDecode with PNG predictors), hybrid files (§7.5.8.4) —
// merged newest first into one map of object number → where the object lives. Pure: FlateDecode is injected
// (`inflate`), so a browser passes DecompressionStream('deflate') and Node zlib.
//
// Errors are PdfError with a sentence for people: 'damaged' (the bytes do not follow the format), 'encrypted',
// 'unsupported' (valid PDF this code does not read, e.g. a filter other than FlateDecode on an xref stream).

export type PdfErrorCode = 'damaged' | 'encrypted' | 'unsupported';

/** Why a PDF cannot be read or stamped, in one sentence a person understands (`message`). */
export class PdfError extends Error {
  readonly code: PdfErrorCode;
  constructor(code: PdfErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PdfError';
    this.code = code;
  }
}

const damaged = (why: string): never => {
  throw new PdfError('damaged', `This PDF is damaged: ${why}.`);
};

/** Decompresses zlib data (RFC 1950; PDF's FlateDecode). Browsers: DecompressionStream('deflate'); Node: zlib. */
export type Inflate = (data: Uint8Array) => Promise<Uint8Array>;

export class PdfName {
  readonly name: string;
  /** `name` as written after the slash (with any #xx escapes kept, so it serializes back unchanged). */
  constructor(name: string) {
    this.name = name;
  }
}

export class PdfRef {
  readonly num: number;
  readonly gen: number;
  constructor(num: number, gen: number) {
    this.num = num;
    this.gen = gen;
  }
}

export class PdfString {
  readonly bytes: Uint8Array;
  /** Where the string (delimiters included) lies in the buffer it was read from; -1 when made here. */
  readonly start: number;
  readonly end: number;
  constructor(bytes: Uint8Array, start = -1, end = -1) {
    this.bytes = bytes;
    this.start = start;
    this.end = end;
  }
}

/** A number, with the text it was written as (a real serializes back exactly as read). */
export class PdfNumber {
  readonly value: number;
  readonly text: string;
  constructor(value: number, text = String(value)) {
    this.value = value;
    this.text = text;
  }
}

export class PdfDict {
  readonly entries: Map<string, PdfValue>;
  constructor(entries: Map<string, PdfValue> = new Map()) {
    this.entries = entries;
  }
  get(key: string): PdfValue | undefined {
    return this.entries.get(key);
  }
}

export class PdfStream {
  readonly dict: PdfDict;
  /** The raw (still encoded) data's extent in the buffer it was read from. */
  readonly buf: Uint8Array;
  readonly dataStart: number;
  readonly dataEnd: number;
  constructor(dict: PdfDict, buf: Uint8Array, dataStart: number, dataEnd: number) {
    this.dict = dict;
    this.buf = buf;
    this.dataStart = dataStart;
    this.dataEnd = dataEnd;
  }
  get data(): Uint8Array {
    return this.buf.subarray(this.dataStart, this.dataEnd);
  }
}

export type PdfValue = null | boolean | PdfNumber | PdfName | PdfString | PdfRef | PdfValue[] | PdfDict | PdfStream;

// §7.2.3: white-space characters; §7.2.4: delimiters.
/** §7.2.3 white-space characters: space, line feed, carriage return, tab, form feed, NUL. */
export const isSpace = (c: number | undefined): boolean =>
  c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00;
const isDelimiter = (c: number | undefined): boolean =>
  c === 0x28 ||
  c === 0x29 ||
  c === 0x3c ||
  c === 0x3e ||
  c === 0x5b ||
  c === 0x5d ||
  c === 0x7b ||
  c === 0x7d ||
  c === 0x2f ||
  c === 0x25;
const isRegular = (c: number | undefined): boolean => c !== undefined && !isSpace(c) && !isDelimiter(c);

const latin1 = (buf: Uint8Array, start: number, end: number): string => {
  let s = '';
  for (let i = start; i < end; i++) s += String.fromCharCode(buf[i]!);
  return s;
};

/** Bytes of a text written only in ASCII (what this module writes). */
export const ascii = (text: string): Uint8Array => {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
};

/** Skips white space and comments from `at`; the first position of a token (or the buffer's end). */
export function skipSpace(buf: Uint8Array, at: number): number {
  for (;;) {
    while (at < buf.length && isSpace(buf[at])) at++;
    if (buf[at] !== 0x25) return at;
    while (at < buf.length && buf[at] !== 0x0a && buf[at] !== 0x0d) at++;
  }
}

/** A keyword or number token (regular characters) at `at`, after white space. */
function word(buf: Uint8Array, at: number): { text: string; start: number; end: number } {
  const start = skipSpace(buf, at);
  let end = start;
  while (isRegular(buf[end])) end++;
  return { text: latin1(buf, start, end), start, end };
}

const INTEGER = /^[+-]?\d+$/;
const REAL = /^[+-]?(\d+\.?\d*|\.\d+)$/;

/** Reads one object at `at`. References (`N G R`) are recognised; `stream` is left to the caller. */
export function parseValue(buf: Uint8Array, at: number, depth = 0): { value: PdfValue; end: number } {
  if (depth > 100) damaged('its objects nest more than 100 deep');
  const p = skipSpace(buf, at);
  const c = buf[p];
  if (c === undefined) return damaged('an object is cut short by the end of the file');
  if (c === 0x2f) {
    let end = p + 1;
    while (isRegular(buf[end])) end++;
    return { value: new PdfName(latin1(buf, p + 1, end)), end };
  }
  if (c === 0x28) return literalString(buf, p);
  if (c === 0x3c && buf[p + 1] === 0x3c) {
    const entries = new Map<string, PdfValue>();
    let q = p + 2;
    for (;;) {
      q = skipSpace(buf, q);
      if (buf[q] === 0x3e && buf[q + 1] === 0x3e) return { value: new PdfDict(entries), end: q + 2 };
      if (buf[q] !== 0x2f) return damaged(`a dictionary at byte ${p} has a key that is not a name`);
      const key = parseValue(buf, q, depth + 1);
      const val = parseValue(buf, key.end, depth + 1);
      entries.set((key.value as PdfName).name, val.value);
      q = val.end;
    }
  }
  if (c === 0x3c) {
    let q = p + 1;
    const digits: number[] = [];
    for (; buf[q] !== 0x3e; q++) {
      const d = buf[q];
      if (d === undefined) return damaged(`a hexadecimal string at byte ${p} is not closed`);
      if (isSpace(d)) continue;
      const v = hexDigit(d);
      if (v < 0) return damaged(`a hexadecimal string at byte ${p} holds a character that is not hexadecimal`);
      digits.push(v);
    }
    if (digits.length % 2) digits.push(0);
    const bytes = new Uint8Array(digits.length / 2);
    for (let i = 0; i < bytes.length; i++) bytes[i] = digits[2 * i]! * 16 + digits[2 * i + 1]!;
    return { value: new PdfString(bytes, p, q + 1), end: q + 1 };
  }
  if (c === 0x5b) {
    const items: PdfValue[] = [];
    let q = p + 1;
    for (;;) {
      q = skipSpace(buf, q);
      if (buf[q] === 0x5d) return { value: items, end: q + 1 };
      if (buf[q] === undefined) return damaged(`an array at byte ${p} is not closed`);
      const item = parseValue(buf, q, depth + 1);
      items.push(item.value);
      q = item.end;
    }
  }
  const w = word(buf, p);
  if (w.text === 'true' || w.text === 'false') return { value: w.text === 'true', end: w.end };
  if (w.text === 'null') return { value: null, end: w.end };
  if (INTEGER.test(w.text)) {
    // N G R: a reference.
    const g = word(buf, w.end);
    if (/^\d+$/.test(g.text)) {
      const r = word(buf, g.end);
      if (r.text === 'R') return { value: new PdfRef(Number(w.text), Number(g.text)), end: r.end };
    }
    return { value: new PdfNumber(Number(w.text), w.text), end: w.end };
  }
  if (REAL.test(w.text)) return { value: new PdfNumber(Number(w.text), w.text), end: w.end };
  return damaged(`an unexpected ${w.text ? `word "${w.text.slice(0, 20)}"` : 'character'} at byte ${p}`);
}

function hexDigit(d: number): number {
  if (d >= 0x30 && d <= 0x39) return d - 0x30;
  if (d >= 0x41 && d <= 0x46) return d - 0x37;
  if (d >= 0x61 && d <= 0x66) return d - 0x57;
  return -1;
}

/** §7.3.4.2: balanced parentheses, backslash escapes, end-of-line normalisation. */
function literalString(buf: Uint8Array, p: number): { value: PdfString; end: number } {
  const out: number[] = [];
  let depth = 1;
  let q = p + 1;
  for (;;) {
    const c = buf[q++];
    if (c === undefined) return damaged(`a string at byte ${p} is not closed`);
    if (c === 0x5c) {
      const e = buf[q++];
      if (e === undefined) return damaged(`a string at byte ${p} is not closed`);
      const simple: Record<number, number> = { 0x6e: 10, 0x72: 13, 0x74: 9, 0x62: 8, 0x66: 12 };
      if (simple[e] !== undefined) out.push(simple[e]);
      else if (e >= 0x30 && e <= 0x37) {
        let v = e - 0x30;
        for (let k = 0; k < 2 && buf[q]! >= 0x30 && buf[q]! <= 0x37; k++) v = v * 8 + buf[q++]! - 0x30;
        out.push(v & 0xff);
      } else if (e === 0x0d) {
        if (buf[q] === 0x0a) q++;
      } else if (e !== 0x0a) out.push(e);
      continue;
    }
    if (c === 0x28) depth++;
    if (c === 0x29 && --depth === 0) return { value: new PdfString(Uint8Array.from(out), p, q), end: q };
    if (c === 0x0d) {
      if (buf[q] === 0x0a) q++;
      out.push(0x0a);
      continue;
    }
    out.push(c);
  }
}

/** Serializes a value as PDF text (strings as hexadecimal: the same bytes, no escaping to get wrong). */
export function serialize(v: PdfValue): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return String(v);
  if (v instanceof PdfNumber) return v.text;
  if (v instanceof PdfName) return `/${v.name}`;
  if (v instanceof PdfRef) return `${v.num} ${v.gen} R`;
  if (v instanceof PdfString) {
    let s = '<';
    for (const b of v.bytes) s += b.toString(16).padStart(2, '0');
    return `${s}>`;
  }
  if (Array.isArray(v)) return `[${v.map(serialize).join(' ')}]`;
  if (v instanceof PdfDict) {
    let s = '<<';
    for (const [k, x] of v.entries) s += ` /${k} ${serialize(x)}`;
    return `${s} >>`;
  }
  throw new PdfError('unsupported', 'A stream cannot be written inside another object.');
}

/** Where an object lives: at a byte offset, or as the `index`-th object of object stream `stream` (§7.5.8.3). */
export type XrefEntry =
  | { type: 'free' }
  | { type: 'offset'; offset: number; gen: number }
  | { type: 'compressed'; stream: number; index: number };

export type XrefKind = 'table' | 'stream';

/** One cross-reference section of the chain, newest first. */
export interface XrefSection {
  offset: number;
  kind: XrefKind;
  trailer: PdfDict;
  /** The objects this section gives a place (in use), and those it frees. */
  objects: number[];
  freed: number[];
  /** An xref stream's own object number. */
  selfNumber: number | null;
}

/** A parsed file: its merged cross-reference map and a resolver of objects, with object streams decoded once. */
export class PdfFile {
  readonly buf: Uint8Array;
  readonly inflate: Inflate;
  readonly xref = new Map<number, XrefEntry>();
  /** The sections from the latest (the file's startxref) back through /Prev. */
  readonly sections: XrefSection[] = [];
  private readonly objectStreams = new Map<number, Promise<Map<number, PdfValue>>>();
  private current: XrefSection | null = null;

  private constructor(buf: Uint8Array, inflate: Inflate) {
    this.buf = buf;
    this.inflate = inflate;
  }

  /** The latest trailer (for an xref stream, its dictionary). */
  get trailer(): PdfDict {
    return this.sections[0]!.trailer;
  }

  static async open(buf: Uint8Array, inflate: Inflate): Promise<PdfFile> {
    const f = new PdfFile(buf, inflate);
    if (latin1(buf, 0, 5) !== '%PDF-') damaged('it does not start with %PDF-, so it is not a PDF file');
    await f.readChain(startxrefOffset(buf));
    return f;
  }

  private async readChain(first: number): Promise<void> {
    const seen = new Set<number>();
    for (let at: number | undefined = first; at !== undefined;) {
      if (seen.has(at)) damaged('its cross-reference sections point back to one another');
      seen.add(at);
      if (at < 0 || at >= this.buf.length)
        damaged(`a cross-reference section is said to be at byte ${at}, outside the file`);
      const p = skipSpace(this.buf, at);
      const section: XrefSection = {
        offset: at,
        kind: 'table',
        trailer: new PdfDict(),
        objects: [],
        freed: [],
        selfNumber: null,
      };
      this.current = section;
      if (latin1(this.buf, p, p + 4) === 'xref') {
        // §7.5.8.4: a hybrid file's table section has its compressed objects in an xref stream too; those
        // entries come first, as the readers that know xref streams take them.
        const tableAt = p + 4;
        const trailer = this.peekTrailer(tableAt);
        const hidden = trailer.get('XRefStm');
        if (hidden instanceof PdfNumber) await this.readXrefStream(hidden.value);
        section.trailer = this.readTable(tableAt);
      } else {
        section.kind = 'stream';
        const x = await this.readXrefStream(p);
        section.trailer = x.dict;
        section.selfNumber = x.num;
      }
      this.sections.push(section);
      const prev = section.trailer.get('Prev');
      if (prev !== undefined && !(prev instanceof PdfNumber)) return damaged("a trailer's /Prev is not a number");
      at = prev?.value;
    }
  }

  private record(num: number, entry: XrefEntry): void {
    if (entry.type === 'free') this.current!.freed.push(num);
    else this.current!.objects.push(num);
    if (!this.xref.has(num)) this.xref.set(num, entry);
  }

  /** The trailer of the table at `at`, read without recording its entries. */
  private peekTrailer(at: number): PdfDict {
    const saved = this.current;
    const scratch = new PdfFile(this.buf, this.inflate);
    scratch.current = { offset: at, kind: 'table', trailer: new PdfDict(), objects: [], freed: [], selfNumber: null };
    const t = scratch.readTable(at);
    this.current = saved;
    return t;
  }

  /** §7.5.4: `xref`, subsections of `first count` and 20-byte entries, then `trailer` and its dictionary. */
  private readTable(at: number): PdfDict {
    const buf = this.buf;
    let q = at;
    for (;;) {
      const w = word(buf, q);
      if (w.text === 'trailer') {
        const t = parseValue(buf, w.end);
        if (!(t.value instanceof PdfDict)) return damaged('its trailer is not a dictionary');
        return t.value;
      }
      const count = word(buf, w.end);
      if (!/^\d+$/.test(w.text) || !/^\d+$/.test(count.text))
        return damaged(`its cross-reference table at byte ${at - 4} is not followed by its trailer`);
      q = count.end;
      const first = Number(w.text);
      for (let i = 0; i < Number(count.text); i++) {
        const off = word(buf, q);
        const gen = word(buf, off.end);
        const type = word(buf, gen.end);
        if (!/^\d{1,10}$/.test(off.text) || !/^\d{1,5}$/.test(gen.text) || (type.text !== 'n' && type.text !== 'f'))
          return damaged(`an entry of its cross-reference table at byte ${off.start} is malformed`);
        q = type.end;
        const num = first + i;
        if (type.text === 'f' || (num === 0 && Number(off.text) === 0)) this.record(num, { type: 'free' });
        else this.record(num, { type: 'offset', offset: Number(off.text), gen: Number(gen.text) });
      }
    }
  }

  /** §7.5.8: an xref stream's rows of /W widths over its /Index ranges; returns its dictionary. */
  private async readXrefStream(at: number): Promise<{ dict: PdfDict; num: number }> {
    const obj = this.readIndirect(at, null);
    if (!(obj.value instanceof PdfStream) || !isName(obj.value.dict.get('Type'), 'XRef'))
      return damaged(`no cross-reference table or stream is at byte ${at}, where the file says one is`);
    const dict = obj.value.dict;
    const w = numbers(dict.get('W'));
    const size = dict.get('Size');
    if (!w || w.length !== 3 || w.some((x) => x < 0 || x > 8) || !(size instanceof PdfNumber))
      return damaged('its cross-reference stream has no valid /W or /Size');
    const index = numbers(dict.get('Index')) ?? [0, size.value];
    if (index.length % 2) return damaged("its cross-reference stream's /Index is not pairs of numbers");
    const data = await this.streamData(obj.value);
    const row = w[0]! + w[1]! + w[2]!;
    let r = 0;
    for (let k = 0; k < index.length; k += 2) {
      for (let i = 0; i < index[k + 1]!; i++, r++) {
        if ((r + 1) * row > data.length) return damaged('its cross-reference stream is shorter than its /Index says');
        const field = (n: number, start: number, dflt: number): number => {
          if (w[n] === 0) return dflt;
          let v = 0;
          for (let j = 0; j < w[n]!; j++) v = v * 256 + data[r * row + start + j]!;
          return v;
        };
        const type = field(0, 0, 1);
        const a = field(1, w[0]!, 0);
        const b = field(2, w[0]! + w[1]!, 0);
        const num = index[k]! + i;
        if (type === 0) this.record(num, { type: 'free' });
        else if (type === 1) this.record(num, { type: 'offset', offset: a, gen: b });
        else if (type === 2) this.record(num, { type: 'compressed', stream: a, index: b });
      }
    }
    return { dict, num: obj.num };
  }

  /** Reads `num gen obj … endobj` at `at` (`expect`: the number it must carry). */
  readIndirect(at: number, expect: PdfRef | null): { num: number; gen: number; value: PdfValue; start: number } {
    const buf = this.buf;
    const n = word(buf, at);
    const g = word(buf, n.end);
    const o = word(buf, g.end);
    if (!/^\d+$/.test(n.text) || !/^\d+$/.test(g.text) || o.text !== 'obj')
      return damaged(
        expect
          ? `object ${expect.num} is not at byte ${at}, where its cross-reference entry says`
          : `no object is at byte ${at}, where the file says one is`,
      );
    if (expect && (Number(n.text) !== expect.num || Number(g.text) !== expect.gen))
      damaged(`object ${expect.num} is not at byte ${at}, where its cross-reference entry says (object ${n.text} is)`);
    const v = parseValue(buf, o.end);
    const k = word(buf, v.end);
    if (k.text === 'stream') {
      if (!(v.value instanceof PdfDict)) return damaged(`a stream at byte ${at} has no dictionary`);
      let s = k.end;
      if (buf[s] === 0x0d) s++;
      if (buf[s] === 0x0a) s++;
      const end = streamEnd(buf, v.value, s);
      return { num: Number(n.text), gen: Number(g.text), value: new PdfStream(v.value, buf, s, end), start: n.start };
    }
    return { num: Number(n.text), gen: Number(g.text), value: v.value, start: n.start };
  }

  /** An object by reference (null for a free or missing object, as §7.3.10 says). */
  async resolve(v: PdfValue | undefined): Promise<PdfValue> {
    if (!(v instanceof PdfRef)) return v ?? null;
    const e = this.xref.get(v.num);
    if (!e || e.type === 'free') return null;
    if (e.type === 'offset') return this.readIndirect(e.offset, v).value;
    let objects = this.objectStreams.get(e.stream);
    if (!objects) {
      objects = this.readObjectStream(e.stream);
      this.objectStreams.set(e.stream, objects);
    }
    return (await objects).get(v.num) ?? null;
  }

  /** §7.5.7: /N pairs of `number offset`, then the objects from /First. */
  private async readObjectStream(num: number): Promise<Map<number, PdfValue>> {
    const e = this.xref.get(num);
    if (!e || e.type !== 'offset') return damaged(`its object stream ${num} is missing`);
    const s = this.readIndirect(e.offset, new PdfRef(num, e.gen)).value;
    if (!(s instanceof PdfStream) || !isName(s.dict.get('Type'), 'ObjStm'))
      return damaged(`object ${num} is not an object stream`);
    const n = s.dict.get('N');
    const first = s.dict.get('First');
    if (!(n instanceof PdfNumber) || !(first instanceof PdfNumber))
      return damaged(`object stream ${num} has no /N or /First`);
    const data = await this.streamData(s);
    const out = new Map<number, PdfValue>();
    let q = 0;
    for (let i = 0; i < n.value; i++) {
      const a = word(data, q);
      const b = word(data, a.end);
      if (!INTEGER.test(a.text) || !INTEGER.test(b.text)) return damaged(`object stream ${num}'s header is malformed`);
      q = b.end;
      out.set(Number(a.text), parseValue(data, first.value + Number(b.text)).value);
    }
    return out;
  }

  /** A stream's decoded data: no filter, or FlateDecode with an optional PNG predictor (§7.4.4). */
  async streamData(s: PdfStream): Promise<Uint8Array> {
    const filter = await this.resolve(s.dict.get('Filter'));
    const filters = Array.isArray(filter) ? filter : filter === null ? [] : [filter];
    if (filters.length === 0) return s.data;
    if (filters.length > 1 || !isName(filters[0], 'FlateDecode'))
      throw new PdfError(
        'unsupported',
        `This PDF compresses its structure with ${filters.map((f) => serialize(f as PdfValue)).join(' ')}, which this reader does not decode (only FlateDecode).`,
      );
    let data: Uint8Array;
    try {
      data = await this.inflate(s.data);
    } catch (err) {
      throw new PdfError('damaged', 'This PDF is damaged: a compressed stream of its structure does not decompress.', {
        cause: err,
      });
    }
    let parms = await this.resolve(s.dict.get('DecodeParms'));
    if (Array.isArray(parms)) parms = parms[0] ?? null;
    if (!(parms instanceof PdfDict)) return data;
    const predictor = numberOf(parms.get('Predictor'), 1);
    if (predictor === 1) return data;
    if (predictor < 10)
      throw new PdfError(
        'unsupported',
        'This PDF uses the TIFF predictor in its structure, which this reader does not decode.',
      );
    const bpp = Math.max(
      1,
      Math.ceil((numberOf(parms.get('Colors'), 1) * numberOf(parms.get('BitsPerComponent'), 8)) / 8),
    );
    const columns = Math.ceil(
      (numberOf(parms.get('Columns'), 1) *
        numberOf(parms.get('Colors'), 1) *
        numberOf(parms.get('BitsPerComponent'), 8)) /
        8,
    );
    return unpredict(data, columns, bpp);
  }
}

/** PNG filters (RFC 2083 §6): each row starts with its filter type. */
function unpredict(data: Uint8Array, columns: number, bpp: number): Uint8Array {
  const rows = Math.floor(data.length / (columns + 1));
  const out = new Uint8Array(rows * columns);
  for (let r = 0; r < rows; r++) {
    const type = data[r * (columns + 1)]!;
    const src = r * (columns + 1) + 1;
    const dst = r * columns;
    for (let i = 0; i < columns; i++) {
      const x = data[src + i]!;
      const left = i >= bpp ? out[dst + i - bpp]! : 0;
      const up = r > 0 ? out[dst - columns + i]! : 0;
      const upLeft = r > 0 && i >= bpp ? out[dst - columns + i - bpp]! : 0;
      let v: number;
      if (type === 0) v = x;
      else if (type === 1) v = x + left;
      else if (type === 2) v = x + up;
      else if (type === 3) v = x + ((left + up) >> 1);
      else if (type === 4) {
        const p = left + up - upLeft;
        const pa = Math.abs(p - left);
        const pb = Math.abs(p - up);
        const pc = Math.abs(p - upLeft);
        v = x + (pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft);
      } else return damaged('a compressed stream of its structure uses an unknown PNG predictor');
      out[dst + i] = v & 0xff;
    }
  }
  return out;
}

/** The end of a stream's data from `s`: /Length when it is a direct number that lands on `endstream`, else the
 * keyword. */
function streamEnd(buf: Uint8Array, dict: PdfDict, s: number): number {
  const len = dict.get('Length');
  if (len instanceof PdfNumber && s + len.value <= buf.length) {
    const e = skipSpace(buf, s + len.value);
    if (latin1(buf, e, e + 9) === 'endstream') return s + len.value;
  }
  for (let i = s; i + 9 <= buf.length; i++) {
    if (buf[i] === 0x65 && latin1(buf, i, i + 9) === 'endstream') {
      let e = i;
      if (buf[e - 1] === 0x0a) e--;
      if (buf[e - 1] === 0x0d) e--;
      return Math.max(s, e);
    }
  }
  return damaged(`a stream at byte ${s} has no end`);
}

/**
 * The values of the file's indirect objects (`N G obj … endobj`, §7.3.10) as its bytes lay them out, every
 * revision from the first to the last, read without the cross-reference chain (so without decompressing
 * anything): a stream's data is passed over, not read as objects, and so are comments (§7.2.4), strings, xref
 * tables and trailers, and bytes that are not objects (a reader's garbage, bytes appended to the file), up to
 * the next line. Objects inside object streams (§7.5.7) are not among them: a signature's dictionary never is,
 * for its /Contents must be the gap its /ByteRange leaves in the file's own bytes. Stops at a stream with no end.
 */
export function* indirectObjectValues(buf: Uint8Array): Generator<PdfValue> {
  const nextLine = (from: number): number => {
    let i = from;
    while (i < buf.length && buf[i] !== 0x0a && buf[i] !== 0x0d) i++;
    return i + 1;
  };
  for (let p = skipSpace(buf, 0); p < buf.length; p = skipSpace(buf, p)) {
    const n = word(buf, p);
    if (n.text === 'endobj' || n.text === 'endstream') {
      p = n.end;
      continue;
    }
    const g = INTEGER.test(n.text) ? word(buf, n.end) : null;
    const o = g && /^\d+$/.test(g.text) ? word(buf, g.end) : null;
    if (o?.text !== 'obj') {
      p = nextLine(p);
      continue;
    }
    let value: { value: PdfValue; end: number };
    try {
      value = parseValue(buf, o.end);
    } catch (err) {
      if (!(err instanceof PdfError)) throw err;
      p = nextLine(o.end);
      continue;
    }
    yield value.value;
    p = value.end;
    const k = word(buf, p);
    if (k.text !== 'stream' || !(value.value instanceof PdfDict)) continue;
    let s = k.end;
    if (buf[s] === 0x0d) s++;
    if (buf[s] === 0x0a) s++;
    try {
      p = streamEnd(buf, value.value, s);
    } catch (err) {
      if (!(err instanceof PdfError)) throw err;
      return;
    }
  }
}

/** ISO 32000-2 §7.5.5: the file's last `startxref` — the byte offset of its last cross-reference section, and
 * where the `%%EOF` after it ends (-1 when none follows). Searched back from the end of the whole file, not in a
 * window of its tail: bytes appended after the last `%%EOF` (white space, padding, a mail gateway's or an
 * uploader's trailing bytes, of any length) do not hide it, and a `startxref` among them that no number follows
 * is passed over. Null when the file has none. */
export function lastStartxref(buf: Uint8Array): { offset: number; eofEnd: number } | null {
  for (let i = buf.lastIndexOf(0x73); i >= 0; i = i > 0 ? buf.lastIndexOf(0x73, i - 1) : -1) {
    if (latin1(buf, i, i + 9) !== 'startxref') continue;
    const w = word(buf, i + 9);
    if (!/^\d+$/.test(w.text)) continue;
    let e = w.end;
    while (e < buf.length && isSpace(buf[e])) e++;
    return { offset: Number(w.text), eofEnd: latin1(buf, e, e + 5) === '%%EOF' ? e + 5 : -1 };
  }
  return null;
}

function startxrefOffset(buf: Uint8Array): number {
  return (
    lastStartxref(buf)?.offset ?? damaged('its end has no startxref, so its cross-reference table cannot be found')
  );
}

export const isName = (v: PdfValue | undefined, name: string): boolean => v instanceof PdfName && v.name === name;

export function numberOf(v: PdfValue | undefined, dflt: number): number {
  return v instanceof PdfNumber ? v.value : dflt;
}

function numbers(v: PdfValue | undefined): number[] | null {
  if (!Array.isArray(v) || !v.every((x) => x instanceof PdfNumber)) return null;
  return v.map((x) => (x as PdfNumber).value);
}
