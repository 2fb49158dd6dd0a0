// POST /tsa and Sigstore's POST /api/v1/timestamp share one admission path (ingest/tsa-admission.ts), in process:
// with BETA_API_RATE=2/day one token from each door uses up the address's count, and the third request, at
// either door, is a 429 with Retry-After in that door's own shape, with nothing stored; without the TSA key
// both doors answer 503 naming `timeseal keys add`; the Sigstore routes answer any origin, as the reference's
// do (a preflight, then the answer's headers). test/cli/sigstore-timestamp.test.ts checks the Sigstore
// door against a real server with sigstore-js and OpenSSL.
import crypto from 'node:crypto';
import { afterEach, expect, test } from 'vitest';
import { timeStampRequest } from '../../core/tsa-client.ts';
import { makeFixture, removeTempDirs, type Fixture } from './fixture.ts';

let fixture: Fixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
  removeTempDirs();
});

const digest = (text: string) => crypto.createHash('sha256').update(text).digest();
const viaTsa = (f: Fixture, text: string) =>
  f.app.inject({
    method: 'POST',
    url: '/tsa',
    headers: { 'content-type': 'application/timestamp-query' },
    payload: Buffer.from(timeStampRequest(digest(text), crypto.randomBytes(8))),
  });
const viaSigstore = (f: Fixture, text: string) =>
  f.app.inject({
    method: 'POST',
    url: '/api/v1/timestamp',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ artifactHash: digest(text).toString('base64'), hashAlgorithm: 'sha256' }),
  });

test('one rate cap for both doors: a token from each, then 429 at either, nothing more stored', async () => {
  fixture = await makeFixture({ env: { BETA_API_RATE: '2/day' } });
  const f = fixture;
  const before = f.rowCounts().submissions!;
  expect((await viaTsa(f, 'one')).statusCode).toBe(200);
  expect((await viaSigstore(f, 'two')).statusCode).toBe(200);
  expect(f.rowCounts().submissions).toBe(before + 2);

  const sigstore = await viaSigstore(f, 'three');
  expect(sigstore.statusCode).toBe(429);
  expect(Number(sigstore.headers['retry-after'])).toBeGreaterThan(0);
  expect(sigstore.headers['content-type']).toBe('application/timestamp-reply');
  const error = sigstore.json();
  expect(error.code).toBe(429);
  expect(error.message).toMatch(/^Error generating timestamp response\. .*2 .*day/i);

  const tsa = await viaTsa(f, 'four');
  expect(tsa.statusCode).toBe(429);
  expect(tsa.json().error).toBe(error.message.replace('Error generating timestamp response. ', ''));
  expect(f.rowCounts().submissions).toBe(before + 2);
});

test('without the TSA key both doors answer 503 naming `timeseal keys add`; the certificate chain and the root too', async () => {
  fixture = await makeFixture({ withoutTsaKey: true });
  const f = fixture;
  const tsa = await viaTsa(f, 'one');
  expect(tsa.statusCode).toBe(503);
  expect(tsa.json().error).toMatch(/no time-stamp key: run `timeseal keys add`/);
  const sigstore = await viaSigstore(f, 'one');
  expect(sigstore.statusCode).toBe(503);
  expect(sigstore.json().message).toMatch(/no time-stamp key: run `timeseal keys add`/);
  for (const url of ['/api/v1/timestamp/certchain', '/keys/sigstore-trusted-root.json']) {
    const res = await f.app.inject({ method: 'GET', url });
    expect(res.statusCode, url).toBe(503);
    expect(res.body, url).toMatch(/no time-stamp key/);
  }
});

test('any origin may call the Sigstore routes, as the reference allows: a preflight for the JSON POST, then CORS on the answers', async () => {
  fixture = await makeFixture();
  const f = fixture;
  const origin = 'https://signer.example';
  const pre = await f.app.inject({
    method: 'OPTIONS',
    url: '/api/v1/timestamp',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
  });
  expect(pre.statusCode).toBe(204);
  expect(String(pre.headers['access-control-allow-methods'])).toMatch(/\bPOST\b/);
  expect(String(pre.headers['access-control-allow-headers']).toLowerCase()).toContain('content-type');
  const answers = [
    await f.app.inject({
      method: 'POST',
      url: '/api/v1/timestamp',
      headers: { origin, 'content-type': 'application/json' },
      payload: JSON.stringify({ artifactHash: digest('cors').toString('base64'), hashAlgorithm: 'sha256' }),
    }),
    await f.app.inject({ method: 'GET', url: '/api/v1/timestamp/certchain', headers: { origin } }),
    await f.app.inject({ method: 'GET', url: '/keys/sigstore-trusted-root.json', headers: { origin } }),
  ];
  for (const res of answers) {
    expect(res.statusCode, res.raw.req.url).toBe(200);
    expect(res.headers['access-control-allow-origin'], res.raw.req.url).toBe('*');
  }
});
