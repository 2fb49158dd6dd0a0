// Copying a SQLite database (store/sqlite/db.ts) into a new PostgreSQL database (migrations.ts): what moving an
// installation from one node to several needs (`timeseal db copy --to postgres://…`, docs in store/README.md).
// Every row of every table, with its id (so submissions keep their arrival order and history entries their
// ids), values unchanged except SQLite's 0/1 flags made BOOLEAN; identity sequences continue after the largest
// id. The SQLite side is read in one read transaction (one snapshot); the PostgreSQL side is written in one
// transaction, checked (row counts) before COMMIT: the copy is whole or nothing. The target must hold no rows.
import pg from 'pg';
import { UsageError } from '../../runtime/config.ts';
import type { DB } from '../sqlite/db.ts';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../sqlite/db.ts';
import { neutralError } from './errors.ts';
import { migrate } from './migrations.ts';

interface TableCopy {
  name: string;
  /** Columns in both engines (the SQLite expression when it differs: auth_throttle's id is its rowid). */
  columns: readonly string[];
  /** Columns stored as 0/1 in SQLite and BOOLEAN here. */
  booleans?: readonly string[];
  /** Whether `id` is an identity column whose sequence must continue after the copied ids. */
  identity: boolean;
}

/** In an order that satisfies the foreign keys (users first). */
const TABLES: readonly TableCopy[] = [
  {
    name: 'users',
    columns: [
      'id',
      'username',
      'email',
      'password',
      'email_verified',
      'verification_token',
      'verification_expires',
      'replaced_verification_token',
      'password_reset_token',
      'password_reset_expires',
      'newsletter_subscribed',
      'created_at',
    ],
    booleans: ['email_verified', 'newsletter_subscribed'],
    identity: false,
  },
  {
    name: 'subscriptions',
    columns: [
      'id',
      'user_id',
      'stripe_customer_id',
      'stripe_subscription_id',
      'stripe_price_id',
      'status',
      'current_period_start',
      'current_period_end',
      'cancel_at_period_end',
      'stripe_event_created',
    ],
    booleans: ['cancel_at_period_end'],
    identity: true,
  },
  { name: 'quota_usage', columns: ['id', 'user_id', 'ip_address', 'month', 'count', 'last_reset'], identity: true },
  { name: 'ip_rate_limit', columns: ['id', 'ip_address', 'date', 'count'], identity: true },
  {
    name: 'timestamps',
    columns: ['id', 'user_id', 'hash', 'submitted_at', 'ledger_date', 'file_name'],
    identity: true,
  },
  { name: 'professional_waitlist', columns: ['id', 'name', 'email', 'message', 'created_at'], identity: true },
  {
    name: 'contact_messages',
    columns: ['id', 'name', 'email', 'subject', 'message', 'created_at', 'delivery'],
    identity: true,
  },
  { name: 'sessions', columns: ['id_hash', 'user_id', 'created_at', 'expires_at'], identity: false },
  { name: 'stripe_events', columns: ['id', 'type', 'received_at'], identity: false },
  { name: 'auth_throttle', columns: ['id', 'scope', 'key', 'at_ms'], identity: true },
  {
    name: 'submissions',
    columns: ['id', 'hash', 'submitted_at', 'ledger_date', 'file_name', 'source'],
    identity: true,
  },
  { name: 'receipts', columns: ['id', 'hash', 'submitted_at', 'der'], identity: true },
  { name: 'statements', columns: ['id', 'entry', 'registered_at', 'ledger_date', 'statement'], identity: true },
  // After submissions: its trigger refuses rows of the days it closes.
  { name: 'ledger_close', columns: ['id', 'through'], identity: false },
];

/** Rows read from SQLite and inserted per statement. */
const CHUNK = 2_000;

export interface CopyResult {
  /** Rows copied per table. */
  rows: Record<string, number>;
}

/**
 * Copies every row of the open SQLite database `db` into the PostgreSQL database at `url` (migrated first),
 * which must hold no rows. `progress` hears each table as it is done.
 */
export async function copySqliteToPostgres(
  db: DB,
  url: string,
  progress: (message: string) => void = () => undefined,
): Promise<CopyResult> {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version !== SQLITE_MIGRATIONS.length)
    throw new UsageError(
      `the SQLite database is at schema version ${version}, this program at ${SQLITE_MIGRATIONS.length}: open it with this version of timeseal first`,
    );
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pool.on('error', () => undefined);
  try {
    await migrate(pool);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      for (const t of TABLES) {
        if ((await client.query(`SELECT 1 FROM ${t.name} LIMIT 1`)).rowCount !== 0) {
          throw new UsageError(
            `the PostgreSQL database already holds rows (table ${t.name}): copy only into a new, empty database`,
          );
        }
      }
      const rows: Record<string, number> = {};
      db.exec('BEGIN');
      try {
        for (const t of TABLES) {
          rows[t.name] = await copyTable(db, client, t);
          progress(`${t.name}: ${rows[t.name]} rows`);
        }
      } finally {
        db.exec('COMMIT');
      }
      for (const t of TABLES) {
        const n = (await client.query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${t.name}`)).rows[0]!.n;
        if (Number(n) !== rows[t.name])
          throw new Error(`copy of ${t.name}: ${n} rows in PostgreSQL != ${rows[t.name]} read from SQLite`);
        if (t.identity)
          await client.query(
            `SELECT setval(pg_get_serial_sequence('${t.name}', 'id'), (SELECT COALESCE(MAX(id), 0) + 1 FROM ${t.name}), false)`,
          );
      }
      await client.query('COMMIT');
      return { rows };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  } catch (err) {
    throw neutralError(err);
  } finally {
    await pool.end().catch(() => undefined);
  }
}

async function copyTable(db: DB, client: pg.PoolClient, t: TableCopy): Promise<number> {
  const select = t.columns.map((c) => (c === 'id' && t.name === 'auth_throttle' ? 'rowid AS id' : c)).join(', ');
  const read = db
    .prepare(`SELECT rowid AS _r, ${select} FROM ${t.name} WHERE rowid > ? ORDER BY rowid LIMIT ?`)
    .raw(true);
  const flags = new Set((t.booleans ?? []).map((c) => t.columns.indexOf(c)));
  let copied = 0;
  for (let after = -Infinity; ;) {
    const chunk = read.all(after === -Infinity ? Number.MIN_SAFE_INTEGER : after, CHUNK) as unknown[][];
    if (chunk.length === 0) return copied;
    after = chunk[chunk.length - 1]![0] as number;
    const values: unknown[] = [];
    const tuples: string[] = [];
    for (const row of chunk) {
      const cells = row.slice(1).map((v, k) => (flags.has(k) ? v === 1 : v));
      tuples.push(`(${cells.map((_, k) => `$${values.length + k + 1}`).join(', ')})`);
      values.push(...cells);
    }
    await client.query(`INSERT INTO ${t.name} (${t.columns.join(', ')}) VALUES ${tuples.join(', ')}`, values);
    copied += chunk.length;
  }
}
