// Group commit for submissions: the SQLite engine's `submissions.write`, `submissions.enqueue` and
// `statements.register` (store/store.ts; it was once in ingest/). Contract of `write(row)`: resolves only after
// the row is committed to SQLite and the commit is on disk (it survives kill -9 and power loss); rejects if the
// commit failed. `writeAll(rows)` is the same for several rows, all or none: they are one member of the group,
// committed together or refused together, never some of them. `register` is the same for a SCITT statement and
// its submission row, both in the same transaction (both or neither).
//
// How: the members that arrive in one turn of the event loop (single rows, whole batches, statements) are
// committed together in one transaction, at the end of that turn (setImmediate), on the writer's own connection in WAL mode with `synchronous=NORMAL`; then
// the -wal file is synced with fdatasync, and only then are the rows' answers released. That is what
// `synchronous=FULL` does (sync the WAL after each commit), but with fdatasync instead of fsync: the WAL's
// pages, not its modification time, which on this file system saves a second write per commit. NORMAL keeps
// every other guarantee of FULL in WAL mode (the WAL is synced before a checkpoint copies it, and the database
// after).
//
// The sync runs on the event loop's thread, on purpose. Every alternative measured here was slower for the
// beta API at 32 connections (bench/NOTES.md, "Beta-API throughput"): fdatasync on libuv's thread pool, with
// one or several syncs in flight; a writer thread with FULL; a writer thread with several fdatasyncs in
// flight. Each hands work to another thread and waits for it to wake up and hand back; on a 2-core VM those
// wake-ups cost about as much as the sync itself (~0.15 ms), and the answers went out a turn later. Blocking
// the loop for one sync per turn, whatever the number of rows, is what SQLite's FULL mode does on every
// better-sqlite3 commit.
import fs from 'node:fs';
import path from 'node:path';
import { openDatabase } from './db.ts';
import { submissionInserter } from './queue.ts';
import { StoreClosedError, type StatementRegistration, type Submission } from '../store.ts';
import { dayClosed, neutralError, sqliteFault } from './errors.ts';

export interface SubmissionWriter {
  write(row: Submission): Promise<void>;
  /** Every row in the group's transaction, all or none (DayClosedError when one row's day is closed). */
  writeAll(rows: readonly Submission[]): Promise<void>;
  /** The statement and its submission row (hash = entry, source 'scitt'), in the group's transaction. */
  register(statement: StatementRegistration): Promise<void>;
  /** Commits what is pending and closes the writer's connection; later writes are rejected. */
  close(): Promise<void>;
}

interface Pending {
  /** One row (write, register) or a batch's rows (writeAll), stored or refused together. */
  rows: readonly Submission[];
  /** A SCITT statement stored with its one row (statements.register). */
  statement?: Uint8Array;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export function createSubmissionWriter(dbFile: string): SubmissionWriter {
  const db = openDatabase(dbFile);
  db.pragma('synchronous = NORMAL');
  const insertRows = submissionInserter(db);
  const insertStatement = db.prepare(
    'INSERT INTO statements (entry, registered_at, ledger_date, statement) VALUES (?, ?, ?, ?)',
  );
  /** One transaction: every row, in the members' order, then the statements that come with some of them. */
  const insert = db.transaction((batch: readonly Pending[]) => {
    insertRows(batch.length === 1 ? batch[0]!.rows : batch.flatMap((p) => p.rows));
    for (const { rows, statement } of batch) {
      if (statement === undefined) continue;
      const row = rows[0]!;
      const time = row.submittedAt.toISOString();
      insertStatement.run(
        row.hash,
        time,
        time.slice(0, 10),
        Buffer.from(statement.buffer, statement.byteOffset, statement.byteLength),
      );
    }
  });
  const walFile = `${path.resolve(dbFile)}-wal`;
  // SQLite deletes the -wal file only when the last connection to the database closes; this connection stays
  // open as long as the descriptor, so the descriptor always names the live WAL.
  let walFd: number | undefined;
  let waiting: Pending[] = [];
  let scheduled = false;
  let closed = false;

  /** The -wal file's descriptor, opened once; its directory entry is made durable the first time. */
  const wal = (): number => {
    if (walFd === undefined) {
      const fd = fs.openSync(walFile, 'r');
      try {
        const dir = fs.openSync(path.dirname(walFile), 'r');
        try {
          fs.fsyncSync(dir);
        } finally {
          fs.closeSync(dir);
        }
      } catch (err) {
        fs.closeSync(fd);
        throw err;
      }
      walFd = fd;
    }
    return walFd;
  };

  /** Commits the members of this turn in one transaction, syncs the WAL, then answers them. */
  const flush = (): void => {
    scheduled = false;
    const batch = waiting;
    waiting = [];
    if (batch.length === 0) return;
    let committed: Pending[] = [];
    try {
      insert(batch);
      committed = batch;
    } catch (err) {
      // A full or failing disk fails every member alike (and each retry would cost another failing write): all
      // are rejected with it, nothing of the group committed (the transaction was rolled back).
      if (sqliteFault(err) !== undefined) {
        const neutral = neutralError(err);
        for (const p of batch) p.reject(neutral);
        return;
      }
      // One bad member must not fail the others that happened to share its transaction: each on its own (a
      // batch's rows still together, all or none).
      for (const p of batch) {
        try {
          insert([p]);
          committed.push(p);
        } catch (err) {
          p.reject(dayClosed(err, p.rows) ?? neutralError(err));
        }
      }
    }
    if (committed.length === 0) return;
    try {
      fs.fdatasyncSync(wal());
    } catch (err) {
      // The rows are committed but not known to be on disk: rejected, marked so that the answer does not say
      // "nothing was recorded" (ingest/errors.ts storageMessage).
      const neutral = neutralError(err, true);
      if (neutral === err && typeof err === 'object' && err !== null) Object.assign(err, { committed: true });
      for (const p of committed) p.reject(neutral);
      return;
    }
    for (const p of committed) p.resolve();
  };

  const enqueue = (rows: readonly Submission[], statement?: Uint8Array): Promise<void> => {
    if (closed) return Promise.reject(new StoreClosedError());
    return new Promise((resolve, reject) => {
      waiting.push({ rows, ...(statement === undefined ? {} : { statement }), resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
  };

  return {
    write: (row) => enqueue([row]),
    writeAll: (rows) =>
      rows.length === 0 ? (closed ? Promise.reject(new StoreClosedError()) : Promise.resolve()) : enqueue(rows),
    register: ({ entry, bytes, registeredAt }) =>
      enqueue([{ hash: entry, submittedAt: registeredAt, source: 'scitt' }], bytes),
    async close() {
      if (closed) return;
      closed = true;
      if (waiting.length > 0) flush();
      if (walFd !== undefined) fs.closeSync(walFd);
      db.close();
    },
  };
}
