// Byte helpers: strict hex and base64 (RFC 4648 §4, padded), UTF-8, concatenation and comparison.
// Strict means every decoder rejects what its encoder would never produce, so a parsed value re-encodes to
// the same text.
import { FormatError } from './errors.ts';

const HEX = '0123456789abcdef';
const HEX_BYTE: string[] = Array.from({ length: 256 }, (_, i) => HEX[i >> 4]! + HEX[i & 15]!);

/** One join, not `+=` per byte: that built a rope of a node per byte (4 KB of bytes: ~1 ms and ~130 KB each). */
export function toHex(bytes: Uint8Array): string {
  const out = new Array<string>(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = HEX_BYTE[bytes[i]!]!;
  return out.join('');
}

/** Lower- or upper-case hex of even length to bytes. */
export function fromHex(text: string, field = 'hex'): Uint8Array {
  if (text.length % 2 !== 0) throw new FormatError(field, `odd number of hex digits (${text.length})`);
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) {
    const hi = hexValue(text.charCodeAt(2 * i));
    const lo = hexValue(text.charCodeAt(2 * i + 1));
    if (hi < 0 || lo < 0) throw new FormatError(field, `not hexadecimal at character ${2 * i + (hi < 0 ? 1 : 2)}`);
    out[i] = (hi << 4) | lo;
  }
  return out;
}

/** Value of the ASCII code of a lower-case hex digit (0-9, a-f), or -1. */
export function lowerHexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

function hexValue(c: number): number {
  if (c >= 65 && c <= 70) return c - 55;
  return lowerHexValue(c);
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_VALUE = new Int16Array(128).fill(-1);
for (let i = 0; i < B64.length; i++) B64_VALUE[B64.charCodeAt(i)] = i;

export function toBase64(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + B64[(n >> 6) & 63]! + B64[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + '==';
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + B64[(n >> 6) & 63]! + '=';
  }
  return out;
}

/** Standard padded base64; rejects missing padding, stray characters and non-zero trailing bits. */
export function fromBase64(text: string, field = 'base64'): Uint8Array {
  if (text.length % 4 !== 0) throw new FormatError(field, 'base64 length is not a multiple of 4');
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const out = new Uint8Array((text.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    let n = 0;
    for (let j = 0; j < 4; j++) {
      const c = text.charCodeAt(i + j);
      const isPad = c === 61 && i + j >= text.length - pad;
      const v = isPad ? 0 : c < 128 ? B64_VALUE[c]! : -1;
      if (v < 0) throw new FormatError(field, `not base64 at character ${i + j + 1}`);
      n = (n << 6) | v;
    }
    const bytes = [(n >> 16) & 255, (n >> 8) & 255, n & 255];
    for (const b of bytes) if (o < out.length) out[o++] = b;
    if (i + 4 === text.length && ((pad === 1 && (n & 0xff) !== 0) || (pad === 2 && (n & 0xffff) !== 0))) {
      throw new FormatError(field, 'base64 has non-zero padding bits');
    }
  }
  return out;
}

const encoder = new TextEncoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** UTF-8 bytes to text; invalid UTF-8 is a FormatError, never a replacement character. */
export function fromUtf8(bytes: Uint8Array, field = 'text'): string {
  try {
    return strictDecoder.decode(bytes);
  } catch (err) {
    throw new FormatError(field, 'not valid UTF-8', { cause: err });
  }
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** Lexicographic byte order, the order of a day's leaves. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** compareBytes of the 32-byte hashes at a[i…] and b[j…], in place (no view made: a loop over millions of
 * hashes made two views a hash). */
export function compareHashAt(a: Uint8Array, i: number, b: Uint8Array, j: number): number {
  for (let k = 0; k < 32; k++) if (a[i + k] !== b[j + k]) return a[i + k]! - b[j + k]!;
  return 0;
}

/** Lower-case hex of bytes[start … end) without making a view. */
export function hexOf(bytes: Uint8Array, start: number, end: number): string {
  let out = '';
  for (let i = start; i < end; i++) out += HEX_BYTE[bytes[i]!];
  return out;
}

/** Writes the lower-case hex of bytes[start … end) into out at `at` (ASCII); returns the next position. */
export function writeHex(bytes: Uint8Array, start: number, end: number, out: Uint8Array, at: number): number {
  for (let i = start; i < end; i++) {
    const b = bytes[i]!;
    out[at++] = HEX_CODES[b >> 4]!;
    out[at++] = HEX_CODES[b & 15]!;
  }
  return at;
}
const HEX_CODES = Uint8Array.from(HEX, (c) => c.charCodeAt(0));
