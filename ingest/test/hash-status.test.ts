// GET /api/status/:hash (ingest/routes/hash-status.ts): published, queued (with the ledger's publication time),
// both, or unknown; a malformed hash is 400; the route and the paged ledger list are in the OpenAPI document.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { setting } from '../../runtime/settings.ts';
import { DAY, makeFixture, NOW, randomHash, removeTempDirs, TODAY, type Fixture } from './fixture.ts';
import type { HashStatus } from '../routes/hash-status.ts';

let f: Fixture;
beforeAll(async () => {
  f = await makeFixture();
});
afterAll(async () => {
  await f.close();
  removeTempDirs();
});

const status = async (hash: string) => {
  const res = await f.app.inject(`/api/status/${hash}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as HashStatus;
};
const submit = (hash: string) => f.app.inject({ method: 'POST', url: '/api/v1/beta/timestamp', payload: { hash } });

describe('GET /api/status/:hash', () => {
  test('a hash submitted today is queued for today’s ledger, published at 00:01 UTC tomorrow', async () => {
    const hash = randomHash();
    expect((await submit(hash)).statusCode).toBe(201);
    expect(await status(hash.toUpperCase())).toEqual({
      hash,
      state: 'queued',
      message: `Queued for the ledger of ${TODAY}, published at 2025-11-04T00:01:00.000Z (00:01 UTC).`,
      published: [],
      queued: [{ ledgerDate: TODAY, submittedAt: NOW, publishedAt: '2025-11-04T00:01:00.000Z' }],
    });
  });

  test('a published hash: its day and leaf; submitted again today, also queued', async () => {
    const hash = f.published[1]!;
    const before = await status(hash);
    expect(before.state).toBe('published');
    expect(before.published).toEqual([
      { date: DAY, leafIndex: expect.any(Number), submittedAt: `${DAY}T09:01:00.000Z`, proofUrl: `/api/proof/${hash}` },
    ]);
    expect(before.queued).toEqual([]);
    await submit(hash);
    const after = await status(hash);
    expect(after.state).toBe('published');
    expect(after.queued.map((q) => q.ledgerDate)).toEqual([TODAY]);
    expect(after.message).toBe(
      `Published in the ledger of ${DAY}. Also queued for the ledger of ${TODAY}, published at 2025-11-04T00:01:00.000Z.`,
    );
  });

  test('an unknown hash; a malformed one is 400', async () => {
    expect(await status(randomHash())).toMatchObject({
      state: 'unknown',
      published: [],
      queued: [],
      message: expect.stringMatching(/no record of this hash/),
    });
    expect((await f.app.inject('/api/status/abc')).statusCode).toBe(400);
    expect((await f.app.inject(`/api/status/${randomHash()}?x=1`)).statusCode).toBe(400);
  });

  test('the status lookup and the paged ledger list are in the OpenAPI document', async () => {
    const doc = (await f.app.inject('/api/openapi.json')).json() as {
      paths: Record<string, { get?: { parameters?: Array<{ name: string }> } }>;
    };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/api/v1/beta/timestamp', '/api/status/{hash}', '/api/ledgers.php']),
    );
    expect(doc.paths['/api/ledgers.php']!.get!.parameters!.map((p) => p.name).sort()).toEqual(['before', 'limit']);
    expect(Object.keys(doc.paths)).not.toContain('/api/auth/me');
  });
});

describe('the status lookup’s budget per address', () => {
  const lookup = (remoteAddress: string) => f.app.inject({ url: `/api/status/${randomHash()}`, remoteAddress });

  test('120 lookups a minute from one address, then 429 with Retry-After until the next minute; other addresses go on', async () => {
    for (let i = 0; i < 120; i++) expect((await lookup('203.0.113.7')).statusCode).toBe(200);
    const refused = await lookup('203.0.113.7');
    expect(refused.statusCode).toBe(429);
    // The fixture's clock stands at 12:00:00.000, the start of a minute.
    expect(refused.headers['retry-after']).toBe('60');
    const text =
      'Too many status lookups from this address: this server answers at most 120 a minute from one address. Try again in 60 seconds.';
    expect(refused.json()).toEqual({ error: text, message: text });
    expect((await lookup('203.0.113.8')).statusCode).toBe(200);
  });

  test('an IPv6 /64 is one address', async () => {
    for (let i = 0; i < 120; i++) expect((await lookup(`2001:db8:1:2::${(i + 1).toString(16)}`)).statusCode).toBe(200);
    expect((await lookup('2001:db8:1:2:ffff::1')).statusCode).toBe(429);
    expect((await lookup('2001:db8:1:3::1')).statusCode).toBe(200);
  });
});

const statusLookupRate = (text: string | undefined) => setting({ STATUS_LOOKUP_RATE: text }, 'STATUS_LOOKUP_RATE');

test('STATUS_LOOKUP_RATE sets the budget; a malformed one is refused at start', () => {
  expect(statusLookupRate(undefined)).toEqual({ count: 120, unit: 'minute', windowMs: 60_000 });
  expect(statusLookupRate('10/second')).toEqual({ count: 10, unit: 'second', windowMs: 1000 });
  expect(() => statusLookupRate('lots')).toThrow(
    /STATUS_LOOKUP_RATE must be a count per second, minute, hour or day, like STATUS_LOOKUP_RATE=120\/minute/,
  );
});
