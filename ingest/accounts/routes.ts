// The accounts API (ingest/accounts/README.md; docs/API.md "Accounts"): sign-up, login, logout, e-mail
// verification, password reset, the current user, the subscription, quota and history of a paying user, and
// Stripe checkout, billing portal and webhook.
//
// Encapsulation (ingest/README.md; ingest/app.ts registers `accountRoutes` beside publicRoutes):
//   accountRoutes
//   ├─ browserRoutes      CSRF origin check and the session lookup on every request (onRequest hook)
//   │  ├─ openRoutes      anonymous allowed: signup, login, logout, me, verify-email, forgot/reset-password,
//   │  │                  GET /api/stripe/config
//   │  └─ memberRoutes    a preHandler refuses requests without a session (401): resend-verification,
//   │                     subscription, quota/usage, timestamps, create-checkout, create-portal
//   └─ webhookRoutes      POST /api/stripe/webhook: its own raw-body parser, Stripe's signature, no cookies
// No URL prefix decides who is authenticated: the context a route is registered in does.
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type Stripe from 'stripe';
import { ClientError } from '../errors.ts';
import { isEmail } from '../routes/forms.ts';
import { clientKey, STANDARD_PER_MONTH, utcMonth } from '../limits.ts';
import { utcDate } from '../../core/ledger.ts';
import { UniqueViolationError } from '../../store/store.ts';
import { noQuery, plainErrors, SINGLE_LINE } from '../schemas.ts';
import type { Services } from '../services.ts';
import type { AccountsConfig } from './config.ts';
import { resetMail, RESET_MINUTES, verificationMail, VERIFY_HOURS, type AccountMail } from './emails.ts';
import { dummyHash, hashPassword, PASSWORD_MAX, PASSWORD_MIN, verifyPassword } from './passwords.ts';
import {
  clearSessionCookie,
  createSession,
  CROSS_ORIGIN_ERROR,
  destroySession,
  pruneSessions,
  readCookie,
  sameOriginAllowed,
  SESSION_COOKIE,
  sessionUser,
  setSessionCookie,
  type SessionUser,
} from './sessions.ts';
import { changeOf, createStripeClient, eventProblem, prefetchSubscription, stripeFailure } from './stripe.ts';
import { LoginThrottle, Throttle, THROTTLED_ERROR } from '../throttle.ts';
import { isTokenShape, newToken, tokenHash } from './tokens.ts';

export type AccountServices = Services & { accounts: AccountsConfig };

declare module 'fastify' {
  interface FastifyRequest {
    /** The session's user in the account contexts (undefined when logged out). */
    account?: SessionUser;
  }
}

/** Texts: the product's where it gives them, ours otherwise (docs/API.md "Accounts"). */
export const TEXTS = {
  loginRequired: 'Please log in first.',
  usernameRequired: 'Username is required',
  emailRequired: 'Email is required',
  passwordRequired: 'Password is required',
  usernameRule: 'Username must be 3 to 32 characters: letters, digits, dot, dash or underscore',
  invalidEmail: 'Please enter a valid email address',
  passwordShort: 'Password must be at least 8 characters',
  terms: 'You must agree to the Terms of Service and Privacy Policy',
  usernameTaken: 'That username is already taken',
  emailTaken: 'An account with that email already exists',
  badLogin: 'Invalid username or password',
  loginFields: 'Username and password are required',
  loggedOut: 'Logged out',
  noVerificationToken: 'No verification token provided',
  badVerificationToken: 'Invalid or expired verification link',
  verified: 'Your email address has been verified. You can now subscribe to a paid plan.',
  alreadyVerified: 'Your email address is already verified',
  verificationSent: 'Verification email sent. Please check your inbox.',
  tooManyEmails: 'Too many emails requested. Please wait an hour and try again.',
  mailFailed: 'Could not send the email right now. Please try again later.',
  forgotSent: 'If an account exists with that email, a password reset link has been sent',
  forgotEmail: 'Please enter your email address',
  badResetToken: 'Invalid or expired reset token',
  resetDone: 'You can now log in with your new password',
  historyPaying: 'Timestamp history is part of the Standard plan.',
  paymentsUnavailable: 'Payments are not available on this server.',
  webhooksUnavailable: 'Stripe webhooks are not configured on this server.',
  verifyFirst: 'Please verify your email address before subscribing.',
  alreadySubscribed: 'You already have an active Standard subscription. Manage it from your dashboard.',
  noBillingAccount: 'No billing account yet: subscribe to the Standard plan first.',
  stripeFailed: 'The payment provider could not be reached. Please try again.',
  webhookStripeFailed: "Could not fetch this event's subscription from Stripe; please retry the event.",
  badSignature: 'Invalid Stripe signature',
  tooManyRequests: 'Too many requests. Please wait and try again.',
} as const;

const USERNAME = /^[A-Za-z0-9_.-]{3,32}$/;
const RESET_MS = RESET_MINUTES * 60_000;
const VERIFY_MS = VERIFY_HOURS * 3_600_000;

const str = (maxLength: number) => ({ type: 'string', maxLength, pattern: SINGLE_LINE }) as const;
const messageSchema = { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } as const;
const urlSchema = { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] } as const;
/** Bodies of the POST routes that take none: nothing, or an empty JSON object. */
const emptyBody = { type: 'object', properties: {}, additionalProperties: false } as const;
/** Route option for those routes: an absent body is validated as `{}` (the site's Logout sends no body). */
const noBodyIsEmpty = async (request: FastifyRequest): Promise<void> => {
  request.body ??= {};
};

const subscriptionSchema = {
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

const userSchema = {
  type: 'object',
  properties: {
    username: { type: 'string' },
    email: { type: 'string' },
    emailVerified: { type: 'boolean' },
    subscription: subscriptionSchema,
  },
  required: ['username', 'email', 'emailVerified'],
} as const;

interface SubscriptionView {
  status: string;
  stripePriceId: string | null;
  currentPeriodEnd: string | null;
  cancelAtPeriodEnd: boolean;
  /** "Standard Monthly" when the price id is STRIPE_PRICE_MONTHLY, else "Standard Annual"; null when free. */
  plan: string | null;
  stripeCustomerId: string | null;
}

const PAYING = new Set(['active', 'trialing']);

async function subscriptionOf(s: AccountServices, userId: string): Promise<SubscriptionView | undefined> {
  const row = await s.store.subscriptions.get(userId);
  if (!row) return undefined;
  const monthly = s.accounts.stripe?.priceMonthly;
  return {
    status: row.status,
    stripePriceId: row.priceId,
    currentPeriodEnd: row.periodEnd,
    cancelAtPeriodEnd: row.cancelAtPeriodEnd,
    plan: PAYING.has(row.status) ? (row.priceId !== null && row.priceId === monthly ? 'Standard Monthly' : 'Standard Annual') : null,
    stripeCustomerId: row.customerId,
  };
}

function publicSubscription(view: SubscriptionView | undefined) {
  if (!view) return { status: 'inactive', stripePriceId: null, currentPeriodEnd: null, cancelAtPeriodEnd: false, plan: null };
  const { stripeCustomerId: _hidden, ...rest } = view;
  return rest;
}

/** Sends an account e-mail and, when it went to the outbox (no SMTP_URL: `make start`), logs the file's path;
 * never its link, which is a live credential (a password reset or an e-mail verification). */
async function sendAccountMail(s: AccountServices, request: FastifyRequest, mail: AccountMail): Promise<void> {
  const receipt = await s.mailer.send(mail);
  if (receipt.via === 'outbox') request.log.info({ path: receipt.path }, `account e-mail for the outbox: ${mail.subject}`);
}

/** Fire and forget: the answer never waits for (or reveals) the mail server. Failures are logged. */
function sendInBackground(s: AccountServices, request: FastifyRequest, mail: AccountMail): void {
  sendAccountMail(s, request, mail).catch((err: unknown) => request.log.error({ err }, 'account e-mail failed'));
}

/**
 * After a forgot-password answer: when `email` has an account and fewer than 5 reset e-mails went to it this
 * hour, a new reset token replaces the previous one and the e-mail leaves in the background.
 */
async function sendResetIfRegistered(s: AccountServices, throttles: Throttles, request: FastifyRequest, email: string, now: Date): Promise<void> {
  const user = await s.store.users.byEmail(email);
  if (!user || !(await throttles.resetMails.attempt([`account:${user.id}`], now))) return;
  const token = newToken();
  await s.store.users.setReset(user.id, tokenHash(token), new Date(now.getTime() + RESET_MS));
  sendInBackground(s, request, resetMail(s.accounts.origin, email, user.username, token));
}

async function issueVerification(s: AccountServices, userId: string, now: Date): Promise<string> {
  const token = newToken();
  await s.store.users.setVerification(userId, tokenHash(token), new Date(now.getTime() + VERIFY_MS));
  return token;
}

async function startSession(s: AccountServices, request: FastifyRequest, reply: FastifyReply, userId: string, now: Date): Promise<void> {
  const previous = readCookie(request, SESSION_COOKIE);
  if (previous) await destroySession(s.store, previous);
  setSessionCookie(reply, request, s.accounts.origin, await createSession(s.store, userId, now));
  if (Math.random() < 0.01) await pruneSessions(s.store, now);
}

async function meOf(s: AccountServices, user: SessionUser) {
  const sub = await subscriptionOf(s, user.id);
  return { username: user.username, email: user.email, emailVerified: user.emailVerified, ...(sub ? { subscription: publicSubscription(sub) } : {}) };
}

/** Anonymous allowed (a session is used when present). */
const openRoutes = (throttles: Throttles): FastifyPluginAsync<AccountServices> => async (app, s) => {
  app.post<{ Body: { username: string; email: string; password: string; agreeTerms: boolean; newsletterSubscribed?: boolean } }>(
    '/api/auth/signup',
    {
      schema: {
        querystring: noQuery,
        body: {
          type: 'object',
          properties: { username: str(64), email: str(254), password: { type: 'string', maxLength: PASSWORD_MAX }, agreeTerms: { type: 'boolean' }, newsletterSubscribed: { type: 'boolean' } },
          required: ['username', 'email', 'password', 'agreeTerms'],
          additionalProperties: false,
        },
        response: { 201: userSchema, ...plainErrors },
      },
    },
    async (request, reply) => {
      const username = request.body.username.trim();
      const email = request.body.email.trim().toLowerCase();
      const { password, agreeTerms } = request.body;
      if (!username) throw new ClientError(400, TEXTS.usernameRequired);
      if (!email) throw new ClientError(400, TEXTS.emailRequired);
      if (!password) throw new ClientError(400, TEXTS.passwordRequired);
      if (!USERNAME.test(username)) throw new ClientError(400, TEXTS.usernameRule);
      if (!isEmail(email)) throw new ClientError(400, TEXTS.invalidEmail);
      if (password.length < PASSWORD_MIN) throw new ClientError(400, TEXTS.passwordShort);
      if (agreeTerms !== true) throw new ClientError(400, TEXTS.terms);
      const now = s.clock();
      // Each sign-up e-mails an address of the caller's choosing, and a 409 tells whether a name or address
      // is taken: both are limited per client address (counted before the asynchronous password hashing).
      if (!(await throttles.signup.attempt([`ip:${clientKey(request.ip)}`], now))) throw new ClientError(429, TEXTS.tooManyRequests);
      const id = crypto.randomUUID();
      const passwordHash = await hashPassword(password, s.accounts.passwordCost);
      const token = newToken();
      try {
        await s.store.users.create({
          id,
          username,
          email,
          passwordHash,
          newsletter: request.body.newsletterSubscribed === true,
          createdAt: now,
          verification: { tokenHash: tokenHash(token), expires: new Date(now.getTime() + VERIFY_MS) },
        });
      } catch (err) {
        if (err instanceof UniqueViolationError) throw new ClientError(409, err.field === 'email' ? TEXTS.emailTaken : TEXTS.usernameTaken);
        throw err;
      }
      await startSession(s, request, reply, id, now);
      // The address an account was created from is its owner's (the login throttle spares it).
      await throttles.login.remember(`account:${id}`, clientKey(request.ip), now);
      const mail = verificationMail(s.accounts.origin, email, username, token);
      sendInBackground(s, request, mail);
      return reply.code(201).send({ username, email, emailVerified: false });
    },
  );

  app.post<{ Body: { username: string; password: string } }>(
    '/api/auth/login',
    {
      schema: {
        querystring: noQuery,
        body: {
          type: 'object',
          properties: { username: str(254), password: { type: 'string', maxLength: PASSWORD_MAX } },
          required: ['username', 'password'],
          additionalProperties: false,
        },
        response: { 200: userSchema, ...plainErrors },
      },
    },
    async (request, reply) => {
      const name = request.body.username.trim();
      const { password } = request.body;
      if (!name || !password) throw new ClientError(400, TEXTS.loginFields);
      const now = s.clock();
      const row = await s.store.users.forLogin(name);
      // Failures count against the account, whichever of its username or e-mail was typed; a name without an
      // account counts under its own text, the same way, so the answers do not tell which names exist.
      const account = row ? `account:${row.id}` : `name:${name.toLowerCase()}`;
      // Counted before the (asynchronous) password check, so guesses sent at once cannot all get through.
      const attempt = await throttles.login.attempt(account, clientKey(request.ip), now);
      if (!attempt) throw new ClientError(429, THROTTLED_ERROR);
      // Without such a user, still spend one scrypt so that timing does not tell which names exist.
      const ok = await verifyPassword(password, row?.passwordHash ?? (await dummyHash(s.accounts.passwordCost)));
      if (!row || !ok) throw new ClientError(401, TEXTS.badLogin);
      await throttles.login.succeeded(attempt, now);
      await startSession(s, request, reply, row.id, now);
      const user = await s.store.users.get(row.id);
      if (!user) throw new ClientError(401, TEXTS.badLogin);
      return meOf(s, user);
    },
  );

  app.post(
    '/api/auth/logout',
    { preValidation: noBodyIsEmpty, schema: { querystring: noQuery, body: emptyBody, response: { 200: messageSchema, ...plainErrors } } },
    async (request, reply) => {
      const id = readCookie(request, SESSION_COOKIE);
      if (id) await destroySession(s.store, id);
      clearSessionCookie(reply, request, s.accounts.origin);
      return { message: TEXTS.loggedOut };
    },
  );

  app.get(
    '/api/auth/me',
    { schema: { querystring: noQuery, response: { 200: { anyOf: [{ type: 'null' }, userSchema] }, ...plainErrors } } },
    async (request, reply) => {
      reply.header('Cache-Control', 'private, no-store');
      return request.account ? meOf(s, request.account) : null;
    },
  );

  app.post<{ Body: { token?: string } }>(
    '/api/auth/verify-email',
    {
      schema: {
        querystring: noQuery,
        body: { type: 'object', properties: { token: { type: 'string', maxLength: 200 } }, additionalProperties: false },
        response: { 200: messageSchema, ...plainErrors },
      },
    },
    async (request) => {
      const token = request.body.token?.trim();
      if (!token) throw new ClientError(400, TEXTS.noVerificationToken);
      if (!isTokenShape(token)) throw new ClientError(400, TEXTS.badVerificationToken);
      const done = await s.store.users.verifyEmail(tokenHash(token), s.clock());
      // A used link opened again (or the success page reloaded) by the verified user's own session: the token
      // is gone (single use), but the session says the address is verified.
      if (!done && request.account?.emailVerified) return { message: TEXTS.alreadyVerified };
      if (!done) throw new ClientError(400, TEXTS.badVerificationToken);
      return { message: TEXTS.verified };
    },
  );

  // Forgot-password answers before it looks the address up: the look-up, the reset token and the e-mail run
  // once the answer has been sent (the route's onResponse hook), so the answer's timing is the same whether
  // or not the address has an account (a timing test told them apart 91 % of the time when the
  // token was made and the e-mail started before answering).
  const pendingResets = new WeakMap<FastifyRequest, { email: string; now: Date }>();
  app.post<{ Body: { email: string } }>(
    '/api/auth/forgot-password',
    {
      schema: {
        querystring: noQuery,
        body: { type: 'object', properties: { email: str(254) }, required: ['email'], additionalProperties: false },
        response: { 200: messageSchema, ...plainErrors },
      },
      onResponse: async (request) => {
        const pending = pendingResets.get(request);
        if (!pending) return;
        pendingResets.delete(request);
        // A later turn of the event loop: inject() (and any work queued behind this answer) is not held up.
        setImmediate(() => {
          sendResetIfRegistered(s, throttles, request, pending.email, pending.now).catch((err: unknown) => request.log.error({ err }, 'password reset e-mail failed'));
        });
      },
    },
    async (request) => {
      const email = request.body.email.trim().toLowerCase();
      if (!email) throw new ClientError(400, TEXTS.forgotEmail);
      if (!isEmail(email)) throw new ClientError(400, TEXTS.invalidEmail);
      const now = s.clock();
      if (!(await throttles.forgotIp.attempt([`ip:${clientKey(request.ip)}`], now))) throw new ClientError(429, TEXTS.tooManyRequests);
      pendingResets.set(request, { email, now });
      return { message: TEXTS.forgotSent };
    },
  );

  app.post<{ Body: { token: string; password: string } }>(
    '/api/auth/reset-password',
    {
      schema: {
        querystring: noQuery,
        body: {
          type: 'object',
          properties: { token: { type: 'string', maxLength: 200 }, password: { type: 'string', maxLength: PASSWORD_MAX } },
          required: ['token', 'password'],
          additionalProperties: false,
        },
        response: { 200: messageSchema, ...plainErrors },
      },
    },
    async (request) => {
      const { token, password } = request.body;
      const now = s.clock();
      const ipKey = `ip:${clientKey(request.ip)}`;
      if (await throttles.reset.blocked([ipKey], now)) throw new ClientError(429, THROTTLED_ERROR);
      if (password.length < PASSWORD_MIN) throw new ClientError(400, TEXTS.passwordShort);
      const userId = isTokenShape(token) ? await s.store.users.forReset(tokenHash(token), now) : undefined;
      const user = userId === undefined ? undefined : { id: userId };
      if (!user) {
        await throttles.reset.fail([ipKey], now);
        throw new ClientError(400, TEXTS.badResetToken);
      }
      if (await throttles.reset.blocked([`account:${user.id}`], now)) throw new ClientError(429, THROTTLED_ERROR);
      const passwordHash = await hashPassword(password, s.accounts.passwordCost);
      // Single use even under concurrency: only the request that still finds the token changes the password.
      const changed = await s.store.users.resetPassword(user.id, tokenHash(token), passwordHash);
      if (!changed) {
        await throttles.reset.fail([ipKey, `account:${user.id}`], now);
        throw new ClientError(400, TEXTS.badResetToken);
      }
      return { message: TEXTS.resetDone };
    },
  );

  app.get('/api/stripe/config', { schema: { querystring: noQuery, response: { 200: { type: 'object', properties: { paymentsAvailable: { type: 'boolean' } }, required: ['paymentsAvailable'] } } } }, async () => ({
    paymentsAvailable: s.accounts.stripe !== undefined,
  }));
};

/** Logged-in users only. */
const memberRoutes = (throttles: Throttles, stripe: Stripe | undefined): FastifyPluginAsync<AccountServices> => async (app, s) => {
  app.addHook('preHandler', async (request) => {
    if (!request.account) throw new ClientError(401, TEXTS.loginRequired);
  });
  const me = (request: FastifyRequest): SessionUser => request.account!;

  app.post(
    '/api/auth/resend-verification',
    { preValidation: noBodyIsEmpty, schema: { querystring: noQuery, body: emptyBody, response: { 200: messageSchema, ...plainErrors } } },
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

  app.get('/api/subscription', { schema: { querystring: noQuery, response: { 200: { ...subscriptionSchema, properties: { ...subscriptionSchema.properties, paymentsAvailable: { type: 'boolean' } } }, ...plainErrors } } }, async (request, reply) => {
    reply.header('Cache-Control', 'private, no-store');
    return { ...publicSubscription(await subscriptionOf(s, me(request).id)), paymentsAvailable: s.accounts.stripe !== undefined };
  });

  app.get(
    '/api/quota/usage',
    {
      schema: {
        querystring: noQuery,
        response: { 200: { type: 'object', properties: { used: { type: 'integer' }, limit: { type: 'integer' }, period: { type: 'string', enum: ['month', 'day'] } }, required: ['used', 'limit', 'period'] }, ...plainErrors },
      },
    },
    async (request, reply) => {
      reply.header('Cache-Control', 'private, no-store');
      const now = s.clock();
      const user = me(request);
      if (await s.store.subscriptions.isPaying(user.id)) return { used: await s.store.limits.monthlyUsed(user.id, utcMonth(now)), limit: STANDARD_PER_MONTH, period: 'month' };
      return { used: await s.store.limits.dailyUsed(clientKey(request.ip), utcDate(now)), limit: s.ingest.freePerDay, period: 'day' };
    },
  );

  app.get(
    '/api/timestamps',
    {
      schema: {
        querystring: noQuery,
        response: {
          200: {
            type: 'array',
            items: {
              type: 'object',
              properties: { id: { type: 'integer' }, fileName: { type: ['string', 'null'] }, submittedAt: { type: 'string' }, hash: { type: 'string' }, ledgerDate: { type: ['string', 'null'] } },
              required: ['id', 'fileName', 'submittedAt', 'hash', 'ledgerDate'],
            },
          },
          ...plainErrors,
        },
      },
    },
    async (request, reply) => {
      reply.header('Cache-Control', 'private, no-store');
      const user = me(request);
      if (!(await s.store.subscriptions.isPaying(user.id))) throw new ClientError(403, TEXTS.historyPaying);
      return s.store.history.list(user.id);
    },
  );

  app.post<{ Body: { billingPeriod: 'monthly' | 'annual' } }>(
    '/api/stripe/create-checkout',
    {
      schema: {
        querystring: noQuery,
        body: { type: 'object', properties: { billingPeriod: { type: 'string', enum: ['monthly', 'annual'] } }, required: ['billingPeriod'], additionalProperties: false },
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
          customer = (await stripe.customers.create({ email: user.email, metadata: { userId: user.id } }, { idempotencyKey: `customer-${user.id}` })).id;
          customer = await s.store.subscriptions.setCustomer(user.id, customer);
        }
        const session = await stripe.checkout.sessions.create({
          mode: 'subscription',
          customer,
          client_reference_id: user.id,
          line_items: [{ price: request.body.billingPeriod === 'monthly' ? settings.priceMonthly : settings.priceAnnual, quantity: 1 }],
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
    { preValidation: noBodyIsEmpty, schema: { querystring: noQuery, body: emptyBody, response: { 200: urlSchema, ...plainErrors } } },
    async (request, reply) => {
      if (!s.accounts.stripe || !stripe) return reply.code(503).send({ error: TEXTS.paymentsUnavailable });
      const customer = (await subscriptionOf(s, me(request).id))?.stripeCustomerId;
      if (!customer) throw new ClientError(400, TEXTS.noBillingAccount);
      try {
        const session = await stripe.billingPortal.sessions.create({ customer, return_url: `${s.accounts.origin}/dashboard` });
        return { url: session.url };
      } catch (err) {
        const failure = stripeFailure(err);
        request.log.error({ err, stripe: failure.cause }, 'stripe portal failed');
        return reply.code(failure.status).send({ error: TEXTS.stripeFailed });
      }
    },
  );
};

/** Stripe's webhook: the raw body (the signature covers its exact bytes), no session, no CSRF check. */
const webhookRoutes = (stripe: Stripe | undefined): FastifyPluginAsync<AccountServices> => async (app, s) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_request, body, done) => done(null, body));
  app.post<{ Body: Buffer }>(
    '/api/stripe/webhook',
    { bodyLimit: 1024 * 1024, schema: { querystring: noQuery, response: { 200: { type: 'object', properties: { received: { type: 'boolean' }, duplicate: { type: 'boolean' } }, required: ['received'] }, ...plainErrors } } },
    async (request, reply) => {
      const secret = s.accounts.stripe?.webhookSecret;
      if (!stripe || !secret) return reply.code(503).send({ error: TEXTS.webhooksUnavailable });
      const signature = request.headers['stripe-signature'];
      if (typeof signature !== 'string' || !Buffer.isBuffer(request.body)) throw new ClientError(400, TEXTS.badSignature);
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
        request.log.error({ err, stripe: failure.cause, event: event.type, eventId: event.id }, 'stripe API call failed while handling a webhook event');
        return reply.code(failure.status).send({ error: TEXTS.webhookStripeFailed });
      }
      const outcome = await s.store.stripeEvents.apply({ id: event.id, type: event.type, created: event.created, receivedAt: s.clock() }, changeOf(event, prefetched));
      if (outcome === undefined) return { received: true, duplicate: true };
      request.log.info({ event: event.type, outcome }, 'stripe event');
      return { received: true };
    },
  );
};

/** Sign-ups accepted per client address an hour (each sends a verification e-mail). */
export const SIGNUPS_PER_HOUR = 20;

interface Throttles {
  signup: Throttle;
  login: LoginThrottle;
  reset: Throttle;
  forgotIp: Throttle;
  resetMails: Throttle;
  verifyMails: Throttle;
}

export const accountRoutes: FastifyPluginAsync<AccountServices> = async (app, s) => {
  const throttles: Throttles = {
    signup: new Throttle(s.store, 'signup', SIGNUPS_PER_HOUR, 60 * 60_000),
    login: new LoginThrottle(s.store),
    reset: new Throttle(s.store, 'reset'),
    forgotIp: new Throttle(s.store, 'forgot', 20, 60 * 60_000),
    resetMails: new Throttle(s.store, 'reset-mail', 5, 60 * 60_000),
    verifyMails: new Throttle(s.store, 'verify-mail', 5, 60 * 60_000),
  };
  const stripe = s.accounts.stripe ? createStripeClient(s.accounts.stripe) : undefined;

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
