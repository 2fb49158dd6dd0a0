// DER (ITU-T X.690 §8, §10, §11): the one codec that core/'s ASN.1 readers and writers share — RFC 3161
// requests, answers and tokens (rfc3161.ts, tsa-authority.ts, tsa-client.ts) and PKCS#8 keys (sig.ts). Strict,
// as noble-curves' abstract/der.ts: a tag in the low-tag-number form (§8.1.2.2: numbers 0–30 in one byte), a
// definite length in its shortest form (§10.1: one byte below 128, else the fewest bytes with no leading zero),
// at most 4 length bytes (nothing of ours nears 4 GiB), every element within its parent and nothing after the
// outermost one; an INTEGER in its minimal two's-complement form (§8.3.2), an OBJECT IDENTIFIER made of
// complete, minimal subidentifiers (§8.19.2), a BOOLEAN 0x00 or 0xff (§11.1). A refusal is a FormatError naming
// the field, its text starting "not DER". The writer makes only that form.
import { FormatError } from './errors.ts';

/** Universal tags (X.690 §8.1.2; constructed SEQUENCE and SET). */
export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

/** At most this many length bytes (a length below 2^32). */
export const MAX_LENGTH_BYTES = 4;

// ---- Reader ----

/** One element of `buf`: its tag, where its header starts, where its contents start and where it ends. */
export interface Der {
  readonly tag: number;
  readonly buf: Uint8Array;
  readonly start: number;
  readonly body: number;
  readonly end: number;
}

function notDer(field: string, problem: string): never {
  throw new FormatError(field, `not DER: ${problem}`);
}

const hex = (n: number): string => `0x${n.toString(16).padStart(2, '0')}`;

/** The element at `at` in `buf`, which must end by `limit`. */
export function readElement(buf: Uint8Array, at: number, limit: number, field: string): Der {
  if (at >= limit) notDer(field, 'an element is cut short before its tag');
  const tag = buf[at]!;
  if ((tag & 0x1f) === 0x1f) notDer(field, `tag ${hex(tag)} is in the high-tag-number form`);
  if (at + 1 >= limit) notDer(field, 'an element is cut short before its length');
  const first = buf[at + 1]!;
  let body = at + 2;
  let length = first;
  if (first & 0x80) {
    const count = first & 0x7f;
    if (count === 0) notDer(field, 'an indefinite length (0x80)');
    if (count > MAX_LENGTH_BYTES) notDer(field, `a length of ${count} bytes (at most ${MAX_LENGTH_BYTES})`);
    if (body + count > limit) notDer(field, 'a length is cut short');
    if (buf[body] === 0) notDer(field, 'a length with a leading zero byte');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + buf[body++]!;
    if (length < 0x80) notDer(field, `the length ${length} in the long form (below 128 it takes one byte)`);
  }
  if (length > limit - body) notDer(field, `an element of ${length} bytes runs past its end (${limit - body} left)`);
  return { tag, buf, start: at, body, end: body + length };
}

/** The one element that `buf` holds, exactly: nothing may follow it. */
export function decode(buf: Uint8Array, field: string): Der {
  const d = readElement(buf, 0, buf.length, field);
  if (d.end !== buf.length) notDer(field, `${buf.length - d.end} unexpected bytes follow the element`);
  return d;
}

/** The elements that make up the contents of `d`, back to back and exactly. */
export function children(d: Der, field: string): Der[] {
  const out: Der[] = [];
  for (let at = d.body; at < d.end;) {
    const c = readElement(d.buf, at, d.end, field);
    out.push(c);
    at = c.end;
  }
  return out;
}

/** The contents of `d` (a view, no copy). */
export const contents = (d: Der): Uint8Array => d.buf.subarray(d.body, d.end);
/** The whole encoding of `d`, header included (a view). */
export const encoding = (d: Der): Uint8Array => d.buf.subarray(d.start, d.end);

/** `d`, which must be present and carry `tag`. */
export function expectTag(d: Der | undefined, tag: number, field: string): Der {
  if (d === undefined) throw new FormatError(field, 'malformed: missing');
  if (d.tag !== tag) throw new FormatError(field, `malformed: tag ${hex(d.tag)}, expected ${hex(tag)}`);
  return d;
}

/** Whether the contents of `d` are exactly `bytes`. */
export function contentsEqual(d: Der, bytes: Uint8Array): boolean {
  if (d.end - d.body !== bytes.length) return false;
  for (let i = 0; i < bytes.length; i++) if (d.buf[d.body + i] !== bytes[i]) return false;
  return true;
}

/** The contents of an INTEGER, checked minimal (X.690 §8.3.2): big-endian two's complement. */
export function readInteger(d: Der | undefined, field: string): Uint8Array {
  const e = expectTag(d, TAG.INTEGER, field);
  const n = e.end - e.body;
  if (n === 0) notDer(field, 'an INTEGER with no contents');
  const a = e.buf[e.body]!;
  const b = n > 1 ? e.buf[e.body + 1]! : 0;
  if (n > 1 && a === 0x00 && !(b & 0x80)) notDer(field, 'an INTEGER with a needless leading 0x00');
  if (n > 1 && a === 0xff && b & 0x80) notDer(field, 'an INTEGER with a needless leading 0xff');
  return contents(e);
}

/** A BOOLEAN: one byte, 0x00 or 0xff (X.690 §11.1). */
export function readBoolean(d: Der | undefined, field: string): boolean {
  const e = expectTag(d, TAG.BOOLEAN, field);
  if (e.end - e.body !== 1) notDer(field, `a BOOLEAN of ${e.end - e.body} bytes`);
  const v = e.buf[e.body]!;
  if (v !== 0x00 && v !== 0xff) notDer(field, `the BOOLEAN ${hex(v)} (DER has 0x00 or 0xff)`);
  return v === 0xff;
}

/** An OBJECT IDENTIFIER in dotted form. Arcs above 2^53 (a UUID arc under 2.25) are read exactly, as BigInt. */
export function readOid(d: Der | undefined, field: string): string {
  const e = expectTag(d, TAG.OID, field);
  if (e.end === e.body) notDer(field, 'an empty OBJECT IDENTIFIER');
  const arcs: Array<number | bigint> = [];
  let v: number | bigint = 0;
  let fresh = true;
  for (let i = e.body; i < e.end; i++) {
    const x = e.buf[i]!;
    if (fresh && x === 0x80) notDer(field, 'an OBJECT IDENTIFIER arc with a needless leading 0x80');
    v = typeof v === 'number' && v < 2 ** 45 ? v * 128 + (x & 0x7f) : BigInt(v) * 128n + BigInt(x & 0x7f);
    fresh = !(x & 0x80);
    if (fresh) {
      arcs.push(v);
      v = 0;
    }
  }
  if (!fresh) notDer(field, 'an OBJECT IDENTIFIER whose last arc is cut short');
  // X.690 §8.19.4: the first subidentifier is 40·X + Y, X in 0..2 (Y below 40 unless X is 2).
  const first = arcs[0]!;
  const head =
    typeof first === 'bigint' ? [2, first - 80n] : first < 80 ? [Math.floor(first / 40), first % 40] : [2, first - 80];
  return [...head, ...arcs.slice(1)].join('.');
}

/**
 * Reads the elements of one constructed element (or of a whole buffer) in order: `next` takes the next one with
 * the tag it must have, `end` checks nothing is left. Errors name `field` and the element read.
 */
export class DerReader {
  private at: number;
  private readonly buf: Uint8Array;
  private readonly limit: number;
  private readonly field: string;

  constructor(buf: Uint8Array, field: string, from = 0, limit = buf.length) {
    this.buf = buf;
    this.field = field;
    this.at = from;
    this.limit = limit;
  }

  /** A reader of the contents of `d`. */
  static of(d: Der, field: string): DerReader {
    return new DerReader(d.buf, field, d.body, d.end);
  }

  /** The tag of the next element, undefined at the end. */
  peek(): number | undefined {
    return this.at < this.limit ? this.buf[this.at] : undefined;
  }

  /** The next element, which must carry `tag`. */
  element(tag: number, name: string): Der {
    const field = `${this.field}: ${name}`;
    if (this.at >= this.limit) throw new FormatError(field, 'missing');
    const d = expectTag(readElement(this.buf, this.at, this.limit, field), tag, field);
    this.at = d.end;
    return d;
  }

  /** The contents of the next element, which must carry `tag`. */
  next(tag: number, name: string): Uint8Array {
    return contents(this.element(tag, name));
  }

  /** Requires that every byte was read. */
  end(): void {
    if (this.at !== this.limit)
      throw new FormatError(this.field, `${this.limit - this.at} unexpected bytes after the last element`);
  }
}

// ---- Writer ----

/** The number of bytes of the header of an element whose contents are `n` bytes. */
export function headerSize(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n >= 2 ** 32) throw new RangeError(`a DER length of ${n} bytes`);
  return n < 0x80 ? 2 : n < 0x100 ? 3 : n < 0x10000 ? 4 : n < 0x1000000 ? 5 : 6;
}

/** The whole size of an element whose contents are `n` bytes. */
export const encodedSize = (n: number): number => headerSize(n) + n;

/** Writes DER into one array of the right size, left to right. */
export class DerWriter {
  at = 0;
  readonly out: Uint8Array;
  constructor(out: Uint8Array) {
    this.out = out;
  }
  /** The tag and the length of an element of `n` bytes of contents. */
  header(tag: number, n: number): void {
    if ((tag & 0x1f) === 0x1f || tag > 0xff || tag < 0) throw new RangeError(`tag ${tag} is not a one-byte tag`);
    const size = headerSize(n);
    const out = this.out;
    out[this.at++] = tag;
    if (size === 2) out[this.at++] = n;
    else {
      out[this.at++] = 0x80 | (size - 2);
      for (let i = size - 3; i >= 0; i--) out[this.at++] = Math.floor(n / 256 ** i) & 0xff;
    }
  }
  bytes(b: Uint8Array): void {
    this.out.set(b, this.at);
    this.at += b.length;
  }
  /** `contents` as one element of type `tag`. */
  element(tag: number, contents: Uint8Array): void {
    this.header(tag, contents.length);
    this.bytes(contents);
  }
  /** The array, which must be full. */
  done(): Uint8Array {
    if (this.at !== this.out.length) throw new Error(`the DER writer wrote ${this.at} bytes of ${this.out.length}`);
    return this.out;
  }
}

/** The element `tag` holding `parts` back to back, written into one new array. */
export function encode(tag: number, ...parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const w = new DerWriter(new Uint8Array(encodedSize(n)));
  w.header(tag, n);
  for (const p of parts) w.bytes(p);
  return w.done();
}

export const sequence = (...parts: Uint8Array[]): Uint8Array => encode(TAG.SEQUENCE, ...parts);
export const octetString = (b: Uint8Array): Uint8Array => encode(TAG.OCTET_STRING, b);

/** A SET OF: its elements sorted by their encodings (X.690 §11.6). */
export function setOf(items: Uint8Array[]): Uint8Array {
  const sorted = [...items].sort((a, b) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
    return a.length - b.length;
  });
  return encode(TAG.SET, ...sorted);
}

/** The contents of a non-negative INTEGER from a safe integer or big-endian bytes: minimal, a 0x00 before a high bit. */
export function unsignedContents(value: number | Uint8Array): Uint8Array {
  let bytes: number[];
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${value} is not a non-negative safe integer`);
    bytes = [];
    for (let v = value; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  } else bytes = [...value];
  let from = 0;
  while (from < bytes.length - 1 && bytes[from] === 0) from++;
  bytes = bytes.slice(from);
  if (bytes.length === 0) bytes = [0];
  if (bytes[0]! & 0x80) bytes.unshift(0);
  return Uint8Array.from(bytes);
}

/** A non-negative INTEGER (see unsignedContents). */
export const integer = (value: number | Uint8Array): Uint8Array => encode(TAG.INTEGER, unsignedContents(value));

/** An OBJECT IDENTIFIER from its dotted form, which must be valid: X in 0..2, Y below 40 unless X is 2. */
export function oid(text: string): Uint8Array {
  if (!/^[0-2](\.(0|[1-9]\d*))+$/.test(text)) throw new RangeError(`${JSON.stringify(text)} is not an OID`);
  const arcs = text.split('.').map((a) => BigInt(a));
  if (arcs[0]! < 2n && arcs[1]! >= 40n) throw new RangeError(`${text}: the second arc is below 40 under 0 and 1`);
  const out: number[] = [];
  for (const arc of [arcs[0]! * 40n + arcs[1]!, ...arcs.slice(2)]) {
    const chunk: number[] = [Number(arc & 0x7fn)];
    for (let v = arc >> 7n; v > 0n; v >>= 7n) chunk.unshift(Number(v & 0x7fn) | 0x80);
    out.push(...chunk);
  }
  return encode(TAG.OID, Uint8Array.from(out));
}

/** A named-bit BIT STRING with one bit set (X.690 §11.2.2: trailing zero bits dropped). */
export function namedBit(bit: number): Uint8Array {
  const bytes = new Uint8Array(Math.floor(bit / 8) + 1);
  bytes[bytes.length - 1] = 0x80 >> (bit % 8);
  return encode(TAG.BIT_STRING, Uint8Array.of(7 - (bit % 8)), bytes);
}
