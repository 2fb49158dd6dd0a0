// `timeseal ledger build` of a day larger than TIMESEAL_BUILD_MEMORY_MB sorts it by an external merge (runs
// spilled to the archive's .tmp/, then merged): the archive it writes is byte for byte the one the in-memory
// sort writes for the same rows (sorted in place in the columns the day was read into). Two projects get the
// same imports (a first day of 30,000 hashes, then 5,000 of them again at an earlier time of the day beside 7,000
// new ones; a second day of 30,000 that starts in the first day's partial tile and bundle); one builds with
// TIMESEAL_BUILD_MEMORY_MB=1 (26,214 rows of budget: the day's ids read in two halves on two threads, each in
// runs within half of it, 10,500 rows a run on day 1: four runs, the repeats in a later run than their first
// rows; batches of 1,638 entries that cross every tile boundary), the other with the default (in memory); every
// file of both archives is compared. So are those of a day made for the in-place sort's hard cases: one hash
// many times at different times in both halves of the ids, and 12,000 hashes that share their first 30 bytes. A
// build killed (SIGKILL) right after its sort, its spill files in .tmp/, leaves the archive as it was, and the
// rerun finishes.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import {
  makeHashes,
  removeTempProjects,
  run,
  runJson,
  tempProject,
  treeDiff,
  treeDigest,
  writeHashFile,
} from './helpers.ts';

afterAll(removeTempProjects);

function importAt(dir: string, hashes: string[], at: string): void {
  const file = writeHashFile(dir, 'hashes.txt', hashes);
  const r = run(dir, ['import', file], { env: { TIMESEAL_NOW: at } });
  expect(r.code, r.stderr).toBe(0);
}

function build(dir: string, at: string, memoryMb?: string): { spilledRuns: number; entryCount: number } {
  const env: Record<string, string> = { TIMESEAL_NOW: at };
  if (memoryMb !== undefined) env.TIMESEAL_BUILD_MEMORY_MB = memoryMb;
  const { result, json } = runJson(dir, ['ledger', 'build'], { env });
  expect(result.code, result.stderr).toBe(0);
  expect(json.days).toHaveLength(1);
  return json.days[0];
}

test('an external merge forced by a 1 MB budget writes the same archive as the in-memory sort', () => {
  const first = makeHashes('external-sort-day1', 30_000);
  const again = [...first.slice(1_000, 6_000), ...makeHashes('external-sort-day1-late', 7_000)];
  const second = makeHashes('external-sort-day2', 30_000);
  const external = tempProject('external-sort');
  expect(run(external, ['keys', 'init']).code).toBe(0);
  importAt(external, first, '2025-11-01T12:00:00.000Z');
  importAt(external, again, '2025-11-01T06:30:00.250Z');
  const inMemory = tempProject('in-memory-sort');
  fs.cpSync(external, inMemory, { recursive: true });

  const day1 = build(external, '2025-11-02T00:01:00.000Z', '1');
  expect(day1).toMatchObject({ entryCount: 37_000, spilledRuns: 4 }); // 42,000 rows: 2 runs a half
  expect(build(inMemory, '2025-11-02T00:01:00.000Z')).toMatchObject({ entryCount: 37_000, spilledRuns: 0 });
  for (const dir of [external, inMemory]) importAt(dir, second, '2025-11-02T18:00:00.000Z');
  expect(build(external, '2025-11-03T00:01:00.000Z', '1').spilledRuns).toBe(4); // 30,000 rows: 2 a half
  expect(build(inMemory, '2025-11-03T00:01:00.000Z').spilledRuns).toBe(0);

  const ledgers = (dir: string) => treeDigest(path.join(dir, 'ledgers'));
  expect(treeDiff(ledgers(inMemory), ledgers(external))).toEqual([]);
  expect(ledgers(external).size).toBeGreaterThan(300);
  // The spill files are gone; a repeated hash keeps its earliest time, whichever run it came in.
  expect(fs.readdirSync(path.join(external, 'ledgers/.tmp'))).toEqual([]);
  const ledger = fs.readFileSync(path.join(external, 'ledgers/2025-11-01.json'), 'utf8');
  expect(ledger).toContain(`["${first[1_000]}","2025-11-01T06:30:00.250Z"]`);
  expect(ledger).toContain(`["${first[0]}","2025-11-01T12:00:00.000Z"]`);
});

test('a build killed with its spill files on disk leaves the archive as it was; the rerun removes them and finishes', () => {
  const dir = tempProject('external-sort-kill');
  expect(run(dir, ['keys', 'init']).code).toBe(0);
  importAt(dir, makeHashes('external-sort-kill', 30_000), '2025-11-01T12:00:00.000Z');
  const reference = tempProject('external-sort-kill-reference');
  fs.cpSync(dir, reference, { recursive: true });
  const before = treeDigest(path.join(dir, 'ledgers'));
  const env = { TIMESEAL_NOW: '2025-11-02T00:01:00.000Z', TIMESEAL_BUILD_MEMORY_MB: '1' };
  const killed = run(dir, ['ledger', 'build'], { env: { ...env, TIMESEAL_TEST_KILL_AT: 'sorted' } });
  expect(killed.signal, killed.stderr).toBe('SIGKILL');
  const spilled = fs.readdirSync(path.join(dir, 'ledgers/.tmp'));
  expect(spilled.length).toBeGreaterThanOrEqual(2); // the merged hashes and times
  const left = treeDigest(path.join(dir, 'ledgers'));
  for (const name of spilled) left.delete(`.tmp/${name}`);
  expect(treeDiff(before, left)).toEqual([]);
  expect(build(dir, env.TIMESEAL_NOW, '1').spilledRuns).toBe(4);
  expect(fs.readdirSync(path.join(dir, 'ledgers/.tmp'))).toEqual([]);
  build(reference, env.TIMESEAL_NOW);
  expect(treeDiff(treeDigest(path.join(reference, 'ledgers')), treeDigest(path.join(dir, 'ledgers')))).toEqual([]);
});

test('a day of one hash many times over both halves and of hashes sharing 30 bytes: the same archive either way', () => {
  const again = makeHashes('in-place-again', 1)[0]!;
  const prefix = makeHashes('in-place-prefix', 1)[0]!.slice(0, 60);
  const crowded = Array.from({ length: 12_000 }, (_, i) => prefix + (i * 5).toString(16).padStart(4, '0'));
  const external = tempProject('in-place-hard');
  expect(run(external, ['keys', 'init']).code).toBe(0);
  // 4 imports of 7,500 rows in id order, 500 of them the same hash: the earliest of its times is in the third.
  const times = [
    '2025-11-01T12:00:00.000Z',
    '2025-11-01T18:00:00.000Z',
    '2025-11-01T03:00:00.001Z',
    '2025-11-01T09:00:00.000Z',
  ];
  times.forEach((at, k) => {
    const rows = [...crowded.slice(3_000 * k, 3_000 * k + 3_000), ...makeHashes(`in-place-${k}`, 4_000)];
    for (let r = 0; r < 500; r++) rows.splice(15 * r, 0, again);
    importAt(external, rows, at);
  });
  const inMemory = tempProject('in-place-hard-memory');
  fs.cpSync(external, inMemory, { recursive: true });
  expect(build(external, '2025-11-02T00:01:00.000Z', '1')).toMatchObject({ entryCount: 28_001, spilledRuns: 4 });
  expect(build(inMemory, '2025-11-02T00:01:00.000Z')).toMatchObject({ entryCount: 28_001, spilledRuns: 0 });
  const ledgers = (dir: string) => treeDigest(path.join(dir, 'ledgers'));
  expect(treeDiff(ledgers(inMemory), ledgers(external))).toEqual([]);
  const ledger = fs.readFileSync(path.join(inMemory, 'ledgers/2025-11-01.json'), 'utf8');
  expect(ledger).toContain(`["${again}","2025-11-01T03:00:00.001Z"]`);
  expect(ledger).toContain(`["${crowded[11_999]}","2025-11-01T09:00:00.000Z"]`);
});

test('TIMESEAL_BUILD_MEMORY_MB that is not a whole number of megabytes is refused, naming it', () => {
  const dir = tempProject('external-sort-bad');
  for (const value of ['0', '1.5', 'lots']) {
    const r = run(dir, ['ledger', 'build'], { env: { TIMESEAL_BUILD_MEMORY_MB: value } });
    expect(r.code).toBe(64);
    expect(r.stderr).toContain(
      `TIMESEAL_BUILD_MEMORY_MB must be a whole number of megabytes, from 1 to 1048576, got "${value}"`,
    );
  }
});
