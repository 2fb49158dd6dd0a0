// `statements` on PostgreSQL (store/store.ts StatementStore; the SQLite side: store/sqlite/statements.ts): SCITT
// Signed Statements, each stored with its submission row by one statement (both or neither), the registrations
// that arrive together grouped into one statement and one commit (group-commit.ts; synchronous_commit on:
// durable when it resolves).
import type { StatementRegistration, StatementStore } from '../store.ts';
import type { PostgresConnection } from './connection.ts';
import { groupCommit } from './group-commit.ts';

/** Registrations in flight at once, and in one statement at most (as submissions.write). */
const REGISTER_FLUSHES = 2;
const REGISTER_BATCH_MAX = 1_000;

/** The statements and their submission rows in one statement: a data-modifying CTE runs once, in the same
 * snapshot and transaction; the closed-day trigger of migration 3 on a row fails the whole statement. */
const INSERT_REGISTRATIONS = `WITH rows AS (
    INSERT INTO submissions (hash, submitted_at, ledger_date, file_name, source)
    SELECT h, t, d, NULL, 'scitt' FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS r (h, t, d, n) ORDER BY n
  )
  INSERT INTO statements (entry, registered_at, ledger_date, statement)
  SELECT h, t, d, b FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[]) WITH ORDINALITY AS r (h, t, d, b, n) ORDER BY n`;

export function statementStore(conn: PostgresConnection): StatementStore {
  const { query, pool } = conn;
  const register = groupCommit<StatementRegistration>(conn, {
    flushes: REGISTER_FLUSHES,
    batchMax: REGISTER_BATCH_MAX,
    commit: (items) => {
      const times = items.map((s) => s.registeredAt.toISOString());
      return pool.query(INSERT_REGISTRATIONS, [
        items.map((s) => s.entry),
        times,
        times.map((t) => t.slice(0, 10)),
        items.map((s) => Buffer.from(s.bytes.buffer, s.bytes.byteOffset, s.bytes.byteLength)),
      ]);
    },
  });
  return {
    register: (statement) =>
      statement.bytes.length === 0
        ? Promise.reject(new RangeError('statements.register: the statement is empty'))
        : register(statement),
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
