// Upgrading an archive made by an earlier release in place — test/fixtures/archive-r1 (sharded index/<p>/<prefix>
// files and index-sha256.json) and test/fixtures/archive-r2 (segments as folders of shard files, head format
// timeseal-index/2): the first `timeseal ledger build` of this release changes no published daily file or
// tile, builds the index of segment files from the ledgers, removes the old index only once the new head is on
// disk, and the archive then verifies, answers lookups and keeps growing.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, test } from 'vitest';
import { fixtureProject, removeTempProjects, run, runJson, treeDigest } from './helpers.ts';

afterAll(removeTempProjects);

const RELEASES = [
  { fixture: 'archive-r1', oldIndex: ['index/2', 'index-sha256.json'] },
  { fixture: 'archive-r2', oldIndex: ['index/0-503', 'index/503-504'] },
];
const AFTER = { TIMESEAL_NOW: '2025-11-07T00:01:00.000Z' };
const ONES = '1'.repeat(64);

/** Every published file but the index and the anchoring status files (rewritten by every build): days, signatures, checkpoints, tiles. */
function publishedFiles(ledgers: string): Map<string, string> {
  const all = treeDigest(ledgers);
  for (const key of [...all.keys()])
    if (
      key.startsWith('index/') ||
      key === 'index-sha256.json' ||
      key === 'ots_status.json' ||
      key === 'block_info.json' ||
      key.startsWith('block-info/')
    )
      all.delete(key);
  return all;
}

describe.each(RELEASES)('an archive of an earlier release upgrades in place ($fixture)', ({ fixture, oldIndex }) => {
  const FIXTURE = path.resolve(import.meta.dirname, '../fixtures', fixture);
  let dir: string;
  let shared: string;
  beforeEach(() => {
    dir = fixtureProject(FIXTURE);
    // A hash published on two days (the first three of day one were sent again on day two).
    const day1 = JSON.parse(fs.readFileSync(path.join(dir, 'ledgers/2025-11-02.json'), 'utf8')) as {
      entries: [string, string][];
    };
    const day2 = JSON.parse(fs.readFileSync(path.join(dir, 'ledgers/2025-11-03.json'), 'utf8')) as {
      entries: [string, string][];
    };
    const second = new Set(day2.entries.map((e) => e[0]));
    shared = day1.entries.map((e) => e[0]).find((h) => second.has(h)) ?? '';
  });

  test('the fixture is the old layout', () => {
    for (const old of oldIndex) expect(fs.existsSync(path.join(dir, 'ledgers', old)), old).toBe(true);
    const head = path.join(dir, 'ledgers/index/segments.json');
    if (fixture === 'archive-r1') expect(fs.existsSync(head)).toBe(false);
    else
      expect(JSON.parse(fs.readFileSync(head, 'utf8'))).toMatchObject({ format: 'timeseal-index/2', tree_size: 504 });
    expect(shared).toMatch(/^[0-9a-f]{64}$/);
  });

  test('the first build changes no published file, builds the new index, removes the old one, and verifies', () => {
    const ledgers = path.join(dir, 'ledgers');
    const before = publishedFiles(ledgers);
    const built = runJson(dir, ['ledger', 'build'], { env: AFTER });
    expect(built.result.code, built.result.stderr).toBe(0);
    expect(built.json.days).toEqual([]);
    expect(publishedFiles(ledgers)).toEqual(before);
    for (const old of oldIndex) expect(fs.existsSync(path.join(ledgers, old)), old).toBe(false);
    expect(JSON.parse(fs.readFileSync(path.join(ledgers, 'index/segments.json'), 'utf8'))).toMatchObject({
      format: 'timeseal-index/3',
      tree_size: 504,
    });
    expect(fs.readdirSync(path.join(ledgers, 'index')).sort()).toEqual([
      '0-300.idx',
      '300-503.idx',
      '503-504.idx',
      'segments.json',
    ]);
    const verify = runJson(dir, ['verify']);
    expect(verify.result.code, verify.result.stdout).toBe(0);
    expect(verify.json).toMatchObject({ ok: true, days: 3, treeSize: 504 });
    // Lookups: a hash on two days gives its first, the last day's hash its own.
    expect(runJson(dir, ['proof', shared]).json).toMatchObject({ date: '2025-11-02', hash: shared });
    expect(runJson(dir, ['proof', ONES]).json).toMatchObject({ date: '2025-11-05', leaf_index: 503 });
    // And the archive keeps growing.
    const added = run(dir, ['import', '-'], {
      env: { TIMESEAL_NOW: '2025-11-07T10:00:00.000Z' },
      input: `${'2'.repeat(64)}\n${shared}\n`,
    });
    expect(added.code, added.stderr).toBe(0);
    expect(run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: '2025-11-08T00:01:00.000Z' } }).code).toBe(0);
    expect(runJson(dir, ['verify']).json).toMatchObject({ ok: true, days: 4, treeSize: 506 });
    expect(publishedFiles(ledgers).get('2025-11-05.json')).toBe(before.get('2025-11-05.json'));
  });

  test('a crash before the old index was removed, or before the head was written, is completed by the next run', () => {
    const ledgers = path.join(dir, 'ledgers');
    // Killed after segments were written but before the head: segment folders with no head, old index still there.
    expect(run(dir, ['ledger', 'build'], { env: AFTER }).code).toBe(0);
    const upgraded = treeDigest(ledgers);
    const crashed = fixtureProject(FIXTURE);
    fs.mkdirSync(path.join(crashed, 'ledgers/index'), { recursive: true });
    for (const name of fs.readdirSync(path.join(ledgers, 'index'))) {
      if (/^\d+-\d+\.idx$/.test(name))
        fs.copyFileSync(path.join(ledgers, 'index', name), path.join(crashed, 'ledgers/index', name));
    }
    expect(run(crashed, ['ledger', 'build'], { env: AFTER }).code).toBe(0);
    expect(treeDigest(path.join(crashed, 'ledgers'))).toEqual(upgraded);
    // Killed after the head, before the old index was removed.
    const late = fixtureProject(FIXTURE);
    fs.rmSync(path.join(late, 'ledgers'), { recursive: true });
    fs.cpSync(ledgers, path.join(late, 'ledgers'), { recursive: true });
    for (const old of oldIndex)
      fs.cpSync(path.join(FIXTURE, 'ledgers', old), path.join(late, 'ledgers', old), { recursive: true });
    expect(run(late, ['ledger', 'build'], { env: AFTER }).code).toBe(0);
    expect(treeDigest(path.join(late, 'ledgers'))).toEqual(upgraded);
    expect(runJson(late, ['verify']).json).toMatchObject({ ok: true });
  });
});
