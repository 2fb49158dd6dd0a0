// SHA-256 for every reader and writer. The default is @noble/hashes (audited, runs in browsers); writers that
// hash millions of nodes may pass a faster implementation with the same contract (the pipeline passes
// node:crypto's), which is why hashing functions take a `Hasher`.
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { FormatError } from './errors.ts';

/** Contract: returns the 32-byte SHA-256 digest of `data`; never retains or mutates `data`. */
export type Hasher = (data: Uint8Array) => Uint8Array;

export const sha256: Hasher = (data) => nobleSha256(data);

export const HASH_SIZE = 32;
const HASH_HEX = /^[0-9a-fA-F]{64}$/;

/** True when `text` is a SHA-256 digest written as 64 hex digits, in either case. */
export function isHashHex(text: string): boolean {
  return HASH_HEX.test(text);
}

/** The canonical (lower-case) form of a 64-hex digest; a FormatError names `field` otherwise. */
export function normalizeHashHex(text: string, field = 'hash'): string {
  if (!isHashHex(text)) {
    throw new FormatError(field, 'expected a SHA-256 hash of 64 hexadecimal characters');
  }
  return text.toLowerCase();
}
