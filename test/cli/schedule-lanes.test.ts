// The schedule's build never waits behind a slow time-stamp authority (pipeline/schedule.ts: two lanes). A real
// archive of 20 published days without RFC 3161 tokens, a TSA on loopback that accepts connections and never
// answers, and the schedule's real steps ('ledger build' as its child process, 'tsa stamp' in process): while
// the stamping run is stuck on the first days, the next day's build runs and publishes at once. (In one chain,
// the build would have waited for 20 days × TSA_TIMEOUT_MS, 100 s, against the 30 s the test allows.)
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { launchTimeseal } from '../../cli/launcher.ts';
import { startSchedule, scheduledSteps, type Schedule } from '../../pipeline/schedule.ts';
import { createContext, type Context } from '../../cli/context.ts';
import { openStore } from '../../store/index.ts';
import { makeHashes, removeTempProjects, run, tempProject } from './helpers.ts';

const DAYS = 20;
const FIRST = Date.parse('2025-01-01T00:00:00Z');
const dayOf = (i: number) => new Date(FIRST + i * 86_400_000).toISOString().slice(0, 10);
/** Day DAYS: the day the schedule's build publishes while the stamping run is stuck. */
const LAST = dayOf(DAYS);

let dir: string;
let tsa: http.Server;
const sockets = new Set<Socket>();
let asked = 0;
let ctx: Context;
let schedule: Schedule | undefined;
const lines: string[] = [];

beforeAll(async () => {
  dir = tempProject('lanes');
  expect(run(dir, ['keys', 'init']).code).toBe(0);
  // 20 published days of one hash each, built by one run; then rows of day DAYS (the last), to be built by the schedule.
  const store = await openStore({ db: path.join(dir, 'data/timeseal.db') });
  await store.submissions.enqueue(
    Array.from({ length: DAYS }, (_, i) => ({
      hash: makeHashes('lanes', 1, i)[0]!,
      submittedAt: new Date(FIRST + i * 86_400_000 + 3_600_000),
      source: 'import' as const,
    })),
  );
  await store.submissions.enqueue(
    makeHashes('last', 3).map((hash) => ({
      hash,
      submittedAt: new Date(`${LAST}T10:00:00Z`),
      source: 'import' as const,
    })),
  );
  await store.close();
  const built = run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: `${LAST}T00:01:00Z` } });
  expect(built.code, built.stderr).toBe(0);
  // A TSA that takes every request and never answers.
  tsa = http.createServer(() => void asked++);
  tsa.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => tsa.listen(0, '127.0.0.1', r));
  // The schedule runs in this process on these settings; its build is a child process that inherits them.
  Object.assign(process.env, {
    TIMESEAL_DB: path.join(dir, 'data/timeseal.db'),
    TIMESEAL_ARCHIVE: path.join(dir, 'ledgers'),
    TIMESEAL_KEYS: path.join(dir, 'keys'),
    TIMESEAL_PRIVATE_KEYS: path.join(dir, 'data/private-keys'),
    TIMESEAL_NOW: `${LAST}T12:00:00Z`,
    TSA_URLS: `http://127.0.0.1:${(tsa.address() as AddressInfo).port}/`,
    TSA_TIMEOUT_MS: '5000',
  });
  ctx = createContext(process.env);
}, 120_000);

afterAll(async () => {
  // Unstick the stamping run (its requests fail at once), then stop the schedule.
  for (const s of sockets) s.destroy();
  tsa?.close();
  tsa?.closeAllConnections();
  await schedule?.stop();
  await ctx?.close();
  removeTempProjects();
});

it('while the stamping run waits on a TSA that never answers (20 days), the next build runs and publishes at once', async () => {
  const days = () =>
    (
      JSON.parse(fs.readFileSync(path.join(dir, 'ledgers/days.json'), 'utf8')) as { days: Array<{ date: string }> }
    ).days.map((d) => d.date);
  expect(days()).toHaveLength(DAYS);
  const log = {
    info: (_o: object, msg: string) => void lines.push(msg),
    error: (_o: object, msg: string) => void lines.push(msg),
  };
  schedule = startSchedule(
    ctx,
    log,
    scheduledSteps(launchTimeseal).filter((s) => s.name === 'ledger build' || s.name === 'tsa stamp'),
    { leaseMs: 60_000 },
  );
  // The catch-up: the build (nothing finished yet), then the stamping run, stuck on its first day.
  await vi.waitFor(() => expect(asked).toBeGreaterThan(0), { timeout: 30_000, interval: 50 });
  expect(lines).toContain('scheduled ledger build done');
  // Midnight passes: the hourly build is due while the stamping run still waits.
  process.env.TIMESEAL_NOW = `${dayOf(DAYS + 1)}T00:01:00Z`;
  const started = Date.now();
  await schedule.run('ledger build');
  const seconds = (Date.now() - started) / 1000;
  expect(lines.filter((l) => l === 'scheduled ledger build done')).toHaveLength(2);
  expect(days().at(-1)).toBe(LAST);
  expect(lines.some((l) => l.startsWith('scheduled tsa stamp'))).toBe(false);
  expect(seconds).toBeLessThan(30);
}, 120_000);
