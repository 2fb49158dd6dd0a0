// The schedule's build step with a launcher of this test's own (pipeline/schedule.ts CommandLauncher; `timeseal
// serve` passes cli/launcher.ts's, which starts `timeseal ledger build` as a child process): what it is asked to
// run and with which lease holder, what the schedule makes of the answer (the log line, the build metrics of the
// days published, not of those only re-checked), a build that failed, and a node without the lease.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../runtime/config.ts';
import { SCHEDULE_HOLDER_ENV } from './archive-publish.ts';
import {
  scheduledSteps,
  startSchedule,
  type CommandLauncher,
  type ScheduleContext,
  type ScheduleMetrics,
} from './schedule.ts';

interface Launched {
  args: string[];
  env: Record<string, string>;
}

/** A node's context whose lease answers `holds` (and records who asked), on a folder archive. */
function nodeContext(holds: boolean, askedBy: string[]): ScheduleContext {
  const lease = {
    acquire: async (_name: string, holder: string) => {
      askedBy.push(holder);
      return holds;
    },
    release: async () => undefined,
  };
  return {
    config: loadConfig({ TIMESEAL_ARCHIVE: '/nonexistent/ledgers' }),
    clock: () => new Date('2025-11-03T12:00:00.000Z'),
    store: async () => ({ lease }),
    publicKeys: () => {
      throw new Error('a folder archive reads no key here');
    },
    progress: () => undefined,
  };
}

/** Runs the schedule's build step alone: its catch-up at start, then once more as its timer would. */
async function runBuild(holds: boolean, launch: CommandLauncher) {
  const askedBy: string[] = [];
  const lines: Array<{ msg: string; fields: object }> = [];
  const finished: Array<{ step: string; ok: boolean }> = [];
  const builds: Array<{ days: number; entries: number }> = [];
  const metrics: ScheduleMetrics = {
    stepFinished: (step, ok) => void finished.push({ step, ok }),
    buildFinished: ({ days, entries }) => void builds.push({ days, entries }),
  };
  const log = {
    info: (fields: object, msg: string) => void lines.push({ msg, fields }),
    error: (fields: object, msg: string) => void lines.push({ msg, fields }),
  };
  const steps = scheduledSteps(launch).filter((s) => s.name === 'ledger build');
  expect(steps).toHaveLength(1);
  const schedule = startSchedule(nodeContext(holds, askedBy), log, steps, { leaseMs: 60_000, metrics });
  try {
    await schedule.run('ledger build');
  } finally {
    await schedule.stop();
  }
  return { askedBy, lines: lines.map((l) => l.msg), fields: lines.map((l) => l.fields), finished, builds };
}

describe('the schedule with its launcher injected', () => {
  it("launches `ledger build --json` with the node's lease holder, and counts the days it published", async () => {
    const launched: Launched[] = [];
    const ran = await runBuild(true, async (args, env) => {
      launched.push({ args: [...args], env: { ...env } });
      return {
        days: [
          { date: '2025-11-01', entryCount: 9, alreadyPublished: true },
          { date: '2025-11-02', entryCount: 3, alreadyPublished: false },
          { date: '2025-11-03', entryCount: 4, alreadyPublished: false },
        ],
      };
    });
    const holder = ran.askedBy[0]!;
    expect(holder).toMatch(/^.+:\d+:[0-9a-f]{8}$/);
    expect(new Set(ran.askedBy)).toEqual(new Set([holder]));
    expect(launched).toEqual([
      { args: ['ledger', 'build', '--json'], env: { [SCHEDULE_HOLDER_ENV]: holder } },
      { args: ['ledger', 'build', '--json'], env: { [SCHEDULE_HOLDER_ENV]: holder } },
    ]);
    expect(ran.lines.filter((l) => l === 'scheduled ledger build done')).toHaveLength(2);
    expect(ran.finished).toEqual([
      { step: 'ledger build', ok: true },
      { step: 'ledger build', ok: true },
    ]);
    expect(ran.builds).toEqual([
      { days: 2, entries: 7 },
      { days: 2, entries: 7 },
    ]);
  });

  it('a build that failed is logged with its last line and tried again at the next run', async () => {
    let calls = 0;
    const ran = await runBuild(true, async () => {
      calls++;
      throw new Error('ledger build: the clock is behind the archive');
    });
    expect(calls).toBe(2);
    expect(ran.lines.filter((l) => l === 'scheduled ledger build failed; the next run retries')).toHaveLength(2);
    expect(ran.fields).toContainEqual({ step: 'ledger build', err: 'ledger build: the clock is behind the archive' });
    expect(ran.finished).toEqual([
      { step: 'ledger build', ok: false },
      { step: 'ledger build', ok: false },
    ]);
    expect(ran.builds).toEqual([]);
  });

  it('a node without the lease launches nothing', async () => {
    let calls = 0;
    const ran = await runBuild(false, async () => {
      calls++;
      return { days: [] };
    });
    expect(calls).toBe(0);
    expect(ran.askedBy.length).toBeGreaterThanOrEqual(2);
    expect(ran.lines).toContain('schedule held by another node: this node skips its steps');
    expect(ran.finished).toEqual([]);
  });
});
