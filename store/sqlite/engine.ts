// The SQLite engine of the Store (store/store.ts): better-sqlite3 on the file of TIMESEAL_DB, schema and
// migrations in store/sqlite/db.ts. Every method does its work synchronously inside a better-sqlite3 transaction
// (no await between a check and its write), which makes it atomic against this process and, through SQLite's
// write lock (BEGIN IMMEDIATE), against every other process on the same file; the async signature is the
// interface's. Submissions written one by one (`submissions.write`) and SCITT registrations
// (`statements.register`) go through the group-commit writer (submission-writer.ts, its own connection);
// everything else uses the main connection (synchronous=FULL,
// so a resolved write is durable). Each group of the interface is its own file (submissions.ts, limits.ts, …,
// beside the PostgreSQL engine's file of the same name), on connection.ts's means; this file composes them.
import type { Store } from '../store.ts';
import { sessionStore, userStore } from './accounts.ts';
import { openConnection } from './connection.ts';
import type { DB } from './db.ts';
import { formStore } from './forms.ts';
import { historyStore } from './history.ts';
import { leaseStore } from './lease.ts';
import { limitStore } from './limits.ts';
import { receiptStore } from './receipts.ts';
import { statementStore } from './statements.ts';
import { submissionStore } from './submissions.ts';
import { stripeEventStore, subscriptionStore } from './subscriptions.ts';
import { throttleStore } from './throttle.ts';

export interface SqliteStoreOptions {
  /** Use this open connection as the main one (the caller keeps it and closes it); default: open `file`. */
  db?: DB;
}

/** Opens the SQLite store on `file` (created and migrated when needed; store/sqlite/db.ts openDatabase). */
export function openSqliteStore(file: string, options: SqliteStoreOptions = {}): Store {
  const conn = openConnection(file, options.db);
  return {
    engine: 'sqlite',
    submissions: submissionStore(conn),
    limits: limitStore(conn),
    receipts: receiptStore(conn),
    statements: statementStore(conn),
    throttle: throttleStore(conn),
    users: userStore(conn),
    sessions: sessionStore(conn),
    subscriptions: subscriptionStore(conn),
    stripeEvents: stripeEventStore(conn),
    forms: formStore(conn),
    history: historyStore(conn),
    databaseTime: () => Promise.resolve(undefined),
    lease: leaseStore(conn),
    close: () => conn.close(),
  };
}
