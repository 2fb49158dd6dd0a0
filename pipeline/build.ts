// `timeseal ledger build`: turns each finished day's queued hashes into published, dual-signed archive files
// (docs/FORMAT.md; the commit point: §10). Order of writes, so that a process killed at any point leaves a valid
// archive and the next run completes it:
//   1. immutable files (tiles, entry bundles, the day's ledger, signatures, metadata, checkpoint, COSE receipt
//      signatures, the day's index segment — or, on a day whose segment the merge rule would merge at once with
//      the newest ones, that merged segment instead), each created atomically or found byte-identical;
//   2. a file-system barrier, then days.json — the commit point: a day is published once days.json names it;
//   3. the index head (index/segments.json) naming the day's (or merged) segment, the latest checkpoint and
//      ots_status.json, which every run re-derives from days.json.
// After the days, the index upkeep: the newest segments are merged while the rule still asks for it (after a run
// killed between the commit point and the head; core/index-segments.ts), and segment files that the head stopped
// naming in an earlier run are removed (pipeline/segment-files.ts).
// Rebuilding a published day reproduces every immutable file; a differing byte is a hard error.
// Within step 1, the day's ledger file is written in two parts (pipeline/ledger-file.ts): its entries to its temp
// file while the tree is hashed, and, once the root is known, its header before them; then it is hashed, renamed
// into place and signed.
import fs from 'node:fs';
import path from 'node:path';
import {
  CHECKPOINT_PATH,
  cosignaturesPath,
  DAYS_PATH,
  dayCheckpointPath,
  ecdsaSignaturePath,
  encodeDays,
  ledgerPath,
  mldsaSignaturePath,
  receiptSignaturePath,
  statementsPath,
  signaturesMetaPath,
  withCosignatures,
  type DayRecord,
} from '../core/archive.ts';
import { signCheckpoint } from '../core/checkpoint.ts';
import {
  parseCoseSign1,
  receiptHeader,
  receiptKeyName,
  receiptKid,
  signDayRoot,
  verifyDaySignature,
} from '../core/cose-receipt.ts';
import { encodeSignaturesMeta, keyFingerprints, verifyDayFilesDigested, verifyDayFilesStreamed } from '../core/day.ts';
import { equalBytes, toHex } from '../core/encoding.ts';
import { FormatError, MismatchError, TimesealError, withContext } from '../core/errors.ts';
import { mergeStart, segmentPath, type IndexHead, type Segment } from '../core/index-segments.ts';
import { isDate, LedgerReader, parseLedgerColumns, utcDate, type LedgerHeader } from '../core/ledger.ts';
import { treeHash } from '../core/merkle.ts';
import { ecdsaNoteSigner, mldsaNoteSigner, type NoteSigner } from '../core/note.ts';
import { ed25519NoteSigner, mldsa44CosignatureSigner } from '../core/cosignature.ts';
import { checkLogLines, logVerifiers } from '../core/log-keys.ts';
import { ecdsaSignDigest, mldsaSignMu } from '../core/sig.ts';
import { encodeDayStatements } from '../core/signed-statement.ts';
import { HASH_SIZE } from '../core/hash.ts';
import { tileHashReader, tilePath, TILE_WIDTH, TreeAppender } from '../core/tiles.ts';
import type { Clock } from '../runtime/clock.ts';
import { UsageError, type Config } from '../runtime/config.ts';
import type { Store } from '../store/store.ts';
import {
  forgetListings,
  readOptional,
  readPieces,
  removeStaleTemps,
  startArchiveWriteback,
  syncArchive,
  writeImmutable,
  writeMutable,
} from './files.ts';
import { renameCheckpointKeys, type PublicKeys, type SigningKeys } from '../runtime/keys.ts';
import { writeAnchorStatus } from './anchor/status.ts';
import { withLock, withLockAsync } from './lock.ts';
import { messageDigests, nodeSha256 } from '../runtime/node-hash.ts';
import { setting } from '../runtime/settings.ts';
import { nodeSha256Into, smallSha256 } from './small-sha256.ts';
import { hashedBatches, treeWorkers } from './tree-hashes.ts';
import { startHashFilesJob, WORKER_FROM_HASHES, type HashFilesJob } from './index-worker.ts';
import { startLedgerFile, type LedgerFile } from './ledger-file.ts';
import { stampedLedger, writeLedgerStamp } from './ledger-stamp.ts';
import { dayBatches, sortStoredDay, type SortedDay } from './day-sort.ts';
import { readState, type ArchiveState } from './archive-state.ts';
import {
  readIndexHead,
  removeUnnamedIndexFiles,
  segmentFiles,
  writeDaySegment,
  writeIndexHead,
  writeMergedSegment,
  type Written,
} from './segment-files.ts';

export interface BuildContext {
  config: Config;
  /** The submissions are read through the store (store/store.ts), whichever engine it is. */
  store: Store;
  clock: Clock;
  keys: SigningKeys;
  progress?: (message: string) => void;
}

export interface DayBuild {
  date: string;
  /** true: the day was already published and the rebuild reproduced it byte for byte. */
  alreadyPublished: boolean;
  entryCount: number;
  firstIndex: number;
  treeSize: number;
  root: string;
  ledgerSha256: string;
  /** Sorted runs of the day's rows spilled to the archive's disk and merged (pipeline/day-sort.ts): 0 when they
   * fitted TIMESEAL_BUILD_MEMORY_MB and were sorted in memory. */
  spilledRuns: number;
  /** The index segment the head names for the day: its own [firstIndex, treeSize), or the segment it was merged
   * into at once (from an older day's first leaf); null for a published day being rebuilt. */
  segment: Segment | null;
  filesWritten: number;
  bytesWritten: number;
  /** Wall time from the start of the day's build to its publication (head and latest checkpoint written). */
  seconds: number;
}

/** The index upkeep after the days of a run: merges and the removal of segment files no head names. */
export interface IndexUpkeep {
  /** Segments written by merging, each replacing the newest segments it covers. */
  merged: Segment[];
  /** Segment files (and files of the previous release's index) removed. */
  removed: number;
  segments: number;
  filesWritten: number;
  bytesWritten: number;
  seconds: number;
}

export interface PublishReport {
  days: DayBuild[];
  index: IndexUpkeep;
}

class WriteCounter {
  files = 0;
  bytes = 0;
  immutable(root: string, rel: string, data: Uint8Array): void {
    if (writeImmutable(root, rel, data)) {
      this.files++;
      this.bytes += data.length;
    }
  }
  /** A file written by other means (pipeline/ledger-file.ts): counted when it was written, not found identical. */
  published(result: { written: boolean; bytes: number }): void {
    if (result.written) {
      this.files++;
      this.bytes += result.bytes;
    }
  }
  mutable(root: string, rel: string, data: Uint8Array | string): void {
    writeMutable(root, rel, data);
    this.files++;
    this.bytes += typeof data === 'string' ? Buffer.byteLength(data) : data.length;
  }
}

function readTile(archive: string, level: number, index: number, width: number): Uint8Array {
  const rel = tilePath(level, index, width);
  const data = readOptional(archive, rel);
  if (data === undefined) throw new TimesealError('not-found', `tile ${rel} is missing from the archive`);
  return data;
}

/**
 * Checks a published day's files and that the tiles at its size give its root. `written`: the ledger file's
 * digests as the build that wrote it computed them, when it is still that very file (pipeline/ledger-stamp.ts):
 * the signatures, their metadata and the checkpoint are checked against those, and of the ledger only its header
 * is read (its date, size and root); without, the ledger is read whole, hashed and parsed.
 */
export function verifyPublishedDay(
  archive: string,
  keys: PublicKeys,
  day: DayRecord,
  written?: { sha256: Uint8Array; mu: Uint8Array; size: number },
): void {
  const read = (rel: string): Uint8Array => {
    const data = readOptional(archive, rel);
    if (data === undefined) throw new TimesealError('not-found', `${rel} is missing from the archive`);
    return data;
  };
  const files = {
    ecdsaSignature: read(ecdsaSignaturePath(day.date)),
    mldsaSignature: read(mldsaSignaturePath(day.date)),
    signaturesMeta: read(signaturesMetaPath(day.date)),
    checkpoint: read(dayCheckpointPath(day.date)),
  };
  const ledger = readPieces(archive, ledgerPath(day.date));
  if (ledger === undefined) throw new TimesealError('not-found', `${ledgerPath(day.date)} is missing from the archive`);
  const options = {
    digests: messageDigests,
    checkpointLines: (text: string, origin: string) => checkLogLines(text, logVerifiers(origin, keys)),
  };
  // The ledger read a few MB at a time, hashed and parsed as it comes: a day of any size in constant memory.
  const verified =
    written === undefined
      ? verifyDayFilesStreamed(day.date, files, ledger, keys, options)
      : verifyDayFilesDigested(
          day.date,
          files,
          { ...written, head: () => ledgerHeader(ledger, written.size) },
          keys,
          options,
        );
  if (verified.sha256 !== day.sha256)
    throw new MismatchError(`${ledgerPath(day.date)} sha256 (days.json)`, day.sha256, verified.sha256);
  if (verified.ledger.root !== day.root)
    throw new MismatchError(`${day.date} root (days.json)`, day.root, verified.ledger.root);
  const tilesRoot = toHex(
    treeHash(
      day.treeSize,
      tileHashReader(day.treeSize, (l, i, w) => readTile(archive, l, i, w), nodeSha256),
      nodeSha256,
    ),
  );
  if (tilesRoot !== day.root) throw new MismatchError(`tiles root at size ${day.treeSize}`, day.root, tilesRoot);
}

/** The header of a ledger file of `size` bytes, read from its first pieces only (the rest is not read). */
function ledgerHeader(pieces: Iterable<Uint8Array>, size: number): LedgerHeader {
  let head: LedgerHeader | undefined;
  const reader = new LedgerReader({ columns: false, totalBytes: size, onHeader: (h) => (head = h) });
  // 64 KiB at a time until the header is found: at most that many bytes of entries are parsed.
  for (const piece of pieces) {
    for (let o = 0; o < piece.length && head === undefined; o += 1 << 16) reader.push(piece.subarray(o, o + (1 << 16)));
    if (head !== undefined) break;
  }
  if (head === undefined) throw new FormatError('ledger', 'no entries array');
  return head;
}

/** Builds, signs and publishes the given day or every finished unpublished day. Returns what it did. */
export async function buildLedgers(ctx: BuildContext, options: { date?: string } = {}): Promise<DayBuild[]> {
  return (await publishLedgers(ctx, options)).days;
}

/** buildLedgers, and what the index upkeep after the days did (`upkeep: false` leaves it to a later run). */
export async function publishLedgers(
  ctx: BuildContext,
  options: { date?: string; upkeep?: boolean } = {},
): Promise<PublishReport> {
  if (options.date !== undefined) {
    if (!isDate(options.date)) throw new UsageError(`--date must be a date written YYYY-MM-DD: ${options.date}`);
    const today = utcDate(ctx.clock());
    if (options.date >= today) throw new UsageError(`${options.date} is not finished yet (today is ${today} UTC)`);
  }
  // Under the archive lock, held while the store is read (awaited); each day's rows are read, streamed, just
  // before the synchronous build of that day.
  return withArchiveAsync(ctx, async ({ state, head, retiredBefore }) => {
    const today = utcDate(ctx.clock());
    const last = state.days.at(-1);
    let targets: string[];
    // The days this run reads are closed first: once closeThrough resolves, every row of those days that will
    // ever be stored is committed, and an insert of one is refused (store/store.ts). Without it a node whose
    // clock lags, or an insert stalled across midnight, could acknowledge a row after its day was read, and
    // that row would be in no ledger. (A re-check of a published day reads nothing new and closes nothing.)
    if (options.date !== undefined) {
      const date = options.date; // checked above, before the lock
      if (!state.days.some((d) => d.date === date)) {
        // Closed before the look for earlier days, so that none can gain a row after it (a finished day, by
        // this clock: it stays closed when the build is refused).
        await ctx.store.submissions.closeThrough(date);
        const earlier = await ctx.store.submissions.dates(last?.date ?? '', date);
        if (earlier.length > 0) throw new UsageError(`publish ${earlier.join(', ')} first: days are appended in order`);
        if (last && date < last.date)
          throw new UsageError(`${date} is before the last published day ${last.date} and cannot be appended`);
      }
      targets = [date];
    } else {
      await ctx.store.submissions.closeThrough(utcDate(Date.parse(`${today}T00:00:00Z`) - 86_400_000));
      targets = await ctx.store.submissions.dates(last?.date ?? '', today);
    }
    const days: DayBuild[] = [];
    for (const date of targets) {
      try {
        const started = performance.now();
        // The day's SCITT Signed Statements (docs/FORMAT.md §12): closed with the day, each stored with its row.
        const statements = (await ctx.store.statements.forDay(date)).map((s) => s.bytes);
        const day = await sortStoredDay(ctx.store.submissions, date, {
          archive: ctx.config.archive,
          memoryBytes: ctx.config.buildMemoryMb * 2 ** 20,
        });
        try {
          crashPoint('sorted', date);
          days.push(buildDay(ctx, state, head, date, day, statements, started));
        } finally {
          day.dispose();
        }
      } catch (err) {
        throw withContext(`ledger ${date}`, err);
      }
    }
    writeOtsStatus(ctx, state);
    let index: IndexUpkeep;
    try {
      index = options.upkeep === false ? noUpkeep(head) : upkeepIndex(ctx, head, retiredBefore);
    } catch (err) {
      throw upkeepFailed(days, err);
    }
    return { days, index };
  });
}

/**
 * An index upkeep that failed after the run's days were published (ENOSPC while merging, say): the message says
 * the days are published and only the upkeep failed, so that nobody takes them for lost. Nothing is: a merged
 * segment is written to a temporary file that the head names only once it is complete, so the head still
 * names the unmerged segments, lookups use them, and the next run merges again.
 */
function upkeepFailed(days: readonly DayBuild[], err: unknown): TimesealError {
  const published =
    days.length === 0 ? 'Every published day is served' : `${days.map((d) => d.date).join(', ')}: published and served`;
  return withContext(
    `${published}; only the index upkeep after the publication failed (lookups use the unmerged index segments until a later \`timeseal ledger build\` merges them)`,
    err,
  );
}

/** The index upkeep alone (what publishLedgers does after the days), for a run that left it out. */
export function upkeepArchiveIndex(ctx: BuildContext): IndexUpkeep {
  return withArchive(ctx, ({ head, retiredBefore }) => upkeepIndex(ctx, head, retiredBefore));
}

/**
 * Runs `work` holding the archive lock, on an archive brought up to date with days.json (completeMutableFiles).
 * `retiredBefore` says which segment files the head already did not name when the run began: retired by an
 * earlier run's merges, so a reader that fetched an older head has had at least one run's interval to finish
 * with them, and this run's upkeep may remove them.
 */
type ArchiveRun = { state: ArchiveState; head: IndexHead; retiredBefore: (segment: Segment) => boolean };

function withArchive<T>(ctx: BuildContext, work: (run: ArchiveRun) => T): T {
  const archive = ctx.config.archive;
  fs.mkdirSync(archive, { recursive: true });
  return withLock(archiveLock(ctx), () => work(openArchiveRun(ctx)));
}

/** withArchive for a run that awaits (reading the store) while it holds the lock. */
function withArchiveAsync<T>(ctx: BuildContext, work: (run: ArchiveRun) => Promise<T>): Promise<T> {
  fs.mkdirSync(ctx.config.archive, { recursive: true });
  return withLockAsync(archiveLock(ctx), () => work(openArchiveRun(ctx)));
}

const archiveLock = (ctx: BuildContext): string => path.join(path.dirname(path.resolve(ctx.config.db)), 'archive.lock');

function openArchiveRun(ctx: BuildContext): ArchiveRun {
  const archive = ctx.config.archive;
  // Another process may have written the archive since this one last did (a server runs builds for days).
  forgetListings();
  removeStaleTemps(archive);
  const state = readState(archive, ctx.config.logOrigin);
  const head = completeMutableFiles(ctx, state);
  const named = new Set(head.segments.map(segmentPath));
  const retired = new Set(
    segmentFiles(archive)
      .map(segmentPath)
      .filter((rel) => !named.has(rel)),
  );
  return { state, head, retiredBefore: (segment) => retired.has(segmentPath(segment)) };
}

/** The newest segments of `head` that the day's segment [oldSize, oldSize + count) would be merged with at once
 * (none when it would stand alone); they end at oldSize, as the head does before the day. */
function mergedWithDay(head: IndexHead, oldSize: number, count: number): Segment[] {
  if (head.treeSize !== oldSize) return [];
  const start = mergeStart([...head.segments, { from: oldSize, to: oldSize + count }]);
  return start < 0 ? [] : head.segments.slice(start);
}

function noUpkeep(head: IndexHead): IndexUpkeep {
  return { merged: [], removed: 0, segments: head.segments.length, filesWritten: 0, bytesWritten: 0, seconds: 0 };
}

/**
 * After a crash between the commit point and the end of a run, or on an archive made before index segments:
 * the index head and the latest checkpoint follow days.json. Every published day the head does not cover gets
 * its segment (written from its ledger file, or found byte-identical where the crashed run wrote it); segment
 * files of unpublished leaves (an unfinished build) are removed, since a rerun may publish other hashes
 * there. Returns the head, which covers every published day.
 */
function completeMutableFiles(ctx: BuildContext, state: ArchiveState): IndexHead {
  const archive = ctx.config.archive;
  const last = state.days.at(-1);
  const head = readIndexHead(archive);
  const size = last?.treeSize ?? 0;
  if (head.treeSize > size)
    throw new MismatchError(`tree size of index/segments.json (days.json)`, String(size), String(head.treeSize));
  removeUnnamedIndexFiles(archive, head, (segment) => segment.to > size, { legacy: false });
  if (!last) return head;
  const missing = state.days.filter((d) => d.firstIndex >= head.treeSize);
  if (missing.length > 0) {
    const written: Written = { files: 0, bytes: 0 };
    for (const day of missing) {
      ctx.progress?.(`indexing ${day.date}`);
      const ledger = readOptional(archive, ledgerPath(day.date));
      if (ledger === undefined) throw new TimesealError('not-found', `${ledgerPath(day.date)} is missing`);
      const columns = parseLedgerColumns(ledger);
      head.segments.push(writeDaySegment(archive, day.firstIndex, columns.ms.length, dayBatches(columns), written));
    }
    head.treeSize = size;
    syncArchive(archive);
    writeIndexHead(archive, head);
    syncArchive(archive);
  }
  // Only now that a head covering every day is on disk: the previous release's index goes.
  removeUnnamedIndexFiles(archive, head, () => false, { legacy: true });
  const dayCheckpoint = readOptional(archive, dayCheckpointPath(last.date));
  if (dayCheckpoint === undefined) throw new TimesealError('not-found', `${dayCheckpointPath(last.date)} is missing`);
  // The latest checkpoint is the last day's, followed by the witnesses' cosignatures of it (pipeline/witness.ts).
  const expected = withCosignatures(dayCheckpoint, readOptional(archive, cosignaturesPath(last.date)));
  const latest = readOptional(archive, CHECKPOINT_PATH);
  if (latest === undefined || Buffer.compare(latest, expected) !== 0) writeMutable(archive, CHECKPOINT_PATH, expected);
  return head;
}

/**
 * The index upkeep after publication: merges the newest segments while core/index-segments.ts mergeStart asks
 * for it (the merged segment is written and synced before the head names it), then removes the segment files that
 * `removable` allows among those the head does not name.
 */
function upkeepIndex(ctx: BuildContext, head: IndexHead, removable: (segment: Segment) => boolean): IndexUpkeep {
  const started = performance.now();
  const archive = ctx.config.archive;
  const written: Written = { files: 0, bytes: 0 };
  const merged: Segment[] = [];
  for (let start = mergeStart(head.segments); start >= 0; start = mergeStart(head.segments)) {
    const inputs = head.segments.slice(start);
    ctx.progress?.(`merging ${inputs.length} index segments (leaves ${inputs[0]!.from}–${inputs.at(-1)!.to - 1})`);
    const segment = writeMergedSegment(archive, inputs, written);
    syncArchive(archive);
    head.segments.splice(start, inputs.length, segment);
    writeIndexHead(archive, head, written);
    merged.push(segment);
  }
  const removed = removeUnnamedIndexFiles(archive, head, removable, { legacy: false });
  // Flushed so that the file system may reuse the freed inodes soon (ext4 without a journal skips inodes freed
  // in the last 60 s, 360 s while their table block is dirty, which slows the next build's file creation).
  if (removed > 0) syncArchive(archive);
  const seconds = (performance.now() - started) / 1000;
  return {
    merged,
    removed,
    segments: head.segments.length,
    filesWritten: written.files,
    bytesWritten: written.bytes,
    seconds,
  };
}

/**
 * Crash-safety tests only (test/cli/build-commit.test.ts, build-external-sort.test.ts): TIMESEAL_TEST_KILL_AT=
 * <point>[@<date>] makes the build kill itself with SIGKILL at that point of its write order (of that day's
 * build), as a power cut or the OOM killer would. Points: sorted (the day's rows sorted, an external sort's
 * files in .tmp/, nothing of the day written), ledger-entries (the tree's files written, the ledger's entries in
 * its temp file in .tmp/, its header not), day-files (every file of the day written, before the barrier and days.json), days.json
 * (right after the commit point), head (after the index head), checkpoint (after the latest checkpoint).
 */
function crashPoint(point: string, date?: string): void {
  const at = setting(process.env, 'TIMESEAL_TEST_KILL_AT');
  if (at === undefined) return;
  const [wanted, day] = at.split('@');
  if (wanted === point && (day === undefined || day === date)) process.kill(process.pid, 'SIGKILL');
}

function buildDay(
  ctx: BuildContext,
  state: ArchiveState,
  head: IndexHead,
  date: string,
  day: SortedDay,
  statements: readonly Uint8Array[],
  started: number,
): DayBuild {
  const archive = ctx.config.archive;
  const position = state.days.findIndex((d) => d.date === date);
  const alreadyPublished = position >= 0;
  const previous = alreadyPublished ? state.days[position - 1] : state.days.at(-1);
  if (previous) {
    // The tree it extends (tiles root at the previous size, the signed checkpoint) always; the previous ledger
    // file read whole only when it is not, untouched, the file this archive's build wrote (docs/DECISIONS.md).
    const written = stampedLedger(ctx.config.db, archive, previous.date, previous.sha256);
    ctx.progress?.(
      written === undefined
        ? `re-verifying ${previous.date} before extending the log`
        : `re-verifying ${previous.date}'s signed files and tiles before extending the log (its ledger file is the one this build wrote)`,
    );
    verifyPublishedDay(archive, ctx.keys.public, previous, written);
  }
  const oldSize = previous?.treeSize ?? 0;
  // A day whose segment the upkeep would merge at once with the newest ones (core/index-segments.ts mergeStart)
  // gets the merged segment written directly, beside the tree, instead of its own one written and read back.
  const mergeWith = alreadyPublished ? [] : mergedWithDay(head, oldSize, day.count);
  if (mergeWith.length > 0)
    ctx.progress?.(
      `${date}: its index segment merged with ${mergeWith.length} older ones (leaves ${mergeWith[0]!.from}–${oldSize + day.count - 1})`,
    );
  const out = new WriteCounter();
  const { record, checkpoint, hashFiles, ledgerDigests } = writeDayFiles(
    ctx,
    state,
    date,
    day,
    statements,
    previous,
    oldSize,
    alreadyPublished,
    mergeWith,
    out,
  );
  const written = hashFiles.wait();
  if (!alreadyPublished) writeLedgerStamp(ctx.config.db, archive, date, ledgerDigests);
  // Nothing reads the day's sorted entries any more: an external sort's files go before the barrier below, which
  // would otherwise write them to disk (400 MB for 10 M hashes) only for them to be removed after it.
  day.dispose();
  out.files += written.files;
  out.bytes += written.bytes;
  if (alreadyPublished) {
    const published = state.days[position]!;
    if (JSON.stringify(published) !== JSON.stringify(record)) {
      throw new MismatchError(`${date} in days.json`, JSON.stringify(published), JSON.stringify(record));
    }
  } else {
    crashPoint('day-files', date);
    syncArchive(archive);
    state.days.push(record);
    out.mutable(archive, DAYS_PATH, encodeDays(state));
    crashPoint('days.json', date);
    head.segments.splice(head.segments.length - mergeWith.length, mergeWith.length, {
      from: mergeWith[0]?.from ?? oldSize,
      to: record.treeSize,
    });
    head.treeSize = record.treeSize;
    writeIndexHead(archive, head, out);
    crashPoint('head', date);
    out.mutable(archive, CHECKPOINT_PATH, checkpoint);
    crashPoint('checkpoint', date);
  }
  const { entryCount, treeSize, root, sha256: ledgerSha256 } = record;
  const seconds = (performance.now() - started) / 1000;
  return {
    date,
    alreadyPublished,
    entryCount,
    firstIndex: oldSize,
    treeSize,
    root,
    ledgerSha256,
    spilledRuns: day.runs,
    segment: alreadyPublished ? null : { from: mergeWith[0]?.from ?? oldSize, to: treeSize },
    filesWritten: out.files,
    bytesWritten: out.bytes,
    seconds,
  };
}

/** Everything of one day but the commit: tiles, the ledger, its two signatures, their metadata and the day's
 * checkpoint here, and the entry bundles and the day's index segment on a worker thread (the returned job;
 * the caller waits for it before the commit point). */
function writeDayFiles(
  ctx: BuildContext,
  state: ArchiveState,
  date: string,
  day: SortedDay,
  statements: readonly Uint8Array[],
  previous: DayRecord | undefined,
  oldSize: number,
  alreadyPublished: boolean,
  mergeWith: readonly Segment[],
  out: WriteCounter,
): {
  record: DayRecord;
  checkpoint: string;
  hashFiles: HashFilesJob;
  ledgerDigests: { sha256: Uint8Array; mu: Uint8Array };
} {
  const archive = ctx.config.archive;
  if (day.count === 0) throw new UsageError(`no submissions for ${date}`);
  ctx.progress?.(`${date}: ${day.count} hashes`);
  const newSize = oldSize + day.count;
  // The entry bundles and the day's index segment need only the sorted hashes and their leaf numbers, so a
  // worker thread writes them while this thread hashes the tree, writes tiles, and signs. A published day
  // being rebuilt gets its bundles compared; its segment may since have been merged into a larger one.
  const hashFiles = startHashFilesJob(archive, oldSize, day.data, { index: !alreadyPublished, mergeWith });
  const { ecdsaSecret, mldsaSecret } = ctx.keys;
  const pub = ctx.keys.public;
  let ledger: LedgerFile | undefined;
  try {
    // The ledger file's entries go to its temp file while the tree is hashed (a big day's on a worker thread of
    // their own), its header, which holds the root, after; then the file is hashed (SHA-256 and ML-DSA's μ) and
    // published (pipeline/ledger-file.ts).
    const head = {
      origin: state.origin,
      date,
      firstIndex: oldSize,
      treeSize: newSize,
      previous: previous ? { date: previous.date, sha256: previous.sha256 } : null,
    };
    ledger = startLedgerFile(archive, ledgerPath(date), head, day.data, pub.mldsa, {
      onWorker: day.count >= WORKER_FROM_HASHES,
    });
    const appended = appendToTree(archive, out, oldSize, day);
    if (appended.size !== newSize)
      throw new MismatchError('tree size after appending the day', String(newSize), String(appended.size));
    const root = toHex(appended.root);

    ledger.entriesWritten();
    // The ledger file's entries, the tiles and most bundles are written: the disk writes them out while the file
    // is hashed and the bundles and segment are finished, instead of all at the barrier before the commit.
    if (day.count >= WORKER_FROM_HASHES) startArchiveWriteback(archive);
    crashPoint('ledger-entries', date);
    const ledgerFile = ledger.finish(root);
    out.published(ledgerFile);
    const { sha256: digest, mu } = ledgerFile;
    const ledgerSha256 = toHex(digest);
    const checkpoint = signCheckpoint(
      { origin: state.origin, size: appended.size, root: appended.root },
      checkpointSigners(ctx, state),
    );
    out.immutable(archive, ecdsaSignaturePath(date), ecdsaSignDigest(digest, ecdsaSecret));
    out.immutable(archive, mldsaSignaturePath(date), mldsaSignMu(mu, mldsaSecret));
    out.immutable(
      archive,
      signaturesMetaPath(date),
      encodeSignaturesMeta(date, ledgerFile.bytes, ledgerSha256, keyFingerprints(pub)),
    );
    out.immutable(archive, dayCheckpointPath(date), Buffer.from(checkpoint));
    writeReceiptSignatures(ctx, out, state.origin, date, appended.root, alreadyPublished);
    if (statements.length > 0)
      out.immutable(archive, statementsPath(date), encodeDayStatements(statements, nodeSha256));

    const record: DayRecord = {
      date,
      firstIndex: oldSize,
      entryCount: day.count,
      treeSize: appended.size,
      root,
      sha256: ledgerSha256,
    };
    return { record, checkpoint, hashFiles, ledgerDigests: { sha256: digest, mu } };
  } catch (err) {
    // Never leave a worker writing the archive after this build has failed (serve runs the next one).
    ledger?.abandon();
    try {
      hashFiles.wait();
    } catch {
      // the build's own error is the one to report
    }
    throw err;
  }
}

/**
 * The day's COSE receipt signatures over its root (docs/FORMAT.md §11), one per receipt key, before the commit
 * point like every file of the day. A published day being rebuilt reproduces those it has byte for byte and gains
 * none (a day published before the archive had receipt keys keeps none); one signed by a key rotated out since
 * (keys/receipt-keys.retired) is checked with that key instead.
 */
function writeReceiptSignatures(
  ctx: BuildContext,
  out: WriteCounter,
  origin: string,
  date: string,
  root: Uint8Array,
  alreadyPublished: boolean,
): void {
  const archive = ctx.config.archive;
  for (const key of ctx.keys.receipt ?? []) {
    const rel = receiptSignaturePath(date, receiptKeyName(key.alg));
    const published = alreadyPublished ? readOptional(archive, rel) : undefined;
    if (alreadyPublished && published === undefined) continue;
    const retired = ctx.keys.public.retiredReceipt ?? [];
    if (published !== undefined && retired.length > 0) {
      const kid = receiptHeader(parseCoseSign1(published, rel), rel).kid;
      if (!equalBytes(kid, receiptKid(key))) {
        verifyDaySignature(published, { origin, date, root }, retired);
        continue;
      }
    }
    out.immutable(archive, rel, signDayRoot(root, key, origin, date));
  }
}

/** Appends the day's entries to the tree, a batch at a time, writing each new tile once it is complete; returns
 * the new size and root. The leaf hashes and level-0 tile roots of a big day's batches are computed on worker
 * threads too (tree-hashes.ts). Holds a few batches' leaf hashes and the rightmost tile of each level. */
function appendToTree(
  archive: string,
  out: WriteCounter,
  oldSize: number,
  day: SortedDay,
): { size: number; root: Uint8Array } {
  const reader = tileHashReader(oldSize, (l, i, w) => readTile(archive, l, i, w), smallSha256);
  // While a batch a worker hashed is pushed, its whole level-0 tiles are the ones that worker wrote.
  let wrote: { from: number; to: number } | undefined;
  const tree = new TreeAppender(
    oldSize,
    day.count,
    reader,
    smallSha256,
    (tile) => {
      const first = tile.index * TILE_WIDTH;
      if (tile.level === 0 && wrote !== undefined && first >= wrote.from && first + tile.width <= wrote.to) return;
      out.immutable(archive, tilePath(tile.level, tile.index, tile.width), tile.data);
    },
    nodeSha256Into,
  );
  let start = oldSize;
  for (const batch of hashedBatches(day.data, oldSize, treeWorkers(day.data), archive)) {
    const n = batch.leaves.length / HASH_SIZE;
    wrote = batch.written && { from: start, to: start + n };
    if (batch.written) {
      out.files += batch.written.files;
      out.bytes += batch.written.bytes;
    }
    tree.push(batch.leaves, batch.tileRoots);
    start += n;
  }
  wrote = undefined;
  return tree.finish();
}

/** ots_status.json and block_info.json for the published days (pipeline/anchor/status.ts owns their content). */
export function writeOtsStatus(ctx: BuildContext, state: ArchiveState): void {
  writeAnchorStatus(ctx.config.archive, state.days, ctx.clock());
}

/**
 * The checkpoint's signers (docs/FORMAT.md §4): ECDSA P-256 and ML-DSA-65, then, when the archive has them, the
 * Ed25519 line (0x01) and the ML-DSA-44 cosignature line (0x06, timestamp 0) that witnesses know.
 */
function checkpointSigners(ctx: BuildContext, state: ArchiveState): NoteSigner[] {
  const { keys } = ctx;
  const origin = state.origin;
  const signers = [
    ecdsaNoteSigner(origin, keys.ecdsaSecret, keys.public.ecdsa),
    mldsaNoteSigner(origin, keys.mldsaSecret, keys.public.mldsa),
  ];
  if (keys.ed25519Seed === undefined || keys.mldsa44Seed === undefined) return signers;
  if (keys.public.checkpointKeyName !== origin) {
    // Keys made before TIMESEAL_ORIGIN was set: while nothing is published, their vkeys take the log's name.
    if (state.days.length > 0) {
      throw new MismatchError(
        'name of the checkpoint keys (keys/ed25519.vkey, keys/mldsa44.vkey) and log origin',
        origin,
        String(keys.public.checkpointKeyName),
      );
    }
    renameCheckpointKeys(ctx.config.keys, keys, origin);
  }
  return [...signers, ed25519NoteSigner(origin, keys.ed25519Seed), mldsa44CosignatureSigner(origin, keys.mldsa44Seed)];
}
