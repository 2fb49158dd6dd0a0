// Stripe: the official SDK, pointed at STRIPE_API_BASE when set (tests: a loopback
// stand-in), and the webhook events that keep the `subscriptions` row of a user in step with Stripe.
//
// Contract of `changeOf(event, prefetched)`: what the event asks of the subscriptions, which the store applies
// with the event id in one transaction (store/store.ts stripeEvents.apply: a replayed event is never applied
// twice; the ordering rules below are the store's). Handled:
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
import type Stripe from 'stripe';
import type { StripeChange, SubscriptionFields } from '../../store/store.ts';
import type { StripeSettings } from './config.ts';

/** The SDK, loaded by createStripeClient when payments are configured (~0.3 s of CPU): a server without Stripe
 * starts without it. Only such a server calls Stripe, so an error can be Stripe's only once it is loaded. */
let sdk: typeof Stripe | undefined;

export async function createStripeClient(settings: StripeSettings): Promise<Stripe> {
  sdk ??= (await import('stripe')).default;
  const base = settings.apiBase;
  return new sdk(settings.secretKey, {
    maxNetworkRetries: 1,
    timeout: 20_000,
    telemetry: false,
    ...(base
      ? {
          host: base.hostname,
          port: base.port || (base.protocol === 'https:' ? 443 : 80),
          protocol: base.protocol === 'https:' ? 'https' : 'http',
        }
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
 * A signature proves who sent the bytes, not that they have the shape the SDK's types promise (an
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
  for (const [field, ok, rule] of rules)
    if (!ok(object[field])) return `${where}: data.object.${field} must be ${rule}`;
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
  if (sdk !== undefined && err instanceof sdk.errors.StripeError) {
    const statusCode = err.statusCode ?? null;
    const unavailable =
      err instanceof sdk.errors.StripeConnectionError || statusCode === null || statusCode === 429 || statusCode >= 500;
    return {
      status: unavailable ? 503 : 502,
      cause: {
        type: err.type,
        statusCode,
        code: err.code ?? null,
        requestId: err.requestId ?? null,
        message: err.message,
      },
    };
  }
  const message = err instanceof Error ? err.message : String(err);
  return {
    status: 502,
    cause: {
      type: err instanceof Error ? err.name : typeof err,
      statusCode: null,
      code: null,
      requestId: null,
      message,
    },
  };
}

const idOf = (v: string | { id: string } | null | undefined): string | null =>
  v == null ? null : typeof v === 'string' ? v : v.id;
const iso = (seconds: number | null | undefined): string | null =>
  typeof seconds === 'number' ? new Date(seconds * 1000).toISOString() : null;

interface EventFields extends SubscriptionFields {
  userIdHint: string | null;
}

function fieldsOf(sub: Stripe.Subscription): EventFields {
  // Since API version 2025-03-31 the billing period lives on the subscription items; older versions had it on
  // the subscription itself.
  const item = sub.items?.data?.[0] as
    (Stripe.SubscriptionItem & { current_period_start?: number; current_period_end?: number }) | undefined;
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

/** For checkout.session.completed: the session's subscription, fetched from Stripe before the transaction. */
export async function prefetchSubscription(
  stripe: Stripe,
  event: Stripe.Event,
): Promise<Stripe.Subscription | undefined> {
  if (event.type !== 'checkout.session.completed') return undefined;
  const session = event.data.object;
  const id = idOf(session.subscription as string | { id: string } | null);
  if (session.mode !== 'subscription' || id === null) return undefined;
  return stripe.subscriptions.retrieve(id);
}

const withoutHint = ({ userIdHint: _hint, ...fields }: EventFields): SubscriptionFields => fields;

/** What one verified event asks of the subscriptions (the store applies it, store/store.ts). */
export function changeOf(event: Stripe.Event, prefetched: Stripe.Subscription | undefined): StripeChange {
  switch (event.type) {
    case 'checkout.session.completed': {
      const session = event.data.object;
      const userId = session.client_reference_id ?? null;
      if (prefetched === undefined) return { kind: 'checkout', userId, fields: null };
      const fields = {
        ...withoutHint(fieldsOf(prefetched)),
        customerId: idOf(session.customer as string | { id: string } | null) ?? fieldsOf(prefetched).customerId,
      };
      return { kind: 'checkout', userId, fields };
    }
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted': {
      const f = fieldsOf(event.data.object);
      if (event.type === 'customer.subscription.deleted' && f.status !== 'canceled') f.status = 'canceled';
      return { kind: 'subscription', userIdHint: f.userIdHint, fields: withoutHint(f) };
    }
    case 'invoice.payment_failed':
      return { kind: 'payment-failed', customerId: idOf(event.data.object.customer as string | { id: string } | null) };
    default:
      return { kind: 'none', outcome: `ignored: ${event.type}` };
  }
}
