import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from './sqlite/db.ts';
import { dayColumns, enqueue } from './sqlite/queue.ts';
import { prefixBits, sameKey, sortedOrder, sortRows, sortRowsInPlace, splitInPlace } from './sort-keys.ts';
import { columnsInPlace, columnsOf, decodeRow, decodeRows } from './day-columns.ts';

/** The obvious stable sort of 32-byte keys, as the oracle. */
function referenceOrder(keys: Uint8Array, n: number): number[] {
  const key = (i: number) => Buffer.from(keys.subarray(32 * i, 32 * i + 32));
  return Array.from({ length: n }, (_, i) => i).sort((a, b) => Buffer.compare(key(a), key(b)) || a - b);
}

/** Keys that collide on purpose: a few shared prefixes of random length and repeated keys. */
const keySets = fc
  .array(
    fc.tuple(
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 0, max: 32 }),
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
    ),
    { maxLength: 300 },
  )
  .map((specs) => {
    const prefixes = [crypto.randomBytes(32), crypto.randomBytes(32), Buffer.alloc(32), Buffer.alloc(32, 0xff)];
    const keys = new Uint8Array(32 * specs.length);
    specs.forEach(([p, shared, tail], i) => {
      keys.set(tail, 32 * i);
      keys.set(prefixes[p]!.subarray(0, shared), 32 * i);
    });
    return { keys, n: specs.length };
  });

describe('sortedOrder', () => {
  it('equals a stable Buffer.compare sort, for shared prefixes and repeated keys', () => {
    fc.assert(
      fc.property(keySets, ({ keys, n }) => {
        expect(Array.from(sortedOrder(keys, n))).toEqual(referenceOrder(keys, n));
      }),
      { numRuns: 300 },
    );
  });

  it('sorts one large bucket (5,000 keys with the same first two bytes) and 50,000 random keys', () => {
    const crowded = crypto.randomBytes(32 * 5000);
    for (let i = 0; i < 5000; i++) crowded.set([0xab, 0xcd], 32 * i);
    expect(Array.from(sortedOrder(crowded, 5000))).toEqual(referenceOrder(crowded, 5000));
    const random = crypto.randomBytes(32 * 50_000);
    expect(Array.from(sortedOrder(random, 50_000))).toEqual(referenceOrder(random, 50_000));
  });

  it('refuses a buffer too short for n keys, and compares keys byte by byte', () => {
    expect(() => sortedOrder(new Uint8Array(63), 2)).toThrow(RangeError);
    const keys = new Uint8Array(96);
    keys[31] = 1;
    keys[63] = 1;
    expect(sameKey(keys, 0, 1)).toBe(true);
    expect(sameKey(keys, 0, 2)).toBe(false);
  });
});

/** Keys against each bucket size: one base key, each of its 256 bits flipped alone (keys that differ from it in one
 * bit only, before, inside and after the prefix and the word after it), runs of a shared prefix of every length with
 * random tails, repeats of the base and of some others, all in a shuffled order. */
function adversarialKeys(): { keys: Uint8Array; n: number } {
  const base = crypto.randomBytes(32);
  const list: Buffer[] = [];
  for (let bit = 0; bit < 256; bit++) {
    const k = Buffer.from(base);
    k[bit >> 3]! ^= 0x80 >> (bit & 7);
    list.push(k);
  }
  for (let shared = 0; shared <= 32; shared++) {
    for (let r = 0; r < 40; r++) {
      const k = crypto.randomBytes(32);
      base.copy(k, 0, 0, shared);
      list.push(k);
    }
  }
  for (let r = 0; r < 50; r++) list.push(Buffer.from(base), Buffer.from(list[(r * 37) % list.length]!));
  for (let i = list.length - 1; i > 0; i--) {
    const j = crypto.randomInt(i + 1);
    [list[i], list[j]] = [list[j]!, list[i]!];
  }
  return { keys: Buffer.concat(list), n: list.length };
}

describe('sortRows', () => {
  /** sortRows of the keys with each key's input place as its value: the sorted keys and the places. */
  function rowsSorted(keys: Uint8Array, n: number, bits?: number): { keys: Uint8Array; places: number[] } {
    const out = new Uint8Array(32 * n);
    const places = new Float64Array(n);
    sortRows(
      keys,
      Float64Array.from({ length: n }, (_, i) => i),
      n,
      out,
      places,
      bits,
    );
    return { keys: out, places: Array.from(places) };
  }
  const keysInOrder = (keys: Uint8Array, order: readonly number[]): Uint8Array =>
    Buffer.concat(order.map((i) => keys.subarray(32 * i, 32 * i + 32)));

  it('moves the keys and their values into the stable Buffer.compare order, for shared prefixes and repeats', () => {
    fc.assert(
      fc.property(keySets, ({ keys, n }) => {
        const expected = referenceOrder(keys, n);
        const got = rowsSorted(keys, n);
        expect(got.places).toEqual(expected);
        expect(Buffer.from(got.keys).equals(keysInOrder(keys, expected))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('sorts keys that differ in a single bit anywhere, for every prefix size, as sortedOrder does', () => {
    const { keys, n } = adversarialKeys();
    const expected = referenceOrder(keys, n);
    for (let bits = 8; bits <= 24; bits++) {
      expect(Array.from(sortedOrder(keys, n, bits)), `sortedOrder, ${bits} bits`).toEqual(expected);
      const got = rowsSorted(keys, n, bits);
      expect(got.places, `sortRows, ${bits} bits`).toEqual(expected);
      expect(Buffer.from(got.keys).equals(keysInOrder(keys, expected))).toBe(true);
    }
  });

  it('chooses about eight keys a bucket, from 8 to 20 bits, and refuses other prefix sizes or short buffers', () => {
    expect([0, 1, 2_000, 1_250_000, 3_200_000, 1e9].map(prefixBits)).toEqual([8, 8, 8, 17, 19, 20]);
    const keys = crypto.randomBytes(64);
    expect(() => sortedOrder(keys, 2, 7)).toThrow(RangeError);
    expect(() => sortedOrder(keys, 2, 25)).toThrow(RangeError);
    expect(() => sortRows(keys, new Float64Array(2), 2, new Uint8Array(63), new Float64Array(2))).toThrow(RangeError);
  });
});

describe('sortRowsInPlace', () => {
  /** Whether sortRowsInPlace leaves the keys as sortRows orders them, each key with the values it came with
   * (equal keys' values in any order). */
  function sortsAsSortRows(keys: Uint8Array, n: number, bits?: number): boolean {
    const values = Float64Array.from({ length: n }, (_, i) => i);
    const outKeys = new Uint8Array(32 * n);
    const outValues = new Float64Array(n);
    sortRows(keys, values, n, outKeys, outValues);
    const inPlace = new Uint8Array(keys.subarray(0, 32 * n));
    sortRowsInPlace(inPlace, values, n, bits);
    if (!Buffer.from(inPlace).equals(Buffer.from(outKeys))) return false;
    // Each run of equal keys holds the same values.
    for (let i = 0; i < n;) {
      let j = i + 1;
      while (j < n && sameKey(outKeys, i, j)) j++;
      const want = Array.from(outValues.subarray(i, j)).sort((a, b) => a - b);
      const got = Array.from(values.subarray(i, j)).sort((a, b) => a - b);
      if (want.join() !== got.join()) return false;
      i = j;
    }
    return true;
  }

  it('orders keys as sortRows does, for shared prefixes and repeated keys', () => {
    fc.assert(
      fc.property(keySets, ({ keys, n }) => sortsAsSortRows(keys, n)),
      { numRuns: 300 },
    );
  });

  it('sorts random, sorted, reversed and all-equal keys, and n = 0, 1, 2, 33 (one bucket over insertion)', () => {
    const random = crypto.randomBytes(32 * 100_000);
    const sorted = Buffer.from(random);
    sortRowsInPlace(sorted, new Float64Array(100_000), 100_000);
    const reversed = Buffer.concat(
      Array.from({ length: 100_000 }, (_, i) => sorted.subarray(32 * (99_999 - i), 32 * (100_000 - i))),
    );
    const equal = Buffer.concat(Array.from({ length: 5_000 }, () => random.subarray(0, 32)));
    for (const [name, keys, n] of [
      ['random', random, 100_000],
      ['sorted', sorted, 100_000],
      ['reversed', reversed, 100_000],
      ['all equal', equal, 5_000],
      ['n = 0', random, 0],
      ['n = 1', random, 1],
      ['n = 2', reversed, 2],
      ['n = 33', reversed, 33],
    ] as const) {
      expect(sortsAsSortRows(keys, n), name).toBe(true);
    }
  });

  it('sorts buckets over the insertion limit (keys sharing 0 to 32 bytes, single-bit neighbours) at every prefix size', () => {
    const { keys, n } = adversarialKeys();
    for (let bits = 8; bits <= 24; bits++) expect(sortsAsSortRows(keys, n, bits), `${bits} bits`).toBe(true);
    // 40 to 3,000 keys that share a prefix of every length and differ after it.
    for (const count of [40, 300, 3_000]) {
      for (const shared of [2, 5, 16, 29, 30, 31]) {
        const crowded = crypto.randomBytes(32 * count);
        for (let i = 0; i < count; i++) crowded.fill(0xa5, 32 * i, 32 * i + shared);
        expect(sortsAsSortRows(crowded, count), `${count} keys sharing ${shared} bytes`).toBe(true);
      }
    }
  });

  it('splits rows in two ranges near the middle that sort the whole when each is sorted on its own', () => {
    const random = crypto.randomBytes(32 * 100_000);
    const { keys: adversarial, n: m } = adversarialKeys();
    const equal = Buffer.concat(Array.from({ length: 1_000 }, () => random.subarray(0, 32)));
    for (const [name, source, n, near] of [
      ['random', random, 100_000, 1_000],
      ['adversarial', adversarial, m, m / 2],
      ['all equal', equal, 1_000, 0],
    ] as const) {
      const values = Float64Array.from({ length: n }, (_, i) => i);
      const expected = new Uint8Array(32 * n);
      sortRows(source, values, n, expected, new Float64Array(n));
      const keys = new Uint8Array(source.subarray(0, 32 * n));
      const k = splitInPlace(keys, values, n);
      expect(Math.abs(k - (name === 'all equal' ? n : n / 2)), name).toBeLessThanOrEqual(near);
      sortRowsInPlace(keys.subarray(0, 32 * k), values.subarray(0, k), k);
      sortRowsInPlace(keys.subarray(32 * k), values.subarray(k), n - k);
      expect(Buffer.from(keys).equals(Buffer.from(expected)), name).toBe(true);
      expect(
        Array.from(values).sort((a, b) => a - b),
        name,
      ).toEqual(Array.from({ length: n }, (_, i) => i));
    }
  });

  it('refuses keys not aligned to 4 bytes, too few values or prefix sizes out of range', () => {
    const keys = new Uint8Array(68);
    expect(() => sortRowsInPlace(keys.subarray(2, 66), new Float64Array(2), 2)).toThrow(RangeError);
    expect(() => sortRowsInPlace(keys, new Float64Array(1), 2)).toThrow(RangeError);
    expect(() => sortRowsInPlace(keys, new Float64Array(2), 2, 25)).toThrow(RangeError);
  });
});

describe('columnsOf', () => {
  it('keeps each distinct key once with its earliest time, for random keys over a million rows and adversarial ones (and columnsInPlace)', () => {
    const random = crypto.randomBytes(32 * 1_100_000);
    // Repeats: every 10th row is the row 5 before it again.
    for (let i = 10; i < 1_100_000; i += 10) random.copyWithin(32 * i, 32 * (i - 5), 32 * (i - 4));
    const adversarial = adversarialKeys();
    for (const { keys, n } of [{ keys: random, n: 1_100_000 }, adversarial]) {
      const ms = Float64Array.from({ length: n }, () => crypto.randomInt(1e12));
      const earliest = new Map<string, number>();
      for (let i = 0; i < n; i++) {
        const hex = Buffer.from(keys.subarray(32 * i, 32 * i + 32)).toString('hex');
        earliest.set(hex, Math.min(earliest.get(hex) ?? Infinity, ms[i]!));
      }
      const sorted = [...earliest.keys()].sort();
      // columnsInPlace sorts its own copy of the rows: the same columns.
      for (const columns of [
        columnsOf(Buffer.from(keys), ms, n),
        columnsInPlace(Buffer.from(keys), Float64Array.from(ms), n),
      ]) {
        expect(columns.count).toBe(sorted.length);
        // The first entry that differs (-1: none), not the arrays: a diff of a million entries takes minutes.
        const wrong = sorted.findIndex(
          (h, i) =>
            Buffer.from(columns.hashes.subarray(32 * i, 32 * i + 32)).toString('hex') !== h ||
            columns.ms[i] !== earliest.get(h),
        );
        expect(wrong).toBe(-1);
      }
    }
  });
});

describe('dayColumns', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-day-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('gives the day’s distinct hashes sorted, each with its earliest time, across read chunks', () => {
    const db = openDatabase(path.join(dir, 'q.db'));
    const distinct = Array.from({ length: 70_000 }, () => crypto.randomBytes(32).toString('hex'));
    const base = Date.parse('2026-11-21T00:00:00.000Z');
    // Each hash once at a random time, a third of them again later and earlier, and a row on the next day.
    const rows = distinct.map((hash, i) => ({
      hash,
      submittedAt: new Date(base + 1000 + ((i * 7919) % 80_000_000)),
      source: 'import' as const,
    }));
    const again = distinct.filter((_, i) => i % 3 === 0);
    enqueue(db, [
      ...rows.slice(0, 35_000),
      ...again.map((hash) => ({ hash, submittedAt: new Date(base + 86_000_000), source: 'web' as const })),
      ...again.map((hash) => ({ hash, submittedAt: new Date(base + 5), source: 'web' as const })),
      ...rows.slice(35_000),
      { hash: distinct[1]!, submittedAt: new Date(base + 86_400_000), source: 'web' },
    ]);
    const day = dayColumns(db, '2026-11-21');
    db.close();

    const expected = new Map(rows.map((r) => [r.hash, r.submittedAt.toISOString()]));
    for (const hash of again) expected.set(hash, new Date(base + 5).toISOString());
    const sorted = [...expected.keys()].sort();
    expect(day.count).toBe(70_000);
    const got = Array.from({ length: day.count }, (_, i) =>
      Buffer.from(day.hashes.subarray(32 * i, 32 * i + 32)).toString('hex'),
    );
    expect(got).toEqual(sorted);
    expect(Array.from(day.ms, (t) => new Date(t).toISOString())).toEqual(sorted.map((h) => expected.get(h)));
    expect(Array.from(day.ms)).toEqual(sorted.map((h) => Date.parse(expected.get(h)!)));
  });

  it('refuses a stored time that milliseconds would not give back (not Date#toISOString text)', () => {
    const db = openDatabase(path.join(dir, 'bad-time.db'));
    db.prepare(
      "INSERT INTO submissions (hash, submitted_at, ledger_date, source) VALUES (?, '2026-11-21T10:00:00Z', '2026-11-21', 'import')",
    ).run('ab'.repeat(32));
    expect(() => dayColumns(db, '2026-11-21')).toThrow(/ISO-8601/);
    db.close();
  });
});

describe('decodeRows of packed rows', () => {
  /** What decodeRow makes of each pair: the milliseconds, or the refusal's message. */
  const byPairs = (rows: Array<[string, string]>): Array<number | string> =>
    rows.map(([hash, time]) => {
      const all = Buffer.alloc(32);
      const ms = new Float64Array(1);
      try {
        decodeRow(all, ms, 0, hash, time);
        return ms[0]!;
      } catch (err) {
        return (err as Error).message;
      }
    });
  /** The same rows packed, each decoded after a first ordinary row (so that a new day is a change of day). */
  const byPacked = (rows: Array<[string, string]>): Array<number | string> =>
    rows.map(([hash, time]) => {
      const first = ['00'.repeat(32), '2026-11-21T08:00:00.000Z'];
      const packed = { count: 2, hashes: first[0] + hash, times: first[1] + time };
      const all = Buffer.alloc(64);
      const ms = new Float64Array(2);
      try {
        decodeRows(all, ms, 0, packed, 0, 2);
        expect(all.subarray(32).toString('hex')).toBe(hash);
        return ms[1]!;
      } catch (err) {
        return (err as Error).message;
      }
    });

  it('gives exactly what decodeRow gives, milliseconds or refusal, for every kind of time text', () => {
    const hash = 'ab'.repeat(32);
    const times = [
      '2026-11-21T00:00:00.000Z',
      '2026-11-21T23:59:59.999Z',
      '2026-11-21T12:34:56.789Z',
      '2026-11-22T00:00:00.001Z', // another day than the row before
      '2026-02-29T10:00:00.000Z', // not a leap year
      '2024-02-29T10:00:00.000Z',
      '2026-04-31T10:00:00.000Z',
      '2026-13-01T10:00:00.000Z',
      '2026-11-21T24:00:00.000Z',
      '2026-11-21T23:60:00.000Z',
      '2026-11-21T23:59:60.000Z',
      '2026-11-21T1a:00:00.000Z',
      '2026-11-21T10:00:00.00aZ',
      '2026-11-21T10:00:00,000Z',
      '2026-11-21T10:00:00.000+',
      '2026-11-21 10:00:00.000Z',
      '+02026-11-21T10:00:00.00',
    ];
    const rows = times.map((t): [string, string] => [hash, t]);
    expect(byPacked(rows)).toEqual(byPairs(rows));
    expect(byPairs(rows).filter((r) => typeof r === 'number').length).toBeGreaterThanOrEqual(5);
    expect(byPairs(rows).filter((r) => typeof r === 'string').length).toBeGreaterThanOrEqual(8);
    const badHash = [['ab'.repeat(31) + 'zz', '2026-11-21T10:00:00.000Z'] as [string, string]];
    expect(byPacked(badHash)).toEqual(byPairs(badHash));
    expect(byPairs(badHash)[0]).toMatch(/not 64 hex digits/);
  });

  it('decodes a range of packed rows that crosses midnight into the same columns as their pairs', () => {
    const base = Date.parse('2026-11-21T23:59:59.000Z');
    const rows = Array.from({ length: 3000 }, (_, i): [string, string] => [
      crypto.randomBytes(32).toString('hex'),
      new Date(base + i).toISOString(),
    ]);
    const packed = {
      count: rows.length,
      hashes: rows.map((r) => r[0]).join(''),
      times: rows.map((r) => r[1]).join(''),
    };
    const [a, b] = [Buffer.alloc(32 * 2000), Buffer.alloc(32 * 2000)];
    const [ma, mb] = [new Float64Array(2000), new Float64Array(2000)];
    decodeRows(a, ma, 0, packed, 500, 2500);
    decodeRows(b, mb, 0, rows.slice(500, 2500), 0, 2000);
    expect(a.equals(b)).toBe(true);
    expect(Array.from(ma)).toEqual(Array.from(mb));
    expect(ma[1999]! - ma[0]!).toBe(1999);
  });
});
