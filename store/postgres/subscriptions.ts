// `subscriptions` and `stripeEvents` on PostgreSQL (store/store.ts SubscriptionStore, StripeEventStore; the
// SQLite side: store/sqlite/subscriptions.ts). An event's id is recorded with INSERT … ON CONFLICT DO NOTHING
// RETURNING in the transaction of its change (a concurrent delivery of the same id waits, then does nothing); the
// ordering rules are checked and the row written under pg_advisory_xact_lock on the user's subscription.
import type pg from 'pg';
import {
  isPayingStatus,
  type StripeChange,
  type StripeEventStore,
  type SubscriptionFields,
  type SubscriptionStore,
} from '../store.ts';
import { subscriptionWriteRefusal, type SubscriptionRowState } from '../stripe-order.ts';
import type { Client, PostgresConnection } from './connection.ts';

/** The user's subscription status, undefined without a row (limits.submit reads it in its transaction). */
export const subscriptionStatus = async (c: Client | pg.Pool, userId: string): Promise<string | undefined> =>
  (await c.query<{ status: string }>('SELECT status FROM subscriptions WHERE user_id = $1', [userId])).rows[0]?.status;

export function subscriptionStore({ query, one }: PostgresConnection): SubscriptionStore {
  return {
    get: async (userId) => {
      const row = await one<{
        status: string;
        priceId: string | null;
        periodEnd: string | null;
        cancel: boolean;
        customerId: string | null;
      }>(
        'SELECT status, stripe_price_id AS "priceId", current_period_end AS "periodEnd", cancel_at_period_end AS cancel, stripe_customer_id AS "customerId" FROM subscriptions WHERE user_id = $1',
        [userId],
      );
      return (
        row && {
          status: row.status,
          priceId: row.priceId,
          periodEnd: row.periodEnd,
          cancelAtPeriodEnd: row.cancel,
          customerId: row.customerId,
        }
      );
    },
    isPaying: async (userId) =>
      isPayingStatus(
        (await one<{ status: string }>('SELECT status FROM subscriptions WHERE user_id = $1', [userId]))?.status,
      ),
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
  };
}

export function stripeEventStore({ one, tx, lock }: PostgresConnection): StripeEventStore {
  const userExists = async (c: Client, id: string | null): Promise<boolean> =>
    id !== null && (await c.query('SELECT 1 FROM users WHERE id = $1', [id])).rowCount === 1;
  const userForCustomer = async (c: Client, customerId: string | null): Promise<string | null> => {
    if (customerId === null) return null;
    return (
      (
        await c.query<{ user_id: string }>(
          'SELECT user_id FROM subscriptions WHERE stripe_customer_id = $1 ORDER BY id LIMIT 1',
          [customerId],
        )
      ).rows[0]?.user_id ?? null
    );
  };
  /** Writes a subscription's fields to the user's row unless Stripe's ordering rules say no (stripe-order.ts). The
   * user's subscription lock makes the read and the write one step against every other event of the user. */
  const writeSubscription = async (
    c: Client,
    userId: string,
    f: SubscriptionFields,
    created: number,
    fresh: boolean,
  ): Promise<string | undefined> => {
    await lock(c, [`subscription\0${userId}`]);
    const current = (
      await c.query<SubscriptionRowState>(
        'SELECT stripe_subscription_id AS sid, status, stripe_event_created AS created FROM subscriptions WHERE user_id = $1',
        [userId],
      )
    ).rows[0];
    const refused = subscriptionWriteRefusal(userId, current, f, created, fresh);
    if (refused !== undefined) return refused;
    await c.query(
      `INSERT INTO subscriptions (user_id, stripe_customer_id, stripe_subscription_id, stripe_price_id, status, current_period_start, current_period_end, cancel_at_period_end, stripe_event_created)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (user_id) DO UPDATE SET stripe_customer_id = COALESCE(excluded.stripe_customer_id, subscriptions.stripe_customer_id),
         stripe_subscription_id = excluded.stripe_subscription_id, stripe_price_id = excluded.stripe_price_id, status = excluded.status,
         current_period_start = excluded.current_period_start, current_period_end = excluded.current_period_end,
         cancel_at_period_end = excluded.cancel_at_period_end,
         stripe_event_created = CASE WHEN subscriptions.stripe_subscription_id IS NOT DISTINCT FROM excluded.stripe_subscription_id
           THEN GREATEST(COALESCE(subscriptions.stripe_event_created, 0), excluded.stripe_event_created) ELSE excluded.stripe_event_created END`,
      [
        userId,
        f.customerId,
        f.subscriptionId,
        f.priceId,
        f.status,
        f.periodStart,
        f.periodEnd,
        f.cancelAtPeriodEnd,
        created,
      ],
    );
    return undefined;
  };
  const applyChange = async (c: Client, change: StripeChange, created: number): Promise<string> => {
    switch (change.kind) {
      case 'checkout': {
        if (change.userId === null || !(await userExists(c, change.userId)))
          return `ignored: no user ${String(change.userId)}`;
        const f = change.fields;
        if (f === null) return 'ignored: not a subscription checkout';
        return (
          (await writeSubscription(c, change.userId, f, created, true)) ??
          `subscription ${f.subscriptionId} ${f.status} for user ${change.userId}`
        );
      }
      case 'subscription': {
        const f = change.fields;
        const userId = (await userForCustomer(c, f.customerId)) ?? change.userIdHint;
        if (userId === null || !(await userExists(c, userId)))
          return `ignored: no user for customer ${String(f.customerId)}`;
        return (
          (await writeSubscription(c, userId, f, created, false)) ??
          `subscription ${f.subscriptionId} ${f.status} for user ${userId}`
        );
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

  return {
    seen: async (eventId) => (await one('SELECT 1 FROM stripe_events WHERE id = $1', [eventId])) !== undefined,
    apply: (event, change) =>
      tx(async (c) => {
        // A concurrent insert of the same id waits for this transaction, then does nothing.
        const fresh = (
          await c.query(
            'INSERT INTO stripe_events (id, type, received_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING RETURNING id',
            [event.id, event.type, event.receivedAt.toISOString()],
          )
        ).rowCount;
        return fresh === 1 ? applyChange(c, change, event.created) : undefined;
      }),
  };
}
