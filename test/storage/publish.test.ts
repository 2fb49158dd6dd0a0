// The archive writer publishing to S3 (pipeline/storage/publish.ts, cli/archive-publish.ts), against a real Ceph
// RADOS Gateway (test/support/ceph-rgw.ts, started once for this file): `timeseal ledger build` with
// TIMESEAL_ARCHIVE=s3://… builds in its working copy and publishes it. The same submissions built day after day
// into a folder and into RGW give the same objects, byte for byte, and `timeseal verify` passes on the bucket over
// HTTP. Crashes: publish-crash.test.ts; two writers: publish-lease.test.ts.
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { openArchiveStore } from '../../pipeline/storage/open.ts';
import { makeHashes, removeTempProjects, runJson } from '../cli/helpers.ts';
import { cephForSuite, publicArchiveUrl } from '../support/ceph-rgw.ts';
import { day, folderDigest, importDay, project, s3Env, storeDigest, verifyUrl } from './publish-project.ts';

const ceph = cephForSuite();
afterAll(() => removeTempProjects());

it(
  'the same submissions built day after day into a folder and into RGW give the same objects, byte for byte',
  { timeout: 120_000 },
  async () => {
    const folder = project('publish-folder');
    const bucket = project('publish-s3', folder);
    const env = s3Env(ceph.current, 'same/ledgers');
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
    const url = await publicArchiveUrl(ceph.current, 'same/ledgers');
    const verified = verifyUrl(bucket, url);
    expect(verified.result.code, verified.result.stderr).toBe(0);
    expect(verified.json).toMatchObject({ ok: true, days: 3, treeSize: 431, problems: [] });
  },
);
