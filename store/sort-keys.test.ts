import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from './sqlite/db.ts';
import { dayColumns, enqueue } from './sqlite/queue.ts';
import { sameKey, sortedOrder } from './sort-keys.ts';
import { decodeRow, decodeRows } from './day-columns.ts';

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
