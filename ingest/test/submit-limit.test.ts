// Small follow-ups of the site work: POST /api/submit's 429 says which limit was reached and when it resets
// (`limit: {period, max, resetsAt}` and Retry-After), and offers the upgrade to Standard only when payments are
// configured; GET /api/proof/:hash's file name is timeseal-proof-<first 12 hex>.json.
import { afterAll, expect, it } from 'vitest';
import { DAILY_LIMIT_ERROR } from '../limits.ts';
import { DAILY_LIMIT_ERROR_NO_PAYMENTS, limitInfo } from '../limit-answer.ts';
import { makeFixture, randomHash, removeTempDirs, type Fixture } from './fixture.ts';

const fixtures: Fixture[] = [];
afterAll(async () => {
  for (const f of fixtures) await f.close();
  removeTempDirs();
});

async function thirdSubmission(env: Record<string, string> = {}) {
  const f = await makeFixture({ env });
  fixtures.push(f);
  const submit = () =>
    f.app.inject({
      method: 'POST',
      url: '/api/submit',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ hash: randomHash() }),
      remoteAddress: '203.0.113.9',
    });
  expect((await submit()).statusCode).toBe(201);
  expect((await submit()).statusCode).toBe(201);
  return submit();
}

it('the free tier 429 carries limit {period: day, max: 2, resetsAt} and Retry-After; no upgrade without payments', async () => {
  // The fixture's clock: 2025-11-03T12:00:00Z, 12 hours before the reset.
  const r = await thirdSubmission();
  expect(r.statusCode).toBe(429);
  expect(r.headers['retry-after']).toBe(String(12 * 3600));
  expect(r.json()).toEqual({
    ok: false,
    error: DAILY_LIMIT_ERROR_NO_PAYMENTS,
    message: DAILY_LIMIT_ERROR_NO_PAYMENTS,
    limit: { period: 'day', max: 2, resetsAt: '2025-11-04T00:00:00.000Z' },
  });
  expect(DAILY_LIMIT_ERROR_NO_PAYMENTS).not.toContain('Standard');
});

it('with payments configured the text offers the upgrade to Standard', async () => {
  const r = await thirdSubmission({
    STRIPE_SECRET_KEY: 'sk_test_x',
    STRIPE_PRICE_MONTHLY: 'price_m',
    STRIPE_PRICE_ANNUAL: 'price_a',
  });
  expect(r.statusCode).toBe(429);
  expect(r.json()).toMatchObject({ error: DAILY_LIMIT_ERROR, limit: { period: 'day', max: 2 } });
  expect(DAILY_LIMIT_ERROR).toContain('upgrade to Standard');
});

it('the monthly limit resets on the 1st of the next UTC month', () => {
  expect(limitInfo('standard', new Date('2025-12-31T23:59:59.000Z'))).toEqual({
    period: 'month',
    max: 500,
    resetsAt: '2026-01-01T00:00:00.000Z',
  });
  expect(limitInfo('free', new Date('2025-12-31T23:59:59.000Z'))).toEqual({
    period: 'day',
    max: 2,
    resetsAt: '2026-01-01T00:00:00.000Z',
  });
});

it('the proof bundle is named timeseal-proof-<first 12 hex>.json', async () => {
  const f = await makeFixture();
  fixtures.push(f);
  const hash = f.published[0]!;
  const r = await f.app.inject({ method: 'GET', url: `/api/proof/${hash}` });
  expect(r.statusCode).toBe(200);
  expect(r.headers['content-disposition']).toBe(`inline; filename="timeseal-proof-${hash.slice(0, 12)}.json"`);
});
