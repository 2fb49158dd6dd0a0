// With the server's clock on or before the last published day, a submission would be filed
// under a ledger that can never be built. Both submission routes answer 503 and store nothing,
// /api/queue-stats.php says submissions are paused, and the error is logged once a minute with a count, not
// once a request. The next day (the clock after the archive) everything is accepted as before.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { lastPublishedDayReader } from '../../runtime/clock-guard.ts';
import { createSubmissionGate } from '../submission-gate.ts';
import { DAY, makeFixture, NOW, randomHash, removeTempDirs, startServer, type Fixture } from './fixture.ts';

const DAY_BEFORE = '2025-11-01';
const paused = (clockDate: string): string =>
  `The server's clock (${clockDate}) is not after the last published ledger (${DAY}); submissions are paused until it is corrected.`;

let f: Fixture;
let now = NOW;

beforeAll(async () => {
  // The fixture publishes DAY (2025-11-02); its app reads the clock below at every request.
  f = await makeFixture({ clock: () => new Date(now) });
});

afterAll(async () => {
  await f.close();
  removeTempDirs();
});

const beta = (hash: string) => f.app.inject({ method: 'POST', url: '/api/v1/beta/timestamp', payload: { hash } });
const submit = (hash: string) =>
  f.app.inject({ method: 'POST', url: '/api/submit', payload: { hash, fileName: 'report.pdf' } });

describe.each([
  ['on the last published day', `${DAY}T23:59:59.999Z`, DAY],
  ['the day before it', `${DAY_BEFORE}T12:00:00.000Z`, DAY_BEFORE],
])('with the clock %s', (_label, clock, clockDate) => {
  it('both submission routes answer 503 with the reason and store nothing', async () => {
    now = clock;
    const before = f.rowCounts();
    const hash = randomHash();
    const b = await beta(hash);
    expect(b.statusCode).toBe(503);
    expect(b.headers['content-type']).toMatch(/^application\/json/);
    expect(b.json()).toEqual({
      success: false,
      error: `${paused(clockDate)} Nothing was stored.`,
      message: `${paused(clockDate)} Nothing was stored.`,
      example: { hash: 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9' },
    });
    const s = await submit(hash);
    expect(s.statusCode).toBe(503);
    expect(s.json()).toEqual({
      ok: false,
      error: `${paused(clockDate)} Nothing was stored.`,
      message: `${paused(clockDate)} Nothing was stored.`,
    });
    // No submission row, no rate-limit count, nothing anywhere.
    expect(f.rowCounts()).toEqual(before);
    expect(f.db.prepare('SELECT COUNT(*) AS n FROM submissions WHERE hash = ?').get(hash)).toEqual({ n: 0 });
  });

  it('queue-stats reports submissions as paused, with the reason', async () => {
    now = clock;
    const res = await f.app.inject('/api/queue-stats.php');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      status: 'submissions paused',
      lastUpdate: new Date(clock).toISOString(),
      lastPublishedDay: DAY,
      submissionsOpen: false,
      problem: paused(clockDate),
    });
  });
});

describe('with the clock after the last published day', () => {
  it('both routes answer 201 as before and queue-stats is operational', async () => {
    now = NOW; // 2025-11-03T12:00Z
    const before = f.rowCounts().submissions!;
    const hashes = [randomHash(), randomHash()];
    const b = await beta(hashes[0]!);
    expect(b.statusCode).toBe(201);
    expect(b.json()).toMatchObject({ success: true, hash: hashes[0], ledgerDate: '2025-11-03' });
    const s = await submit(hashes[1]!);
    expect(s.statusCode).toBe(201);
    expect(s.json()).toMatchObject({ ok: true, hash: hashes[1], ledgerDate: '2025-11-03' });
    expect(f.rowCounts().submissions).toBe(before + 2);
    const stats = (await f.app.inject('/api/queue-stats.php')).json();
    expect(stats).toMatchObject({ status: 'operational', lastPublishedDay: DAY, submissionsOpen: true });
    expect(stats).not.toHaveProperty('problem');
  });
});

describe('the submission gate', () => {
  it('logs the first refusal at error level, then at most once a minute with a count, and the recovery once', () => {
    const lines: Array<{ level: string; obj: Record<string, unknown>; msg: string }> = [];
    const log = {
      error: (obj: object, msg: string) => lines.push({ level: 'error', obj: obj as Record<string, unknown>, msg }),
      warn: (obj: object, msg: string) => lines.push({ level: 'warn', obj: obj as Record<string, unknown>, msg }),
    };
    let t = 0;
    const gate = createSubmissionGate({ archive: f.config.archive, log, now: () => t });
    for (let i = 0; i < 1000; i++) expect(gate.refusal(DAY)).toBe(`${paused(DAY)} Nothing was stored.`);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'error', obj: { clockDate: DAY, lastPublishedDay: DAY, refused: 1 } });
    expect(lines[0]!.msg).toMatch(
      /^SUBMISSIONS PAUSED: the server's clock \(2025-11-02\) is not after the last published ledger \(2025-11-02\)/,
    );
    t = 59_999;
    gate.refusal(DAY);
    expect(lines).toHaveLength(1);
    t = 60_000;
    gate.refusal(DAY);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ level: 'error', obj: { refused: 1001, refusedTotal: 1002 } });
    expect(gate.refusal('2025-11-03')).toBeNull();
    expect(gate.refusal('2025-11-03')).toBeNull();
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatchObject({ level: 'warn', obj: { refused: 1002 } });
    expect(lines[2]!.msg).toMatch(/^submissions accepted again/);
  });

  it('reads days.json again only when it changed, and looks at it at most once a second', () => {
    const archive = path.join(f.dir, 'other-archive');
    fs.mkdirSync(archive);
    const file = path.join(archive, 'days.json');
    const reads = vi.spyOn(fs, 'readFileSync');
    const stats = vi.spyOn(fs, 'statSync');
    const calls = (spy: typeof reads | typeof stats) => spy.mock.calls.filter(([p]) => p === file).length;
    try {
      let t = 0;
      const last = lastPublishedDayReader(archive, { now: () => t });
      expect(last()).toBe('');
      fs.copyFileSync(path.join(f.config.archive, 'days.json'), file);
      for (let i = 0; i < 100; i++) expect(last()).toBe(''); // within the second: the cached value
      expect([calls(stats), calls(reads)]).toEqual([1, 0]);
      t = 1000;
      expect(last()).toBe(DAY);
      expect([calls(stats), calls(reads)]).toEqual([2, 1]);
      t = 2000;
      expect(last()).toBe(DAY); // unchanged: looked at, not read
      expect([calls(stats), calls(reads)]).toEqual([3, 1]);
      fs.rmSync(file);
      t = 3000;
      expect(last()).toBe('');
    } finally {
      reads.mockRestore();
      stats.mockRestore();
    }
  });
});

describe('the real server', () => {
  it('answers 503 over HTTP, logs one error line for a burst, and its 00:01 build step reports the clock', async () => {
    const server = await startServer(f.dir, { ...f.env, TIMESEAL_NOW: `${DAY}T12:00:00.000Z` });
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(`${server.url}/api/v1/beta/timestamp`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ hash: randomHash() }),
          }).then(async (r) => [r.status, (await r.json()).error]),
        ),
      );
      expect(new Set(answers.map(([status]) => status))).toEqual(new Set([503]));
      expect(answers[0]![1]).toBe(`${paused(DAY)} Nothing was stored.`);
      const stats = await (await fetch(`${server.url}/api/queue-stats.php`)).json();
      expect(stats).toMatchObject({ status: 'submissions paused', submissionsOpen: false, problem: paused(DAY) });
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited).toEqual({ code: 0, signal: null });
    const records = server
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; msg: string; err?: string; refused?: number });
    const pausedLines = records.filter((r) => r.msg.startsWith('SUBMISSIONS PAUSED'));
    expect(pausedLines).toHaveLength(1);
    expect(pausedLines[0]).toMatchObject({ level: 50, refused: 1 });
    const build = records.find((r) => r.msg.startsWith('scheduled ledger build failed'));
    expect(build?.level).toBe(50);
    expect(build?.err).toMatch(
      /clock \(2025-11-02\) is not after the last published ledger \(2025-11-02\): the clock is behind the archive/,
    );
  });
});
