import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from './encoding.ts';
import {
  encodeLedger,
  encodeLedgerBody,
  encodeLedgerChunks,
  encodeLedgerColumns,
  encodeLedgerHeader,
  isDate,
  ledgerHeaderLength,
  parseLedger,
  LedgerReader,
  parseLedgerColumns,
  type Ledger,
  type LedgerColumns,
} from './ledger.ts';
import { TimesealError } from './errors.ts';

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

/** Texts that differ from the canonical encoding `text` of a two-entry ledger without changing its meaning much. */
function nonCanonical(text: string): string[] {
  return [
    text.replace('{"format"', '{ "format"'),
    text.replace('\n]}\n', ']}\n'),
    text.replace(']}\n', ']}'),
    text.replace(']}\n', ']}\n\n'),
    text.replace('"origin":"timeseal.example","date"', '"date":"2025-11-02","origin":"timeseal.example","x"'),
    text.replace(`"root":"${H('a')}"`, `"root":"${H('A')}"`),
    text.replace('"entry_count":2', '"entry_count":3'),
    text.replace('"entries":[\n', '"entries": [\n'),
    JSON.stringify(JSON.parse(text)),
    '',
  ];
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
    for (const v of nonCanonical(fromUtf8(bytes)))
      expect(() => parseLedger(utf8(v)), v.slice(0, 60)).toThrow(TimesealError);
  });

  it('names the field of each semantic error', () => {
    const cases: Array<[Partial<Ledger>, RegExp]> = [
      [{ date: '2025-02-30' }, /date/],
      [{ treeSize: 6 }, /tree_size/],
      [{ root: 'zz' }, /root/],
      [{ previous: { date: '2025-11-02', sha256: H('b') } }, /previous\.date/],
      [
        {
          entries: [
            { hash: H('2'), submittedAt: '2025-11-02T00:00:00.000Z' },
            { hash: H('1'), submittedAt: '2025-11-02T00:00:00.000Z' },
          ],
        },
        /sorted/,
      ],
      [
        {
          entries: [
            { hash: H('1'), submittedAt: '2025-11-02T00:00:00.000Z' },
            { hash: H('1'), submittedAt: '2025-11-02T00:00:00.000Z' },
          ],
        },
        /sorted/,
      ],
      [
        {
          entries: [
            { hash: H('1'), submittedAt: '2025-11-03T00:00:00.000Z' },
            { hash: H('2'), submittedAt: '2025-11-02T00:00:00.000Z' },
          ],
        },
        /submitted_at/,
      ],
      [
        {
          entries: [
            { hash: H('1'), submittedAt: '2025-11-02T24:00:00.000Z' },
            { hash: H('2'), submittedAt: '2025-11-02T00:00:00.000Z' },
          ],
        },
        /submitted_at/,
      ],
      [{ origin: 'has space' }, /origin/],
    ];
    for (const [over, field] of cases) expect(() => encodeLedger(ledger(over))).toThrow(field);
  });

  it('parse(encode(x)) = x for random ledgers, and any changed byte is rejected or changes the value', () => {
    const hashes = fc.uniqueArray(
      fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex')),
      { minLength: 0, maxLength: 20 },
    );
    fc.assert(
      fc.property(hashes, fc.nat(1000), fc.integer({ min: 0, max: 86_399_999 }), fc.nat(), (hs, first, ms, flip) => {
        const entries = [...hs]
          .sort()
          .map((hash) => ({ hash, submittedAt: new Date(Date.UTC(2025, 10, 2) + ms).toISOString() }));
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
        const entries = sorted.map((b, i) => ({
          hash: b.toString('hex'),
          submittedAt: new Date(Date.UTC(2025, 10, 2) + i * 1000).toISOString(),
        }));
        const l = ledger({ firstIndex: 7, treeSize: 7 + entries.length, entries });
        const { entries: _, ...head } = l;
        const columns = encodeLedgerColumns(
          head,
          new Uint8Array(Buffer.concat(sorted)),
          entries.map((e) => e.submittedAt),
        );
        expect(Buffer.from(columns).equals(Buffer.from(encodeLedger(l)))).toBe(true);
      }),
    );
    const { entries: _, ...head } = ledger({ treeSize: 5 });
    const two = new Uint8Array(64).fill(2, 0, 32).fill(1, 32);
    expect(() => encodeLedgerColumns(head, two, ['2025-11-02T00:00:00.000Z', '2025-11-02T00:00:00.000Z'])).toThrow(
      /sorted/,
    );
    expect(() => encodeLedgerColumns(head, new Uint8Array(32), ['2025-11-02T00:00:00.000Z'])).toThrow(/tree_size/);
  });

  it('in batches: the same bytes as in one, and a hash not after the last of the batch before refused', () => {
    const { entries: _, ...head } = ledger({ firstIndex: 0, treeSize: 4 });
    const ms = Float64Array.from({ length: 4 }, (_, i) => Date.UTC(2025, 10, 2) + i);
    const hashes = (...bytes: number[]) => new Uint8Array(bytes.flatMap((b) => Array<number>(32).fill(b)));
    const chunks = (second: Uint8Array) =>
      Buffer.concat([
        ...encodeLedgerChunks(head, 4, [
          { hashes: hashes(1, 2), times: ms.subarray(0, 2) },
          { hashes: second, times: ms.subarray(2) },
        ]),
      ]);
    expect(chunks(hashes(3, 4)).equals(Buffer.from(encodeLedgerColumns(head, hashes(1, 2, 3, 4), ms)))).toBe(true);
    // The second batch's first hash equal to, or before, the first batch's last.
    for (const second of [hashes(2, 4), hashes(1, 4)]) {
      expect(() => chunks(second)).toThrow(/entries\[2\]\.hash.*sorted/);
    }
    // A hash that differs from the one before it only in its last byte.
    const close = hashes(3, 3);
    close[63] = 2;
    expect(() => chunks(close)).toThrow(/entries\[3\]\.hash.*sorted/);
    close[63] = 4;
    expect(chunks(close).length).toBeGreaterThan(0);
  });

  it('in a header and a body: the header as long for every root, and header + body the same bytes', () => {
    const hex = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex'));
    fc.assert(
      fc.property(
        fc.record({
          origin: fc.stringMatching(/^[a-z0-9./"\\é-]{1,30}$/),
          firstIndex: fc.integer({ min: 0, max: 2 ** 40 }),
          count: fc.integer({ min: 0, max: 12 }),
          split: fc.integer({ min: 0, max: 12 }),
          previous: fc.option(hex),
          roots: fc.array(hex, { minLength: 2, maxLength: 5 }),
        }),
        ({ origin, firstIndex, count, split, previous, roots }) => {
          const head = {
            origin,
            date: '2025-11-02',
            firstIndex,
            treeSize: firstIndex + count,
            previous: previous === null ? null : { date: '2025-11-01', sha256: previous },
          };
          const length = ledgerHeaderLength(head, count);
          const hashes = new Uint8Array(32 * count);
          for (let i = 0; i < count; i++) hashes.set([i + 1], 32 * i);
          const ms = Float64Array.from({ length: count }, (_, i) => Date.UTC(2025, 10, 2) + 1000 * i);
          const at = Math.min(split, count);
          const batches = [
            { hashes: hashes.subarray(0, 32 * at), times: ms.subarray(0, at) },
            { hashes: hashes.subarray(32 * at), times: ms.subarray(at) },
          ];
          const body = Buffer.concat([...encodeLedgerBody(head, count, batches)]);
          for (const root of roots) {
            const top = encodeLedgerHeader({ ...head, root }, count);
            expect(top.length).toBe(length);
            const whole = Buffer.concat([top, body]);
            expect(whole.equals(Buffer.from(encodeLedgerColumns({ ...head, root }, hashes, ms)))).toBe(true);
            // And the text docs/FORMAT.md §3 gives, written out here.
            const lines = Array.from(
              { length: count },
              (_, i) =>
                `["${Buffer.from(hashes.subarray(32 * i, 32 * i + 32)).toString('hex')}","${new Date(ms[i]!).toISOString()}"]`,
            );
            const previousText = JSON.stringify(head.previous);
            expect(whole.toString()).toBe(
              `{"format":"timeseal-ledger/1","origin":${JSON.stringify(origin)},"date":"2025-11-02",` +
                `"first_index":${firstIndex},"entry_count":${count},"tree_size":${firstIndex + count},` +
                `"root":"${root}","previous":${previousText},"entries":[\n${lines.join(',\n')}${count ? '\n' : ''}]}\n`,
            );
          }
        },
      ),
    );
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
        expect(
          Buffer.from(encodeLedgerColumns(head, hashes, ms)).equals(
            Buffer.from(encodeLedgerColumns(head, hashes, strings)),
          ),
        ).toBe(true);
      }),
    );
    const { entries: _, ...head } = ledger({ firstIndex: 0, treeSize: 1 });
    for (const t of [dayStart - 1, dayStart + 86_400_000, dayStart + 0.5, Number.NaN]) {
      expect(() => encodeLedgerColumns(head, new Uint8Array(32), Float64Array.of(t))).toThrow(/submitted_at/);
    }
  });
});

/** What parseLedgerColumns should give for a ledger parseLedger gave. */
function columnsOf(l: Ledger): LedgerColumns {
  const { entries, ...head } = l;
  return {
    head,
    hashes: new Uint8Array(Buffer.concat(entries.map((e) => Buffer.from(e.hash, 'hex')))),
    ms: Float64Array.from(entries, (e) => Date.parse(e.submittedAt)),
  };
}

/** The outcome of a parse: its value, or that it threw a typed error (anything else fails the test). */
function outcome<T>(parse: () => T): T | 'rejected' {
  try {
    return parse();
  } catch (err) {
    expect(err).toBeInstanceOf(TimesealError);
    return 'rejected';
  }
}

describe('columnar ledger parsing (what verify uses for large days)', () => {
  const arbitraryLedger = fc
    .record({
      hashes: fc.uniqueArray(
        fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex')),
        { maxLength: 12 },
      ),
      times: fc.array(fc.integer({ min: 0, max: 86_399_999 }), { minLength: 12, maxLength: 12 }),
      first: fc.nat(1_000_000),
      origin: fc.constantFrom('timeseal.example', 'a"b\\c', 'zürich.example/log', '<x>&y'),
      withPrevious: fc.boolean(),
    })
    .map(({ hashes, times, first, origin, withPrevious }) => {
      const entries = [...hashes]
        .sort()
        .map((hash, i) => ({ hash, submittedAt: new Date(Date.UTC(2025, 10, 2) + times[i]!).toISOString() }));
      return ledger({
        origin,
        firstIndex: first,
        treeSize: first + entries.length,
        entries,
        ...(withPrevious ? {} : { previous: null }),
      });
    });
  // Edits that keep the length (a flipped bit, a swapped character) and edits that do not.
  const edit = fc.oneof(
    fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
    fc.record({
      kind: fc.constant('set' as const),
      at: fc.nat(),
      to: fc.constantFrom(...Array.from('0123456789abcdefABF"[],:\n {}TZ.-', (c) => c.charCodeAt(0))),
    }),
    fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
    fc.record({
      kind: fc.constant('insert' as const),
      at: fc.nat(),
      to: fc.constantFrom(0x30, 0x61, 0x22, 0x2c, 0x0a, 0x20),
    }),
  );

  it('accepts exactly the bytes parseLedger accepts, with the same content, under random edits', () => {
    let accepted = 0;
    fc.assert(
      fc.property(arbitraryLedger, fc.array(edit, { maxLength: 2 }), (l, edits) => {
        let bytes = encodeLedger(l);
        for (const e of edits) {
          const at = e.at % (bytes.length + 1);
          if (e.kind === 'flip' && at < bytes.length) bytes[at] = bytes[at]! ^ (1 << e.bit);
          if (e.kind === 'set' && at < bytes.length) bytes[at] = e.to;
          if (e.kind === 'delete' && at < bytes.length)
            bytes = Uint8Array.of(...bytes.subarray(0, at), ...bytes.subarray(at + 1));
          if (e.kind === 'insert') bytes = Uint8Array.of(...bytes.subarray(0, at), e.to, ...bytes.subarray(at));
        }
        const whole = outcome(() => parseLedger(bytes));
        const columns = outcome(() => parseLedgerColumns(bytes));
        if (whole === 'rejected') {
          expect(columns).toBe('rejected');
        } else {
          accepted++;
          expect(columns).toEqual(columnsOf(whole));
        }
      }),
      { numRuns: 600 },
    );
    // Enough of the edited ledgers stay valid (a changed hex digit, an unedited ledger) for "same content" to be tested.
    expect(accepted).toBeGreaterThan(100);
  });

  it('read a piece at a time (LedgerReader, any cuts, no length given) accepts and gives the same as at once', () => {
    let accepted = 0;
    fc.assert(
      fc.property(
        arbitraryLedger,
        fc.array(edit, { maxLength: 2 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (l, edits, cuts) => {
          let bytes = encodeLedger(l);
          for (const e of edits) {
            const at = e.at % (bytes.length + 1);
            if (e.kind === 'flip' && at < bytes.length) bytes[at] = bytes[at]! ^ (1 << e.bit);
            if (e.kind === 'delete' && at < bytes.length)
              bytes = Uint8Array.of(...bytes.subarray(0, at), ...bytes.subarray(at + 1));
            if (e.kind === 'insert') bytes = Uint8Array.of(...bytes.subarray(0, at), e.to, ...bytes.subarray(at));
          }
          const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const pieces = [0, ...points].map((from, k) => bytes.subarray(from, [...points, bytes.length][k]));
          const whole = outcome(() => parseLedgerColumns(bytes));
          for (const columns of [true, false]) {
            const streamed = outcome(() => {
              // Each piece in one reused Buffer, as a file reader gives them (what the reader keeps, it copies).
              const reader = new LedgerReader({ columns });
              const reused = Buffer.alloc(bytes.length);
              for (const piece of pieces) {
                reused.set(piece);
                reader.push(reused.subarray(0, piece.length));
              }
              return reader.end();
            });
            if (whole === 'rejected') expect(streamed).toBe('rejected');
            else if (columns) expect(streamed).toEqual(whole);
            else expect(streamed).toMatchObject({ head: whole.head });
          }
          if (whole !== 'rejected') accepted++;
        },
      ),
      { numRuns: 400 },
    );
    expect(accepted).toBeGreaterThan(50);
  });

  it('LedgerReader: bytes that never end the header cost their length, not its square; a ledger a byte at a time is the same', () => {
    // CPU of pushing `mib` pieces of 1 MiB of zeros (no header's end mark): on the code that joined and searched
    // everything kept on each push, 64 MiB cost some 64 times 8 MiB (quadratic); searched piece by piece, ~8.
    const cost = (mib: number): number => {
      const reader = new LedgerReader({ columns: false });
      const piece = Buffer.alloc(1 << 20);
      const start = process.cpuUsage();
      for (let i = 0; i < mib; i++) reader.push(piece);
      const used = process.cpuUsage(start);
      expect(() => reader.end()).toThrow(/no entries array/);
      return used.user + used.system;
    };
    cost(8); // compiled once, before it is measured
    const small = cost(8);
    const big = cost(64);
    expect(big / small, `8 MiB: ${small / 1000} ms of CPU, 64 MiB: ${big / 1000} ms`).toBeLessThan(24);
    // The mark `"entries":[` and its newline cut across many pieces: a byte at a time reads as at once.
    const bytes = encodeLedger(ledger());
    const reader = new LedgerReader({ columns: true });
    for (let i = 0; i < bytes.length; i++) reader.push(bytes.subarray(i, i + 1));
    expect(reader.end()).toEqual(parseLedgerColumns(bytes));
  });

  it('rejects the non-canonical variants parseLedger rejects, and names the field of an entry error', () => {
    const bytes = encodeLedger(ledger());
    const text = fromUtf8(bytes);
    for (const v of nonCanonical(text))
      expect(() => parseLedgerColumns(utf8(v)), v.slice(0, 60)).toThrow(TimesealError);
    expect(() => parseLedgerColumns(utf8(text.replace(H('2'), H('A'))))).toThrow(/entries\[1\]\.hash/);
    expect(() => parseLedgerColumns(utf8(text.replace(H('1'), H('3'))))).toThrow(/sorted/);
    expect(() => parseLedgerColumns(utf8(text.replace('T23:59:59.999Z', 'T24:00:00.000Z')))).toThrow(
      /entries\[1\]\.submitted_at/,
    );
    expect(() =>
      parseLedgerColumns(utf8(text.replace('2025-11-02T00:00:00.000Z', '2025-11-03T00:00:00.000Z'))),
    ).toThrow(/entries\[0\]\.submitted_at/);
    expect(parseLedgerColumns(bytes)).toEqual(columnsOf(ledger()));
    const empty = ledger({ entries: [], treeSize: 3 });
    expect(parseLedgerColumns(encodeLedger(empty))).toEqual(columnsOf(empty));
  });
});
