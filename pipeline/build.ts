// `timeseal ledger build`: turns each finished day's queued hashes into published, dual-signed archive files
// (DESIGN.md §2, docs/FORMAT.md). Order of writes, so that a process killed at any point leaves a valid
// archive and the next run completes it:
//   1. immutable files (tiles, entry bundles, the day's ledger, signatures, metadata, checkpoint),
//      each created atomically or found byte-identical;
//   2. the index shards and index-sha256.json (mutable; records of an unfinished earlier attempt are dropped);
//   3. a file-system barrier, then days.json — the commit point: a day is published once days.json names it;
//   4. the latest checkpoint and ots_status.json, which every run re-derives from days.json.
// Rebuilding a published day reproduces every immutable file; a differing byte is a hard error.
import fs from 'node:fs';
import path from 'node:path';
import {
  CHECKPOINT_PATH,
  DAYS_PATH,
  dayCheckpointPath,
  ecdsaSignaturePath,
  encodeDays,
  encodeOtsStatus,
  INDEX_JSON_PATH,
  ledgerPath,
  mldsaSignaturePath,
  OTS_STATUS_PATH,
  parseDays,
  signaturesMetaPath,
  type DayRecord,
} from '../core/archive.ts';
import { signCheckpoint } from '../core/checkpoint.ts';
import { encodeSignaturesMeta, keyFingerprints, verifyDayFiles } from '../core/day.ts';
import { fromHex, fromUtf8, toHex } from '../core/encoding.ts';
import { MismatchError, TimesealError, withContext } from '../core/errors.ts';
import {
  encodeShard,
  indexJsonChunks,
  mergeRecords,
  parseShard,
  shardDigits,
  shardDir,
  type ShardRecord,
} from '../core/index-shard.ts';
import { encodeLedger, isDate, utcDate, type Ledger } from '../core/ledger.ts';
import { leafHash, treeHash } from '../core/merkle.ts';
import { ecdsaNoteSigner, mldsaNoteSigner } from '../core/note.ts';
import { ecdsaSignDigest, mldsaSignMu } from '../core/sig.ts';
import { appendLeaves, encodeEntryBundle, entryBundlePath, parseEntryBundle, tileHashReader, tilePath, TILE_WIDTH } from '../core/tiles.ts';
import type { Clock } from './clock.ts';
import { UsageError, type Config } from './config.ts';
import type { DB } from './db.ts';
import { readOptional, removeStaleTemps, syncArchive, writeImmutable, writeMutable, writeMutableChunks } from './files.ts';
import type { SigningKeys, PublicKeys } from './keys.ts';
import { writeAnchorStatus } from './anchor/status.ts';
import { withLock } from './lock.ts';
import { mldsaMu, nodeSha256 } from './node-hash.ts';
import { smallSha256 } from './small-sha256.ts';
import { datesWithSubmissions, dayEntries } from './queue.ts';

export interface BuildContext {
  config: Config;
  db: DB;
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
  filesWritten: number;
  bytesWritten: number;
}

interface ArchiveState {
  origin: string;
  days: DayRecord[];
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
  mutable(root: string, rel: string, data: Uint8Array | string): void {
    writeMutable(root, rel, data);
    this.files++;
    this.bytes += typeof data === 'string' ? Buffer.byteLength(data) : data.length;
  }
}

export function readState(archive: string, origin: string): ArchiveState {
  const raw = readOptional(archive, DAYS_PATH);
  if (raw === undefined) return { origin, days: [] };
  const state = parseDays(fromUtf8(raw, DAYS_PATH));
  if (state.origin !== origin) {
    throw new MismatchError(
      `log origin of ${archive} (an archive's origin never changes; check TIMESEAL_ORIGIN)`,
      state.origin,
      origin,
    );
  }
  return state;
}

function readTile(archive: string, level: number, index: number, width: number): Uint8Array {
  const rel = tilePath(level, index, width);
  const data = readOptional(archive, rel);
  if (data === undefined) throw new TimesealError('not-found', `tile ${rel} is missing from the archive`);
  return data;
}

/** Checks a published day's files and that the tiles at its size give its root. */
export function verifyPublishedDay(archive: string, keys: PublicKeys, day: DayRecord): void {
  const read = (rel: string): Uint8Array => {
    const data = readOptional(archive, rel);
    if (data === undefined) throw new TimesealError('not-found', `${rel} is missing from the archive`);
    return data;
  };
  const files = {
    ledger: read(ledgerPath(day.date)),
    ecdsaSignature: read(ecdsaSignaturePath(day.date)),
    mldsaSignature: read(mldsaSignaturePath(day.date)),
    signaturesMeta: read(signaturesMetaPath(day.date)),
    checkpoint: read(dayCheckpointPath(day.date)),
  };
  const verified = verifyDayFiles(day.date, files, keys, { hasher: nodeSha256, mu: mldsaMu });
  if (verified.sha256 !== day.sha256) throw new MismatchError(`${ledgerPath(day.date)} sha256 (days.json)`, day.sha256, verified.sha256);
  if (verified.ledger.root !== day.root) throw new MismatchError(`${day.date} root (days.json)`, day.root, verified.ledger.root);
  const tilesRoot = toHex(treeHash(day.treeSize, tileHashReader(day.treeSize, (l, i, w) => readTile(archive, l, i, w), nodeSha256), nodeSha256));
  if (tilesRoot !== day.root) throw new MismatchError(`tiles root at size ${day.treeSize}`, day.root, tilesRoot);
}

/** Builds, signs and publishes the given day or every finished unpublished day. Returns what it did. */
export function buildLedgers(ctx: BuildContext, options: { date?: string } = {}): DayBuild[] {
  const archive = ctx.config.archive;
  if (options.date !== undefined) {
    if (!isDate(options.date)) throw new UsageError(`--date must be a date written YYYY-MM-DD: ${options.date}`);
    const today = utcDate(ctx.clock());
    if (options.date >= today) throw new UsageError(`${options.date} is not finished yet (today is ${today} UTC)`);
  }
  fs.mkdirSync(archive, { recursive: true });
  return withLock(path.join(path.dirname(path.resolve(ctx.config.db)), 'archive.lock'), () => {
    removeStaleTemps(archive);
    const state = readState(archive, ctx.config.logOrigin);
    completeMutableFiles(ctx, state);
    const today = utcDate(ctx.clock());
    const last = state.days.at(-1);
    let targets: string[];
    if (options.date !== undefined) {
      const date = options.date;
      if (!isDate(date)) throw new UsageError(`--date must be a date written YYYY-MM-DD: ${date}`);
      if (date >= today) throw new UsageError(`${date} is not finished yet (today is ${today} UTC)`);
      if (!state.days.some((d) => d.date === date)) {
        const earlier = datesWithSubmissions(ctx.db, last?.date ?? '', date);
        if (earlier.length > 0) throw new UsageError(`publish ${earlier.join(', ')} first: days are appended in order`);
        if (last && date < last.date) throw new UsageError(`${date} is before the last published day ${last.date} and cannot be appended`);
      }
      targets = [date];
    } else {
      targets = datesWithSubmissions(ctx.db, last?.date ?? '', today);
    }
    const results: DayBuild[] = [];
    for (const date of targets) {
      try {
        results.push(buildDay(ctx, state, date));
      } catch (err) {
        throw withContext(`ledger ${date}`, err);
      }
    }
    writeOtsStatus(ctx, state);
    return results;
  });
}

/** After a crash between the commit point and the end of a run: the latest checkpoint follows days.json. */
function completeMutableFiles(ctx: BuildContext, state: ArchiveState): void {
  const archive = ctx.config.archive;
  const last = state.days.at(-1);
  if (!last) return;
  const dayCheckpoint = readOptional(archive, dayCheckpointPath(last.date));
  if (dayCheckpoint === undefined) throw new TimesealError('not-found', `${dayCheckpointPath(last.date)} is missing`);
  const latest = readOptional(archive, CHECKPOINT_PATH);
  if (latest === undefined || Buffer.compare(latest, dayCheckpoint) !== 0) writeMutable(archive, CHECKPOINT_PATH, dayCheckpoint);
  removeOtherIndexes(archive, shardDigits(last.treeSize));
}

/** Once days.json names a size, only the index at that size's prefix length is current. */
function removeOtherIndexes(archive: string, digits: number): void {
  const indexRoot = path.join(archive, 'index');
  for (const name of fs.existsSync(indexRoot) ? fs.readdirSync(indexRoot) : []) {
    if (name !== String(digits)) fs.rmSync(path.join(indexRoot, name), { recursive: true, force: true });
  }
}

function buildDay(ctx: BuildContext, state: ArchiveState, date: string): DayBuild {
  const archive = ctx.config.archive;
  const position = state.days.findIndex((d) => d.date === date);
  const alreadyPublished = position >= 0;
  const previous = alreadyPublished ? state.days[position - 1] : state.days.at(-1);
  if (previous) {
    ctx.progress?.(`re-verifying ${previous.date} before extending the log`);
    verifyPublishedDay(archive, ctx.keys.public, previous);
  }
  const rows = dayEntries(ctx.db, date);
  if (rows.length === 0) throw new UsageError(`no submissions for ${date}`);
  ctx.progress?.(`${date}: ${rows.length} hashes`);
  const oldSize = previous?.treeSize ?? 0;
  const entries = rows.map((r) => fromHex(r.hash, 'hash'));
  const leafHashes = entries.map((e) => leafHash(e, smallSha256));
  const reader = tileHashReader(oldSize, (l, i, w) => readTile(archive, l, i, w), smallSha256);
  const appended = appendLeaves(oldSize, reader, leafHashes, smallSha256);
  const root = toHex(appended.root);
  const out = new WriteCounter();

  for (const tile of appended.tiles) out.immutable(archive, tilePath(tile.level, tile.index, tile.width), tile.data);
  writeEntryBundles(archive, out, oldSize, entries);

  const ledger: Ledger = {
    origin: state.origin,
    date,
    firstIndex: oldSize,
    treeSize: appended.size,
    root,
    previous: previous ? { date: previous.date, sha256: previous.sha256 } : null,
    entries: rows,
  };
  const ledgerBytes = encodeLedger(ledger);
  const digest = nodeSha256(ledgerBytes);
  const ledgerSha256 = toHex(digest);
  const { ecdsaSecret, mldsaSeed } = ctx.keys;
  const pub = ctx.keys.public;
  const checkpoint = signCheckpoint({ origin: state.origin, size: appended.size, root: appended.root }, [
    ecdsaNoteSigner(state.origin, ecdsaSecret, pub.ecdsa),
    mldsaNoteSigner(state.origin, mldsaSeed, pub.mldsa),
  ]);
  out.immutable(archive, ledgerPath(date), ledgerBytes);
  out.immutable(archive, ecdsaSignaturePath(date), ecdsaSignDigest(digest, ecdsaSecret));
  out.immutable(archive, mldsaSignaturePath(date), mldsaSignMu(mldsaMu(pub.mldsa, ledgerBytes), mldsaSeed));
  out.immutable(archive, signaturesMetaPath(date), encodeSignaturesMeta(date, ledgerBytes.length, ledgerSha256, keyFingerprints(pub)));
  out.immutable(archive, dayCheckpointPath(date), Buffer.from(checkpoint));

  const record: DayRecord = { date, firstIndex: oldSize, entryCount: rows.length, treeSize: appended.size, root, sha256: ledgerSha256 };
  if (alreadyPublished) {
    const published = state.days[position]!;
    if (JSON.stringify(published) !== JSON.stringify(record)) {
      throw new MismatchError(`${date} in days.json`, JSON.stringify(published), JSON.stringify(record));
    }
  } else {
    const newRecords = rows.map((r, i): ShardRecord => ({ hash: entries[i]!, leafIndex: oldSize + i, submittedMs: Date.parse(r.submittedAt) }));
    updateIndex(archive, out, oldSize, appended.size, newRecords);
    syncArchive(archive);
    state.days.push(record);
    out.mutable(archive, DAYS_PATH, encodeDays(state));
    out.mutable(archive, CHECKPOINT_PATH, checkpoint);
    removeOtherIndexes(archive, shardDigits(appended.size));
  }
  return { date, alreadyPublished, entryCount: rows.length, firstIndex: oldSize, treeSize: appended.size, root, ledgerSha256, filesWritten: out.files, bytesWritten: out.bytes };
}

/** Entry bundles from the old size's partial bundle onwards (tlog-tiles: tile/entries/N[.p/W]). */
function writeEntryBundles(archive: string, out: WriteCounter, oldSize: number, entries: Uint8Array[]): void {
  const firstBundle = Math.floor(oldSize / TILE_WIDTH);
  const carried = oldSize % TILE_WIDTH;
  const all = carried === 0 ? entries : [...parseEntryBundle(readEntryBundle(archive, firstBundle, carried), carried), ...entries];
  for (let start = 0; start < all.length; start += TILE_WIDTH) {
    const chunk = all.slice(start, start + TILE_WIDTH);
    out.immutable(archive, entryBundlePath(firstBundle + start / TILE_WIDTH, chunk.length), encodeEntryBundle(chunk));
  }
}

function readEntryBundle(archive: string, index: number, width: number): Uint8Array {
  const rel = entryBundlePath(index, width);
  const data = readOptional(archive, rel);
  if (data === undefined) throw new TimesealError('not-found', `${rel} is missing from the archive`);
  return data;
}

function listShards(archive: string, digits: number): string[] {
  const dir = path.join(archive, shardDir(digits));
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => /^[0-9a-f]+$/.test(n) && n.length === digits).sort() : [];
}

/** Each shard's records at `digits`, in prefix order, one file at a time, without records at or past `limit`
 * (left by an attempt that was killed before its commit point). `known` supplies shards already in memory. */
export function* shardRecords(archive: string, digits: number, limit: number, known?: Map<string, ShardRecord[]>): Generator<ShardRecord[]> {
  for (const prefix of listShards(archive, digits)) {
    const records = known?.get(prefix) ?? parseShard(readOptional(archive, `${shardDir(digits)}/${prefix}`)!, prefix);
    yield records.every((r) => r.leafIndex < limit) ? records : records.filter((r) => r.leafIndex < limit);
  }
}

function prefixOf(hash: Uint8Array, digits: number): string {
  return toHex(hash.subarray(0, Math.ceil(digits / 2))).slice(0, digits);
}

function groupByPrefix(records: ShardRecord[], digits: number): Map<string, ShardRecord[]> {
  const groups = new Map<string, ShardRecord[]>();
  for (const r of records) {
    const prefix = prefixOf(r.hash, digits);
    let g = groups.get(prefix);
    if (!g) groups.set(prefix, (g = []));
    g.push(r);
  }
  return groups;
}

/**
 * Adds a day's records to the shards. When the log outgrows the prefix length (FORMAT.md §6), every old shard
 * is split into its longer-prefix children, one old shard at a time. Then index-sha256.json is rewritten from
 * the shards, streamed.
 */
function updateIndex(archive: string, out: WriteCounter, oldSize: number, newSize: number, newRecords: ShardRecord[]): void {
  const digits = shardDigits(newSize);
  const oldDigits = oldSize === 0 ? digits : shardDigits(oldSize);
  const fresh = groupByPrefix(newRecords, digits);
  const written = new Map<string, ShardRecord[]>();
  const write = (prefix: string, records: ShardRecord[]) => {
    out.mutable(archive, `${shardDir(digits)}/${prefix}`, encodeShard(records));
    written.set(prefix, records);
  };
  if (oldDigits === digits) {
    for (const [prefix, group] of fresh) {
      const existing = readOptional(archive, `${shardDir(digits)}/${prefix}`);
      const kept = existing === undefined ? [] : parseShard(existing, prefix).filter((r) => r.leafIndex < oldSize);
      write(prefix, mergeRecords(kept, group));
    }
  } else {
    for (const oldRecords of shardRecords(archive, oldDigits, oldSize)) {
      for (const [prefix, group] of groupByPrefix(oldRecords, digits)) {
        write(prefix, mergeRecords(group, fresh.get(prefix) ?? []));
        fresh.delete(prefix);
      }
    }
    for (const [prefix, group] of fresh) write(prefix, group);
  }
  out.bytes += writeMutableChunks(archive, INDEX_JSON_PATH, indexJsonChunks(() => shardRecords(archive, digits, newSize, written)));
  out.files++;
}

/** ots_status.json and block_info.json for the published days (pipeline/anchor/status.ts owns their content). */
export function writeOtsStatus(ctx: BuildContext, state: ArchiveState): void {
  writeAnchorStatus(ctx.config.archive, state.days, ctx.clock());
}
