// Publishing the archive writer's working copy through an archive store (docs/OPERATIONS.md §8). With
// TIMESEAL_ARCHIVE=s3://…, every command reads and writes a local folder exactly as it writes a folder archive
// (the same files byte for byte, the same crash safety); after a step has committed there, publishWorkingCopy
// sends what changed, in the archive's commit order (docs/FORMAT.md §10, pipeline/build.ts):
//   1. every immutable object the store is not known to hold, created only if absent (present with the same
//      bytes is success: a rerun after a crash); a large one (a day's ledger) streamed from its file, never held;
//   2. the mutable objects that changed: a day's .ots and cosignatures, then days.json (the commit point), the
//      index head, the latest checkpoint, the other files, the status files last; each a compare-and-swap against
//      the version this writer last read or wrote (ArchiveStore.replace with a version).
// What the store is known to hold is recorded beside the working copy (`<copy>.published.json`): when the last
// complete publication began (`since`), the change time of each folder then, and the immutable paths sent or
// pulled since; and each mutable object's SHA-256 and version as last read or written (`<copy>.versions.json`,
// saved after each replace). A run killed during the upload loses at most its record's last part: the next run
// sends again what the record lacks (create-only, identical bytes) and finishes; readers meanwhile see the
// previous days.json and the days it names.
// What changed is found without reading the whole copy, so that a day's publication does not grow with the
// archive's tiles, nearly all of its files (bench/publish-scan.bench.ts): every file the steps write is renamed into place (pipeline/files.ts), which sets its change time
// (ctime, which no tool can set back, unlike mtime) and that of its folder. A folder of tiles whose change time
// is the one recorded has gained and lost nothing, and is not read; in every other folder (the root with the
// days' files, index/, block-info/) each file's change time is looked at, so a file edited in place is seen too.
// A file is offered when it changed after `since` (less two seconds, for file systems with coarse times); with
// no record (a first run, a lost record), every file is. Deleting the record makes the next run offer everything
// again.
// Index segments a merge retired are removed from the store as the build removes them from its folder
// (pipeline/segment-files.ts), a run after the head stopped naming them: the record keeps the segments the
// published head named (`head`), and those a newer published head no longer names (`retiring`). A segment is
// removed at a later publication than the one whose head retired it, after the commit point, once the build has
// removed it from the copy, so a reader that fetched the previous head has had at least one run's interval to
// finish with it. A segment a merge retired in the run that made it is sent (the store holds what the folder holds)
// and is retiring at once. The first publication of a record lists the store's index/ once: segments there that the
// copy's head does not name are retiring too (left by an earlier release, by a writer whose record was lost or by
// one on another host, or sent by a writer killed before its commit point), so a new host or a new record leaves
// none behind.
// Fencing: `fence` (the schedule lease, pipeline/archive-publish.ts) is asked before each phase, and a writer stopped
// after asking (a pause, a long swap-out) still cannot put an older days.json or checkpoint back over a newer one:
// the store refuses a replace naming a version another writer has replaced, and the run ends there, naming it.
// catchUpWorkingCopy runs before a step: a working copy that is empty (a new host) or behind the store (another
// writer published since) is brought up to date by the mirror's verified pull (pipeline/mirror.ts) reading the
// store, so the writer extends only what it has checked.
import type { PublicKeys } from '../../runtime/keys.ts';
import { setting } from '../../runtime/settings.ts';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  BLOCK_INFO_PATH,
  cacheClass,
  CHECKPOINT_PATH,
  DAYS_PATH,
  encodeDays,
  monthOfBlockInfo,
  OTS_STATUS_PATH,
  parseDays,
  type DayRecord,
} from '../../core/archive.ts';
import type { PublicKeySet } from '../../core/day.ts';
import { equalBytes, fromUtf8 } from '../../core/encoding.ts';
import { TimesealError } from '../../core/errors.ts';
import { INDEX_HEAD_PATH, parseIndexHead, parseSegmentPath, segmentPath } from '../../core/index-segments.ts';
import type { ArchiveReader } from '../archive-reader.ts';
import { inParallel } from '../in-parallel.ts';
import { readOptional } from '../files.ts';
import { pullMirror, type MirrorReport } from '../mirror.ts';
import { archiveStoreReader, StaleVersionError, wholeStream, type ArchiveStore } from './archive-store.ts';
import { contentVersion } from './folder.ts';

/** Another writer changed the published archive under this one: it publishes nothing more. */
export class PublishConflictError extends TimesealError {
  constructor(message: string, options?: ErrorOptions) {
    super('conflict', message, options);
    this.name = 'PublishConflictError';
  }
}

interface Known {
  sha256: string;
  version: string;
}

/** What the store is known to hold (see the module comment), for one store location. */
interface PublishRecord {
  store: string;
  /** The immutable paths known to be in the store among those changed since `since` (sent, pulled, or offered by
   * the last complete publication); all of them when `since` is unknown. */
  immutable: Set<string>;
  mutable: Map<string, Known>;
  /** When the last complete publication began (ms, the clock of file change times); undefined: unknown, and
   * every file of the copy is offered. */
  since: number | undefined;
  /** Each folder of the copy ('' for its root) and its change time (ms) at that publication. */
  folders: Map<string, number>;
  /** The index segments the store's head names, as this writer last published or read it (undefined: unknown). */
  head: string[] | undefined;
  /** Segments a published head stopped naming, still in the store (see the module comment). */
  retiring: Set<string>;
  /** Whether the store's index/ was listed for segments no head names (once per record). */
  listed: boolean;
}

/** The contents of `<copy>.published.json`. Its first form held only `objects` (every immutable path sent). */
interface PublishedFile {
  objects?: string[];
  since?: number;
  folders?: Record<string, number>;
  head?: string[];
  retiring?: string[];
  listed?: boolean;
}

/** The record's files, beside the working copy (not in it: the archive holds only archive files): what the last
 * publications sent and saw (PublishedFile), and the mutable objects' versions, kept apart so that each is written
 * only when it changes. */
export function publishRecordPath(folder: string): string {
  return `${path.resolve(folder)}.published.json`;
}
function versionsPath(folder: string): string {
  return `${path.resolve(folder)}.versions.json`;
}

/** A record file's content, or undefined when it is absent or of another store (which says nothing of this one:
 * everything is then offered again, create-only and compared). */
function readRecordFile<T>(file: string, location: string): T | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const data = JSON.parse(text) as { store?: unknown } & T;
  return data.store === location ? data : undefined;
}

function readRecord(folder: string, location: string): PublishRecord {
  const published = readRecordFile<PublishedFile>(publishRecordPath(folder), location);
  return {
    store: location,
    immutable: new Set(published?.objects ?? []),
    mutable: new Map(
      Object.entries(
        readRecordFile<{ objects?: Record<string, Known> }>(versionsPath(folder), location)?.objects ?? {},
      ),
    ),
    since: published?.since,
    folders: new Map(Object.entries(published?.folders ?? {})),
    head: published?.head,
    retiring: new Set(published?.retiring ?? []),
    listed: published?.listed === true,
  };
}

function writeRecordFile(file: string, content: object): void {
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(content));
  fs.renameSync(`${file}.tmp`, file);
}

function saveVersions(folder: string, record: PublishRecord): void {
  writeRecordFile(versionsPath(folder), {
    store: record.store,
    objects: Object.fromEntries([...record.mutable].sort(([a], [b]) => (a < b ? -1 : 1))),
  });
}

function saveRecord(folder: string, record: PublishRecord): void {
  savePublished(folder, record);
  saveVersions(folder, record);
}

function savePublished(folder: string, record: PublishRecord): void {
  const published: PublishedFile = { objects: [...record.immutable].sort() };
  if (record.since !== undefined) {
    published.since = record.since;
    published.folders = Object.fromEntries([...record.folders].sort(([a], [b]) => (a < b ? -1 : 1)));
  }
  if (record.head !== undefined) published.head = record.head;
  if (record.retiring.size > 0) published.retiring = [...record.retiring].sort();
  if (record.listed) published.listed = true;
  writeRecordFile(publishRecordPath(folder), { store: record.store, ...published });
}

/** Files changed at most this long before `since` are offered again: file systems whose times are coarse (FAT: 2 s)
 * may date a file written just after a publication began before it. */
const SINCE_MARGIN_MS = 2000;

/** Folders whose files never change or go (tiles and entry bundles): when the folder's change time is the recorded
 * one, its files are not looked at. */
const isTileFolder = (rel: string): boolean => rel === 'tile' || rel.startsWith('tile/');

interface Scan {
  /** The files that changed since the record's `since` (every file without one), as archive paths, sorted. */
  changed: string[];
  /** Every folder and its change time now. */
  folders: Map<string, number>;
  /** Files whose change time was looked at (or listed, without a record). */
  looked: number;
  /** When the scan began (ms): the next `since` once this publication completes. */
  began: number;
}

/** The files of the working copy changed since the last complete publication (see the module comment); names
 * starting with a dot (temp files, locks) are none. */
function scanCopy(folder: string, record: PublishRecord): Scan {
  const began = Date.now();
  const since = record.since;
  const scan: Scan = { changed: [], folders: new Map(), looked: 0, began };
  // The recorded folders by parent: the subfolders of a folder that has not changed are the recorded ones.
  const children = new Map<string, string[]>();
  for (const rel of record.folders.keys()) {
    if (rel === '') continue;
    const parent = rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '';
    const siblings = children.get(parent);
    if (siblings === undefined) children.set(parent, [rel]);
    else siblings.push(rel);
  }
  const visit = (rel: string): void => {
    const dir = path.join(folder, rel);
    let ctime: number;
    try {
      ctime = fs.statSync(dir).ctimeMs;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    scan.folders.set(rel, ctime);
    if (since !== undefined && isTileFolder(rel) && record.folders.get(rel) === ctime) {
      for (const child of children.get(rel) ?? []) visit(child);
      return;
    }
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) visit(child);
      else if (entry.isFile()) {
        scan.looked++;
        if (since === undefined || fs.statSync(path.join(folder, child)).ctimeMs >= since - SINCE_MARGIN_MS)
          scan.changed.push(child);
      }
    }
  };
  visit('');
  scan.changed.sort();
  return scan;
}

/** Every file of the working copy, as archive paths; names starting with a dot (temp files, locks) are none. */
function listFiles(folder: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(folder, rel), { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile()) out.push(child);
    }
  };
  walk('');
  return out.sort();
}

/** The order of the mutable objects (docs/FORMAT.md §10): a day's own files, the commit point, what follows it. */
function mutableRank(rel: string): number {
  if (/^\d{4}-\d{2}-\d{2}\.json\.ots$/.test(rel) || rel.endsWith('.cosignatures')) return 0;
  if (rel === DAYS_PATH) return 1;
  if (rel === INDEX_HEAD_PATH) return 2;
  if (rel === CHECKPOINT_PATH) return 3;
  if (rel === OTS_STATUS_PATH) return 5;
  if (monthOfBlockInfo(rel) !== null) return 6;
  if (rel === BLOCK_INFO_PATH) return 7;
  return 4;
}

/**
 * Tests only (test/storage/publish*.test.ts): TIMESEAL_TEST_PAUSE_AT=immutable:<n> or mutable:<n> stops this
 * process (SIGSTOP) after the n-th object of that phase (mutable:0: after the fence, before the first replace),
 * saying so on stderr, so that a test can kill it there or let another writer take over before it goes on.
 */
function testPause(phase: 'immutable' | 'mutable', n: number): void {
  if (setting(process.env, 'TIMESEAL_TEST_PAUSE_AT') !== `${phase}:${n}`) return;
  process.stderr.write(`test pause: ${phase}:${n} (pid ${process.pid})\n`);
  process.kill(process.pid, 'SIGSTOP');
}

export interface PublishOptions {
  /** The working copy (Config.archive). */
  folder: string;
  store: ArchiveStore;
  /** Throws when this writer may not publish (it no longer holds the schedule lease); asked before each phase. */
  fence: () => Promise<void>;
  progress?: (message: string) => void;
  /** Requests under way at once while creating immutable objects (default 16). */
  concurrency?: number;
  /** Immutable files of this many bytes or more are streamed to the store (createFromFile), not read whole
   * (default STREAM_FROM). */
  streamFrom?: number;
}

/** The size from which an immutable file is streamed to the store instead of read whole: a day's ledger (97 MB at
 * 1,000,000 hashes, 9.25 GB at 100,000,000) and the larger index segments; tiles and entry bundles (8-9 KiB), the
 * days' signatures and tokens are read whole, at most `concurrency` × 4 MiB held at once. */
export const STREAM_FROM = 4 << 20;

export interface PublishReport {
  store: string;
  /** Immutable objects created, and those found already there with the same bytes. */
  created: number;
  present: number;
  /** Mutable objects replaced (or found already holding the working copy's bytes). */
  replaced: number;
  /** Retired index segments removed from the store. */
  removed: number;
  bytes: number;
  /** Files of the working copy whose change time was looked at: the copy's root, index/ and block-info/, and the
   * tile folders that changed (every file when there was no record). */
  looked: number;
  seconds: number;
}

/** Sends what changed in the working copy since the last publication (see the module comment). */
export async function publishWorkingCopy(options: PublishOptions): Promise<PublishReport> {
  const started = performance.now();
  const { folder, store } = options;
  const record = readRecord(folder, store.location);
  const scan = scanCopy(folder, record);
  const immutable = scan.changed.filter((rel) => cacheClass(rel) === 'immutable' && !record.immutable.has(rel));
  const mutable = scan.changed
    .filter((rel) => cacheClass(rel) !== 'immutable')
    .map((rel) => {
      const bytes = readOptional(folder, rel)!;
      return { rel, bytes, sha256: contentVersion(bytes) };
    })
    .filter((m) => record.mutable.get(m.rel)?.sha256 !== m.sha256)
    .sort((a, b) => mutableRank(a.rel) - mutableRank(b.rel) || (a.rel < b.rel ? -1 : 1));
  // Segments retired by a head published before this run, which the build has removed from the copy since.
  const retiring = [...record.retiring].filter((rel) => !fs.existsSync(path.join(folder, rel)));
  const removing = retiring.length > 0;
  const report: PublishReport = {
    store: store.location,
    created: 0,
    present: 0,
    replaced: 0,
    removed: 0,
    bytes: 0,
    looked: scan.looked,
    seconds: 0,
  };
  // Every file changed before the scan is in the store now. The immutable ones of this run stay in the record: a file
  // changed within the margin before `began` is looked at again next time, and is known, not sent again. So do the
  // record's when the last publication began within that margin too (files older than that are outside it).
  const complete = (): void => {
    const offered = scan.changed.filter((rel) => cacheClass(rel) === 'immutable');
    const recent = record.since !== undefined && record.since >= scan.began - SINCE_MARGIN_MS;
    record.immutable = new Set(recent ? [...record.immutable, ...offered] : offered);
    record.since = scan.began;
    record.folders = scan.folders;
  };
  if (immutable.length === 0 && mutable.length === 0 && !removing) {
    // Nothing sent: the versions are as they were; only the times move on.
    complete();
    savePublished(folder, record);
    report.seconds = (performance.now() - started) / 1000;
    return report;
  }
  await options.fence();
  try {
    options.progress?.(
      `publishing ${immutable.length} immutable and ${mutable.length} mutable objects to ${store.location}`,
    );
    let done = 0;
    const streamFrom = options.streamFrom ?? STREAM_FROM;
    await inParallel(immutable, options.concurrency ?? 16, async (rel) => {
      const file = path.join(folder, rel);
      const wentAway = (): never => {
        throw new TimesealError('not-found', `${file} went away while it was being published`);
      };
      const size = fs.statSync(file, { throwIfNoEntry: false })?.size ?? wentAway();
      const created =
        size >= streamFrom
          ? await store.createFromFile(rel, file)
          : await store.create(rel, readOptional(folder, rel) ?? wentAway());
      if (created) {
        report.created++;
        report.bytes += size;
      } else report.present++;
      record.immutable.add(rel);
      testPause('immutable', ++done);
    });
    // Segments the copy's head does not name: retired by a merge in the run that made them.
    const headBytes = readOptional(folder, INDEX_HEAD_PATH);
    const named = new Set(
      headBytes === undefined ? [] : parseIndexHead(fromUtf8(headBytes, INDEX_HEAD_PATH)).segments.map(segmentPath),
    );
    const unnamed = (rel: string): boolean => parseSegmentPath(rel) !== null && !named.has(rel);
    for (const rel of immutable) if (unnamed(rel)) record.retiring.add(rel);
    if (!record.listed && headBytes !== undefined) {
      for (const rel of await store.list('index/')) if (unnamed(rel)) record.retiring.add(rel);
      record.listed = true;
    }
    saveRecord(folder, record);

    await options.fence();
    testPause('mutable', 0);
    for (const [i, { rel, bytes, sha256 }] of mutable.entries()) {
      const known = record.mutable.get(rel);
      let version: string;
      try {
        version = await store.replace(rel, bytes, known?.version ?? null);
        report.bytes += bytes.length;
      } catch (err) {
        if (!(err instanceof StaleVersionError)) throw err;
        // Another writer replaced it. Holding exactly these bytes is no harm done; anything else is its newer
        // state, which this writer must not replace.
        const now = await store.readVersioned(rel);
        if (now === undefined || !equalBytes(now.bytes, bytes)) {
          throw new PublishConflictError(
            `${store.location}/${rel} was replaced by another writer since this one last read it (${err.message}); this writer no longer holds the schedule lease or ran on a stale working copy, so it publishes nothing more. The next run brings its working copy up to date from the store first`,
            { cause: err },
          );
        }
        version = now.version;
      }
      record.mutable.set(rel, { sha256, version });
      if (rel === INDEX_HEAD_PATH) noteHead(record, bytes);
      saveVersions(folder, record);
      report.replaced++;
      testPause('mutable', i + 1);
    }

    if (removing) {
      await options.fence();
      report.removed = await removeRetiredSegments(folder, store, record, retiring);
    }
    complete();
  } finally {
    saveRecord(folder, record);
  }
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

/** Notes the segments a head of the store names (one this writer published or read): those the previous one named
 * and this one does not are retiring (see the module comment). */
function noteHead(record: PublishRecord, bytes: Uint8Array): void {
  const named = parseIndexHead(fromUtf8(bytes, INDEX_HEAD_PATH)).segments.map(segmentPath);
  const now = new Set(named);
  for (const rel of record.head ?? []) if (!now.has(rel)) record.retiring.add(rel);
  for (const rel of named) record.retiring.delete(rel);
  record.head = named;
}

/** Removes from the store the segments of `retiring` (retired by a head published before this run, and removed
 * from the working copy by the build), unless this run's head names one again; returns how many. Called after this
 * run's head was published. */
async function removeRetiredSegments(
  folder: string,
  store: ArchiveStore,
  record: PublishRecord,
  retiring: readonly string[],
): Promise<number> {
  let removed = 0;
  for (const rel of retiring) {
    if (!record.retiring.has(rel)) continue;
    await store.remove(rel);
    record.retiring.delete(rel);
    removed++;
  }
  return removed;
}

export interface CatchUpOptions {
  folder: string;
  store: ArchiveStore;
  /** The log's public keys: the pull checks the store's archive against them, and the days' receipt signatures
   * against the receipt keys among them (current and retired: a working copy has no keys/ folder to pin them). */
  keys: PublicKeySet & Pick<PublicKeys, 'receipt' | 'retiredReceipt'>;
  /** The step that follows is `ledger build`, which makes again the days the store names beyond its checkpoint
   * (a publication cut short); any other step is refused on such a store, since it would publish a days.json
   * without them. */
  rebuilds?: boolean;
  progress?: (message: string) => void;
  /** Requests under way at once while an empty copy fetches the store's immutable objects (default 16). */
  concurrency?: number;
}

export interface CatchUpReport {
  /** 'current': the working copy holds what the store holds (or the store is empty); 'ahead': it holds more
   * (a publication cut short), sent next; 'pulled': it was behind and has been brought up to date. */
  state: 'current' | 'ahead' | 'pulled';
  pull?: MirrorReport;
}

const sameDay = (a: DayRecord, b: DayRecord | undefined): boolean =>
  b !== undefined && JSON.stringify(a) === JSON.stringify(b);

/** Brings the working copy up to date with the store before a step writes it (see the module comment). */
export async function catchUpWorkingCopy(options: CatchUpOptions): Promise<CatchUpReport> {
  const { folder, store } = options;
  const record = readRecord(folder, store.location);
  const remote = await store.readVersioned(DAYS_PATH);
  if (remote === undefined) return { state: 'current' };
  const known = record.mutable.get(DAYS_PATH);
  const adopt = async (state: CatchUpReport['state']): Promise<CatchUpReport> => {
    record.mutable.set(DAYS_PATH, { sha256: contentVersion(remote.bytes), version: remote.version });
    await learnVersions(folder, store, record);
    return { state };
  };
  const localBytes = readOptional(folder, DAYS_PATH);
  // Unchanged since this copy last published or read it, and the copy's still the same (not removed or replaced):
  // the record already holds the versions of what this copy published or read (no walk of the whole copy).
  if (known?.version === remote.version && localBytes !== undefined && contentVersion(localBytes) === known.sha256)
    return { state: 'current' };
  if (localBytes !== undefined && equalBytes(localBytes, remote.bytes)) return await adopt('current');
  const localDays = localBytes === undefined ? [] : parseDays(fromUtf8(localBytes, DAYS_PATH)).days;
  const remoteFile = parseDays(fromUtf8(remote.bytes, DAYS_PATH));
  const remoteDays = remoteFile.days;
  // The store names fewer days, all of them this copy's: a publication of this copy's was cut short.
  if (remoteDays.length < localDays.length && remoteDays.every((d, i) => sameDay(d, localDays[i])))
    return await adopt('ahead');
  const differs = localDays.findIndex((d, i) => !sameDay(d, remoteDays[i]));
  if (differs >= 0) {
    const day = localDays[differs]!;
    throw new PublishConflictError(
      `the working copy ${path.resolve(folder)} and the archive ${store.location} disagree on ${day.date} (${remoteDays[differs] === undefined ? 'not published there' : `ledger sha256 ${remoteDays[differs]!.sha256} there, ${day.sha256} here`}): this copy holds days no writer published; move it aside, and the next run starts again from the store`,
    );
  }
  // A publication cut short after days.json and before the latest checkpoint leaves the store's checkpoint behind
  // days.json: the pull takes the days the checkpoint covers, and the build makes the rest again from the database
  // (the same bytes, which the store's create-only writes compare with the objects already there).
  const covered = checkpointSize(await store.read(CHECKPOINT_PATH));
  const consistent = remoteDays.slice(0, remoteDays.findIndex((d) => d.treeSize === covered) + 1);
  if (consistent.length < remoteDays.length && options.rebuilds !== true) {
    throw new PublishConflictError(
      `${store.location}: days.json names ${remoteDays.length - consistent.length} day(s) after the latest checkpoint (a publication cut short); \`timeseal ledger build\` completes them before anything else is published`,
    );
  }
  if (consistent.length <= localDays.length) return await adopt('current');
  options.progress?.(
    `the working copy is behind ${store.location} (${localDays.length} of ${remoteDays.length} days): pulling and verifying`,
  );
  const view =
    consistent.length === remoteDays.length
      ? remote.bytes
      : new TextEncoder().encode(encodeDays({ ...remoteFile, days: consistent }));
  // A new host's copy is empty: it needs every immutable object, so they are fetched at once, 16 at a time, into a
  // folder beside the copy, and the pull reads them from there (and checks them all the same).
  const incoming = `${path.resolve(folder)}.incoming`;
  fs.rmSync(incoming, { recursive: true, force: true });
  try {
    const fetched =
      localBytes === undefined ? await fetchImmutable(store, incoming, options.concurrency ?? 16) : new Set<string>();
    const pull = await pullMirror({
      remote: storeReader(store, view, record, incoming, fetched),
      dir: folder,
      keys: options.keys,
      keyFiles: new Map(),
      receiptKeys: [...(options.keys.receipt ?? []), ...(options.keys.retiredReceipt ?? [])],
      ...(options.progress ? { progress: options.progress } : {}),
    });
    await learnVersions(folder, store, record);
    return { state: 'pulled', pull };
  } finally {
    fs.rmSync(incoming, { recursive: true, force: true });
  }
}

/** Every immutable object of the store (of index segments, those its head names), written under `dir` at its
 * archive path, `concurrency` at a time; returns their paths. */
async function fetchImmutable(store: ArchiveStore, dir: string, concurrency: number): Promise<Set<string>> {
  // Only the head's index segments are wanted: a store may still hold retired ones (the publication removes them
  // only once the writer's build has removed them from its copy, and stores published before it did so never).
  const head = await store.read(INDEX_HEAD_PATH);
  const named = new Set(
    head === undefined ? [] : parseIndexHead(fromUtf8(head, INDEX_HEAD_PATH)).segments.map(segmentPath),
  );
  const wanted = (await store.list('')).filter(
    (rel) => cacheClass(rel) === 'immutable' && (parseSegmentPath(rel) === null || named.has(rel)),
  );
  const fetched = new Set<string>();
  // Each object streamed to its file, never held: a day's ledger is 9.25 GB at 100,000,000 hashes.
  await inParallel(wanted, concurrency, async (rel) => {
    const body = await store.stream(rel);
    if (body === undefined) return;
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    await pipeline(body, fs.createWriteStream(path.join(dir, rel)));
    fetched.add(rel);
  });
  return fetched;
}

/**
 * Reads the version of every mutable object of the working copy that the record does not know yet (a copy that
 * never published, or whose record was lost), so that its replace is a compare-and-swap against what the store
 * holds now, while this writer holds the lease; then saves the record.
 */
async function learnVersions(folder: string, store: ArchiveStore, record: PublishRecord): Promise<void> {
  for (const rel of listFiles(folder)) {
    if (cacheClass(rel) === 'immutable' || record.mutable.has(rel)) continue;
    const found = await store.readVersioned(rel);
    if (found === undefined) continue;
    record.mutable.set(rel, { sha256: contentVersion(found.bytes), version: found.version });
    if (rel === INDEX_HEAD_PATH) noteHead(record, found.bytes);
  }
  saveRecord(folder, record);
}

/** The tree size of a checkpoint note (its second line, c2sp.org/tlog-checkpoint), or 0 when there is none. */
function checkpointSize(note: Uint8Array | undefined): number {
  if (note === undefined) return 0;
  const size = /^[^\n]+\n(\d+)\n/.exec(fromUtf8(note, CHECKPOINT_PATH))?.[1];
  if (size === undefined) throw new PublishConflictError(`${CHECKPOINT_PATH} in the store is not a checkpoint`);
  return Number(size);
}

/**
 * The store as an ArchiveReader for the pull, noting in `record` what it read: immutable objects as held, mutable
 * ones with the SHA-256 and version of the bytes the store holds. days.json is answered as `days` (the days the
 * store's checkpoint covers); the immutable objects in `fetched` from their copies under `incoming`.
 */
function storeReader(
  store: ArchiveStore,
  days: Uint8Array,
  record: PublishRecord,
  incoming: string,
  fetched: ReadonlySet<string>,
): ArchiveReader {
  const read = async (rel: string): Promise<Uint8Array | undefined> => {
    if (fetched.has(rel)) {
      record.immutable.add(rel);
      return fs.readFileSync(path.join(incoming, rel));
    }
    const found = await store.readVersioned(rel);
    if (found === undefined) return undefined;
    if (cacheClass(rel) === 'immutable') record.immutable.add(rel);
    else record.mutable.set(rel, { sha256: contentVersion(found.bytes), version: found.version });
    if (rel === INDEX_HEAD_PATH) noteHead(record, found.bytes);
    return rel === DAYS_PATH ? days : found.bytes;
  };
  // What the pull streams (a day's ledger, index segments) is streamed from the copy fetched or from the store
  // when immutable (its bytes need no version); a mutable object is small, read whole to note its version.
  const stream = async (rel: string): Promise<AsyncIterable<Uint8Array> | undefined> => {
    if (cacheClass(rel) !== 'immutable') return wholeStream(await read(rel));
    const body = fetched.has(rel)
      ? fs.createReadStream(path.join(incoming, rel), { highWaterMark: 1 << 20 })
      : await store.stream(rel);
    if (body !== undefined) record.immutable.add(rel);
    return body;
  };
  return archiveStoreReader(store.location, read, stream);
}
