// One RFC 3161 stamping run is bounded (pipeline/tsa-client.ts): at most TSA_DAYS_PER_RUN days, oldest first, and no
// day started after TSA_RUN_SECONDS, against a loopback TSA that takes every request and never answers; the days
// left are asked at the next run. Settings that are not whole numbers are refused naming them.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext } from '../../cli/context.ts';
import { loadTsaConfig, stampLedgers, type TsaContext } from '../../pipeline/tsa-client.ts';
import { openStore } from '../../store/index.ts';
import { makeHashes, removeTempProjects, run, tempProject } from './helpers.ts';

const DAYS = 5;
const FIRST = Date.parse('2025-03-01T00:00:00Z');
const dayOf = (i: number) => new Date(FIRST + i * 86_400_000).toISOString().slice(0, 10);

let dir: string;
let tsa: http.Server;
const sockets = new Set<Socket>();
let asked = 0;

beforeAll(async () => {
  dir = tempProject('tsa-bounds');
  expect(run(dir, ['keys', 'init']).code).toBe(0);
  const store = await openStore({ db: path.join(dir, 'data/timeseal.db') });
  await store.submissions.enqueue(
    Array.from({ length: DAYS }, (_, i) => ({
      hash: makeHashes('bounds', 1, i)[0]!,
      submittedAt: new Date(FIRST + i * 86_400_000 + 60_000),
      source: 'import' as const,
    })),
  );
  await store.close();
  expect(run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: `${dayOf(DAYS)}T00:01:00Z` } }).code).toBe(0);
  tsa = http.createServer(() => void asked++);
  tsa.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => tsa.listen(0, '127.0.0.1', r));
}, 60_000);

afterAll(() => {
  for (const s of sockets) s.destroy();
  tsa?.close();
  removeTempProjects();
});

function context(extra: Record<string, string>): TsaContext {
  const env = {
    TIMESEAL_DB: path.join(dir, 'data/timeseal.db'),
    TIMESEAL_ARCHIVE: path.join(dir, 'ledgers'),
    TIMESEAL_KEYS: path.join(dir, 'keys'),
    TIMESEAL_PRIVATE_KEYS: path.join(dir, 'data/private-keys'),
    TSA_URLS: `http://127.0.0.1:${(tsa.address() as AddressInfo).port}/`,
    TSA_TIMEOUT_MS: '300',
    ...extra,
  };
  const c = createContext(env);
  return { config: c.config, clock: c.clock, tsa: loadTsaConfig(env) };
}

describe('a stamping run against a TSA that never answers', () => {
  it('asks at most TSA_DAYS_PER_RUN days, oldest first', async () => {
    asked = 0;
    const results = await stampLedgers(context({ TSA_DAYS_PER_RUN: '2' }));
    expect(results.map((r) => [r.date, r.outcome])).toEqual([
      [dayOf(0), 'failed'],
      [dayOf(1), 'failed'],
    ]);
    expect(results[0]!.failures[0]!.reason).toMatch(/no answer within 300 ms/);
    expect(asked).toBe(2);
  });

  it('starts no day once the run has lasted TSA_RUN_SECONDS', async () => {
    // A clock that moves 0.6 s a reading: the first day starts at 0, the second would start after the 1 s bound.
    let t = 0;
    const results = await stampLedgers(context({ TSA_RUN_SECONDS: '1' }), () => (t += 600));
    expect(results.map((r) => r.date)).toEqual([dayOf(0)]);
    const all = await stampLedgers(context({}));
    expect(all).toHaveLength(DAYS);
  });

  it('refuses settings that are not whole numbers, naming them', () => {
    expect(() => loadTsaConfig({ TSA_URLS: 'http://127.0.0.1:9/', TSA_DAYS_PER_RUN: '0' })).toThrow(
      /TSA_DAYS_PER_RUN must be a whole number of days, at least 1, got "0"/,
    );
    expect(() => loadTsaConfig({ TSA_URLS: 'http://127.0.0.1:9/', TSA_RUN_SECONDS: '1.5' })).toThrow(/TSA_RUN_SECONDS/);
    expect(loadTsaConfig({ TSA_URLS: 'http://127.0.0.1:9/' })).toMatchObject({ daysPerRun: 24, runMs: 600_000 });
  });
});
