// Reading one part of a day's split (SubmissionStore.splitDay) on a thread that has no store of its own: the
// engine-neutral door for a build's worker thread (pipeline/day-sort.ts), which names no engine itself.
import type { DayBatch, DayPart, DaySplit } from './store.ts';
import { openDayReader, readDayPart } from './sqlite/day-read.ts';

/**
 * The rows of `part` of the split's day, in arrival order, `batchRows` a chunk, read on a read-only connection of
 * this thread's own (the split names the database file); the connection is closed when the stream ends or is left.
 */
export function* readSplitPart(
  split: Pick<DaySplit, 'sqliteFile'>,
  date: string,
  part: DayPart,
  batchRows: number,
): Generator<DayBatch> {
  if (split.sqliteFile === undefined) throw new Error('this split names no database another thread can open');
  const db = openDayReader(split.sqliteFile);
  try {
    yield* readDayPart(db, date, part, batchRows);
  } finally {
    db.close();
  }
}
