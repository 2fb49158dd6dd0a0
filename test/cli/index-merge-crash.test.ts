// Crash safety of the index merge (pipeline/build.ts; docs/FORMAT.md §6): two days of 60,000 hashes, built in one
// run. The second day's segment is merged with the first's at once (core/index-segments.ts mergeStart), so the
// build writes the merged segment file of 120,000 leaves (2,048 shards, 5.3 MB) directly, on the bundles' worker,
// before the commit point. The real CLI is killed with SIGKILL while that file is being written, and once right
// after days.json names the day but before the index head does (the next run then writes the day's own segment
// from its ledger and merges after publication); each rerun must leave exactly the bytes of an uninterrupted run,
// `timeseal verify` must pass, and a flipped byte in the index head or anywhere in a segment file (its fan-out
// table, its records) fails it, naming the file.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  flipByte,
  makeHashes,
  removeTempProjects,
  run,
  runJson,
  sleep,
  start,
  tempProject,
  treeDiff,
  treeDigest,
  writeHashFile,
} from './helpers.ts';

afterAll(removeTempProjects);

const BUILD_AT = { TIMESEAL_NOW: '2025-11-03T00:01:00.000Z' };
const PER_DAY = 60_000;
const MERGED = `index/0-${2 * PER_DAY}.idx`;
const DAY2 = `index/${PER_DAY}-${2 * PER_DAY}.idx`;

describe('an index merge killed with SIGKILL completes to the same archive', { timeout: 240_000 }, () => {
  let pristine: string;
  let reference: string;

  const copyPristine = (label: string): string => {
    const dir = tempProject(label);
    for (const sub of ['data', 'keys']) fs.cpSync(path.join(pristine, sub), path.join(dir, sub), { recursive: true });
    return dir;
  };

  beforeAll(() => {
    pristine = tempProject('merge-pristine');
    expect(run(pristine, ['keys', 'init']).code).toBe(0);
    for (const [day, at] of [
      ['a', '2025-11-01T12:00:00.000Z'],
      ['b', '2025-11-02T12:00:00.000Z'],
    ] as const) {
      const r = run(pristine, ['import', writeHashFile(pristine, `${day}.txt`, makeHashes(`merge-${day}`, PER_DAY))], {
        env: { TIMESEAL_NOW: at },
      });
      expect(r.code, r.stderr).toBe(0);
      fs.rmSync(path.join(pristine, `${day}.txt`));
    }
    reference = copyPristine('merge-reference');
    const built = runJson(reference, ['ledger', 'build'], { env: BUILD_AT });
    expect(built.result.code, built.result.stderr).toBe(0);
    expect(built.json.days.map((d: { segment: unknown }) => d.segment)).toEqual([
      { from: 0, to: PER_DAY },
      { from: 0, to: 2 * PER_DAY },
    ]);
    expect(built.json.index.merged).toEqual([]);
    expect(headOf(reference).segments).toEqual([{ from: 0, to: 2 * PER_DAY }]);
    // The day's own segment was never written, so nothing was left to remove.
    expect(fs.existsSync(path.join(reference, 'ledgers', DAY2))).toBe(false);
  });

  const headOf = (dir: string) =>
    JSON.parse(fs.readFileSync(path.join(dir, 'ledgers', 'index/segments.json'), 'utf8')) as {
      segments: { from: number; to: number }[];
    };
  const publishedDates = (dir: string): string[] =>
    JSON.parse(fs.readFileSync(path.join(dir, 'ledgers', 'days.json'), 'utf8')).days.map(
      (d: { date: string }) => d.date,
    );

  const rerunMatchesReference = (dir: string, context: string) => {
    const again = runJson(dir, ['ledger', 'build'], { env: BUILD_AT });
    expect(again.result.code, `${context}; rerun: ${again.result.stderr}`).toBe(0);
    expect(
      treeDiff(treeDigest(path.join(reference, 'ledgers')), treeDigest(path.join(dir, 'ledgers'))),
      context,
    ).toEqual([]);
    const verify = runJson(dir, ['verify']);
    expect(verify.result.code, verify.result.stdout).toBe(0);
    expect(verify.json).toMatchObject({ ok: true, treeSize: 2 * PER_DAY });
    return again.json;
  };

  test('killed while the merged segment is written before the commit point, then run again: the same bytes', async () => {
    let dir = '';
    let context = '';
    for (let attempt = 0; attempt < 6; attempt++) {
      dir = copyPristine('merge-victim');
      const victim = start(dir, ['ledger', 'build'], { env: BUILD_AT });
      let ended = false;
      void victim.exited.then(() => (ended = true));
      // Kill part-way through writing the merged segment: once days.json names the first day only, while a
      // worker thread's temp file (`<pid>-<thread>-<n>` in ledgers/.tmp, thread ≠ 0; the day's entry bundles are
      // 8 KB each) has grown to `target` bytes and is not yet renamed into place (earlier on each retry, when
      // the merge won the race).
      const ledgers = path.join(dir, 'ledgers');
      const target = Math.max(96 << 10, (3 << 20) >> attempt);
      const firstDayOnly = () => {
        try {
          return publishedDates(dir).join() === '2025-11-01';
        } catch {
          return false;
        }
      };
      const workerTemp = () => {
        const tmp = path.join(ledgers, '.tmp');
        if (!fs.existsSync(tmp)) return 0;
        let largest = 0;
        for (const name of fs.readdirSync(tmp)) {
          if (!/^\d+-[1-9]\d*-\d+$/.test(name)) continue;
          try {
            largest = Math.max(largest, fs.statSync(path.join(tmp, name)).size);
          } catch {
            // renamed meanwhile
          }
        }
        return largest;
      };
      while (!ended && !(firstDayOnly() && workerTemp() >= target)) await sleep(1);
      if (!ended) victim.child.kill('SIGKILL');
      const killed = await victim.exited;
      context = `killed with a worker's temp file of ${workerTemp()} bytes (target ${target}; signal ${killed.signal}; merged file present: ${fs.existsSync(path.join(ledgers, MERGED))})`;
      if (killed.signal === 'SIGKILL') break;
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(context, 'the merge always finished before the kill; nothing was tested').toMatch(/signal SIGKILL/);
    console.log(context);
    // Not published: days.json and the head are the first day's.
    expect(publishedDates(dir)).toEqual(['2025-11-01']);
    expect(headOf(dir).segments).toEqual([{ from: 0, to: PER_DAY }]);
    const again = rerunMatchesReference(dir, context);
    expect(again.days.map((d: { segment: unknown }) => d.segment)).toEqual([{ from: 0, to: 2 * PER_DAY }]);
  });

  test('killed after days.json names the day and before the head does: the rerun merges after publication', () => {
    const dir = copyPristine('merge-after-commit');
    const killed = run(dir, ['ledger', 'build'], {
      env: { ...BUILD_AT, TIMESEAL_TEST_KILL_AT: 'days.json@2025-11-02' },
    });
    expect(killed.signal).toBe('SIGKILL');
    expect(publishedDates(dir)).toEqual(['2025-11-01', '2025-11-02']);
    expect(headOf(dir).segments).toEqual([{ from: 0, to: PER_DAY }]);
    // The head does not name the merged file the killed run wrote; the next run writes the day's own segment from
    // its ledger, then merges, finding the merged file byte-identical.
    const again = runJson(dir, ['ledger', 'build'], { env: BUILD_AT });
    expect(again.result.code, again.result.stderr).toBe(0);
    expect(again.json.days).toEqual([]);
    expect(again.json.index.merged).toEqual([{ from: 0, to: 2 * PER_DAY }]);
    expect(headOf(dir).segments).toEqual([{ from: 0, to: 2 * PER_DAY }]);
    // The reference's bytes and one file more: the day's own segment, named by no head now (like the first day's,
    // in both), which the run after this one removes.
    expect(treeDiff(treeDigest(path.join(reference, 'ledgers')), treeDigest(path.join(dir, 'ledgers')))).toEqual([
      `extra: ${DAY2}`,
    ]);
    const verify = runJson(dir, ['verify']);
    expect(verify.result.code, verify.result.stdout).toBe(0);
    expect(verify.json).toMatchObject({ ok: true, treeSize: 2 * PER_DAY });
  });

  test('a flipped byte in the head or anywhere in a segment file fails verify, which names the file', () => {
    const ledgers = path.join(reference, 'ledgers');
    const size = fs.statSync(path.join(ledgers, MERGED)).size;
    expect(size).toBe(4 + 4 * 2049 + 44 * 2 * PER_DAY);
    // The magic, a fan-out entry, the first record, a record in the middle, the last byte.
    const picks: [string, number | undefined][] = [
      ['index/segments.json', undefined],
      [MERGED, 0],
      [MERGED, 4 + 4 * 1000 + 3],
      [MERGED, 4 + 4 * 2049],
      [MERGED, undefined],
      [MERGED, size - 1],
    ];
    for (const [rel, at] of picks) {
      const copy = path.join(tempProject('merge-flip'), 'ledgers');
      fs.cpSync(ledgers, copy, { recursive: true });
      flipByte(path.join(copy, rel), at);
      const { result, json } = runJson(reference, ['verify', '--archive', copy]);
      expect(result.code, `${rel} @ ${at}`).toBe(1);
      expect(
        json.problems.some((p: string) => p.startsWith(`${rel}:`)),
        `${rel}: ${JSON.stringify(json.problems)}`,
      ).toBe(true);
      fs.rmSync(path.dirname(copy), { recursive: true, force: true });
    }
  });
});
