// The account routes open to anyone (a session is used when present): sign-up, login, logout, the current
// user, e-mail verification, forgot and reset password, and whether payments are available. Registered by
// routes.ts in the browser context (CSRF origin check, session lookup).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { UniqueViolationError } from '../../store/store.ts';
import { ClientError } from '../errors.ts';
import { clientKey } from '../limits.ts';
import { isEmail } from '../routes/forms.ts';
import { noQuery, plainErrors, type TypedRoutes } from '../schemas.ts';
import { THROTTLED_ERROR } from '../throttle.ts';
import { existingAccountMail, RESET_MS, resetMail, sendInBackground, verificationMail, VERIFY_MS } from './emails.ts';
import { dummyHash, hashPassword, PASSWORD_MAX, PASSWORD_MIN, verifyPassword } from './passwords.ts';
import type { AccountServices, AccountThrottles } from './services.ts';
import {
  clearSessionCookie,
  createSession,
  destroySession,
  pruneSessions,
  readCookie,
  SESSION_COOKIE,
  setSessionCookie,
} from './sessions.ts';
import { TEXTS } from './texts.ts';
import { isTokenShape, newToken, tokenHash } from './tokens.ts';
import { emptyBody, messageSchema, meOf, noBodyIsEmpty, str, userSchema } from './views.ts';

const USERNAME = /^[A-Za-z0-9_.-]{3,32}$/;

/**
 * After a forgot-password answer: when `email` has an account and fewer than 5 reset e-mails went to it this
 * hour, a new reset token replaces the previous one and the e-mail leaves in the background.
 */
async function sendResetIfRegistered(
  s: AccountServices,
  throttles: AccountThrottles,
  request: FastifyRequest,
  email: string,
  now: Date,
): Promise<void> {
  const user = await s.store.users.byEmail(email);
  if (!user || !(await throttles.resetMails.attempt([`account:${user.id}`], now))) return;
  const token = newToken();
  await s.store.users.setReset(user.id, tokenHash(token), new Date(now.getTime() + RESET_MS));
  sendInBackground(s, request, resetMail(s.accounts.origin, email, user.username, token));
}

async function startSession(
  s: AccountServices,
  request: FastifyRequest,
  reply: FastifyReply,
  userId: string,
  now: Date,
): Promise<void> {
  const previous = readCookie(request, SESSION_COOKIE);
  if (previous) await destroySession(s.store, previous);
  setSessionCookie(reply, request, s.accounts.origin, await createSession(s.store, userId, now));
  if (Math.random() < 0.01) await pruneSessions(s.store, now);
}

/**
 * A sign-up with the e-mail of an existing account is answered as a new sign-up (201, the same body, a session
 * cookie of the same form, one that names no session), so that the answer does not tell which addresses have
 * an account; the address's owner gets a "you already have an account" e-mail instead (at most 5 an hour per
 * account). A request made afterwards with that cookie finds no session, as after a session expired.
 */
async function answerExistingEmail(
  s: AccountServices,
  throttles: AccountThrottles,
  request: FastifyRequest,
  reply: FastifyReply,
  email: string,
  now: Date,
): Promise<void> {
  const previous = readCookie(request, SESSION_COOKIE);
  if (previous) await destroySession(s.store, previous);
  setSessionCookie(reply, request, s.accounts.origin, newToken());
  const user = await s.store.users.byEmail(email);
  if (user && (await throttles.existingMails.attempt([`account:${user.id}`], now)))
    sendInBackground(s, request, existingAccountMail(s.accounts.origin, email, user.username));
}

/** Anonymous allowed (a session is used when present). */
export const openRoutes =
  (throttles: AccountThrottles): TypedRoutes<AccountServices> =>
  async (app, s) => {
    app.post(
      '/api/auth/signup',
      {
        schema: {
          querystring: noQuery,
          body: {
            type: 'object',
            properties: {
              username: str(64),
              email: str(254),
              password: { type: 'string', maxLength: PASSWORD_MAX },
              agreeTerms: { type: 'boolean' },
              newsletterSubscribed: { type: 'boolean' },
            },
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
        if (!(await throttles.signup.attempt([`ip:${clientKey(request.ip)}`], now)))
          throw new ClientError(429, TEXTS.tooManyRequests);
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
          if (!(err instanceof UniqueViolationError)) throw err;
          // A taken username is said (a person must pick another); so is one taken beside a taken e-mail.
          if (err.field !== 'email' || (await s.store.users.forLogin(username)) !== undefined)
            throw new ClientError(409, TEXTS.usernameTaken);
          await answerExistingEmail(s, throttles, request, reply, email, now);
          return reply.code(201).send({ username, email, emailVerified: false });
        }
        await startSession(s, request, reply, id, now);
        // The address an account was created from is its owner's (the login throttle spares it).
        await throttles.login.remember(`account:${id}`, clientKey(request.ip), now);
        const mail = verificationMail(s.accounts.origin, email, username, token);
        sendInBackground(s, request, mail);
        return reply.code(201).send({ username, email, emailVerified: false });
      },
    );

    app.post(
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
      {
        preValidation: noBodyIsEmpty,
        schema: { querystring: noQuery, body: emptyBody, response: { 200: messageSchema, ...plainErrors } },
      },
      async (request, reply) => {
        const id = readCookie(request, SESSION_COOKIE);
        if (id) await destroySession(s.store, id);
        clearSessionCookie(reply, request, s.accounts.origin);
        return { message: TEXTS.loggedOut };
      },
    );

    app.get(
      '/api/auth/me',
      {
        schema: { querystring: noQuery, response: { 200: { anyOf: [{ type: 'null' }, userSchema] }, ...plainErrors } },
      },
      async (request, reply) => {
        reply.header('Cache-Control', 'private, no-store');
        return request.account ? meOf(s, request.account) : null;
      },
    );

    app.post(
      '/api/auth/verify-email',
      {
        schema: {
          querystring: noQuery,
          body: {
            type: 'object',
            properties: { token: { type: 'string', maxLength: 200 } },
            additionalProperties: false,
          },
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
        // The token the last resend replaced (the older e-mail's link, in any browser): 410, the link is gone
        // and a newer one was sent; the page says so rather than "Verification Failed". The unverified user's
        // own session with another link that is not theirs now (an expired one): the same words, 400.
        if (!done && (await s.store.users.replacedVerification(tokenHash(token))))
          throw new ClientError(410, TEXTS.staleVerificationToken);
        if (!done && request.account) throw new ClientError(400, TEXTS.staleVerificationToken);
        if (!done) throw new ClientError(400, TEXTS.badVerificationToken);
        return { message: TEXTS.verified };
      },
    );

    // Forgot-password answers before it looks the address up: the look-up, the reset token and the e-mail run
    // once the answer has been sent (the route's onResponse hook), so the answer's timing is the same whether
    // or not the address has an account (a timing test told them apart 91 % of the time when the
    // token was made and the e-mail started before answering).
    const pendingResets = new WeakMap<FastifyRequest, { email: string; now: Date }>();
    app.post(
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
            sendResetIfRegistered(s, throttles, request, pending.email, pending.now).catch((err: unknown) =>
              request.log.error({ err }, 'password reset e-mail failed'),
            );
          });
        },
      },
      async (request) => {
        const email = request.body.email.trim().toLowerCase();
        if (!email) throw new ClientError(400, TEXTS.forgotEmail);
        if (!isEmail(email)) throw new ClientError(400, TEXTS.invalidEmail);
        const now = s.clock();
        if (!(await throttles.forgotIp.attempt([`ip:${clientKey(request.ip)}`], now)))
          throw new ClientError(429, TEXTS.tooManyRequests);
        pendingResets.set(request, { email, now });
        return { message: TEXTS.forgotSent };
      },
    );

    // Whether a reset link can still be used, asked when /reset-password opens: a used or expired link says so
    // at once instead of showing the form. An unknown token counts as a failed reset (the same throttle).
    app.post(
      '/api/auth/reset-password/check',
      {
        schema: {
          querystring: noQuery,
          body: {
            type: 'object',
            properties: { token: { type: 'string', maxLength: 200 } },
            required: ['token'],
            additionalProperties: false,
          },
          response: {
            200: { type: 'object', properties: { valid: { type: 'boolean' } }, required: ['valid'] },
            ...plainErrors,
          },
        },
      },
      async (request) => {
        const now = s.clock();
        const ipKey = `ip:${clientKey(request.ip)}`;
        if (await throttles.reset.blocked([ipKey], now)) throw new ClientError(429, THROTTLED_ERROR);
        const { token } = request.body;
        const valid = isTokenShape(token) && (await s.store.users.forReset(tokenHash(token), now)) !== undefined;
        if (!valid) await throttles.reset.fail([ipKey], now);
        return { valid };
      },
    );

    app.post(
      '/api/auth/reset-password',
      {
        schema: {
          querystring: noQuery,
          body: {
            type: 'object',
            properties: {
              token: { type: 'string', maxLength: 200 },
              password: { type: 'string', maxLength: PASSWORD_MAX },
            },
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

    app.get(
      '/api/stripe/config',
      {
        schema: {
          querystring: noQuery,
          response: {
            200: {
              type: 'object',
              properties: { paymentsAvailable: { type: 'boolean' } },
              required: ['paymentsAvailable'],
            },
          },
        },
      },
      async () => ({
        paymentsAvailable: s.accounts.stripe !== undefined,
      }),
    );
  };
