// The clock guard in the operator CLI (docs/OPERATIONS.md §1, "A clock behind the archive"): with the clock
// on or before the last published day (a VM snapshot restored, an NTP step back, a wrong TIMESEAL_NOW) nothing
// can be published. `timeseal ledger build` says the
// clock is behind the archive and exits 1 (not "Nothing to publish"), touching nothing; `import` refuses with
// the same words; `status` shows it. The commands run as in ledger.test.ts.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { makeHashes, removeTempProjects, run, runJson, tempProject, treeDiff, treeDigest } from './helpers.ts';

afterAll(removeTempProjects);

const DAY = '2025-11-02';
const behind = (clockDate: string) =>
  new RegExp(
    `clock \\(${clockDate}\\) is not after the last published ledger \\(${DAY}\\): the clock is behind the archive`,
  );

let dir: string;

beforeAll(() => {
  dir = tempProject('clock-behind');
  expect(run(dir, ['keys', 'init']).code).toBe(0);
  expect(
    run(dir, ['import', '-'], {
      env: { TIMESEAL_NOW: `${DAY}T10:00:00Z` },
      input: `${makeHashes('behind', 3).join('\n')}\n`,
    }).code,
  ).toBe(0);
  const built = run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: '2025-11-03T00:01:00Z' } });
  expect(built.code, built.stderr).toBe(0);
});

describe.each([
  ['on the last published day', `${DAY}T23:00:00Z`, DAY],
  ['before it', '2025-11-01T12:00:00Z', '2025-11-01'],
])('with the clock %s', (_label, now, clockDate) => {
  test('ledger build says the clock is behind the archive, exits 1 and changes nothing', () => {
    const before = treeDigest(path.join(dir, 'ledgers'));
    const r = run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: now } });
    expect(r.code).toBe(1);
    expect(r.stdout).not.toMatch(/Nothing to publish/);
    expect(r.stderr).toMatch(behind(clockDate));
    expect(r.stderr).toMatch(/Nothing was built\.\n$/);
    expect(r.stderr).not.toContain('    at ');
    const json = run(dir, ['ledger', 'build', '--json'], { env: { TIMESEAL_NOW: now } });
    expect([json.code, json.stdout]).toEqual([1, '']);
    expect(json.stderr).toMatch(behind(clockDate));
    expect(treeDiff(before, treeDigest(path.join(dir, 'ledgers')))).toEqual([]);
  });

  test('import refuses with the same words; status shows the condition', () => {
    const r = run(dir, ['import', '-'], { env: { TIMESEAL_NOW: now }, input: `${makeHashes('late', 1)[0]}\n` });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(behind(clockDate));
    expect(r.stderr).toMatch(/Nothing was enqueued\.\n$/);
    const status = runJson(dir, ['status'], { env: { TIMESEAL_NOW: now } });
    expect(status.result.code).toBe(0);
    expect(status.json).toMatchObject({ queue_size: 0, last_published_day: DAY, clock_behind_archive: true });
    expect(run(dir, ['status'], { env: { TIMESEAL_NOW: now } }).stdout).toMatch(/Clock behind the archive/);
  });
});

test('with the clock after the last published day, the build still says there is nothing to publish', () => {
  const r = run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: '2025-11-03T12:00:00Z' } });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/Nothing to publish/);
  const status = runJson(dir, ['status'], { env: { TIMESEAL_NOW: '2025-11-03T12:00:00Z' } });
  expect(status.json).toMatchObject({ clock_behind_archive: false });
});
