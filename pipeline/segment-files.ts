// The index segments on disk (core/index-segments.ts has the layout): the day's segment file (or the segment it
// merges into at once), written before the build's commit point; the head (index/segments.json), replaced after
// it; the merges after publication; and the removal of segment files no head names any more. During a build the
// day's segment is written on a worker thread (index-worker.ts) so that it overlaps the Merkle hashing, tiles and
// signing.
import fs from 'node:fs';
import path from 'node:path';
import { INDEX_JSON_PATH } from '../core/archive.ts';
import { fromUtf8 } from '../core/encoding.ts';
import { FormatError, TimesealError } from '../core/errors.ts';
import {
  daySegmentShards,
  encodeIndexHead,
  encodeSegmentHeader,
  INDEX_HEAD_PATH,
  isPreviousIndexHead,
  mergeShards,
  parseIndexHead,
  parseSegmentHeader,
  recordBytes,
  segmentBits,
  segmentLayout,
  segmentPath,
  shardOf,
  shardRecordRange,
  tableEntryOffset,
  type IndexHead,
  type Segment,
  type SegmentSource,
} from '../core/index-segments.ts';
import { checkShard, indexJsonChunks, lookupShard, type ShardRecord } from '../core/index-shard.ts';
import { ConflictError, forgetListings, readOptional, sameFileBytes, tempFile, writeMutable } from './files.ts';

export interface Written {
  files: number;
  bytes: number;
}

/** The head on disk, or a new empty index when there is none (a new archive, or one made before this
 * release's segment files: its index is the previous layout's, which the build replaces); the caller may
 * change what it gets. */
export function readIndexHead(archive: string): IndexHead {
  const raw = readOptional(archive, INDEX_HEAD_PATH);
  if (raw === undefined) return { treeSize: 0, segments: [] };
  const text = fromUtf8(raw, INDEX_HEAD_PATH);
  return isPreviousIndexHead(text) ? { treeSize: 0, segments: [] } : parseIndexHead(text);
}

export function writeIndexHead(archive: string, head: IndexHead, written?: Written): void {
  const text = encodeIndexHead(head);
  writeMutable(archive, INDEX_HEAD_PATH, text);
  if (written) {
    written.files++;
    written.bytes += Buffer.byteLength(text);
  }
}

/** A published segment file open for reading shards; close() when done. */
export class SegmentFile {
  readonly segment: Segment;
  readonly rel: string;
  private readonly fd: number;
  private readonly bits: number;
  private table: Uint32Array | undefined;
  /** Read-ahead for shards read in order (merges, index-sha256.json): a window of the records. */
  private window = { offset: 0, bytes: new Uint8Array(0) as Uint8Array };

  /** Opens the file of `segment`; a missing one is an error naming it. */
  constructor(archive: string, segment: Segment) {
    this.segment = segment;
    this.rel = segmentPath(segment);
    this.bits = segmentBits(segment);
    try {
      this.fd = fs.openSync(path.join(archive, this.rel), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        throw new TimesealError('not-found', `index segment ${this.rel} is missing from the archive`);
      throw err;
    }
  }

  close(): void {
    fs.closeSync(this.fd);
  }

  private pread(offset: number, length: number): Uint8Array {
    const out = Buffer.alloc(length);
    let got = 0;
    while (got < length) {
      const n = fs.readSync(this.fd, out, got, length - got, offset + got);
      if (n === 0) throw new TimesealError('format', `index segment ${this.rel}: truncated`);
      got += n;
    }
    return out;
  }

  private fail(err: unknown): never {
    if (err instanceof TimesealError) throw err;
    throw new TimesealError('format', `index segment ${this.rel}: ${(err as Error).message}`, { cause: err });
  }

  /** The records of shard `prefix`, checked (whole records, sorted, all with its prefix). With the table read
   * once (sequential use) or two entries of it (one lookup). */
  shard(prefix: number): Uint8Array {
    try {
      const range = this.table
        ? { start: this.table[prefix]!, end: this.table[prefix + 1]! }
        : shardRecordRange(this.segment, this.pread(tableEntryOffset(prefix), 8));
      const { offset, length } = recordBytes(this.bits, range);
      let bytes: Uint8Array;
      if (this.table) {
        const w = this.window;
        if (offset < w.offset || offset + length > w.offset + w.bytes.length) {
          const size = segmentLayout(this.bits).recordsOffset + 44 * (this.segment.to - this.segment.from);
          this.window = { offset, bytes: this.pread(offset, Math.min(size - offset, Math.max(length, 1 << 20))) };
        }
        bytes = this.window.bytes.subarray(offset - this.window.offset, offset - this.window.offset + length);
      } else {
        bytes = this.pread(offset, length);
      }
      checkShard(bytes, { value: prefix, bits: this.bits });
      return bytes;
    } catch (err) {
      this.fail(err);
    }
  }

  /** Reads and checks the whole fan-out table, for reading every shard in order. */
  readTable(): this {
    try {
      this.table = parseSegmentHeader(this.segment, this.pread(0, segmentLayout(this.bits).recordsOffset));
    } catch (err) {
      this.fail(err);
    }
    return this;
  }
}

/** Every record of a hash in one published segment, oldest leaf first (two small reads). */
export function lookupSegment(archive: string, segment: Segment, hashHex: string): ShardRecord[] {
  const file = new SegmentFile(archive, segment);
  try {
    return lookupShard(file.shard(shardOf(segment, hashHex)), hashHex);
  } finally {
    file.close();
  }
}

/** The merged shards of `segments` at `bits`, the files open while the caller iterates (closed after). */
function* mergedShards(
  archive: string,
  segments: readonly Segment[],
  bits: number,
  newest?: SegmentSource,
): Generator<{ prefix: number; bytes: Uint8Array }> {
  const files: SegmentFile[] = [];
  try {
    for (const segment of segments) files.push(new SegmentFile(archive, segment).readTable());
    const sources: SegmentSource[] = files.map((file) => ({
      segment: file.segment,
      read: (prefix: number) => file.shard(prefix),
    }));
    if (newest) sources.push(newest);
    yield* mergeShards(sources, bits);
  } finally {
    for (const file of files) file.close();
  }
}

/**
 * Writes a segment file from its shards (every prefix in order): records first, after room for the header,
 * then the header, into a temp file renamed into place. A file already there (a rerun after a crash) must be
 * byte-identical: published files never change.
 */
function writeSegmentFile(
  archive: string,
  segment: Segment,
  shards: Iterable<{ prefix: number; bytes: Uint8Array }>,
  written: Written,
): void {
  const rel = segmentPath(segment);
  const file = path.join(archive, rel);
  const bits = segmentBits(segment);
  const counts = new Uint32Array(2 ** bits);
  const temp = tempFile(archive);
  const fd = fs.openSync(temp, 'w');
  let size = 0;
  try {
    let position = segmentLayout(bits).recordsOffset;
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    // Shards go out in one writev per megabyte, without copying them into a buffer of their own.
    const flush = (): void => {
      if (pendingBytes === 0) return;
      let done = fs.writevSync(fd, pending, position);
      while (done < pendingBytes)
        done += fs.writeSync(fd, Buffer.concat(pending).subarray(done), 0, pendingBytes - done, position + done);
      position += pendingBytes;
      pending = [];
      pendingBytes = 0;
    };
    let expected = 0;
    for (const { prefix, bytes } of shards) {
      if (prefix !== expected++) throw new TimesealError('format', `${rel}: shard ${prefix} out of order`);
      counts[prefix] = bytes.length / 44;
      if (bytes.length === 0) continue;
      pending.push(bytes);
      pendingBytes += bytes.length;
      if (pendingBytes >= 1 << 20 || pending.length >= 512) flush();
    }
    flush();
    const header = encodeSegmentHeader(counts);
    parseSegmentHeader(segment, header); // every prefix written, and exactly the segment's leaves
    fs.writeSync(fd, header, 0, header.length, 0);
    size = position;
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(temp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  if (fs.existsSync(file)) {
    const same = sameFileBytes(temp, file);
    fs.rmSync(temp, { force: true });
    if (!same) throw new ConflictError(`published file ${rel} differs from the rebuild`);
    return;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.renameSync(temp, file);
  written.files++;
  written.bytes += size;
}

/** The segment of a day appended at leaf `firstLeaf`: `count` hashes in batches (sorted, without repeats; ms
 * their times), read once, in order. */
export function writeDaySegment(
  archive: string,
  firstLeaf: number,
  count: number,
  batches: Iterable<{ hashes: Uint8Array; ms: ArrayLike<number> }>,
  written: Written,
): Segment {
  const segment = { from: firstLeaf, to: firstLeaf + count };
  writeSegmentFile(archive, segment, daySegmentShards(firstLeaf, count, batches), written);
  return segment;
}

/**
 * The segment of a day appended at leaf `firstLeaf` merged at once with the newest published segments `older`
 * (which end at `firstLeaf`), as the upkeep after publication would merge them (core/index-segments.ts
 * mergeStart): one pass over the older files and the day's sorted batches, so the day's own segment is never
 * written only to be read back. The same bytes as writeDaySegment then writeMergedSegment.
 */
export function writeDayMergedSegment(
  archive: string,
  older: readonly Segment[],
  firstLeaf: number,
  count: number,
  batches: Iterable<{ hashes: Uint8Array; ms: ArrayLike<number> }>,
  written: Written,
): Segment {
  if (older.length === 0 || older.at(-1)!.to !== firstLeaf)
    throw new FormatError('index', `the segments to merge with the day at leaf ${firstLeaf} do not end there`);
  const day = { from: firstLeaf, to: firstLeaf + count };
  const merged = { from: older[0]!.from, to: day.to };
  const shards = daySegmentShards(firstLeaf, count, batches);
  const last = 2 ** segmentBits(day) - 1;
  // mergeShards reads each input's shards once, in order: the day's come from its generator as they are asked
  // for, and after the last one the generator is run to its end, which checks the day's count.
  const newest: SegmentSource = {
    segment: day,
    read(prefix) {
      const got = shards.next();
      if (got.done || got.value.prefix !== prefix)
        throw new FormatError('index', `the day's shard ${prefix} is not the next one`);
      if (prefix === last && !shards.next().done) throw new FormatError('index', `the day's shards go past ${last}`);
      return got.value.bytes;
    },
  };
  writeSegmentFile(archive, merged, mergedShards(archive, older, segmentBits(merged), newest), written);
  return merged;
}

/** Merges consecutive published segments into one new segment (written, not yet named by the head). */
export function writeMergedSegment(archive: string, segments: readonly Segment[], written: Written): Segment {
  const merged = { from: segments[0]!.from, to: segments.at(-1)!.to };
  writeSegmentFile(archive, merged, mergedShards(archive, segments, segmentBits(merged)), written);
  return merged;
}

/** Every segment file under index/ (named from-to.idx), named by the head or not. */
export function segmentFiles(archive: string): Segment[] {
  const dir = path.join(archive, 'index');
  const found: Segment[] = [];
  for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    const m = /^(\d+)-(\d+)\.idx$/.exec(name);
    if (m) found.push({ from: Number(m[1]), to: Number(m[2]) });
  }
  return found;
}

/**
 * Removes what no reader can reach through the head: segment files it does not name for which `remove` says
 * yes, and with `legacy` the earlier releases' index: index-sha256.json and the index/<digits>/ folders of the
 * first, the index/<from>-<to>/ folders of shard files of the second. Only ever called once the head that
 * stopped naming them is on disk and synced.
 */
export function removeUnnamedIndexFiles(
  archive: string,
  head: IndexHead,
  remove: (segment: Segment) => boolean,
  options: { legacy: boolean },
): number {
  const named = new Set(head.segments.map(segmentPath));
  let removed = 0;
  forgetListings();
  for (const segment of segmentFiles(archive)) {
    if (named.has(segmentPath(segment)) || !remove(segment)) continue;
    fs.rmSync(path.join(archive, segmentPath(segment)), { force: true });
    removed++;
  }
  if (!options.legacy) return removed;
  const dir = path.join(archive, 'index');
  const legacy = (fs.existsSync(dir) ? fs.readdirSync(dir) : []).filter((name) => /^\d+(-\d+)?$/.test(name));
  // The previous release's index-sha256.json goes first, so a crash in between leaves no stale copy.
  if (legacy.length > 0 && fs.existsSync(path.join(archive, INDEX_JSON_PATH))) {
    fs.rmSync(path.join(archive, INDEX_JSON_PATH), { force: true });
    removed++;
  }
  for (const name of legacy) {
    fs.rmSync(path.join(dir, name), { recursive: true, force: true });
    removed++;
  }
  return removed;
}

/**
 * The text of index-sha256.json (docs/FORMAT.md §6) for the index named by `head`, in chunks: the segments'
 * shards merged in hash order at the finest prefix among them, read one shard at a time, so its memory does not
 * grow with the archive. Used by `timeseal index-json` and by the server (ingest/index-json.ts).
 */
export function indexJsonFromSegments(archive: string, head: IndexHead): Iterable<string> {
  const bits = Math.max(0, ...head.segments.map(segmentBits));
  return indexJsonChunks(function* () {
    if (head.segments.length === 0) return;
    for (const { bytes } of mergedShards(archive, head.segments, bits)) yield bytes;
  });
}
