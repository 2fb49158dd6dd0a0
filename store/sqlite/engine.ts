// The SQLite engine of the Store (store/store.ts): better-sqlite3 on the file of TIMESEAL_DB, schema and
// migrations in store/sqlite/db.ts. Every method does its work synchronously inside a better-sqlite3 transaction
// (no await between a check and its write), which makes it atomic against this process and, through SQLite's
// write lock (BEGIN IMMEDIATE), against every other process on the same file; the async signature is the
// interface's. Submissions written one by one (`submissions.write`) go through the group-commit writer
// (submission-writer.ts, its own connection); everything else uses the main connection (synchronous=FULL,
// so a resolved write is durable).
import type { DB } from './db.ts';
import { submissionInserter } from './queue.ts';
import {
  isPayingStatus,
  dayAfter,
  RECEIPTS_PER_DAY,
  type HistoryEntry,
  type LimitOutcome,
  type Store,
  type Submission,
  type StripeChange,
  type SubscriptionFields,
  windowAmount,
} from '../store.ts';
import { sessionStore, userStore } from './accounts.ts';
import { openConnection } from './connection.ts';
import { dayClosed } from './errors.ts';
import { leaseStore } from './lease.ts';
import { submissionStore } from './submissions.ts';
import { throttleStore } from './throttle.ts';

export interface SqliteStoreOptions {
  /** Use this open connection as the main one (the caller keeps it and closes it); default: open `file`. */
  db?: DB;
}

/** Opens the SQLite store on `file` (created and migrated when needed; store/sqlite/db.ts openDatabase). */
export function openSqliteStore(file: string, options: SqliteStoreOptions = {}): Store {
  const conn = openConnection(file, options.db);
  const { db, sql, tx, run } = conn;

  // --- limits
  const insertSubmission = submissionInserter(db);
  /** One submission inside the caller's transaction; a closed day's refusal as DayClosedError. */
  const insertRow = (row: Submission): void => {
    try {
      insertSubmission([row]);
    } catch (err) {
      throw dayClosed(err, [row]) ?? err;
    }
  };
  /** Counts `amount` for (key, date) unless the count would pass `max`: the count after, or undefined. */
  const countUpTo = (table: 'ip_rate_limit', key: string, date: string, max: number, amount = 1): number | undefined => {
    if (amount > max) return undefined;
    return (
      sql(`INSERT INTO ${table} (ip_address, date, count) VALUES (?1, ?2, ?3)
           ON CONFLICT (ip_address, date) DO UPDATE SET count = count + ?3 WHERE count <= ?4 - ?3
           RETURNING count`).get({ 1: key, 2: date, 3: amount, 4: max }) as { count: number } | undefined
    )?.count;
  };
  /** The site's receipt of a submission, inside the caller's transaction (after its row). */
  const insertReceipt = (hash: string, time: string, der: Uint8Array | undefined): void => {
    if (der === undefined) return;
    sql('INSERT INTO receipts (hash, submitted_at, der) VALUES (?, ?, ?)').run(hash, time, Buffer.from(der.buffer, der.byteOffset, der.byteLength));
  };
  const subscriptionStatus = (userId: string): string | undefined =>
    (sql('SELECT status FROM subscriptions WHERE user_id = ?').get(userId) as { status: string } | undefined)?.status;

  // --- stripe
  const userExists = (id: string | null): id is string => id !== null && sql('SELECT 1 FROM users WHERE id = ?').get(id) !== undefined;
  const userForCustomer = (customerId: string | null): string | null => {
    if (customerId === null) return null;
    const row = sql('SELECT user_id FROM subscriptions WHERE stripe_customer_id = ?').get(customerId) as { user_id: string } | undefined;
    return row?.user_id ?? null;
  };
  /** Writes a subscription's fields to the user's row unless it already holds newer news (store.ts apply). */
  const writeSubscription = (userId: string, f: SubscriptionFields, created: number, fresh: boolean): string | undefined => {
    const current = sql('SELECT stripe_subscription_id AS sid, status, stripe_event_created AS created FROM subscriptions WHERE user_id = ?').get(userId) as
      | { sid: string | null; status: string; created: number | null }
      | undefined;
    // A late event about an older subscription must not overwrite the one the user pays for now.
    if (current?.sid && current.sid !== f.subscriptionId && isPayingStatus(current.status) && !isPayingStatus(f.status)) {
      return `ignored: user ${userId} pays through ${current.sid}`;
    }
    if (current?.sid === f.subscriptionId) {
      if (current.status === 'canceled' && f.status !== 'canceled') return `ignored: ${f.subscriptionId} is canceled`;
      if (!fresh && current.created !== null && created < current.created) return `ignored: older than the last event applied to ${f.subscriptionId}`;
    }
    sql(
      `INSERT INTO subscriptions (user_id, stripe_customer_id, stripe_subscription_id, stripe_price_id, status, current_period_start, current_period_end, cancel_at_period_end, stripe_event_created)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (user_id) DO UPDATE SET stripe_customer_id = COALESCE(excluded.stripe_customer_id, stripe_customer_id),
         stripe_subscription_id = excluded.stripe_subscription_id, stripe_price_id = excluded.stripe_price_id, status = excluded.status,
         current_period_start = excluded.current_period_start, current_period_end = excluded.current_period_end,
         cancel_at_period_end = excluded.cancel_at_period_end,
         stripe_event_created = CASE WHEN stripe_subscription_id IS excluded.stripe_subscription_id
           THEN MAX(COALESCE(stripe_event_created, 0), excluded.stripe_event_created) ELSE excluded.stripe_event_created END`,
    ).run(userId, f.customerId, f.subscriptionId, f.priceId, f.status, f.periodStart, f.periodEnd, f.cancelAtPeriodEnd ? 1 : 0, created);
    return undefined;
  };
  const applyChange = (change: StripeChange, created: number): string => {
    switch (change.kind) {
      case 'checkout': {
        if (!userExists(change.userId)) return `ignored: no user ${String(change.userId)}`;
        const f = change.fields;
        if (f === null) return 'ignored: not a subscription checkout';
        return writeSubscription(change.userId, f, created, true) ?? `subscription ${f.subscriptionId} ${f.status} for user ${change.userId}`;
      }
      case 'subscription': {
        const f = change.fields;
        const userId = userForCustomer(f.customerId) ?? change.userIdHint;
        if (!userExists(userId)) return `ignored: no user for customer ${String(f.customerId)}`;
        return writeSubscription(userId, f, created, false) ?? `subscription ${f.subscriptionId} ${f.status} for user ${userId}`;
      }
      case 'payment-failed': {
        const changed = sql(
          `UPDATE subscriptions SET status = 'past_due', stripe_event_created = ?
           WHERE stripe_customer_id = ? AND status IN ('active', 'trialing') AND COALESCE(stripe_event_created, 0) <= ?`,
        ).run(created, change.customerId, created).changes;
        return `payment failed for customer ${String(change.customerId)}${changed ? ': past_due' : ''}`;
      }
      case 'none':
        return change.outcome;
    }
  };

  const HISTORY_COLUMNS = 'id, file_name AS fileName, submitted_at AS submittedAt, hash, ledger_date AS ledgerDate';

  const store: Store = {
    engine: 'sqlite',

    submissions: submissionStore(conn),

    limits: {
      submit: ({ submission, clientKey, userId, caps, receipt }) =>
        tx((): LimitOutcome => {
          const now = submission.submittedAt;
          const time = now.toISOString();
          if (userId !== undefined && isPayingStatus(subscriptionStatus(userId))) {
            const row = sql(
              `INSERT INTO quota_usage (user_id, month, count, last_reset) VALUES (?, ?, 1, ?)
               ON CONFLICT (user_id, month) DO UPDATE SET count = count + 1 WHERE count < ?
               RETURNING count`,
            ).get(userId, time.slice(0, 7), time, caps.standardPerMonth) as { count: number } | undefined;
            if (row === undefined) return { allowed: false, tier: 'standard' };
            insertRow({ ...submission, source: 'account' });
            sql('INSERT INTO timestamps (user_id, hash, submitted_at, ledger_date, file_name) VALUES (?, ?, ?, ?, ?)').run(userId, submission.hash, time, time.slice(0, 10), submission.fileName ?? null);
            insertReceipt(submission.hash, time, receipt);
            return { allowed: true, tier: 'standard', count: row.count };
          }
          const n = countUpTo('ip_rate_limit', clientKey, time.slice(0, 10), caps.freePerDay);
          if (n === undefined) return { allowed: false, tier: 'free' };
          insertRow({ ...submission, source: 'web' });
          insertReceipt(submission.hash, time, receipt);
          return { allowed: true, tier: 'free', count: n };
        }),
      dailyUsed: (clientKey, date) =>
        run(() => (sql('SELECT count FROM ip_rate_limit WHERE ip_address = ? AND date = ?').get(clientKey, date) as { count: number } | undefined)?.count ?? 0),
      monthlyUsed: (userId, month) =>
        run(() => (sql('SELECT count FROM quota_usage WHERE user_id = ? AND month = ?').get(userId, month) as { count: number } | undefined)?.count ?? 0),
      countWindow: (clientKey, window, max, prune, amount) =>
        run(() => {
          const add = windowAmount(amount);
          // One statement decides and counts; the prune after it is idempotent, so no transaction is needed.
          const n = countUpTo('ip_rate_limit', clientKey, window, max, add);
          // A count equal to `add` was just created: an existing one was at least 1 before this call added to it.
          if (n === add) sql('DELETE FROM ip_rate_limit WHERE ip_address = ? AND date >= ? AND date < ?').run(clientKey, prune.from, prune.before);
          return n;
        }),
    },

    receipts: {
      forDay: (hash, date) =>
        run(() =>
          (
            sql('SELECT der FROM receipts WHERE hash = ? AND submitted_at >= ? AND submitted_at < ? ORDER BY submitted_at, id LIMIT ?').raw(true).all(hash, date, dayAfter(date), RECEIPTS_PER_DAY) as Array<[Buffer]>
          ).map(([der]) => new Uint8Array(der)),
        ),
    },

    throttle: throttleStore(conn),

    users: userStore(conn),

    sessions: sessionStore(conn),

    subscriptions: {
      get: (userId) =>
        run(() => {
          const row = sql(
            'SELECT status, stripe_price_id AS priceId, current_period_end AS periodEnd, cancel_at_period_end AS cancel, stripe_customer_id AS customerId FROM subscriptions WHERE user_id = ?',
          ).get(userId) as { status: string; priceId: string | null; periodEnd: string | null; cancel: number; customerId: string | null } | undefined;
          return row && { status: row.status, priceId: row.priceId, periodEnd: row.periodEnd, cancelAtPeriodEnd: row.cancel === 1, customerId: row.customerId };
        }),
      isPaying: (userId) => run(() => isPayingStatus(subscriptionStatus(userId))),
      setCustomer: (userId, customerId) =>
        tx(() => {
          sql(
            `INSERT INTO subscriptions (user_id, stripe_customer_id, status) VALUES (?, ?, 'inactive') ON CONFLICT (user_id) DO UPDATE SET stripe_customer_id = COALESCE(stripe_customer_id, excluded.stripe_customer_id)`,
          ).run(userId, customerId);
          return (sql('SELECT stripe_customer_id AS c FROM subscriptions WHERE user_id = ?').get(userId) as { c: string }).c;
        }),
    },

    stripeEvents: {
      seen: (eventId) => run(() => sql('SELECT 1 FROM stripe_events WHERE id = ?').get(eventId) !== undefined),
      apply: (event, change) =>
        tx(() => {
          const fresh = sql('INSERT INTO stripe_events (id, type, received_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING').run(event.id, event.type, event.receivedAt.toISOString()).changes;
          return fresh === 1 ? applyChange(change, event.created) : undefined;
        }),
    },

    forms: {
      joinWaitlist: (e) =>
        run(
          () =>
            sql('INSERT INTO professional_waitlist (name, email, message, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (email) DO NOTHING').run(e.name, e.email, e.message, e.createdAt.toISOString())
              .changes === 1,
        ),
      addContact: (m) =>
        run(() =>
          Number(sql('INSERT INTO contact_messages (name, email, subject, message, created_at) VALUES (?, ?, ?, ?, ?)').run(m.name, m.email, m.subject, m.message, m.createdAt.toISOString()).lastInsertRowid),
        ),
      setContactDelivery: (id, delivery) => run(() => void sql('UPDATE contact_messages SET delivery = ? WHERE id = ?').run(delivery, id)),
    },

    history: {
      list: (userId) => run(() => sql(`SELECT ${HISTORY_COLUMNS} FROM timestamps WHERE user_id = ? ORDER BY submitted_at DESC, id DESC LIMIT 1000`).all(userId) as HistoryEntry[]),
      get: (id, userId) => run(() => sql(`SELECT ${HISTORY_COLUMNS} FROM timestamps WHERE id = ? AND user_id = ?`).get(id, userId) as HistoryEntry | undefined),
    },

    databaseTime: () => Promise.resolve(undefined),

    lease: leaseStore(conn),

    close: () => conn.close(),
  };
  return store;
}
