// Stripe (DESIGN.md §5, §6): the official SDK, pointed at STRIPE_API_BASE when set (tests: a loopback
// stand-in), and the webhook events that keep the `subscriptions` row of a user in step with Stripe.
//
// Contract of `applyEvent(db, event, prefetched)`: runs inside the caller's transaction, after the event id was
// recorded in `stripe_events` for the first time (so a replayed event is never applied twice). Handled:
//   checkout.session.completed            the session's customer and subscription (retrieved beforehand with
//                                         `prefetchSubscription`, outside the transaction) for its
//                                         client_reference_id (our user id)
//   customer.subscription.created|updated|deleted   the subscription's status, price, period, cancel flag
//   invoice.payment_failed                the customer's paying status becomes "past_due"
// Anything else is acknowledged and ignored. Status is Stripe's text; "active" and "trialing" count as paying.
// Before that, `eventProblem` checks the shape of a signed event (400 for a handled type whose data.object
// lacks what we read), and `stripeFailure` turns a failed API call into our 502 or 503 and the log's cause.
//
// Order: Stripe does not promise to deliver events in the order they happened, so each subscription row keeps
// the creation time of the newest event applied to it (`stripe_event_created`). An event older than that is
// acknowledged and ignored; events of the same second apply in arrival order. A canceled subscription stays
// canceled (Stripe never reactivates one). checkout.session.completed carries the subscription as fetched
// from Stripe while handling it, the freshest state there is, so it is applied whatever its age.
import Stripe from 'stripe';
import type { DB } from '../../store/db.ts';
import { PAYING_STATUSES } from '../limits.ts';
import type { StripeSettings } from './config.ts';

export function createStripeClient(settings: StripeSettings): Stripe {
  const base = settings.apiBase;
  return new Stripe(settings.secretKey, {
    maxNetworkRetries: 1,
    timeout: 20_000,
    telemetry: false,
    ...(base
      ? { host: base.hostname, port: base.port || (base.protocol === 'https:' ? 443 : 80), protocol: base.protocol === 'https:' ? 'https' : 'http' }
      : {}),
  });
}

export const HANDLED_EVENTS = [
  'checkout.session.completed',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'invoice.payment_failed',
] as const;
type HandledEvent = (typeof HANDLED_EVENTS)[number];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';
/** A reference to another Stripe object: its id, or the object itself when expanded. */
const isRef = (v: unknown): boolean => isString(v) || (isObject(v) && isString(v.id));
const orNull = (ok: (v: unknown) => boolean) => (v: unknown) => v == null || ok(v);

/** Fields of `data.object` that `applyEvent` reads, per handled event type: [field, check, what it must be]. */
type FieldRule = readonly [string, (v: unknown) => boolean, string];
const SUBSCRIPTION_RULES: readonly FieldRule[] = [
  ['id', isString, 'a string'],
  ['status', isString, 'a string'],
  ['customer', isRef, 'a customer id'],
  ['cancel_at_period_end', orNull((v) => typeof v === 'boolean'), 'a boolean'],
  ['metadata', orNull(isObject), 'an object'],
  ['items', orNull((v) => isObject(v) && (v.data == null || Array.isArray(v.data))), 'a list object'],
];
const OBJECT_RULES: Record<HandledEvent, readonly FieldRule[]> = {
  'checkout.session.completed': [
    ['client_reference_id', orNull(isString), 'a string or null'],
    ['mode', isString, 'a string'],
    ['subscription', orNull(isRef), 'a subscription id or null'],
    ['customer', orNull(isRef), 'a customer id or null'],
  ],
  'customer.subscription.created': SUBSCRIPTION_RULES,
  'customer.subscription.updated': SUBSCRIPTION_RULES,
  'customer.subscription.deleted': SUBSCRIPTION_RULES,
  'invoice.payment_failed': [['customer', orNull(isRef), 'a customer id or null']],
};

/**
 * What is wrong with a signed event's shape, or undefined when it can be handled: the envelope (id, type,
 * created) of every event, and for the types we handle the fields of `data.object` that `applyEvent` reads.
 * A signature proves who sent the bytes, not that they have the shape the SDK's types promise (issue 16: an
 * event with `data: null` made a 500). Events of other types are acknowledged whatever their data.
 */
export function eventProblem(event: unknown): string | undefined {
  if (!isObject(event)) return 'Stripe event: must be a JSON object';
  if (!isString(event.id) || event.id === '') return 'Stripe event: id must be a non-empty string';
  if (!isString(event.type)) return `Stripe event ${event.id}: type must be a string`;
  if (!Number.isInteger(event.created)) return `Stripe event ${event.id}: created must be an integer`;
  const rules = OBJECT_RULES[event.type as HandledEvent] as readonly FieldRule[] | undefined;
  if (rules === undefined) return undefined;
  const where = `Stripe event ${event.type}`;
  if (!isObject(event.data)) return `${where}: data must be an object`;
  const object = event.data.object;
  if (!isObject(object)) return `${where}: data.object must be an object`;
  for (const [field, ok, rule] of rules) if (!ok(object[field])) return `${where}: data.object.${field} must be ${rule}`;
  return undefined;
}

/** A failed call to Stripe's API: the status we answer with, and what the log needs to find the cause. */
export interface StripeFailure {
  /** 503 when Stripe could not be reached or is failing itself (try again later), 502 when it refused our call. */
  status: 502 | 503;
  cause: { type: string; statusCode: number | null; code: string | null; requestId: string | null; message: string };
}

/** Never Stripe's own status passed through: a 404 from Stripe is not a 404 of ours. */
export function stripeFailure(err: unknown): StripeFailure {
  if (err instanceof Stripe.errors.StripeError) {
    const statusCode = err.statusCode ?? null;
    const unavailable = err instanceof Stripe.errors.StripeConnectionError || statusCode === null || statusCode === 429 || statusCode >= 500;
    return { status: unavailable ? 503 : 502, cause: { type: err.type, statusCode, code: err.code ?? null, requestId: err.requestId ?? null, message: err.message } };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { status: 502, cause: { type: err instanceof Error ? err.name : typeof err, statusCode: null, code: null, requestId: null, message } };
}

const idOf = (v: string | { id: string } | null | undefined): string | null => (v == null ? null : typeof v === 'string' ? v : v.id);
const iso = (seconds: number | null | undefined): string | null => (typeof seconds === 'number' ? new Date(seconds * 1000).toISOString() : null);

interface SubscriptionFields {
  customerId: string | null;
  subscriptionId: string;
  priceId: string | null;
  status: string;
  periodStart: string | null;
  periodEnd: string | null;
  cancelAtPeriodEnd: boolean;
  userIdHint: string | null;
}

function fieldsOf(sub: Stripe.Subscription): SubscriptionFields {
  // Since API version 2025-03-31 the billing period lives on the subscription items; older versions had it on
  // the subscription itself.
  const item = sub.items?.data?.[0] as (Stripe.SubscriptionItem & { current_period_start?: number; current_period_end?: number }) | undefined;
  const legacy = sub as unknown as { current_period_start?: number; current_period_end?: number };
  return {
    customerId: idOf(sub.customer as string | { id: string }),
    subscriptionId: sub.id,
    priceId: item?.price?.id ?? null,
    status: sub.status,
    periodStart: iso(item?.current_period_start ?? legacy.current_period_start),
    periodEnd: iso(item?.current_period_end ?? legacy.current_period_end),
    cancelAtPeriodEnd: sub.cancel_at_period_end === true,
    userIdHint: typeof sub.metadata?.userId === 'string' ? sub.metadata.userId : null,
  };
}

function userExists(db: DB, id: string | null): id is string {
  return id !== null && db.prepare('SELECT 1 FROM users WHERE id = ?').get(id) !== undefined;
}

function userForCustomer(db: DB, customerId: string | null): string | null {
  if (customerId === null) return null;
  const row = db.prepare('SELECT user_id FROM subscriptions WHERE stripe_customer_id = ?').get(customerId) as { user_id: string } | undefined;
  return row?.user_id ?? null;
}

/**
 * Writes a subscription's fields to the user's row, unless the row already holds newer news of the same
 * subscription. `created` is the event's creation time (Unix seconds); `fresh` marks fields fetched from
 * Stripe just now rather than carried by the event. Returns why it did nothing, or undefined when it wrote.
 */
function writeSubscription(db: DB, userId: string, f: SubscriptionFields, created: number, fresh = false): string | undefined {
  const current = db
    .prepare('SELECT stripe_subscription_id AS sid, status, stripe_event_created AS created FROM subscriptions WHERE user_id = ?')
    .get(userId) as { sid: string | null; status: string; created: number | null } | undefined;
  // A late event about an older subscription must not overwrite the one the user pays for now.
  if (current?.sid && current.sid !== f.subscriptionId && (PAYING_STATUSES as readonly string[]).includes(current.status) && !(PAYING_STATUSES as readonly string[]).includes(f.status)) {
    return `ignored: user ${userId} pays through ${current.sid}`;
  }
  if (current?.sid === f.subscriptionId) {
    if (current.status === 'canceled' && f.status !== 'canceled') return `ignored: ${f.subscriptionId} is canceled`;
    if (!fresh && current.created !== null && created < current.created) return `ignored: older than the last event applied to ${f.subscriptionId}`;
  }
  db.prepare(
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
}

/** For checkout.session.completed: the session's subscription, fetched from Stripe before the transaction. */
export async function prefetchSubscription(stripe: Stripe, event: Stripe.Event): Promise<Stripe.Subscription | undefined> {
  if (event.type !== 'checkout.session.completed') return undefined;
  const session = event.data.object;
  const id = idOf(session.subscription as string | { id: string } | null);
  if (session.mode !== 'subscription' || id === null) return undefined;
  return stripe.subscriptions.retrieve(id);
}

/** Applies one verified, first-seen event. Returns what it did, for the log. */
export function applyEvent(db: DB, event: Stripe.Event, prefetched: Stripe.Subscription | undefined): string {
  switch (event.type) {
    case 'checkout.session.completed': {
      const session = event.data.object;
      const userId = session.client_reference_id ?? null;
      if (!userExists(db, userId)) return `ignored: no user ${String(userId)}`;
      if (prefetched === undefined) return 'ignored: not a subscription checkout';
      const fields = { ...fieldsOf(prefetched), customerId: idOf(session.customer as string | { id: string } | null) ?? fieldsOf(prefetched).customerId };
      return writeSubscription(db, userId, fields, event.created, true) ?? `subscription ${prefetched.id} ${prefetched.status} for user ${userId}`;
    }
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted': {
      const f = fieldsOf(event.data.object);
      if (event.type === 'customer.subscription.deleted' && f.status !== 'canceled') f.status = 'canceled';
      const userId = userForCustomer(db, f.customerId) ?? f.userIdHint;
      if (!userExists(db, userId)) return `ignored: no user for customer ${String(f.customerId)}`;
      return writeSubscription(db, userId, f, event.created) ?? `subscription ${f.subscriptionId} ${f.status} for user ${userId}`;
    }
    case 'invoice.payment_failed': {
      const customerId = idOf(event.data.object.customer as string | { id: string } | null);
      const changed = db
        .prepare(
          `UPDATE subscriptions SET status = 'past_due', stripe_event_created = ?
           WHERE stripe_customer_id = ? AND status IN ('active', 'trialing') AND COALESCE(stripe_event_created, 0) <= ?`,
        )
        .run(event.created, customerId, event.created).changes;
      return `payment failed for customer ${String(customerId)}${changed ? ': past_due' : ''}`;
    }
    default:
      return `ignored: ${event.type}`;
  }
}
