// Upgrading an archive made by the previous release (test/fixtures/archive-r1: sharded index/<p>/<prefix>
// files and index-sha256.json) in place: the first `timeseal ledger build` of this release changes no
// published daily file or tile, builds the segment index from the ledgers, removes the old index only once the
// new head is on disk, and the archive then verifies, answers lookups and keeps growing.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, test } from 'vitest';
import { removeTempProjects, run, runJson, tempProject, treeDigest } from './helpers.ts';

afterAll(removeTempProjects);

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/archive-r1');
const AFTER = { TIMESEAL_NOW: '2025-11-07T00:01:00.000Z' };
const ONES = '1'.repeat(64);

/** A project holding a copy of the fixture: its archive, public keys and (test) signing keys. */
function fixtureProject(): string {
  const dir = tempProject('upgrade');
  fs.cpSync(path.join(FIXTURE, 'ledgers'), path.join(dir, 'ledgers'), { recursive: true });
  fs.cpSync(path.join(FIXTURE, 'keys'), path.join(dir, 'keys'), { recursive: true });
  const privateKeys = path.join(dir, 'data/private-keys');
  fs.mkdirSync(privateKeys, { recursive: true });
  fs.copyFileSync(path.join(FIXTURE, 'signing/ecdsa.pkcs8.pem'), path.join(privateKeys, 'ecdsa_private.pem'));
  fs.copyFileSync(path.join(FIXTURE, 'signing/mldsa.pkcs8.pem'), path.join(privateKeys, 'dilithium_private.pem'));
  for (const f of fs.readdirSync(privateKeys)) fs.chmodSync(path.join(privateKeys, f), 0o600);
  return dir;
}

/** Every published file but the index: days, signatures, checkpoints, tiles, status. */
function publishedFiles(ledgers: string): Map<string, string> {
  const all = treeDigest(ledgers);
  for (const key of [...all.keys()]) if (key.startsWith('index/') || key === 'index-sha256.json' || key === 'ots_status.json' || key === 'block_info.json') all.delete(key);
  return all;
}

describe('an archive of the previous release upgrades in place', () => {
  let dir: string;
  let shared: string;
  beforeEach(() => {
    dir = fixtureProject();
    // A hash published on two days (the first three of day one were sent again on day two).
    const day1 = JSON.parse(fs.readFileSync(path.join(dir, 'ledgers/2025-11-02.json'), 'utf8')) as { entries: [string, string][] };
    const day2 = JSON.parse(fs.readFileSync(path.join(dir, 'ledgers/2025-11-03.json'), 'utf8')) as { entries: [string, string][] };
    const second = new Set(day2.entries.map((e) => e[0]));
    shared = day1.entries.map((e) => e[0]).find((h) => second.has(h)) ?? '';
  });

  test('the fixture is the old layout', () => {
    expect(fs.existsSync(path.join(dir, 'ledgers/index/2'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'ledgers/index-sha256.json'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'ledgers/index/segments.json'))).toBe(false);
    expect(shared).toMatch(/^[0-9a-f]{64}$/);
  });

  test('the first build changes no published file, builds the new index, removes the old one, and verifies', () => {
    const ledgers = path.join(dir, 'ledgers');
    const before = publishedFiles(ledgers);
    const built = runJson(dir, ['ledger', 'build'], { env: AFTER });
    expect(built.result.code, built.result.stderr).toBe(0);
    expect(built.json.days).toEqual([]);
    expect(publishedFiles(ledgers)).toEqual(before);
    expect(fs.existsSync(path.join(ledgers, 'index/2'))).toBe(false);
    expect(fs.existsSync(path.join(ledgers, 'index-sha256.json'))).toBe(false);
    expect(JSON.parse(fs.readFileSync(path.join(ledgers, 'index/segments.json'), 'utf8'))).toMatchObject({ format: 'timeseal-index/2', tree_size: 504 });
    const verify = runJson(dir, ['verify']);
    expect(verify.result.code, verify.result.stdout).toBe(0);
    expect(verify.json).toMatchObject({ ok: true, days: 3, treeSize: 504 });
    // Lookups: a hash on two days gives its first, the last day's hash its own.
    expect(runJson(dir, ['proof', shared]).json).toMatchObject({ date: '2025-11-02', hash: shared });
    expect(runJson(dir, ['proof', ONES]).json).toMatchObject({ date: '2025-11-05', leaf_index: 503 });
    // And the archive keeps growing.
    const added = run(dir, ['import', '-'], { env: { TIMESEAL_NOW: '2025-11-07T10:00:00.000Z' }, input: `${'2'.repeat(64)}\n${shared}\n` });
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
    const crashed = fixtureProject();
    for (const name of fs.readdirSync(path.join(ledgers, 'index'))) {
      if (/^\d+-\d+$/.test(name)) fs.cpSync(path.join(ledgers, 'index', name), path.join(crashed, 'ledgers/index', name), { recursive: true });
    }
    expect(run(crashed, ['ledger', 'build'], { env: AFTER }).code).toBe(0);
    expect(treeDigest(path.join(crashed, 'ledgers'))).toEqual(upgraded);
    // Killed after the head, before the old index was removed.
    const late = fixtureProject();
    fs.cpSync(ledgers, path.join(late, 'ledgers'), { recursive: true, force: true });
    fs.cpSync(path.join(FIXTURE, 'ledgers/index/2'), path.join(late, 'ledgers/index/2'), { recursive: true });
    fs.copyFileSync(path.join(FIXTURE, 'ledgers/index-sha256.json'), path.join(late, 'ledgers/index-sha256.json'));
    expect(run(late, ['ledger', 'build'], { env: AFTER }).code).toBe(0);
    expect(treeDigest(path.join(late, 'ledgers'))).toEqual(upgraded);
    expect(runJson(late, ['verify']).json).toMatchObject({ ok: true });
  });
});
