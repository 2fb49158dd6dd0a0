// Merkle Tree Hash, inclusion proofs and consistency proofs of RFC 6962 §2.1, as restated by RFC 9162 §2.1
// (§2.1.1 tree hash, §2.1.3 inclusion proofs, §2.1.4 consistency proofs), with SHA-256.
//
// Trees are never held in memory here: every function reads the hashes of complete subtrees through a
// `HashReader`, so the same code proves from an in-memory tree, from tiles on disk or from tiles fetched by a
// browser (core/tiles.ts). The hash of an incomplete subtree (the right edge of a tree whose size is not a power
// of two) is always recomputed from the complete subtrees it is made of.
//
// Sizes and indexes are JavaScript numbers, exact up to Number.MAX_SAFE_INTEGER (2^53 − 1); the arithmetic
// below avoids 32-bit bitwise operators for that reason.
import { equalBytes, toHex } from './encoding.ts';
import { FormatError, MismatchError } from './errors.ts';
import { HASH_SIZE, sha256, type Hasher } from './hash.ts';

/** RFC 6962 §2.1: a leaf hash is SHA-256(0x00 || entry). */
const LEAF_PREFIX = 0x00;
/** RFC 6962 §2.1: an interior node hash is SHA-256(0x01 || left || right). */
const NODE_PREFIX = 0x01;

/**
 * Contract: returns the 32-byte hash of the COMPLETE subtree of height `level` covering the leaves
 * [index·2^level, (index+1)·2^level) (level 0 = leaf hashes); throws when that hash is unknown, for example
 * because the subtree is not complete in the tree being read. It must not return a buffer it will mutate later.
 */
export type HashReader = (level: number, index: number) => Uint8Array;

/** A complete subtree: height `level`, covering leaves [index·2^level, (index+1)·2^level). */
export interface Subtree {
  level: number;
  index: number;
}

/** RFC 6962 §2.1: the leaf hash of one entry, SHA-256(0x00 || entry). */
export function leafHash(entry: Uint8Array, hasher: Hasher = sha256): Uint8Array {
  const input = new Uint8Array(1 + entry.length);
  input[0] = LEAF_PREFIX;
  input.set(entry, 1);
  return hasher(input);
}

/** RFC 6962 §2.1: the hash of an interior node, SHA-256(0x01 || left || right). */
export function nodeHash(left: Uint8Array, right: Uint8Array, hasher: Hasher = sha256): Uint8Array {
  checkHashSize(left, 'left hash');
  checkHashSize(right, 'right hash');
  const input = new Uint8Array(1 + 2 * HASH_SIZE);
  input[0] = NODE_PREFIX;
  input.set(left, 1);
  input.set(right, 1 + HASH_SIZE);
  return hasher(input);
}

/**
 * The complete subtrees a tree of `size` leaves is made of, largest (leftmost) first: one per set bit of
 * `size`. Its root is their hashes folded from the right (RFC 6962 §2.1: the split point k is the largest
 * power of two smaller than n).
 */
export function subtreesOf(size: number): Subtree[] {
  checkCount(size, 'size');
  return rangeSubtrees(0, size);
}

/**
 * The complete subtrees covering leaves [start, end), left to right, each as large as its alignment allows.
 * For the ranges that occur in RFC 6962 trees (start a multiple of the smallest power of two ≥ end − start)
 * this is the binary decomposition of end − start, largest first.
 */
export function rangeSubtrees(start: number, end: number): Subtree[] {
  const out: Subtree[] = [];
  let position = start;
  while (position < end) {
    let level = 0;
    let width = 1;
    while (position % (width * 2) === 0 && position + width * 2 <= end) {
      level++;
      width *= 2;
    }
    out.push({ level, index: position / width });
    position += width;
  }
  return out;
}

/** RFC 6962 §2.1 MTH: the root of the tree of the first `size` leaves; the empty tree's is SHA-256(""). */
export function treeHash(size: number, read: HashReader, hasher: Hasher = sha256): Uint8Array {
  checkCount(size, 'size');
  if (size === 0) return hasher(new Uint8Array(0));
  return rangeHash(0, size, read, hasher);
}

/**
 * RFC 9162 §2.1.3.1 PATH(m, D[n]): the audit path of leaf `index` in the tree of `size` leaves, from the
 * leaf's sibling up to the root's child.
 */
export function inclusionProof(index: number, size: number, read: HashReader, hasher: Hasher = sha256): Uint8Array[] {
  checkIndex(index, size);
  return inclusionRanges(index, size).map(([start, end]) => rangeHash(start, end, read, hasher));
}

/**
 * The stored hashes an inclusion proof reads, without duplicates: a client that fetches exactly these (for
 * example through core/tiles.ts `tilesForInclusion`) can build the proof.
 */
export function inclusionProofCoordinates(index: number, size: number): Subtree[] {
  checkIndex(index, size);
  return inclusionRanges(index, size).flatMap(([start, end]) => rangeSubtrees(start, end));
}

/**
 * RFC 9162 §2.1.3.2: the root that `proof` leads to from `leaf` (a leaf hash) at `index` in a tree of `size`.
 * A FormatError for an index outside the tree, a leaf hash or proof element that is not 32 bytes, or a proof
 * of the wrong length for (index, size).
 */
export function rootFromInclusionProof(
  leaf: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  hasher: Hasher = sha256,
): Uint8Array {
  checkIndex(index, size);
  checkHashSize(leaf, 'leaf hash');
  checkProof(proof, inclusionRanges(index, size).length);
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) throw new FormatError('proof', 'longer than the path to the root');
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r, hasher);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p, hasher);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) throw new FormatError('proof', 'shorter than the path to the root');
  return r;
}

/**
 * RFC 9162 §2.1.3.2: checks that `leaf` (a leaf hash) is at `index` in the tree of `size` leaves whose root is
 * `root`. Throws a MismatchError showing both roots when the proof leads elsewhere; FormatError as for
 * `rootFromInclusionProof`.
 */
export function verifyInclusion(
  leaf: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
  hasher: Hasher = sha256,
): void {
  const computed = rootFromInclusionProof(leaf, index, size, proof, hasher);
  if (!equalBytes(computed, root)) {
    const what = `inclusion proof of leaf ${index} in tree of size ${size}: root`;
    throw new MismatchError(what, toHex(root), toHex(computed));
  }
}

/**
 * RFC 9162 §2.1.4.1 PROOF(m, D[n]): the consistency proof from the tree of `oldSize` leaves to the tree of
 * `newSize` leaves (0 < oldSize ≤ newSize; empty when they are equal).
 */
export function consistencyProof(
  oldSize: number,
  newSize: number,
  read: HashReader,
  hasher: Hasher = sha256,
): Uint8Array[] {
  checkSizes(oldSize, newSize);
  return consistencyRanges(oldSize, newSize).map(([start, end]) => rangeHash(start, end, read, hasher));
}

/** The stored hashes a consistency proof reads, without duplicates (see `inclusionProofCoordinates`). */
export function consistencyProofCoordinates(oldSize: number, newSize: number): Subtree[] {
  checkSizes(oldSize, newSize);
  return consistencyRanges(oldSize, newSize).flatMap(([start, end]) => rangeSubtrees(start, end));
}

/**
 * RFC 9162 §2.1.4.2: checks that the tree of `newSize` leaves with root `newRoot` extends the tree of
 * `oldSize` leaves with root `oldRoot`. A consistency proof from the empty tree proves nothing and is refused
 * (FormatError), as are oldSize > newSize, proof elements that are not 32 bytes and proofs of the wrong length.
 * Throws a MismatchError showing both values when either root does not match.
 */
export function verifyConsistency(
  oldSize: number,
  newSize: number,
  proof: readonly Uint8Array[],
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  hasher: Hasher = sha256,
): void {
  checkSizes(oldSize, newSize);
  if (oldSize === newSize) {
    checkProof(proof, 0);
    if (!equalBytes(oldRoot, newRoot)) {
      throw new MismatchError(`consistency of equal tree sizes ${oldSize}: root`, toHex(oldRoot), toHex(newRoot));
    }
    return;
  }
  checkProof(proof, consistencyRanges(oldSize, newSize).length);
  // Step 2: when oldSize is a power of two the old root is itself the first node of the path.
  const path = isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : proof;
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (let i = 1; i < path.length; i++) {
    const c = path[i]!;
    if (sn === 0) throw new FormatError('proof', 'longer than the path to the new root');
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr, hasher);
      sr = nodeHash(c, sr, hasher);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = nodeHash(sr, c, hasher);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) throw new FormatError('proof', 'shorter than the path to the new root');
  if (!equalBytes(fr, oldRoot)) {
    throw new MismatchError(`consistency proof ${oldSize} → ${newSize}: old root`, toHex(oldRoot), toHex(fr));
  }
  if (!equalBytes(sr, newRoot)) {
    throw new MismatchError(`consistency proof ${oldSize} → ${newSize}: new root`, toHex(newRoot), toHex(sr));
  }
}

type Range = [start: number, end: number];

/** The subtree ranges whose hashes form PATH(index, D[size]), leaf level first. */
function inclusionRanges(index: number, size: number): Range[] {
  const ranges: Range[] = [];
  let lo = 0;
  let hi = size;
  while (hi - lo > 1) {
    const k = largestPowerOfTwoBelow(hi - lo);
    if (index < lo + k) {
      ranges.push([lo + k, hi]);
      hi = lo + k;
    } else {
      ranges.push([lo, lo + k]);
      lo += k;
    }
  }
  return ranges.reverse();
}

/** The subtree ranges whose hashes form SUBPROOF(m, D[n], true), in proof order. */
function consistencyRanges(oldSize: number, newSize: number): Range[] {
  const appended: Range[] = [];
  let lo = 0;
  let hi = newSize;
  let m = oldSize;
  let whole = true;
  while (m !== hi - lo) {
    const k = largestPowerOfTwoBelow(hi - lo);
    if (m <= k) {
      appended.push([lo + k, hi]);
      hi = lo + k;
    } else {
      appended.push([lo, lo + k]);
      lo += k;
      m -= k;
      whole = false;
    }
  }
  const ranges: Range[] = whole ? [] : [[lo, hi]];
  return ranges.concat(appended.reverse());
}

/** MTH(D[start:end]) for a range of an RFC 6962 tree, folded from the complete subtrees that cover it. */
function rangeHash(start: number, end: number, read: HashReader, hasher: Hasher): Uint8Array {
  const subtrees = rangeSubtrees(start, end);
  let acc: Uint8Array | undefined;
  for (let i = subtrees.length - 1; i >= 0; i--) {
    const { level, index } = subtrees[i]!;
    const hash = read(level, index);
    checkHashSize(hash, `stored hash at level ${level} index ${index}`);
    acc = acc === undefined ? hash : nodeHash(hash, acc, hasher);
  }
  if (acc === undefined) throw new FormatError('range', `empty range [${start}, ${end})`);
  return acc;
}

function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  let k = 1;
  while (k < n) k *= 2;
  return k === n;
}

function checkCount(value: number, field: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new FormatError(field, `expected a non-negative integer below 2^53, got ${value}`);
  }
}

function checkIndex(index: number, size: number): void {
  checkCount(size, 'size');
  checkCount(index, 'index');
  if (index >= size) throw new FormatError('index', `leaf ${index} is not in a tree of size ${size}`);
}

function checkSizes(oldSize: number, newSize: number): void {
  checkCount(oldSize, 'old size');
  checkCount(newSize, 'new size');
  if (oldSize > newSize) throw new FormatError('old size', `${oldSize} is larger than the new size ${newSize}`);
  if (oldSize === 0) throw new FormatError('old size', 'a consistency proof from the empty tree proves nothing');
}

function checkProof(proof: readonly Uint8Array[], expectedLength: number): void {
  if (proof.length !== expectedLength) {
    throw new FormatError('proof', `expected ${expectedLength} hashes, got ${proof.length}`);
  }
  proof.forEach((p, i) => checkHashSize(p, `proof[${i}]`));
}

function checkHashSize(hash: Uint8Array, field: string): void {
  if (hash.length !== HASH_SIZE) throw new FormatError(field, `expected ${HASH_SIZE} bytes, got ${hash.length}`);
}
