// A `timeseal serve` node without the schedule lease on an s3:// archive follows the writer (pipeline/schedule.ts,
// pipeline/archive-publish.ts followArchiveStore), against a real Ceph RADOS Gateway (test/support/ceph-rgw.ts). The
// lease is held by another holder (the writer's schedule, renewed by the test); node B starts with an empty working
// copy, runs no step, and serves the day the bucket holds; the writer then publishes a second day under that lease,
// and B serves it within a few lease checks, having written nothing to the bucket.
import path from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { openStore } from '../../store/index.ts';
import { openArchiveStore } from '../../pipeline/storage/open.ts';
import { makeHashes, removeTempProjects, runJson, start } from '../cli/helpers.ts';
import { cephForSuite } from '../support/ceph-rgw.ts';
import { day, importDay, project, s3Env, storeDigest } from './publish-project.ts';
import { listeningUrl } from '../support/until.ts';

const ceph = cephForSuite();
afterAll(() => removeTempProjects());

/** The dates of the days.json `url` serves (none while it has none). */
async function servedDays(url: string): Promise<string[]> {
  const res = await fetch(`${url}/ledgers/days.json`);
  if (res.status !== 200) return [];
  return ((await res.json()) as { days: Array<{ date: string }> }).days.map((d) => d.date);
}

it(
  'a node without the schedule lease serves what the writer publishes to the bucket, and writes nothing there',
  { timeout: 120_000 },
  async () => {
    // Long enough that the test's own renewals (every 500 ms, when its event loop is free: `import` runs
    // synchronously) never let the lease lapse on a loaded machine; the follower checks every ttl/3.
    const TTL_S = 9;
    const HOLDER = 'writer-host:1:0000aaaa';
    const dir = project('follow');
    const base = s3Env(ceph.current, 'follow/ledgers', { TIMESEAL_SCHEDULE_LEASE_SECONDS: String(TTL_S) });
    const writer = { ...base, TIMESEAL_ARCHIVE_CACHE: path.join(dir, 'host-a') };
    const follower = { ...base, TIMESEAL_ARCHIVE_CACHE: path.join(dir, 'host-b') };
    const bucket = await openArchiveStore(base.TIMESEAL_ARCHIVE!, ceph.current.env);
    importDay(dir, 1, makeHashes('follow', 30));
    const first = runJson(dir, ['ledger', 'build'], { env: { ...writer, TIMESEAL_NOW: `${day(2)}T00:01:00Z` } });
    expect(first.result.code, first.result.stderr).toBe(0);

    // The writer's schedule holds the lease (renewed here as its node would).
    const db = await openStore({ db: path.join(dir, 'data/timeseal.db') });
    const renew = () => db.lease.acquire('schedule', HOLDER, TTL_S * 1000, Date.now());
    expect(await renew()).toBe(true);
    const renewal = setInterval(() => void renew(), 500);
    const node = start(dir, ['serve'], {
      env: { ...follower, PORT: '0', HOST: '127.0.0.1', LOG_FORMAT: 'json', TIMESEAL_NOW: `${day(2)}T00:05:00Z` },
    });
    let out = '';
    node.child.stdout!.on('data', (s: string) => (out += s));
    node.child.stderr!.on('data', (s: string) => (out += s));
    try {
      const url = await listeningUrl(() => out, 60_000);
      // The day already in the bucket, in B's empty working copy.
      await vi.waitFor(async () => expect(await servedDays(url)).toEqual([day(1)]), { timeout: 30_000, interval: 200 });
      // The JSON log is buffered and written at least every second (runtime/logger.ts): wait for the line.
      await expect.poll(() => out).toContain('schedule held by another node: this node skips its steps');

      // The writer publishes day 2 under the lease it holds.
      importDay(dir, 2, makeHashes('follow', 20, 30));
      // Started, not run synchronously: the lease keeps being renewed while it builds and publishes.
      const second = await start(dir, ['ledger', 'build'], {
        env: { ...writer, TIMESEAL_NOW: `${day(3)}T00:01:00Z`, TIMESEAL_SCHEDULE_HOLDER: HOLDER },
      }).exited;
      expect(second.code, second.stderr).toBe(0);
      const published = await storeDigest(bucket);
      const since = Date.now();
      await vi.waitFor(async () => expect(await servedDays(url)).toEqual([day(1), day(2)]), {
        timeout: 40_000,
        interval: 200,
      });
      // Within a few lease checks (every ttl/3 = 3 s) and the pull of one day.
      expect(Date.now() - since).toBeLessThan(25_000);
      await expect
        .poll(() => out)
        .toContain('working copy brought up to date from the archive (another node publishes it)');
      expect(out).not.toMatch(/"step":"ledger build"/);
      expect(await storeDigest(bucket)).toEqual(published);
    } finally {
      clearInterval(renewal);
      node.child.kill('SIGTERM');
      await node.exited;
      await db.close();
    }
  },
);
