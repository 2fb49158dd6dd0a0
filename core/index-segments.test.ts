import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toHex } from './encoding.ts';
import {
  daySegmentShards,
  encodeIndexHead,
  mergeShards,
  MAX_SEGMENT_LEAVES,
  mergeStart,
  parseIndexHead,
  segmentBits,
  encodeSegmentHeader,
  parseSegmentHeader,
  parseSegmentPath,
  recordBytes,
  segmentPath,
  shardOf,
  shardRecordRange,
  tableEntryOffset,
  type Segment,
} from './index-segments.ts';
import { encodeShard, hashPrefix, lookupShard, parseShard, type ShardRecord } from './index-shard.ts';

const seg = (from: number, to: number): Segment => ({ from, to });

/** Checks the day segments of `days` (each day's hashes unique) and their merge against the records sorted. */
function checkDaysMerged(days: Uint8Array[][]): void {
  const all: ShardRecord[] = [];
  const sources = [];
  let leaf = 0;
  for (const hashes of days) {
    const sorted = [...hashes].sort((a, b) => Buffer.compare(a, b));
    const ms = sorted.map((_, i) => 1_762_000_000_000 + leaf + i);
    const segment = seg(leaf, leaf + sorted.length);
    // In batches of 7 entries, as a build that streams the day gives them.
    const flat = Uint8Array.from(sorted.flatMap((h) => [...h]));
    const batches = Array.from({ length: Math.ceil(sorted.length / 7) }, (_, b) => ({
      hashes: flat.subarray(32 * 7 * b, 32 * 7 * (b + 1)),
      ms: ms.slice(7 * b, 7 * (b + 1)),
    }));
    const shards = [...daySegmentShards(leaf, sorted.length, batches)];
    expect(shards.map((s) => s.prefix)).toEqual(Array.from({ length: 2 ** segmentBits(segment) }, (_, i) => i));
    sorted.forEach((h, i) => all.push({ hash: h, leafIndex: leaf + i, submittedMs: ms[i]! }));
    sources.push({ segment, read: (prefix: number) => shards[prefix]!.bytes });
    leaf += sorted.length;
  }
  all.sort((a, b) => Buffer.compare(a.hash, b.hash) || a.leafIndex - b.leafIndex);
  const merged = seg(0, leaf);
  const bits = segmentBits(merged);
  const out = [...mergeShards(sources, bits)];
  expect(out).toHaveLength(2 ** bits);
  for (const { prefix, bytes } of out) {
    expect(toHex(bytes)).toBe(toHex(encodeShard(all.filter((r) => hashPrefix(r.hash, 0, bits) === prefix))));
  }
  // Every hash is found in the one shard its prefix names, with all its leaves, oldest first.
  const leaves = new Map<string, number[]>();
  for (const r of all) leaves.set(toHex(r.hash), [...(leaves.get(toHex(r.hash)) ?? []), r.leafIndex]);
  for (const r of all) {
    const found = lookupShard(out[hashPrefix(r.hash, 0, bits)]!.bytes, toHex(r.hash));
    expect(found.map((f) => f.leafIndex)).toEqual(leaves.get(toHex(r.hash)));
  }
  expect(out.flatMap((s) => parseShard(s.bytes))).toEqual(all);
}

describe('index segments (FORMAT.md §6)', () => {
  it('sizes shards to at most 64 records on average, and names segment files by their leaves', () => {
    expect(segmentBits(seg(0, 1))).toBe(0);
    expect(segmentBits(seg(10, 74))).toBe(0);
    expect(segmentBits(seg(10, 75))).toBe(1);
    expect(segmentBits(seg(0, 1_000_000))).toBe(14);
    expect(segmentBits(seg(0, 2 ** 20 * 64))).toBe(20);
    expect(() => segmentBits(seg(0, 2 ** 25 * 64))).toThrow(/larger than this format allows/);
    expect(segmentPath(seg(5, 1_000_005))).toBe('index/5-1000005.idx');
    expect(parseSegmentPath('index/5-1000005.idx')).toEqual(seg(5, 1_000_005));
    for (const bad of [
      'index/5-5.idx',
      'index/05-9.idx',
      'index/0-9',
      'index/0-9/0',
      'index/0-9.idx/',
      'index/1-2.idx.tmp',
    ])
      expect(parseSegmentPath(bad)).toBeNull();
    expect(shardOf(seg(0, 3000), 'ff' + '0'.repeat(62))).toBe(0x3f);
    expect(shardOf(seg(0, 50), 'ff' + '0'.repeat(62))).toBe(0);
  });

  it('head: canonical text, strict parse', () => {
    const head = { treeSize: 300, segments: [seg(0, 200), seg(200, 300)] };
    const text = encodeIndexHead(head);
    expect(text).toBe(
      '{"format":"timeseal-index/3","tree_size":300,"segments":[\n{"from":0,"to":200},\n{"from":200,"to":300}\n]}\n',
    );
    expect(parseIndexHead(text)).toEqual(head);
    expect(parseIndexHead(encodeIndexHead({ treeSize: 0, segments: [] }))).toEqual({ treeSize: 0, segments: [] });
    expect(() => parseIndexHead(text.replace('"to":200},\n{"from":200', '"to":199},\n{"from":200'))).toThrow(
      /does not continue at leaf 199/,
    );
    expect(() => parseIndexHead(text.replace('"tree_size":300', '"tree_size":301'))).toThrow(/not the tree size 301/);
    expect(() => parseIndexHead(text.replace('\n]}', ']}'))).toThrow(/canonical/);
    expect(() => parseIndexHead(text.replace('index/3', 'index/2'))).toThrow(/format/);
    expect(() => parseIndexHead('{')).toThrow(/JSON/);
  });

  it('merges the newest segments while the one before is less than twice their size', () => {
    const sized = (...sizes: number[]) => {
      let at = 0;
      return sizes.map((n) => seg(at, (at += n)));
    };
    expect(mergeStart(sized(10))).toBe(-1);
    expect(mergeStart(sized(10, 10))).toBe(0);
    expect(mergeStart(sized(20, 10))).toBe(-1);
    expect(mergeStart(sized(40, 20, 10, 10))).toBe(0);
    expect(mergeStart(sized(79, 20, 10, 10))).toBe(0);
    expect(mergeStart(sized(80, 20, 10, 10))).toBe(1);
    expect(mergeStart(sized(81, 20, 10, 10))).toBe(1);
    expect(mergeStart(sized(100, 3))).toBe(-1);
    // Days of equal size behave as a binary counter: after every append the sizes at least double downwards.
    const sizes: number[] = [];
    for (let day = 1; day <= 100; day++) {
      sizes.push(1);
      const segments = sized(...sizes);
      const start = mergeStart(segments);
      if (start >= 0)
        sizes.splice(
          start,
          sizes.length - start,
          sizes.slice(start).reduce((a, b) => a + b),
        );
      for (let i = 1; i < sizes.length; i++) expect(sizes[i - 1]!).toBeGreaterThanOrEqual(2 * sizes[i]!);
      expect(sizes.length).toBe(day.toString(2).replace(/0/g, '').length);
    }
  });

  it('never merges into a segment larger than the format allows: years of big days end in large segments', () => {
    const sized = (...sizes: number[]): Segment[] => {
      let at = 0;
      return sizes.map((n) => seg(at, (at += n)));
    };
    for (const perDay of [10_000_000, 3_000_000, 400_000_000]) {
      const sizes: number[] = [];
      for (let day = 1; day <= 1_000; day++) {
        sizes.push(perDay);
        const start = mergeStart(sized(...sizes));
        if (start >= 0)
          sizes.splice(
            start,
            sizes.length - start,
            sizes.slice(start).reduce((a, b) => a + b),
          );
        for (const size of sizes) expect(size).toBeLessThanOrEqual(MAX_SEGMENT_LEAVES);
        for (let i = 1; i < sizes.length; i++)
          expect(sizes[i - 1]! >= 2 * sizes[i]! || sizes[i - 1]! > MAX_SEGMENT_LEAVES / 3).toBe(true);
      }
      // 10 G leaves at 10 M a day: full segments of 640 M, then the doubling below them.
      const total = 1_000 * perDay;
      expect(sizes.length).toBeLessThanOrEqual(Math.ceil((3 * total) / MAX_SEGMENT_LEAVES) + 31);
      expect(() => sized(...sizes).map(segmentBits)).not.toThrow();
    }
    // The 128th day of 10 M would have merged every segment into 1.28 billion leaves.
    const before = sized(640e6, 320e6, 160e6, 80e6, 40e6, 20e6, 10e6, 10e6);
    expect(mergeStart(before)).toBe(1);
  });

  it('a day segment and a merge of segments give exactly the shards of the sorted records (property)', () => {
    const hash = fc.uint8Array({ minLength: 32, maxLength: 32 });
    const day = fc.uniqueArray(hash, { minLength: 1, maxLength: 300, selector: (h) => toHex(h) });
    fc.assert(fc.property(fc.array(day, { minLength: 1, maxLength: 5 }), checkDaysMerged), { numRuns: 60 });
  });

  it('the merge puts a hash found in several segments oldest first, and tells hashes apart by their last byte (property)', () => {
    // A pool of hashes in pairs that differ in the last bit only; each day takes some of them, so hashes repeat
    // across days and neighbours share 31 bytes.
    const pool = fc
      .array(fc.uint8Array({ minLength: 32, maxLength: 32 }), { minLength: 1, maxLength: 60 })
      .map((hs) => hs.flatMap((h) => [h, Uint8Array.from(h, (b, i) => (i === 31 ? b ^ 1 : b))]));
    const picks = fc.array(fc.array(fc.nat(), { minLength: 1, maxLength: 150 }), { minLength: 2, maxLength: 5 });
    fc.assert(
      fc.property(pool, picks, (hashes, days) =>
        checkDaysMerged(
          days.map((day) => [
            ...new Map(day.map((i) => hashes[i % hashes.length]!).map((h) => [toHex(h), h])).values(),
          ]),
        ),
      ),
      { numRuns: 60 },
    );
  });

  it('merges segments of thousands of records (shards of 8 bits and more) with repeats and near repeats', () => {
    // Past 8 prefix bits a comparison starts at the second byte: neighbours here share 1 to 31 bytes.
    let counter = 0;
    const random = (): Uint8Array => new Uint8Array(createHash('sha256').update(`h${counter++}`).digest());
    const near = (h: Uint8Array, byte: number): Uint8Array => Uint8Array.from(h, (b, i) => (i === byte ? b ^ 0x01 : b));
    const first = Array.from({ length: 6000 }, random);
    const second = [
      ...first.filter((_, i) => i % 3 === 0),
      ...first.filter((_, i) => i % 3 === 1).map((h, i) => near(h, 1 + (i % 31))),
      ...Array.from({ length: 2000 }, random),
    ];
    const third = [
      ...first.filter((_, i) => i % 5 === 0),
      ...second.filter((_, i) => i % 7 === 0).map((h) => near(h, 31)),
    ];
    const unique = (hs: Uint8Array[]) => [...new Map(hs.map((h) => [toHex(h), h])).values()];
    checkDaysMerged([first, second].map(unique)); // two inputs: 8 bits
    checkDaysMerged([first, second, third].map(unique)); // three: 9 bits
  });

  it("refuses a day's hashes out of order or repeated", () => {
    const h = (last: number): number[] => [...new Array<number>(31).fill(7), last];
    const day = (...hashes: number[][]) => [{ hashes: Uint8Array.from(hashes.flat()), ms: hashes.map(() => 0) }];
    expect([...daySegmentShards(0, 2, day(h(1), h(2)))]).toHaveLength(1);
    expect(() => [...daySegmentShards(0, 2, day(h(2), h(1)))]).toThrow(/not sorted or repeated/);
    expect(() => [...daySegmentShards(0, 2, day(h(2), h(2)))]).toThrow(/not sorted or repeated/);
  });

  it('segment file header: magic, a fan-out table of record numbers, records after it', () => {
    const segment = seg(10, 210); // 2 bits: 4 shards
    const header = encodeSegmentHeader([60, 0, 100, 40]);
    expect(Buffer.from(header.subarray(0, 4)).toString('latin1')).toBe('TSX2');
    expect(toHex(header.subarray(4))).toBe(['00000000', '0000003c', '0000003c', '000000a0', '000000c8'].join(''));
    expect([...parseSegmentHeader(segment, header)]).toEqual([0, 60, 60, 160, 200]);
    expect(shardRecordRange(segment, header.subarray(tableEntryOffset(2), tableEntryOffset(2) + 8))).toEqual({
      start: 60,
      end: 160,
    });
    expect(recordBytes(2, { start: 60, end: 160 })).toEqual({ offset: 4 + 4 * 5 + 44 * 60, length: 44 * 100 });
    expect(() => parseSegmentHeader(seg(10, 211), header)).toThrow(/counts 200 records, not 201/);
    expect(() => parseSegmentHeader(segment, header.subarray(0, 20))).toThrow(/truncated/);
    const bad = header.slice();
    bad[0] = 0x55;
    expect(() => parseSegmentHeader(segment, bad)).toThrow(/magic/);
    const disorder = header.slice();
    disorder[11] = 0x70; // entry 1 = 112 > entry 2 = 60
    expect(() => parseSegmentHeader(segment, disorder)).toThrow(/entry 2 is out of order/);
    expect(() => shardRecordRange(segment, Uint8Array.from([0, 0, 0, 9, 0, 0, 0, 8]))).toThrow(/out of order/);
    expect(() => shardRecordRange(segment, Uint8Array.from([0, 0, 0, 9, 0, 0, 0, 201]))).toThrow(/out of order/);
  });

  it('refuses input shards holding records outside their prefix', () => {
    const segment = seg(0, 100); // 1 bit: shards 0 and 1
    const low = encodeShard([{ hash: new Uint8Array(32).fill(0x10), leafIndex: 0, submittedMs: 0 }]);
    const high = encodeShard([{ hash: new Uint8Array(32).fill(0x90), leafIndex: 1, submittedMs: 0 }]);
    const ok = [...mergeShards([{ segment, read: (p) => (p === 0 ? low : high) }], 2)];
    expect(ok.map((s) => parseShard(s.bytes).length)).toEqual([1, 0, 1, 0]);
    expect(() => [...mergeShards([{ segment, read: (p) => (p === 0 ? high : low) }], 2)]).toThrow(/outside its prefix/);
    expect(() => [...mergeShards([{ segment, read: () => low }], 0)]).toThrow(/cannot merge/);
  });
});
