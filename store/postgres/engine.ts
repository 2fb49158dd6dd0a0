// The PostgreSQL engine of the Store (store/store.ts; store/README.md: several ingest nodes, one database), on a
// `pg` Pool. Schema and migrations: migrations.ts. Every guarantee holds across processes and nodes because it
// is the server's, never this process's memory:
//
// - durable: synchronous_commit is on for every connection (set when the server's default is off) and the
//   store refuses a server with fsync off; a method resolves only after its COMMIT returned.
// - exact counts: one UPSERT ... DO UPDATE ... WHERE count < max RETURNING (the conflicting row is locked and
//   the condition re-checked on its newest version), in the same transaction as the rows it admits.
// - checks then writes (throttle, Stripe subscription rules): pg_advisory_xact_lock on the keys involved,
//   taken in a fixed order, held until the transaction ends.
// - single use: UPDATE ... WHERE token = $1 RETURNING (a concurrent one waits for the row, then finds the token
//   gone); Stripe idempotency: INSERT ... ON CONFLICT DO NOTHING RETURNING in the transaction of its effect.
// - a day is streamed by keyset pagination on id inside one REPEATABLE READ READ ONLY transaction: one snapshot.
//
// Each group of the interface is its own file (submissions.ts, limits.ts, …, beside the SQLite engine's file of
// the same name), on connection.ts's means; this file opens the pool, checks durability and composes them.
import pg from 'pg';
import type { Store } from '../store.ts';
import { sessionStore, userStore } from './accounts.ts';
import { connection } from './connection.ts';
import { neutralError } from './errors.ts';
import { formStore } from './forms.ts';
import { historyStore } from './history.ts';
import { leaseStore } from './lease.ts';
import { limitStore } from './limits.ts';
import { migrate } from './migrations.ts';
import { receiptStore } from './receipts.ts';
import { statementStore } from './statements.ts';
import { submissionStore } from './submissions.ts';
import { stripeEventStore, subscriptionStore } from './subscriptions.ts';
import { throttleStore } from './throttle.ts';

export interface PostgresStoreOptions {
  /** Connections in this process's pool (default 10). */
  poolSize?: number;
}

/** PostgreSQL's type oid of BIGINT (int8): ids and counts, read as numbers (all far below 2^53). */
const INT8_OID = 20;

const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8_OID && format !== 'binary'
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** Opens the PostgreSQL store at `url` (postgres://…): a pool, the pending migrations applied. */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<Store> {
  // Durability is checked before anything is accepted: fsync must be on at the server, and synchronous_commit
  // (a connection's setting) is forced on for this pool when the server's default for us is off.
  const settings = await serverSettings(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    types,
    connectionTimeoutMillis: 10_000,
    ...(settings.synchronousCommit === 'off' ? { options: '-c synchronous_commit=on' } : {}),
  });
  // An idle connection's error (the server restarted) must not crash the process; the next query fails and is
  // answered as StorageUnavailableError.
  pool.on('error', () => undefined);
  try {
    // What the pool's connections really run with (a URL's own `options` would override ours).
    const sc = (await pool.query<{ sc: string }>(`SELECT current_setting('synchronous_commit') AS sc`)).rows[0]!.sc;
    if (sc === 'off')
      throw new Error(
        "the PostgreSQL connections run with synchronous_commit=off (set by the URL's options): a stored submission could be lost in a crash; remove that setting",
      );
    await migrate(pool);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw neutralError(err);
  }
  return postgresStore(pool);
}

/** The server's fsync and our default synchronous_commit; refuses a server that does not flush commits. */
async function serverSettings(url: string): Promise<{ synchronousCommit: string }> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    const row = (
      await client.query<{ fsync: string; sc: string }>(
        `SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sc`,
      )
    ).rows[0]!;
    if (row.fsync !== 'on')
      throw new Error(
        `the PostgreSQL server runs with fsync=${row.fsync}: a stored submission would not survive a crash; turn fsync on`,
      );
    return { synchronousCommit: row.sc };
  } catch (err) {
    throw neutralError(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function postgresStore(pool: pg.Pool): Store {
  const conn = connection(pool);
  return {
    engine: 'postgres',
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
    databaseTime: async () =>
      (await conn.one<{ ms: number }>('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms'))!.ms,
    lease: leaseStore(conn),
    close: () => conn.close(),
  };
}
