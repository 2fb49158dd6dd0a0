// Sorting a day's hashes in memory. The submissions table has no (date, hash) index (a wide one, whose random
// pages an insert would touch; PostgreSQL's hash index begins with the hash, so it finds a hash, not a day in order);
// a build reads the day's rows in arrival order and sorts them here (faster than SQLite's GROUP BY … ORDER BY sorter on a
// million rows, and without a row object per hash).
//
// Both sorts below are a counting sort on the keys' first bits, as many as leave about eight random keys to a
// bucket (prefixBits), then each bucket on its own: four of its keys' bytes as one number (`word`, kept beside the
// bucketed keys so that no key is read again for them), a tie of those going on to the bytes after; by insertion
// for the small buckets random keys give, by the engine's sort for a bucket of keys that share a longer prefix
// (no slower than O(n log n)).

/**
 * The ascending order of `n` keys of 32 bytes stored back to back in `keys`; equal keys keep their input
 * order (the sort is stable).
 */
export function sortedOrder(keys: Uint8Array, n: number, bits = prefixBits(n)): Uint32Array {
  checkLength(keys, n, bits);
  const start = bucketStarts(keys, n, bits);
  const next = start.slice(0, -1);
  const order = new Uint32Array(n);
  const word = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const at = next[bucketOf(keys, 32 * i, bits)]!++;
    order[at] = i;
    word[at] = wordAt(keys, 32 * i, bits >> 3);
  }
  const sorter = new BucketSorter(word, (p, q) => compareFrom(keys, order[p]!, order[q]!, (bits >> 3) + 4));
  let moved = new Uint32Array(sorter.perm.length);
  for (let b = 0; b + 1 < start.length; b++) {
    const lo = start[b]!;
    const m = sorter.sort(lo, start[b + 1]!);
    if (m === 0) continue;
    if (moved.length < m) moved = new Uint32Array(m);
    for (let k = 0; k < m; k++) moved[k] = order[sorter.perm[k]!]!;
    order.set(moved.subarray(0, m), lo);
  }
  return order;
}

/**
 * Copies the `n` keys of `keys` (32 bytes each) and their `values` into `outKeys` and `outValues` in ascending
 * order of the keys, equal keys in input order: the same order as sortedOrder, without reading a key out of
 * place (each is copied once to its bucket, and sorted there, where its neighbours are).
 */
export function sortRows(
  keys: Uint8Array,
  values: Float64Array,
  n: number,
  outKeys: Uint8Array,
  outValues: Float64Array,
  bits = prefixBits(n),
): void {
  checkLength(keys, n, bits);
  if (outKeys.length < 32 * n || values.length < n || outValues.length < n)
    throw new RangeError(`sortRows: buffers too short for ${n} rows`);
  const start = bucketStarts(keys, n, bits);
  const next = start.slice(0, -1);
  const word = new Uint32Array(n);
  const copy = keyCopier(keys, outKeys);
  for (let i = 0; i < n; i++) {
    const at = next[bucketOf(keys, 32 * i, bits)]!++;
    copy(i, at);
    outValues[at] = values[i]!;
    word[at] = wordAt(keys, 32 * i, bits >> 3);
  }
  // A key's place in its bucket is its place in the input among the bucket's keys: the tie's last criterion.
  const sorter = new BucketSorter(word, (p, q) => compareAt(outKeys, p, q, (bits >> 3) + 4) || p - q);
  // A bucket's rows are put in order through a scratch copy of them (its first m rows).
  let scratchKeys = new Uint8Array(0);
  let scratchValues = new Float64Array(0);
  let toScratch = keyCopier(outKeys, scratchKeys);
  let fromScratch = keyCopier(scratchKeys, outKeys);
  for (let b = 0; b + 1 < start.length; b++) {
    const lo = start[b]!;
    const m = sorter.sort(lo, start[b + 1]!);
    if (m === 0) continue;
    if (scratchValues.length < m) {
      scratchKeys = new Uint8Array(32 * Math.max(m, INSERTION_MAX));
      scratchValues = new Float64Array(Math.max(m, INSERTION_MAX));
      toScratch = keyCopier(outKeys, scratchKeys);
      fromScratch = keyCopier(scratchKeys, outKeys);
    }
    for (let k = 0; k < m; k++) {
      const from = sorter.perm[k]!;
      toScratch(from, k);
      scratchValues[k] = outValues[from]!;
    }
    for (let k = 0; k < m; k++) {
      fromScratch(k, lo + k);
      outValues[lo + k] = scratchValues[k]!;
    }
  }
}

/**
 * Sorts `n` rows where they are: the keys (32 bytes each, back to back, `keys` aligned to 4 bytes) and their
 * `values` move together into ascending order of the keys, with no copy of the rows (equal keys end up side by
 * side in no particular order). An MSD radix sort: the keys' first `bits` bits are counted, then each row is
 * moved to its bucket by American flag sort's swaps (McIlroy, Bostic and McIlroy, "Engineering Radix Sort",
 * 1993: the row at a bucket's next free place is swapped to the next free place of its own bucket until one that
 * belongs there comes), then each bucket on its own by the same on its next bits, as many as leave about eight
 * keys a bucket (at most 8); a bucket of at most INSERTION_MAX by insertion, on four bytes of its keys as one
 * number and the bytes after those on a tie (as sortRows). Keys that share their next bits go on to the bits
 * after without a move: at most 256 counts of a bucket, for keys all equal.
 */
export function sortRowsInPlace(keys: Uint8Array, values: Float64Array, n: number, bits = IN_PLACE_BITS): void {
  checkInPlace(keys, values, n, bits);
  const sorter = new InPlaceSorter(keys, values, bits);
  const start = new Uint32Array((1 << bits) + 1);
  if (!sorter.partition(0, n, 0, 24 - bits, (1 << bits) - 1, start)) return sorter.sortRange(0, n, bits, 0);
  for (let b = 0; b + 1 < start.length; b++) {
    if (start[b + 1]! - start[b]! > 1) sorter.sortRange(start[b]!, start[b + 1]!, bits, 0);
  }
}

/**
 * Moves the `n` rows (as sortRowsInPlace takes them) into two ranges, rows 0…k − 1 and k…n − 1, every key of the
 * first before every key of the second, k as near n / 2 as the keys' buckets of sortRowsInPlace's first count
 * allow: each range sorted by sortRowsInPlace, by two threads at once, sorts the whole. Returns k (n when every
 * key is in one bucket: nothing to split).
 */
export function splitInPlace(keys: Uint8Array, values: Float64Array, n: number): number {
  checkInPlace(keys, values, n, IN_PLACE_BITS);
  const start = new Uint32Array((1 << IN_PLACE_BITS) + 1);
  const sorter = new InPlaceSorter(keys, values, IN_PLACE_BITS);
  if (!sorter.partition(0, n, 0, 24 - IN_PLACE_BITS, (1 << IN_PLACE_BITS) - 1, start)) return n;
  let k = 0;
  for (const s of start) if (Math.abs(s - n / 2) < Math.abs(k - n / 2)) k = s;
  return k;
}

function checkInPlace(keys: Uint8Array, values: Float64Array, n: number, bits: number): void {
  checkLength(keys, n, bits);
  if (values.length < n) throw new RangeError(`sortRowsInPlace: ${values.length} values for ${n} rows`);
  if (keys.byteOffset % 4 !== 0) throw new RangeError('sortRowsInPlace: keys not aligned to 4 bytes');
}

/** Bits of sortRowsInPlace's first count: 257 buckets, whose next free places stay in the caches while the rows
 * are swapped to them (10 M random rows: 1.4 s at 8 bits, 1.6 s at 11, 2.1 s at 12, 2.8 s at 14;
 * docs/BENCHMARKS.md). */
const IN_PLACE_BITS = 8;

/** sortRowsInPlace's state: the rows as 32-bit words (for the swaps), a count array per level of buckets. */
class InPlaceSorter {
  private readonly keys: Uint8Array;
  private readonly words: Int32Array;
  private readonly values: Float64Array;
  private readonly starts: Uint32Array[] = [];
  /** Each bucket's next free place while rows are swapped to them. */
  private readonly next: Uint32Array;
  /** The words of the bucket sorted by insertion, and the row that is being inserted. */
  private readonly word = new Uint32Array(INSERTION_MAX);
  private readonly carry = new Int32Array(8);
  private readonly carryKey = new Uint8Array(this.carry.buffer);
  constructor(keys: Uint8Array, values: Float64Array, bits: number) {
    this.keys = keys;
    this.next = new Uint32Array(Math.max(256, 1 << bits));
    this.words = new Int32Array(keys.buffer, keys.byteOffset, keys.length >> 2);
    this.values = values;
  }

  /**
   * Moves rows lo…hi − 1 into buckets by their digit, the bits of the three key bytes from byte `a` on
   * (big-endian) shifted right by `shift`, masked by `mask`; `start` gets where each bucket begins (and the end
   * as its last element). false, and nothing moved, when every row has the same digit.
   */
  partition(lo: number, hi: number, a: number, shift: number, mask: number, start: Uint32Array): boolean {
    const { keys, words, values } = this;
    const digit = (i: number): number => {
      const x = 32 * i + a;
      return (((keys[x]! << 16) | (keys[x + 1]! << 8) | keys[x + 2]!) >>> shift) & mask;
    };
    const buckets = mask + 1;
    start.fill(0, 0, buckets + 1);
    for (let i = lo; i < hi; i++) start[digit(i) + 1]!++;
    for (let b = 1; b <= buckets; b++) if (start[b] === hi - lo) return false;
    start[0] = lo;
    for (let b = 1; b <= buckets; b++) start[b]! += start[b - 1]!;
    const next = this.next;
    next.set(start.subarray(0, buckets));
    for (let b = 0; b < buckets; b++) {
      const end = start[b + 1]!;
      for (let i = next[b]!; i < end; i = ++next[b]!) {
        for (let d = digit(i); d !== b; d = digit(i)) {
          const j = next[d]!++;
          for (let x = 8 * i, y = 8 * j, k = 0; k < 8; k++) {
            const w = words[x + k]!;
            words[x + k] = words[y + k]!;
            words[y + k] = w;
          }
          const v = values[i]!;
          values[i] = values[j]!;
          values[j] = v;
        }
      }
    }
    return true;
  }

  /** Sorts rows lo…hi − 1, whose keys share their first `bit` bits; `level` is the depth of the call. */
  sortRange(lo: number, hi: number, bit: number, level: number): void {
    for (let shared = bit; ;) {
      const m = hi - lo;
      if (m <= INSERTION_MAX) return this.insertion(lo, hi, Math.min(shared >> 3, 28));
      if (shared >= 256) return;
      // The next `width` bits as a digit of the three bytes from byte a on (a ≤ 29: within the key).
      const width = Math.min(8, 256 - shared, Math.max(1, Math.round(Math.log2(m / 8))));
      const a = Math.min(shared >> 3, 29);
      const start = (this.starts[level] ??= new Uint32Array(257));
      const found = this.partition(lo, hi, a, 8 * a + 24 - shared - width, (1 << width) - 1, start);
      shared += width;
      if (!found) continue;
      for (let b = 0; b < 1 << width; b++) {
        if (start[b + 1]! - start[b]! > 1) this.sortRange(start[b]!, start[b + 1]!, shared, level + 1);
      }
      return;
    }
  }

  /** Sorts rows lo…hi − 1 (at most INSERTION_MAX) by insertion, on their four bytes from byte `from` on (≤ 28)
   * as one number and the bytes after those on a tie. */
  private insertion(lo: number, hi: number, from: number): void {
    const { keys, words, values, word, carry, carryKey } = this;
    const m = hi - lo;
    for (let k = 0; k < m; k++) word[k] = wordAt(keys, 32 * (lo + k), from);
    for (let k = 1; k < m; k++) {
      const w = word[k]!;
      const p = lo + k;
      let j = k - 1;
      if (word[j]! < w || (word[j] === w && compareBytes(keys, 32 * (p - 1), keys, 32 * p, from + 4) <= 0)) continue;
      for (let t = 0; t < 8; t++) carry[t] = words[8 * p + t]!;
      const v = values[p]!;
      do {
        const q = lo + j;
        for (let t = 0; t < 8; t++) words[8 * q + 8 + t] = words[8 * q + t]!;
        values[q + 1] = values[q]!;
        word[j + 1] = word[j]!;
        j--;
      } while (
        j >= 0 &&
        (word[j]! > w || (word[j] === w && compareBytes(keys, 32 * (lo + j), carryKey, 0, from + 4) > 0))
      );
      const q = lo + j + 1;
      for (let t = 0; t < 8; t++) words[8 * q + t] = carry[t]!;
      values[q] = v;
      word[j + 1] = w;
    }
  }
}

/** Order of the 32-byte key at byte x of `a` and the one at byte y of `b`, from their byte `from` on; 0 when equal. */
function compareBytes(a: Uint8Array, x: number, b: Uint8Array, y: number, from: number): number {
  for (let k = from; k < 32; k++) {
    const d = a[x + k]! - b[y + k]!;
    if (d !== 0) return d;
  }
  return 0;
}

/** The largest bucket sorted by insertion (above it, insertion's quadratic moves cost more than the engine's sort). */
const INSERTION_MAX = 32;

/** Bits of the counting sort's prefix for `n` keys: about eight random keys a bucket, from 8 to 20 bits (a count
 * array of at most 4 MB). */
export function prefixBits(n: number): number {
  return Math.max(8, Math.min(20, Math.round(Math.log2(Math.max(1, n) / 8))));
}

function checkLength(keys: Uint8Array, n: number, bits: number): void {
  if (keys.length < 32 * n) throw new RangeError(`sortedOrder: ${keys.length} bytes hold fewer than ${n} keys`);
  if (!(Number.isInteger(bits) && bits >= 8 && bits <= 24)) throw new RangeError(`sortedOrder: ${bits} prefix bits`);
}

/** The bucket of the key at byte x: its first `bits` bits (at most 24). */
function bucketOf(keys: Uint8Array, x: number, bits: number): number {
  return ((keys[x]! << 16) | (keys[x + 1]! << 8) | keys[x + 2]!) >>> (24 - bits);
}

/** The four bytes of the key at byte x from its byte `from` on, big-endian. With `from` the prefix's bits ÷ 8
 * (rounded down) they begin within or right after the prefix: its bits among them are the same for every key of a
 * bucket, and so compare equal. */
function wordAt(keys: Uint8Array, x: number, from: number): number {
  const y = x + from;
  return ((keys[y]! << 24) | (keys[y + 1]! << 16) | (keys[y + 2]! << 8) | keys[y + 3]!) >>> 0;
}

/** Where each bucket begins in sorted order (the keys' counts summed), and the end as the last element. */
function bucketStarts(keys: Uint8Array, n: number, bits: number): Uint32Array {
  const start = new Uint32Array((1 << bits) + 1);
  for (let i = 0; i < n; i++) start[bucketOf(keys, 32 * i, bits) + 1]!++;
  for (let b = 1; b < start.length; b++) start[b]! += start[b - 1]!;
  return start;
}

/** Order of keys a and b (32 bytes each, back to back) from byte `from` on, then of a and b. */
function compareFrom(keys: Uint8Array, a: number, b: number, from: number): number {
  return compareAt(keys, a, b, from) || a - b;
}

/** Order of keys a and b (32 bytes each, back to back) from byte `from` on; 0 when equal. */
function compareAt(keys: Uint8Array, a: number, b: number, from: number): number {
  return compareBytes(keys, 32 * a, keys, 32 * b, from);
}

/** Sorts the places of one bucket by their `word`, ties by `tie`, into `perm`. */
class BucketSorter {
  perm = new Uint32Array(INSERTION_MAX);
  private readonly word: Uint32Array;
  private readonly tie: (p: number, q: number) => number;
  constructor(word: Uint32Array, tie: (p: number, q: number) => number) {
    this.word = word;
    this.tie = tie;
  }

  /** The places lo…hi − 1 in sorted order in perm[0…m), and m; 0 when they are in order already. */
  sort(lo: number, hi: number): number {
    const m = hi - lo;
    if (m < 2) return 0;
    const { word, tie } = this;
    if (m > INSERTION_MAX) {
      const sorted = Array.from({ length: m }, (_, k) => lo + k).sort((p, q) => word[p]! - word[q]! || tie(p, q));
      if (this.perm.length < m) this.perm = new Uint32Array(m);
      this.perm.set(sorted);
      return m;
    }
    const perm = this.perm;
    let moved = false;
    perm[0] = lo;
    for (let k = 1; k < m; k++) {
      const p = lo + k;
      const w = word[p]!;
      let j = k - 1;
      for (; j >= 0; j--) {
        const q = perm[j]!;
        const d = word[q]! - w;
        if (d < 0 || (d === 0 && tie(q, p) < 0)) break;
        perm[j + 1] = q;
      }
      if (j !== k - 1) moved = true;
      perm[j + 1] = p;
    }
    return moved ? m : 0;
  }
}

/** Copies 32-byte key i of `from` to key j of `to`: as 32-bit words where both are aligned to them (a native
 * copy per key costs more than the copy itself). */
export function keyCopier(from: Uint8Array, to: Uint8Array): (i: number, j: number) => void {
  if (from.byteOffset % 4 !== 0 || to.byteOffset % 4 !== 0)
    return (i, j) => to.set(from.subarray(32 * i, 32 * i + 32), 32 * j);
  const a = new Int32Array(from.buffer, from.byteOffset, from.length >> 2);
  const b = new Int32Array(to.buffer, to.byteOffset, to.length >> 2);
  return (i, j) => {
    for (let w = 0; w < 8; w++) b[8 * j + w] = a[8 * i + w]!;
  };
}

/** Whether keys i and j (32 bytes each, back to back) are equal. */
export function sameKey(keys: Uint8Array, i: number, j: number): boolean {
  const x = 32 * i;
  const y = 32 * j;
  for (let k = 0; k < 32; k++) if (keys[x + k] !== keys[y + k]) return false;
  return true;
}
