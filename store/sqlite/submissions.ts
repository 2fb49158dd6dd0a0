// `submissions` on SQLite (store/store.ts SubmissionStore; the PostgreSQL side: store/postgres/submissions.ts).
// A row written alone and the rows of one `enqueue` go through the group-commit writer (submission-writer.ts):
// a batch's rows are one member of the group, all or none, and share the commit and the sync of the rows around
// them; the queue's reads are queue.ts's statements on the main connection; the lookups by hash (`queued`,
// `submittedOn`) are queue-index.ts's index of the unpublished days, made on the first lookup; a day is streamed
// by id from one snapshot.
import { queueSize, datesWithSubmissions, stagedEnqueue } from './queue.ts';
import { QueueIndex } from './queue-index.ts';
import { StoreClosedError, type DayBatch, type DayRow, type SubmissionStore } from '../store.ts';
import type { SqliteConnection } from './connection.ts';
import { dayClosedOn, neutral, neutralError } from './errors.ts';

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
    // Staged in a temporary table, then copied in one transaction (queue.ts stagedEnqueue).
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
          // The snapshot: rows are only appended and ids grow with each commit (one writer at a time), so the
          // day's rows with an id up to the largest one now are exactly those committed now.
          const { last, total } = neutral(() =>
            db.transaction(() => ({
              last: (sql('SELECT MAX(id) AS m FROM submissions').get() as { m: number | null }).m ?? 0,
              total: (sql('SELECT COUNT(*) AS n FROM submissions WHERE ledger_date = ?').get(date) as { n: number }).n,
            }))(),
          );
          if (total === 0) return;
          const range = 'FROM submissions WHERE ledger_date = ? AND id > ? AND id <= ? ORDER BY id LIMIT ?';
          // A chunk packed (store.ts PackedDayRows) in one result row, or, when a time is not 24 ASCII
          // characters, as pairs (the reader refuses it by its text). Both aggregates take the rows in one pass,
          // so the n-th hash and the n-th time are one row's; in the subquery's order (no ORDER BY in the
          // aggregates: it would sort each chunk again, and 1 M rows cost 0.62 s of CPU instead of 0.30 s).
          const packed = db
            .prepare(
              `SELECT max(id), count(*), sum(length(submitted_at) = 24 AND octet_length(submitted_at) = 24), string_agg(hash, ''), string_agg(submitted_at, '') FROM (SELECT id, hash, submitted_at ${range})`,
            )
            .raw(true);
          const pairs = db.prepare(`SELECT id, hash, submitted_at ${range}`).raw(true);
          for (let after = -1; ;) {
            const [end, count, fixed, hashes, times] = neutral(() => packed.get(date, after, last, batchRows)) as [
              number | null,
              number,
              number | null,
              string | null,
              string | null,
            ];
            if (count === 0 || end === null) return;
            if (fixed === count && hashes !== null && times !== null) {
              yield { total, rows: { count, hashes, times } };
            } else {
              const rows = neutral(() => pairs.all(date, after, last, batchRows)) as Array<[number, string, string]>;
              yield { total, rows: rows.map(([, hash, time]): DayRow => [hash, time]) };
            }
            after = end;
          }
        },
      };
    },
  };
}
