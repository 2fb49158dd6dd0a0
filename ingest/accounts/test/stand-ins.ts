// Loopback stand-ins for the two outside services the accounts use (the tests never reach the real ones):
// - a Stripe API stand-in answering the calls the server makes through the official SDK (customers,
//   checkout.sessions, billing_portal.sessions, subscriptions retrieve) with JSON shaped like Stripe's, and two
//   HTML pages standing for Stripe's hosted checkout and portal; it checks the secret key like Stripe does;
// - a real SMTP server (the `smtp-server` package) collecting every message.
// Also `signedEvent` and `signedPayload`: a webhook payload with a real Stripe-Signature header made by the SDK.
// Calls named in `failures` are answered with that HTTP status and an error body like Stripe's.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import Stripe from 'stripe';

export const STRIPE_KEY = 'sk_test_timeseal_standin';
export const WEBHOOK_SECRET = 'whsec_timeseal_standin';
export const PRICE_MONTHLY = 'price_standard_monthly';
export const PRICE_ANNUAL = 'price_standard_annual';

export interface StripeCall {
  method: string;
  path: string;
  params: Record<string, string>;
}

export interface StripeStandIn {
  url: string;
  calls: StripeCall[];
  /** What GET /v1/subscriptions/:id answers (set by the test before the webhook that needs it). */
  subscriptions: Map<string, Stripe.Subscription>;
  /** Calls to fail, as "METHOD /path" → the HTTP status Stripe answers them with (an error body like Stripe's). */
  failures: Map<string, number>;
  close(): Promise<void>;
}

const rid = (prefix: string) => `${prefix}_${crypto.randomBytes(8).toString('hex')}`;

/** A subscription object as Stripe's API version 2025-03-31+ shapes it (period on the item). */
export function subscriptionObject(options: {
  id?: string;
  customer: string;
  price: string;
  status: string;
  userId?: string;
  periodStart?: number;
  periodEnd?: number;
  cancelAtPeriodEnd?: boolean;
}): Stripe.Subscription {
  const start = options.periodStart ?? Math.floor(Date.parse('2025-11-02T03:06:00Z') / 1000);
  const end = options.periodEnd ?? start + 30 * 86_400;
  const id = options.id ?? rid('sub');
  return {
    id,
    object: 'subscription',
    customer: options.customer,
    status: options.status,
    cancel_at_period_end: options.cancelAtPeriodEnd ?? false,
    cancel_at: null,
    created: start,
    livemode: false,
    metadata: options.userId ? { userId: options.userId } : {},
    items: {
      object: 'list',
      has_more: false,
      url: `/v1/subscription_items?subscription=${id}`,
      data: [
        {
          id: rid('si'),
          object: 'subscription_item',
          subscription: id,
          quantity: 1,
          current_period_start: start,
          current_period_end: end,
          price: {
            id: options.price,
            object: 'price',
            active: true,
            currency: 'usd',
            recurring: { interval: options.price === PRICE_MONTHLY ? 'month' : 'year', interval_count: 1 },
            unit_amount: options.price === PRICE_MONTHLY ? 2000 : 14400,
          },
        },
      ],
    },
  } as unknown as Stripe.Subscription;
}

export async function startStripeStandIn(): Promise<StripeStandIn> {
  const calls: StripeCall[] = [];
  const subscriptions = new Map<string, Stripe.Subscription>();
  const failures = new Map<string, number>();
  let base = '';
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', base);
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': rid('req') });
        res.end(JSON.stringify(value));
      };
      if (req.method === 'GET' && /^\/(checkout|portal)\//.test(url.pathname)) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(
          `<!doctype html><title>Stripe stand-in</title><h1>${url.pathname.startsWith('/checkout') ? 'Stripe Checkout (stand-in)' : 'Billing portal (stand-in)'}</h1>`,
        );
        return;
      }
      if (req.headers.authorization !== `Bearer ${STRIPE_KEY}`) {
        json(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
        return;
      }
      const params = Object.fromEntries(new URLSearchParams(body));
      calls.push({ method: req.method ?? '', path: url.pathname, params });
      const now = Math.floor(Date.now() / 1000);
      const failure = failures.get(`${req.method} ${url.pathname}`);
      if (failure !== undefined) {
        json(failure, {
          error: {
            type: failure >= 500 ? 'api_error' : 'invalid_request_error',
            code: failure === 404 ? 'resource_missing' : undefined,
            message: `Stand-in failure ${failure} for ${url.pathname}`,
          },
        });
        return;
      }
      if (req.method === 'POST' && url.pathname === '/v1/customers') {
        json(200, {
          id: rid('cus'),
          object: 'customer',
          email: params.email ?? null,
          created: now,
          livemode: false,
          metadata: { userId: params['metadata[userId]'] },
        });
      } else if (req.method === 'POST' && url.pathname === '/v1/checkout/sessions') {
        const id = rid('cs_test');
        json(200, {
          id,
          object: 'checkout.session',
          mode: params.mode,
          customer: params.customer,
          client_reference_id: params.client_reference_id,
          status: 'open',
          url: `${base}/checkout/${id}`,
          success_url: params.success_url,
          cancel_url: params.cancel_url,
          livemode: false,
          created: now,
        });
      } else if (req.method === 'POST' && url.pathname === '/v1/billing_portal/sessions') {
        const id = rid('bps');
        json(200, {
          id,
          object: 'billing_portal.session',
          customer: params.customer,
          return_url: params.return_url,
          url: `${base}/portal/${id}`,
          livemode: false,
          created: now,
        });
      } else if (req.method === 'GET' && url.pathname.startsWith('/v1/subscriptions/')) {
        const sub = subscriptions.get(decodeURIComponent(url.pathname.slice('/v1/subscriptions/'.length)));
        if (sub) json(200, sub);
        else
          json(404, {
            error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such subscription' },
          });
      } else {
        json(404, {
          error: {
            type: 'invalid_request_error',
            message: `Unrecognized request URL (${req.method}: ${url.pathname})`,
          },
        });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    calls,
    subscriptions,
    failures,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A webhook body and its Stripe-Signature header, signed by the SDK with `secret`; `created` in Unix seconds (default: now). */
export function signedEvent(
  type: string,
  object: unknown,
  options: { id?: string; secret?: string; created?: number } = {},
): { id: string; payload: string; signature: string } {
  const id = options.id ?? rid('evt');
  const payload = JSON.stringify({
    id,
    object: 'event',
    api_version: '2026-10-28.endive',
    created: options.created ?? Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    type,
    data: { object },
  });
  return { id, ...signedPayload(payload, options.secret) };
}

/** Any webhook body, signed as Stripe would sign it: for events whose shape is not the one Stripe documents. */
export function signedPayload(payload: string, secret = WEBHOOK_SECRET): { payload: string; signature: string } {
  return { payload, signature: new Stripe(STRIPE_KEY).webhooks.generateTestHeaderString({ payload, secret }) };
}

export interface Mail {
  to: string[];
  raw: string;
  /** The body with quoted-printable soft breaks and =3D undone (enough to read links). */
  text: string;
}

export interface SmtpStandIn {
  url: string;
  mails: Mail[];
  /** Resolves with the first message to `to` after `after` messages, waiting up to 10 s. */
  next(to: string, after?: number): Promise<Mail>;
  close(): Promise<void>;
}

export async function startSmtp(): Promise<SmtpStandIn> {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (d: Buffer) => (raw += d.toString()));
      stream.on('end', () => {
        const text = raw.replace(/=\r?\n/g, '').replace(/=3D/gi, '=');
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw, text });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async next(to, after = 0) {
      for (let i = 0; i < 200; i++) {
        const found = mails.slice(after).find((m) => m.to.includes(to));
        if (found) return found;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no e-mail to ${to} within 10 s (have ${mails.length})`);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The token of the first link to `path` (verify-email or reset-password) in a mail. */
export function linkToken(mail: Mail, path: string): string {
  const m = new RegExp(`/${path}\\?token=([A-Za-z0-9_-]{43})`).exec(mail.text);
  if (!m) throw new Error(`no ${path} link in:\n${mail.text}`);
  return m[1]!;
}
