// The built-in schedule's timing (pipeline/schedule.ts, docs/OPERATIONS.md §1): the build runs every hour at :01, so
// a build that failed or was killed at 00:01 is retried within the hour instead of the next night.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { Context } from '../../cli/context.ts';
import { launchTimeseal } from '../../cli/launcher.ts';
import { nextRun, startSchedule, scheduledSteps } from '../../pipeline/schedule.ts';
import { clockFromEnv, writeDevClock } from '../../runtime/clock.ts';

const step = (name: string) => scheduledSteps(launchTimeseal).find((s) => s.name === name)!;
const at = (iso: string) => Date.parse(iso);

describe('schedule', () => {
  it('runs the build hourly at :01, after a failure at 00:01 too', () => {
    const build = step('ledger build');
    expect(new Date(nextRun(build, at('2025-11-03T00:00:30Z'))).toISOString()).toBe('2025-11-03T00:01:00.000Z');
    expect(new Date(nextRun(build, at('2025-11-03T00:01:00Z'))).toISOString()).toBe('2025-11-03T01:01:00.000Z');
    expect(new Date(nextRun(build, at('2025-11-03T13:45:00Z'))).toISOString()).toBe('2025-11-03T14:01:00.000Z');
  });

  it('anchors daily at 00:02 and upgrades hourly at :05, after the build', () => {
    expect(new Date(nextRun(step('anchor'), at('2025-11-03T00:03:00Z'))).toISOString()).toBe(
      '2025-11-04T00:02:00.000Z',
    );
    expect(new Date(nextRun(step('upgrade and block refresh'), at('2025-11-03T07:06:00Z'))).toISOString()).toBe(
      '2025-11-03T08:05:00.000Z',
    );
    expect(scheduledSteps(launchTimeseal).map((s) => s.name)).toEqual([
      'ledger build',
      'anchor',
      'upgrade and block refresh',
      'witness cosign',
      'tsa stamp',
    ]);
  });

  it('asks the witnesses hourly at :03, after the build', () => {
    expect(new Date(nextRun(step('witness cosign'), at('2025-11-03T00:01:30Z'))).toISOString()).toBe(
      '2025-11-03T00:03:00.000Z',
    );
    expect(new Date(nextRun(step('witness cosign'), at('2025-11-03T00:03:00Z'))).toISOString()).toBe(
      '2025-11-03T01:03:00.000Z',
    );
  });
});

describe('the schedule lease', () => {
  it('a database that does not answer is said to be that, not "another node runs the schedule", and no step runs', async () => {
    let fail = false;
    let ran = 0;
    const lines: string[] = [];
    const lease = {
      acquire: async () => {
        if (fail) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
        return true;
      },
      release: async () => undefined,
    };
    const ctx = { store: async () => ({ lease }) } as unknown as Context;
    const log = {
      info: (_o: object, m: string) => void lines.push(m),
      error: (_o: object, m: string) => void lines.push(m),
    };
    const schedule = startSchedule(
      ctx,
      log,
      [{ name: 'step', lane: 'proofs', minute: 59, daily: false, run: () => void ran++ }],
      { leaseMs: 60_000 },
    );
    await schedule.runAll();
    expect(ran).toBe(2);
    fail = true;
    await schedule.run('step');
    expect(ran).toBe(2);
    expect(lines.at(-1)).toBe(
      'the schedule lease could not be checked (the database did not answer); no step runs on this node until it can',
    );
    expect(lines.some((l) => /another node/.test(l))).toBe(false);
    fail = false;
    await schedule.run('step');
    expect(ran).toBe(3);
    await schedule.stop();
  });
});

describe('the development clock', () => {
  it('moved by `timeseal clock`, the schedule re-arms at the moved time: a step due at 00:01 runs when that clock reaches it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-schedule-clock-'));
    const file = path.join(dir, 'dev-clock.json');
    // Far from any 00:01 of the system clock's.
    writeDevClock(file, new Date('2030-06-01T12:00:00.000Z'));
    const clock = clockFromEnv({}, { devClock: file, origin: 'http://localhost:8080', recheckMs: 0 });
    const lease = { acquire: async () => true, release: async () => undefined };
    const ctx = { store: async () => ({ lease }), clock } as unknown as Context;
    const ran: string[] = [];
    const nows: string[] = [];
    const lines: string[] = [];
    const log = {
      info: (_o: object, m: string) => void lines.push(m),
      error: (_o: object, m: string) => void lines.push(m),
    };
    const schedule = startSchedule(
      ctx,
      log,
      [
        {
          name: 'build',
          lane: 'build',
          minute: 1,
          daily: true,
          run: (_c, run) => {
            ran.push(clock().toISOString());
            nows.push(run.now().toISOString());
          },
        },
      ],
      { leaseMs: 60_000 },
    );
    try {
      await vi.waitFor(() => expect(ran).toHaveLength(1)); // the catch-up at start
      // Two seconds before the next day's 00:01 on the development clock.
      writeDevClock(file, new Date('2030-06-02T00:00:58.000Z'));
      await vi.waitFor(() => expect(ran).toHaveLength(2), { timeout: 10_000, interval: 100 });
      expect(ran[1]! >= '2030-06-02T00:01:00.000Z' && ran[1]! < '2030-06-02T00:01:02.000Z').toBe(true);
      expect(lines).toContain('the development clock moved: the schedule re-armed');
      // A step's retry times are on that clock too (run.now: the anchoring's "next try 01:02 UTC", its retry book).
      expect(nows[1]! >= '2030-06-02T00:01:00.000Z' && nows[1]! < '2030-06-02T00:01:02.000Z').toBe(true);
    } finally {
      await schedule.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
