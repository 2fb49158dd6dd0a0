// The log-structured hash index (docs/FORMAT.md §6), shaped like an LSM tree (LevelDB doc/impl.md): the index
// is a list of immutable segments, each covering a contiguous range of leaves [from, to) that begins and ends
// on day boundaries. A segment is one file: its records sorted by hash, split into 2^bits shards by the first
// bits of the hash, behind a fan-out table saying where each shard starts (as git's pack index does), so a
// reader fetches one shard with two small byte-range reads, and a day writes one file instead of thousands.
// Publishing a day writes one new segment for the day's leaves; afterwards the newest segments are merged into
// one whenever the one before them is less than twice their size, so segment sizes at least double from newest
// to oldest — up to the largest segment the format allows, MAX_SEGMENT_LEAVES (~1.07 billion): a log of N leaves
// in days of at least m leaves has at most log2(min(N, MAX_SEGMENT_LEAVES) / m) + 1 + 3 N / MAX_SEGMENT_LEAVES
// segments, a lookup reads one shard from each, and each leaf's record is rewritten at most about
// log2(MAX_SEGMENT_LEAVES / m) times in its life. Only the head (index/segments.json, the list of live segments) changes; segment files never do.
import { fromHex } from './encoding.ts';
import { FormatError } from './errors.ts';
import { hashPrefix, SHARD_RECORD_SIZE, writeUint48 } from './index-shard.ts';

/** The mutable head: which segments make up the index of the log as of `tree_size`. */
export const INDEX_HEAD_PATH = 'index/segments.json';
export const INDEX_FORMAT = 'timeseal-index/3';
/** The head of the previous release's index (a folder of shard files per segment), upgraded by the next build. */
export const PREVIOUS_INDEX_FORMAT = 'timeseal-index/2';

/** The first bytes of a segment file, "TSX2". */
export const SEGMENT_MAGIC = new Uint8Array([0x54, 0x53, 0x58, 0x32]);

/**
 * A segment's shards hold at most this many records on average (between half of it and it): about 1.4–2.8 KB a
 * shard, so that a lookup reading one shard of each of ~10 segments stays far below the 64 KB goal together
 * with its inclusion proof's tiles (docs/BENCHMARKS.md).
 */
export const SEGMENT_SHARD_TARGET = 64;
/** 2^24 shards of 64 records: segments of up to a billion leaves (record numbers fit the table's uint32). */
export const MAX_SEGMENT_BITS = 24;

export interface Segment {
  /** First leaf index covered. */
  from: number;
  /** One past the last leaf index covered; every leaf in [from, to) has exactly one record. */
  to: number;
}

export interface IndexHead {
  treeSize: number;
  segments: Segment[];
}

/** Prefix bits of a segment's shards: the smallest b with (to - from) / 2^b <= SEGMENT_SHARD_TARGET. */
export function segmentBits(segment: Segment): number {
  const records = segment.to - segment.from;
  let bits = 0;
  while (records > SEGMENT_SHARD_TARGET * 2 ** bits) bits++;
  if (bits > MAX_SEGMENT_BITS)
    throw new FormatError('index', `segment ${segment.from}-${segment.to} is larger than this format allows`);
  return bits;
}

/** The segment file: index/<from>-<to>.idx. */
export function segmentPath(segment: Segment): string {
  return `index/${segment.from}-${segment.to}.idx`;
}

/** Where the shards of a segment of `bits` prefix bits lie in its file: the fan-out table of 2^bits + 1
 * big-endian uint32 record numbers starts at byte 4 (entry p: records before shard p; the last: all of them),
 * the 44-byte records right after it. */
export function segmentLayout(bits: number): { tableOffset: number; recordsOffset: number } {
  return { tableOffset: 4, recordsOffset: 4 + 4 * (2 ** bits + 1) };
}

/** Byte offset in the segment file of fan-out entry `prefix` (two consecutive entries bound shard `prefix`). */
export function tableEntryOffset(prefix: number): number {
  return 4 + 4 * prefix;
}

/** The prefix of `hashHex` (lower-case hex) in a segment: the shard that holds its records. */
export function shardOf(segment: Segment, hashHex: string): number {
  return hashPrefix(fromHex(hashHex, 'hash'), 0, segmentBits(segment));
}

/** The segment file's header: magic and fan-out table, from the number of records in each shard. */
export function encodeSegmentHeader(counts: ArrayLike<number>): Uint8Array {
  const out = new Uint8Array(4 + 4 * (counts.length + 1));
  out.set(SEGMENT_MAGIC, 0);
  const view = new DataView(out.buffer);
  let total = 0;
  for (let p = 0; p < counts.length; p++) {
    total += counts[p]!;
    view.setUint32(4 + 4 * (p + 1), total);
  }
  return out;
}

/**
 * Strict parse of a segment file's header (its first segmentLayout(bits).recordsOffset bytes): the magic, a
 * table that starts at 0, never decreases and ends at the segment's leaf count. Returns the table.
 */
export function parseSegmentHeader(segment: Segment, header: Uint8Array): Uint32Array {
  const bits = segmentBits(segment);
  const { recordsOffset } = segmentLayout(bits);
  const where = segmentPath(segment);
  if (header.length < recordsOffset) throw new FormatError(where, 'truncated header');
  if (SEGMENT_MAGIC.some((b, i) => header[i] !== b)) throw new FormatError(where, 'bad magic (expected TSX2)');
  const view = new DataView(header.buffer, header.byteOffset, recordsOffset);
  const table = new Uint32Array(2 ** bits + 1);
  for (let p = 0; p < table.length; p++) {
    table[p] = view.getUint32(4 + 4 * p);
    if (p === 0 ? table[p] !== 0 : table[p]! < table[p - 1]!)
      throw new FormatError(where, `fan-out entry ${p} is out of order`);
  }
  if (table[table.length - 1] !== segment.to - segment.from)
    throw new FormatError(
      where,
      `fan-out table counts ${table[table.length - 1]} records, not ${segment.to - segment.from}`,
    );
  return table;
}

/** The records [start, end) of shard `prefix` from the two fan-out entries read at tableEntryOffset(prefix). */
export function shardRecordRange(segment: Segment, entries: Uint8Array): { start: number; end: number } {
  if (entries.length !== 8) throw new FormatError(segmentPath(segment), 'truncated fan-out table');
  const view = new DataView(entries.buffer, entries.byteOffset, 8);
  const start = view.getUint32(0);
  const end = view.getUint32(4);
  if (end < start || end > segment.to - segment.from)
    throw new FormatError(segmentPath(segment), 'fan-out table out of order');
  return { start, end };
}

/** Byte range of records [start, end) in a segment file of `bits` prefix bits. */
export function recordBytes(bits: number, range: { start: number; end: number }): { offset: number; length: number } {
  return {
    offset: segmentLayout(bits).recordsOffset + SHARD_RECORD_SIZE * range.start,
    length: SHARD_RECORD_SIZE * (range.end - range.start),
  };
}

/** The head's canonical bytes: one segment a line, newest last. */
export function encodeIndexHead(head: IndexHead): string {
  const lines = head.segments.map((s) => `{"from":${s.from},"to":${s.to}}`);
  return `{"format":"${INDEX_FORMAT}","tree_size":${head.treeSize},"segments":[${lines.length ? `\n${lines.join(',\n')}\n` : ''}]}\n`;
}

/** Strict parse: canonical bytes only; segments contiguous from leaf 0 to tree_size, each of a size this
 * format allows. */
export function parseIndexHead(text: string): IndexHead {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new FormatError(INDEX_HEAD_PATH, 'not valid JSON');
  }
  const v = value as { format?: unknown; tree_size?: unknown; segments?: unknown };
  if (v?.format !== INDEX_FORMAT) throw new FormatError(`${INDEX_HEAD_PATH} format`, `expected ${INDEX_FORMAT}`);
  if (!Number.isSafeInteger(v.tree_size) || (v.tree_size as number) < 0)
    throw new FormatError(`${INDEX_HEAD_PATH} tree_size`, 'expected a whole number');
  if (!Array.isArray(v.segments)) throw new FormatError(`${INDEX_HEAD_PATH} segments`, 'expected a list');
  const segments: Segment[] = [];
  let next = 0;
  for (const s of v.segments as { from?: unknown; to?: unknown }[]) {
    if (!Number.isSafeInteger(s?.from) || !Number.isSafeInteger(s?.to))
      throw new FormatError(`${INDEX_HEAD_PATH} segments`, 'from and to must be whole numbers');
    const segment = { from: s.from as number, to: s.to as number };
    if (segment.from !== next || segment.to <= segment.from) {
      throw new FormatError(
        `${INDEX_HEAD_PATH} segments`,
        `segment ${segment.from}-${segment.to} does not continue at leaf ${next}`,
      );
    }
    segmentBits(segment);
    segments.push(segment);
    next = segment.to;
  }
  const head = { treeSize: v.tree_size as number, segments };
  if (next !== head.treeSize)
    throw new FormatError(
      `${INDEX_HEAD_PATH} segments`,
      `cover leaves up to ${next}, not the tree size ${head.treeSize}`,
    );
  if (encodeIndexHead(head) !== text) throw new FormatError(INDEX_HEAD_PATH, 'not in canonical form');
  return head;
}

/** Whether head bytes are the previous release's head (its segments are folders of shard files). */
export function isPreviousIndexHead(text: string): boolean {
  try {
    return (JSON.parse(text) as { format?: unknown })?.format === PREVIOUS_INDEX_FORMAT;
  } catch {
    return false;
  }
}

/** The most leaves a segment can cover: 2^MAX_SEGMENT_BITS shards of SEGMENT_SHARD_TARGET records. */
export const MAX_SEGMENT_LEAVES = SEGMENT_SHARD_TARGET * 2 ** MAX_SEGMENT_BITS;

/**
 * Which newest segments to merge after a segment was appended: the index of the first of them, or -1 for none.
 * Merging continues downwards while the next older segment is less than twice the merged size, so that
 * afterwards every segment is at least twice the size of the next newer one — up to MAX_SEGMENT_LEAVES: a merge
 * that would cover more stops short of it (at 10,000,000 leaves a day the 128th day's merge would cover 1.28
 * billion), and the segment it stops at then covers more than a third of that. So every segment is at least
 * twice the next newer one or more than MAX_SEGMENT_LEAVES / 3. The whole run is merged in one pass.
 */
export function mergeStart(segments: readonly Segment[]): number {
  const size = (i: number): number => segments[i]!.to - segments[i]!.from;
  let start = segments.length - 1;
  if (start < 1) return -1;
  let merged = size(start);
  while (start > 0 && size(start - 1) < 2 * merged && merged + size(start - 1) <= MAX_SEGMENT_LEAVES)
    merged += size(--start);
  return start === segments.length - 1 ? -1 : start;
}

/** One input of mergeShards: a published segment and a way to read its shards (checked records). */
export interface SegmentSource {
  segment: Segment;
  read(prefix: number): Uint8Array;
}

/**
 * The shards, at `bits` prefix bits, of the records of several segments in leaf order — every prefix from 0 to
 * 2^bits - 1, empty shards included — each the k-way merge of the inputs' records with that prefix (equal
 * hashes: the older segment's record first, as its leaf index is smaller). Reads each input shard once, in
 * order; `bits` must be at least every input's own, and the inputs must follow each other in leaf order. Checks
 * that each input shard's records all carry its prefix. A shard's bytes stay as they are after the next one is
 * asked for (they are carved from blocks that are never reused).
 */
export function* mergeShards(
  inputs: readonly SegmentSource[],
  bits: number,
): Generator<{ prefix: number; bytes: Uint8Array }> {
  const cursors = inputs.map((input, i) => {
    const own = segmentBits(input.segment);
    if (own > bits)
      throw new FormatError(
        'index',
        `cannot merge segment ${input.segment.from}-${input.segment.to} of ${own} bits into ${bits}`,
      );
    if (i > 0 && inputs[i - 1]!.segment.to !== input.segment.from)
      throw new FormatError(
        'index',
        `segment ${input.segment.from}-${input.segment.to} does not follow the one before it`,
      );
    return { input, order: i, shift: bits - own, shard: -1, bytes: new Uint8Array(0) as Uint8Array, at: 0, end: 0 };
  });
  // Records of one prefix share its first `bits` bits, so a comparison of two of them starts past those bytes.
  const from = bits >>> 3;
  const out = new Blocks();
  for (let prefix = 0; prefix < 2 ** bits; prefix++) {
    let total = 0;
    let live = 0;
    for (const c of cursors) {
      const shard = c.shift === 0 ? prefix : Math.floor(prefix / 2 ** c.shift);
      if (shard !== c.shard) {
        if (c.at !== c.bytes.length)
          throw new FormatError(`${segmentPath(c.input.segment)} shard ${c.shard}`, 'holds records outside its prefix');
        c.bytes = c.input.read(shard);
        c.shard = shard;
        c.at = 0;
      }
      c.end = c.at;
      while (c.end < c.bytes.length && hashPrefix(c.bytes, c.end, bits) === prefix) c.end += SHARD_RECORD_SIZE;
      total += c.end - c.at;
      if (c.end > c.at) live++;
    }
    const bytes = out.take(total);
    if (live === 2) {
      let a: (typeof cursors)[number] | undefined;
      let b: (typeof cursors)[number] | undefined;
      for (const c of cursors) if (c.end > c.at) [a, b] = a === undefined ? [c, b] : [a, c];
      mergeTwo(a!, b!, bytes, from);
    } else {
      mergeMany(cursors, bytes, from);
    }
    yield { prefix, bytes };
  }
  for (const c of cursors) {
    if (c.at !== c.bytes.length)
      throw new FormatError(`${segmentPath(c.input.segment)} shard ${c.shard}`, 'holds records outside its prefix');
  }
}

interface MergeCursor {
  /** The input's place in leaf order. */
  order: number;
  bytes: Uint8Array;
  at: number;
  end: number;
}

/** Whether the hash at x[xo …] sorts before the one at y[yo …], comparing from byte `from` (the bytes before
 * are the same). Equal hashes do not: the older input's record goes first. */
function hashBefore(x: Uint8Array, xo: number, y: Uint8Array, yo: number, from: number): boolean {
  for (let k = from; k < 32; k++) {
    const d = x[xo + k]! - y[yo + k]!;
    if (d !== 0) return d < 0;
  }
  return false;
}

/** The records of a (older) and b (newer) from at to end, merged into out (exactly their length). Records are
 * copied as eleven 32-bit words. */
function mergeTwo(a: MergeCursor, b: MergeCursor, out: Uint8Array, from: number): void {
  const x = a.bytes;
  const y = b.bytes;
  const xv = new DataView(x.buffer, x.byteOffset, x.byteLength);
  const yv = new DataView(y.buffer, y.byteOffset, y.byteLength);
  const ov = new DataView(out.buffer, out.byteOffset, out.byteLength);
  let i = a.at;
  let j = b.at;
  let o = 0;
  while (i < a.end && j < b.end) {
    if (hashBefore(y, j, x, i, from)) {
      for (let k = 0; k < SHARD_RECORD_SIZE; k += 4) ov.setUint32(o + k, yv.getUint32(j + k));
      j += SHARD_RECORD_SIZE;
    } else {
      for (let k = 0; k < SHARD_RECORD_SIZE; k += 4) ov.setUint32(o + k, xv.getUint32(i + k));
      i += SHARD_RECORD_SIZE;
    }
    o += SHARD_RECORD_SIZE;
  }
  if (i < a.end) out.set(x.subarray(i, a.end), o);
  else if (j < b.end) out.set(y.subarray(j, b.end), o);
  a.at = a.end;
  b.at = b.end;
}

/** The records of any number of inputs (in leaf order) from at to end, merged into out: the input with the
 * smallest record goes out as one run until it is not smaller than the smallest of the others. */
function mergeMany(cursors: readonly MergeCursor[], out: Uint8Array, from: number): void {
  let o = 0;
  while (o < out.length) {
    let best: MergeCursor | undefined;
    let next: MergeCursor | undefined;
    for (const c of cursors) {
      if (c.at === c.end) continue;
      // Later inputs hold later leaves: one goes first only with a smaller hash.
      if (best === undefined || hashBefore(c.bytes, c.at, best.bytes, best.at, from)) {
        next = best;
        best = c;
      } else if (next === undefined || hashBefore(c.bytes, c.at, next.bytes, next.at, from)) {
        next = c;
      }
    }
    const start = best!.at;
    let at = start + SHARD_RECORD_SIZE;
    if (next === undefined) at = best!.end;
    else while (at < best!.end && beforeOrOlder(best!, at, next, from)) at += SHARD_RECORD_SIZE;
    if (at - start === SHARD_RECORD_SIZE) copyRecord(best!.bytes, start, out, o);
    else out.set(best!.bytes.subarray(start, at), o);
    o += at - start;
    best!.at = at;
  }
}

/** Whether best's record at `at` goes out before next's current one (on equal hashes, the older input's). */
function beforeOrOlder(best: MergeCursor, at: number, next: MergeCursor, from: number): boolean {
  if (hashBefore(best.bytes, at, next.bytes, next.at, from)) return true;
  return best.order < next.order && !hashBefore(next.bytes, next.at, best.bytes, at, from);
}

/** Copies the 44-byte record at from[f …] to to[t …] (a view for one record costs more than the copy). */
function copyRecord(from: Uint8Array, f: number, to: Uint8Array, t: number): void {
  for (let k = 0; k < SHARD_RECORD_SIZE; k++) to[t + k] = from[f + k]!;
}

/** Bytes handed out as views of 1 MB blocks, each block left to its views once full: one allocation a
 * megabyte where a shard of its own would be one allocation each (a shard is ~2.8 KB). */
class Blocks {
  private block = new Uint8Array(0);
  private used = 0;

  take(length: number): Uint8Array {
    if (this.used + length > this.block.length) {
      this.block = new Uint8Array(Math.max(length, BLOCK_BYTES));
      this.used = 0;
    }
    const view = this.block.subarray(this.used, this.used + length);
    this.used += length;
    return view;
  }
}

const BLOCK_BYTES = 1 << 20;
/**
 * The shards of one day's segment [firstLeaf, firstLeaf + count): `batches` give the day's `count` hashes in
 * order, sorted by byte value without repeats (32 bytes each, back to back; the i-th of the day is leaf
 * firstLeaf + i), with their submission times in `ms`; a batch is read before the next is asked for, so they
 * may be views of one reused buffer. Every prefix is yielded, empty shards included, so that a missing shard
 * file always means a missing segment, never "no such hash".
 */
export function* daySegmentShards(
  firstLeaf: number,
  count: number,
  batches: Iterable<{ hashes: Uint8Array; ms: ArrayLike<number> }>,
): Generator<{ prefix: number; bytes: Uint8Array }> {
  const bits = segmentBits({ from: firstLeaf, to: firstLeaf + count });
  const source = batches[Symbol.iterator]();
  let hashes: Uint8Array = new Uint8Array(0);
  let ms: ArrayLike<number> = [];
  let at = 0;
  let leaf = firstLeaf;
  /** Whether an entry is left, moving to the next batch when this one is read. */
  const more = (): boolean => {
    while (at === ms.length) {
      const next = source.next();
      if (next.done) return false;
      ({ hashes, ms } = next.value);
      at = 0;
    }
    return true;
  };
  let records = new Uint8Array(SHARD_RECORD_SIZE * 2 * SEGMENT_SHARD_TARGET);
  const from = bits >>> 3;
  const out = new Blocks();
  for (let prefix = 0; prefix < 2 ** bits; prefix++) {
    let o = 0;
    while (more() && hashPrefix(hashes, 32 * at, bits) === prefix) {
      if (leaf - firstLeaf === count) throw new FormatError('index', `more than the ${count} day hashes announced`);
      if (o === records.length) {
        const grown = new Uint8Array(2 * records.length);
        grown.set(records);
        records = grown;
      }
      for (let k = 0, h = 32 * at; k < 32; k++) records[o + k] = hashes[h + k]!;
      writeUint48(records, o + 32, leaf);
      writeUint48(records, o + 38, ms[at]!);
      if (o > 0 && !hashBefore(records, o - SHARD_RECORD_SIZE, records, o, from))
        throw new FormatError('index', 'day hashes not sorted or repeated');
      o += SHARD_RECORD_SIZE;
      at++;
      leaf++;
    }
    const bytes = out.take(o);
    bytes.set(records.subarray(0, o));
    yield { prefix, bytes };
  }
  if (more() || leaf - firstLeaf !== count) throw new FormatError('index', 'day hashes not sorted');
}

/** The segment of an archive path that segmentPath would give, or null for any other path. */
export function parseSegmentPath(rel: string): Segment | null {
  const m = /^index\/(0|[1-9]\d{0,14})-([1-9]\d{0,14})\.idx$/.exec(rel);
  if (!m) return null;
  const segment = { from: Number(m[1]), to: Number(m[2]) };
  if (segment.to <= segment.from || segment.to - segment.from > SEGMENT_SHARD_TARGET * 2 ** MAX_SEGMENT_BITS)
    return null;
  return segment;
}
