// The clock check (clock-check.ts) with an injected database clock: the skew is the database's time less the
// midpoint of the read; beyond 30 s the check refuses with its text (behind or ahead), within it it does not;
// a failed read keeps the last answer; each change is logged once.
import { describe, expect, it } from 'vitest';
import { createClockCheck, MAX_SKEW_MS } from '../clock-check.ts';

describe('clock check', () => {
  it('refuses beyond 30 s either way, accepts again when the clocks agree, keeps its answer when the database cannot be read', async () => {
    let offset = 0;
    let failing = false;
    let t = 1_700_000_000_000;
    const lines: string[] = [];
    const check = createClockCheck({
      now: () => (t += 10),
      databaseTime: async () => {
        if (failing) throw new Error('connection refused');
        return t + offset;
      },
      log: { error: (_o, msg) => lines.push(`error ${msg}`), warn: (_o, msg) => lines.push(`warn ${msg}`) },
      everyMs: 3_600_000,
    });
    try {
      await check.measure();
      expect(check.problem()).toBeNull();
      offset = MAX_SKEW_MS - 1_000;
      await check.measure();
      expect(check.problem()).toBeNull();
      offset = 90_000;
      await check.measure();
      expect(check.problem()).toBe(
        "The server's clock is 90 s behind its database's; submissions are paused until it is corrected.",
      );
      failing = true;
      await check.measure();
      expect(check.problem()).not.toBeNull();
      failing = false;
      offset = -45_000;
      await check.measure();
      expect(check.problem()).toBe(
        "The server's clock is 45 s ahead of its database's; submissions are paused until it is corrected.",
      );
      offset = 2_000;
      await check.measure();
      expect(check.problem()).toBeNull();
      expect(lines.map((l) => l.split(':')[0])).toEqual(['error CLOCK SKEW', 'warn clock skew resolved']);
    } finally {
      check.stop();
    }
  });
});
