// A day's submissions made into the build's columns (distinct hashes sorted, each with its earliest time),
// engine-neutral: from the SQLite queue's chunks (queue.ts dayColumns) or from any engine's streamed batches
// (store.ts SubmissionStore.readDay, `collectDay`).
import { FormatError } from '../core/errors.ts';
import { dayRowCount, type DayBatch } from './store.ts';
import { keyCopier, sameKey, sortRows, sortRowsInPlace } from './sort-keys.ts';

export interface DayColumns {
  count: number;
  /** The day's distinct hashes, sorted, back to back (32 bytes each). */
  hashes: Uint8Array;
  /** Each hash's earliest submission time in epoch milliseconds (its ISO text is `new Date(ms).toISOString()`:
   * only times written that way are accepted). */
  ms: Float64Array;
}

/** Submission times as stored: what Date#toISOString writes, so that milliseconds give back the same text. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Writes row `n` (hash and time as stored) into the buffers, refusing a malformed one. */
export function decodeRow(all: Buffer, allMs: Float64Array, n: number, hash: string, time: string): void {
  // Native hex decoding; the table's CHECK keeps hashes to 64 lower-case hex digits, and a short write
  // (which is how Buffer reports a bad digit) is refused all the same.
  if (all.write(hash, 32 * n, 32, 'hex') !== 32)
    throw new FormatError('hash', `not 64 hex digits in the queue: ${hash}`);
  const ms = Date.parse(time);
  if (!ISO_TIME.test(time) || Number.isNaN(ms))
    throw new FormatError('submitted_at', `not an ISO-8601 UTC time with milliseconds in the queue: ${time}`);
  allMs[n] = ms;
}

/**
 * Writes rows [from, to) of a batch into the buffers from row `n` on, refusing a malformed one as decodeRow does.
 * Packed rows (store.ts PackedDayRows) are decoded without a string per row: the hashes of the range in one
 * native hex decoding, each time from its characters (a time that this fast path does not take, such as one on
 * another day than the row before it, goes through decodeRow: the same milliseconds or the same refusal).
 */
export function decodeRows(
  all: Buffer,
  allMs: Float64Array,
  n: number,
  rows: DayBatch['rows'],
  from: number,
  to: number,
): void {
  if (!('count' in rows)) {
    for (let k = from; k < to; k++) decodeRow(all, allMs, n + k - from, rows[k]![0], rows[k]![1]);
    return;
  }
  const { hashes, times } = rows;
  if (hashes.length !== 64 * rows.count || times.length !== 24 * rows.count)
    throw new FormatError(
      'rows',
      `${rows.count} packed rows in ${hashes.length} hash and ${times.length} time characters`,
    );
  const slow = (k: number): void =>
    decodeRow(all, allMs, n + k - from, hashes.slice(64 * k, 64 * k + 64), times.slice(24 * k, 24 * k + 24));
  if (all.write(hashes.slice(64 * from, 64 * to), 32 * n, 32 * (to - from), 'hex') !== 32 * (to - from)) {
    for (let k = from; k < to; k++) slow(k); // throws at the first bad hash, naming it
  }
  for (let k = from; k < to; k++) {
    const ms = packedTime(times, 24 * k);
    if (Number.isNaN(ms)) slow(k);
    else allMs[n + k - from] = ms;
  }
}

/** The day of the last time packedTime read ("YYYY-MM-DDT") and its midnight in epoch milliseconds. */
let lastDay = '';
let lastDayMs = Number.NaN;

const digitAt = (text: string, at: number): number => {
  const d = text.charCodeAt(at) - 0x30;
  return d >= 0 && d <= 9 ? d : Number.NaN;
};

/**
 * Epoch milliseconds of the ISO time of 24 characters at `at` when it is on the same day as the last one read
 * (or a new day that Date.parse takes) with hours below 24, minutes and seconds below 60: exactly what Date.parse
 * gives for it. NaN for anything else, which the caller hands to decodeRow.
 */
function packedTime(times: string, at: number): number {
  if (!times.startsWith(lastDay, at) || lastDay === '') {
    const day = times.slice(at, at + 11);
    if (!/^\d{4}-\d{2}-\d{2}T$/.test(day)) return Number.NaN;
    lastDay = day;
    lastDayMs = Date.parse(`${day}00:00:00.000Z`);
  }
  if (
    times.charCodeAt(at + 13) !== 0x3a ||
    times.charCodeAt(at + 16) !== 0x3a ||
    times.charCodeAt(at + 19) !== 0x2e ||
    times.charCodeAt(at + 23) !== 0x5a
  )
    return Number.NaN;
  const hours = 10 * digitAt(times, at + 11) + digitAt(times, at + 12);
  const minutes = 10 * digitAt(times, at + 14) + digitAt(times, at + 15);
  const seconds = 10 * digitAt(times, at + 17) + digitAt(times, at + 18);
  const millis = 100 * digitAt(times, at + 20) + 10 * digitAt(times, at + 21) + digitAt(times, at + 22);
  if (!(hours < 24 && minutes < 60 && seconds < 60)) return Number.NaN; // false for NaN too
  return lastDayMs + ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis;
}

/** Sorts the first `n` rows and folds duplicates into their earliest time. */
export function columnsOf(all: Buffer, allMs: Float64Array, n: number): DayColumns {
  // Shared memory, so the build's index worker (pipeline/index-worker.ts) reads the columns without a copy;
  // room for every row, sorted there, then the distinct ones moved up in one pass (the columns are views of
  // their length).
  const hashes = new Uint8Array(new SharedArrayBuffer(32 * n));
  const ms = new Float64Array(new SharedArrayBuffer(8 * n));
  sortRows(all, allMs, n, hashes, ms);
  return foldSorted(hashes, ms, n);
}

/**
 * The columns of the first `n` rows sorted and folded where they are (store/sort-keys.ts sortRowsInPlace): the
 * same entries as columnsOf without a second copy of the rows, as views of the start of `all` and `allMs`
 * (`all` aligned to 4 bytes; in shared memory when the columns are to be read by another thread).
 */
export function columnsInPlace(all: Uint8Array, allMs: Float64Array, n: number): DayColumns {
  sortRowsInPlace(all, allMs, n);
  return foldSorted(all, allMs, n);
}

/** The columns of `n` rows sorted by hash: each hash once, its earliest time, the distinct ones moved up in one
 * pass where they are. */
export function foldSorted(hashes: Uint8Array, ms: Float64Array, n: number): DayColumns {
  const copy = keyCopier(hashes, hashes);
  let out = -1;
  for (let k = 0; k < n; k++) {
    if (out >= 0 && sameKey(hashes, k, out)) {
      if (ms[k]! < ms[out]!) ms[out] = ms[k]!;
    } else if (++out !== k) {
      copy(k, out);
      ms[out] = ms[k]!;
    }
  }
  const count = out + 1;
  return { count, hashes: hashes.subarray(0, 32 * count), ms: ms.subarray(0, count) };
}

/** The columns of a day streamed by any engine (SubmissionStore.readDay): one allocation of the day's size. */
export async function collectDay(batches: AsyncIterable<DayBatch>, date: string): Promise<DayColumns> {
  let all = Buffer.alloc(0);
  let allMs = new Float64Array(0);
  let n = 0;
  for await (const batch of batches) {
    if (all.length === 0 && batch.total > 0) {
      all = Buffer.alloc(32 * batch.total);
      allMs = new Float64Array(batch.total);
    }
    const count = dayRowCount(batch);
    if (n + count > allMs.length) throw new Error(`submissions of ${date} changed while the day was read`);
    decodeRows(all, allMs, n, batch.rows, 0, count);
    n += count;
  }
  if (n !== allMs.length) throw new Error(`submissions of ${date} changed while the day was read`);
  return columnsOf(all, allMs, n);
}
