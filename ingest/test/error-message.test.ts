// Every JSON error body carries `message`, the same text as `error` (docs/API.md, "Errors"; the
// client shows `message`): a sample of error answers of every route class — public reads, submissions, the beta
// API, forms, accounts, payments, the framework's own errors (bad JSON, wrong type, too large) and the 404.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeFixture, removeTempDirs, type Fixture } from './fixture.ts';

let f: Fixture;
beforeAll(async () => {
  f = await makeFixture();
});
afterAll(async () => {
  await f?.close();
  removeTempDirs();
});

const json = { 'content-type': 'application/json', origin: 'https://timeseal.test' };
const cases: Array<{
  name: string;
  method: 'GET' | 'POST';
  url: string;
  body?: string;
  headers?: Record<string, string>;
  status?: number;
}> = [
  { name: 'unknown API route', method: 'GET', url: '/api/nothing-here', status: 404 },
  { name: 'proof of an unpublished hash', method: 'GET', url: `/api/proof/${'0'.repeat(64)}`, status: 404 },
  { name: 'proof of a malformed hash', method: 'GET', url: '/api/proof/xyz', status: 400 },
  { name: 'ots of an unpublished hash', method: 'GET', url: `/api/proof/${'0'.repeat(64)}.ots`, status: 404 },
  { name: 'certificate with neither parameter', method: 'GET', url: '/api/certificate.php', status: 400 },
  { name: 'ledgers with an unknown query', method: 'GET', url: '/api/ledgers.php?bogus=1', status: 400 },
  { name: 'submit: bad hash', method: 'POST', url: '/api/submit', body: JSON.stringify({ hash: 'nope' }), status: 400 },
  { name: 'submit: malformed JSON', method: 'POST', url: '/api/submit', body: '{"hash":', status: 400 },
  {
    name: 'submit: wrong content type',
    method: 'POST',
    url: '/api/submit',
    body: 'hash=1',
    headers: { 'content-type': 'text/plain', origin: 'https://timeseal.test' },
    status: 415,
  },
  {
    name: 'submit: body too large',
    method: 'POST',
    url: '/api/submit',
    body: JSON.stringify({ hash: 'a'.repeat(20_000) }),
    status: 413,
  },
  {
    name: 'beta API: bad hash',
    method: 'POST',
    url: '/api/v1/beta/timestamp',
    body: JSON.stringify({ hash: 'nope' }),
    status: 400,
  },
  { name: 'waitlist: missing fields', method: 'POST', url: '/api/professional-waitlist.php', body: '{}', status: 400 },
  { name: 'contact: missing fields', method: 'POST', url: '/api/contact', body: '{}', status: 400 },
  {
    name: 'login: wrong password',
    method: 'POST',
    url: '/api/auth/login',
    body: JSON.stringify({ email: 'nobody@example.test', password: 'wrong-password' }),
  },
  {
    name: 'signup: short password',
    method: 'POST',
    url: '/api/auth/signup',
    body: JSON.stringify({ username: 'someone', email: 'someone@example.test', password: 'x' }),
  },
  {
    name: 'verify e-mail: bad token',
    method: 'POST',
    url: '/api/auth/verify-email',
    body: JSON.stringify({ token: 'bad' }),
  },
  {
    name: 'reset password: bad token',
    method: 'POST',
    url: '/api/auth/reset-password',
    body: JSON.stringify({ token: 'bad', password: 'long-enough-password' }),
  },
  { name: 'history without a session', method: 'GET', url: '/api/timestamps' },
  {
    name: 'checkout without a session',
    method: 'POST',
    url: '/api/stripe/create-checkout',
    body: JSON.stringify({ billingPeriod: 'monthly' }),
  },
];

for (const c of cases) {
  it(`${c.name}: message === error`, async () => {
    const r = await f.app.inject({
      method: c.method,
      url: c.url,
      payload: c.body,
      headers: c.body === undefined ? {} : (c.headers ?? json),
    });
    if (c.status !== undefined) expect(r.statusCode).toBe(c.status);
    expect(r.statusCode).toBeGreaterThanOrEqual(400);
    expect(r.headers['content-type']).toContain('application/json');
    const body = r.json() as { error?: unknown; message?: unknown };
    expect(typeof body.error).toBe('string');
    expect(body.message).toBe(body.error);
  });
}

it('a success body is left alone', async () => {
  const r = await f.app.inject({ method: 'GET', url: '/api/queue-stats.php' });
  expect(r.statusCode).toBe(200);
  expect(r.json()).not.toHaveProperty('message');
});
