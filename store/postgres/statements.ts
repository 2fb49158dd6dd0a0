// `statements` on PostgreSQL (store/store.ts StatementStore; the SQLite side: store/sqlite/statements.ts): SCITT
// Signed Statements, each stored with its submission row in one transaction (committed with synchronous_commit
// on: durable when it resolves).
import type { StatementStore } from '../store.ts';
import type { PostgresConnection } from './connection.ts';
import { insertSubmission } from './submissions.ts';

export function statementStore({ query, tx }: PostgresConnection): StatementStore {
  return {
    register: ({ entry, bytes, registeredAt }) => {
      if (bytes.length === 0) return Promise.reject(new RangeError('statements.register: the statement is empty'));
      const time = registeredAt.toISOString();
      return tx(async (c) => {
        await insertSubmission(c, { hash: entry, submittedAt: registeredAt, source: 'scitt' });
        await c.query('INSERT INTO statements (entry, registered_at, ledger_date, statement) VALUES ($1, $2, $3, $4)', [
          entry,
          time,
          time.slice(0, 10),
          Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
        ]);
      });
    },
    get: async (entry) => {
      const row = (
        await query<{ statement: Buffer }>('SELECT statement FROM statements WHERE entry = $1 ORDER BY id LIMIT 1', [
          entry,
        ])
      ).rows[0];
      return row === undefined ? undefined : new Uint8Array(row.statement);
    },
    forDay: async (date) =>
      (
        await query<{ entry: string; at: string; statement: Buffer }>(
          `SELECT DISTINCT ON (entry) entry, registered_at AS at, statement FROM statements
             WHERE ledger_date = $1 ORDER BY entry, registered_at, id`,
          [date],
        )
      ).rows.map((r) => ({ entry: r.entry, registeredAt: new Date(r.at), bytes: new Uint8Array(r.statement) })),
  };
}
