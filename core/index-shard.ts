// Index shards (docs/FORMAT.md §6): the records of one shard of an index segment, and the text of
// index-sha256.json made from shards. A shard is a run of 44-byte records: hash (32) || leaf index (uint48 BE)
// || submission time in ms (uint48 BE), sorted by (hash, leaf index); it has no header of its own. Where a
// segment's shards live (one file per segment, a fan-out table in front) is index-segments.ts.
import { compareBytes, fromHex, hexOf, toHex } from './encoding.ts';
import { FormatError } from './errors.ts';

export const SHARD_RECORD_SIZE = 44;

export interface ShardRecord {
  hash: Uint8Array;
  leafIndex: number;
  submittedMs: number;
}

export function writeUint48(out: Uint8Array, offset: number, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0 || value >= 2 ** 48)
    throw new FormatError('shard', `value out of range: ${value}`);
  const hi = Math.floor(value / 2 ** 32);
  const lo = value >>> 0;
  out[offset] = hi >>> 8;
  out[offset + 1] = hi & 255;
  out[offset + 2] = lo >>> 24;
  out[offset + 3] = (lo >>> 16) & 255;
  out[offset + 4] = (lo >>> 8) & 255;
  out[offset + 5] = lo & 255;
}

export function readUint48(bytes: Uint8Array, offset: number): number {
  const hi = (bytes[offset]! << 8) | bytes[offset + 1]!;
  const lo =
    ((bytes[offset + 2]! << 24) | (bytes[offset + 3]! << 16) | (bytes[offset + 4]! << 8) | bytes[offset + 5]!) >>> 0;
  return hi * 2 ** 32 + lo;
}

export function compareRecords(a: ShardRecord, b: ShardRecord): number {
  return compareBytes(a.hash, b.hash) || a.leafIndex - b.leafIndex;
}

/** Records must already be sorted by (hash, leaf index); encodeShard checks it. */
export function encodeShard(records: ShardRecord[]): Uint8Array {
  const out = new Uint8Array(records.length * SHARD_RECORD_SIZE);
  records.forEach((r, i) => {
    if (r.hash.length !== 32) throw new FormatError('shard', 'hash must be 32 bytes');
    if (i > 0 && compareRecords(records[i - 1]!, r) >= 0) throw new FormatError('shard', 'records not sorted');
    const o = i * SHARD_RECORD_SIZE;
    out.set(r.hash, o);
    writeUint48(out, o + 32, r.leafIndex);
    writeUint48(out, o + 38, r.submittedMs);
  });
  return out;
}

/** Strict parse. With `expectedPrefix` (hex), every hash must start with it. */
export function parseShard(bytes: Uint8Array, expectedPrefix?: string): ShardRecord[] {
  if (bytes.length % SHARD_RECORD_SIZE !== 0) throw new FormatError('shard', 'truncated record');
  const records: ShardRecord[] = [];
  for (let o = 0; o < bytes.length; o += SHARD_RECORD_SIZE) {
    const r = {
      hash: bytes.slice(o, o + 32),
      leafIndex: readUint48(bytes, o + 32),
      submittedMs: readUint48(bytes, o + 38),
    };
    if (records.length && compareRecords(records[records.length - 1]!, r) >= 0)
      throw new FormatError('shard', 'records not sorted');
    if (expectedPrefix !== undefined && !toHex(r.hash).startsWith(expectedPrefix)) {
      throw new FormatError('shard', `hash ${toHex(r.hash)} does not belong in shard ${expectedPrefix}`);
    }
    records.push(r);
  }
  return records;
}

/** Checks shard bytes without parsing them into objects: whole records sorted by (hash, leaf index), and, with
 * `prefix`, that every hash's first `prefix.bits` bits are `prefix.value`. */
export function checkShard(bytes: Uint8Array, prefix?: { value: number; bits: number }): void {
  if (bytes.length % SHARD_RECORD_SIZE !== 0) throw new FormatError('shard', 'truncated record');
  for (let o = 0; o < bytes.length; o += SHARD_RECORD_SIZE) {
    if (prefix !== undefined && hashPrefix(bytes, o, prefix.bits) !== prefix.value) {
      throw new FormatError(
        'shard',
        `hash ${hexOf(bytes, o, o + 32)} does not belong in shard ${prefix.value} of ${prefix.bits} bits`,
      );
    }
    if (o > 0 && compareRecordsAt(bytes, o - SHARD_RECORD_SIZE, bytes, o) >= 0)
      throw new FormatError('shard', 'records not sorted');
  }
}

/** Compares the 44-byte records at a[ao …] and b[bo …] by (hash, leaf index). */
export function compareRecordsAt(a: Uint8Array, ao: number, b: Uint8Array, bo: number): number {
  return compareHashAt(a, ao, b, bo) || readUint48(a, ao + 32) - readUint48(b, bo + 32);
}

/** Every record of `hashHex` in a shard, oldest leaf first (binary search; no full parse). */
export function lookupShard(bytes: Uint8Array, hashHex: string): ShardRecord[] {
  const target = fromHex(hashHex, 'hash');
  const count = Math.floor(bytes.length / SHARD_RECORD_SIZE);
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const o = mid * SHARD_RECORD_SIZE;
    if (compareBytes(bytes.subarray(o, o + 32), target) < 0) lo = mid + 1;
    else hi = mid;
  }
  const found: ShardRecord[] = [];
  for (let i = lo; i < count; i++) {
    const o = i * SHARD_RECORD_SIZE;
    if (compareBytes(bytes.subarray(o, o + 32), target) !== 0) break;
    found.push({
      hash: bytes.slice(o, o + 32),
      leafIndex: readUint48(bytes, o + 32),
      submittedMs: readUint48(bytes, o + 38),
    });
  }
  return found;
}

/** Compares a[ao … ao+32) with b[bo … bo+32) as unsigned bytes, without views. */
function compareHashAt(a: Uint8Array, ao: number, b: Uint8Array, bo: number): number {
  for (let k = 0; k < 32; k++) {
    const d = a[ao + k]! - b[bo + k]!;
    if (d !== 0) return d;
  }
  return 0;
}

/** The first `bits` bits (0 … 32) of the hash at bytes[offset …], as a number. */
export function hashPrefix(bytes: Uint8Array, offset: number, bits: number): number {
  if (bits === 0) return 0;
  const top =
    ((bytes[offset]! << 24) | (bytes[offset + 1]! << 16) | (bytes[offset + 2]! << 8) | bytes[offset + 3]!) >>> 0;
  return top >>> (32 - bits);
}

const DAY_MS = 86_400_000;
const dayNames = new Map<number, string>();
const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** UTC date of an epoch-millisecond time, cached per day (a shard's records share a few hundred days). */
function isoDate(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  let name = dayNames.get(day);
  if (name === undefined) {
    name = new Date(day * DAY_MS).toISOString().slice(0, 10);
    dayNames.set(day, name);
  }
  return name;
}

/** new Date(ms).toISOString() for ms ≥ 0, without a Date per call. */
function isoTime(ms: number): string {
  const rest = ms % DAY_MS;
  return `${isoDate(ms)}T${pad(Math.floor(rest / 3_600_000), 2)}:${pad(Math.floor(rest / 60_000) % 60, 2)}:${pad(Math.floor(rest / 1000) % 60, 2)}.${pad(rest % 1000, 3)}Z`;
}

/**
 * The text of index-sha256.json (docs/FORMAT.md §6) as a sequence of chunks, so it can be written or compared
 * without ever holding it as one string (it grows with the whole archive). `shards` is called twice (one pass
 * for "map", one for "timestamps") and yields each shard's bytes (as in the archive) in prefix order.
 */
export function* indexJsonChunks(shards: () => Iterable<Uint8Array>): Generator<string> {
  for (const section of INDEX_JSON_SECTIONS) {
    yield sectionOpening(section);
    let first = true;
    for (const shard of shards()) {
      const lines = shardLines(shard, section);
      if (lines.length === 0) continue;
      yield (first ? '' : ',\n') + lines.join(',\n');
      first = false;
    }
  }
  yield INDEX_JSON_END;
}

/** indexJsonChunks for shards made as they are asked for, a piece of input at a time (e.g. merged from ledgers
 * read as streams): the same text. */
export async function* indexJsonChunksAsync(shards: () => AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  for (const section of INDEX_JSON_SECTIONS) {
    yield sectionOpening(section);
    let first = true;
    for await (const shard of shards()) {
      const lines = shardLines(shard, section);
      if (lines.length === 0) continue;
      yield (first ? '' : ',\n') + lines.join(',\n');
      first = false;
    }
  }
  yield INDEX_JSON_END;
}

const INDEX_JSON_SECTIONS = ['map', 'timestamps'] as const;
const INDEX_JSON_END = '\n}}\n';
const sectionOpening = (section: (typeof INDEX_JSON_SECTIONS)[number]): string =>
  section === 'map' ? '{"map":{\n' : '\n},"timestamps":{\n';

/** A shard's lines of one section of index-sha256.json: one per hash (its dates, or its first time). */
function shardLines(shard: Uint8Array, section: (typeof INDEX_JSON_SECTIONS)[number]): string[] {
  const lines: string[] = [];
  for (let o = 0; o < shard.length;) {
    let next = o + SHARD_RECORD_SIZE;
    while (next < shard.length && compareHashAt(shard, next, shard, o) === 0) next += SHARD_RECORD_SIZE;
    const hash = hexOf(shard, o, o + 32);
    if (section === 'map') {
      if (next === o + SHARD_RECORD_SIZE) lines.push(`"${hash}":"${isoDate(readUint48(shard, o + 38))}"`);
      else {
        const dates: string[] = [];
        for (let r = o; r < next; r += SHARD_RECORD_SIZE) dates.push(isoDate(readUint48(shard, r + 38)));
        lines.push(`"${hash}":${JSON.stringify(dates)}`);
      }
    } else {
      lines.push(`"${hash}":"${isoTime(readUint48(shard, o + 38))}"`);
    }
    o = next;
  }
  return lines;
}
