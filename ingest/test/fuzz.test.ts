// Property: hundreds of malformed requests at every endpoint get a 4xx, never a 5xx, and write no row.
// Requests are built from valid ones by breaking exactly one thing (a field's type or value, an unknown
// field, a missing field, the encoding, the size, the content type, the method, the path), so each is
// invalid by construction.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY, makeFixture, randomHash, removeTempDirs, type Fixture } from './fixture.ts';

let f: Fixture;
beforeAll(async () => {
  f = await makeFixture();
});
afterAll(async () => {
  await f.close();
  removeTempDirs();
});

const VALID_BODIES: Record<string, Record<string, unknown>> = {
  '/api/submit': { hash: randomHash(), fileName: 'a.txt' },
  '/api/v1/beta/timestamp': { hash: randomHash() },
  '/api/professional-waitlist.php': { name: 'Ada', email: 'ada@example.org', message: 'Hello there' },
  '/api/contact': { name: 'Ada', email: 'ada@example.org', subject: 'general', message: 'Hello there, operator' },
};
const POSTS = Object.keys(VALID_BODIES);
const GETS = [
  '/api/queue-stats.php',
  '/api/ledgers.php',
  '/api/ots-block-info.php',
  `/api/verify-quantum.php?date=${DAY}`,
  `/api/certificate.php?hash=${'a'.repeat(64)}`,
  `/api/proof/${'a'.repeat(64)}`,
  `/api/proof/${'a'.repeat(64)}.ots`,
  `/api/proof/${'a'.repeat(64)}.tlog-proof`,
  '/api/openapi.json',
  '/ledgers/days.json',
  '/keys/public.pem',
  '/proof/',
];

/** A JSON value that is never a string (wrong type for every field of every form). */
const nonString = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 2 }),
);
/** Strings no field accepts: control characters, or far too long. */
const badString = fc.oneof(
  fc.string({ maxLength: 20 }).map((s) => `${s}\u0000${s}`),
  fc.string({ maxLength: 20 }).map((s) => `\u001b[31m${s}\u0007`),
  fc.constant('x'.repeat(6000)),
);
const hashLike = fc.oneof(
  fc.string({ maxLength: 70 }).filter((s) => !/^[0-9a-fA-F]{64}$/.test(s)),
  fc.stringMatching(/^[0-9a-f]{63}$/),
  fc.stringMatching(/^[0-9a-f]{65}$/),
  fc.stringMatching(/^[0-9a-f]{60}[g-z]{4}$/),
  fc.constant(`${'a'.repeat(64)}\n`),
  fc.constant(` ${'a'.repeat(64)}`),
);

type Req = {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  url: string;
  payload?: string | Buffer;
  headers: Record<string, string>;
};

const json = { 'content-type': 'application/json' };

const brokenBody: fc.Arbitrary<Req> = fc.constantFrom(...POSTS).chain((url) => {
  const valid = VALID_BODIES[url]!;
  const fields = Object.keys(valid);
  const mutate = fc.oneof(
    fc
      .record({ field: fc.constantFrom(...fields), value: fc.oneof(nonString, badString) })
      .filter(({ field, value }) => !(field === 'fileName' && value === null))
      .map(({ field, value }) => ({ ...valid, [field]: value })),
    fc
      .constantFrom(...fields)
      .chain((field) =>
        field === 'hash' ? hashLike.map((v) => ({ ...valid, hash: v })) : fc.constant({ ...valid, [field]: 7 }),
      ),
    fc
      .record({
        key: fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !fields.includes(k)),
        value: fc.jsonValue(),
      })
      .map(({ key, value }) => ({ ...valid, [key]: value })),
    fc
      .constantFrom(...fields.filter((k) => k !== 'fileName'))
      .map((field) => Object.fromEntries(Object.entries(valid).filter(([k]) => k !== field))),
    fc.oneof(fc.array(fc.jsonValue(), { maxLength: 3 }), fc.string(), fc.integer(), fc.constant(null)),
  );
  return fc.oneof(
    mutate.map((body): Req => ({ method: 'POST', url, payload: JSON.stringify(body), headers: json })),
    fc
      .string({ maxLength: 60 })
      .filter((s) => {
        try {
          JSON.parse(s);
          return false;
        } catch {
          return true;
        }
      })
      .map((s): Req => ({ method: 'POST', url, payload: s, headers: json })),
    fc.uint8Array({ minLength: 1, maxLength: 40 }).map((bytes): Req => ({
      method: 'POST',
      url,
      payload: Buffer.concat([
        Buffer.from('{"hash":"'),
        Buffer.from(bytes),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('"}'),
      ]),
      headers: json,
    })),
    fc
      .constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/xml',
        '',
      )
      .map((type): Req => ({
        method: 'POST',
        url,
        payload: JSON.stringify(valid),
        headers: type === '' ? {} : { 'content-type': type },
      })),
    fc.constant<Req>({
      method: 'POST',
      url,
      payload: JSON.stringify({ ...valid, pad: 'x'.repeat(17_000) }),
      headers: json,
    }),
    fc.string({ minLength: 1, maxLength: 10 }).map((q): Req => ({
      method: 'POST',
      url: `${url}?${encodeURIComponent(q)}=1`,
      payload: JSON.stringify(valid),
      headers: json,
    })),
  );
});

const brokenGet: fc.Arbitrary<Req> = fc.oneof(
  fc
    .record({ url: fc.constantFrom(...GETS), q: fc.string({ maxLength: 30 }), v: fc.string({ maxLength: 30 }) })
    .map(({ url, q, v }): Req => ({
      method: 'GET',
      url: `${url}${url.includes('?') ? '&' : '?'}${encodeURIComponent(q)}x=${encodeURIComponent(v)}`,
      headers: {},
    })),
  fc
    .string({ maxLength: 80 })
    .map((s): Req => ({ method: 'GET', url: `/api/proof/${encodeURIComponent(s)}`, headers: {} })),
  fc
    .string({ maxLength: 40 })
    .map((s): Req => ({ method: 'GET', url: `/api/verify-quantum.php?date=${encodeURIComponent(s)}`, headers: {} })),
  fc
    .string({ maxLength: 80 })
    .map((s): Req => ({ method: 'GET', url: `/api/certificate.php?hash=${encodeURIComponent(s)}`, headers: {} })),
  fc
    .array(
      fc.constantFrom(
        '..',
        '.',
        '%2e%2e',
        '%2f',
        '%00',
        'keys',
        'data',
        'private',
        'timeseal.db',
        '%5c',
        'tile',
        'x001',
        '%',
        '%zz',
        '~',
        '',
      ),
      { minLength: 1, maxLength: 6 },
    )
    .chain((parts) =>
      fc
        .constantFrom('/', '/ledgers/', '/keys/', '/api/proof/')
        .map((prefix): Req => ({ method: 'GET', url: `${prefix}${parts.join('/')}`, headers: {} })),
    ),
);

const wrongMethod: fc.Arbitrary<Req> = fc
  .record({ method: fc.constantFrom('PUT', 'DELETE', 'PATCH'), url: fc.constantFrom(...POSTS, ...GETS) })
  .map(({ method, url }): Req => ({
    method: method as Req['method'],
    url,
    payload: JSON.stringify(VALID_BODIES[url] ?? {}),
    headers: json,
  }));
const getOnPost: fc.Arbitrary<Req> = fc.constantFrom(...POSTS).map((url): Req => ({ method: 'GET', url, headers: {} }));

describe('malformed requests', () => {
  it('never get a 5xx and never write a row', async () => {
    const before = f.rowCounts();
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ arbitrary: brokenBody, weight: 4 }, { arbitrary: brokenGet, weight: 3 }, wrongMethod, getOnPost),
        async (req) => {
          const res = await f.app.inject({
            method: req.method,
            url: req.url,
            payload: req.payload,
            headers: req.headers,
            remoteAddress: '192.0.2.77',
          });
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          expect(
            res.statusCode,
            `${req.method} ${req.url} ${String(req.payload).slice(0, 200)}\n${res.body.slice(0, 300)}`,
          ).toBeLessThan(500);
          if (req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH' || req.method === 'DELETE') {
            expect(
              res.statusCode,
              `${req.method} ${req.url} ${String(req.payload).slice(0, 200)} -> ${res.body}`,
            ).toBeGreaterThanOrEqual(400);
          }
          if (res.statusCode >= 400 && res.headers['content-type']?.startsWith('application/json')) {
            const route = req.method === 'POST' ? req.url.split('?')[0] : '';
            expect(res.json()).toHaveProperty(
              route === '/api/submit' ? 'ok' : route === '/api/v1/beta/timestamp' ? 'success' : 'error',
            );
            expect(typeof res.json().error).toBe('string');
          }
        },
      ),
      { numRuns: 600 },
    );
    expect(f.rowCounts()).toEqual(before);
    // The run reached the validators, not only the router.
    expect(statuses.get(400) ?? 0).toBeGreaterThan(100);
  });
});
