// The receipts of the JSON submissions (ingest/tsa-authority.ts, docs/API.md): POST /api/submit always carries
// one, the beta API when asked with "receipt": true. Each is checked with core/receipt.ts against the TSA root
// the archive publishes (keys/timeseal-tsa-root.pem): sound, for exactly the submitted hash, genTime equal to
// the submittedAt the answer reports, and the hash stored at that time. Without a TSA key the beta API refuses
// a receipt request before storing anything (503); /api/submit still stores and answers, without a receipt.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fromBase64, fromHex } from '../../core/encoding.ts';
import { pemCertificates } from '../../core/rfc3161.ts';
import { checkReceipt } from '../../core/receipt.ts';
import { makeFixture, NOW, randomHash, removeTempDirs, type Fixture } from './fixture.ts';
import type { BetaAnswer } from '../routes/beta.ts';
import type { SubmitAnswer } from '../routes/submit.ts';
import type { ErrorAnswer } from '../schemas.ts';

let f: Fixture;
let root: Uint8Array[];
beforeAll(async () => {
  f = await makeFixture();
  root = pemCertificates(fs.readFileSync(path.join(f.config.keys, 'timeseal-tsa-root.pem'), 'utf8'));
});
afterAll(async () => {
  await f.close();
  removeTempDirs();
});

const post = (url: string, payload: object, ip = '198.51.100.40') =>
  f.app.inject({ method: 'POST', url, payload, remoteAddress: ip });
const rows = (hash: string) =>
  f.db.prepare('SELECT submitted_at FROM submissions WHERE hash = ?').all(hash) as Array<{ submitted_at: unknown }>;

describe('receipts of JSON submissions', () => {
  test('POST /api/submit answers a receipt for the hash, genTime = submittedAt', async () => {
    const hash = randomHash();
    const res = await post('/api/submit', { hash: hash.toUpperCase() });
    expect(res.statusCode).toBe(201);
    const body = res.json() as SubmitAnswer;
    expect(body.submittedAt).toBe(NOW);
    const facts = await checkReceipt(fromBase64(body.receipt!), root, fromHex(hash));
    expect(facts.genTime.toISOString()).toBe(body.submittedAt);
    expect(facts.imprintAlgorithm).toBe('SHA-256');
    expect(facts.ledgerHash).toBe(hash);
    expect(facts.date).toBe(NOW.slice(0, 10));
    expect(facts.anchored).toBe(true);
    expect(facts.tsaName).toMatch(/CN=Timeseal TSA timeseal\.test/);
    expect(rows(hash)).toHaveLength(1);
  });

  test('a receipt checked for another hash, or with a flipped byte, is refused', async () => {
    const hash = randomHash();
    const res = await post('/api/submit', { hash }, '198.51.100.41');
    const der = fromBase64((res.json() as SubmitAnswer).receipt!);
    await expect(checkReceipt(der, root, fromHex(randomHash()))).rejects.toThrow(/another SHA-256 digest/);
    const flipped = Uint8Array.from(der);
    flipped[flipped.length - 40]! ^= 1;
    await expect(checkReceipt(flipped, root, fromHex(hash))).rejects.toThrow();
    // Another TSA root (another archive's): the chain does not lead to it.
    const other = await makeFixture({ publish: [] });
    const otherRoot = pemCertificates(fs.readFileSync(path.join(other.config.keys, 'timeseal-tsa-root.pem'), 'utf8'));
    await other.close();
    await expect(checkReceipt(der, otherRoot, fromHex(hash))).rejects.toThrow(/does not lead to|not signed by/);
  });

  test('the beta API carries a receipt only when asked; two receipts of one hash have different serials', async () => {
    const hash = randomHash();
    const plain = await post('/api/v1/beta/timestamp', { hash });
    expect(plain.statusCode).toBe(201);
    expect(plain.json()).not.toHaveProperty('receipt');
    const asked = await post('/api/v1/beta/timestamp', { hash, receipt: true });
    expect(asked.statusCode).toBe(201);
    const body = asked.json() as BetaAnswer;
    expect(body.hash).toBe(hash);
    expect(body.verification).toBeTypeOf('object');
    const facts = await checkReceipt(fromBase64(body.receipt!), root, fromHex(hash));
    expect(facts.genTime.toISOString()).toBe(body.submittedAt);
    const again = await checkReceipt(
      fromBase64((await post('/api/v1/beta/timestamp', { hash, receipt: true })).json().receipt as string),
      root,
      fromHex(hash),
    );
    expect(again.serialNumber).not.toBe(facts.serialNumber);
    expect((await post('/api/v1/beta/timestamp', { hash, receipt: false })).json()).not.toHaveProperty('receipt');
  });

  test('"receipt" must be a boolean: 400, nothing stored', async () => {
    const hash = randomHash();
    const res = await post('/api/v1/beta/timestamp', { hash, receipt: 'yes' });
    expect(res.statusCode).toBe(400);
    expect(rows(hash)).toHaveLength(0);
  });
});

describe('a server without a TSA key', () => {
  let bare: Fixture;
  beforeAll(async () => {
    bare = await makeFixture({ publish: [], withoutTsaKey: true });
  });
  afterAll(async () => bare.close());

  test('the beta API refuses a receipt request with 503 and stores nothing; /api/submit stores without a receipt', async () => {
    const hash = randomHash();
    const asked = await bare.app.inject({
      method: 'POST',
      url: '/api/v1/beta/timestamp',
      payload: { hash, receipt: true },
    });
    expect(asked.statusCode).toBe(503);
    expect((asked.json() as ErrorAnswer).error).toMatch(/no time-stamp key/);
    expect(bare.db.prepare('SELECT COUNT(*) AS n FROM submissions WHERE hash = ?').get(hash)).toEqual({ n: 0 });
    const site = await bare.app.inject({
      method: 'POST',
      url: '/api/submit',
      payload: { hash },
      remoteAddress: '198.51.100.42',
    });
    expect(site.statusCode).toBe(201);
    expect(site.json()).not.toHaveProperty('receipt');
    expect(bare.db.prepare('SELECT COUNT(*) AS n FROM submissions WHERE hash = ?').get(hash)).toEqual({ n: 1 });
  });
});
