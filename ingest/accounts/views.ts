// What the account routes answer with: the JSON schemas of their bodies and answers, and the views of a user
// and of a subscription (the Stripe customer id never leaves the server).
import type { FastifyRequest } from 'fastify';
import { SINGLE_LINE } from '../schemas.ts';
import type { AccountServices } from './services.ts';
import type { SessionUser } from './sessions.ts';

/** A one-line string of at most `maxLength` characters. */
export const str = (maxLength: number) => ({ type: 'string', maxLength, pattern: SINGLE_LINE }) as const;
export const messageSchema = {
  type: 'object',
  properties: { message: { type: 'string' } },
  required: ['message'],
} as const;
export const urlSchema = { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] } as const;
/** Bodies of the POST routes that take none: nothing, or an empty JSON object. */
export const emptyBody = { type: 'object', properties: {}, additionalProperties: false } as const;
/** Route option for those routes: an absent body is validated as `{}` (the site's Logout sends no body). */
export const noBodyIsEmpty = async (request: FastifyRequest): Promise<void> => {
  request.body ??= {};
};

export const subscriptionSchema = {
  type: 'object',
  properties: {
    status: { type: 'string' },
    stripePriceId: { type: ['string', 'null'] },
    currentPeriodEnd: { type: ['string', 'null'] },
    cancelAtPeriodEnd: { type: 'boolean' },
    plan: { type: ['string', 'null'] },
  },
  required: ['status', 'stripePriceId', 'currentPeriodEnd', 'cancelAtPeriodEnd', 'plan'],
} as const;

export const userSchema = {
  type: 'object',
  properties: {
    username: { type: 'string' },
    email: { type: 'string' },
    emailVerified: { type: 'boolean' },
    subscription: subscriptionSchema,
  },
  required: ['username', 'email', 'emailVerified'],
} as const;

export interface SubscriptionView {
  status: string;
  stripePriceId: string | null;
  currentPeriodEnd: string | null;
  cancelAtPeriodEnd: boolean;
  /** "Standard Monthly" when the price id is STRIPE_PRICE_MONTHLY, else "Standard Annual"; null when free. */
  plan: string | null;
  stripeCustomerId: string | null;
}

export const PAYING = new Set(['active', 'trialing']);

export async function subscriptionOf(s: AccountServices, userId: string): Promise<SubscriptionView | undefined> {
  const row = await s.store.subscriptions.get(userId);
  if (!row) return undefined;
  const monthly = s.accounts.stripe?.priceMonthly;
  return {
    status: row.status,
    stripePriceId: row.priceId,
    currentPeriodEnd: row.periodEnd,
    cancelAtPeriodEnd: row.cancelAtPeriodEnd,
    plan: PAYING.has(row.status)
      ? row.priceId !== null && row.priceId === monthly
        ? 'Standard Monthly'
        : 'Standard Annual'
      : null,
    stripeCustomerId: row.customerId,
  };
}

export function publicSubscription(view: SubscriptionView | undefined) {
  if (!view)
    return { status: 'inactive', stripePriceId: null, currentPeriodEnd: null, cancelAtPeriodEnd: false, plan: null };
  const { stripeCustomerId: _hidden, ...rest } = view;
  return rest;
}

/** The current user as `/api/auth/me`, login and sign-up answer it. */
export async function meOf(s: AccountServices, user: SessionUser) {
  const sub = await subscriptionOf(s, user.id);
  return {
    username: user.username,
    email: user.email,
    emailVerified: user.emailVerified,
    ...(sub ? { subscription: publicSubscription(sub) } : {}),
  };
}
