// Sorting a day's hashes in memory. The submissions table has no (date, hash) index (a wide one, whose random
// pages an insert would touch; PostgreSQL's hash index begins with the hash, so it finds a hash, not a day in order);
// a build reads the day's rows in arrival order and sorts them here (faster than SQLite's GROUP BY … ORDER BY sorter on a
// million rows, and without a row object per hash).

/**
 * The ascending order of `n` keys of 32 bytes stored back to back in `keys`; equal keys keep their input
 * order (the sort is stable). A counting sort on the first two bytes, then each bucket by comparison:
 * insertion sort for the small buckets random hashes give; a bucket of more than INSERTION_MAX (a run of
 * millions of rows has ~50 a bucket) first by a counting sort on its third byte, then each part by insertion;
 * the engine's sort for a part still larger (hashes that share a prefix are no slower than O(n log n)).
 */
export function sortedOrder(keys: Uint8Array, n: number): Uint32Array {
  if (keys.length < 32 * n) throw new RangeError(`sortedOrder: ${keys.length} bytes hold fewer than ${n} keys`);
  const bucket = (i: number): number => (keys[32 * i]! << 8) | keys[32 * i + 1]!;
  const start = new Uint32Array(65537);
  for (let i = 0; i < n; i++) start[bucket(i) + 1]!++;
  for (let b = 1; b <= 65536; b++) start[b]! += start[b - 1]!;
  const order = new Uint32Array(n);
  const next = start.slice(0, 65536);
  for (let i = 0; i < n; i++) order[next[bucket(i)]!++] = i;

  const compare = (a: number, b: number): number => {
    const x = 32 * a;
    const y = 32 * b;
    for (let k = 2; k < 32; k++) {
      const d = keys[x + k]! - keys[y + k]!;
      if (d !== 0) return d;
    }
    return a - b;
  };
  const byComparison = (lo: number, hi: number): void => {
    if (hi - lo < 2) return;
    if (hi - lo > INSERTION_MAX) {
      order.set(Array.from(order.subarray(lo, hi)).sort(compare), lo);
      return;
    }
    for (let i = lo + 1; i < hi; i++) {
      const v = order[i]!;
      let j = i - 1;
      while (j >= lo && compare(order[j]!, v) > 0) {
        order[j + 1] = order[j]!;
        j--;
      }
      order[j + 1] = v;
    }
  };
  const third = new Uint32Array(257);
  let scratch = new Uint32Array(0);
  for (let b = 0; b < 65536; b++) {
    const lo = start[b]!;
    const hi = start[b + 1]!;
    if (hi - lo <= INSERTION_MAX) {
      byComparison(lo, hi);
      continue;
    }
    // A stable counting sort of the bucket on byte 2, through `scratch`; then each part on the bytes after.
    if (scratch.length < hi - lo) scratch = new Uint32Array(hi - lo);
    third.fill(0);
    for (let i = lo; i < hi; i++) third[keys[32 * order[i]! + 2]! + 1]!++;
    for (let c = 1; c <= 256; c++) third[c]! += third[c - 1]!;
    const at = third.slice(0, 256);
    for (let i = lo; i < hi; i++) scratch[at[keys[32 * order[i]! + 2]!]!++] = order[i]!;
    order.set(scratch.subarray(0, hi - lo), lo);
    for (let c = 0; c < 256; c++) byComparison(lo + third[c]!, lo + third[c + 1]!);
  }
  return order;
}

/** The largest part sorted by insertion (above it, insertion's quadratic moves cost more than the engine's sort). */
const INSERTION_MAX = 32;

/** Whether keys i and j (32 bytes each, back to back) are equal. */
export function sameKey(keys: Uint8Array, i: number, j: number): boolean {
  const x = 32 * i;
  const y = 32 * j;
  for (let k = 0; k < 32; k++) if (keys[x + k] !== keys[y + k]) return false;
  return true;
}
