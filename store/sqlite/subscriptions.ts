// `subscriptions` and `stripeEvents` on SQLite (store/store.ts SubscriptionStore, StripeEventStore; the
// PostgreSQL side: store/postgres/subscriptions.ts). An event's id is recorded and its change applied in one
// IMMEDIATE transaction, so SQLite's write lock makes the checks of the ordering rules and the write one step
// against every other event.
import {
  isPayingStatus,
  type StripeChange,
  type StripeEventStore,
  type SubscriptionFields,
  type SubscriptionStore,
} from '../store.ts';
import { subscriptionWriteRefusal, type SubscriptionRowState } from '../stripe-order.ts';
import type { SqliteConnection } from './connection.ts';

/** The user's subscription status, undefined without a row (limits.submit reads it in its transaction). */
export const subscriptionStatus = (conn: SqliteConnection, userId: string): string | undefined =>
  (conn.sql('SELECT status FROM subscriptions WHERE user_id = ?').get(userId) as { status: string } | undefined)
    ?.status;

export function subscriptionStore(conn: SqliteConnection): SubscriptionStore {
  const { sql, tx, run } = conn;
  return {
    get: (userId) =>
      run(() => {
        const row = sql(
          'SELECT status, stripe_price_id AS priceId, current_period_end AS periodEnd, cancel_at_period_end AS cancel, stripe_customer_id AS customerId FROM subscriptions WHERE user_id = ?',
        ).get(userId) as
          | {
              status: string;
              priceId: string | null;
              periodEnd: string | null;
              cancel: number;
              customerId: string | null;
            }
          | undefined;
        return (
          row && {
            status: row.status,
            priceId: row.priceId,
            periodEnd: row.periodEnd,
            cancelAtPeriodEnd: row.cancel === 1,
            customerId: row.customerId,
          }
        );
      }),
    isPaying: (userId) => run(() => isPayingStatus(subscriptionStatus(conn, userId))),
    setCustomer: (userId, customerId) =>
      tx(() => {
        sql(
          `INSERT INTO subscriptions (user_id, stripe_customer_id, status) VALUES (?, ?, 'inactive') ON CONFLICT (user_id) DO UPDATE SET stripe_customer_id = COALESCE(stripe_customer_id, excluded.stripe_customer_id)`,
        ).run(userId, customerId);
        return (sql('SELECT stripe_customer_id AS c FROM subscriptions WHERE user_id = ?').get(userId) as { c: string })
          .c;
      }),
  };
}

export function stripeEventStore({ sql, tx, run }: SqliteConnection): StripeEventStore {
  const userExists = (id: string | null): id is string =>
    id !== null && sql('SELECT 1 FROM users WHERE id = ?').get(id) !== undefined;
  const userForCustomer = (customerId: string | null): string | null => {
    if (customerId === null) return null;
    const row = sql('SELECT user_id FROM subscriptions WHERE stripe_customer_id = ?').get(customerId) as
      { user_id: string } | undefined;
    return row?.user_id ?? null;
  };
  /** Writes a subscription's fields to the user's row unless Stripe's ordering rules say no (stripe-order.ts). */
  const writeSubscription = (
    userId: string,
    f: SubscriptionFields,
    created: number,
    fresh: boolean,
  ): string | undefined => {
    const current = sql(
      'SELECT stripe_subscription_id AS sid, status, stripe_event_created AS created FROM subscriptions WHERE user_id = ?',
    ).get(userId) as SubscriptionRowState | undefined;
    const refused = subscriptionWriteRefusal(userId, current, f, created, fresh);
    if (refused !== undefined) return refused;
    sql(
      `INSERT INTO subscriptions (user_id, stripe_customer_id, stripe_subscription_id, stripe_price_id, status, current_period_start, current_period_end, cancel_at_period_end, stripe_event_created)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (user_id) DO UPDATE SET stripe_customer_id = COALESCE(excluded.stripe_customer_id, stripe_customer_id),
         stripe_subscription_id = excluded.stripe_subscription_id, stripe_price_id = excluded.stripe_price_id, status = excluded.status,
         current_period_start = excluded.current_period_start, current_period_end = excluded.current_period_end,
         cancel_at_period_end = excluded.cancel_at_period_end,
         stripe_event_created = CASE WHEN stripe_subscription_id IS excluded.stripe_subscription_id
           THEN MAX(COALESCE(stripe_event_created, 0), excluded.stripe_event_created) ELSE excluded.stripe_event_created END`,
    ).run(
      userId,
      f.customerId,
      f.subscriptionId,
      f.priceId,
      f.status,
      f.periodStart,
      f.periodEnd,
      f.cancelAtPeriodEnd ? 1 : 0,
      created,
    );
    return undefined;
  };
  const applyChange = (change: StripeChange, created: number): string => {
    switch (change.kind) {
      case 'checkout': {
        if (!userExists(change.userId)) return `ignored: no user ${String(change.userId)}`;
        const f = change.fields;
        if (f === null) return 'ignored: not a subscription checkout';
        return (
          writeSubscription(change.userId, f, created, true) ??
          `subscription ${f.subscriptionId} ${f.status} for user ${change.userId}`
        );
      }
      case 'subscription': {
        const f = change.fields;
        const userId = userForCustomer(f.customerId) ?? change.userIdHint;
        if (!userExists(userId)) return `ignored: no user for customer ${String(f.customerId)}`;
        return (
          writeSubscription(userId, f, created, false) ??
          `subscription ${f.subscriptionId} ${f.status} for user ${userId}`
        );
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

  return {
    seen: (eventId) => run(() => sql('SELECT 1 FROM stripe_events WHERE id = ?').get(eventId) !== undefined),
    apply: (event, change) =>
      tx(() => {
        const fresh = sql(
          'INSERT INTO stripe_events (id, type, received_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING',
        ).run(event.id, event.type, event.receivedAt.toISOString()).changes;
        return fresh === 1 ? applyChange(change, event.created) : undefined;
      }),
  };
}
