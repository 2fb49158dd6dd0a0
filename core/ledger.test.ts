import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from './encoding.ts';
import { FormatError } from './errors.ts';
import { encodeLedger, encodeLedgerColumns, isDate, parseLedger, type Ledger } from './ledger.ts';

const H = (c: string) => c.repeat(64);

function ledger(over: Partial<Ledger> = {}): Ledger {
  return {
    origin: 'timeseal.example',
    date: '2025-11-02',
    firstIndex: 3,
    treeSize: 5,
    root: H('a'),
    previous: { date: '2025-11-01', sha256: H('b') },
    entries: [
      { hash: H('1'), submittedAt: '2025-11-02T00:00:00.000Z' },
      { hash: H('2'), submittedAt: '2025-11-02T23:59:59.999Z' },
    ],
    ...over,
  };
}

describe('ledger file (FORMAT.md §3)', () => {
  it('encodes the documented canonical bytes', () => {
    const text = fromUtf8(encodeLedger(ledger()));
    expect(text).toBe(
      '{"format":"timeseal-ledger/1","origin":"timeseal.example","date":"2025-11-02","first_index":3,"entry_count":2,' +
        `"tree_size":5,"root":"${H('a')}","previous":{"date":"2025-11-01","sha256":"${H('b')}"},"entries":[\n` +
        `["${H('1')}","2025-11-02T00:00:00.000Z"],\n["${H('2')}","2025-11-02T23:59:59.999Z"]\n]}\n`,
    );
  });

  it('round-trips and rejects every non-canonical variant', () => {
    const bytes = encodeLedger(ledger({ previous: null, firstIndex: 0, treeSize: 2 }));
    expect(parseLedger(bytes)).toEqual(ledger({ previous: null, firstIndex: 0, treeSize: 2 }));
    const text = fromUtf8(bytes);
    const variants = [
      text.replace('{"format"', '{ "format"'),
      text.replace('\n]}\n', ']}\n'),
      text.replace(']}\n', ']}'),
      text.replace(']}\n', ']}\n\n'),
      text.replace('"origin":"timeseal.example","date"', '"date":"2025-11-02","origin":"timeseal.example","x"'),
      text.replace(`"root":"${H('a')}"`, `"root":"${H('A')}"`),
      JSON.stringify(JSON.parse(text)),
    ];
    for (const v of variants) expect(() => parseLedger(utf8(v)), v.slice(0, 60)).toThrow(FormatError);
  });

  it('names the field of each semantic error', () => {
    const cases: Array<[Partial<Ledger>, RegExp]> = [
      [{ date: '2025-02-30' }, /date/],
      [{ treeSize: 6 }, /tree_size/],
      [{ root: 'zz' }, /root/],
      [{ previous: { date: '2025-11-02', sha256: H('b') } }, /previous\.date/],
      [{ entries: [{ hash: H('2'), submittedAt: '2025-11-02T00:00:00.000Z' }, { hash: H('1'), submittedAt: '2025-11-02T00:00:00.000Z' }] }, /sorted/],
      [{ entries: [{ hash: H('1'), submittedAt: '2025-11-02T00:00:00.000Z' }, { hash: H('1'), submittedAt: '2025-11-02T00:00:00.000Z' }] }, /sorted/],
      [{ entries: [{ hash: H('1'), submittedAt: '2025-11-03T00:00:00.000Z' }, { hash: H('2'), submittedAt: '2025-11-02T00:00:00.000Z' }] }, /submitted_at/],
      [{ entries: [{ hash: H('1'), submittedAt: '2025-11-02T24:00:00.000Z' }, { hash: H('2'), submittedAt: '2025-11-02T00:00:00.000Z' }] }, /submitted_at/],
      [{ origin: 'has space' }, /origin/],
    ];
    for (const [over, field] of cases) expect(() => encodeLedger(ledger(over))).toThrow(field);
  });

  it('parse(encode(x)) = x for random ledgers, and any changed byte is rejected or changes the value', () => {
    const hashes = fc.uniqueArray(fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex')), { minLength: 0, maxLength: 20 });
    fc.assert(
      fc.property(hashes, fc.nat(1000), fc.integer({ min: 0, max: 86_399_999 }), fc.nat(), (hs, first, ms, flip) => {
        const entries = [...hs].sort().map((hash) => ({ hash, submittedAt: new Date(Date.UTC(2025, 10, 2) + ms).toISOString() }));
        const l = ledger({ firstIndex: first, treeSize: first + entries.length, entries });
        const bytes = encodeLedger(l);
        expect(parseLedger(bytes)).toEqual(l);
        const copy = bytes.slice();
        const at = flip % copy.length;
        copy[at] = copy[at]! ^ 0x01;
        let changed: Ledger | undefined;
        try {
          changed = parseLedger(copy);
        } catch {
          return;
        }
        expect(changed).not.toEqual(l);
      }),
      { numRuns: 200 },
    );
  });

  it('knows real dates', () => {
    expect(isDate('2024-02-29')).toBe(true);
    expect(isDate('2025-02-29')).toBe(false);
    expect(isDate('2025-1-01')).toBe(false);
  });
});

describe('columnar ledger encoding (what the build uses)', () => {
  it('gives the same bytes as encodeLedger and the same errors', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.uint8Array({ minLength: 32, maxLength: 32 }), { maxLength: 30 }), (raw) => {
        const sorted = raw.map((b) => Buffer.from(b)).sort(Buffer.compare);
        const entries = sorted.map((b, i) => ({ hash: b.toString('hex'), submittedAt: new Date(Date.UTC(2025, 10, 2) + i * 1000).toISOString() }));
        const l = ledger({ firstIndex: 7, treeSize: 7 + entries.length, entries });
        const { entries: _, ...head } = l;
        const columns = encodeLedgerColumns(head, new Uint8Array(Buffer.concat(sorted)), entries.map((e) => e.submittedAt));
        expect(Buffer.from(columns).equals(Buffer.from(encodeLedger(l)))).toBe(true);
      }),
    );
    const { entries: _, ...head } = ledger({ treeSize: 5 });
    const two = new Uint8Array(64).fill(2, 0, 32).fill(1, 32);
    expect(() => encodeLedgerColumns(head, two, ['2025-11-02T00:00:00.000Z', '2025-11-02T00:00:00.000Z'])).toThrow(/sorted/);
    expect(() => encodeLedgerColumns(head, new Uint8Array(32), ['2025-11-02T00:00:00.000Z'])).toThrow(/tree_size/);
  });

  it('writes times given as milliseconds exactly as Date#toISOString does, and refuses times off the day', () => {
    const dayStart = Date.UTC(2025, 10, 2);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 86_399_999 }), { minLength: 1, maxLength: 40 }), (offsets) => {
        const n = offsets.length;
        const hashes = new Uint8Array(32 * n);
        for (let i = 0; i < n; i++) hashes.set([i >> 8, i & 0xff], 32 * i);
        const { entries: _, ...head } = ledger({ firstIndex: 0, treeSize: n });
        const ms = Float64Array.from(offsets, (x) => dayStart + x);
        const strings = Array.from(ms, (t) => new Date(t).toISOString());
        expect(Buffer.from(encodeLedgerColumns(head, hashes, ms)).equals(Buffer.from(encodeLedgerColumns(head, hashes, strings)))).toBe(true);
      }),
    );
    const { entries: _, ...head } = ledger({ firstIndex: 0, treeSize: 1 });
    for (const t of [dayStart - 1, dayStart + 86_400_000, dayStart + 0.5, Number.NaN]) {
      expect(() => encodeLedgerColumns(head, new Uint8Array(32), Float64Array.of(t))).toThrow(/submitted_at/);
    }
  });
});
