// A day's submissions made into the build's columns (distinct hashes sorted, each with its earliest time),
// engine-neutral: from the SQLite queue's chunks (queue.ts dayColumns) or from any engine's streamed batches
// (store.ts SubmissionStore.readDay, `collectDay`).
import { FormatError } from '../core/errors.ts';
import type { DayBatch } from './store.ts';
import { sameKey, sortedOrder } from './sort-keys.ts';

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

/** Sorts the first `n` rows and folds duplicates into their earliest time. */
export function columnsOf(all: Buffer, allMs: Float64Array, n: number): DayColumns {
  const order = sortedOrder(all, n);
  let count = 0;
  for (let k = 0; k < n; k++) if (k === 0 || !sameKey(all, order[k - 1]!, order[k]!)) count++;
  // Shared memory, so the build's index worker (pipeline/index-worker.ts) reads the columns without a copy.
  const hashes = new Uint8Array(new SharedArrayBuffer(32 * count));
  const ms = new Float64Array(new SharedArrayBuffer(8 * count));
  let out = -1;
  for (let k = 0; k < n; k++) {
    const i = order[k]!;
    if (k === 0 || !sameKey(all, order[k - 1]!, i)) {
      out++;
      all.copy(hashes, 32 * out, 32 * i, 32 * i + 32);
      ms[out] = allMs[i]!;
    } else if (allMs[i]! < ms[out]!) {
      ms[out] = allMs[i]!;
    }
  }
  return { count, hashes, ms };
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
    if (n + batch.rows.length > allMs.length) throw new Error(`submissions of ${date} changed while the day was read`);
    for (const [hash, time] of batch.rows) decodeRow(all, allMs, n++, hash, time);
  }
  if (n !== allMs.length) throw new Error(`submissions of ${date} changed while the day was read`);
  return columnsOf(all, allMs, n);
}
