// The /ledgers page's data layer (site/src/lib/ledgers.ts), in this process without a browser: the page the
// static archive gives when the API cannot be read, the year's calendar from it, the cards enriched with the
// month's block information and signature checks, and the heat map's squares (place, shade, label, ring).
// test/site/ledgers-decade.browser.test.ts drives the page itself in Chromium.
import { describe, expect, it } from 'vitest';
import {
  addMonths,
  calendarFromArchive,
  heatMapOf,
  otsFileExists,
  pageFromArchive,
  withBlockInfo,
  type CalendarYear,
  type LedgerItem,
} from '../../site/src/lib/ledgers.ts';

const DAY_MS = 86_400_000;
/** Every day from `from` to `to` (inclusive), oldest first, day i with i + 1 entries. */
const daysFrom = (from: string, to: string) => {
  const out: { date: string; entryCount: number }[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`), i = 0; t <= Date.parse(`${to}T00:00:00Z`); t += DAY_MS, i++)
    out.push({ date: new Date(t).toISOString().slice(0, 10), entryCount: i + 1 });
  return out;
};
const ots = { latest_ots_ok: '2025-02-15', last_update: '2025-03-10T01:00:00Z', queue_size: 23 };

describe('months', () => {
  it.each([
    ['2025-12', 1, '2026-01'],
    ['2025-01', -1, '2024-12'],
    ['2024-02', 12, '2025-02'],
    ['2025-03', 0, '2025-03'],
  ] as const)('%s %+i month(s) is %s', (month, n, expected) => {
    expect(addMonths(month, n)).toBe(expected);
  });
});

describe('from the static archive, without the API', () => {
  const days = daysFrom('2025-01-01', '2025-03-10');

  it("a month's page: the 31 days before the next month's first, newest first, anchored up to ots_status", () => {
    const page = pageFromArchive(days, ots, '2025-03-01');
    expect(page.otsStatus).toBe(ots);
    expect(page.ledgers).toHaveLength(31);
    expect(page.ledgers[0]).toEqual({
      date: '2025-02-28',
      jsonUrl: '/ledgers/2025-02-28.json',
      otsUrl: '/ledgers/2025-02-28.json.ots',
      otsStatus: 'pending',
      signatureVerified: false,
      entryCount: 59,
    });
    expect(page.ledgers.at(-1)!.date).toBe('2025-01-29');
    expect(page.ledgers.find((l) => l.date === '2025-02-15')!.otsStatus).toBe('verified');
    expect(page.ledgers.find((l) => l.date === '2025-02-16')!.otsStatus).toBe('pending');
  });

  it('the newest page without a month, and nothing anchored without ots_status.json', () => {
    const page = pageFromArchive(days, null, null);
    expect(page.ledgers.map((l) => l.date).slice(0, 2)).toEqual(['2025-03-10', '2025-03-09']);
    expect(page.ledgers.every((l) => l.otsStatus === 'pending')).toBe(true);
  });

  it("a year's calendar, with the archive's first and last day", () => {
    const older = [{ date: '2024-12-31', entryCount: 4 }, ...days];
    const calendar = calendarFromArchive('2025', older, ots);
    expect(calendar).toMatchObject({ year: '2025', first: '2024-12-31', last: '2025-03-10' });
    expect(calendar.days).toHaveLength(days.length);
    expect(calendar.days[0]).toEqual({ date: '2025-01-01', entryCount: 1, anchored: true });
    expect(calendar.days.at(-1)).toEqual({ date: '2025-03-10', entryCount: 69, anchored: false });
    expect(calendarFromArchive('2023', older, ots)).toEqual({
      year: '2023',
      days: [],
      first: '2024-12-31',
      last: '2025-03-10',
    });
  });
});

describe("the cards, with the month's block information and signature checks", () => {
  const item = (date: string): LedgerItem => ({
    date,
    jsonUrl: `/ledgers/${date}.json`,
    otsUrl: `/ledgers/${date}.json.ots`,
    otsStatus: 'pending',
    signatureVerified: true,
  });

  it('adds the block, the confirmations, why a day is not anchored yet, and both signatures', () => {
    const cards = withBlockInfo(
      [item('2025-03-02'), item('2025-03-01'), item('2025-02-28')],
      {
        ledgers: { '2025-02-28': { block_height: 880_000, confirmations: 7 } },
        pending: {
          '2025-03-02': { reason: 'not stamped yet', state: 'not-stamped', checked_at: '2025-03-03T00:02:00Z' },
          '2025-03-01': { state: 'pending' },
        },
      },
      [null, { quantum_shield: true, dual_signature: false }, { quantum_shield: true, dual_signature: true }],
    );
    expect(cards[0]).toEqual({
      ...item('2025-03-02'),
      anchoring: { reason: 'not stamped yet', state: 'not-stamped', checked_at: '2025-03-03T00:02:00Z' },
    });
    // A pending entry without a reason says nothing.
    expect(cards[1]).toEqual({ ...item('2025-03-01'), quantumShield: true, dualSignature: false });
    expect(cards[2]).toEqual({
      ...item('2025-02-28'),
      blockHeight: 880_000,
      confirmations: 7,
      quantumShield: true,
      dualSignature: true,
    });
  });

  it("a day's .ots exists once anchored or held by the calendars, not before", () => {
    expect(otsFileExists({ ...item('2025-03-01'), otsStatus: 'verified' })).toBe(true);
    expect(otsFileExists({ ...item('2025-03-01'), anchoring: { reason: 'r', state: 'pending' } })).toBe(true);
    expect(otsFileExists({ ...item('2025-03-01'), anchoring: { reason: 'r', state: 'unverified' } })).toBe(true);
    expect(otsFileExists({ ...item('2025-03-01'), anchoring: { reason: 'r', state: 'not-stamped' } })).toBe(false);
    expect(otsFileExists(item('2025-03-01'))).toBe(false);
  });
});

describe('the heat map', () => {
  const calendar: CalendarYear = {
    year: '2025',
    days: [
      { date: '2025-01-01', entryCount: 1, anchored: true },
      { date: '2025-03-04', entryCount: 1000, anchored: true },
      { date: '2025-03-05', entryCount: 31, anchored: false },
      { date: '2025-12-31', entryCount: 2, anchored: false },
    ],
    first: '2025-01-01',
    last: '2025-12-31',
  };
  const map = heatMapOf(calendar, '2025-03', '2025-03-05');
  const square = (date: string) => map.squares.find((s) => s.date === date)!;

  it('a square a day in a column a week: 2025 begins on a Wednesday, 53 weeks', () => {
    expect(map.squares).toHaveLength(365);
    expect(map.weeks).toBe(53);
    expect(square('2025-01-01')).toMatchObject({ column: 2, row: 5 });
    expect(square('2025-01-05')).toMatchObject({ column: 3, row: 2 });
    expect(square('2025-12-31')).toMatchObject({ column: 54, row: 5 });
    expect(map.monthColumns).toHaveLength(12);
    expect(map.monthColumns[0]).toBe(2);
    expect(map.monthColumns[2]).toBe(square('2025-03-01').column);
    expect(heatMapOf({ ...calendar, year: '2024', days: [] }, '2024-02', null).squares).toHaveLength(366);
  });

  it("shades on a log scale against the year's busiest day; 0 without a ledger", () => {
    expect(square('2025-03-04').level).toBe(4);
    expect(square('2025-03-05').level).toBe(2);
    expect(square('2025-01-01').level).toBe(1);
    expect(square('2025-01-02')).toMatchObject({ level: 0, day: undefined });
  });

  it("labels each day, rings the highlighted day and the shown month's, and sums the year", () => {
    expect(square('2025-03-04').label).toBe('March 4, 2025: 1,000 entries, anchored in Bitcoin');
    expect(square('2025-01-01').label).toBe('January 1, 2025: 1 entry, anchored in Bitcoin');
    expect(square('2025-03-05').label).toBe('March 5, 2025: 31 entries, awaiting Bitcoin anchoring');
    expect(square('2025-01-02').label).toBe('January 2, 2025: no ledger');
    expect(square('2025-03-05').ring).toBe('highlight');
    expect(square('2025-03-31').ring).toBe('month');
    expect(square('2025-04-01').ring).toBeNull();
    expect(map).toMatchObject({ total: 1034, pending: 2 });
  });
});
