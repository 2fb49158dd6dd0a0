// The schedule's retries after downtime (pipeline/anchor/backoff.ts, pipeline/schedule.ts; docs/OPERATIONS.md
// "Retries after failures"). An archive of 400 published days, none anchored (test/support/long-archive.ts writes
// what 400 builds leave in days.json and the status files), a loopback OpenTimestamps calendar that counts every
// request, and the schedule's own steps (anchor, upgrade, tsa stamp) run by startSchedule at the minutes its
// nextRun gives, on a simulated clock:
// - the first 65 minutes with the calendar silent (each request times out): a handful of calendar requests in
//   all, newest days first, one "anchoring delayed" line per day tried; before, every run asked all 400 days;
// - the next 36 hours with the calendar refusing (HTTP 500): about two requests an hour, however long it lasts
//   (the newest day's wait reaches its 24 h cap at its sixth failure, 31 hours in);
// - the calendar back: every day is stamped over the next runs (at most ANCHOR_DAYS_PER_RUN a run, newest due
//   first), the upgrades confirm the newest in Bitcoin, and no retry record is left.
// The TSA's scheduled runs in that first hour ask 24 days each, newest first. Also: the wait 1 h, 2 h, … 24 h, a
// run's time budget (ANCHOR_RUN_SECONDS), commands by hand ignoring the records, and a witness that is down asked
// again only after its wait.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createContext, type Context } from '../../cli/context.ts';
import { launchTimeseal } from '../../cli/launcher.ts';
import { nextRun, startSchedule, scheduledSteps, type Schedule } from '../../pipeline/schedule.ts';
import { ANCHOR_RETRY_FILE, anchorDays } from '../../pipeline/anchor/anchor.ts';
import { RetryBook, waitAfter } from '../../pipeline/anchor/backoff.ts';
import { loadAnchorConfig } from '../../pipeline/anchor/config.ts';
import { cosignLatest, loadWitnessConfig, WITNESS_RETRY_FILE } from '../../pipeline/witness.ts';
import { logVerifiers } from '../../core/log-keys.ts';
import { loadConfig } from '../../runtime/config.ts';
import { initKeys, loadSigningKeys } from '../../runtime/keys.ts';
import { writeLongArchive } from '../support/long-archive.ts';
import { startWitness } from '../support/witness.ts';
import { SyntheticChain } from './chain.ts';
import { removeTempDirs, tempDir } from './helpers.ts';
import { LoopbackCalendar, LoopbackEsplora } from './servers.ts';

const DAYS = 400;
const LAST = '2026-02-04';
/** The server starts just after the night's outage, at midnight after the last published day. */
const T0 = Date.parse('2026-02-05T00:00:00Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const dateBefore = (n: number) => new Date(Date.parse(`${LAST}T00:00:00Z`) - n * 86_400_000).toISOString().slice(0, 10);

/** The settings of an archive, its keys and its database in the folder `dir`. */
const archiveEnv = (dir: string) => ({
  TIMESEAL_DB: path.join(dir, 'data/timeseal.db'),
  TIMESEAL_ARCHIVE: path.join(dir, 'ledgers'),
  TIMESEAL_KEYS: path.join(dir, 'keys'),
  TIMESEAL_PRIVATE_KEYS: path.join(dir, 'data/private-keys'),
  TIMESEAL_ORIGIN: 'https://timeseal.test',
});

/** New keys and an archive of `count` published days up to LAST, none anchored, with the settings `env`. */
function smallArchive(env: ReturnType<typeof archiveEnv>, count: number) {
  const config = loadConfig(env);
  initKeys({ keys: config.keys, privateKeys: config.privateKeys });
  const keys = loadSigningKeys({ keys: config.keys, privateKeys: config.privateKeys });
  writeLongArchive({
    archive: config.archive,
    origin: config.logOrigin,
    keys,
    count,
    lastDate: LAST,
    signed: 1,
    anchoredThrough: '',
  });
  return { config, keys };
}

interface Line {
  level: 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  msg: string;
}

// The folders of the second group's tests too (the first group's afterAll runs before them).
afterAll(removeTempDirs);

describe('retries after downtime: 400 days, a calendar that is down', () => {
  const chain = new SyntheticChain();
  const calendar = new LoopbackCalendar();
  const esplora = new LoopbackEsplora(chain);
  let tsa: http.Server;
  const tsaAsked: string[] = [];
  let dir: string;
  let archive: string;
  let ctx: Context;
  let schedule: Schedule | undefined;
  let sim = T0;
  const lines: Line[] = [];
  const steps = scheduledSteps(launchTimeseal).filter((s) =>
    ['anchor', 'upgrade and block refresh', 'tsa stamp'].includes(s.name),
  );
  const posts = () => calendar.requests.filter((r) => r.startsWith('POST /digest')).length;
  const gets = () => calendar.requests.filter((r) => r.startsWith('GET /timestamp/')).length;
  const delayed = () => lines.filter((l) => l.msg.startsWith('anchoring delayed: '));
  const doneLines = (name: string) => lines.filter((l) => l.msg === `scheduled ${name} done`);
  /** The runs whose last line says which days failed. */
  const failedLines = (name: string) => lines.filter((l) => l.msg.startsWith(`scheduled ${name} failed for `));
  /** A run's last line: "done", which days failed, or which days wait for their stamp after a failure. */
  const finishedLines = (name: string) =>
    lines.filter(
      (l) =>
        l.msg === `scheduled ${name} done` ||
        l.msg.startsWith(`scheduled ${name} failed for `) ||
        l.msg.startsWith(`scheduled ${name}: `),
    );
  const stamped = () => fs.readdirSync(archive).filter((f) => f.endsWith('.json.ots')).length;
  const blockInfo = () =>
    JSON.parse(fs.readFileSync(path.join(archive, 'block_info.json'), 'utf8')) as {
      ledgers: Record<string, unknown>;
      pending: Record<string, { state: string; reason: string }>;
    };

  /**
   * Moves the simulated clock minute by minute to `to`, running each step at the minute nextRun names; returns
   * the number of runs of the steps that ask the calendar (anchor, upgrade).
   */
  async function advance(to: number): Promise<number> {
    let runs = 0;
    while (sim < to) {
      const from = sim;
      sim += MINUTE;
      for (const step of steps) {
        if (nextRun(step, from) <= sim) {
          await schedule!.run(step.name);
          if (step.name !== 'tsa stamp') runs++;
        }
      }
    }
    return runs;
  }

  beforeAll(async () => {
    await Promise.all([calendar.start(), esplora.start()]);
    // A TSA that refuses every request (HTTP 503), keeping each request (its imprint names the day).
    tsa = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        tsaAsked.push(Buffer.concat(chunks).toString('hex'));
        res.writeHead(503);
        res.end('down for maintenance');
      });
    });
    await new Promise<void>((r) => tsa.listen(0, '127.0.0.1', r));
    calendar.fault = 'hang';
    dir = tempDir('backoff');
    const env = {
      ...archiveEnv(dir),
      OTS_CALENDARS: calendar.url,
      OTS_MIN_CALENDARS: '1',
      OTS_TIMEOUT_MS: '250',
      BITCOIN_ESPLORA_URL: esplora.url,
      BITCOIN_NETWORK: 'regtest',
      TSA_URLS: `http://127.0.0.1:${(tsa.address() as AddressInfo).port}/`,
      TSA_TIMEOUT_MS: '2000',
    };
    // The schedule's steps read their settings from this process's environment, as in `timeseal serve`.
    for (const k of Object.keys(process.env))
      if (/^(TIMESEAL_|OTS_|BITCOIN_|TSA_|ANCHOR_)/.test(k)) delete process.env[k];
    Object.assign(process.env, env);
    const config = loadConfig(env);
    initKeys({ keys: config.keys, privateKeys: config.privateKeys });
    const keys = loadSigningKeys({ keys: config.keys, privateKeys: config.privateKeys });
    archive = config.archive;
    writeLongArchive({
      archive,
      origin: config.logOrigin,
      keys,
      count: DAYS,
      lastDate: LAST,
      signed: 1,
      anchoredThrough: '',
    });
    ctx = { ...createContext(env), clock: () => new Date(sim) };
  }, 60_000);

  afterAll(async () => {
    await schedule?.stop();
    await ctx?.close();
    tsa?.closeAllConnections();
    tsa?.close();
    await Promise.all([calendar.stop(), esplora.stop()]);
    removeTempDirs();
  });

  it('the first hour with the calendar silent: a few requests in all, newest days first, one line per day tried', async () => {
    const started = performance.now();
    const log = {
      info: (fields: object, msg: string) => void lines.push({ level: 'info', fields: fields as Line['fields'], msg }),
      warn: (fields: object, msg: string) => void lines.push({ level: 'warn', fields: fields as Line['fields'], msg }),
      error: (fields: object, msg: string) =>
        void lines.push({ level: 'error', fields: fields as Line['fields'], msg }),
    };
    schedule = startSchedule(ctx, log, steps, { leaseMs: 60_000, now: () => new Date(sim) });
    // The catch-up at start: each step once.
    await vi.waitFor(() => expect(steps.map((s) => finishedLines(s.name).length)).toEqual([1, 1, 1]), {
      timeout: 20_000,
      interval: 20,
    });
    // Every day it tried failed: the log says so, never "done".
    expect(steps.map((s) => doneLines(s.name).length)).toEqual([0, 0, 0]);
    const anchorLine = failedLines('anchor')[0]!;
    expect(anchorLine.level).toBe('warn');
    // … and when they are tried again: the earliest time their own "anchoring delayed" lines give.
    expect(anchorLine.msg).toBe(
      `scheduled anchor failed for 2 of 2 days (${dateBefore(0)}, ${dateBefore(1)}); next try ${firstRetry(lines)}`,
    );
    // Then 00:02 anchor, 00:04 tsa, 00:05 upgrade, 01:04 tsa, 01:05 upgrade: three more calendar runs.
    expect(await advance(T0 + 65 * MINUTE)).toBe(3);
    const seconds = (performance.now() - started) / 1000;

    // Five calendar runs, each stopped after two days in a row timed out: ten requests, not 5 × 400.
    expect(posts()).toBe(10);
    expect(gets()).toBe(0);
    const tried = delayed().map((l) => l.fields.date);
    expect(tried).toEqual(
      [
        ...[0, 1], // catch-up anchor: the newest two
        ...[2, 3], // catch-up upgrade: the next two (the first two wait until 01:00)
        ...[4, 5], // 00:02 anchor
        ...[6, 7], // 00:05 upgrade
        ...[0, 1], // 01:05 upgrade: the newest are due again, and fail a second time
      ].map(dateBefore),
    );
    for (const l of delayed()) {
      expect(l.level).toBe('warn');
      expect(l.msg).toMatch(
        /^anchoring delayed: \d{4}-\d{2}-\d{2}: stamp failed: 0 of 1 calendars answered \(1 needed\): .*did not answer within 250 ms, retrying at 20\d\d-\d\d-\d\dT[\d:.]+Z$/,
      );
      expect(l.msg).not.toMatch(/\n|\bat .*\.ts:\d+/);
    }
    // A second failure in a row waits two hours; a first one hour.
    expect(delayed().at(-1)!.fields).toMatchObject({
      date: dateBefore(1),
      failures: 2,
      retry_at: new Date(T0 + 65 * MINUTE + 2 * HOUR).toISOString(),
    });
    expect(delayed()[2]!.fields).toMatchObject({
      date: dateBefore(2),
      failures: 1,
      retry_at: new Date(T0 + HOUR).toISOString(),
    });
    expect(
      lines
        .filter((l) => /^anchoring: \d+ days left for a later run \(2 days in a row failed\)/.test(l.msg))
        .map((l) => l.fields.left),
    ).toEqual([398, 396, 394, 392, 398]);
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
    // The status says why and until when.
    expect(blockInfo().pending[LAST]!.reason).toMatch(
      /did not answer within 250 ms; next attempt at 2026-02-05T03:05:00.000Z$/,
    );
    // The retry records are the server's own, next to the database file, not in the archive.
    const book = new RetryBook(path.join(dir, 'data', ANCHOR_RETRY_FILE));
    expect(book.get(`stamp ${LAST}`)).toMatchObject({ failures: 2, next: '2026-02-05T03:05:00.000Z' });
    expect(fs.readdirSync(archive).filter((f) => /retry/.test(f))).toEqual([]);

    // The TSA's runs (catch-up, 00:04, 01:04): at most TSA_DAYS_PER_RUN days each, newest first, and the days of
    // the first run again only once their hour has passed.
    const days = JSON.parse(fs.readFileSync(path.join(archive, 'days.json'), 'utf8')).days as Array<{
      date: string;
      sha256: string;
    }>;
    const asked = tsaAsked.map((body) => days.find((d) => body.includes(d.sha256))?.date);
    expect(asked).toHaveLength(72);
    expect(asked.slice(0, 24)).toEqual(Array.from({ length: 24 }, (_, i) => dateBefore(i)));
    expect(asked.slice(24, 48)).toEqual(Array.from({ length: 24 }, (_, i) => dateBefore(24 + i)));
    expect(asked.slice(48)).toEqual(asked.slice(0, 24));
    expect(lines.filter((l) => l.msg.startsWith('time-stamping delayed: '))).toHaveLength(72);
    // All of this in seconds: before, each calendar run waited out 400 timeouts, one day after the other.
    expect(seconds).toBeLessThan(20);
  });

  it('the next 36 hours with the calendar refusing: about two requests an hour', async () => {
    process.env.TSA_URLS = ''; // the TSA is not this part's subject
    calendar.fault = 'http500';
    const before = posts();
    const end = Date.parse('2026-02-06T12:00:00Z');
    const runs = await advance(end);
    const hours = (end - (T0 + 65 * MINUTE)) / HOUR;
    expect(runs).toBeGreaterThanOrEqual(Math.floor(hours));
    // Each run: two days in a row fail, the run stops. Before: 400 requests a run.
    expect(posts() - before).toBe(2 * runs);
    expect((posts() - before) / hours).toBeLessThan(2.1);
    expect(stamped()).toBe(0);
    // The newest day is still tried first whenever it is due, and its wait has reached the 24 h cap.
    const book = new RetryBook(path.join(dir, 'data', ANCHOR_RETRY_FILE));
    expect(book.get(`stamp ${LAST}`)!.failures).toBeGreaterThanOrEqual(6);
    expect(Date.parse(book.get(`stamp ${LAST}`)!.next) - Date.parse(book.get(`stamp ${LAST}`)!.last)).toBe(24 * HOUR);
  }, 60_000);

  it('the calendar back: every day is stamped over the next runs, newest due first; upgrades confirm the newest; no record is left', async () => {
    calendar.fault = 'none';
    // The calendar answers now; the 250 ms bound was for its silence. A loaded machine (two cores, three test
    // workers) can take longer than that to answer on loopback, and a day whose upgrade timed out is missing below.
    process.env.OTS_TIMEOUT_MS = '10000';
    const start = sim;
    const firstRun = finishedLines('upgrade and block refresh').length;
    // Until every day has its calendar proof: at most ANCHOR_DAYS_PER_RUN (24) new stamps a run.
    let runs = 0;
    while (stamped() < DAYS && sim < start + 48 * HOUR) {
      const postsBefore = posts();
      runs += await advance(sim + HOUR);
      expect(posts() - postsBefore).toBeLessThanOrEqual(2 * 24);
    }
    expect(stamped()).toBe(DAYS);
    expect(sim - start).toBeLessThanOrEqual(26 * HOUR);
    // One successful request a day: 10 + 70 failed ones before, then exactly 400.
    expect(posts()).toBe(10 + 70 + DAYS);
    // The first run after the calendar came back stamped 24 days, newest due first.
    const first = finishedLines('upgrade and block refresh')[firstRun]!.fields.result as {
      stamps: Array<{ date: string; outcome: string }>;
    };
    const dates = first.stamps.filter((s) => s.outcome === 'stamped').map((s) => s.date);
    expect(dates).toHaveLength(24);
    expect(dates).toEqual([...dates].sort().reverse());
    // Success clears a day's record; with nothing left to retry there is no file.
    expect(fs.existsSync(path.join(dir, 'data', ANCHOR_RETRY_FILE))).toBe(false);
    // Bitcoin: the calendar commits every pending day to a block; the next upgrade asks 24 days, newest first,
    // and confirms them; the others follow in the next runs.
    calendar.mine(chain);
    chain.extend(6);
    const getsBefore = gets();
    await advance(nextRun(steps[1]!, sim));
    expect(gets() - getsBefore).toBe(24);
    expect(Object.keys(blockInfo().ledgers).sort()).toEqual(Array.from({ length: 24 }, (_, i) => dateBefore(23 - i)));
    expect(runs).toBeGreaterThan(0);
  }, 60_000);
});

describe('the rule and the bounds', () => {
  it('waits 1 h, 2 h, 4 h, … after each failure in a row, at most 24 h', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map((f) => waitAfter(f) / HOUR)).toEqual([1, 2, 4, 8, 16, 24, 24, 24]);
  });

  it('a run starts no day once ANCHOR_RUN_SECONDS are spent; the settings are checked', async () => {
    const cal = await new LoopbackCalendar().start();
    try {
      cal.fault = 'http500';
      const dir = tempDir('backoff-budget');
      const { config } = smallArchive(archiveEnv(dir), 5);
      const anchor = loadAnchorConfig({ OTS_CALENDARS: cal.url, OTS_MIN_CALENDARS: '1', ANCHOR_RUN_SECONDS: '1' });
      // A budget clock that moves 0.6 s a reading: the first day starts at 0.6 s, the second would start after 1 s.
      let t = 0;
      const warned: string[] = [];
      const schedule = {
        warn: (_f: object, m: string) => void warned.push(m),
        info: () => undefined,
        now: () => new Date(T0),
        elapsed: () => (t += 600),
      };
      const results = await anchorDays({ config, anchor, clock: () => new Date(T0), schedule });
      expect(results.map((r) => r.date)).toEqual([LAST]);
      expect(warned).toHaveLength(1);
      // By hand (no schedule): every day, at once, whatever the records say.
      const all = await anchorDays({ config, anchor, clock: () => new Date(T0) });
      expect(all.map((r) => r.date)).toEqual(Array.from({ length: 5 }, (_, i) => dateBefore(4 - i)));
    } finally {
      await cal.stop();
    }
    expect(loadAnchorConfig({})).toMatchObject({ daysPerRun: 24, runMs: 600_000 });
    expect(() => loadAnchorConfig({ ANCHOR_DAYS_PER_RUN: '0' })).toThrow(
      /ANCHOR_DAYS_PER_RUN must be a whole number of days, at least 1, got "0"/,
    );
    expect(() => loadAnchorConfig({ ANCHOR_RUN_SECONDS: 'soon' })).toThrow(/ANCHOR_RUN_SECONDS/);
  });

  it('after a failed anchoring the upgrade says one plain line, what failed and the next try; the raw error once', async () => {
    const cal = await new LoopbackCalendar().start();
    const dir = tempDir('backoff-plain');
    const env = {
      ...archiveEnv(dir),
      OTS_CALENDARS: cal.url,
      OTS_MIN_CALENDARS: '1',
      BITCOIN_NETWORK: 'regtest',
    };
    // The schedule's steps read their settings from the environment, as in `timeseal serve`.
    for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
    smallArchive(env, 1);
    const ctx = { ...createContext(env), clock: () => new Date(T0) };
    const lines: Line[] = [];
    const push = (level: Line['level']) => (fields: object, msg: string) =>
      void lines.push({ level, fields: fields as Line['fields'], msg });
    const steps = scheduledSteps(launchTimeseal).filter((s) =>
      ['anchor', 'upgrade and block refresh'].includes(s.name),
    );
    cal.fault = 'http500';
    const schedule = startSchedule(ctx, { info: push('info'), warn: push('warn'), error: push('error') }, steps, {
      leaseMs: 60_000,
      now: () => new Date(T0),
    });
    try {
      // The catch-up at start: the anchor's stamp fails, then the upgrade finds the day still without its stamp.
      await vi.waitFor(
        () => expect(lines.some((l) => l.msg.startsWith('scheduled upgrade and block refresh'))).toBe(true),
        {
          timeout: 20_000,
          interval: 20,
        },
      );
      const upgrade = lines.filter((l) => l.msg.startsWith('scheduled upgrade and block refresh'));
      expect(upgrade.map((l) => [l.level, l.msg])).toEqual([
        [
          'warn',
          `scheduled upgrade and block refresh: 1 day not anchored yet, its stamp failed (${LAST}); next try 2026-02-05T01:00:00.000Z`,
        ],
      ]);
      // The calendar's answer (HTTP 500) is in the log once: the line that says the day's anchoring is delayed.
      const raw = lines.filter((l) => /\b500\b/.test(JSON.stringify(l)));
      expect(raw.map((l) => l.msg)).toEqual([
        expect.stringMatching(new RegExp(`^anchoring delayed: ${LAST}: stamp failed: `)),
      ]);
      expect(lines.map((l) => l.msg)).toContain(
        `scheduled anchor failed for 1 of 1 day (${LAST}); next try 2026-02-05T01:00:00.000Z`,
      );
      expect(firstRetry(lines)).toBe('2026-02-05T01:00:00.000Z');
    } finally {
      await schedule.stop();
      await ctx.close();
      await cal.stop();
      vi.unstubAllEnvs();
    }
  });

  it('a witness that is down is asked again after its wait, not at every run; its cosignature clears the record', async () => {
    const dir = tempDir('backoff-witness');
    const { config, keys } = smallArchive(archiveEnv(dir), 3);
    const witness = await startWitness({
      name: 'w.example/witness',
      seed: new Uint8Array(32).fill(21),
      algorithm: 'Ed25519',
      logs: new Map([[config.logOrigin, logVerifiers(config.logOrigin, keys.public)]]),
    });
    await witness.stop();
    let now = T0 + 3 * MINUTE;
    const warned: string[] = [];
    const schedule = {
      warn: (_f: object, m: string) => void warned.push(m),
      info: () => undefined,
      now: () => new Date(now),
    };
    const cosign = () =>
      cosignLatest({
        config,
        witness: loadWitnessConfig({ TIMESEAL_WITNESSES: witness.setting }),
        clock: () => new Date(now),
        schedule,
      });
    try {
      expect((await cosign()).met).toBe(false);
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatch(
        /^cosigning delayed: 2026-02-04: w\.example\/witness: .*no answer.*, retrying at 2026-02-05T01:03:00\.000Z$/,
      );
      await witness.restart();
      now += HOUR - 10 * MINUTE - 1; // just before its wait is over (up to 10 minutes early)
      const waiting = await cosign();
      expect(waiting.failures[0]!.reason).toMatch(
        /^not asked: 1 failure \(.*no answer.*\); next attempt at 2026-02-05T01:03:00\.000Z$/,
      );
      expect(witness.statuses).toEqual([]);
      now += 1;
      expect(await cosign()).toMatchObject({ met: true, cosigned: ['w.example/witness'] });
      expect(witness.statuses).toEqual([200]);
      expect(fs.existsSync(path.join(dir, 'data', WITNESS_RETRY_FILE))).toBe(false);
    } finally {
      await witness.stop();
    }
  });
});

/** The earliest "retrying at <time>" of the log's "anchoring delayed: …" lines (undefined without one). */
function firstRetry(lines: ReadonlyArray<{ msg: string }>): string | undefined {
  return lines
    .map((l) => /^anchoring delayed: .*, retrying at (\S+)$/.exec(l.msg)?.[1])
    .filter((t): t is string => t !== undefined)
    .sort()[0];
}
