// The account routes for logged-in users only (a preHandler answers 401 without a session): resend the
// verification e-mail, the subscription, the quota and its use, the history of a paying user, and Stripe
// checkout and billing portal. Registered by routes.ts in the browser context (CSRF origin check, session lookup).
import type { FastifyRequest } from 'fastify';
import type Stripe from 'stripe';
import { utcDate } from '../../core/ledger.ts';
import { ClientError } from '../errors.ts';
import { clientKey, STANDARD_PER_MONTH, utcMonth } from '../limits.ts';
import { noQuery, plainErrors, type Answer, type TypedRoutes } from '../schemas.ts';
import { sendAccountMail, verificationMail, VERIFY_MS } from './emails.ts';
import type { AccountServices, AccountThrottles } from './services.ts';
import type { SessionUser } from './sessions.ts';
import { stripeFailure } from './stripe.ts';
import { TEXTS } from './texts.ts';
import { newToken, tokenHash } from './tokens.ts';
import {
  emptyBody,
  messageSchema,
  noBodyIsEmpty,
  PAYING,
  publicSubscription,
  subscriptionOf,
  subscriptionSchema,
  urlSchema,
} from './views.ts';

async function issueVerification(s: AccountServices, userId: string, now: Date): Promise<string> {
  const token = newToken();
  await s.store.users.setVerification(userId, tokenHash(token), new Date(now.getTime() + VERIFY_MS));
  return token;
}

/** GET /api/timestamps: the signed-in account's submissions. */
export const timestampHistorySchema = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      id: { type: 'integer' },
      fileName: { type: ['string', 'null'] },
      submittedAt: { type: 'string' },
      hash: { type: 'string' },
      ledgerDate: { type: ['string', 'null'] },
    },
    required: ['id', 'fileName', 'submittedAt', 'hash', 'ledgerDate'],
  },
} as const;
export type TimestampHistory = Answer<typeof timestampHistorySchema>;

/** Logged-in users only. */
export const memberRoutes =
  (throttles: AccountThrottles, stripe: Stripe | undefined): TypedRoutes<AccountServices> =>
  async (app, s) => {
    app.addHook('preHandler', async (request) => {
      if (!request.account) throw new ClientError(401, TEXTS.loginRequired);
    });
    const me = (request: FastifyRequest): SessionUser => request.account!;

    app.post(
      '/api/auth/resend-verification',
      {
        preValidation: noBodyIsEmpty,
        schema: { querystring: noQuery, body: emptyBody, response: { 200: messageSchema, ...plainErrors } },
      },
      async (request, reply) => {
        const user = me(request);
        if (user.emailVerified) throw new ClientError(400, TEXTS.alreadyVerified);
        const now = s.clock();
        const key = `account:${user.id}`;
        if (!(await throttles.verifyMails.attempt([key], now))) throw new ClientError(429, TEXTS.tooManyEmails);
        const token = await issueVerification(s, user.id, now);
        try {
          await sendAccountMail(s, request, verificationMail(s.accounts.origin, user.email, user.username, token));
        } catch (err) {
          request.log.error({ err }, 'verification e-mail failed');
          return reply.code(502).send({ error: TEXTS.mailFailed });
        }
        return { message: TEXTS.verificationSent };
      },
    );

    app.get(
      '/api/subscription',
      {
        schema: {
          querystring: noQuery,
          response: {
            200: {
              ...subscriptionSchema,
              properties: { ...subscriptionSchema.properties, paymentsAvailable: { type: 'boolean' } },
            },
            ...plainErrors,
          },
        },
      },
      async (request, reply) => {
        reply.header('Cache-Control', 'private, no-store');
        return {
          ...publicSubscription(await subscriptionOf(s, me(request).id)),
          paymentsAvailable: s.accounts.stripe !== undefined,
        };
      },
    );

    app.get(
      '/api/quota/usage',
      {
        schema: {
          querystring: noQuery,
          response: {
            200: {
              type: 'object',
              properties: {
                used: { type: 'integer' },
                limit: { type: 'integer' },
                period: { type: 'string', enum: ['month', 'day'] },
              },
              required: ['used', 'limit', 'period'],
            },
            ...plainErrors,
          },
        },
      },
      async (request, reply) => {
        reply.header('Cache-Control', 'private, no-store');
        const now = s.clock();
        const user = me(request);
        if (await s.store.subscriptions.isPaying(user.id))
          return {
            used: await s.store.limits.monthlyUsed(user.id, utcMonth(now)),
            limit: STANDARD_PER_MONTH,
            period: 'month' as const,
          };
        return {
          used: await s.store.limits.dailyUsed(clientKey(request.ip), utcDate(now)),
          limit: s.ingest.freePerDay,
          period: 'day' as const,
        };
      },
    );

    app.get(
      '/api/timestamps',
      {
        schema: {
          querystring: noQuery,
          response: {
            200: timestampHistorySchema,
            ...plainErrors,
          },
        },
      },
      async (request, reply) => {
        reply.header('Cache-Control', 'private, no-store');
        const user = me(request);
        if (!(await s.store.subscriptions.isPaying(user.id))) throw new ClientError(403, TEXTS.historyPaying);
        // Plain objects: the answer's type, read from its schema, admits other fields, which the store's interface does not.
        return (await s.store.history.list(user.id)).map((entry) => ({ ...entry }));
      },
    );

    app.post(
      '/api/stripe/create-checkout',
      {
        schema: {
          querystring: noQuery,
          body: {
            type: 'object',
            properties: { billingPeriod: { type: 'string', enum: ['monthly', 'annual'] } },
            required: ['billingPeriod'],
            additionalProperties: false,
          },
          response: { 200: urlSchema, ...plainErrors },
        },
      },
      async (request, reply) => {
        const settings = s.accounts.stripe;
        if (!settings || !stripe) return reply.code(503).send({ error: TEXTS.paymentsUnavailable });
        const user = me(request);
        if (!user.emailVerified) throw new ClientError(403, TEXTS.verifyFirst);
        const current = await subscriptionOf(s, user.id);
        if (current && PAYING.has(current.status)) throw new ClientError(409, TEXTS.alreadySubscribed);
        try {
          let customer = current?.stripeCustomerId ?? null;
          if (!customer) {
            customer = (
              await stripe.customers.create(
                { email: user.email, metadata: { userId: user.id } },
                { idempotencyKey: `customer-${user.id}` },
              )
            ).id;
            customer = await s.store.subscriptions.setCustomer(user.id, customer);
          }
          const session = await stripe.checkout.sessions.create({
            mode: 'subscription',
            customer,
            client_reference_id: user.id,
            line_items: [
              {
                price: request.body.billingPeriod === 'monthly' ? settings.priceMonthly : settings.priceAnnual,
                quantity: 1,
              },
            ],
            subscription_data: { metadata: { userId: user.id } },
            success_url: `${s.accounts.origin}/dashboard?checkout=success`,
            cancel_url: `${s.accounts.origin}/pricing`,
          });
          if (!session.url) throw new Error('checkout session without url');
          return { url: session.url };
        } catch (err) {
          const failure = stripeFailure(err);
          request.log.error({ err, stripe: failure.cause }, 'stripe checkout failed');
          return reply.code(failure.status).send({ error: TEXTS.stripeFailed });
        }
      },
    );

    app.post(
      '/api/stripe/create-portal',
      {
        preValidation: noBodyIsEmpty,
        schema: { querystring: noQuery, body: emptyBody, response: { 200: urlSchema, ...plainErrors } },
      },
      async (request, reply) => {
        if (!s.accounts.stripe || !stripe) return reply.code(503).send({ error: TEXTS.paymentsUnavailable });
        const customer = (await subscriptionOf(s, me(request).id))?.stripeCustomerId;
        if (!customer) throw new ClientError(400, TEXTS.noBillingAccount);
        try {
          const session = await stripe.billingPortal.sessions.create({
            customer,
            return_url: `${s.accounts.origin}/dashboard`,
          });
          return { url: session.url };
        } catch (err) {
          const failure = stripeFailure(err);
          request.log.error({ err, stripe: failure.cause }, 'stripe portal failed');
          return reply.code(failure.status).send({ error: TEXTS.stripeFailed });
        }
      },
    );
  };
