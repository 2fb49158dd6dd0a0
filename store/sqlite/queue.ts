// The submission queue in SQLite: every acknowledged submission is a row; a day's ledger is built from the
// rows of that UTC day. Shared by the ingest service (which enqueues) and the pipeline (which publishes).
import type Database from 'better-sqlite3';
import type { DB } from './db.ts';

import { DayClosedError, PartlyStoredError, type Submission } from '../store.ts';
import { columnsOf, decodeRow, type DayColumns } from '../day-columns.ts';
import { neutral } from './errors.ts';

export type { Submission, SubmissionSource } from '../store.ts';
export type { DayColumns } from '../day-columns.ts';

/** Rows per INSERT statement at most; a batch is split into statements of 32, 16, 8, 4, 2 and 1 rows. */
const ROWS_PER_STATEMENT = 32;

/**
 * A prepared submission insert: each call commits its rows in one transaction, every row or none. Rows go in
 * multi-row INSERT statements (one statement execution per up to 32 rows: the ingest server's hot path).
 */
export function submissionInserter(db: DB, table = 'submissions'): (rows: readonly Submission[]) => void {
  const statements = new Map<number, Database.Statement>();
  const statement = (n: number): Database.Statement => {
    let s = statements.get(n);
    if (s === undefined) {
      s = db.prepare(
        `INSERT INTO ${table} (hash, submitted_at, ledger_date, file_name, source) VALUES ${Array(n).fill('(?, ?, ?, ?, ?)').join(', ')}`,
      );
      statements.set(n, s);
    }
    return s;
  };
  // The text of the last time seen: a batch of one instant (an import) makes it once, not once a row.
  let lastAt: Date | undefined;
  let lastTime = '';
  return db.transaction((rows: readonly Submission[]) => {
    for (let i = 0; i < rows.length;) {
      let n = ROWS_PER_STATEMENT;
      while (n > rows.length - i) n >>= 1;
      const values: Array<string | null> = [];
      for (let k = i; k < i + n; k++) {
        const r = rows[k]!;
        if (r.submittedAt !== lastAt) {
          lastAt = r.submittedAt;
          lastTime = lastAt.toISOString();
        }
        const time = lastTime;
        // utcDate(r.submittedAt), from the text already made.
        values.push(r.hash, time, time.slice(0, 10), r.fileName ?? null, r.source);
      }
      statement(n).run(values);
      i += n;
    }
  });
}

/** Inserts all rows in one transaction: either every row is committed or none is. */
export function enqueue(db: DB, rows: readonly Submission[]): void {
  submissionInserter(db)(rows);
}

/** The page cache of stagedEnqueue's stage and copy, in KiB (each). */
const STAGE_CACHE_KIB = 2048;

/**
 * How stagedEnqueue cuts its copy into slices (tests make them tiny). A slice is one IMMEDIATE transaction of
 * statements of `stepRows` rows, committed once `sliceMs` have passed since it began (or the stage is done);
 * after each commit the WAL is checkpointed (PASSIVE: it waits for no one and blocks no writer) and the write
 * lock stays free for `gapMs` at least, counting the checkpoint: a writer waiting on its busy timeout (5 s on
 * every connection of this engine, db.ts) tries again at least every 100 ms, so it gets the lock in that gap.
 */
export const COPY_SLICES = { sliceMs: 500, stepRows: 8_192, gapMs: 100 };

/** Staging tables of `stagedEnqueue` made on this process's connections (each one's name is new). */
let staged = 0;

/**
 * All rows of `batches`, with memory bounded by a batch: each batch goes into a TEMP table (temp_store is a
 * file in this build: SQLite's page cache holds a few MB of it, the rest is on disk; a temporary table takes no
 * lock on the database, so other writers go on meanwhile); once the source has ended, the stage is copied in
 * its order into `submissions` in slices (COPY_SLICES), no row through JavaScript. `copy` runs one slice's
 * statements in the caller's transaction and error mapping, given the earliest UTC day of the rows (for
 * DayClosedError). A source that throws, or a first slice that fails, leaves nothing but the dropped stage; a
 * later slice that fails leaves the slices before it committed, and PartlyStoredError says how many rows those
 * hold. Returns the number of rows.
 */
export async function stagedEnqueue(
  db: DB,
  batches: AsyncIterable<readonly Submission[]>,
  copy: (run: () => number, earliest: string) => Promise<number>,
): Promise<number> {
  const stage = `temp.enqueue_stage_${++staged}`;
  db.exec(
    `CREATE TABLE ${stage} (hash TEXT NOT NULL, submitted_at TEXT NOT NULL, ledger_date TEXT NOT NULL, file_name TEXT, source TEXT NOT NULL)`,
  );
  // The stage is written once and read once, and the copy appends at the end of `submissions` and of its date
  // index: SQLite's page cache (16 MB a database in this build) would only fill with pages written already
  // (32 MB of a large import's peak RSS), so the temporary database (which holds only stages) and the copy get
  // STAGE_CACHE_KIB each.
  db.pragma(`temp.cache_size = -${STAGE_CACHE_KIB}`);
  try {
    const insert = submissionInserter(db, stage);
    let earliest = '';
    let total = 0;
    for await (const batch of batches) {
      insert(batch);
      total += batch.length;
      let at: Date | undefined;
      for (const r of batch) {
        if (r.submittedAt === at) continue;
        at = r.submittedAt;
        const d = at.toISOString().slice(0, 10);
        if (earliest === '' || d < earliest) earliest = d;
      }
    }
    // The stage's rowids are 1…total in the order of the rows (a table only inserted into).
    const copyStep = db.prepare(
      `INSERT INTO main.submissions (hash, submitted_at, ledger_date, file_name, source) SELECT hash, submitted_at, ledger_date, file_name, source FROM ${stage} WHERE rowid > ? AND rowid <= ? ORDER BY rowid`,
    );
    const closedThrough = db.prepare('SELECT 1 FROM ledger_close WHERE id = 1 AND through >= ?');
    // The checkpoints are this copy's own, after each commit and outside the write lock.
    const autocheckpoint = db.pragma('wal_autocheckpoint', { simple: true }) as number;
    db.pragma('wal_autocheckpoint = 0');
    let stored = 0;
    let committed = 0;
    const checkpoint = (): void => void neutral(() => db.pragma('main.wal_checkpoint(PASSIVE)'));
    try {
      while (stored < total) {
        const from = stored;
        const slice = (): number => {
          // For these synchronous statements: no other statement on the connection runs with the small cache.
          const cache = db.pragma('main.cache_size', { simple: true }) as number;
          db.pragma(`main.cache_size = -${STAGE_CACHE_KIB}`);
          try {
            // In the first slice's transaction: the earliest day closed stores nothing (whichever slice holds
            // its rows, which the trigger of db.ts migration 8 would refuse).
            if (from === 0 && closedThrough.get(earliest) !== undefined) throw new DayClosedError(earliest);
            const began = performance.now();
            let done = from;
            do {
              const to = Math.min(total, done + COPY_SLICES.stepRows);
              copyStep.run(done, to);
              done = to;
            } while (done < total && performance.now() - began < COPY_SLICES.sliceMs);
            return done - from;
          } finally {
            db.pragma(`main.cache_size = ${cache}`);
          }
        };
        try {
          if (stored > 0) {
            const rest = COPY_SLICES.gapMs - (performance.now() - committed);
            if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
            // What a writer committed during the gap, checkpointed too (a few pages), so that the next slice
            // starts the WAL over from its beginning instead of appending to it.
            checkpoint();
          }
          stored += await copy(slice, earliest);
          committed = performance.now();
          checkpoint();
        } catch (err) {
          throw stored === 0 ? err : new PartlyStoredError(stored, total, err);
        }
      }
    } finally {
      db.pragma(`wal_autocheckpoint = ${autocheckpoint}`);
    }
    return stored;
  } finally {
    db.exec(`DROP TABLE IF EXISTS ${stage}`);
  }
}

/** Rows read per query while collecting a day: bounds the memory held in row arrays and strings, small enough
 * that they die young (store/sqlite/submissions.ts DAY_CHUNK). */
const DAY_CHUNK = 4_096;

/**
 * The day's distinct hashes, sorted, each with its earliest submission time, in columns: no object is kept
 * per hash. Rows are read in arrival order in chunks (the index holds only the date, see store/sort-keys.ts),
 * decoded to bytes, sorted in memory, and duplicates folded into their earliest time.
 */
export function dayColumns(db: DB, date: string): DayColumns {
  // One read transaction: every chunk sees the same snapshot, even while a server appends to the day.
  return db.transaction(() => readDay(db, date))();
}

function readDay(db: DB, date: string): DayColumns {
  const total = (db.prepare('SELECT COUNT(*) AS n FROM submissions WHERE ledger_date = ?').get(date) as { n: number })
    .n;
  const chunk = db
    .prepare('SELECT id, hash, submitted_at FROM submissions WHERE ledger_date = ? AND id > ? ORDER BY id LIMIT ?')
    .raw(true);
  const all = Buffer.alloc(32 * total);
  const allMs = new Float64Array(total);
  let n = 0;
  for (let after = -1; ;) {
    const rows = chunk.all(date, after, DAY_CHUNK) as Array<[number, string, string]>;
    if (rows.length === 0) break;
    if (n + rows.length > total) throw new Error(`submissions of ${date} changed while the day was read`);
    for (const [, hash, time] of rows) decodeRow(all, allMs, n++, hash, time);
    after = rows[rows.length - 1]![0];
  }
  if (n !== total) throw new Error(`submissions of ${date} changed while the day was read`);

  return columnsOf(all, allMs, n);
}

/** Dates with submissions after `after` (exclusive, '' for all) and before `before` (exclusive), in order. */
export function datesWithSubmissions(db: DB, after: string, before: string): string[] {
  // One index seek per date (a skip scan) instead of reading every row of a million-row day.
  const next = db.prepare('SELECT MIN(ledger_date) AS d FROM submissions WHERE ledger_date > ? AND ledger_date < ?');
  const dates: string[] = [];
  for (
    let d = (next.get(after, before) as { d: string | null }).d;
    d !== null;
    d = (next.get(d, before) as { d: string | null }).d
  ) {
    dates.push(d);
  }
  return dates;
}

/** Submissions not yet in a published ledger (dates after the last published day). */
export function queueSize(db: DB, lastPublished: string): number {
  return (db.prepare('SELECT COUNT(*) AS n FROM submissions WHERE ledger_date > ?').get(lastPublished) as { n: number })
    .n;
}
