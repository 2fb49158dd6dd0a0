// `submissions` on SQLite (store/store.ts SubmissionStore; the PostgreSQL side: store/postgres/submissions.ts).
// A row written alone and the rows of one `enqueue` go through the group-commit writer (submission-writer.ts):
// a batch's rows are one member of the group, all or none, and share the commit and the sync of the rows around
// them; the queue's reads are queue.ts's statements on the main connection; the lookups by hash (`queued`,
// `submittedOn`) are queue-index.ts's index of the unpublished days, made on the first lookup; a day is streamed
// by id from one snapshot.
import { queueSize, datesWithSubmissions, stagedEnqueue } from './queue.ts';
import { QueueIndex } from './queue-index.ts';
import { StoreClosedError, type DayBatch, type SubmissionStore } from '../store.ts';
import { readDayPart, splitDaySnapshot } from './day-read.ts';
import type { SqliteConnection } from './connection.ts';
import { dayClosedOn, neutralError } from './errors.ts';

/**
 * Rows read per query while streaming a day. Small on purpose: a chunk's row arrays and strings must die young.
 * At 65,536 rows they outlived V8's scavenges, were promoted, and a million-hash build peaked at ~600 MB RSS
 * (the build's 600 MB goal: docs/BENCHMARKS.md); at 4,096 the same build peaks at ~390 MB, no slower (docs/BENCHMARKS.md).
 */
const DAY_CHUNK = 4_096;

export function submissionStore(conn: SqliteConnection): SubmissionStore {
  const { db, sql, tx, run } = conn;
  let index: QueueIndex | undefined;
  /** `lookup` on the index, made on the first call (a store that never looks up holds nothing), its faults
   * engine-neutral and a store closed meanwhile StoreClosedError. */
  const byHash = async <T>(lookup: (index: QueueIndex) => Promise<T>): Promise<T> => {
    if (conn.closed) throw new StoreClosedError();
    try {
      index ??= new QueueIndex(db);
      return await lookup(index);
    } catch (err) {
      throw conn.closed ? new StoreClosedError() : neutralError(err);
    }
  };
  return {
    write(row) {
      if (conn.closed) return Promise.reject(new StoreClosedError());
      return conn.writer().write(row);
    },
    enqueue(rows) {
      if (conn.closed) return Promise.reject(new StoreClosedError());
      return conn.writer().writeAll(rows);
    },
    // Staged in a temporary table, then copied in slices, each one transaction (queue.ts stagedEnqueue).
    enqueueStream: (batches) =>
      conn.closed
        ? Promise.reject(new StoreClosedError())
        : stagedEnqueue(db, batches, (copy, earliest) =>
            tx(copy).catch((err: unknown) => {
              throw dayClosedOn(err, earliest) ?? err;
            }),
          ),
    closeThrough: (date) =>
      tx(
        () =>
          void sql(
            'INSERT INTO ledger_close (id, through) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET through = max(through, excluded.through)',
          ).run(date),
      ),
    closedThrough: () =>
      run(
        () =>
          (sql('SELECT through FROM ledger_close WHERE id = 1').get() as { through: string } | undefined)?.through ??
          '',
      ),
    dates: (after, before) => run(() => datesWithSubmissions(db, after, before)),
    queueSize: (lastPublished) => run(() => queueSize(db, lastPublished)),
    queued: (hash, lastPublished) => byHash((index) => index.queued(hash, lastPublished)),
    submittedOn: (date, hashes) => byHash((index) => index.submittedOn(date, hashes)),
    readDay(date, options = {}) {
      const batchRows = options.batchRows ?? DAY_CHUNK;
      return {
        async *[Symbol.asyncIterator](): AsyncGenerator<DayBatch> {
          if (conn.closed) throw new StoreClosedError();
          // A part given is one of splitDay's; otherwise the whole day in one part, its snapshot taken now.
          const parts = options.part ? [options.part] : splitDaySnapshot(db, date, 1).parts;
          for (const part of parts) yield* readDayPart(db, date, part, batchRows);
        },
      };
    },
    splitDay(date, parts) {
      if (conn.closed) return Promise.reject(new StoreClosedError());
      try {
        const split = splitDaySnapshot(db, date, parts);
        return Promise.resolve(db.memory ? split : { ...split, sqliteFile: db.name });
      } catch (err) {
        return Promise.reject(err);
      }
    },
  };
}
