// The accounts API through inject() on the real app, with a real SMTP server on loopback and the official
// Stripe SDK against a loopback Stripe stand-in: the whole flow (sign up → e-mail → verify → checkout → signed
// webhooks → Standard with usage, history and certificates → portal → reset password), every error text, and
// each security property tried the way an attacker would.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pino, { type Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase, type DB } from '../../../store/sqlite/db.ts';
import { loadConfig } from '../../../runtime/config.ts';
import { archiveAccess } from '../../../cli/archive-access.ts';
import { initKeys } from '../../../runtime/keys.ts';
import { buildApp } from '../../app.ts';
import { loadIngestConfig } from '../../config.ts';
import { createMailer } from '../../mail.ts';
import { MONTHLY_LIMIT_ERROR, utcMonth } from '../../limits.ts';
import { ORIGIN, projectEnv, randomHash, removeTempDirs, tempDir } from '../../test/fixture.ts';
import { loadAccountsConfig, type AccountsConfig } from '../config.ts';
import { hashPassword, verifyPassword } from '../passwords.ts';
import { SIGNUPS_PER_HOUR } from '../services.ts';
import { TEXTS } from '../texts.ts';
import { LOGIN_LIMITS, THROTTLED_ERROR } from '../../throttle.ts';
import {
  linkToken,
  PRICE_ANNUAL,
  PRICE_MONTHLY,
  signedEvent,
  signedPayload,
  startSmtp,
  startStripeStandIn,
  STRIPE_KEY,
  subscriptionObject,
  WEBHOOK_SECRET,
  type SmtpStandIn,
  type StripeStandIn,
} from './stand-ins.ts';
import { openSqliteStore } from '../../../store/sqlite/engine.ts';
import type { TimestampHistory } from '../member-routes.ts';

let smtp: SmtpStandIn;
let stripe: StripeStandIn;
let now = Date.parse('2025-11-02T03:06:00.000Z');

interface App {
  app: FastifyInstance;
  db: DB;
  close(): Promise<void>;
}

/** A server on a new project folder, or (a restart) on the folder of an earlier one; `logger` receives its log. */
async function makeApp(accountsEnv: Record<string, string> | null, dir?: string, logger?: Logger): Promise<App> {
  const restart = dir !== undefined;
  dir ??= tempDir('accounts');
  const env = projectEnv(dir, { SMTP_URL: smtp.url, MAIL_FROM: 'Timeseal <noreply@timeseal.test>' });
  const config = loadConfig({ ...env });
  const ingest = loadIngestConfig(config, env);
  if (!restart) initKeys({ keys: config.keys, privateKeys: config.privateKeys });
  const db = openDatabase(config.db);
  // Over a hundred passwords are hashed here (the throttle tests): at a lower scrypt cost than production's,
  // which 'passwords' below asserts the configuration carries.
  const accounts: AccountsConfig = {
    ...loadAccountsConfig(config.origin, accountsEnv ?? {}),
    passwordCost: TEST_PASSWORD_COST,
  };
  const app = await buildApp(
    {
      config,
      ingest,
      clock: () => new Date(now),
      store: openSqliteStore(config.db, { db }),
      mailer: createMailer(ingest, { info: () => {} }),
      archiveAccess: archiveAccess(config.archive, config.logOrigin),
      accounts,
    },
    logger,
  );
  await app.ready();
  return {
    app,
    db,
    close: async () => {
      await app.close();
      db.close();
    },
  };
}

const TEST_PASSWORD_COST = { n: 2 ** 10, r: 8, p: 1 };
let main: App;
/** A second server with Stripe, whose log lines are kept in `logs`. */
let logged: App;
const logs: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  smtp = await startSmtp();
  stripe = await startStripeStandIn();
  const stripeEnv = {
    STRIPE_SECRET_KEY: STRIPE_KEY,
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_PRICE_MONTHLY: PRICE_MONTHLY,
    STRIPE_PRICE_ANNUAL: PRICE_ANNUAL,
    STRIPE_API_BASE: stripe.url,
  };
  main = await makeApp(stripeEnv);
  logged = await makeApp(
    stripeEnv,
    undefined,
    pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) }),
  );
});
afterAll(async () => {
  await main?.close();
  await logged?.close();
  await stripe?.close();
  await smtp?.close();
  removeTempDirs();
});

let clients = 0;

/** A browser-like client: keeps the session cookie, sends the site's Origin on POSTs. */
class Client {
  cookie: string | undefined;
  readonly a: App;
  readonly ip: string;
  /** Each client has its own address unless given one (sign-ups are limited per address). */
  constructor(a: App = main, ip = `198.51.${100 + Math.floor(clients / 250)}.${(clients % 250) + 1}`) {
    clients++;
    this.a = a;
    this.ip = ip;
  }
  async req(
    method: 'GET' | 'POST',
    url: string,
    payload?: unknown,
    headers: Record<string, string> = {},
  ): Promise<LightMyRequestResponse> {
    const res = await this.a.app.inject({
      method,
      url,
      remoteAddress: this.ip,
      headers: {
        ...(this.cookie ? { cookie: `ts_session=${this.cookie}` } : {}),
        ...(method === 'POST' ? { origin: ORIGIN } : {}),
        ...headers,
      },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    const set = res.headers['set-cookie'];
    const line = Array.isArray(set) ? set[0] : set;
    if (line?.startsWith('ts_session=')) this.cookie = /^ts_session=([^;]*)/.exec(line)![1] || undefined;
    return res;
  }
  get = (url: string) => this.req('GET', url);
  post = (url: string, payload: unknown = {}, headers?: Record<string, string>) =>
    this.req('POST', url, payload, headers);
}

let userCount = 0;
async function signUp(
  c: Client = new Client(),
  overrides: Record<string, unknown> = {},
): Promise<{ c: Client; username: string; email: string; password: string }> {
  const n = ++userCount;
  const username = `user${n}_${Date.now() % 100000}`;
  const email = `${username}@example.org`;
  const password = `correct horse ${n}`;
  const res = await c.post('/api/auth/signup', {
    username,
    email,
    password,
    agreeTerms: true,
    newsletterSubscribed: false,
    ...overrides,
  });
  expect(res.statusCode, res.body).toBe(201);
  return { c, username, email, password };
}

async function verify(c: Client, email: string, after = 0): Promise<void> {
  const token = linkToken(await smtp.next(email, after), 'verify-email');
  const res = await c.post('/api/auth/verify-email', { token });
  expect(res.json()).toEqual({ message: TEXTS.verified });
}

async function deliver(
  payload: { payload: string; signature: string },
  a: App = main,
): Promise<LightMyRequestResponse> {
  return a.app.inject({
    method: 'POST',
    url: '/api/stripe/webhook',
    payload: payload.payload,
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': payload.signature },
  });
}

/** Verified user → checkout → the two webhooks Stripe sends → paying. Returns the subscription id. */
async function subscribe(c: Client, userId: string, price = PRICE_MONTHLY): Promise<string> {
  const checkout = await c.post('/api/stripe/create-checkout', {
    billingPeriod: price === PRICE_MONTHLY ? 'monthly' : 'annual',
  });
  expect(checkout.statusCode, checkout.body).toBe(200);
  const sessionCall = stripe.calls.filter((x) => x.path === '/v1/checkout/sessions').at(-1)!;
  const customer = sessionCall.params.customer!;
  const sub = subscriptionObject({ customer, price, status: 'active', userId, periodStart: Math.floor(now / 1000) });
  stripe.subscriptions.set(sub.id, sub);
  expect(
    (
      await deliver(
        signedEvent('checkout.session.completed', {
          id: 'cs_x',
          object: 'checkout.session',
          mode: 'subscription',
          customer,
          subscription: sub.id,
          client_reference_id: userId,
        }),
      )
    ).statusCode,
  ).toBe(200);
  expect((await deliver(signedEvent('customer.subscription.created', sub))).statusCode).toBe(200);
  return sub.id;
}

const userId = (a: App, username: string) =>
  (a.db.prepare('SELECT id FROM users WHERE username = ?').get(username) as { id: string }).id;

describe('passwords', () => {
  it('are scrypt N=2^15 r=8 p=1 with a 16-byte salt and a 64-byte key, salted per hash', async () => {
    const a = await hashPassword('a password');
    const b = await hashPassword('a password');
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{86}$/);
    expect(a).not.toBe(b);
    await expect(verifyPassword('a password', a)).resolves.toBe(true);
    await expect(verifyPassword('a passwore', a)).resolves.toBe(false);
    await expect(verifyPassword('a password', 'plain')).resolves.toBe(false);
  });

  it('are made at the production cost by the configuration a server loads, and a cheaper hash still verifies', async () => {
    expect(loadAccountsConfig('https://timeseal.example', {}).passwordCost).toEqual({ n: 32768, r: 8, p: 1 });
    const cheap = await hashPassword('a password', TEST_PASSWORD_COST);
    expect(cheap).toMatch(/^scrypt\$1024\$8\$1\$/);
    await expect(verifyPassword('a password', cheap)).resolves.toBe(true);
    await expect(verifyPassword('a passwore', cheap)).resolves.toBe(false);
  });
});

describe('the whole flow', () => {
  it('sign up → e-mail over SMTP → verify → checkout → signed webhooks → Standard with usage, history, certificates → portal → reset', async () => {
    const before = smtp.mails.length;
    const { c, username, email, password } = await signUp();
    const id = userId(main, username);
    // The password is stored as scrypt, never as given.
    const stored = (main.db.prepare('SELECT password FROM users WHERE id = ?').get(id) as { password: string })
      .password;
    expect(stored.startsWith('scrypt$')).toBe(true);
    expect(stored).not.toContain(password);

    const me = await c.get('/api/auth/me');
    expect(me.json()).toEqual({ username, email, emailVerified: false });
    // Checkout is refused until the e-mail is verified.
    const early = await c.post('/api/stripe/create-checkout', { billingPeriod: 'annual' });
    expect(early.statusCode).toBe(403);
    expect(early.json()).toEqual({ error: TEXTS.verifyFirst, message: TEXTS.verifyFirst });

    const mail = await smtp.next(email, before);
    expect(mail.text).toContain('Subject: Verify your Timeseal email address');
    expect(mail.raw).toMatch(/Content-Type: text\/plain/);
    expect(mail.raw).toMatch(/Content-Type: text\/html/);
    expect(mail.text).toContain(`${ORIGIN}/verify-email?token=`);
    // The database holds only the token's hash.
    const token = linkToken(mail, 'verify-email');
    expect(JSON.stringify(main.db.prepare('SELECT * FROM users WHERE id = ?').get(id))).not.toContain(token);
    expect((await c.post('/api/auth/verify-email', { token })).json()).toEqual({ message: TEXTS.verified });
    expect((await c.get('/api/auth/me')).json().emailVerified).toBe(true);

    // Free tier before paying.
    expect((await c.get('/api/subscription')).json()).toEqual({
      status: 'inactive',
      stripePriceId: null,
      currentPeriodEnd: null,
      cancelAtPeriodEnd: false,
      plan: null,
      paymentsAvailable: true,
    });
    expect((await c.get('/api/timestamps')).statusCode).toBe(403);

    const checkout = await c.post('/api/stripe/create-checkout', { billingPeriod: 'monthly' });
    expect(checkout.statusCode).toBe(200);
    expect(checkout.json().url).toMatch(new RegExp(`^${stripe.url}/checkout/cs_test_`));
    const calls = stripe.calls.slice(-2);
    expect(calls[0]).toMatchObject({ path: '/v1/customers', params: { email, 'metadata[userId]': id } });
    expect(calls[1]).toMatchObject({
      path: '/v1/checkout/sessions',
      params: {
        mode: 'subscription',
        client_reference_id: id,
        'line_items[0][price]': PRICE_MONTHLY,
        success_url: `${ORIGIN}/dashboard?checkout=success`,
        cancel_url: `${ORIGIN}/pricing`,
      },
    });
    const customer = calls[1]!.params.customer!;
    const sub = subscriptionObject({
      customer,
      price: PRICE_MONTHLY,
      status: 'active',
      userId: id,
      periodStart: Math.floor(now / 1000),
      periodEnd: Math.floor(Date.parse('2025-12-02T03:06:00Z') / 1000),
    });
    stripe.subscriptions.set(sub.id, sub);
    const completed = await deliver(
      signedEvent('checkout.session.completed', {
        id: 'cs_1',
        object: 'checkout.session',
        mode: 'subscription',
        customer,
        subscription: sub.id,
        client_reference_id: id,
      }),
    );
    expect(completed.json()).toEqual({ received: true });
    expect(stripe.calls.at(-1)).toMatchObject({ method: 'GET', path: `/v1/subscriptions/${sub.id}` });
    expect((await c.get('/api/subscription')).json()).toEqual({
      status: 'active',
      stripePriceId: PRICE_MONTHLY,
      currentPeriodEnd: '2025-12-02T03:06:00.000Z',
      cancelAtPeriodEnd: false,
      plan: 'Standard Monthly',
      paymentsAvailable: true,
    });
    expect((await c.get('/api/auth/me')).json().subscription).toMatchObject({
      status: 'active',
      plan: 'Standard Monthly',
    });
    // Paying: checkout again is refused.
    expect((await c.post('/api/stripe/create-checkout', { billingPeriod: 'annual' })).json()).toEqual({
      error: TEXTS.alreadySubscribed,
      message: TEXTS.alreadySubscribed,
    });

    // Submissions now count against the month and land in the history.
    const hashes = [randomHash(), randomHash()];
    const first = await c.post('/api/submit', { hash: hashes[0], fileName: 'contract <final>.pdf' });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({ ok: true, remainingThisMonth: 499 });
    now += 60_000;
    expect((await c.post('/api/submit', { hash: hashes[1] })).json()).toMatchObject({ remainingThisMonth: 498 });
    // Paying users are not held to the IP's 2 a day.
    now += 60_000;
    expect((await c.post('/api/submit', { hash: randomHash() })).statusCode).toBe(201);
    expect((await c.get('/api/quota/usage')).json()).toEqual({ used: 3, limit: 500, period: 'month' });
    const history = (await c.get('/api/timestamps')).json() as TimestampHistory;
    expect(history).toHaveLength(3);
    expect(history[2]).toMatchObject({
      fileName: 'contract <final>.pdf',
      hash: hashes[0],
      submittedAt: '2025-11-02T03:06:00.000Z',
      ledgerDate: '2025-11-02',
    });
    const cert = await c.get(`/api/certificate.php?id=${history[2]!.id}`);
    expect(cert.statusCode).toBe(200);
    expect(cert.body).toContain('contract &lt;final&gt;.pdf');
    expect(cert.body).not.toContain('<final>');
    expect(cert.body).toContain(hashes[0]);
    expect(cert.headers['cache-control']).toBe('private, no-store');

    // Portal.
    const portal = await c.post('/api/stripe/create-portal');
    expect(portal.json().url).toMatch(new RegExp(`^${stripe.url}/portal/bps_`));
    expect(stripe.calls.at(-1)).toMatchObject({
      path: '/v1/billing_portal/sessions',
      params: { customer, return_url: `${ORIGIN}/dashboard` },
    });

    // Cancellation at period end, then deletion.
    await deliver(signedEvent('customer.subscription.updated', { ...sub, cancel_at_period_end: true }));
    expect((await c.get('/api/subscription')).json()).toMatchObject({ status: 'active', cancelAtPeriodEnd: true });
    await deliver(signedEvent('customer.subscription.deleted', { ...sub, status: 'canceled' }));
    expect((await c.get('/api/subscription')).json()).toMatchObject({ status: 'canceled', plan: null });
    expect((await c.get('/api/timestamps')).statusCode).toBe(403);

    // Forgot and reset the password: old sessions die, the new password works, the old one not.
    const other = new Client();
    expect((await other.post('/api/auth/login', { username, password })).statusCode).toBe(200);
    const count = smtp.mails.length;
    expect((await new Client().post('/api/auth/forgot-password', { email })).json()).toEqual({
      message: TEXTS.forgotSent,
    });
    const reset = await smtp.next(email, count);
    expect(reset.text).toContain('Subject: Reset your Timeseal password');
    const resetToken = linkToken(reset, 'reset-password');
    // /reset-password asks whether its link can still be used before it shows the form.
    const check = () => new Client().post('/api/auth/reset-password/check', { token: resetToken });
    expect((await check()).json()).toEqual({ valid: true });
    expect(
      (await new Client().post('/api/auth/reset-password', { token: resetToken, password: 'a new password' })).json(),
    ).toEqual({ message: TEXTS.resetDone });
    // Used once, the link says so when opened again.
    expect((await check()).json()).toEqual({ valid: false });
    expect((await c.get('/api/auth/me')).json()).toBeNull();
    expect((await other.get('/api/auth/me')).json()).toBeNull();
    expect((await new Client().post('/api/auth/login', { username, password })).statusCode).toBe(401);
    expect(
      (await new Client().post('/api/auth/login', { username: email.toUpperCase(), password: 'a new password' }))
        .statusCode,
    ).toBe(200);
  });

  it('names the annual plan "Standard Annual" and shows the Next Renewal data; invoice.payment_failed makes it past_due', async () => {
    const { c, username, email } = await signUp();
    await verify(c, email);
    const subId = await subscribe(c, userId(main, username), PRICE_ANNUAL);
    expect((await c.get('/api/subscription')).json()).toMatchObject({
      status: 'active',
      plan: 'Standard Annual',
      stripePriceId: PRICE_ANNUAL,
    });
    const customer = (
      main.db
        .prepare('SELECT stripe_customer_id AS c FROM subscriptions WHERE stripe_subscription_id = ?')
        .get(subId) as { c: string }
    ).c;
    await deliver(signedEvent('invoice.payment_failed', { id: 'in_1', object: 'invoice', customer, status: 'open' }));
    expect((await c.get('/api/subscription')).json()).toMatchObject({ status: 'past_due', plan: null });
  });
});

describe('error texts', () => {
  it('signup', async () => {
    const c = new Client();
    const ok = {
      username: 'valid_name',
      email: 'valid@example.org',
      password: 'long enough',
      agreeTerms: true,
      newsletterSubscribed: false,
    };
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ ...ok, username: '  ' }, 400, TEXTS.usernameRequired],
      [{ ...ok, email: '' }, 400, TEXTS.emailRequired],
      [{ ...ok, password: '' }, 400, TEXTS.passwordRequired],
      [{ ...ok, username: 'a b' }, 400, TEXTS.usernameRule],
      [{ ...ok, email: 'not-an-email' }, 400, TEXTS.invalidEmail],
      [{ ...ok, password: 'short' }, 400, TEXTS.passwordShort],
      [{ ...ok, agreeTerms: false }, 400, 'You must agree to the Terms of Service and Privacy Policy'],
      [{ ...ok, admin: true }, 400, 'body: unknown field "admin"'],
    ];
    for (const [body, status, error] of cases) {
      const res = await c.post('/api/auth/signup', body);
      expect(res.statusCode, error).toBe(status);
      expect(res.json()).toEqual({ error, message: error });
    }
    expect(main.db.prepare('SELECT COUNT(*) AS n FROM users WHERE username = ?').get('valid_name')).toEqual({ n: 0 });
    const { username } = await signUp();
    expect((await c.post('/api/auth/signup', { ...ok, username: username.toUpperCase() })).json()).toEqual({
      error: TEXTS.usernameTaken,
      message: TEXTS.usernameTaken,
    });
  });

  it('an e-mail that has an account is answered as a new sign-up, and its owner is told by e-mail', async () => {
    const owner = await signUp();
    await smtp.next(owner.email); // its verification e-mail, sent in the background
    const ownerId = (main.db.prepare('SELECT id FROM users WHERE email = ?').get(owner.email) as { id: string }).id;
    const users = () => main.db.prepare('SELECT id, username, email, password FROM users ORDER BY id').all();
    const before = users();
    const fresh = `fresh${Date.now() % 100000}`;
    const body = { username: fresh, password: 'another horse', agreeTerms: true };
    const stranger = new Client();
    const sent = smtp.mails.length;
    const taken = await stranger.post('/api/auth/signup', { ...body, email: owner.email.toUpperCase() });
    const newcomer = new Client();
    const created = await newcomer.post('/api/auth/signup', {
      ...body,
      username: `${fresh}b`,
      email: `${fresh}b@example.org`,
    });
    // The same status, body (but for the names sent) and headers, a session cookie in each.
    expect([taken.statusCode, created.statusCode]).toEqual([201, 201]);
    expect(taken.json()).toEqual({ username: fresh, email: owner.email, emailVerified: false });
    expect(created.json()).toEqual({ username: `${fresh}b`, email: `${fresh}b@example.org`, emailVerified: false });
    expect(Object.keys(taken.headers).sort()).toEqual(Object.keys(created.headers).sort());
    const cookieForm = (r: LightMyRequestResponse) =>
      String(r.headers['set-cookie']).replace(/^ts_session=[^;]+/, 'ts_session=…');
    expect(cookieForm(taken)).toBe(cookieForm(created));
    expect(stranger.cookie).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    // Nothing was created or changed for the taken address; the owner is told, with a way in.
    expect(users().length).toBe(before.length + 1);
    expect(users().filter((u) => (u as { id: string }).id === ownerId)).toEqual(
      before.filter((u) => (u as { id: string }).id === ownerId),
    );
    const mail = await smtp.next(owner.email, sent);
    expect(mail.text).toContain('Subject: You already have a Timeseal account');
    expect(mail.text).toContain(
      `Someone (hopefully you) tried to create a Timeseal account with this email address, which already has one: ${owner.username}. No new account was created.`,
    );
    expect(mail.text).toContain(`${ORIGIN}/login`);
    // The cookie names no session: the stranger is not logged in to the owner's account (nor any other).
    expect((await stranger.get('/api/auth/me')).json()).toBeNull();
    // A username that is taken is still said, even with a taken e-mail.
    const both = await new Client().post('/api/auth/signup', { ...body, username: owner.username, email: owner.email });
    expect([both.statusCode, both.json()]).toEqual([409, { error: TEXTS.usernameTaken, message: TEXTS.usernameTaken }]);
  });

  it('login, verification, reset, forgot, members-only and payments', async () => {
    const c = new Client(main, '198.51.100.99');
    expect((await c.post('/api/auth/login', { username: '', password: '' })).json()).toEqual({
      error: TEXTS.loginFields,
      message: TEXTS.loginFields,
    });
    const bad = await c.post('/api/auth/login', { username: 'nobody', password: 'whatever1' });
    expect([bad.statusCode, bad.json()]).toEqual([401, { error: TEXTS.badLogin, message: TEXTS.badLogin }]);
    expect((await c.post('/api/auth/verify-email', {})).json()).toEqual({
      error: TEXTS.noVerificationToken,
      message: TEXTS.noVerificationToken,
    });
    expect((await c.post('/api/auth/verify-email', { token: 'x'.repeat(43) })).json()).toEqual({
      error: TEXTS.badVerificationToken,
      message: TEXTS.badVerificationToken,
    });
    expect((await c.post('/api/auth/reset-password', { token: 'x'.repeat(43), password: 'short' })).json()).toEqual({
      error: 'Password must be at least 8 characters',
      message: 'Password must be at least 8 characters',
    });
    expect(
      (await c.post('/api/auth/reset-password', { token: 'x'.repeat(43), password: 'long enough' })).json(),
    ).toEqual({ error: 'Invalid or expired reset token', message: 'Invalid or expired reset token' });
    expect((await c.post('/api/auth/forgot-password', { email: '' })).json()).toEqual({
      error: TEXTS.forgotEmail,
      message: TEXTS.forgotEmail,
    });
    for (const [method, url] of [
      ['GET', '/api/subscription'],
      ['GET', '/api/quota/usage'],
      ['GET', '/api/timestamps'],
      ['POST', '/api/stripe/create-checkout'],
      ['POST', '/api/stripe/create-portal'],
      ['POST', '/api/auth/resend-verification'],
    ] as const) {
      const res = await c.req(
        method,
        url,
        method === 'POST' ? (url.endsWith('checkout') ? { billingPeriod: 'monthly' } : {}) : undefined,
      );
      expect([url, res.statusCode, res.json()]).toEqual([
        url,
        401,
        { error: TEXTS.loginRequired, message: TEXTS.loginRequired },
      ]);
    }
    const { c: member, email } = await signUp();
    await verify(member, email);
    expect((await member.post('/api/auth/resend-verification')).json()).toEqual({
      error: TEXTS.alreadyVerified,
      message: TEXTS.alreadyVerified,
    });
    expect((await member.post('/api/stripe/create-portal')).json()).toEqual({
      error: TEXTS.noBillingAccount,
      message: TEXTS.noBillingAccount,
    });
    expect((await member.post('/api/stripe/create-checkout', { billingPeriod: 'weekly' })).json()).toEqual({
      error: 'billingPeriod: must be one of monthly, annual',
      message: 'billingPeriod: must be one of monthly, annual',
    });
  });

  it('without Stripe keys: payment endpoints answer 503 and the config says payments are unavailable', async () => {
    const bare = await makeApp(null);
    try {
      const c = new Client(bare);
      expect((await c.get('/api/stripe/config')).json()).toEqual({ paymentsAvailable: false });
      await signUp(c);
      for (const [url, body] of [
        ['/api/stripe/create-checkout', { billingPeriod: 'monthly' }],
        ['/api/stripe/create-portal', {}],
      ] as const) {
        const res = await c.post(url, body);
        expect([res.statusCode, res.json()]).toEqual([
          503,
          {
            error: 'Payments are not available on this server.',
            message: 'Payments are not available on this server.',
          },
        ]);
      }
      expect((await c.get('/api/subscription')).json().paymentsAvailable).toBe(false);
      const hook = signedEvent('customer.subscription.updated', {});
      expect((await deliver(hook, bare)).statusCode).toBe(503);
    } finally {
      await bare.close();
    }
  });

  it('resend-verification sends a fresh link and the old one stops working', async () => {
    const { c, email } = await signUp();
    const first = linkToken(await smtp.next(email), 'verify-email');
    const count = smtp.mails.length;
    expect((await c.post('/api/auth/resend-verification')).json()).toEqual({ message: TEXTS.verificationSent });
    const second = linkToken(await smtp.next(email, count), 'verify-email');
    expect(second).not.toBe(first);
    // The older e-mail's link, opened in the user's own browser, says that a newer one replaced it.
    const stale = await c.post('/api/auth/verify-email', { token: first });
    expect(stale.statusCode).toBe(410);
    expect(stale.json()).toEqual({ error: TEXTS.staleVerificationToken, message: TEXTS.staleVerificationToken });
    expect(TEXTS.staleVerificationToken).toMatch(/newer one replaced it.*most recent verification e-mail/);
    // Without the session (the older e-mail opened in another browser) it says the same; it names no one, and
    // only the holder of that e-mail's random token can ask. A token never issued stays the generic answer.
    const elsewhere = await new Client().post('/api/auth/verify-email', { token: first });
    expect([elsewhere.statusCode, elsewhere.json()]).toEqual([
      410,
      { error: TEXTS.staleVerificationToken, message: TEXTS.staleVerificationToken },
    ]);
    expect((await new Client().post('/api/auth/verify-email', { token: 'A'.repeat(43) })).json()).toEqual({
      error: TEXTS.badVerificationToken,
      message: TEXTS.badVerificationToken,
    });
    expect((await c.post('/api/auth/verify-email', { token: second })).json()).toEqual({ message: TEXTS.verified });
    // Verified: the older link is a used one now, as any used link.
    expect((await new Client().post('/api/auth/verify-email', { token: first })).json()).toEqual({
      error: TEXTS.badVerificationToken,
      message: TEXTS.badVerificationToken,
    });
  });
});

describe('security, as an attacker would try it', () => {
  it('session cookie: HttpOnly, SameSite=Lax, Path=/, Secure on an https origin; rotated on login; gone after logout', async () => {
    const { c, username, password } = await signUp();
    const res = await c.post('/api/auth/login', { username, password });
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(/^ts_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=2592000; Secure$/);
    // Rotation: a session id fixed before login (here: the sign-up session) is not the one after, and is dead.
    const fixed = new Client();
    fixed.cookie = c.cookie;
    const before = c.cookie;
    const again = await fixed.post('/api/auth/login', { username, password });
    expect(again.statusCode).toBe(200);
    expect(fixed.cookie).not.toBe(before);
    const stale = new Client();
    stale.cookie = before;
    expect((await stale.get('/api/auth/me')).json()).toBeNull();
    // The database stores only the id's hash.
    expect(JSON.stringify(main.db.prepare('SELECT * FROM sessions').all())).not.toContain(fixed.cookie!);
    // Logout destroys the session on the server, not just the cookie.
    const kept = fixed.cookie;
    // The site's Logout button posts no body at all.
    const logout = await main.app.inject({
      method: 'POST',
      url: '/api/auth/logout',
      headers: { cookie: `ts_session=${kept}`, origin: ORIGIN },
    });
    expect([logout.statusCode, logout.json()]).toEqual([200, { message: TEXTS.loggedOut }]);
    expect(String(logout.headers['set-cookie'])).toMatch(/^ts_session=; .*Max-Age=0/);
    const replay = new Client();
    replay.cookie = kept;
    expect((await replay.get('/api/auth/me')).json()).toBeNull();
    expect((await replay.get('/api/subscription')).statusCode).toBe(401);
  });

  it('an expired session (30 days) is refused', async () => {
    const { c } = await signUp();
    expect((await c.get('/api/auth/me')).json()).not.toBeNull();
    now += 31 * 86_400_000;
    try {
      expect((await c.get('/api/auth/me')).json()).toBeNull();
    } finally {
      now -= 31 * 86_400_000;
    }
  });

  it('CSRF: a cross-origin POST carrying the cookie is refused; same-origin (Origin or Sec-Fetch-Site) passes', async () => {
    const { c, email } = await signUp();
    await verify(c, email);
    const evil = { origin: 'https://evil.example' };
    for (const [url, body] of [
      ['/api/stripe/create-checkout', { billingPeriod: 'monthly' }],
      ['/api/auth/logout', {}],
      ['/api/auth/resend-verification', {}],
      ['/api/submit', { hash: randomHash() }],
    ] as const) {
      const res = await c.post(url, body, evil);
      expect([url, res.statusCode]).toEqual([url, 403]);
      expect(res.body).toContain('Cross-origin request refused');
    }
    // Without Origin, Sec-Fetch-Site decides; a cross-site one is refused, a same-origin one passes.
    const noOrigin = (site: string) =>
      main.app.inject({
        method: 'POST',
        url: '/api/auth/logout',
        payload: {},
        headers: { cookie: `ts_session=${c.cookie}`, 'sec-fetch-site': site },
      });
    expect((await noOrigin('cross-site')).statusCode).toBe(403);
    expect((await c.get('/api/auth/me')).json()).not.toBeNull();
    // A foreign Origin cannot log a victim into another account either (login CSRF).
    expect((await new Client().post('/api/auth/login', { username: 'x', password: 'y' }, evil)).statusCode).toBe(403);
    // The request's own host is accepted as the origin too (a server reached under another name).
    expect(
      (await c.post('/api/auth/logout', {}, { origin: 'http://localhost:80', host: 'localhost:80' })).statusCode,
    ).toBe(200);
    expect((await c.get('/api/auth/me')).json()).toBeNull();
  });

  it('no IDOR: another user sees neither the history nor the certificates of a paying user', async () => {
    const alice = await signUp();
    await verify(alice.c, alice.email);
    await subscribe(alice.c, userId(main, alice.username));
    const secret = randomHash();
    expect((await alice.c.post('/api/submit', { hash: secret, fileName: 'alice-secret.txt' })).statusCode).toBe(201);
    const [row] = (await alice.c.get('/api/timestamps')).json() as TimestampHistory;
    expect((await alice.c.get(`/api/certificate.php?id=${row!.id}`)).body).toContain('alice-secret.txt');

    const mallory = await signUp();
    await verify(mallory.c, mallory.email);
    await subscribe(mallory.c, userId(main, mallory.username));
    const theirs = await mallory.c.get(`/api/certificate.php?id=${row!.id}`);
    const unknown = await mallory.c.get('/api/certificate.php?id=99999999');
    const anonymous = await new Client().get(`/api/certificate.php?id=${row!.id}`);
    for (const res of [theirs, anonymous]) {
      expect(res.statusCode).toBe(404);
      expect(res.body).not.toContain('alice-secret.txt');
      expect(res.body).not.toContain(secret);
    }
    expect(unknown.body.replace('99999999', String(row!.id))).toBe(theirs.body);
    const list = (await mallory.c.get('/api/timestamps')).json() as TimestampHistory;
    expect(list.map((r) => r.hash)).not.toContain(secret);
  });

  it('verification and reset tokens are single use; a reset link expires after 1 hour', async () => {
    const { c, email, username } = await signUp();
    const token = linkToken(await smtp.next(email), 'verify-email');
    expect((await c.post('/api/auth/verify-email', { token })).statusCode).toBe(200);
    // Used: the verified user's own session is told so; anyone else gets the invalid-link error.
    expect((await c.post('/api/auth/verify-email', { token })).json()).toEqual({ message: TEXTS.alreadyVerified });
    expect((await new Client().post('/api/auth/verify-email', { token })).json()).toEqual({
      error: TEXTS.badVerificationToken,
      message: TEXTS.badVerificationToken,
    });

    const count = smtp.mails.length;
    await new Client().post('/api/auth/forgot-password', { email });
    const reset = linkToken(await smtp.next(email, count), 'reset-password');
    expect(
      (await new Client().post('/api/auth/reset-password', { token: reset, password: 'first new password' }))
        .statusCode,
    ).toBe(200);
    expect(
      (await new Client().post('/api/auth/reset-password', { token: reset, password: 'second new password' })).json(),
    ).toEqual({ error: 'Invalid or expired reset token', message: 'Invalid or expired reset token' });

    const count2 = smtp.mails.length;
    await new Client().post('/api/auth/forgot-password', { email });
    const late = linkToken(await smtp.next(email, count2), 'reset-password');
    now += 61 * 60_000;
    try {
      expect(
        (await new Client().post('/api/auth/reset-password', { token: late, password: 'third new password' })).json(),
      ).toEqual({ error: 'Invalid or expired reset token', message: 'Invalid or expired reset token' });
    } finally {
      now -= 61 * 60_000;
    }
    expect((await new Client().post('/api/auth/login', { username, password: 'first new password' })).statusCode).toBe(
      200,
    );
  });

  it('forgot-password answers the same whether or not the e-mail exists, and mails only the real one', async () => {
    const { email } = await signUp();
    await smtp.next(email);
    const count = smtp.mails.length;
    const c = new Client(main, '198.51.100.50');
    const real = await c.post('/api/auth/forgot-password', { email });
    const fake = await c.post('/api/auth/forgot-password', { email: 'no-such-user@example.org' });
    expect(fake.statusCode).toBe(real.statusCode);
    expect(fake.body).toBe(real.body);
    expect(Object.keys(fake.headers).sort()).toEqual(Object.keys(real.headers).sort());
    await smtp.next(email, count);
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.mails.slice(count).flatMap((m) => m.to)).toEqual([email]);
  });

  it('login: an attacker address cannot lock the owner out, and an unknown name is throttled like a real one', async () => {
    const { username, password } = await signUp();
    const attacker = new Client(main, '203.0.113.1');
    for (let i = 0; i < LOGIN_LIMITS.perPair; i++)
      expect((await attacker.post('/api/auth/login', { username, password: `wrong ${i}` })).statusCode).toBe(401);
    const refused = await attacker.post('/api/auth/login', { username, password });
    expect([refused.statusCode, refused.json()]).toEqual([429, { error: THROTTLED_ERROR, message: THROTTLED_ERROR }]);
    // The owner, from an address never used before, is not locked out.
    expect((await new Client(main, '203.0.113.2').post('/api/auth/login', { username, password })).statusCode).toBe(
      200,
    );
    // The attacker's address stays refused for this account, not for the others.
    expect((await attacker.post('/api/auth/login', { username, password })).statusCode).toBe(429);
    expect(
      (await attacker.post('/api/auth/login', { username: 'someone-else', password: 'guess1234' })).statusCode,
    ).toBe(401);
    // A name no account has gets the same answers in the same order.
    const prober = new Client(main, '203.0.113.3');
    const ghost: number[] = [];
    for (let i = 0; i <= LOGIN_LIMITS.perPair; i++)
      ghost.push(
        (await prober.post('/api/auth/login', { username: 'no-such-user-here', password: `wrong ${i}` })).statusCode,
      );
    expect(ghost).toEqual([...Array(LOGIN_LIMITS.perPair).fill(401), 429]);
    // After the window the attacker's address may try again.
    now += LOGIN_LIMITS.windowMs;
    try {
      expect((await attacker.post('/api/auth/login', { username, password: 'wrong again' })).statusCode).toBe(401);
    } finally {
      now -= LOGIN_LIMITS.windowMs;
    }
    const resetter = new Client(main, '192.0.2.78');
    for (let i = 0; i < 10; i++)
      expect(
        (await resetter.post('/api/auth/reset-password', { token: 'y'.repeat(43), password: 'long enough' }))
          .statusCode,
      ).toBe(400);
    expect(
      (await resetter.post('/api/auth/reset-password', { token: 'y'.repeat(43), password: 'long enough' })).json(),
    ).toEqual({ error: THROTTLED_ERROR, message: THROTTLED_ERROR });
  });

  it('login: guesses at one account are bounded over many addresses, its username and e-mail counting as one; its own addresses still get in', async () => {
    const owner = new Client(main, '198.18.0.1');
    const { username, email, password } = await signUp(owner);
    // Sent at once from many addresses, typing the username or the e-mail (in any case) by turns.
    const n = LOGIN_LIMITS.perAccount + 20;
    const guesses = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        new Client(main, `198.18.1.${i + 1}`).post('/api/auth/login', {
          username: i % 2 ? email.toUpperCase() : username,
          password: `wrong ${i}`,
        }),
      ),
    );
    const codes = guesses.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 401)).toHaveLength(LOGIN_LIMITS.perAccount);
    expect(codes.filter((c) => c === 429)).toHaveLength(n - LOGIN_LIMITS.perAccount);
    // A further address is refused, with either identifier, even with the right password...
    expect(
      (await new Client(main, '198.18.2.1').post('/api/auth/login', { username: email, password })).json(),
    ).toEqual({ error: THROTTLED_ERROR, message: THROTTLED_ERROR });
    expect((await new Client(main, '198.18.2.2').post('/api/auth/login', { username, password })).statusCode).toBe(429);
    // ...but the owner, from the address the account was created from, logs in; and from there on that
    // address (and any the owner logged in from) keeps working.
    expect((await owner.post('/api/auth/login', { username, password })).statusCode).toBe(200);
    expect((await owner.post('/api/auth/login', { username: email, password })).statusCode).toBe(200);
    // The owner's success does not reset the count: other addresses stay refused until the window has passed.
    expect((await new Client(main, '198.18.2.3').post('/api/auth/login', { username, password })).statusCode).toBe(429);
    now += LOGIN_LIMITS.windowMs;
    try {
      expect((await new Client(main, '198.18.2.4').post('/api/auth/login', { username, password })).statusCode).toBe(
        200,
      );
    } finally {
      now -= LOGIN_LIMITS.windowMs;
    }
  });

  it('login: a shared address where many logins fail still lets its own users in, and stops spraying', async () => {
    const shared = '198.19.0.1';
    const colleague = await signUp(new Client(main, shared));
    const other = await signUp();
    const answers = await Promise.all(
      Array.from({ length: LOGIN_LIMITS.perAddress }, (_, i) =>
        new Client(main, shared).post('/api/auth/login', { username: `sprayed${i}`, password: 'Summer2025!' }),
      ),
    );
    expect(answers.every((r) => r.statusCode === 401)).toBe(true);
    expect(
      (
        await new Client(main, shared).post('/api/auth/login', { username: 'sprayed-more', password: 'Summer2025!' })
      ).json(),
    ).toEqual({ error: THROTTLED_ERROR, message: THROTTLED_ERROR });
    // Someone whose account lives at this address is let in (and may mistype it, up to the pair's limit).
    expect(
      (
        await new Client(main, shared).post('/api/auth/login', {
          username: colleague.username,
          password: 'a typo here',
        })
      ).statusCode,
    ).toBe(401);
    expect(
      (
        await new Client(main, shared).post('/api/auth/login', {
          username: colleague.username,
          password: colleague.password,
        })
      ).statusCode,
    ).toBe(200);
    // An account never used from this address waits for the window like the sprayer; from elsewhere it is fine.
    expect(
      (await new Client(main, shared).post('/api/auth/login', { username: other.username, password: other.password }))
        .statusCode,
    ).toBe(429);
    expect(
      (await new Client(main).post('/api/auth/login', { username: other.username, password: other.password }))
        .statusCode,
    ).toBe(200);
  });
  it(`sign-ups: ${SIGNUPS_PER_HOUR} an hour per address, even sent at once; a taken name counts too`, async () => {
    const ip = '203.0.113.150';
    const body = (i: number) => ({
      username: `burst${i}_${Date.now() % 100000}`,
      email: `burst${i}_${Date.now() % 100000}@example.org`,
      password: 'correct horse',
      agreeTerms: true,
    });
    const taken = await signUp(new Client(main, '203.0.113.151'));
    const users = () => (main.db.prepare('SELECT COUNT(*) AS n FROM users').get() as { n: number }).n;
    const before = users();
    // Sign-ups refused for bad input are not counted.
    for (let i = 0; i < 5; i++)
      expect(
        (await new Client(main, ip).post('/api/auth/signup', { ...body(90 + i), agreeTerms: false })).statusCode,
      ).toBe(400);
    const answers = await Promise.all([
      new Client(main, ip).post('/api/auth/signup', { ...body(0), username: taken.username }),
      ...Array.from({ length: SIGNUPS_PER_HOUR + 4 }, (_, i) =>
        new Client(main, ip).post('/api/auth/signup', body(i + 1)),
      ),
    ]);
    const codes = answers.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 409)).toHaveLength(1);
    expect(codes.filter((c) => c === 201)).toHaveLength(SIGNUPS_PER_HOUR - 1);
    expect(codes.filter((c) => c === 429)).toHaveLength(5);
    expect(answers.find((r) => r.statusCode === 429)!.json()).toEqual({
      error: TEXTS.tooManyRequests,
      message: TEXTS.tooManyRequests,
    });
    expect(users()).toBe(before + SIGNUPS_PER_HOUR - 1);
    // Another address is not affected.
    expect((await new Client(main, '203.0.113.152').post('/api/auth/signup', body(100))).statusCode).toBe(201);
  });

  it('login throttling cannot be outrun by concurrent guesses, survives a restart, and successful logins do not count', async () => {
    let server = await makeApp(null);
    const { username, password } = await signUp(new Client(server));
    try {
      // The password check is asynchronous (scrypt): 30 guesses sent at once must not all be let through.
      const guesses = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          new Client(server, '203.0.113.50').post('/api/auth/login', { username, password: `wrong ${i}` }),
        ),
      );
      const codes = guesses.map((r) => r.statusCode);
      expect(codes.filter((code) => code === 401)).toHaveLength(LOGIN_LIMITS.perPair);
      expect(codes.filter((code) => code === 429)).toHaveLength(30 - LOGIN_LIMITS.perPair);
      // A restart does not forget the failures.
      const folder = path.dirname(path.dirname(server.db.name));
      await server.close();
      server = await makeApp(null, folder);
      const afterRestart = await new Client(server, '203.0.113.50').post('/api/auth/login', { username, password });
      expect([afterRestart.statusCode, afterRestart.json()]).toEqual([
        429,
        { error: THROTTLED_ERROR, message: THROTTLED_ERROR },
      ]);
      // Twelve good logins from one address in a row: successes are not failures.
      const office = new Client(server, '192.0.2.90');
      for (let i = 0; i < 12; i++)
        expect((await office.post('/api/auth/login', { username, password })).statusCode).toBe(200);
      // Logins still being checked count: ten at once from one address are let in, an eleventh is not.
      const burst = await Promise.all(
        Array.from({ length: LOGIN_LIMITS.perPair + 1 }, () =>
          new Client(server, '192.0.2.91').post('/api/auth/login', { username, password }),
        ),
      );
      expect(burst.map((r) => r.statusCode).sort()).toEqual([...Array(LOGIN_LIMITS.perPair).fill(200), 429]);
      // Once they have succeeded, their attempts are withdrawn.
      expect((await new Client(server, '192.0.2.91').post('/api/auth/login', { username, password })).statusCode).toBe(
        200,
      );
    } finally {
      await server.close();
    }
  });
  it('webhooks: a forged or missing signature is refused and changes nothing; a replayed event is applied once', async () => {
    const { c, username, email } = await signUp();
    await verify(c, email);
    const id = userId(main, username);
    await c.post('/api/stripe/create-checkout', { billingPeriod: 'monthly' });
    const customer = stripe.calls.filter((x) => x.path === '/v1/checkout/sessions').at(-1)!.params.customer!;
    const sub = subscriptionObject({ customer, price: PRICE_MONTHLY, status: 'active', userId: id });
    const forged = signedEvent('customer.subscription.created', sub, { secret: 'whsec_attacker' });
    const res = await deliver(forged);
    expect([res.statusCode, res.json()]).toEqual([
      400,
      { error: 'Invalid Stripe signature', message: 'Invalid Stripe signature' },
    ]);
    const tampered = signedEvent('customer.subscription.created', { ...sub, status: 'incomplete' });
    expect(
      (await deliver({ payload: tampered.payload.replace('"incomplete"', '"active"'), signature: tampered.signature }))
        .statusCode,
    ).toBe(400);
    expect(
      (
        await main.app.inject({
          method: 'POST',
          url: '/api/stripe/webhook',
          payload: forged.payload,
          headers: { 'content-type': 'application/json' },
        })
      ).statusCode,
    ).toBe(400);
    expect((await c.get('/api/subscription')).json().status).toBe('inactive');

    const created = signedEvent('customer.subscription.created', sub);
    expect((await deliver(created)).json()).toEqual({ received: true });
    expect((await c.get('/api/subscription')).json().status).toBe('active');
    // A later state, then the first event again (Stripe retries): the replay is not applied.
    await deliver(signedEvent('customer.subscription.updated', { ...sub, status: 'past_due' }));
    expect((await deliver(created)).json()).toEqual({ received: true, duplicate: true });
    expect((await c.get('/api/subscription')).json().status).toBe('past_due');
    expect(main.db.prepare('SELECT COUNT(*) AS n FROM stripe_events WHERE id = ?').get(created.id)).toEqual({ n: 1 });
  });

  it('webhooks out of order: an older event arriving late changes nothing, and a canceled subscription stays canceled', async () => {
    const { c, username, email } = await signUp();
    await verify(c, email);
    const id = userId(main, username);
    const subId = await subscribe(c, id);
    const sub = stripe.subscriptions.get(subId)!;
    const t = Math.floor(Date.now() / 1000) + 1000; // later than the events subscribe() sent
    const status = async () => (await c.get('/api/subscription')).json().status as string;

    await deliver(signedEvent('customer.subscription.updated', { ...sub, status: 'past_due' }, { created: t + 20 }));
    expect(await status()).toBe('past_due');
    // Stripe sent this one first (t + 10), it arrives second: not applied.
    expect(
      (
        await deliver(signedEvent('customer.subscription.updated', { ...sub, status: 'active' }, { created: t + 10 }))
      ).json(),
    ).toEqual({ received: true });
    expect(await status()).toBe('past_due');
    // The payment recovers (t + 30); a failed invoice from before (t + 25) arrives after it: still active.
    await deliver(signedEvent('customer.subscription.updated', { ...sub, status: 'active' }, { created: t + 30 }));
    await deliver(
      signedEvent(
        'invoice.payment_failed',
        { id: 'in_old', object: 'invoice', customer: sub.customer },
        { created: t + 25 },
      ),
    );
    expect(await status()).toBe('active');
    await deliver(
      signedEvent(
        'invoice.payment_failed',
        { id: 'in_new', object: 'invoice', customer: sub.customer },
        { created: t + 40 },
      ),
    );
    expect(await status()).toBe('past_due');
    // Deleted, then an "active" update of the same second arrives: a canceled subscription is never revived.
    await deliver(signedEvent('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: t + 50 }));
    await deliver(signedEvent('customer.subscription.updated', { ...sub, status: 'active' }, { created: t + 50 }));
    expect(await status()).toBe('canceled');
    expect(main.db.prepare('SELECT stripe_event_created AS t FROM subscriptions WHERE user_id = ?').get(id)).toEqual({
      t: t + 50,
    });
  });

  it('the monthly quota is atomic: at 498 used, 10 concurrent submissions admit exactly 2', async () => {
    const { c, username, email } = await signUp();
    await verify(c, email);
    const id = userId(main, username);
    await subscribe(c, id);
    main.db
      .prepare('INSERT INTO quota_usage (user_id, month, count) VALUES (?, ?, 498)')
      .run(id, utcMonth(new Date(now)));
    const results = await Promise.all(Array.from({ length: 10 }, () => c.post('/api/submit', { hash: randomHash() })));
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes).toEqual([201, 201, 429, 429, 429, 429, 429, 429, 429, 429]);
    expect(results.find((r) => r.statusCode === 429)!.json()).toEqual({
      ok: false,
      error: MONTHLY_LIMIT_ERROR,
      message: MONTHLY_LIMIT_ERROR,
      limit: {
        period: 'month',
        max: 500,
        resetsAt: new Date(Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth() + 1, 1)).toISOString(),
      },
    });
    expect((await c.get('/api/quota/usage')).json()).toEqual({ used: 500, limit: 500, period: 'month' });
    expect((await c.get('/api/timestamps')).json()).toHaveLength(2);
    // A new month starts from zero.
    now += 31 * 86_400_000;
    try {
      expect((await c.post('/api/submit', { hash: randomHash() })).statusCode).toBe(201);
    } finally {
      now -= 31 * 86_400_000;
    }
  });

  it('free users keep the 2-per-day IP rule and get no history', async () => {
    const { c } = await signUp(new Client(main, '192.0.2.200'));
    expect((await c.post('/api/submit', { hash: randomHash() })).json()).toMatchObject({ remainingToday: 1 });
    expect((await c.post('/api/submit', { hash: randomHash() })).statusCode).toBe(201);
    expect((await c.post('/api/submit', { hash: randomHash() })).statusCode).toBe(429);
    expect((await c.get('/api/quota/usage')).json()).toEqual({ used: 2, limit: 2, period: 'day' });
    expect((await c.get('/api/timestamps')).json()).toEqual({
      error: TEXTS.historyPaying,
      message: TEXTS.historyPaying,
    });
  });
});

describe('Stripe: events of the wrong shape and failures of its API', () => {
  const envelope = (type: string, data: unknown, id = `evt_shape_${crypto.randomUUID()}`) =>
    JSON.stringify({
      id,
      object: 'event',
      api_version: '2026-10-28.endive',
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      pending_webhooks: 1,
      type,
      data,
    });
  const recorded = (a: App, id: string) =>
    a.db.prepare('SELECT 1 FROM stripe_events WHERE id = ?').get(id) !== undefined;

  it('a signed event of a type we handle with data null or a field of the wrong type: 400 naming it, nothing recorded', async () => {
    const handled = [
      'checkout.session.completed',
      'customer.subscription.created',
      'customer.subscription.updated',
      'customer.subscription.deleted',
      'invoice.payment_failed',
    ];
    for (const type of handled) {
      const res = await deliver(signedPayload(envelope(type, null)), logged);
      expect([type, res.statusCode, res.json()]).toEqual([
        type,
        400,
        {
          error: `Stripe event ${type}: data must be an object`,
          message: `Stripe event ${type}: data must be an object`,
        },
      ]);
      const noObject = await deliver(signedPayload(envelope(type, { object: null })), logged);
      expect([type, noObject.statusCode, noObject.json()]).toEqual([
        type,
        400,
        {
          error: `Stripe event ${type}: data.object must be an object`,
          message: `Stripe event ${type}: data.object must be an object`,
        },
      ]);
    }
    const { c, username, email } = await signUp(new Client(logged));
    await verify(c, email);
    const id = userId(logged, username);
    await c.post('/api/stripe/create-checkout', { billingPeriod: 'monthly' });
    const customer = stripe.calls.filter((x) => x.path === '/v1/checkout/sessions').at(-1)!.params.customer!;
    const sub = subscriptionObject({ customer, price: PRICE_MONTHLY, status: 'active', userId: id });
    const cases: Array<[string, unknown, string]> = [
      ['customer.subscription.updated', { ...sub, status: 7 }, 'data.object.status must be a string'],
      ['customer.subscription.created', { ...sub, customer: null }, 'data.object.customer must be a customer id'],
      ['customer.subscription.created', { ...sub, items: 'all of them' }, 'data.object.items must be a list object'],
      [
        'checkout.session.completed',
        {
          id: 'cs_bad',
          object: 'checkout.session',
          mode: 'subscription',
          customer,
          subscription: { no: 'id' },
          client_reference_id: id,
        },
        'data.object.subscription must be a subscription id or null',
      ],
      [
        'invoice.payment_failed',
        { id: 'in_bad', object: 'invoice', customer: 42 },
        'data.object.customer must be a customer id or null',
      ],
    ];
    for (const [type, object, problem] of cases) {
      const event = signedEvent(type, object);
      const res = await deliver(event, logged);
      expect([type, res.statusCode, res.json()]).toEqual([
        type,
        400,
        { error: `Stripe event ${type}: ${problem}`, message: `Stripe event ${type}: ${problem}` },
      ]);
      expect(recorded(logged, event.id)).toBe(false);
    }
    for (const [payload, error] of [
      ['null', 'Stripe event: must be a JSON object'],
      [
        JSON.stringify({ id: 5, type: 'customer.subscription.created', created: 1, data: { object: sub } }),
        'Stripe event: id must be a non-empty string',
      ],
      [
        JSON.stringify({ id: 'evt_no_created', type: 'customer.subscription.created', data: { object: sub } }),
        'Stripe event evt_no_created: created must be an integer',
      ],
    ] as const) {
      const res = await deliver(signedPayload(payload), logged);
      expect([res.statusCode, res.json()]).toEqual([400, { error, message: error }]);
    }
    expect(logs.filter((l) => l.msg === 'stripe event refused').length).toBeGreaterThanOrEqual(
      handled.length * 2 + cases.length,
    );
    expect((await c.get('/api/subscription')).json().status).toBe('inactive');
    // An event refused for its shape was not recorded: the same id, well formed, is applied.
    const good = signedEvent('customer.subscription.created', sub);
    const bad = signedPayload(envelope('customer.subscription.created', null, good.id));
    expect((await deliver(bad, logged)).statusCode).toBe(400);
    expect((await deliver(good, logged)).json()).toEqual({ received: true });
    expect((await c.get('/api/subscription')).json().status).toBe('active');
  });

  it('a signed event of a type we ignore is acknowledged whatever its data', async () => {
    for (const data of [null, { object: null }, 'text']) {
      const res = await deliver(signedPayload(envelope('charge.refunded', data)), logged);
      expect([res.statusCode, res.json()]).toEqual([200, { received: true }]);
    }
  });

  it("Stripe's errors are our 502 or 503 with Stripe's answer in the log, never its own status passed through", async () => {
    const { c, username, email } = await signUp(new Client(logged));
    await verify(c, email);
    const id = userId(logged, username);
    expect((await c.post('/api/stripe/create-checkout', { billingPeriod: 'annual' })).statusCode).toBe(200);
    const customer = stripe.calls.filter((x) => x.path === '/v1/checkout/sessions').at(-1)!.params.customer!;
    // The session's subscription is unknown to Stripe (its 404): 502, the event is not recorded, so Stripe's
    // retry is applied once the subscription can be fetched.
    const sub = subscriptionObject({ customer, price: PRICE_ANNUAL, status: 'active', userId: id });
    const completed = signedEvent('checkout.session.completed', {
      id: 'cs_404',
      object: 'checkout.session',
      mode: 'subscription',
      customer,
      subscription: sub.id,
      client_reference_id: id,
    });
    const missing = await deliver(completed, logged);
    expect([missing.statusCode, missing.json()]).toEqual([
      502,
      { error: TEXTS.webhookStripeFailed, message: TEXTS.webhookStripeFailed },
    ]);
    const line = logs.findLast((l) => l.msg === 'stripe API call failed while handling a webhook event')!;
    expect(line).toMatchObject({
      level: 50,
      event: 'checkout.session.completed',
      eventId: completed.id,
      stripe: { statusCode: 404, code: 'resource_missing', type: 'StripeInvalidRequestError' },
    });
    expect((line.stripe as { requestId: string }).requestId).toMatch(/^req_/);
    expect(recorded(logged, completed.id)).toBe(false);
    // Stripe failing itself (a 500, after the SDK's one retry): 503.
    stripe.failures.set(`GET /v1/subscriptions/${sub.id}`, 500);
    try {
      const down = await deliver(completed, logged);
      expect([down.statusCode, down.json()]).toEqual([
        503,
        { error: TEXTS.webhookStripeFailed, message: TEXTS.webhookStripeFailed },
      ]);
      expect(logs.findLast((l) => l.msg === 'stripe API call failed while handling a webhook event')).toMatchObject({
        stripe: { statusCode: 500, type: 'StripeAPIError' },
      });
    } finally {
      stripe.failures.delete(`GET /v1/subscriptions/${sub.id}`);
    }
    stripe.subscriptions.set(sub.id, sub);
    expect((await deliver(completed, logged)).json()).toEqual({ received: true });
    expect((await c.get('/api/subscription')).json()).toMatchObject({ status: 'active', plan: 'Standard Annual' });

    // The billing portal and checkout: Stripe's 404 is our 502, its 500 our 503; the cause is logged.
    const { c: other, email: otherEmail } = await signUp(new Client(logged));
    await verify(other, otherEmail);
    for (const [path, url, body, message] of [
      ['POST /v1/billing_portal/sessions', '/api/stripe/create-portal', {}, 'stripe portal failed'],
      [
        'POST /v1/checkout/sessions',
        '/api/stripe/create-checkout',
        { billingPeriod: 'monthly' },
        'stripe checkout failed',
      ],
    ] as const) {
      const client = url.endsWith('portal') ? c : other;
      for (const [upstream, ours] of [
        [404, 502],
        [500, 503],
      ] as const) {
        stripe.failures.set(path, upstream);
        try {
          const res = await client.post(url, body);
          expect([url, upstream, res.statusCode, res.json()]).toEqual([
            url,
            upstream,
            ours,
            { error: TEXTS.stripeFailed, message: TEXTS.stripeFailed },
          ]);
          expect(logs.findLast((l) => l.msg === message)).toMatchObject({
            level: 50,
            stripe: { statusCode: upstream },
          });
        } finally {
          stripe.failures.delete(path);
        }
      }
    }
  });
});

describe('outbox without SMTP', () => {
  it('writes the verification e-mail (text and HTML) to the outbox folder', async () => {
    const dir = tempDir('outbox');
    const env = projectEnv(dir);
    const config = loadConfig({ ...env });
    const ingest = loadIngestConfig(config, env);
    initKeys({ keys: config.keys, privateKeys: config.privateKeys });
    const db = openDatabase(config.db);
    const app = await buildApp({
      config,
      ingest,
      clock: () => new Date(now),
      store: openSqliteStore(config.db, { db }),
      mailer: createMailer(ingest, { info: () => {} }),
      archiveAccess: archiveAccess(config.archive, config.logOrigin),
      accounts: loadAccountsConfig(config.origin, {}),
    });
    try {
      const res = await app.inject({
        method: 'POST',
        url: '/api/auth/signup',
        payload: { username: 'outboxer', email: 'outboxer@example.org', password: 'long enough', agreeTerms: true },
      });
      expect(res.statusCode).toBe(201);
      const files = await vi.waitFor(
        () => {
          const files = fs.existsSync(ingest.outbox) ? fs.readdirSync(ingest.outbox) : [];
          expect(files, 'the outbox').not.toEqual([]);
          return files;
        },
        { timeout: 5000, interval: 50 },
      );
      const eml = fs
        .readFileSync(path.join(ingest.outbox, files[0]!), 'utf8')
        .replace(/=\r?\n/g, '')
        .replace(/=3D/g, '=');
      expect(eml).toContain('To: outboxer@example.org');
      expect(eml).toMatch(/verify-email\?token=[A-Za-z0-9_-]{43}/);
      expect(eml).toContain('text/html');
    } finally {
      await app.close();
      db.close();
    }
  });
});
