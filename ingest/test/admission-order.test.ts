// Every submission route refuses in one order (ingest/submission-admission.ts): the submission gate, then a
// receipt that cannot be made, then the beta-API cap, then the write. Two refusals due at once give the same
// one on every route, and nothing is stored: a clock on the last published day with the cap used up is the
// gate's 503 (not a 429) on POST /api/submit, both beta routes, POST /tsa and Sigstore's POST /api/v1/timestamp;
// with the cap used up and no time-stamp key, a request for a receipt is the key's 503 on every route that
// takes one (nothing counted); with only the cap used up, every route that counts against it answers 429.
import crypto from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { timeStampRequest } from '../../core/tsa-client.ts';
import { openSqliteStore } from '../../store/sqlite/engine.ts';
import { betaRateCap } from '../limits.ts';
import { DAY, makeFixture, NOW, randomHash, removeTempDirs, type Fixture } from './fixture.ts';

let fixture: Fixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
  removeTempDirs();
});

const CLOSED = `${DAY}T23:59:59.000Z`;
const GATE_TEXT = `The server's clock (${DAY}) is not after the last published ledger (${DAY}); submissions are paused until it is corrected.`;
const NO_KEY_TEXT = /no time-stamp key: run `timeseal keys add`/;

type Answer = { status: number; text: string; retryAfter: unknown };
const answerOf = (res: { statusCode: number; headers: Record<string, unknown> }, text: string): Answer => ({
  status: res.statusCode,
  text,
  retryAfter: res.headers['retry-after'],
});
/** Each submission route, asked for a receipt where it gives one, and its answer's status and text. */
const routes: Record<string, (f: Fixture, receipt: boolean) => Promise<Answer>> = {
  'POST /api/submit': async (f) => {
    const res = await f.app.inject({ method: 'POST', url: '/api/submit', payload: { hash: randomHash() } });
    return answerOf(res, res.json().error);
  },
  'POST /api/v1/beta/timestamp': async (f, receipt) => {
    const payload = { hash: randomHash(), ...(receipt ? { receipt } : {}) };
    const res = await f.app.inject({ method: 'POST', url: '/api/v1/beta/timestamp', payload });
    return answerOf(res, res.json().error);
  },
  'POST /api/v1/beta/timestamps': async (f, receipt) => {
    const payload = { hashes: [randomHash(), randomHash()], ...(receipt ? { receipt } : {}) };
    const res = await f.app.inject({ method: 'POST', url: '/api/v1/beta/timestamps', payload });
    return answerOf(res, res.json().error);
  },
  'POST /tsa': async (f) => {
    const res = await f.app.inject({
      method: 'POST',
      url: '/tsa',
      headers: { 'content-type': 'application/timestamp-query' },
      payload: Buffer.from(timeStampRequest(crypto.randomBytes(32), crypto.randomBytes(8))),
    });
    return answerOf(res, res.json().error);
  },
  'POST /api/v1/timestamp': async (f) => {
    const res = await f.app.inject({
      method: 'POST',
      url: '/api/v1/timestamp',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ artifactHash: crypto.randomBytes(32).toString('base64'), hashAlgorithm: 'sha256' }),
    });
    return answerOf(res, res.json().message.replace(/^Error generating timestamp response\. /, ''));
  },
};
const CAPPED = Object.keys(routes).filter((name) => name !== 'POST /api/submit');
const WITH_RECEIPTS = ['POST /api/v1/beta/timestamp', 'POST /api/v1/beta/timestamps'];

/** Uses up the beta-API cap (BETA_API_RATE=1/day) of the inject() address for the UTC day of `at`. */
async function useUpCap(f: Fixture, at: string): Promise<void> {
  const cap = betaRateCap(openSqliteStore(f.config.db, { db: f.db }), f.ingest.betaApiRate!);
  expect(await cap.check('127.0.0.1', new Date(at))).toBeNull();
  expect(await cap.check('127.0.0.1', new Date(at))).not.toBeNull();
}

describe('two refusals due at once give the same one on every route', () => {
  it('a closed day and a used-up cap: the gate\u2019s 503 everywhere, nothing stored', async () => {
    fixture = await makeFixture({ env: { BETA_API_RATE: '1/day' }, clock: () => new Date(CLOSED) });
    const f = fixture;
    await useUpCap(f, CLOSED);
    const before = f.rowCounts();
    for (const [name, ask] of Object.entries(routes)) {
      const answer = await ask(f, false);
      expect(answer.status, name).toBe(503);
      expect(answer.text, name).toContain(GATE_TEXT);
    }
    expect(f.rowCounts()).toEqual(before);
  });

  it('a used-up cap and no time-stamp key: a receipt\u2019s 503 where one is asked for, nothing counted', async () => {
    fixture = await makeFixture({ env: { BETA_API_RATE: '1/day' }, withoutTsaKey: true });
    const f = fixture;
    await useUpCap(f, NOW);
    const before = f.rowCounts();
    for (const name of CAPPED) {
      const answer = await routes[name]!(f, true);
      expect(answer.status, name).toBe(503);
      expect(answer.text, name).toMatch(NO_KEY_TEXT);
    }
    expect(f.rowCounts()).toEqual(before);
    // Without a receipt, the same beta requests meet the cap.
    for (const name of WITH_RECEIPTS) expect((await routes[name]!(f, false)).status, name).toBe(429);
  });

  it('a used-up cap alone: 429 with Retry-After on every route that counts against it, nothing stored', async () => {
    fixture = await makeFixture({ env: { BETA_API_RATE: '1/day' } });
    const f = fixture;
    await useUpCap(f, NOW);
    const before = f.rowCounts();
    for (const name of CAPPED) {
      const answer = await routes[name]!(f, name !== 'POST /tsa' && name !== 'POST /api/v1/timestamp');
      expect(answer.status, name).toBe(429);
      expect(answer.text, name).toMatch(/1 .*day/i);
      expect(Number(answer.retryAfter), name).toBeGreaterThan(0);
    }
    expect(f.rowCounts()).toEqual(before);
  });
});
