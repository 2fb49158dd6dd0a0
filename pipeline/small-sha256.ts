// SHA-256 (FIPS 180-4 §6.2) specialised for the short messages of a Merkle build: leaves of 33 bytes and
// nodes of 65 bytes, i.e. one or two blocks, hashed without allocating anything but the 32-byte result.
// Measured here 0.46 µs per leaf and 0.85 µs per node, against 1.0 µs for node:crypto's one-shot hash (whose
// per-call overhead dominates at this size). Longer messages go to node:crypto. Only `ledger build` uses it;
// `timeseal verify` recomputes everything with node:crypto (OpenSSL), so the two check each other.
import crypto from 'node:crypto';
import type { Hasher } from '../core/hash.ts';

// FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64 primes.
export const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);
// FIPS 180-4 §5.3.3: the initial hash value.
export const IV = new Int32Array([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);
/** The longest message that pads into two blocks: 128 − 1 (0x80) − 8 (length). */
export const SMALL_MAX = 119;

// The message schedule with the round constants added (K[t] + W[t]), and the running hash value.
const KW = new Int32Array(64);
const H = new Int32Array(8);
const block = new Uint8Array(128);

/** Expands the 16 words in KW[0…16) into the whole schedule and adds the round constants, in place. */
function schedule(): void {
  for (let i = 16; i < 64; i++) {
    const w15 = KW[i - 15]!;
    const w2 = KW[i - 2]!;
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    KW[i] = (KW[i - 16]! + s0 + KW[i - 7]! + s1) | 0;
  }
  for (let i = 0; i < 64; i++) KW[i] = (KW[i]! + K[i]!) | 0;
}

/** The 64 rounds of one block into H, from a schedule with its constants added: kw[at … at+64). */
function rounds(kw: Int32Array, at: number): void {
  let a = H[0]!,
    b = H[1]!,
    c = H[2]!,
    d = H[3]!,
    e = H[4]!,
    f = H[5]!,
    g = H[6]!,
    h = H[7]!;
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + S1 + ((e & f) ^ (~e & g)) + kw[at + i]!) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  H[0] = (H[0]! + a) | 0;
  H[1] = (H[1]! + b) | 0;
  H[2] = (H[2]! + c) | 0;
  H[3] = (H[3]! + d) | 0;
  H[4] = (H[4]! + e) | 0;
  H[5] = (H[5]! + f) | 0;
  H[6] = (H[6]! + g) | 0;
  H[7] = (H[7]! + h) | 0;
}

function compress(b: Uint8Array, off: number): void {
  for (let i = 0; i < 16; i++) {
    const j = off + 4 * i;
    KW[i] = (b[j]! << 24) | (b[j + 1]! << 16) | (b[j + 2]! << 8) | b[j + 3]!;
  }
  schedule();
  rounds(KW, 0);
}

/** H as 32 big-endian bytes into out[offset … offset+32). */
function output(out: Uint8Array, offset: number): void {
  for (let i = 0; i < 8; i++) {
    const v = H[i]!;
    out[offset + 4 * i] = v >>> 24;
    out[offset + 4 * i + 1] = (v >>> 16) & 255;
    out[offset + 4 * i + 2] = (v >>> 8) & 255;
    out[offset + 4 * i + 3] = v & 255;
  }
}

/** KW[1 … 1+n) := the big-endian words of the bytes src[at+3 … at+3+4n), and KW[0] := prefix ‖ src[at … at+3):
 *  the words of a one-byte prefix followed by the bytes at `at`. */
function prefixedWords(prefix: number, src: Uint8Array, at: number, n: number): void {
  KW[0] = (prefix << 24) | (src[at]! << 16) | (src[at + 1]! << 8) | src[at + 2]!;
  for (let i = 1; i <= n; i++) {
    const j = at + 4 * i - 1;
    KW[i] = (src[j]! << 24) | (src[j + 1]! << 16) | (src[j + 2]! << 8) | src[j + 3]!;
  }
}

// The second block of a 65-byte message (an RFC 6962 node, 0x01 ‖ left ‖ right) is its last byte, the padding
// and the length, all fixed but that byte: its whole schedule, constants added, for each of the 256 values.
export const NODE_LAST_BLOCK = new Int32Array(256 * 64);
for (let last = 0; last < 256; last++) {
  KW.fill(0);
  KW[0] = (last << 24) | (0x80 << 16);
  KW[15] = 65 * 8;
  schedule();
  NODE_LAST_BLOCK.set(KW, last * 64);
}

/** SHA-256(0x00 ‖ src[at … at+32)), the RFC 6962 leaf hash of a 32-byte entry, into out[outAt … outAt+32). */
export function leafSha256Into(src: Uint8Array, at: number, out: Uint8Array, outAt: number): void {
  prefixedWords(0x00, src, at, 7);
  KW[8] = (src[at + 31]! << 24) | (0x80 << 16);
  KW.fill(0, 9, 15);
  KW[15] = 33 * 8;
  schedule();
  H.set(IV);
  rounds(KW, 0);
  output(out, outAt);
}

/** SHA-256(0x01 ‖ src[at … at+64)), the RFC 6962 node hash of two 32-byte hashes back to back, into
 *  out[outAt … outAt+32): the first block read in place, the second's schedule taken from NODE_LAST_BLOCK. */
export function nodeSha256Into(src: Uint8Array, at: number, out: Uint8Array, outAt: number): void {
  prefixedWords(0x01, src, at, 15);
  schedule();
  H.set(IV);
  rounds(KW, 0);
  rounds(NODE_LAST_BLOCK, src[at + 63]! * 64);
  output(out, outAt);
}

export const smallSha256: Hasher = (data) => {
  if (data.length > SMALL_MAX) return crypto.hash('sha256', data, 'buffer');
  const out = new Uint8Array(32);
  smallSha256Into(data, out, 0);
  return out;
};

/** SHA-256 of `data` (at most SMALL_MAX bytes) written into out[offset … offset+32). */
export function smallSha256Into(data: Uint8Array, out: Uint8Array, offset: number): void {
  const n = data.length;
  if (n > SMALL_MAX) throw new RangeError(`smallSha256Into takes at most ${SMALL_MAX} bytes, got ${n}`);
  const blocks = n < 56 ? 1 : 2;
  const end = blocks * 64;
  block.fill(0, 0, end);
  block.set(data);
  block[n] = 0x80;
  const bits = n * 8;
  block[end - 2] = bits >>> 8;
  block[end - 1] = bits & 255;
  H.set(IV);
  compress(block, 0);
  if (blocks === 2) compress(block, 64);
  output(out, offset);
}
