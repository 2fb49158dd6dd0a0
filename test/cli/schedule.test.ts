// The built-in schedule's timing (cli/schedule.ts, docs/OPERATIONS.md §1): the build runs every hour at :01, so
// a build that failed or was killed at 00:01 is retried within the hour instead of the next night.
import { describe, expect, it } from 'vitest';
import { nextRun, STEPS } from '../../cli/schedule.ts';

const step = (name: string) => STEPS.find((s) => s.name === name)!;
const at = (iso: string) => Date.parse(iso);

describe('schedule', () => {
  it('runs the build hourly at :01, after a failure at 00:01 too', () => {
    const build = step('ledger build');
    expect(new Date(nextRun(build, at('2025-11-03T00:00:30Z'))).toISOString()).toBe('2025-11-03T00:01:00.000Z');
    expect(new Date(nextRun(build, at('2025-11-03T00:01:00Z'))).toISOString()).toBe('2025-11-03T01:01:00.000Z');
    expect(new Date(nextRun(build, at('2025-11-03T13:45:00Z'))).toISOString()).toBe('2025-11-03T14:01:00.000Z');
  });

  it('anchors daily at 00:02 and upgrades hourly at :05, after the build', () => {
    expect(new Date(nextRun(step('anchor'), at('2025-11-03T00:03:00Z'))).toISOString()).toBe('2025-11-04T00:02:00.000Z');
    expect(new Date(nextRun(step('upgrade and block refresh'), at('2025-11-03T07:06:00Z'))).toISOString()).toBe('2025-11-03T08:05:00.000Z');
    expect(STEPS.map((s) => s.name)).toEqual(['ledger build', 'anchor', 'upgrade and block refresh', 'witness cosign', 'tsa stamp']);
  });

  it('asks the witnesses hourly at :03, after the build', () => {
    expect(new Date(nextRun(step('witness cosign'), at('2025-11-03T00:01:30Z'))).toISOString()).toBe('2025-11-03T00:03:00.000Z');
    expect(new Date(nextRun(step('witness cosign'), at('2025-11-03T00:03:00Z'))).toISOString()).toBe('2025-11-03T01:03:00.000Z');
  });
});
