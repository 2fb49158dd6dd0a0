// The index shards and index-sha256.json on disk: a day's records merged into the shards (bytes with bytes),
// the changed shards written, then index-sha256.json streamed from all of them. During a build this runs on
// a worker thread (index-worker.ts) so that it overlaps the Merkle hashing, tiles and signing.
import fs from 'node:fs';
import path from 'node:path';
import { INDEX_JSON_PATH } from '../core/archive.ts';
import {
  checkShard,
  indexJsonChunks,
  mergeShard,
  prefixText,
  prefixValue,
  shardDigits,
  shardDir,
  SHARD_MAGIC,
  SHARD_RECORD_SIZE,
  type DayRecords,
} from '../core/index-shard.ts';
import { readOptional, writeMutable, writeMutableChunks } from './files.ts';

const NO_RECORDS = new Uint8Array(0);

export function listShards(archive: string, digits: number): string[] {
  const dir = path.join(archive, shardDir(digits));
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => /^[0-9a-f]+$/.test(n) && n.length === digits).sort() : [];
}

/** A shard read back from the archive, checked (magic, whole sorted records, all with its prefix). */
export function readShard(archive: string, digits: number, prefix: string): Uint8Array | undefined {
  const bytes = readOptional(archive, `${shardDir(digits)}/${prefix}`);
  if (bytes !== undefined) checkShard(bytes, prefix);
  return bytes;
}

export interface Written {
  files: number;
  bytes: number;
}

/**
 * Adds a day's records to the shards and writes the shards it changed. A day's hashes are sorted, so each
 * shard's share of them is one contiguous range. When the log outgrows the prefix length (FORMAT.md §6), every
 * old shard is split into its longer-prefix children, one old shard at a time. No shard is kept in memory
 * after it is written. Shards may be written before the build's commit point: records of an unfinished attempt are dropped on rerun
 * (a shard keeps only leaves below the published size).
 */
export function updateShards(archive: string, oldSize: number, newSize: number, day: DayRecords, written: Written): void {
  const digits = shardDigits(newSize);
  const oldDigits = oldSize === 0 ? digits : shardDigits(oldSize);
  const ranges = new Map<number, [number, number]>();
  for (let i = 0; i < day.hashes.length / 32; ) {
    const p = prefixValue(day.hashes, 32 * i, digits);
    let end = i + 1;
    while (end < day.hashes.length / 32 && prefixValue(day.hashes, 32 * end, digits) === p) end++;
    ranges.set(p, [i, end]);
    i = end;
  }
  const write = (p: number, records: Uint8Array, range: [number, number] = [0, 0]): void => {
    const bytes = mergeShard(records, oldSize, day, range[0], range[1]);
    if (bytes.length === SHARD_MAGIC.length) return;
    const prefix = prefixText(p, digits);
    writeMutable(archive, `${shardDir(digits)}/${prefix}`, bytes);
    written.files++;
    written.bytes += bytes.length;
  };
  if (oldDigits === digits) {
    for (const [p, range] of ranges) write(p, readShard(archive, digits, prefixText(p, digits))?.subarray(4) ?? NO_RECORDS, range);
  } else {
    for (const oldPrefix of listShards(archive, oldDigits)) {
      const old = readShard(archive, oldDigits, oldPrefix)!;
      for (let o = 4; o < old.length; ) {
        const p = prefixValue(old, o, digits);
        let end = o + SHARD_RECORD_SIZE;
        while (end < old.length && prefixValue(old, end, digits) === p) end += SHARD_RECORD_SIZE;
        write(p, old.subarray(o, end), ranges.get(p));
        ranges.delete(p);
        o = end;
      }
    }
    for (const [p, range] of ranges) write(p, NO_RECORDS, range);
  }
}

/** index-sha256.json for a log of `size` leaves, streamed from the shards on disk (read back one at a time). */
export function writeIndexJson(archive: string, size: number, written: Written): void {
  const digits = shardDigits(size);
  const none: DayRecords = { hashes: NO_RECORDS, ms: [], firstLeaf: size };
  const all = function* (): Generator<Uint8Array> {
    for (const prefix of listShards(archive, digits)) {
      const bytes = readShard(archive, digits, prefix)!;
      yield mergeShard(bytes.subarray(4), size, none, 0, 0);
    }
  };
  written.bytes += writeMutableChunks(archive, INDEX_JSON_PATH, indexJsonChunks(all));
  written.files++;
}

/** Both steps: the shards of a day appended to a log of `oldSize` leaves, then index-sha256.json. */
export function writeShardsAndIndex(archive: string, oldSize: number, newSize: number, day: DayRecords, written: Written): void {
  updateShards(archive, oldSize, newSize, day, written);
  writeIndexJson(archive, newSize, written);
}
