// A build publishing to S3 killed with SIGKILL while it uploads (pipeline/storage/publish.ts,
// pipeline/archive-publish.ts), against a real Ceph RADOS Gateway (test/support/ceph-rgw.ts, a bucket
// of this file's own): the published archive stays as it was, another writer is held off for the lease's ttl, and the rerun
// finishes the upload; a build killed between days.json and the latest checkpoint is finished by a writer on
// another (empty) working copy. `timeseal verify` over HTTP passes on the bucket at every stage.
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { DAYS_PATH } from '../../core/archive.ts';
import { openArchiveStore } from '../../pipeline/storage/open.ts';
import { makeHashes, removeTempProjects, run, runJson, sleep, start } from '../cli/helpers.ts';
import { cephForSuite, publicArchiveUrl } from '../support/ceph-rgw.ts';
import { day, importDay, project, s3Env, storeDigest, verifyUrl } from './publish-project.ts';
import { until } from '../support/until.ts';

const ceph = cephForSuite();
afterAll(() => removeTempProjects());

it(
  'a build killed (SIGKILL) while it uploads leaves the published archive as it was; the rerun finishes it, and a build killed after days.json is finished by a writer on a new working copy',
  { timeout: 120_000 },
  async () => {
    const dir = project('publish-killed');
    // A killed writer holds the schedule lease until its ttl has passed: 5 s here.
    const TTL_S = 5;
    const env = s3Env(ceph.current, 'killed/ledgers', { TIMESEAL_SCHEDULE_LEASE_SECONDS: String(TTL_S) });
    const leaseExpired = () => sleep(TTL_S * 1000 + 200);
    const store = await openArchiveStore(env.TIMESEAL_ARCHIVE!, ceph.current.env);
    const url = await publicArchiveUrl(ceph.current, 'killed/ledgers');
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
      const paused = () => {
        if (build.child.exitCode !== null) throw new Error(`the build never paused:\n${stderr}`);
        return stderr.includes(`test pause: ${pause}`);
      };
      await until(`the build to pause at ${pause}`, 60_000, paused).catch((err: Error) => {
        throw new Error(`${err.message}:\n${stderr}`);
      });
      build.child.kill('SIGKILL');
      expect((await build.exited).signal).toBe('SIGKILL');
    };

    // Day 2 (600 hashes: tiles, entry bundles, the day's files), killed after the 12th immutable object.
    importDay(dir, 2, makeHashes('killed', 600, 200));
    await killedAt('immutable:12', { TIMESEAL_NOW: `${day(3)}T00:01:00Z` });
    // At once, before the killed writer's lease has run out, no other writer publishes: the killed one might still
    // be running, for all anyone knows.
    const refused = run(dir, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: `${day(3)}T00:05:00Z` } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/does not hold the schedule lease: another node runs the schedule/);
    const cut = await storeDigest(store);
    const added = [...cut.keys()].filter((rel) => !before.has(rel));
    expect(added.length).toBeGreaterThanOrEqual(12);
    // Readers see the archive as it was: the same days.json, every earlier object unchanged, and it verifies.
    for (const [rel, sha] of before) expect(cut.get(rel), rel).toBe(sha);
    const meanwhile = verifyUrl(dir, url);
    expect(meanwhile.result.code, meanwhile.result.stderr).toBe(0);
    expect(meanwhile.json).toMatchObject({ ok: true, days: 1, treeSize: 200 });

    await leaseExpired();
    const rerun = runJson(dir, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: `${day(3)}T00:05:00Z` } });
    expect(rerun.result.code, rerun.result.stderr).toBe(0);
    // The day was built before the kill: the rerun only finishes its upload (the objects already sent are
    // found there with the same bytes).
    expect(rerun.json.days).toEqual([]);
    expect(rerun.json.archive.publish.present).toBeGreaterThanOrEqual(1);
    const finished = verifyUrl(dir, url);
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
    const done = verifyUrl(dir, url);
    expect(done.result.code, done.result.stderr).toBe(0);
    expect(done.json).toMatchObject({ ok: true, days: 3, treeSize: 850, problems: [], notes: [] });
    const last = await storeDigest(store);
    expect(last.get('checkpoint')).not.toBe(torn.get('checkpoint'));
    // Nothing immutable changed on the way.
    for (const [rel, sha] of torn)
      if (rel !== 'checkpoint' && !rel.endsWith('.json')) expect(last.get(rel), rel).toBe(sha);
  },
);
