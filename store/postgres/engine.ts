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
import pg from 'pg';
import {
  dayAfter,
  isPayingStatus,
  RECEIPTS_PER_DAY,
  type HistoryEntry,
  type LimitOutcome,
  type Store,
  type StripeChange,
  type SubscriptionFields,
  windowAmount,
} from '../store.ts';
import { sessionStore, userStore } from './accounts.ts';
import { connection, type Client } from './connection.ts';
import { neutralError } from './errors.ts';
import { leaseStore } from './lease.ts';
import { migrate } from './migrations.ts';
import { insertSubmission, submissionStore } from './submissions.ts';
import { throttleStore } from './throttle.ts';

export interface PostgresStoreOptions {
  /** Connections in this process's pool (default 10). */
  poolSize?: number;
}

/** PostgreSQL's type oid of BIGINT (int8): ids and counts, read as numbers (all far below 2^53). */
const INT8_OID = 20;


const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8_OID && format !== 'binary' ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
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
    if (sc === 'off') throw new Error('the PostgreSQL connections run with synchronous_commit=off (set by the URL\'s options): a stored submission could be lost in a crash; remove that setting');
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
    const row = (await client.query<{ fsync: string; sc: string }>(`SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sc`)).rows[0]!;
    if (row.fsync !== 'on') throw new Error(`the PostgreSQL server runs with fsync=${row.fsync}: a stored submission would not survive a crash; turn fsync on`);
    return { synchronousCommit: row.sc };
  } catch (err) {
    throw neutralError(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function postgresStore(pool: pg.Pool): Store {
  const conn = connection(pool);
  const { query, one, tx, lock } = conn;

  // --- limits: counts `amount` for (key, date) unless the count would pass `max`; the count after, or undefined.
  const countUpTo = async (c: Client, key: string, date: string, max: number, amount = 1): Promise<number | undefined> => {
    if (amount > max) return undefined;
    return (
      await c.query<{ count: number }>(
        `INSERT INTO ip_rate_limit (ip_address, date, count) VALUES ($1, $2, $3)
         ON CONFLICT (ip_address, date) DO UPDATE SET count = ip_rate_limit.count + $3 WHERE ip_rate_limit.count <= $4 - $3
         RETURNING count`,
        [key, date, amount, max],
      )
    ).rows[0]?.count;
  };
  /** The site's receipt of a submission, inside the caller's transaction (after its row). */
  const insertReceipt = async (c: Client, hash: string, time: string, der: Uint8Array | undefined): Promise<void> => {
    if (der === undefined) return;
    await c.query('INSERT INTO receipts (hash, submitted_at, der) VALUES ($1, $2, $3)', [hash, time, Buffer.from(der.buffer, der.byteOffset, der.byteLength)]);
  };
  const subscriptionStatus = async (c: Client | pg.Pool, userId: string): Promise<string | undefined> =>
    (await c.query<{ status: string }>('SELECT status FROM subscriptions WHERE user_id = $1', [userId])).rows[0]?.status;

  // --- stripe
  const userExists = async (c: Client, id: string | null): Promise<boolean> => id !== null && (await c.query('SELECT 1 FROM users WHERE id = $1', [id])).rowCount === 1;
  const userForCustomer = async (c: Client, customerId: string | null): Promise<string | null> => {
    if (customerId === null) return null;
    return (await c.query<{ user_id: string }>('SELECT user_id FROM subscriptions WHERE stripe_customer_id = $1 ORDER BY id LIMIT 1', [customerId])).rows[0]?.user_id ?? null;
  };
  /** Writes a subscription's fields to the user's row unless it already holds newer news (store.ts apply). The
   * user's subscription lock makes the read and the write one step against every other event of the user. */
  const writeSubscription = async (c: Client, userId: string, f: SubscriptionFields, created: number, fresh: boolean): Promise<string | undefined> => {
    await lock(c, [`subscription\0${userId}`]);
    const current = (
      await c.query<{ sid: string | null; status: string; created: number | null }>(
        'SELECT stripe_subscription_id AS sid, status, stripe_event_created AS created FROM subscriptions WHERE user_id = $1',
        [userId],
      )
    ).rows[0];
    // A late event about an older subscription must not overwrite the one the user pays for now.
    if (current?.sid && current.sid !== f.subscriptionId && isPayingStatus(current.status) && !isPayingStatus(f.status)) {
      return `ignored: user ${userId} pays through ${current.sid}`;
    }
    if (current?.sid === f.subscriptionId) {
      if (current.status === 'canceled' && f.status !== 'canceled') return `ignored: ${f.subscriptionId} is canceled`;
      if (!fresh && current.created !== null && created < current.created) return `ignored: older than the last event applied to ${f.subscriptionId}`;
    }
    await c.query(
      `INSERT INTO subscriptions (user_id, stripe_customer_id, stripe_subscription_id, stripe_price_id, status, current_period_start, current_period_end, cancel_at_period_end, stripe_event_created)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (user_id) DO UPDATE SET stripe_customer_id = COALESCE(excluded.stripe_customer_id, subscriptions.stripe_customer_id),
         stripe_subscription_id = excluded.stripe_subscription_id, stripe_price_id = excluded.stripe_price_id, status = excluded.status,
         current_period_start = excluded.current_period_start, current_period_end = excluded.current_period_end,
         cancel_at_period_end = excluded.cancel_at_period_end,
         stripe_event_created = CASE WHEN subscriptions.stripe_subscription_id IS NOT DISTINCT FROM excluded.stripe_subscription_id
           THEN GREATEST(COALESCE(subscriptions.stripe_event_created, 0), excluded.stripe_event_created) ELSE excluded.stripe_event_created END`,
      [userId, f.customerId, f.subscriptionId, f.priceId, f.status, f.periodStart, f.periodEnd, f.cancelAtPeriodEnd, created],
    );
    return undefined;
  };
  const applyChange = async (c: Client, change: StripeChange, created: number): Promise<string> => {
    switch (change.kind) {
      case 'checkout': {
        if (change.userId === null || !(await userExists(c, change.userId))) return `ignored: no user ${String(change.userId)}`;
        const f = change.fields;
        if (f === null) return 'ignored: not a subscription checkout';
        return (await writeSubscription(c, change.userId, f, created, true)) ?? `subscription ${f.subscriptionId} ${f.status} for user ${change.userId}`;
      }
      case 'subscription': {
        const f = change.fields;
        const userId = (await userForCustomer(c, f.customerId)) ?? change.userIdHint;
        if (userId === null || !(await userExists(c, userId))) return `ignored: no user for customer ${String(f.customerId)}`;
        return (await writeSubscription(c, userId, f, created, false)) ?? `subscription ${f.subscriptionId} ${f.status} for user ${userId}`;
      }
      case 'payment-failed': {
        const changed = (
          await c.query(
            `UPDATE subscriptions SET status = 'past_due', stripe_event_created = $1
             WHERE stripe_customer_id = $2 AND status IN ('active', 'trialing') AND COALESCE(stripe_event_created, 0) <= $1`,
            [created, change.customerId],
          )
        ).rowCount;
        return `payment failed for customer ${String(change.customerId)}${changed ? ': past_due' : ''}`;
      }
      case 'none':
        return change.outcome;
    }
  };

  const HISTORY_COLUMNS = 'id, file_name AS "fileName", submitted_at AS "submittedAt", hash, ledger_date AS "ledgerDate"';

  const store: Store = {
    engine: 'postgres',

    submissions: submissionStore(conn),

    limits: {
      submit: ({ submission, clientKey, userId, caps, receipt }) =>
        tx(async (c): Promise<LimitOutcome> => {
          const time = submission.submittedAt.toISOString();
          if (userId !== undefined && isPayingStatus(await subscriptionStatus(c, userId))) {
            const row = (
              await c.query<{ count: number }>(
                `INSERT INTO quota_usage (user_id, month, count, last_reset) VALUES ($1, $2, 1, $3)
                 ON CONFLICT (user_id, month) DO UPDATE SET count = quota_usage.count + 1 WHERE quota_usage.count < $4
                 RETURNING count`,
                [userId, time.slice(0, 7), time, caps.standardPerMonth],
              )
            ).rows[0];
            if (row === undefined) return { allowed: false, tier: 'standard' };
            await insertSubmission(c, { ...submission, source: 'account' });
            await c.query('INSERT INTO timestamps (user_id, hash, submitted_at, ledger_date, file_name) VALUES ($1, $2, $3, $4, $5)', [
              userId,
              submission.hash,
              time,
              time.slice(0, 10),
              submission.fileName ?? null,
            ]);
            await insertReceipt(c, submission.hash, time, receipt);
            return { allowed: true, tier: 'standard', count: row.count };
          }
          const n = await countUpTo(c, clientKey, time.slice(0, 10), caps.freePerDay);
          if (n === undefined) return { allowed: false, tier: 'free' };
          await insertSubmission(c, { ...submission, source: 'web' });
          await insertReceipt(c, submission.hash, time, receipt);
          return { allowed: true, tier: 'free', count: n };
        }),
      dailyUsed: async (clientKey, date) => (await one<{ count: number }>('SELECT count FROM ip_rate_limit WHERE ip_address = $1 AND date = $2', [clientKey, date]))?.count ?? 0,
      monthlyUsed: async (userId, month) => (await one<{ count: number }>('SELECT count FROM quota_usage WHERE user_id = $1 AND month = $2', [userId, month]))?.count ?? 0,
      countWindow: (clientKey, window, max, prune, amount) =>
        tx(async (c) => {
          const add = windowAmount(amount);
          const n = await countUpTo(c, clientKey, window, max, add);
          // A count equal to `add` was just created: an existing one was at least 1 before this call added to it.
          if (n === add) await c.query('DELETE FROM ip_rate_limit WHERE ip_address = $1 AND date >= $2 AND date < $3', [clientKey, prune.from, prune.before]);
          return n;
        }),
    },

    receipts: {
      forDay: async (hash, date) =>
        (
          await query<{ der: Buffer }>('SELECT der FROM receipts WHERE hash = $1 AND submitted_at >= $2 AND submitted_at < $3 ORDER BY submitted_at, id LIMIT $4', [
            hash,
            date,
            dayAfter(date),
            RECEIPTS_PER_DAY,
          ])
        ).rows.map((r) => new Uint8Array(r.der)),
    },

    throttle: throttleStore(conn),

    users: userStore(conn),

    sessions: sessionStore(conn),

    subscriptions: {
      get: async (userId) => {
        const row = await one<{ status: string; priceId: string | null; periodEnd: string | null; cancel: boolean; customerId: string | null }>(
          'SELECT status, stripe_price_id AS "priceId", current_period_end AS "periodEnd", cancel_at_period_end AS cancel, stripe_customer_id AS "customerId" FROM subscriptions WHERE user_id = $1',
          [userId],
        );
        return row && { status: row.status, priceId: row.priceId, periodEnd: row.periodEnd, cancelAtPeriodEnd: row.cancel, customerId: row.customerId };
      },
      isPaying: async (userId) => isPayingStatus((await one<{ status: string }>('SELECT status FROM subscriptions WHERE user_id = $1', [userId]))?.status),
      // One statement: a concurrent call waits for the row, then keeps the customer recorded first.
      setCustomer: async (userId, customerId) =>
        (
          await query<{ c: string }>(
            `INSERT INTO subscriptions (user_id, stripe_customer_id, status) VALUES ($1, $2, 'inactive')
             ON CONFLICT (user_id) DO UPDATE SET stripe_customer_id = COALESCE(subscriptions.stripe_customer_id, excluded.stripe_customer_id)
             RETURNING stripe_customer_id AS c`,
            [userId, customerId],
            true,
          )
        ).rows[0]!.c,
    },

    stripeEvents: {
      seen: async (eventId) => (await one('SELECT 1 FROM stripe_events WHERE id = $1', [eventId])) !== undefined,
      apply: (event, change) =>
        tx(async (c) => {
          // A concurrent insert of the same id waits for this transaction, then does nothing.
          const fresh = (await c.query('INSERT INTO stripe_events (id, type, received_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING RETURNING id', [event.id, event.type, event.receivedAt.toISOString()])).rowCount;
          return fresh === 1 ? applyChange(c, change, event.created) : undefined;
        }),
    },

    forms: {
      joinWaitlist: async (e) =>
        (
          await query('INSERT INTO professional_waitlist (name, email, message, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (email) DO NOTHING RETURNING id', [
            e.name,
            e.email,
            e.message,
            e.createdAt.toISOString(),
          ], true)
        ).rowCount === 1,
      addContact: async (m) =>
        (await query<{ id: number }>('INSERT INTO contact_messages (name, email, subject, message, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id', [m.name, m.email, m.subject, m.message, m.createdAt.toISOString()], true))
          .rows[0]!.id,
      setContactDelivery: async (id, delivery) => void (await query('UPDATE contact_messages SET delivery = $1 WHERE id = $2', [delivery, id], true)),
    },

    history: {
      list: async (userId) => (await query<HistoryEntry>(`SELECT ${HISTORY_COLUMNS} FROM timestamps WHERE user_id = $1 ORDER BY submitted_at DESC, id DESC LIMIT 1000`, [userId])).rows,
      get: (id, userId) => one<HistoryEntry>(`SELECT ${HISTORY_COLUMNS} FROM timestamps WHERE id = $1 AND user_id = $2`, [id, userId]),
    },

    databaseTime: async () => (await one<{ ms: number }>('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms'))!.ms,

    lease: leaseStore(conn),

    close: () => conn.close(),
  };
  return store;
}
