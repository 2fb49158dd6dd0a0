// The sharded hash index (docs/FORMAT.md §6): one small binary file per hash prefix, so a lookup downloads a
// bounded amount whatever the archive size. The prefix grows with the log (shardDigits) so that a shard holds
// at most about SHARD_TARGET records on average. Records are 44 bytes: hash (32) || leaf index (uint48 BE) ||
// submission time in ms (uint48 BE), sorted by (hash, leaf index), after the magic "TSX1".
import { compareBytes, fromHex, toHex } from './encoding.ts';
import { FormatError } from './errors.ts';

export const SHARD_MAGIC = new Uint8Array([0x54, 0x53, 0x58, 0x31]); // "TSX1"
export const SHARD_RECORD_SIZE = 44;

export interface ShardRecord {
  hash: Uint8Array;
  leafIndex: number;
  submittedMs: number;
}

/** Average records per shard that the prefix length keeps the index under. */
export const SHARD_TARGET = 512;

/** Hex digits of the shard prefix for a log of `treeSize` leaves: the smallest p >= 2 with
 * treeSize / 16^p <= SHARD_TARGET (p = 3 up to 2,097,152 leaves, 4 up to 33,554,432). */
export function shardDigits(treeSize: number): number {
  let p = 2;
  while (treeSize / 16 ** p > SHARD_TARGET) p++;
  return p;
}

/** The folder holding every shard of one prefix length: index/3, index/4, … */
export function shardDir(digits: number): string {
  return `index/${digits}`;
}

/** The shard path of a hash (lower-case hex) in a log of `treeSize` leaves: index/3/abc. */
export function shardPath(hashHex: string, treeSize: number): string {
  const digits = shardDigits(treeSize);
  return `${shardDir(digits)}/${hashHex.slice(0, digits)}`;
}

function writeUint48(out: Uint8Array, offset: number, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0 || value >= 2 ** 48) throw new FormatError('shard', `value out of range: ${value}`);
  const hi = Math.floor(value / 2 ** 32);
  const lo = value >>> 0;
  out[offset] = hi >>> 8;
  out[offset + 1] = hi & 255;
  out[offset + 2] = lo >>> 24;
  out[offset + 3] = (lo >>> 16) & 255;
  out[offset + 4] = (lo >>> 8) & 255;
  out[offset + 5] = lo & 255;
}

function readUint48(bytes: Uint8Array, offset: number): number {
  const hi = (bytes[offset]! << 8) | bytes[offset + 1]!;
  const lo = ((bytes[offset + 2]! << 24) | (bytes[offset + 3]! << 16) | (bytes[offset + 4]! << 8) | bytes[offset + 5]!) >>> 0;
  return hi * 2 ** 32 + lo;
}

export function compareRecords(a: ShardRecord, b: ShardRecord): number {
  return compareBytes(a.hash, b.hash) || a.leafIndex - b.leafIndex;
}

/** Records must already be sorted by (hash, leaf index); encodeShard checks it. */
export function encodeShard(records: ShardRecord[]): Uint8Array {
  const out = new Uint8Array(4 + records.length * SHARD_RECORD_SIZE);
  out.set(SHARD_MAGIC, 0);
  records.forEach((r, i) => {
    if (r.hash.length !== 32) throw new FormatError('shard', 'hash must be 32 bytes');
    if (i > 0 && compareRecords(records[i - 1]!, r) >= 0) throw new FormatError('shard', 'records not sorted');
    const o = 4 + i * SHARD_RECORD_SIZE;
    out.set(r.hash, o);
    writeUint48(out, o + 32, r.leafIndex);
    writeUint48(out, o + 38, r.submittedMs);
  });
  return out;
}

/** Strict parse. With `expectedPrefix` (hex), every hash must start with it. */
export function parseShard(bytes: Uint8Array, expectedPrefix?: string): ShardRecord[] {
  if (bytes.length < 4 || SHARD_MAGIC.some((b, i) => bytes[i] !== b)) throw new FormatError('shard', 'bad magic (expected TSX1)');
  if ((bytes.length - 4) % SHARD_RECORD_SIZE !== 0) throw new FormatError('shard', 'truncated record');
  const records: ShardRecord[] = [];
  for (let o = 4; o < bytes.length; o += SHARD_RECORD_SIZE) {
    const r = { hash: bytes.slice(o, o + 32), leafIndex: readUint48(bytes, o + 32), submittedMs: readUint48(bytes, o + 38) };
    if (records.length && compareRecords(records[records.length - 1]!, r) >= 0) throw new FormatError('shard', 'records not sorted');
    if (expectedPrefix !== undefined && !toHex(r.hash).startsWith(expectedPrefix)) {
      throw new FormatError('shard', `hash ${toHex(r.hash)} does not belong in shard ${expectedPrefix}`);
    }
    records.push(r);
  }
  return records;
}

/** Every record of `hashHex` in a shard, oldest leaf first (binary search; no full parse). */
export function lookupShard(bytes: Uint8Array, hashHex: string): ShardRecord[] {
  const target = fromHex(hashHex, 'hash');
  const count = (bytes.length - 4) / SHARD_RECORD_SIZE;
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const o = 4 + mid * SHARD_RECORD_SIZE;
    if (compareBytes(bytes.subarray(o, o + 32), target) < 0) lo = mid + 1;
    else hi = mid;
  }
  const found: ShardRecord[] = [];
  for (let i = lo; i < count; i++) {
    const o = 4 + i * SHARD_RECORD_SIZE;
    if (compareBytes(bytes.subarray(o, o + 32), target) !== 0) break;
    found.push({ hash: bytes.slice(o, o + 32), leafIndex: readUint48(bytes, o + 32), submittedMs: readUint48(bytes, o + 38) });
  }
  return found;
}

/** Merges two sorted record lists (an existing shard and a new day's records for it). */
export function mergeRecords(a: ShardRecord[], b: ShardRecord[]): ShardRecord[] {
  const out: ShardRecord[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && compareRecords(a[i]!, b[j]!) < 0)) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  return out;
}

function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * The text of index-sha256.json (docs/FORMAT.md §6) as a sequence of chunks, so it can be written or compared
 * without ever holding it as one string (it grows with the whole archive). `shards` is called twice (one pass
 * for "map", one for "timestamps") and yields each shard's records in prefix order.
 */
export function* indexJsonChunks(shards: () => Iterable<ShardRecord[]>): Generator<string> {
  for (const section of ['map', 'timestamps'] as const) {
    yield section === 'map' ? '{"map":{\n' : '\n},"timestamps":{\n';
    let first = true;
    for (const records of shards()) {
      const lines: string[] = [];
      for (let i = 0; i < records.length; ) {
        let j = i + 1;
        while (j < records.length && compareBytes(records[j]!.hash, records[i]!.hash) === 0) j++;
        const hash = toHex(records[i]!.hash);
        if (section === 'map') {
          const dates = records.slice(i, j).map((r) => isoDate(r.submittedMs));
          lines.push(`"${hash}":${dates.length === 1 ? `"${dates[0]}"` : JSON.stringify(dates)}`);
        } else {
          lines.push(`"${hash}":"${new Date(records[i]!.submittedMs).toISOString()}"`);
        }
        i = j;
      }
      if (lines.length === 0) continue;
      yield (first ? '' : ',\n') + lines.join(',\n');
      first = false;
    }
  }
  yield '\n}}\n';
}
