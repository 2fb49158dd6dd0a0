// `timeseal serve` runs the daily build of its schedule as a child process (pipeline/schedule.ts), so a long
// build and its index merges never stop the server: started the day after a day with submissions, it
// publishes that day on its own (catch-up) and its log has the command's JSON result.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, test, vi } from 'vitest';
import { makeHashes, removeTempProjects, run, start, tempProject } from './helpers.ts';

afterAll(removeTempProjects);

test('the schedule publishes a finished day at start and logs what the build did', { timeout: 120_000 }, async () => {
  const dir = tempProject('serve-schedule');
  expect(run(dir, ['keys', 'init']).code).toBe(0);
  const hashes = makeHashes('serve-schedule', 50);
  expect(
    run(dir, ['import', '-'], { env: { TIMESEAL_NOW: '2025-11-02T10:00:00.000Z' }, input: `${hashes.join('\n')}\n` })
      .code,
  ).toBe(0);
  const server = start(dir, ['serve'], {
    env: {
      TIMESEAL_NOW: '2025-11-03T00:05:00.000Z',
      PORT: '0',
      TIMESEAL_SITE: path.join(dir, 'no-site'),
      OTS_CALENDARS: 'http://127.0.0.1:9/',
    },
  });
  try {
    const days = path.join(dir, 'ledgers', 'days.json');
    await vi.waitFor(
      () => {
        expect(fs.existsSync(days), 'ledgers/days.json').toBe(true);
        expect(JSON.parse(fs.readFileSync(days, 'utf8')).days).toMatchObject([{ date: '2025-11-02', entry_count: 50 }]);
      },
      { timeout: 60_000, interval: 200 },
    );
    expect(fs.existsSync(path.join(dir, 'ledgers', 'index/segments.json'))).toBe(true);
  } finally {
    server.child.kill('SIGTERM');
  }
  const exited = await server.exited;
  const done = exited.stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg: string; result?: { days?: { date: string }[] } });
  expect(done.find((r) => r.msg === 'scheduled ledger build done')?.result?.days?.map((d) => d.date)).toEqual([
    '2025-11-02',
  ]);
});
