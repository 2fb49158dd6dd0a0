// The accounts API (ingest/accounts/README.md; docs/API.md "Accounts"): sign-up, login, logout, e-mail
// verification, password reset, the current user, the subscription, quota and history of a paying user, and
// Stripe checkout, billing portal and webhook.
//
// Encapsulation (ingest/README.md; ingest/app.ts registers `accountRoutes` beside publicRoutes):
//   accountRoutes
//   ├─ browser context    CSRF origin check and the session lookup on every request (onRequest hook)
//   │  ├─ openRoutes      (open-routes.ts) anonymous allowed: signup, login, logout, me, verify-email,
//   │  │                  forgot/reset-password, GET /api/stripe/config
//   │  └─ memberRoutes    (member-routes.ts) a preHandler refuses requests without a session (401):
//   │                     resend-verification, subscription, quota/usage, timestamps, create-checkout, create-portal
//   └─ webhookRoutes      (webhook-route.ts) POST /api/stripe/webhook: its own raw-body parser, Stripe's
//                         signature, no cookies
// No URL prefix decides who is authenticated: the context a route is registered in does.
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { ClientError } from '../errors.ts';
import { accountThrottles, type AccountServices } from './services.ts';
import { CROSS_ORIGIN_ERROR, sameOriginAllowed, sessionUser, type SessionUser } from './sessions.ts';
import { createStripeClient } from './stripe.ts';
import { memberRoutes } from './member-routes.ts';
import { openRoutes } from './open-routes.ts';
import { webhookRoutes } from './webhook-route.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The session's user in the account contexts (undefined when logged out). */
    account?: SessionUser;
  }
}

export const accountRoutes: FastifyPluginAsync<AccountServices> = async (app, s) => {
  const throttles = accountThrottles(s.store);
  const stripe = s.accounts.stripe ? await createStripeClient(s.accounts.stripe) : undefined;

  await app.register(async (browser: FastifyInstance) => {
    browser.decorateRequest('account', undefined);
    browser.addHook('onRequest', async (request) => {
      if (!sameOriginAllowed(request, s.accounts.origin)) throw new ClientError(403, CROSS_ORIGIN_ERROR);
      request.account = await sessionUser(s.store, request, s.clock());
    });
    await browser.register(openRoutes(throttles), s);
    await browser.register(memberRoutes(throttles, stripe), s);
  });
  await app.register(webhookRoutes(stripe), s);
};
