// What every group of the SQLite engine (engine.ts composes them) runs its statements through: the main
// better-sqlite3 connection (synchronous=FULL, so a resolved write is durable) with its statements prepared once,
// a transaction that takes SQLite's write lock at once, the group-commit writer of `submissions.write`
// (submission-writer.ts, its own connection, opened on the first write), and whether the store is closed.
import type Database from 'better-sqlite3';
import { openDatabase, type DB } from './db.ts';
import { StoreClosedError } from '../store.ts';
import { neutral } from './errors.ts';
import { createSubmissionWriter, type SubmissionWriter } from './submission-writer.ts';

export interface SqliteConnection {
  /** The main connection. */
  readonly db: DB;
  /** Whether close() was called: every later call rejects with StoreClosedError. */
  readonly closed: boolean;
  /** The statement of `text`, prepared on its first use and kept for the store's life. */
  sql(text: string): Database.Statement;
  /** Runs `work` in one IMMEDIATE transaction (takes the write lock at once: no upgrade deadlock between
   * processes), disk faults made engine-neutral. */
  tx<T>(work: () => T): Promise<T>;
  /** A single statement or a read (autocommit). */
  run<T>(work: () => T): Promise<T>;
  /** The group-commit writer, opened on the first call. */
  writer(): SubmissionWriter;
  /** Commits what the writer holds and closes it, then the main connection unless the caller gave it. */
  close(): Promise<void>;
}

/** The connection of a store on `file`: `db` when given (the caller keeps it and closes it), else one opened on
 * `file` (created and migrated when needed; db.ts openDatabase). */
export function openConnection(file: string, given?: DB): SqliteConnection {
  const db = given ?? openDatabase(file);
  const ownsDb = given === undefined;
  let writer: SubmissionWriter | undefined;
  let closed = false;
  const statements = new Map<string, Database.Statement>();
  return {
    db,
    get closed() {
      return closed;
    },
    sql(text) {
      let s = statements.get(text);
      if (s === undefined) {
        s = db.prepare(text);
        statements.set(text, s);
      }
      return s;
    },
    tx<T>(work: () => T): Promise<T> {
      if (closed) return Promise.reject(new StoreClosedError());
      try {
        return Promise.resolve(neutral(() => db.transaction(work).immediate()));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    run<T>(work: () => T): Promise<T> {
      if (closed) return Promise.reject(new StoreClosedError());
      try {
        return Promise.resolve(neutral(work));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    writer() {
      writer ??= createSubmissionWriter(file);
      return writer;
    },
    async close() {
      if (closed) return;
      closed = true;
      await writer?.close();
      if (ownsDb) db.close();
    },
  };
}
