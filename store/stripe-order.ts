// Stripe's ordering rules for a subscription's row, engine-neutral: Stripe delivers events at least once and in
// any order (docs.stripe.com/webhooks, "Event ordering"), so each engine reads the user's row under its lock and
// asks here whether the event's fields may be written (store/sqlite/subscriptions.ts,
// store/postgres/subscriptions.ts). The contract is store/store.ts StripeEventStore.apply; the cases are in
// store/test/contract.ts (both engines) and store/stripe-order.test.ts.
import { isPayingStatus, type SubscriptionFields } from './store.ts';

/** What an engine read of the user's subscription row before writing (null fields: never set). */
export interface SubscriptionRowState {
  /** stripe_subscription_id */
  sid: string | null;
  status: string;
  /** stripe_event_created: the `created` of the last event applied to `sid` */
  created: number | null;
}

/**
 * Why the event's fields `f` (of an event created at `created`, Unix seconds) must not be written over the
 * user's row `current` (undefined: no row), as the change's outcome text; undefined to write them. `fresh`:
 * the fields were fetched from Stripe now (a checkout), so their age does not count.
 *
 * 1. A late event about an older subscription never overwrites the one the user pays for now.
 * 2. A canceled subscription stays canceled (Stripe never revives one).
 * 3. An event older than the last one applied to the same subscription changes nothing.
 */
export function subscriptionWriteRefusal(
  userId: string,
  current: SubscriptionRowState | undefined,
  f: SubscriptionFields,
  created: number,
  fresh: boolean,
): string | undefined {
  if (current?.sid && current.sid !== f.subscriptionId && isPayingStatus(current.status) && !isPayingStatus(f.status))
    return `ignored: user ${userId} pays through ${current.sid}`;
  if (current?.sid === f.subscriptionId) {
    if (current.status === 'canceled' && f.status !== 'canceled') return `ignored: ${f.subscriptionId} is canceled`;
    if (!fresh && current.created !== null && created < current.created)
      return `ignored: older than the last event applied to ${f.subscriptionId}`;
  }
  return undefined;
}
