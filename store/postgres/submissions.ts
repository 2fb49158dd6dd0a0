// `submissions` on PostgreSQL (store/store.ts SubmissionStore; the SQLite side: store/sqlite/submissions.ts).
// Rows written one by one are grouped into one INSERT … unnest and one commit per flush; a day is streamed by
// keyset pagination on id inside one REPEATABLE READ READ ONLY transaction (one snapshot); closing days takes a
// SHARE lock on the table, and the trigger of migration 3 refuses a closed day's rows afterwards.
import { StoreClosedError, type DayBatch, type DayRow, type Submission, type SubmissionStore } from '../store.ts';
import type { Client, PostgresConnection } from './connection.ts';
import { neutralError } from './errors.ts';
import { groupCommit } from './group-commit.ts';

/** Rows read per query while streaming a day (the interface's default batch): small, so that a chunk's rows die
 * young instead of being promoted (store/sqlite/submissions.ts DAY_CHUNK; docs/BENCHMARKS.md). */
const DAY_CHUNK = 4_096;
/** Rows per INSERT statement of `enqueue` (arrays bound as parameters; every statement in one transaction). */
const ENQUEUE_CHUNK = 10_000;
/** Group commit of `submissions.write`: statements in flight at once, and rows in one statement at most. */
const WRITE_FLUSHES = 2;
const WRITE_BATCH_MAX = 1_000;

const INSERT_SUBMISSION =
  'INSERT INTO submissions (hash, submitted_at, ledger_date, file_name, source) VALUES ($1, $2, $3, $4, $5)';
/** One submission inside the caller's transaction (limits.submit). */
export const insertSubmission = (c: Client, r: Submission): Promise<unknown> =>
  c.query(INSERT_SUBMISSION, submissionValues(r));

/**
 * The rows of some hashes, found by the hash's index (migration 8: hash, ledger_date, submitted_at), to be
 * completed with `= <hash>` or `= ANY(<hashes>)`. As a MATERIALIZED CTE it is planned on its own, so the
 * planner cannot combine it with the date index: today's rows are newer than the table's statistics, which
 * then count few rows for today, and a plan that reads the day's index entries (all of them: 64 ms at 300,000
 * rows, measured) looks cheap.
 */
const HASH_ROWS = 'SELECT hash, submitted_at, ledger_date FROM submissions WHERE hash';

/** Rows in one statement, in their order (ids follow it). */
const INSERT_SUBMISSIONS = `INSERT INTO submissions (hash, submitted_at, ledger_date, file_name, source)
  SELECT h, t, d, f, s FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS r (h, t, d, f, s, n) ORDER BY n`;

/** The values of INSERT_SUBMISSIONS: one array per column. */
function submissionColumns(rows: readonly Submission[]): Array<Array<string | null>> {
  const columns: Array<Array<string | null>> = [[], [], [], [], []];
  for (const r of rows) submissionValues(r).forEach((v, k) => columns[k]!.push(v));
  return columns;
}

/** A submission's column values: hash, submitted_at, ledger_date (its UTC day), file_name, source. */
function submissionValues(r: Submission): Array<string | null> {
  const time = r.submittedAt.toISOString();
  return [r.hash, time, time.slice(0, 10), r.fileName ?? null, r.source];
}

export function submissionStore(conn: PostgresConnection): SubmissionStore {
  const { pool, query, one, tx } = conn;

  // Group commit of submissions.write (group-commit.ts): one INSERT … unnest and one commit for the rows that
  // arrive together.
  const write = groupCommit<Submission>(conn, {
    flushes: WRITE_FLUSHES,
    batchMax: WRITE_BATCH_MAX,
    commit: (rows) =>
      rows.length === 1
        ? pool.query(INSERT_SUBMISSION, submissionValues(rows[0]!))
        : pool.query(INSERT_SUBMISSIONS, submissionColumns(rows)),
  });

  return {
    write,
    enqueue: (rows) =>
      tx(async (c) => {
        for (let i = 0; i < rows.length; i += ENQUEUE_CHUNK) {
          await c.query(INSERT_SUBMISSIONS, submissionColumns(rows.slice(i, i + ENQUEUE_CHUNK)));
        }
      }),
    // Each batch in statements of ENQUEUE_CHUNK rows, all in one transaction on one connection: a source that
    // throws rolls it back and its error leaves as it is.
    enqueueStream: (batches) =>
      tx(async (c) => {
        let n = 0;
        for await (const batch of batches) {
          for (let i = 0; i < batch.length; i += ENQUEUE_CHUNK) {
            await c.query(INSERT_SUBMISSIONS, submissionColumns(batch.slice(i, i + ENQUEUE_CHUNK)));
          }
          n += batch.length;
        }
        return n;
      }),
    // SHARE on submissions waits for every transaction that has inserted a row to end and holds off new
    // inserts until this one commits; the trigger of migration 3 refuses any later insert of a closed day.
    closeThrough: (date) =>
      tx(async (c) => {
        await c.query('LOCK TABLE submissions IN SHARE MODE');
        await c.query(
          'INSERT INTO ledger_close (id, through) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET through = GREATEST(ledger_close.through, EXCLUDED.through)',
          [date],
        );
      }),
    closedThrough: async () =>
      (await one<{ through: string }>('SELECT through FROM ledger_close WHERE id = 1'))?.through ?? '',
    async dates(after, before) {
      // One index seek per date (a skip scan) instead of reading every row of a million-row day.
      const dates: string[] = [];
      for (let d = after; ;) {
        const next =
          (
            await one<{ d: string | null }>(
              'SELECT MIN(ledger_date) AS d FROM submissions WHERE ledger_date > $1 AND ledger_date < $2',
              [d, before],
            )
          )?.d ?? null;
        if (next === null) return dates;
        dates.push(next);
        d = next;
      }
    },
    queueSize: async (lastPublished) =>
      (await one<{ n: number }>('SELECT COUNT(*) AS n FROM submissions WHERE ledger_date > $1', [lastPublished]))!.n,
    queued: async (hash, lastPublished) =>
      (
        await query<{ date: string; at: string }>(
          `WITH own AS MATERIALIZED (${HASH_ROWS} = $2)
           SELECT ledger_date AS date, MIN(submitted_at) AS at FROM own WHERE ledger_date > $1 GROUP BY ledger_date ORDER BY ledger_date`,
          [lastPublished, hash],
        )
      ).rows.map((r) => ({ date: r.date, submittedAt: new Date(r.at) })),
    submittedOn: async (date, hashes) => {
      const found = new Map<string, Date>();
      if (hashes.length === 0) return found;
      // Each hash's own rows by the hash's index (migration 8), never the day's other rows.
      const rows = (
        await query<{ hash: string; at: string }>(
          `WITH own AS MATERIALIZED (${HASH_ROWS} = ANY($2::text[]))
           SELECT hash, MIN(submitted_at) AS at FROM own WHERE ledger_date = $1 GROUP BY hash`,
          [date, hashes],
        )
      ).rows;
      for (const r of rows) found.set(r.hash, new Date(r.at));
      return found;
    },
    readDay(date, options = {}) {
      const batchRows = options.batchRows ?? DAY_CHUNK;
      return {
        async *[Symbol.asyncIterator](): AsyncGenerator<DayBatch> {
          if (conn.closed) throw new StoreClosedError();
          let client: Client;
          try {
            client = await pool.connect();
          } catch (err) {
            throw neutralError(err);
          }
          let broken = false;
          let open = false;
          try {
            // The snapshot: every query of this transaction sees the rows committed when its first one ran.
            await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
            open = true;
            const total = (
              await client.query<{ n: number }>('SELECT COUNT(*) AS n FROM submissions WHERE ledger_date = $1', [date])
            ).rows[0]!.n;
            if (total > 0) {
              for (let after = -1; ;) {
                const rows = (
                  await client.query<[number, string, string]>({
                    text: 'SELECT id, hash, submitted_at FROM submissions WHERE ledger_date = $1 AND id > $2 ORDER BY id LIMIT $3',
                    values: [date, after, batchRows],
                    rowMode: 'array',
                  })
                ).rows;
                if (rows.length === 0) break;
                after = rows[rows.length - 1]![0];
                yield { total, rows: rows.map(([, hash, time]): DayRow => [hash, time]) };
              }
            }
            await client.query('COMMIT');
            open = false;
          } catch (err) {
            broken = neutralError(err) !== err;
            throw neutralError(err);
          } finally {
            // Left early (break, an error of the reader): end the transaction before the connection is reused.
            if (open && !broken) await client.query('ROLLBACK').catch(() => void (broken = true));
            client.release(broken);
          }
        },
      };
    },
  };
}
