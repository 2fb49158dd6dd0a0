// Crash safety of `timeseal ledger build` (pipeline/build.ts's write order): a build killed with SIGKILL at
// an early, a middle and a late moment must leave an archive that verifies as it is and, run again to
// completion, one that verifies and is byte-identical to one built without interruption from the same database
// and keys. Also: a second concurrent build is refused with a clear message and does not disturb the running one.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
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
import { until } from '../support/until.ts';

afterAll(removeTempProjects);

const BUILD_AT = { TIMESEAL_NOW: '2025-11-03T00:01:00.000Z' };
// Above 65,536 entries (256²): the tree has a level-2 tile, so kills land among tiles of every level.
const BIG = 70_000;

describe('a ledger build killed at any moment completes to the same archive', { timeout: 240_000 }, () => {
  let pristine: string; // data/ and keys/ after import, before any build
  let reference: string;
  let referenceDigest: Map<string, string>;
  let buildMs: number;
  let concurrent: { code: number | null; stderr: string; firstStillRunning: boolean };

  const copyPristine = (label: string): string => {
    const dir = tempProject(label);
    for (const sub of ['data', 'keys']) fs.cpSync(path.join(pristine, sub), path.join(dir, sub), { recursive: true });
    return dir;
  };

  beforeAll(async () => {
    pristine = tempProject('crash-pristine');
    expect(run(pristine, ['keys', 'init']).code).toBe(0);
    const big = Array.from({ length: BIG }, (_, i) => crypto.createHash('sha256').update(`crash-${i}`).digest('hex'));
    const r1 = run(pristine, ['import', writeHashFile(pristine, 'big.txt', big)], {
      env: { TIMESEAL_NOW: '2025-11-01T12:00:00.000Z' },
    });
    expect(r1.code, r1.stderr).toBe(0);
    // A second, small day, so that a kill can also land after the first day is committed.
    const r2 = run(pristine, ['import', '-'], {
      env: { TIMESEAL_NOW: '2025-11-02T12:00:00.000Z' },
      input: `${makeHashes('crash-day2', 1000).join('\n')}\n`,
    });
    expect(r2.code, r2.stderr).toBe(0);
    fs.rmSync(path.join(pristine, 'big.txt'));

    // The reference build, uninterrupted; while it runs, a second build in the same project must be refused.
    reference = copyPristine('crash-reference');
    const t0 = Date.now();
    const first = start(reference, ['ledger', 'build'], { env: BUILD_AT });
    let done = false;
    void first.exited.then(() => (done = true));
    await until(
      'the first build to write tile/ or end',
      60_000,
      () => done || fs.existsSync(path.join(reference, 'ledgers', 'tile')),
    );
    // The first build is stopped (SIGSTOP) while the second runs, so that it still holds the lock however long
    // the second takes to start; /proc says it was stopped, not ended, the whole time.
    first.child.kill('SIGSTOP');
    const state = () => /^\d+ \(.*\) (\S)/.exec(fs.readFileSync(`/proc/${first.child.pid}/stat`, 'utf8'))?.[1];
    await until('the first build to stop or end', 30_000, () => done || state() === 'T' || state() === 'Z', 5);
    const stoppedBefore = state() === 'T';
    const second = run(reference, ['ledger', 'build'], { env: BUILD_AT });
    concurrent = { code: second.code, stderr: second.stderr, firstStillRunning: stoppedBefore && state() === 'T' };
    first.child.kill('SIGCONT');
    const result = await first.exited;
    buildMs = Date.now() - t0;
    expect(result.code, result.stderr).toBe(0);
    referenceDigest = treeDigest(path.join(reference, 'ledgers'));
  });

  test('the uninterrupted reference archive verifies', () => {
    const { result, json } = runJson(reference, ['verify']);
    expect(result.code, result.stdout).toBe(0);
    expect(json).toMatchObject({ ok: true, days: 2, treeSize: BIG + 1000 });
  });

  test('a second ledger build while one runs fails with "another timeseal run" (exit 75, try again) and changes nothing', () => {
    expect(
      concurrent.firstStillRunning,
      'the first build ended before the second started; the test proved nothing',
    ).toBe(true);
    expect(concurrent.code, 'temporary (core/exit-codes.ts): try again when it ends').toBe(75);
    expect(concurrent.stderr).toMatch(/another timeseal run/);
    expect(concurrent.stderr).not.toContain('    at ');
  });

  /** Starts a build, kills it when `killWhen` says, and retries (a bit earlier) if it ended first. */
  async function killBuild(
    label: string,
    killWhen: (attempt: number, dir: string) => Promise<string>,
  ): Promise<{ dir: string; context: string }> {
    let dir = '';
    let context = '';
    for (let attempt = 0; attempt < 4; attempt++) {
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
      dir = copyPristine(`crash-${label}`);
      const victim = start(dir, ['ledger', 'build'], { env: BUILD_AT });
      let ended = false;
      void victim.exited.then(() => (ended = true));
      const when = await killWhen(attempt, dir);
      if (!ended) victim.child.kill('SIGKILL');
      const killed = await victim.exited;
      const left = treeDigest(path.join(dir, 'ledgers')).size;
      context = `${label}: killed ${when} of a ${buildMs} ms build (exit ${killed.code}, signal ${killed.signal}, ${left} files left)`;
      console.log(context);
      if (killed.signal === 'SIGKILL') return { dir, context };
    }
    throw new Error(`the build always finished before the kill; nothing was tested: ${context}`);
  }

  function expectRecovers(dir: string, context: string): void {
    // As left by the kill, before anything completes it, the archive verifies (docs/FORMAT.md §10).
    const left = run(dir, ['verify']);
    expect(left.code, `${context}; verify as left: ${left.stdout}${left.stderr}`).toBe(0);
    const again = run(dir, ['ledger', 'build'], { env: BUILD_AT });
    expect(again.code, `${context}; rerun: ${again.stderr}`).toBe(0);
    const verify = run(dir, ['verify']);
    expect(verify.code, `${context}; verify: ${verify.stdout}${verify.stderr}`).toBe(0);
    expect(treeDiff(referenceDigest, treeDigest(path.join(dir, 'ledgers'))), context).toEqual([]);
    const status = runJson(dir, ['status'], { env: BUILD_AT });
    expect(status.json).toMatchObject({ queue_size: 0, last_published_day: '2025-11-02', tree_size: BIG + 1000 });
  }

  const moments: Array<[string, number, number]> = [
    ['early', 0, 0.15],
    ['middle', 0.4, 0.6],
    ['late', 0.75, 0.9],
  ];
  test.each(moments)(
    'killed %s, then built again: verifies and equals the reference byte for byte',
    async (name, from, to) => {
      const first = Math.max(50, Math.round(buildMs * (from + Math.random() * (to - from))));
      const { dir, context } = await killBuild(name, async (attempt) => {
        // Durations vary with the machine's load: when the build ended before the kill, the next try is earlier.
        const delay = Math.max(50, Math.round(first * 0.7 ** attempt));
        await sleep(delay);
        return `after ${delay} ms`;
      });
      expectRecovers(dir, context);
    },
  );

  test('killed while the first tiles are being written, then built again: same archive', async () => {
    const { dir, context } = await killBuild('writing', async (_attempt, dir) => {
      await until('tile/ to appear', 60_000, () => fs.existsSync(path.join(dir, 'ledgers', 'tile')), 5);
      const extra = Math.round(Math.random() * 300);
      await sleep(extra);
      return `${extra} ms after tile/ appeared`;
    });
    expectRecovers(dir, context);
  });
});
