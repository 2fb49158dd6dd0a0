// Crash safety of the index merge (pipeline/build.ts upkeepIndex; docs/FORMAT.md §6): two days of 60,000
// hashes are published and then merged into one segment of 120,000 leaves (2,048 shards). The real CLI is
// killed with SIGKILL while the merged segment is being written; a rerun must finish the merge and leave
// exactly the bytes of an uninterrupted run, `timeseal verify` must pass, and a flipped byte in the index head
// or in any shard fails it, naming the file.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { flipByte, makeHashes, removeTempProjects, run, runJson, sleep, start, tempProject, treeDiff, treeDigest, writeHashFile } from './helpers.ts';

afterAll(removeTempProjects);

const BUILD_AT = { TIMESEAL_NOW: '2025-11-03T00:01:00.000Z' };
const PER_DAY = 60_000;
const MERGED = `index/0-${2 * PER_DAY}`;

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
    for (const [day, at] of [['a', '2025-11-01T12:00:00.000Z'], ['b', '2025-11-02T12:00:00.000Z']] as const) {
      const r = run(pristine, ['import', writeHashFile(pristine, `${day}.txt`, makeHashes(`merge-${day}`, PER_DAY))], { env: { TIMESEAL_NOW: at } });
      expect(r.code, r.stderr).toBe(0);
      fs.rmSync(path.join(pristine, `${day}.txt`));
    }
    reference = copyPristine('merge-reference');
    const built = runJson(reference, ['ledger', 'build'], { env: BUILD_AT });
    expect(built.result.code, built.result.stderr).toBe(0);
    expect(built.json.index.merged).toEqual([{ from: 0, to: 2 * PER_DAY }]);
  });

  test('killed while the merged segment is written, then run again: the same bytes, and verify passes', async () => {
    let dir = '';
    let context = '';
    for (let attempt = 0; attempt < 6; attempt++) {
      dir = copyPristine('merge-victim');
      const victim = start(dir, ['ledger', 'build'], { env: BUILD_AT });
      let ended = false;
      void victim.exited.then(() => (ended = true));
      const merged = path.join(dir, 'ledgers', MERGED);
      // Kill part-way through the segment's 2,048 shards (earlier on each retry, when the merge won the race).
      const target = Math.max(1, 600 >> attempt);
      const written = () => (fs.existsSync(merged) ? fs.readdirSync(merged, { recursive: true }).length : 0);
      while (!ended && written() < target) await sleep(1);
      if (!ended) victim.child.kill('SIGKILL');
      const killed = await victim.exited;
      context = `killed after ${target} entries of the merged segment (signal ${killed.signal}; ${written()} entries on disk)`;
      if (killed.signal === 'SIGKILL') break;
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(context, 'the merge always finished before the kill; nothing was tested').toMatch(/signal SIGKILL/);
    console.log(context);
    const head = fs.readFileSync(path.join(dir, 'ledgers', 'index/segments.json'), 'utf8');
    expect(head, 'the head named the merged segment before it was complete').not.toContain(`"to":${2 * PER_DAY}},`);
    const again = runJson(dir, ['ledger', 'build'], { env: BUILD_AT });
    expect(again.result.code, `${context}; rerun: ${again.result.stderr}`).toBe(0);
    expect(again.json.index.merged, context).toEqual([{ from: 0, to: 2 * PER_DAY }]);
    expect(treeDiff(treeDigest(path.join(reference, 'ledgers')), treeDigest(path.join(dir, 'ledgers'))), context).toEqual([]);
    const verify = runJson(dir, ['verify']);
    expect(verify.result.code, verify.result.stdout).toBe(0);
    expect(verify.json).toMatchObject({ ok: true, treeSize: 2 * PER_DAY });
  });

  test('a flipped byte in the head or in any shard of the index fails verify, which names the file', () => {
    const ledgers = path.join(reference, 'ledgers');
    const shards = (fs.readdirSync(path.join(ledgers, MERGED), { recursive: true }) as string[])
      .map((n) => `${MERGED}/${n}`)
      .filter((rel) => fs.statSync(path.join(ledgers, rel)).isFile() && fs.statSync(path.join(ledgers, rel)).size > 4);
    expect(shards.length).toBeGreaterThan(2000);
    const picks = ['index/segments.json', shards[0]!, shards[Math.floor(shards.length / 2)]!, shards.at(-1)!];
    for (const rel of picks) {
      const copy = path.join(tempProject('merge-flip'), 'ledgers');
      fs.cpSync(ledgers, copy, { recursive: true });
      flipByte(path.join(copy, rel));
      const { result, json } = runJson(reference, ['verify', '--archive', copy]);
      expect(result.code, rel).toBe(1);
      expect(json.problems.some((p: string) => p.startsWith(`${rel}:`)), `${rel}: ${JSON.stringify(json.problems)}`).toBe(true);
      fs.rmSync(path.dirname(copy), { recursive: true, force: true });
    }
  });
});
