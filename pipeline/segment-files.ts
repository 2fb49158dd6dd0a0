// The index segments on disk (core/index-segments.ts has the layout): the day's segment, written before the
// build's commit point; the head (index/segments.json), replaced after it; the merges that follow publication;
// and the removal of folders no head names any more. During a build the day's segment is written on a worker
// thread (index-worker.ts) so that it overlaps the Merkle hashing, tiles and signing.
import fs from 'node:fs';
import path from 'node:path';
import { INDEX_JSON_PATH } from '../core/archive.ts';
import { fromUtf8 } from '../core/encoding.ts';
import { TimesealError } from '../core/errors.ts';
import {
  daySegmentShards,
  encodeIndexHead,
  INDEX_HEAD_PATH,
  mergeShards,
  parseIndexHead,
  segmentBits,
  segmentDir,
  segmentShardPath,
  type IndexHead,
  type Segment,
  type SegmentSource,
} from '../core/index-segments.ts';
import { checkShard, indexJsonChunks } from '../core/index-shard.ts';
import { forgetListings, readOptional, writeImmutable, writeMutable } from './files.ts';

export interface Written {
  files: number;
  bytes: number;
}

/** The head on disk, or a new empty index when there is none (a new archive, or one made before segments);
 * the caller may change what it gets. */
export function readIndexHead(archive: string): IndexHead {
  const raw = readOptional(archive, INDEX_HEAD_PATH);
  return raw === undefined ? { treeSize: 0, segments: [] } : parseIndexHead(fromUtf8(raw, INDEX_HEAD_PATH));
}

export function writeIndexHead(archive: string, head: IndexHead, written?: Written): void {
  const text = encodeIndexHead(head);
  writeMutable(archive, INDEX_HEAD_PATH, text);
  if (written) {
    written.files++;
    written.bytes += Buffer.byteLength(text);
  }
}

/** A published shard, checked (magic, sorted whole records, all with its prefix); a missing one is an error. */
export function readSegmentShard(archive: string, segment: Segment, prefix: number): Uint8Array {
  const rel = segmentShardPath(segment, prefix);
  const bytes = readOptional(archive, rel);
  if (bytes === undefined) throw new TimesealError('not-found', `index shard ${rel} is missing from the archive`);
  try {
    checkShard(bytes, { value: prefix, bits: segmentBits(segment) });
  } catch (err) {
    throw new TimesealError('format', `index shard ${rel}: ${(err as Error).message}`, { cause: err });
  }
  return bytes;
}

function writeShards(archive: string, segment: Segment, shards: Iterable<{ prefix: number; bytes: Uint8Array }>, written: Written): void {
  for (const { prefix, bytes } of shards) {
    if (writeImmutable(archive, segmentShardPath(segment, prefix), bytes)) {
      written.files++;
      written.bytes += bytes.length;
    }
  }
}

/** The segment of a day appended at leaf `firstLeaf` (hashes sorted, without repeats; ms their times). */
export function writeDaySegment(archive: string, firstLeaf: number, hashes: Uint8Array, ms: ArrayLike<number>, written: Written): Segment {
  const segment = { from: firstLeaf, to: firstLeaf + hashes.length / 32 };
  writeShards(archive, segment, daySegmentShards(firstLeaf, hashes, ms), written);
  return segment;
}

/** Merges consecutive published segments into one new segment (written, not yet named by the head). */
export function writeMergedSegment(archive: string, segments: readonly Segment[], written: Written): Segment {
  const merged = { from: segments[0]!.from, to: segments.at(-1)!.to };
  const sources: SegmentSource[] = segments.map((segment) => ({ segment, read: (prefix) => readSegmentShard(archive, segment, prefix) }));
  writeShards(archive, merged, mergeShards(sources, segmentBits(merged)), written);
  return merged;
}

/** Every segment folder under index/ (named from-to), named by the head or not. */
export function segmentFolders(archive: string): Segment[] {
  const dir = path.join(archive, 'index');
  const found: Segment[] = [];
  for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    const m = /^(\d+)-(\d+)$/.exec(name);
    if (m) found.push({ from: Number(m[1]), to: Number(m[2]) });
  }
  return found;
}

/**
 * Removes what no reader can reach through the head: segment folders it does not name for which `remove` says
 * yes, and with `legacy` the previous release's index (its index-sha256.json, then the index/<digits>/
 * folders). Only ever called once the head that stopped naming them is on disk and synced.
 */
export function removeUnnamedIndexFiles(archive: string, head: IndexHead, remove: (segment: Segment) => boolean, options: { legacy: boolean }): number {
  const named = new Set(head.segments.map(segmentDir));
  let removed = 0;
  forgetListings();
  for (const segment of segmentFolders(archive)) {
    if (named.has(segmentDir(segment)) || !remove(segment)) continue;
    fs.rmSync(path.join(archive, segmentDir(segment)), { recursive: true, force: true });
    removed++;
  }
  if (!options.legacy) return removed;
  const dir = path.join(archive, 'index');
  const legacy = (fs.existsSync(dir) ? fs.readdirSync(dir) : []).filter((name) => /^\d+$/.test(name));
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
  const sources: SegmentSource[] = head.segments.map((segment) => ({ segment, read: (prefix) => readSegmentShard(archive, segment, prefix) }));
  return indexJsonChunks(function* () {
    if (sources.length === 0) return;
    for (const { bytes } of mergeShards(sources, bits)) yield bytes;
  });
}
