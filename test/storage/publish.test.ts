// The archive writer publishing to S3 (pipeline/storage/publish.ts, cli/archive-publish.ts), against a real Ceph
// RADOS Gateway (test/support/ceph-rgw.ts, started once for this file): `timeseal ledger build` with
// TIMESEAL_ARCHIVE=s3://… builds in its working copy and publishes it. The same submissions built day after day
// into a folder and into RGW give the same objects, byte for byte; a build killed with SIGKILL while it uploads
// leaves the published archive as it was, and the rerun finishes it; one killed between days.json and the latest
// checkpoint is finished by a writer on another (empty) working copy. `timeseal verify` over HTTP passes on the
// bucket after each.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DAYS_PATH } from '../../core/archive.ts';
import type { ArchiveStore } from '../../pipeline/storage/archive-store.ts';
import { openArchiveStore } from '../../pipeline/storage/open.ts';
import {
  makeHashes,
  removeTempProjects,
  run,
  runJson,
  sha256Hex,
  sleep,
  start,
  tempProject,
  treeDigest,
  writeHashFile,
} from '../cli/helpers.ts';
import { cephForSuite, publicArchiveUrl } from '../support/ceph-rgw.ts';

/** rel -> SHA-256 of every object of the store, in the order listed. */
async function storeDigest(store: ArchiveStore): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const rel of await store.list('')) out.set(rel, sha256Hex((await store.read(rel))!));
  return out;
}

/** rel -> SHA-256 of every archive file of a folder (names starting with a dot are locks and temp files). */
function folderDigest(dir: string): Map<string, string> {
  return new Map([...treeDigest(dir)].filter(([rel]) => !rel.split('/').some((name) => name.startsWith('.'))));
}

const day = (n: number): string => `2025-11-${String(n).padStart(2, '0')}`;

describe('the archive writer publishing to a Ceph RADOS Gateway', () => {
  const ceph = cephForSuite();
  afterAll(() => removeTempProjects());

  const publicUrl = (prefix: string): Promise<string> => publicArchiveUrl(ceph.current, prefix);
  const verify = (dir: string, url: string) =>
    runJson(dir, ['verify', '--archive', url, '--keys', path.join(dir, 'keys')]);

  /** A project with the keys of `keysFrom` (or new ones), its archive at s3://bucket/<prefix>. */
  const project = (label: string, keysFrom?: string): string => {
    const dir = tempProject(label);
    if (keysFrom === undefined) expect(run(dir, ['keys', 'init']).code).toBe(0);
    else
      for (const sub of ['keys', 'data/private-keys'])
        fs.cpSync(path.join(keysFrom, sub), path.join(dir, sub), { recursive: true });
    return dir;
  };
  const s3Env = (prefix: string, extra: Record<string, string> = {}): Record<string, string> => ({
    ...ceph.current.env,
    TIMESEAL_ARCHIVE: `s3://${ceph.current.bucket}/${prefix}`,
    ...extra,
  });
  const importDay = (dir: string, n: number, hashes: string[], env: Record<string, string> = {}): void => {
    const imported = run(dir, ['import', writeHashFile(dir, `day-${n}.txt`, hashes)], {
      env: { ...env, TIMESEAL_NOW: `${day(n)}T12:00:00Z` },
    });
    expect(imported.code, imported.stderr).toBe(0);
  };

  it(
    'the same submissions built day after day into a folder and into RGW give the same objects, byte for byte',
    { timeout: 120_000 },
    async () => {
      const folder = project('publish-folder');
      const bucket = project('publish-s3', folder);
      const env = s3Env('same/ledgers');
      const store = await openArchiveStore(env.TIMESEAL_ARCHIVE!, ceph.current.env);
      const sizes = [130, 1, 300];
      let from = 0;
      for (const [i, count] of sizes.entries()) {
        const hashes = makeHashes('same', count, from);
        from += count;
        importDay(folder, i + 1, hashes);
        importDay(bucket, i + 1, hashes, env);
        const now = { TIMESEAL_NOW: `${day(i + 2)}T00:01:00Z` };
        const built = runJson(folder, ['ledger', 'build'], { env: now });
        expect(built.result.code, built.result.stderr).toBe(0);
        const published = runJson(bucket, ['ledger', 'build'], { env: { ...env, ...now } });
        expect(published.result.code, published.result.stderr).toBe(0);
        expect(published.json.days.map((d: { date: string }) => d.date)).toEqual([day(i + 1)]);
        expect(published.json.archive).toMatchObject({ store: env.TIMESEAL_ARCHIVE, catchUp: 'current' });
        expect(published.json.archive.publish.created).toBeGreaterThan(0);
        // Every object, compared with every file: the same paths, the same bytes.
        const files = folderDigest(path.join(folder, 'ledgers'));
        const objects = await storeDigest(store);
        expect([...objects.keys()]).toEqual([...files.keys()]);
        for (const [rel, sha] of files) expect(objects.get(rel), rel).toBe(sha);
        expect(objects.has(`${day(i + 1)}.json`)).toBe(true);
        // And the working copy it published from is that folder too.
        expect(folderDigest(path.join(bucket, 'data/archive-cache'))).toEqual(files);
      }
      // A run with nothing new sends nothing.
      const again = runJson(bucket, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: `${day(4)}T00:01:00Z` } });
      expect(again.result.code, again.result.stderr).toBe(0);
      expect(again.json.archive.publish).toMatchObject({ created: 0, present: 0, replaced: 0 });
      const url = await publicUrl('same/ledgers');
      const verified = verify(bucket, url);
      expect(verified.result.code, verified.result.stderr).toBe(0);
      expect(verified.json).toMatchObject({ ok: true, days: 3, treeSize: 431, problems: [] });
    },
  );

  it(
    'a build killed (SIGKILL) while it uploads leaves the published archive as it was; the rerun finishes it, and a build killed after days.json is finished by a writer on a new working copy',
    { timeout: 120_000 },
    async () => {
      const dir = project('publish-killed');
      // A killed writer holds the schedule lease until its ttl has passed: 5 s here.
      const TTL_S = 5;
      const env = s3Env('killed/ledgers', { TIMESEAL_SCHEDULE_LEASE_SECONDS: String(TTL_S) });
      const leaseExpired = () => sleep(TTL_S * 1000 + 200);
      const store = await openArchiveStore(env.TIMESEAL_ARCHIVE!, ceph.current.env);
      const url = await publicUrl('killed/ledgers');
      importDay(dir, 1, makeHashes('killed', 200));
      const first = runJson(dir, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: `${day(2)}T00:01:00Z` } });
      expect(first.result.code, first.result.stderr).toBe(0);
      const before = await storeDigest(store);

      /** Starts a build that stops itself at `pause`, waits for it to stop there, and kills it with SIGKILL. */
      const killedAt = async (pause: string, extra: Record<string, string> = {}): Promise<void> => {
        const build = start(dir, ['ledger', 'build', '--json'], {
          env: { ...env, ...extra, TIMESEAL_TEST_PAUSE_AT: pause },
        });
        let stderr = '';
        build.child.stderr!.on('data', (s: string) => (stderr += s));
        for (const end = Date.now() + 60_000; !stderr.includes(`test pause: ${pause}`);) {
          if (Date.now() > end || build.child.exitCode !== null) throw new Error(`the build never paused:\n${stderr}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        build.child.kill('SIGKILL');
        expect((await build.exited).signal).toBe('SIGKILL');
      };

      // Day 2 (600 hashes: tiles, entry bundles, the day's files), killed after the 12th immutable object.
      importDay(dir, 2, makeHashes('killed', 600, 200));
      await killedAt('immutable:12', { TIMESEAL_NOW: `${day(3)}T00:01:00Z` });
      const cut = await storeDigest(store);
      const added = [...cut.keys()].filter((rel) => !before.has(rel));
      expect(added.length).toBeGreaterThanOrEqual(12);
      // Readers see the archive as it was: the same days.json, every earlier object unchanged, and it verifies.
      for (const [rel, sha] of before) expect(cut.get(rel), rel).toBe(sha);
      const meanwhile = verify(dir, url);
      expect(meanwhile.result.code, meanwhile.result.stderr).toBe(0);
      expect(meanwhile.json).toMatchObject({ ok: true, days: 1, treeSize: 200 });

      // Until then, no other writer publishes: the killed one might still be running, for all anyone knows.
      const refused = run(dir, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: `${day(3)}T00:05:00Z` } });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/does not hold the schedule lease: another node runs the schedule/);
      expect(await storeDigest(store)).toEqual(cut);
      await leaseExpired();
      const rerun = runJson(dir, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: `${day(3)}T00:05:00Z` } });
      expect(rerun.result.code, rerun.result.stderr).toBe(0);
      // The day was built before the kill: the rerun only finishes its upload (the objects already sent are
      // found there with the same bytes).
      expect(rerun.json.days).toEqual([]);
      expect(rerun.json.archive.publish.present).toBeGreaterThanOrEqual(1);
      const finished = verify(dir, url);
      expect(finished.result.code, finished.result.stderr).toBe(0);
      expect(finished.json).toMatchObject({ ok: true, days: 2, treeSize: 800, problems: [] });
      const afterRerun = await storeDigest(store);
      for (const rel of added) expect(afterRerun.get(rel), rel).toBe(cut.get(rel));

      // Day 3, killed right after days.json (the commit point), before the index head and latest checkpoint.
      importDay(dir, 3, makeHashes('killed', 50, 800));
      await killedAt('mutable:1', { TIMESEAL_NOW: `${day(4)}T00:01:00Z` });
      const torn = await storeDigest(store);
      expect(torn.get(DAYS_PATH)).not.toBe(afterRerun.get(DAYS_PATH));
      expect(torn.get('checkpoint')).toBe(afterRerun.get('checkpoint'));
      await leaseExpired();
      // A writer on another host (an empty working copy, the same database) takes over from the store: it pulls
      // and verifies the three days, then completes the index head and latest checkpoint.
      const other = runJson(dir, ['ledger', 'build'], {
        env: { ...env, TIMESEAL_NOW: `${day(4)}T00:05:00Z`, TIMESEAL_ARCHIVE_CACHE: path.join(dir, 'other-host') },
      });
      expect(other.result.code, other.result.stderr).toBe(0);
      expect(other.json.archive.catchUp).toBe('pulled');
      expect(other.json.archive.publish.replaced).toBeGreaterThanOrEqual(2);
      const done = verify(dir, url);
      expect(done.result.code, done.result.stderr).toBe(0);
      expect(done.json).toMatchObject({ ok: true, days: 3, treeSize: 850, problems: [], notes: [] });
      const last = await storeDigest(store);
      expect(last.get('checkpoint')).not.toBe(torn.get('checkpoint'));
      // Nothing immutable changed on the way.
      for (const [rel, sha] of torn)
        if (rel !== 'checkpoint' && !rel.endsWith('.json')) expect(last.get(rel), rel).toBe(sha);
    },
  );
});
