// Stripe's webhook, POST /api/stripe/webhook, in a context of its own: its own raw-body parser (1 MiB; the
// signature covers the exact bytes), no cookies, no CSRF check. A signed event is checked for shape, recorded
// by id in the same transaction that applies it (a replay changes nothing), and a Stripe failure while
// handling it is our 502 or 503, so that Stripe retries it.
import type Stripe from 'stripe';
import { ClientError } from '../errors.ts';
import { noQuery, plainErrors, type TypedRoutes } from '../schemas.ts';
import type { AccountServices } from './services.ts';
import { changeOf, eventProblem, prefetchSubscription, stripeFailure } from './stripe.ts';
import { TEXTS } from './texts.ts';

/** Stripe's webhook: the raw body (the signature covers its exact bytes), no session, no CSRF check. */
export const webhookRoutes =
  (stripe: Stripe | undefined): TypedRoutes<AccountServices> =>
  async (app, s) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer', bodyLimit: 1024 * 1024 },
      (_request, body, done) => done(null, body),
    );
    app.post(
      '/api/stripe/webhook',
      {
        bodyLimit: 1024 * 1024,
        schema: {
          querystring: noQuery,
          response: {
            200: {
              type: 'object',
              properties: { received: { type: 'boolean' }, duplicate: { type: 'boolean' } },
              required: ['received'],
            },
            ...plainErrors,
          },
        },
      },
      async (request, reply) => {
        const secret = s.accounts.stripe?.webhookSecret;
        if (!stripe || !secret) return reply.code(503).send({ error: TEXTS.webhooksUnavailable });
        const signature = request.headers['stripe-signature'];
        if (typeof signature !== 'string' || !Buffer.isBuffer(request.body))
          throw new ClientError(400, TEXTS.badSignature);
        let event: Stripe.Event;
        try {
          event = stripe.webhooks.constructEvent(request.body, signature, secret);
        } catch {
          throw new ClientError(400, TEXTS.badSignature);
        }
        // Signed, but not necessarily of the shape we read: refused before anything is recorded or fetched.
        const problem = eventProblem(event);
        if (problem !== undefined) {
          request.log.warn({ problem, eventId: (event as { id?: unknown } | null)?.id }, 'stripe event refused');
          throw new ClientError(400, problem);
        }
        if (await s.store.stripeEvents.seen(event.id)) return { received: true, duplicate: true };
        // Fetched before the transaction (network), applied inside it. A failure is our 502 or 503 (never
        // Stripe's own status), with Stripe's answer in the log; the event is not recorded, so Stripe retries it.
        let prefetched: Stripe.Subscription | undefined;
        try {
          prefetched = await prefetchSubscription(stripe, event);
        } catch (err) {
          const failure = stripeFailure(err);
          request.log.error(
            { err, stripe: failure.cause, event: event.type, eventId: event.id },
            'stripe API call failed while handling a webhook event',
          );
          return reply.code(failure.status).send({ error: TEXTS.webhookStripeFailed });
        }
        const outcome = await s.store.stripeEvents.apply(
          { id: event.id, type: event.type, created: event.created, receivedAt: s.clock() },
          changeOf(event, prefetched),
        );
        if (outcome === undefined) return { received: true, duplicate: true };
        request.log.info({ event: event.type, outcome }, 'stripe event');
        return { received: true };
      },
    );
  };
