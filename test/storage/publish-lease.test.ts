// Two writers of one s3:// archive, one of which lost the schedule lease while it published (pipeline/archive-publish.ts,
// pipeline/storage/publish.ts), against a real Ceph RADOS Gateway (test/support/ceph-rgw.ts, a bucket
// of this file's own). Writer A is stopped (SIGSTOP) after its last lease check, just before it replaces days.json; past the
// lease's ttl writer B, on another working copy and the same database, takes the lease, catches up from the bucket
// and publishes two more days; then A goes on (SIGCONT). Every object is recorded (bytes, ETag, modification time)
// at each stage: no published object is ever overwritten, A fails naming days.json and changes nothing, and the
// archive verifies over HTTP. A's next run catches up from the bucket.
import path from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, expect, it } from 'vitest';
import { cacheClass } from '../../core/archive.ts';
import { openArchiveStore } from '../../pipeline/storage/open.ts';
import { makeHashes, removeTempProjects, runJson, sha256Hex, sleep, start } from '../cli/helpers.ts';
import { cephClient, cephForSuite, publicArchiveUrl } from '../support/ceph-rgw.ts';
import { day, importDay, project, s3Env, verifyUrl } from './publish-project.ts';
import { until } from '../support/until.ts';

const ceph = cephForSuite();
afterAll(() => removeTempProjects());

it(
  'a writer stopped past the lease ttl while it publishes cannot overwrite what the writer that took over published, and fails saying why',
  { timeout: 120_000 },
  async () => {
    const TTL_S = 2;
    const PREFIX = 'lease/ledgers';
    const dir = project('publish-lease');
    const base = s3Env(ceph.current, PREFIX, { TIMESEAL_SCHEDULE_LEASE_SECONDS: String(TTL_S) });
    const writerA = { ...base, TIMESEAL_ARCHIVE_CACHE: path.join(dir, 'host-a') };
    const writerB = { ...base, TIMESEAL_ARCHIVE_CACHE: path.join(dir, 'host-b') };
    const store = await openArchiveStore(base.TIMESEAL_ARCHIVE!, ceph.current.env);
    const client = cephClient(ceph.current);
    /** rel -> sha256 of its bytes, ETag and modification time, for every object of the archive. */
    const snapshot = async (): Promise<Map<string, string>> => {
      const out = new Map<string, string>();
      let token: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({ Bucket: ceph.current.bucket, Prefix: `${PREFIX}/`, ContinuationToken: token }),
        );
        for (const o of page.Contents ?? []) {
          const rel = o.Key!.slice(PREFIX.length + 1);
          out.set(rel, `${sha256Hex((await store.read(rel))!)} ${o.ETag} ${o.LastModified?.toISOString()}`);
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token !== undefined);
      return out;
    };
    importDay(dir, 1, makeHashes('lease', 100));
    const first = runJson(dir, ['ledger', 'build'], { env: { ...writerA, TIMESEAL_NOW: `${day(2)}T00:01:00Z` } });
    expect(first.result.code, first.result.stderr).toBe(0);
    importDay(dir, 2, makeHashes('lease', 120, 100));
    importDay(dir, 3, makeHashes('lease', 40, 220));

    // A builds day 2, sends its immutable objects, checks the lease, and is stopped before days.json.
    const a = start(dir, ['ledger', 'build', '--json'], {
      env: { ...writerA, TIMESEAL_NOW: `${day(3)}T00:01:00Z`, TIMESEAL_TEST_PAUSE_AT: 'mutable:0' },
    });
    let aErr = '';
    a.child.stderr!.on('data', (s: string) => (aErr += s));
    const aPaused = () => {
      if (a.child.exitCode !== null) throw new Error(`writer A never paused:\n${aErr}`);
      return aErr.includes('test pause: mutable:0');
    };
    await until('writer A to pause at mutable:0', 60_000, aPaused).catch((err: Error) => {
      throw new Error(`${err.message}:\n${aErr}`);
    });
    const paused = await snapshot();
    expect(paused.has(`${day(2)}.json`)).toBe(true);

    try {
      // Past the ttl, B takes the lease: it pulls day 1 from the bucket into its empty copy, builds days 2 and 3
      // (day 2's objects are already there, the same bytes) and publishes.
      await sleep(TTL_S * 1000 + 300);
      const b = runJson(dir, ['ledger', 'build'], { env: { ...writerB, TIMESEAL_NOW: `${day(4)}T00:01:00Z` } });
      expect(b.result.code, b.result.stderr).toBe(0);
      expect(b.json.days.map((d: { date: string }) => d.date)).toEqual([day(2), day(3)]);
      expect(b.json.archive).toMatchObject({ catchUp: 'pulled' });
      expect(b.json.archive.publish.present).toBeGreaterThan(0);
      const taken = await snapshot();
      // Every object there while A was stopped is there still; the immutable ones untouched (bytes, ETag, time).
      for (const [rel, was] of paused) {
        expect(taken.has(rel), rel).toBe(true);
        if (cacheClass(rel) === 'immutable') expect(taken.get(rel), rel).toBe(was);
      }
      expect(taken.get('days.json')).not.toBe(paused.get('days.json'));

      // A goes on: its replace of days.json names the version it read, which B replaced: refused, and A stops.
      a.child.kill('SIGCONT');
      const ended = await a.exited;
      expect(ended.code).toBe(1);
      expect(ended.stderr).toContain(`s3://${ceph.current.bucket}/${PREFIX}/days.json was replaced by another writer`);
      expect(ended.stderr).toContain('publishes nothing more');
      // Nothing changed: every object as B left it, to the ETag and modification time.
      expect(await snapshot()).toEqual(taken);
    } finally {
      a.child.kill('SIGKILL');
    }

    const url = await publicArchiveUrl(ceph.current, PREFIX);
    const verified = verifyUrl(dir, url);
    expect(verified.result.code, verified.result.stderr).toBe(0);
    expect(verified.json).toMatchObject({ ok: true, days: 3, treeSize: 260, problems: [] });

    // A's next run catches up from the bucket (its copy named day 2 unpublished; the bucket names days 2 and 3).
    await sleep(TTL_S * 1000 + 300);
    const again = runJson(dir, ['ledger', 'build'], { env: { ...writerA, TIMESEAL_NOW: `${day(4)}T00:05:00Z` } });
    expect(again.result.code, again.result.stderr).toBe(0);
    expect(again.json.days).toEqual([]);
    expect(again.json.archive.catchUp).toBe('pulled');
    const still = verifyUrl(dir, url);
    expect(still.json).toMatchObject({ ok: true, days: 3, treeSize: 260, problems: [] });
  },
);
