// POST /api/v1/beta/timestamps (ingest/routes/beta-batch.ts, docs/API.md) in process: one result per entry in
// the request's order (accepted, already, duplicate, invalid), every stored hash at one submittedAt and in one
// transaction (a closed day stores none of it; a disk that fills up in the middle: isolated/beta-batch-full-disk.test.ts), receipts
// checked with core/receipt.ts against the archive's TSA root, the optional cap counting hashes, the 400s and
// the 413 with their sentences and nothing stored, the submission gate, and the OpenAPI document.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerPath } from '../../core/archive.ts';
import { fromBase64, fromHex } from '../../core/encoding.ts';
import { checkReceipt } from '../../core/receipt.ts';
import { pemCertificates } from '../../core/rfc3161.ts';
import { openSqliteStore } from '../../store/sqlite/engine.ts';
import { EXAMPLE_HASH, INVALID_HASH_ERROR } from '../errors.ts';
import { fastifyCompilers } from '../lazy-schemas.ts';
import {
  batchResponseSchema,
  BATCH_BODY_LIMIT,
  BATCH_EMPTY_ERROR,
  BATCH_MISSING_ERROR,
  BATCH_TOO_LARGE_ERROR,
  BATCH_TOO_MANY_ERROR,
} from '../routes/beta-batch.ts';
import {
  DAY,
  makeFixture,
  NOW,
  ORIGIN,
  postBatch,
  randomHash,
  randomHashes,
  removeTempDirs,
  storedOf,
  TODAY,
  type Fixture,
  type FixtureOptions,
} from './fixture.ts';
import type { BatchAnswer } from '../routes/beta-batch.ts';

const URL = '/api/v1/beta/timestamps';
const fixtures: Fixture[] = [];
afterAll(async () => {
  for (const f of fixtures) await f.close();
  removeTempDirs();
});

/** A fixture whose clock the test moves (`at`). */
async function fixture(options: FixtureOptions & { env?: Record<string, string> } = {}) {
  let now = new Date(NOW);
  const f = await makeFixture({ ...options, clock: () => now });
  fixtures.push(f);
  return { f, at: (iso: string) => void (now = new Date(iso)) };
}

const rowsOf = (f: Fixture, hash: string) =>
  f.db.prepare('SELECT submitted_at AS at, source FROM submissions WHERE hash = ? ORDER BY id').all(hash) as Array<{
    at: string;
    source: string;
  }>;

describe('a batch', () => {
  let f: Fixture;
  let at: (iso: string) => void;
  beforeAll(async () => ({ f, at } = await fixture()));

  it("stores every valid hash once, at one submittedAt, and answers one result per entry in the request's order", async () => {
    const [a, b, c, x] = randomHashes(4);
    // x was submitted earlier today through the single route.
    at(`${TODAY}T09:30:00.000Z`);
    expect(
      (await f.app.inject({ method: 'POST', url: '/api/v1/beta/timestamp', payload: { hash: x } })).statusCode,
    ).toBe(201);
    at(NOW);
    const res = await postBatch(f, {
      hashes: [a!.toUpperCase(), b, 'not a hash', a, x, '', c, b!.toUpperCase(), `${c}0`],
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json() as BatchAnswer;
    expect(body.results).toEqual([
      { hash: a, status: 'accepted' },
      { hash: b, status: 'accepted' },
      { hash: 'not a hash', status: 'invalid', error: INVALID_HASH_ERROR },
      { hash: a, status: 'duplicate', duplicateOf: 0 },
      { hash: x, status: 'already', firstSubmittedAt: `${TODAY}T09:30:00.000Z` },
      { hash: '', status: 'invalid', error: INVALID_HASH_ERROR },
      { hash: c, status: 'accepted' },
      { hash: b, status: 'duplicate', duplicateOf: 1 },
      { hash: `${c}0`, status: 'invalid', error: INVALID_HASH_ERROR },
    ]);
    expect(body).toMatchObject({
      success: true,
      submittedAt: NOW,
      ledgerDate: TODAY,
      origin: 'api_beta',
      counts: { accepted: 3, already: 1, duplicate: 2, invalid: 3 },
    });
    expect(body.message).toBe(
      `4 hashes stored. They will be included in the ledger of ${TODAY}, published and dual-signed (ECDSA P-256 + ML-DSA-65) at 2025-11-04T00:01:00.000Z. 3 entries are not a valid SHA-256 hash and were not stored (status "invalid").`,
    );
    expect(body.note).toMatch(/beta/i);
    expect(body.verification).toMatchObject({
      availableAt: '2025-11-04T00:01:00.000Z',
      verifyUrl: `${ORIGIN}/verify?hash={hash}&search=true`,
      proofUrl: `${ORIGIN}/api/proof/{hash}`,
      ledgerUrl: `${ORIGIN}/ledgers/${ledgerPath(TODAY)}`,
    });
    expect(body.verification.instructions).toMatch(/in place of \{hash\}/);
    // One row per stored hash at the batch's time; x keeps its earlier row and gets one more (the ledger keeps the earliest).
    for (const h of [a!, b!, c!]) expect(rowsOf(f, h)).toEqual([{ at: NOW, source: 'api_beta' }]);
    expect(rowsOf(f, x!)).toEqual([
      { at: `${TODAY}T09:30:00.000Z`, source: 'api_beta' },
      { at: NOW, source: 'api_beta' },
    ]);
    expect(body.results.some((r) => 'receipt' in r)).toBe(false);
  });

  it('takes 1,000 hashes in one body, also pretty-printed, and one transaction stores them', async () => {
    const list = randomHashes(1000);
    const text = JSON.stringify({ hashes: list }, null, 2);
    expect(text.length).toBeLessThan(BATCH_BODY_LIMIT);
    const before = f.rowCounts().submissions ?? 0;
    const res = await f.app.inject({
      method: 'POST',
      url: URL,
      payload: text,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json() as BatchAnswer;
    expect(body.counts).toEqual({ accepted: 1000, already: 0, duplicate: 0, invalid: 0 });
    expect(body.results.map((r) => r.hash)).toEqual(list);
    expect(f.rowCounts().submissions).toBe(before + 1000);
    expect(
      new Set(
        (
          f.db
            .prepare(
              'SELECT DISTINCT submitted_at AS at FROM submissions WHERE id > (SELECT MAX(id) - 1000 FROM submissions)',
            )
            .all() as Array<{ at: string }>
        ).map((r) => r.at),
      ),
    ).toEqual(new Set([NOW]));
    // The same list again: all already, stored again.
    const again = (await postBatch(f, { hashes: list })).json() as BatchAnswer;
    expect(again.counts).toEqual({ accepted: 0, already: 1000, duplicate: 0, invalid: 0 });
    expect(again.results[999]).toEqual({ hash: list[999], status: 'already', firstSubmittedAt: NOW });
    expect(f.rowCounts().submissions).toBe(before + 2000);
  });

  it('only invalid entries: 200, nothing stored, said in the message', async () => {
    const before = f.rowCounts();
    const res = await postBatch(f, { hashes: ['abc'] });
    expect(res.statusCode).toBe(200);
    const body = res.json() as BatchAnswer;
    expect(body.counts).toEqual({ accepted: 0, already: 0, duplicate: 0, invalid: 1 });
    expect(body.message).toBe('No hash stored: the entry is not a valid SHA-256 hash (64 hexadecimal characters).');
    expect((await postBatch(f, { hashes: ['abc', 'xyz'] })).json().message).toBe(
      'No hash stored: none of the 2 entries is a valid SHA-256 hash (64 hexadecimal characters).',
    );
    expect(f.rowCounts()).toEqual(before);
  });

  it('a body that is not a batch: 400 with a sentence and a batch as example, nothing stored', async () => {
    const before = f.rowCounts();
    const cases: Array<[unknown, string]> = [
      [{}, BATCH_MISSING_ERROR],
      [{ hash: randomHash() }, BATCH_MISSING_ERROR],
      [{ hashes: [] }, BATCH_EMPTY_ERROR],
      [{ hashes: randomHashes(1001) }, BATCH_TOO_MANY_ERROR],
      [{ hashes: randomHash() }, 'hashes: must be of type array'],
      [{ hashes: [randomHash(), 42] }, 'hashes.1: must be of type string'],
      [{ hashes: [randomHash(), null] }, 'hashes.1: must be of type string'],
      [{ hashes: [randomHash()], receipt: 'yes' }, 'receipt: must be of type boolean'],
      [{ hashes: [randomHash()], fileName: 'a' }, 'body: unknown field "fileName"'],
      [[randomHash()], 'body: must be a JSON object'],
    ];
    for (const [payload, error] of cases) {
      const res = await postBatch(f, payload);
      expect(res.statusCode, error).toBe(400);
      expect(res.json(), error).toEqual({ success: false, error, message: error, example: { hashes: [EXAMPLE_HASH] } });
    }
    const broken = await f.app.inject({
      method: 'POST',
      url: URL,
      payload: '{"hashes": [',
      headers: { 'content-type': 'application/json' },
    });
    expect(broken.statusCode).toBe(400);
    expect(broken.json()).toMatchObject({
      success: false,
      error: 'Request body is not valid JSON',
      example: { hashes: [EXAMPLE_HASH] },
    });
    expect(f.rowCounts()).toEqual(before);
  });

  it('a body over the limit: 413 with the limit in the sentence, nothing stored', async () => {
    const before = f.rowCounts();
    // 1,500 hashes (100 KB) or 1,000 padded with whitespace: over 96 KiB either way.
    const padded = `{"hashes": [\n${randomHashes(1000)
      .map((h) => `${' '.repeat(40)}"${h}"`)
      .join(',\n')}\n]}`;
    for (const text of [JSON.stringify({ hashes: randomHashes(1500) }), padded]) {
      expect(text.length).toBeGreaterThan(BATCH_BODY_LIMIT);
      const res = await f.app.inject({
        method: 'POST',
        url: URL,
        payload: text,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.statusCode).toBe(413);
      expect(res.json()).toEqual({
        success: false,
        error: BATCH_TOO_LARGE_ERROR,
        message: BATCH_TOO_LARGE_ERROR,
        example: { hashes: [EXAMPLE_HASH] },
      });
    }
    expect(BATCH_TOO_LARGE_ERROR).toBe(
      'Request body is larger than 98304 bytes: a batch holds at most 1,000 hashes (67 KB as compact JSON)',
    );
    expect(f.rowCounts()).toEqual(before);
    // The single route keeps its own 16 KB limit.
    const single = await f.app.inject({
      method: 'POST',
      url: '/api/v1/beta/timestamp',
      payload: JSON.stringify({ hash: randomHash() }).padEnd(17_000, ' '),
      headers: { 'content-type': 'application/json' },
    });
    expect(single.statusCode).toBe(413);
  });

  it('is in the OpenAPI document beside the single route', async () => {
    const doc = (await f.app.inject('/api/openapi.json')).json();
    const op = doc.paths[URL].post;
    expect(Object.keys(op.responses).sort()).toEqual(['200', '4XX', '5XX']);
    const schema = op.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(['hashes']);
    expect(schema.properties.hashes).toMatchObject({
      type: 'array',
      minItems: 1,
      maxItems: 1000,
      items: { type: 'string' },
    });
    expect(
      op.responses['200'].content['application/json'].schema.properties.results.items.properties.status.enum,
    ).toEqual(['accepted', 'already', 'duplicate', 'invalid']);
    expect(op.tags).toEqual(['beta']);
  });
});

describe('one transaction: all stored or none', () => {
  it('a closed day (another server built it already): 503 with Retry-After, none of it stored', async () => {
    const { f } = await fixture({ publish: [] });
    const builder = openSqliteStore(f.config.db);
    try {
      await builder.submissions.closeThrough(TODAY);
    } finally {
      await builder.close();
    }
    const list = randomHashes(10);
    const res = await postBatch(f, { hashes: list });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('60');
    expect(res.json().error).toBe(
      `The ledger of ${TODAY} is already closed (this server's clock is behind the one that builds the ledgers); nothing was stored. Please submit it again in a minute.`,
    );
    expect(storedOf(f, list)).toBe(0);
  });
});

describe('receipts', () => {
  let f: Fixture;
  let root: Uint8Array[];
  beforeAll(async () => {
    ({ f } = await fixture());
    root = pemCertificates(fs.readFileSync(path.join(f.config.keys, 'timeseal-tsa-root.pem'), 'utf8'));
  });

  it('"receipt": true gives every accepted and already result a receipt for its hash, genTime = submittedAt; duplicates and invalid entries none', async () => {
    const [a, b, x] = randomHashes(3);
    expect((await postBatch(f, { hashes: [x] })).statusCode).toBe(200);
    const res = await postBatch(f, { hashes: [a, x, a!.toUpperCase(), 'zz', b], receipt: true });
    expect(res.statusCode).toBe(200);
    const body = res.json() as BatchAnswer;
    expect(body.results.map((r) => [r.status, 'receipt' in r])).toEqual([
      ['accepted', true],
      ['already', true],
      ['duplicate', false],
      ['invalid', false],
      ['accepted', true],
    ]);
    const serials = new Set<string>();
    for (const r of body.results.filter((r) => r.receipt !== undefined)) {
      const facts = await checkReceipt(fromBase64(r.receipt!), root, fromHex(r.hash));
      expect(facts.genTime.toISOString()).toBe(body.submittedAt);
      expect(facts.ledgerHash).toBe(r.hash);
      expect(facts.anchored).toBe(true);
      serials.add(String(facts.serialNumber));
      // The hash is stored at the receipt's time.
      expect(rowsOf(f, r.hash).map((row) => row.at)).toContain(body.submittedAt);
    }
    expect(serials.size).toBe(3);
    // A receipt checked against another hash of the batch is refused.
    await expect(checkReceipt(fromBase64(body.results[0]!.receipt!), root, fromHex(b!))).rejects.toThrow(
      /another SHA-256 digest/,
    );
  });

  it('1,000 receipts in one answer, each for its own hash', async () => {
    const list = randomHashes(1000);
    const started = performance.now();
    const res = await postBatch(f, { hashes: list, receipt: true });
    const ms = performance.now() - started;
    expect(res.statusCode).toBe(200);
    const body = res.json() as BatchAnswer;
    expect(
      body.results.every((r, i) => r.status === 'accepted' && r.hash === list[i] && typeof r.receipt === 'string'),
    ).toBe(true);
    for (const i of [0, 1, 499, 998, 999]) {
      const facts = await checkReceipt(fromBase64(body.results[i]!.receipt!), root, fromHex(list[i]!));
      expect(facts.genTime.toISOString()).toBe(body.submittedAt);
    }
    process.stderr.write(
      `beta-batch: 1,000 hashes with receipts answered in ${Math.round(ms)} ms, ${Math.round(res.rawPayload.length / 1024)} KB\n`,
    );
  });

  it("the answer, built in slices of results, is byte for byte what the route schema's serializer makes of it", async () => {
    const [x, ...list] = randomHashes(351);
    expect((await postBatch(f, { hashes: [x] })).statusCode).toBe(200);
    // Every status, spread over more than one slice of RESULTS_PER_TURN results.
    const sent = [...list.slice(0, 150), x!, 'not hex', list[3]!.toUpperCase(), ...list.slice(150), list[200]!, ''];
    const serialize = fastifyCompilers().buildSerializer(
      {},
      {},
    )({ schema: batchResponseSchema, method: 'POST', url: URL, httpStatus: '200' });
    for (const receipt of [true, false]) {
      const res = await postBatch(f, { hashes: sent, receipt });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      const body = res.json() as BatchAnswer;
      expect(body.results).toHaveLength(sent.length);
      // The first time 350 are new; the second time all are already there.
      expect(body.counts).toEqual(
        receipt
          ? { accepted: 350, already: 1, duplicate: 2, invalid: 2 }
          : { accepted: 0, already: 351, duplicate: 2, invalid: 2 },
      );
      expect(body.results.filter((r) => r.receipt !== undefined)).toHaveLength(receipt ? 351 : 0);
      expect(res.body).toBe(serialize(body));
    }
  });

  it('no turn of the event loop holds the thread for long while a batch of 1,000 hashes with receipts is answered', async () => {
    /** This thread's CPU time, ms: what a turn costs, whatever else the machine runs meanwhile. */
    const cpu = (): number => {
      const used = process.threadCpuUsage();
      return (used.user + used.system) / 1000;
    };
    expect((await postBatch(f, { hashes: randomHashes(1000), receipt: true })).statusCode).toBe(200); // the route's code compiled
    let longest = 0;
    let turns = 0;
    let running = true;
    let last = cpu();
    const probe = (): void => {
      const now = cpu();
      longest = Math.max(longest, now - last);
      last = now;
      turns++;
      if (running) setImmediate(probe);
    };
    setImmediate(probe);
    const res = await postBatch(f, { hashes: randomHashes(1000), receipt: true });
    running = false;
    expect(res.statusCode).toBe(200);
    expect((res.json() as BatchAnswer).results.filter((r) => r.receipt !== undefined)).toHaveLength(1000);
    expect(turns).toBeGreaterThan(100);
    // The longest turn is the group commit of the batch's 1,000 rows (about 5-15 ms of CPU here); signing and
    // serializing come a few receipts or 100 results a turn. In one piece they were 2.1 MB of JSON at once.
    expect(longest).toBeLessThan(50);
  });

  it('a server without a TSA key refuses "receipt": true with 503 before storing anything; without it the batch is stored', async () => {
    const { f: bare } = await fixture({ publish: [], withoutTsaKey: true });
    const list = randomHashes(5);
    const asked = await postBatch(bare, { hashes: list, receipt: true });
    expect(asked.statusCode).toBe(503);
    expect(asked.json().error).toMatch(/no time-stamp key/);
    expect(storedOf(bare, list)).toBe(0);
    const plain = await postBatch(bare, { hashes: list });
    expect(plain.statusCode).toBe(200);
    expect(storedOf(bare, list)).toBe(5);
  });
});

describe('BETA_API_RATE counts hashes, not requests', () => {
  it('a batch is counted by the hashes it stores, admitted whole or refused whole with 429 and Retry-After; the single route shares the count', async () => {
    const { f, at } = await fixture({ publish: [], env: { BETA_API_RATE: '10/minute' } });
    const ip = '203.0.113.9';
    const used = () =>
      (
        f.db.prepare("SELECT count FROM ip_rate_limit WHERE ip_address = ? AND date LIKE 'beta-api:%'").get(ip) as
          { count: number } | undefined
      )?.count ?? 0;
    // 4 distinct valid hashes (a repeat and an invalid entry are not counted).
    const [a, b, c, d] = randomHashes(4);
    expect((await postBatch(f, { hashes: [a, b, a, 'nope', c, d] }, { ip })).statusCode).toBe(200);
    expect(used()).toBe(4);
    expect(
      (
        await f.app.inject({
          method: 'POST',
          url: '/api/v1/beta/timestamp',
          payload: { hash: randomHash() },
          remoteAddress: ip,
        })
      ).statusCode,
    ).toBe(201);
    expect(used()).toBe(5);
    // 6 more would pass 10: refused whole, nothing stored, nothing counted.
    const six = randomHashes(6);
    const refused = await postBatch(f, { hashes: six }, { ip });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.json()).toEqual({
      success: false,
      error:
        'Rate limit reached: this server accepts at most 10 beta API submissions per minute from one address; this batch of 6 hashes would pass it (5 left in this minute). Try again in 60 seconds, or send a smaller batch.',
      message:
        'Rate limit reached: this server accepts at most 10 beta API submissions per minute from one address; this batch of 6 hashes would pass it (5 left in this minute). Try again in 60 seconds, or send a smaller batch.',
      example: { hashes: [EXAMPLE_HASH] },
    });
    expect(storedOf(f, six)).toBe(0);
    expect(used()).toBe(5);
    // 5 fit exactly; then nothing more, not even one through the single route.
    expect((await postBatch(f, { hashes: six.slice(0, 5) }, { ip })).statusCode).toBe(200);
    expect(used()).toBe(10);
    expect(
      (
        await f.app.inject({
          method: 'POST',
          url: '/api/v1/beta/timestamp',
          payload: { hash: randomHash() },
          remoteAddress: ip,
        })
      ).statusCode,
    ).toBe(429);
    // Entries that store nothing are not refused (and not counted).
    expect((await postBatch(f, { hashes: ['nope'] }, { ip })).statusCode).toBe(200);
    // Another address has its own count.
    expect((await postBatch(f, { hashes: randomHashes(10) }, { ip: '198.51.100.77' })).statusCode).toBe(200);
    // More than the cap itself never fits: said so.
    at(`${TODAY}T12:01:00.000Z`);
    const eleven = randomHashes(11);
    const tooMany = await postBatch(f, { hashes: eleven }, { ip });
    expect(tooMany.statusCode).toBe(429);
    expect(tooMany.headers['retry-after']).toBe('60');
    expect(tooMany.json().error).toBe(
      'Rate limit: this server accepts at most 10 beta API submissions per minute from one address, fewer than the 11 hashes of this batch. Send at most 10 hashes per batch.',
    );
    expect(storedOf(f, eleven)).toBe(0);
    // In the new window a full batch of 10 is admitted.
    expect((await postBatch(f, { hashes: eleven.slice(0, 10) }, { ip })).statusCode).toBe(200);
    expect(used()).toBe(10);
  });
});

describe('the submission gate', () => {
  it('while the clock is not after the last published day: 503, nothing stored; once it is, the batch goes through', async () => {
    const { f, at } = await fixture();
    at(`${DAY}T23:00:00.000Z`);
    const list = randomHashes(3);
    const res = await postBatch(f, { hashes: list });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ success: false, example: { hashes: [EXAMPLE_HASH] } });
    expect(res.json().error).toMatch(/submissions are paused/);
    expect(storedOf(f, list)).toBe(0);
    at(NOW);
    expect((await postBatch(f, { hashes: list })).statusCode).toBe(200);
    expect(storedOf(f, list)).toBe(3);
  });
});
