// Cross-origin access by class of route (ingest/README.md, "Cross-origin"): the public reads and the beta API answer any
// origin with CORS `*` and Cross-Origin-Resource-Policy cross-origin and never credentials, including the beta
// API's preflight; routes that read the session cookie and the site's pages answer no CORS at all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { tilePath } from '../../core/tiles.ts';
import { PUBLIC_ROUTES } from '../security-headers.ts';
import { DAY, makeFixture, randomHash, removeTempDirs, type Fixture } from './fixture.ts';

let f: Fixture;
const ORIGIN = 'https://third-party.example';

beforeAll(async () => {
  f = await makeFixture();
});
afterAll(async () => {
  await f.close();
  removeTempDirs();
});

function expectPublic(res: LightMyRequestResponse, what: string): void {
  expect(res.headers['access-control-allow-origin'], what).toBe('*');
  expect(res.headers['cross-origin-resource-policy'], what).toBe('cross-origin');
  expect(res.headers['access-control-allow-credentials'], what).toBeUndefined();
}

function expectNoCors(res: LightMyRequestResponse, what: string): void {
  expect(res.headers['access-control-allow-origin'], what).toBeUndefined();
  expect(res.headers['access-control-allow-credentials'], what).toBeUndefined();
  expect(res.headers['cross-origin-resource-policy'] ?? 'same-origin', what).toBe('same-origin');
}

describe('public reads answer any origin', () => {
  it('archive files of every kind, keys, the made index, proofs and the public GET APIs', async () => {
    const hash = f.published[0]!;
    const urls = [
      `/ledgers/${DAY}.json`,
      `/ledgers/${DAY}.json.sig`,
      `/ledgers/${DAY}.json.dilithium.sig`,
      `/ledgers/${DAY}.checkpoint`,
      `/ledgers/${tilePath(0, 0, 3)}`,
      '/ledgers/checkpoint',
      '/ledgers/days.json',
      '/ledgers/index-sha256.json',
      '/keys/public.pem',
      '/keys/dilithium_public.key',
      `/api/proof/${hash}`,
      '/api/queue-stats.php',
      '/api/ledgers.php',
      '/api/ots-block-info.php',
      `/api/verify-quantum.php?date=${DAY}`,
      '/api/openapi.json',
      `/api/status/${hash}`,
      '/api/ledgers-calendar.php?year=2025',
    ];
    for (const url of urls) {
      const res = await f.app.inject({ url, headers: { origin: ORIGIN } });
      expect(res.statusCode, url).toBe(200);
      expectPublic(res, url);
      const head = await f.app.inject({ method: 'HEAD', url, headers: { origin: ORIGIN } });
      expectPublic(head, `HEAD ${url}`);
    }
  });

  it('their errors too, so that a page elsewhere can read why', async () => {
    for (const url of [
      '/ledgers/2031-01-01.json',
      '/keys/nothing.pem',
      `/api/proof/${randomHash()}`,
      `/api/proof/${randomHash()}.ots`,
      '/api/verify-quantum.php?date=yesterday',
    ]) {
      const res = await f.app.inject({ url, headers: { origin: ORIGIN } });
      expect(res.statusCode, url).toBeGreaterThanOrEqual(400);
      expectPublic(res, url);
    }
  });
});

describe('the allow-list', () => {
  it('names only routes the server has, with their methods (a renamed route must not silently lose CORS)', () => {
    for (const [url, methods] of Object.entries(PUBLIC_ROUTES)) {
      for (const method of methods)
        expect(f.app.hasRoute({ method: method as 'GET', url }), `${method} ${url}`).toBe(true);
    }
  });
});

describe('beta API', () => {
  it('answers a preflight for POST with Content-Type: application/json', async () => {
    const res = await f.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/beta/timestamp',
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(res.statusCode).toBe(204);
    expectPublic(res, 'preflight');
    expect(String(res.headers['access-control-allow-methods']).split(/,\s*/)).toContain('POST');
    expect(String(res.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/)).toContain('content-type');
    expect(Number(res.headers['access-control-max-age'])).toBeGreaterThan(0);
  });

  it('the batch route answers a preflight and its answers carry CORS', async () => {
    const pre = await f.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/beta/timestamps',
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(pre.statusCode).toBe(204);
    expectPublic(pre, 'batch preflight');
    const ok = await f.app.inject({
      method: 'POST',
      url: '/api/v1/beta/timestamps',
      headers: { origin: ORIGIN },
      payload: { hashes: [randomHash()] },
    });
    expect(ok.statusCode).toBe(200);
    expectPublic(ok, 'batch 200');
  });

  it('its answers, success or error, carry CORS', async () => {
    const ok = await f.app.inject({
      method: 'POST',
      url: '/api/v1/beta/timestamp',
      headers: { origin: ORIGIN },
      payload: { hash: randomHash() },
    });
    expect(ok.statusCode).toBe(201);
    expectPublic(ok, 'beta 201');
    const bad = await f.app.inject({
      method: 'POST',
      url: '/api/v1/beta/timestamp',
      headers: { origin: ORIGIN },
      payload: { hash: 'nope' },
    });
    expect(bad.statusCode).toBe(400);
    expectPublic(bad, 'beta 400');
  });

  it("a read route's preflight allows conditional and range headers", async () => {
    const res = await f.app.inject({
      method: 'OPTIONS',
      url: `/ledgers/${DAY}.json`,
      headers: { origin: ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'if-range' },
    });
    expect(res.statusCode).toBe(204);
    expectPublic(res, 'read preflight');
    expect(String(res.headers['access-control-allow-headers']).toLowerCase()).toContain('if-range');
  });
});

describe('session routes and pages never answer CORS', () => {
  it('accounts, /api/submit, the history certificate and the site', async () => {
    const requests = [
      { method: 'GET', url: '/api/auth/me' },
      { method: 'POST', url: '/api/auth/login', payload: { username: 'someone', password: 'wrong password' } },
      { method: 'GET', url: '/api/subscription' },
      { method: 'POST', url: '/api/submit', payload: { hash: randomHash() } },
      { method: 'GET', url: `/api/certificate.php?hash=${f.published[0]}` },
      { method: 'GET', url: '/' },
    ] as const;
    for (const r of requests) {
      const res = await f.app.inject({ ...r, headers: { origin: ORIGIN } });
      expect(res.statusCode, r.url).toBeGreaterThan(0);
      expectNoCors(res, `${r.method} ${r.url}`);
      // Not embeddable by another site either (the re-probe found no CORP on JSON session answers).
      expect(res.headers['cross-origin-resource-policy'], `${r.method} ${r.url}`).toBe('same-origin');
    }
  });

  it('an account route answers no preflight', async () => {
    for (const url of ['/api/auth/login', '/api/submit', '/api/auth/me']) {
      const res = await f.app.inject({
        method: 'OPTIONS',
        url,
        headers: {
          origin: ORIGIN,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(res.statusCode, url).not.toBe(204);
      expectNoCors(res, `OPTIONS ${url}`);
    }
  });
});
