import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toHex } from './encoding.ts';
import { FormatError } from './errors.ts';
import {
  checkShard,
  compareRecords,
  encodeShard,
  hashPrefix,
  indexJsonChunks,
  lookupShard,
  parseShard,
  SHARD_RECORD_SIZE,
  type ShardRecord,
} from './index-shard.ts';

const record = (byte: number, leafIndex: number, submittedMs = 1_762_000_000_000): ShardRecord => ({
  hash: new Uint8Array(32).fill(byte),
  leafIndex,
  submittedMs,
});

describe('index shards (FORMAT.md §6)', () => {
  it('reads the first bits of a hash as a number', () => {
    const hash = new Uint8Array(32).fill(0);
    hash.set([0xab, 0xcd, 0xef, 0x12]);
    expect(hashPrefix(hash, 0, 0)).toBe(0);
    expect(hashPrefix(hash, 0, 1)).toBe(1);
    expect(hashPrefix(hash, 0, 8)).toBe(0xab);
    expect(hashPrefix(hash, 0, 14)).toBe(0xabcd >>> 2);
    expect(hashPrefix(hash, 0, 32)).toBe(0xabcdef12);
  });

  it('encodes 44-byte big-endian records and finds every occurrence', () => {
    const records = [record(1, 7, 2 ** 40 + 5), record(2, 1), record(2, 300), record(3, 2 ** 47)];
    const bytes = encodeShard(records);
    expect(bytes.length).toBe(4 * SHARD_RECORD_SIZE);
    expect(toHex(bytes.subarray(32, 44))).toBe('000000000007' + '010000000005');
    expect(parseShard(bytes)).toEqual(records);
    expect(lookupShard(bytes, toHex(record(2, 0).hash)).map((r) => r.leafIndex)).toEqual([1, 300]);
    expect(lookupShard(bytes, toHex(record(9, 0).hash))).toEqual([]);
  });

  it('rejects truncated, unsorted, foreign and mislabelled shards', () => {
    const good = encodeShard([record(1, 0), record(2, 1)]);
    expect(() => parseShard(good.subarray(0, good.length - 1))).toThrow(FormatError);
    expect(() => encodeShard([record(2, 0), record(1, 1)])).toThrow(/sorted/);
    expect(() => parseShard(good, '01')).toThrow(/does not belong/);
  });

  it('merge keeps (hash, leaf) order for random inputs', () => {
    const recs = fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.nat(1000)), { maxLength: 30 });
    fc.assert(
      fc.property(recs, recs, (a, b) => {
        const toRecords = (xs: Array<[number, number]>) => {
          const seen = new Set<string>();
          return xs
            .map(([h, i]) => record(h, i))
            .filter((r) => !seen.has(`${r.hash[0]}/${r.leafIndex}`) && seen.add(`${r.hash[0]}/${r.leafIndex}`))
            .sort((x, y) => x.hash[0]! - y.hash[0]! || x.leafIndex - y.leafIndex);
        };
        const ra = toRecords(a);
        const rb = toRecords(b).filter((r) => !ra.some((x) => x.hash[0] === r.hash[0] && x.leafIndex === r.leafIndex));
        const merged = mergeRecords(ra, rb);
        expect(merged.length).toBe(ra.length + rb.length);
        expect(parseShard(encodeShard(merged))).toEqual(merged);
      }),
    );
  });
});

describe('shard checks and index-sha256.json', () => {
  it('checkShard rejects what parseShard rejects', () => {
    const good = encodeShard([record(1, 0), record(2, 1)]);
    expect(() => checkShard(good.subarray(0, good.length - 1))).toThrow(/truncated/);
    const swapped = good.slice();
    swapped.set(good.subarray(44, 88), 0);
    swapped.set(good.subarray(0, 44), 44);
    expect(() => checkShard(swapped)).toThrow(/sorted/);
    expect(() => checkShard(good, { value: 2, bits: 8 })).toThrow(/does not belong/);
    expect(() => checkShard(encodeShard([record(0xab, 0)]), { value: 0xab, bits: 8 })).not.toThrow();
    expect(() => checkShard(encodeShard([record(0xab, 0)]), { value: 5, bits: 3 })).not.toThrow();
    expect(() => checkShard(encodeShard([record(0xab, 0)]), { value: 4, bits: 3 })).toThrow(/does not belong/);
  });

  it('index-sha256.json chunks: one date for a hash on one day, a list for several, the first time', () => {
    const t1 = Date.UTC(2025, 10, 2, 9, 14, 3, 123);
    const t2 = Date.UTC(2025, 10, 3, 23, 59, 59, 999);
    const shards = [encodeShard([record(1, 0, t1), record(1, 7, t2)]), encodeShard([record(2, 3, t2)])];
    const text = [...indexJsonChunks(() => shards)].join('');
    const parsed = JSON.parse(text) as { map: Record<string, unknown>; timestamps: Record<string, string> };
    expect(parsed.map[toHex(record(1, 0).hash)]).toEqual(['2025-11-02', '2025-11-03']);
    expect(parsed.map[toHex(record(2, 0).hash)]).toBe('2025-11-03');
    expect(parsed.timestamps[toHex(record(1, 0).hash)]).toBe(new Date(t1).toISOString());
    expect(parsed.timestamps[toHex(record(2, 0).hash)]).toBe(new Date(t2).toISOString());
    expect(text.split('\n').length).toBe(8);
  });
});

/** The plain merge of two sorted record lists. */
function mergeRecords(a: ShardRecord[], b: ShardRecord[]): ShardRecord[] {
  const out: ShardRecord[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && compareRecords(a[i]!, b[j]!) < 0)) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  return out;
}
