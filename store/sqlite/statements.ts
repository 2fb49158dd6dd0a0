// `statements` on SQLite (store/store.ts StatementStore; the PostgreSQL side: store/postgres/statements.ts): SCITT
// Signed Statements, each stored with its submission row in one IMMEDIATE transaction on the main connection
// (synchronous=FULL: durable when it resolves).
import type { StatementStore } from '../store.ts';
import type { SqliteConnection } from './connection.ts';
import { dayClosed } from './errors.ts';
import { submissionInserter } from './queue.ts';

export function statementStore(conn: SqliteConnection): StatementStore {
  const { sql, tx, run } = conn;
  const insertSubmission = submissionInserter(conn.db);
  return {
    register: ({ entry, bytes, registeredAt }) => {
      if (bytes.length === 0) return Promise.reject(new RangeError('statements.register: the statement is empty'));
      const time = registeredAt.toISOString();
      const row = { hash: entry, submittedAt: registeredAt, source: 'scitt' as const };
      return tx(() => {
        try {
          insertSubmission([row]);
        } catch (err) {
          throw dayClosed(err, [row]) ?? err;
        }
        sql('INSERT INTO statements (entry, registered_at, ledger_date, statement) VALUES (?, ?, ?, ?)').run(
          entry,
          time,
          time.slice(0, 10),
          Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
        );
      });
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
