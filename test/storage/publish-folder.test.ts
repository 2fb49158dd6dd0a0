// The writer's publication (pipeline/storage/publish.ts) into the folder engine, whose compare-and-swap is its own
// (SHA-256 versions under a kernel lock): the decisions of the catch-up and the publication, quickly, with
// archives built by the real `timeseal ledger build` into working copies. Against Ceph RGW and through the
// commands: publish*.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { cacheClass, dateOfDayFile, ledgerPath } from '../../core/archive.ts';
import { INDEX_HEAD_PATH, parseIndexHead, segmentPath } from '../../core/index-segments.ts';
import { forgetListings } from '../../pipeline/files.ts';
import { FolderArchiveStore } from '../../pipeline/storage/folder.ts';
import { catchUpWorkingCopy, publishRecordPath, publishWorkingCopy } from '../../pipeline/storage/publish.ts';
import { loadPublicKeys } from '../../runtime/keys.ts';
import { makeHashes, removeTempProjects, run, tempProject } from '../cli/helpers.ts';
import { day, folderDigest, importDay, project } from './publish-project.ts';

afterAll(() => removeTempProjects());

/** Imports day n's hashes and builds it into the project's folder `ledgers/`. */
function buildDay(dir: string, n: number, hashes: string[]): void {
  importDay(dir, n, hashes);
  const built = run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: `${day(n + 1)}T00:01:00Z` } });
  expect(built.code, built.stderr).toBe(0);
}

const noFence = async (): Promise<void> => {};

/** The folder engine, except that a day's ledger read whole is refused: whatever reads one must stream it (a
 * ledger is 9.25 GB at 100,000,000 hashes). */
class LedgersStreamedOnly extends FolderArchiveStore {
  override async read(rel: string): Promise<Uint8Array | undefined> {
    const date = dateOfDayFile(rel);
    if (date !== null && rel === ledgerPath(date)) throw new Error(`${rel}: a ledger read whole`);
    return super.read(rel);
  }
}

it('publishes a working copy whole, then only what changed; a fence that refuses stops it before any write', async () => {
  const dir = project('publish-folder-whole');
  buildDay(dir, 1, makeHashes('whole', 70));
  const copy = path.join(dir, 'ledgers');
  const target = new FolderArchiveStore(path.join(tempProject('publish-folder-target'), 'archive'));
  const refused = publishWorkingCopy({
    folder: copy,
    store: target,
    fence: async () => {
      throw new Error('lease lost');
    },
  });
  await expect(refused).rejects.toThrow('lease lost');
  expect(await target.list('')).toEqual([]);

  const first = await publishWorkingCopy({ folder: copy, store: target, fence: noFence });
  expect(first.created).toBeGreaterThan(5);
  expect(folderDigest(target.location)).toEqual(folderDigest(copy));
  expect(fs.existsSync(publishRecordPath(copy))).toBe(true);
  expect(await publishWorkingCopy({ folder: copy, store: target, fence: noFence })).toMatchObject({
    created: 0,
    present: 0,
    replaced: 0,
  });
  // The record lost: everything is offered again, found there with the same bytes, and nothing is written.
  fs.rmSync(publishRecordPath(copy));
  const again = await publishWorkingCopy({ folder: copy, store: target, fence: noFence });
  expect(again).toMatchObject({ created: 0, present: first.created });
  expect(folderDigest(target.location)).toEqual(folderDigest(copy));
});

/** The folder engine, except that an immutable object given whole at `limit` bytes or more is refused: a
 * publication must stream it from its file (createFromFile). Notes what was streamed. */
class LargeFilesStreamedOnly extends FolderArchiveStore {
  readonly streamed: string[] = [];
  readonly limit: number;
  constructor(root: string, limit: number) {
    super(root);
    this.limit = limit;
  }
  override async create(rel: string, bytes: Uint8Array): Promise<boolean> {
    if (bytes.length >= this.limit) throw new Error(`${rel}: a file of ${bytes.length} bytes read whole`);
    return super.create(rel, bytes);
  }
  override async createFromFile(rel: string, file: string): Promise<boolean> {
    this.streamed.push(rel);
    return super.createFromFile(rel, file);
  }
}

it("the publication streams every immutable file from `streamFrom` bytes on (a day's ledger: 9.25 GB at 100,000,000 hashes) instead of reading it whole, and a rerun compares it streamed", async () => {
  const dir = project('publish-folder-large');
  buildDay(dir, 1, makeHashes('large', 60));
  const copy = path.join(dir, 'ledgers');
  const limit = 2048;
  const large = [...folderDigest(copy).keys()].filter(
    (rel) => cacheClass(rel) === 'immutable' && fs.statSync(path.join(copy, rel)).size >= limit,
  );
  expect(large).toContain(`${day(1)}.json`);
  const target = new LargeFilesStreamedOnly(path.join(tempProject('publish-folder-large-target'), 'archive'), limit);
  const first = await publishWorkingCopy({ folder: copy, store: target, fence: noFence, streamFrom: limit });
  expect(target.streamed.sort()).toEqual(large.sort());
  expect(folderDigest(target.location)).toEqual(folderDigest(copy));
  // The record lost: everything is offered again; the large files are compared streamed, and nothing is written.
  fs.rmSync(publishRecordPath(copy));
  target.streamed.length = 0;
  const again = await publishWorkingCopy({ folder: copy, store: target, fence: noFence, streamFrom: limit });
  expect(again).toMatchObject({ created: 0, present: first.created });
  expect(target.streamed.sort()).toEqual(large.sort());
});

it("a catch-up streams each day's ledger, never reading it whole: into an empty copy (a new host) and into a copy a day behind", async () => {
  const dir = project('publish-folder-stream');
  buildDay(dir, 1, makeHashes('stream', 30));
  const copy = path.join(dir, 'ledgers');
  const root = path.join(tempProject('publish-folder-stream-target'), 'archive');
  await publishWorkingCopy({ folder: copy, store: new FolderArchiveStore(root), fence: noFence });
  const behind = path.join(tempProject('publish-folder-stream-behind'), 'ledgers');
  fs.cpSync(copy, behind, { recursive: true });
  buildDay(dir, 2, makeHashes('stream', 20, 30));
  await publishWorkingCopy({ folder: copy, store: new FolderArchiveStore(root), fence: noFence });
  const store = new LedgersStreamedOnly(root);
  await expect(store.read(`${day(2)}.json`)).rejects.toThrow('a ledger read whole');
  const keys = loadPublicKeys(path.join(dir, 'keys'));
  const fresh = path.join(tempProject('publish-folder-stream-new'), 'ledgers');
  const published = folderDigest(copy);
  for (const [folder, days] of [
    [behind, [day(2)]],
    [fresh, [day(1), day(2)]],
  ] as const) {
    const caught = await catchUpWorkingCopy({ folder, store, keys });
    expect(caught.state, folder).toBe('pulled');
    expect(caught.pull?.days.fetched, folder).toEqual(days);
    for (const n of [1, 2]) expect(folderDigest(folder).get(`${day(n)}.json`)).toBe(published.get(`${day(n)}.json`));
  }
});

it('two writers: the one behind catches up by a verified pull; its stale replace and a copy with another history are refused, naming what', async () => {
  // A and B hold the same keys and the same first day; B goes on to a second day.
  const a = project('publish-folder-a');
  const b = project('publish-folder-b', a);
  const day1 = makeHashes('two', 40);
  buildDay(a, 1, day1);
  buildDay(b, 1, day1);
  const target = new FolderArchiveStore(path.join(tempProject('publish-folder-shared'), 'archive'));
  const copyA = path.join(a, 'ledgers');
  const copyB = path.join(b, 'ledgers');
  const keys = loadPublicKeys(path.join(a, 'keys'));
  await publishWorkingCopy({ folder: copyA, store: target, fence: noFence });

  buildDay(b, 2, makeHashes('two', 25, 40));
  // B's copy holds the published day and one more: the store is behind it, and B publishes its second day.
  expect(await catchUpWorkingCopy({ folder: copyB, store: target, keys })).toEqual({ state: 'ahead' });
  const published = await publishWorkingCopy({ folder: copyB, store: target, fence: noFence });
  expect(published.replaced).toBeGreaterThanOrEqual(3);
  const afterB = folderDigest(target.location);
  expect(afterB.has(`${day(2)}.json`)).toBe(true);

  // A, not caught up, tries to put its own status file back over B's: refused by the version, nothing written.
  const status = path.join(copyA, 'ots_status.json');
  fs.writeFileSync(status, fs.readFileSync(status, 'utf8').replace(/\}\s*$/, ',"edited":1}\n'));
  const stale = await publishWorkingCopy({ folder: copyA, store: target, fence: noFence }).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  expect(stale?.name).toBe('PublishConflictError');
  expect(stale?.message).toContain(`${target.location}/ots_status.json was replaced by another writer`);
  expect(folderDigest(target.location)).toEqual(afterB);

  // Its catch-up pulls B's day, verified, into its copy.
  const caught = await catchUpWorkingCopy({ folder: copyA, store: target, keys });
  expect(caught.state).toBe('pulled');
  expect(caught.pull?.days.fetched).toEqual([day(2)]);
  expect(folderDigest(copyA).get(`${day(2)}.json`)).toBe(afterB.get(`${day(2)}.json`));

  // A copy whose first day has other hashes is no copy of this archive: refused, naming the day.
  const c = project('publish-folder-c', a);
  buildDay(c, 1, makeHashes('other', 40));
  await expect(catchUpWorkingCopy({ folder: path.join(c, 'ledgers'), store: target, keys })).rejects.toThrow(
    new RegExp(`disagree on ${day(1)} \\(ledger sha256 [0-9a-f]{64} there, [0-9a-f]{64} here\\)`),
  );
});

it('an object in the store with other bytes than the copy stops the publication before days.json, naming it, and is not overwritten', async () => {
  const dir = project('publish-folder-conflict');
  buildDay(dir, 1, makeHashes('conflict', 30));
  const copy = path.join(dir, 'ledgers');
  const target = new FolderArchiveStore(path.join(tempProject('publish-folder-conflict-target'), 'archive'));
  const rel = `${day(1)}.json.sig`;
  await target.create(rel, new TextEncoder().encode('not the signature'));
  const failed = await publishWorkingCopy({ folder: copy, store: target, fence: noFence, concurrency: 4 }).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  expect(failed?.name).toBe('ConflictError');
  expect(failed?.message).toContain(rel);
  expect(new TextDecoder().decode(await target.read(rel))).toBe('not the signature');
  // The commit point and the other mutable objects were never written: readers see no day.
  expect(await target.exists('days.json')).toBe(false);
  expect(await target.exists('checkpoint')).toBe(false);
});

it("a day's publication looks at the changed folders only: nothing sent twice, a file renamed in with an old mtime is sent, one edited in place too; a record of the first form is read once", async () => {
  const dir = project('publish-folder-scan');
  buildDay(dir, 1, makeHashes('scan', 600));
  const copy = path.join(dir, 'ledgers');
  const target = new FolderArchiveStore(path.join(tempProject('publish-folder-scan-target'), 'archive'));
  const first = await publishWorkingCopy({ folder: copy, store: target, fence: noFence });
  const files = folderDigest(copy).size;
  expect(first.looked).toBe(files);
  const tileFiles = [...folderDigest(copy).keys()].filter((rel) => rel.startsWith('tile/')).length;
  expect(tileFiles).toBeGreaterThan(3);

  // Nothing changed: the tile folders are not read, nothing is sent.
  const idle = await publishWorkingCopy({ folder: copy, store: target, fence: noFence });
  expect(idle).toMatchObject({ created: 0, present: 0, replaced: 0, removed: 0, looked: files - tileFiles });

  // A second day: its files and the changed mutable ones are sent, nothing published before is offered again.
  buildDay(dir, 2, makeHashes('scan', 300, 600));
  const before = folderDigest(target.location);
  const second = await publishWorkingCopy({ folder: copy, store: target, fence: noFence });
  const after = folderDigest(copy);
  const newImmutable = [...after.keys()].filter((rel) => !before.has(rel) && cacheClass(rel) === 'immutable');
  expect(second.created).toBe(newImmutable.length);
  expect(second.present).toBe(0);
  expect(second.looked).toBeLessThan(after.size);
  expect(folderDigest(target.location)).toEqual(after);

  // A tile restored by hand with its old modification time (cp -a, rsync -t) into an unchanged folder is still
  // seen: its folder's change time moved. A mutable file edited in place (no rename) is seen by its own.
  const tile = [...after.keys()].find((rel) => /^tile\/0\/\d{3}$/.test(rel))!;
  fs.rmSync(path.join(target.location, tile));
  forgetListings(); // as another process would: this one's folder engine keeps the listings it wrote
  const extra = `${path.dirname(tile)}/999.p/1`;
  fs.mkdirSync(path.join(copy, path.dirname(extra)), { recursive: true });
  fs.writeFileSync(path.join(copy, extra), 'x');
  fs.utimesSync(path.join(copy, extra), new Date('2020-01-01'), new Date('2020-01-01'));
  fs.appendFileSync(path.join(copy, 'block_info.json'), ' ');
  const third = await publishWorkingCopy({ folder: copy, store: target, fence: noFence });
  expect(third).toMatchObject({ created: 1, replaced: 1 });
  expect(new TextDecoder().decode(await target.read(extra))).toBe('x');
  // The tile removed from the target behind the record's back is not noticed: the record says it was sent.
  expect(await target.exists(tile)).toBe(false);

  // The first form of the record (every path sent, no times): every file looked at once, what it lists not sent
  // again (the new file, which it lacks, is offered and found there).
  fs.writeFileSync(
    publishRecordPath(copy),
    JSON.stringify({
      store: target.location,
      objects: [...after.keys()].filter((rel) => cacheClass(rel) === 'immutable'),
    }),
  );
  const upgraded = await publishWorkingCopy({ folder: copy, store: target, fence: noFence });
  expect(upgraded).toMatchObject({ created: 0, present: 1, looked: after.size + 1 });
  expect((await publishWorkingCopy({ folder: copy, store: target, fence: noFence })).looked).toBeLessThan(after.size);
  // No record: everything offered again, and the tile lost from the target is sent.
  fs.rmSync(publishRecordPath(copy));
  expect(await publishWorkingCopy({ folder: copy, store: target, fence: noFence })).toMatchObject({
    created: 1,
    looked: after.size + 1,
  });
  expect(folderDigest(target.location)).toEqual(folderDigest(copy));
});

it('index segments a merge retired leave the store once the build has removed them from the copy; the head names every segment the store keeps', async () => {
  const dir = project('publish-folder-retired');
  const copy = path.join(dir, 'ledgers');
  const target = new FolderArchiveStore(path.join(tempProject('publish-folder-retired-target'), 'archive'));
  const segments = (root: string): string[] =>
    fs.existsSync(path.join(root, 'index'))
      ? fs
          .readdirSync(path.join(root, 'index'))
          .filter((n) => n.endsWith('.idx'))
          .map((n) => `index/${n}`)
          .sort()
      : [];
  const named = (root: string): string[] =>
    parseIndexHead(fs.readFileSync(path.join(root, INDEX_HEAD_PATH), 'utf8'))
      .segments.map(segmentPath)
      .sort();
  const everSeen = new Set<string>();
  let removed = 0;
  for (let n = 1; n <= 6; n++) {
    buildDay(dir, n, makeHashes(`retired-${n}`, 20));
    for (const s of segments(copy)) everSeen.add(s);
    removed += (await publishWorkingCopy({ folder: copy, store: target, fence: noFence })).removed;
    // The store holds the segments the copy holds, as a folder archive would: those its head names, and those the
    // head before named or that a merge retired in the run that made them, which the next run removes.
    expect(segments(target.location), `day ${n}`).toEqual(segments(copy));
    expect(named(target.location)).toEqual(named(copy));
  }
  // A run with nothing to build removes what the last merge retired; the publication follows.
  const idle = run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: `${day(8)}T00:01:00Z` } });
  expect(idle.code, idle.stderr).toBe(0);
  removed += (await publishWorkingCopy({ folder: copy, store: target, fence: noFence })).removed;
  expect(removed).toBeGreaterThan(0);
  expect(everSeen.size).toBeGreaterThan(segments(copy).length);
  expect(segments(target.location)).toEqual(named(target.location));
  expect(folderDigest(target.location)).toEqual(folderDigest(copy));
});

it('segments already in the store that no head names (an earlier release, another host) leave it too, a publication after the first one of a record', async () => {
  const dir = project('publish-folder-stray');
  const copy = path.join(dir, 'ledgers');
  const target = new FolderArchiveStore(path.join(tempProject('publish-folder-stray-target'), 'archive'));
  const stray = 'index/100000-100001.idx';
  await target.create(stray, new TextEncoder().encode('left by an earlier release'));
  buildDay(dir, 1, makeHashes('stray-1', 20));
  // The first publication notes it; a reader that fetched an older head may still use it, so it stays for now.
  expect((await publishWorkingCopy({ folder: copy, store: target, fence: noFence })).removed).toBe(0);
  expect(await target.exists(stray)).toBe(true);
  buildDay(dir, 2, makeHashes('stray-2', 20));
  expect((await publishWorkingCopy({ folder: copy, store: target, fence: noFence })).removed).toBeGreaterThanOrEqual(1);
  expect(await target.exists(stray)).toBe(false);
  // A lost record lists the store again (once), and finds nothing more to remove.
  fs.rmSync(publishRecordPath(copy));
  buildDay(dir, 3, makeHashes('stray-3', 20));
  await publishWorkingCopy({ folder: copy, store: target, fence: noFence });
  const idle = run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: `${day(5)}T00:01:00Z` } });
  expect(idle.code, idle.stderr).toBe(0);
  await publishWorkingCopy({ folder: copy, store: target, fence: noFence });
  expect(folderDigest(target.location)).toEqual(folderDigest(copy));
});
