// A small strict codec for the CBOR that COSE receipts and key sets are made of (RFC 8949), in the core
// deterministic encoding of RFC 8949 §4.2.1: preferred (shortest) integer and length forms, definite lengths
// only, map keys sorted by the bytewise order of their encodings, no duplicate keys. The encoder writes only
// that form; the decoder accepts only that form (as core/der.ts does for DER), so every value has exactly one
// encoding and a re-encoding of a decoded item gives back its bytes.
//
// Signed Statements come from other people's encoders, so `decodeCbor(bytes, what, { deterministic: false })`
// also reads any well-formed item of the same data model (RFC 8949 §5.3.1) whose integers and lengths are not
// in their shortest form or whose map keys are in another order; it still refuses indefinite lengths, floats and
// duplicate map keys. Nothing but such a reader's caller re-encodes what it read.
//
// The data model is the subset COSE needs: integers within ±(2^53 − 1) (JavaScript numbers), byte strings,
// UTF-8 text strings, arrays, maps (keys: integers or text, as COSE labels are), tags, and the simple values
// false, true and null. Floats, undefined, other simple values, bignums and indefinite lengths are refused.
import { compareBytes, concatBytes, utf8 } from './encoding.ts';
import { FormatError } from './errors.ts';

export type CborKey = number | string;
export type CborValue = number | string | Uint8Array | boolean | null | CborValue[] | CborMap | CborTag;
export type CborMap = Map<CborKey, CborValue>;

/** A tagged item (RFC 8949 §3.4), e.g. tag 18 around a COSE_Sign1. */
export class CborTag {
  readonly tag: number;
  readonly value: CborValue;
  constructor(tag: number, value: CborValue) {
    this.tag = tag;
    this.value = value;
  }
}

/** Nesting deeper than this is refused (COSE receipts and key sets are four levels deep). */
const MAX_DEPTH = 16;

// RFC 8949 §3.1 major types.
const UINT = 0;
const NINT = 1;
const BSTR = 2;
const TSTR = 3;
const ARRAY = 4;
const MAP = 5;
const TAG = 6;
const SIMPLE = 7;

function head(major: number, n: number): Uint8Array {
  if (!Number.isSafeInteger(n) || n < 0) throw new FormatError('CBOR', `cannot encode ${n} as an argument`);
  const m = major << 5;
  if (n < 24) return Uint8Array.of(m | n);
  if (n < 0x100) return Uint8Array.of(m | 24, n);
  if (n < 0x10000) return Uint8Array.of(m | 25, n >> 8, n & 0xff);
  if (n < 0x100000000) return Uint8Array.of(m | 26, n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
  const out = new Uint8Array(9);
  out[0] = m | 27;
  const hi = Math.floor(n / 0x100000000);
  const lo = n >>> 0;
  new DataView(out.buffer).setUint32(1, hi);
  new DataView(out.buffer).setUint32(5, lo);
  return out;
}

/** The deterministic encoding of a value (RFC 8949 §4.2.1). */
export function encodeCbor(value: CborValue): Uint8Array {
  const parts: Uint8Array[] = [];
  encodeInto(value, parts, 0);
  return concatBytes(...parts);
}

function encodeInto(value: CborValue, out: Uint8Array[], depth: number): void {
  if (depth > MAX_DEPTH) throw new FormatError('CBOR', `nested deeper than ${MAX_DEPTH}`);
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new FormatError('CBOR', `${value} is not a safe integer`);
    out.push(value >= 0 ? head(UINT, value) : head(NINT, -1 - value));
  } else if (typeof value === 'string') {
    const bytes = utf8(value);
    out.push(head(TSTR, bytes.length), bytes);
  } else if (value instanceof Uint8Array) {
    out.push(head(BSTR, value.length), value);
  } else if (value === false || value === true || value === null) {
    out.push(Uint8Array.of(value === false ? 0xf4 : value === true ? 0xf5 : 0xf6));
  } else if (Array.isArray(value)) {
    out.push(head(ARRAY, value.length));
    for (const item of value) encodeInto(item, out, depth + 1);
  } else if (value instanceof Map) {
    const entries = [...value].map(([k, v]) => ({ key: encodeCbor(k), value: v }));
    entries.sort((a, b) => compareBytes(a.key, b.key));
    for (let i = 1; i < entries.length; i++) {
      if (compareBytes(entries[i - 1]!.key, entries[i]!.key) === 0) throw new FormatError('CBOR', 'duplicate map key');
    }
    out.push(head(MAP, entries.length));
    for (const e of entries) {
      out.push(e.key);
      encodeInto(e.value, out, depth + 1);
    }
  } else if (value instanceof CborTag) {
    out.push(head(TAG, value.tag));
    encodeInto(value.value, out, depth + 1);
  } else {
    throw new FormatError('CBOR', `cannot encode ${typeof value}`);
  }
}

/**
 * Decodes exactly one deterministically encoded item filling all of `bytes`. `what` names the bytes in errors
 * ("receipt", "COSE key set"), each of which says where and what is wrong.
 */
export function decodeCbor(bytes: Uint8Array, what = 'CBOR', options: { deterministic?: boolean } = {}): CborValue {
  const reader = new Reader(bytes, what, options.deterministic ?? true);
  const value = reader.item(0);
  if (reader.at !== bytes.length)
    throw new FormatError(what, `${bytes.length - reader.at} bytes after the CBOR item (at byte ${reader.at})`);
  return value;
}

class Reader {
  at = 0;
  private readonly view: DataView;
  private readonly bytes: Uint8Array;
  private readonly what: string;
  private readonly deterministic: boolean;
  constructor(bytes: Uint8Array, what: string, deterministic: boolean) {
    this.bytes = bytes;
    this.what = what;
    this.deterministic = deterministic;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  private fail(problem: string, at = this.at): never {
    throw new FormatError(this.what, `${problem} (at byte ${at})`);
  }

  private need(n: number): void {
    if (this.bytes.length - this.at < n) this.fail(`truncated: ${n} more bytes needed`);
  }

  /** The argument of a head whose initial byte's low five bits are `info`, checked to be in preferred form. */
  private argument(info: number, start: number): number {
    if (info < 24) return info;
    if (info === 31) this.fail('indefinite length, which deterministic CBOR does not allow', start);
    if (info > 27) this.fail(`reserved additional information ${info}`, start);
    const size = 1 << (info - 24);
    this.need(size);
    let n: number;
    if (size === 1) n = this.bytes[this.at]!;
    else if (size === 2) n = this.view.getUint16(this.at);
    else if (size === 4) n = this.view.getUint32(this.at);
    else {
      const hi = this.view.getUint32(this.at);
      if (hi >= 0x200000) this.fail('an integer beyond 2^53 − 1', start);
      n = hi * 0x100000000 + this.view.getUint32(this.at + 4);
    }
    this.at += size;
    const minimal = size === 1 ? 24 : size === 2 ? 0x100 : size === 4 ? 0x10000 : 0x100000000;
    if (n < minimal && this.deterministic) this.fail(`${n} not in its shortest form`, start);
    return n;
  }

  item(depth: number): CborValue {
    if (depth > MAX_DEPTH) this.fail(`nested deeper than ${MAX_DEPTH}`);
    const start = this.at;
    this.need(1);
    const initial = this.bytes[this.at++]!;
    const major = initial >> 5;
    const info = initial & 0x1f;
    if (major === SIMPLE) {
      if (info === 20) return false;
      if (info === 21) return true;
      if (info === 22) return null;
      if (info >= 25 && info <= 27) this.fail('a floating-point number, which is not accepted here', start);
      if (info === 31) this.fail('a "break" outside an indefinite-length item', start);
      this.fail(`simple value ${info}, which is not accepted here`, start);
    }
    const n = this.argument(info, start);
    switch (major) {
      case UINT:
        return n;
      case NINT:
        if (n >= Number.MAX_SAFE_INTEGER) this.fail('an integer beyond −2^53', start);
        return -1 - n;
      case BSTR:
      case TSTR: {
        this.need(n);
        const content = this.bytes.subarray(this.at, this.at + n);
        this.at += n;
        if (major === BSTR) return content.slice();
        try {
          return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(content);
        } catch {
          return this.fail('a text string that is not valid UTF-8', start);
        }
      }
      case ARRAY: {
        if (n > this.bytes.length - this.at) this.fail(`an array of ${n} items in fewer bytes`, start);
        const items: CborValue[] = [];
        for (let i = 0; i < n; i++) items.push(this.item(depth + 1));
        return items;
      }
      case MAP: {
        if (n > this.bytes.length - this.at) this.fail(`a map of ${n} entries in fewer bytes`, start);
        const map: CborMap = new Map();
        let previous: Uint8Array | undefined;
        for (let i = 0; i < n; i++) {
          const keyStart = this.at;
          const key = this.item(depth + 1);
          if (typeof key !== 'number' && typeof key !== 'string')
            this.fail('a map key that is not an integer or text', keyStart);
          const encoded = this.bytes.subarray(keyStart, this.at);
          if (previous !== undefined) {
            const order = compareBytes(previous, encoded);
            if (order === 0) this.fail(`duplicate map key ${JSON.stringify(key)}`, keyStart);
            if (order > 0 && this.deterministic)
              this.fail(`map key ${JSON.stringify(key)} out of the deterministic order`, keyStart);
          }
          // Out of order (a non-deterministic item), a repeat need not follow its first: the map knows.
          if (map.has(key)) this.fail(`duplicate map key ${JSON.stringify(key)}`, keyStart);
          previous = encoded;
          map.set(key, this.item(depth + 1));
        }
        return map;
      }
      default: // TAG
        return new CborTag(n, this.item(depth + 1));
    }
  }
}

/** Type guards for readers of decoded items: each names the field that has the wrong type. */
export function cborMap(value: CborValue | undefined, field: string): CborMap {
  if (!(value instanceof Map)) throw new FormatError(field, 'expected a CBOR map');
  return value;
}

export function cborArray(value: CborValue | undefined, field: string): CborValue[] {
  if (!Array.isArray(value)) throw new FormatError(field, 'expected a CBOR array');
  return value;
}

export function cborBytes(value: CborValue | undefined, field: string): Uint8Array {
  if (!(value instanceof Uint8Array)) throw new FormatError(field, 'expected a CBOR byte string');
  return value;
}

export function cborText(value: CborValue | undefined, field: string): string {
  if (typeof value !== 'string') throw new FormatError(field, 'expected a CBOR text string');
  return value;
}

export function cborInt(value: CborValue | undefined, field: string): number {
  if (typeof value !== 'number') throw new FormatError(field, 'expected a CBOR integer');
  return value;
}

export function cborUint(value: CborValue | undefined, field: string): number {
  const n = cborInt(value, field);
  if (n < 0) throw new FormatError(field, 'expected an unsigned integer');
  return n;
}
