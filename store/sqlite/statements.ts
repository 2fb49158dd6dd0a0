// `statements` on SQLite (store/store.ts StatementStore; the PostgreSQL side: store/postgres/statements.ts): SCITT
// Signed Statements, each stored with its submission row in one transaction of the group-commit writer
// (submission-writer.ts: the registrations and submissions of one event-loop turn share a commit and its
// fdatasync; durable when it resolves).
import { StoreClosedError, type StatementStore } from '../store.ts';
import type { SqliteConnection } from './connection.ts';

export function statementStore(conn: SqliteConnection): StatementStore {
  const { sql, run } = conn;
  return {
    register: (statement) => {
      if (statement.bytes.length === 0)
        return Promise.reject(new RangeError('statements.register: the statement is empty'));
      if (conn.closed) return Promise.reject(new StoreClosedError());
      return conn.writer().register(statement);
    },
    get: (entry) =>
      run(() => {
        const row = sql('SELECT statement FROM statements WHERE entry = ? ORDER BY id LIMIT 1').raw(true).get(entry) as
          [Buffer] | undefined;
        return row === undefined ? undefined : new Uint8Array(row[0]);
      }),
    forDay: (date) =>
      run(() =>
        (
          sql(
            'SELECT entry, MIN(registered_at) AS at, statement FROM statements WHERE ledger_date = ? GROUP BY entry ORDER BY entry',
          )
            .raw(true)
            .all(date) as Array<[string, string, Buffer]>
        ).map(([entry, at, bytes]) => ({ entry, registeredAt: new Date(at), bytes: new Uint8Array(bytes) })),
      ),
  };
}
