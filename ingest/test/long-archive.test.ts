// An archive of 3,650 days costs a reader of recent days what one of 10 or 365 costs (test/support/long-archive.ts
// writes the days; only the newest 61 have files, so a path that opened an older day's files would fail).
// GET /api/ledgers.php answers the newest page (bounded), pages back with `before` and `limit` without a gap or
// a repeat, and takes about the same time and bytes at 3,650 days as at 365 (the precise ratios are in
// `make bench`, docs/BENCHMARKS.md; the bounds here are generous because this machine's speed drifts).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadSigningKeys } from '../../runtime/keys.ts';
import { LEDGERS_PAGE } from '../routes/status.ts';
import { writeLongArchive, type LongArchive } from '../../test/support/long-archive.ts';
import { makeFixture, removeTempDirs, type Fixture } from './fixture.ts';

const LAST = '2025-11-02';
const SIZES = [10, 365, 3650] as const;
const archives = new Map<number, { f: Fixture; long: LongArchive }>();

beforeAll(async () => {
  for (const count of SIZES) {
    let long!: LongArchive;
    const f = await makeFixture({
      publish: [],
      prepare: (config) => {
        long = writeLongArchive({ archive: config.archive, origin: config.logOrigin, keys: loadSigningKeys(config), count, lastDate: LAST, signed: LEDGERS_PAGE + 1 });
      },
    });
    archives.set(count, { f, long });
  }
}, 120_000);
afterAll(async () => {
  for (const { f } of archives.values()) await f.close();
  removeTempDirs();
});

interface Page {
  ledgers: Array<{ date: string; signatureVerified: boolean; entryCount: number; otsStatus: string }>;
  next: string | null;
  total: number;
}
const get = async (count: number, query = '') => {
  const res = await archives.get(count)!.f.app.inject(`/api/ledgers.php${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return { page: res.json() as Page, bytes: res.body.length };
};

describe('GET /api/ledgers.php on a long archive', () => {
  test('the default answer is the newest page, newest first, each day verified from its own files', async () => {
    const { page } = await get(3650);
    const days = archives.get(3650)!.long.days;
    expect(page.total).toBe(3650);
    expect(page.ledgers.map((l) => l.date)).toEqual(days.slice(-LEDGERS_PAGE).map((d) => d.date).reverse());
    expect(page.ledgers.every((l) => l.signatureVerified)).toBe(true);
    expect(page.ledgers.map((l) => l.entryCount)).toEqual(days.slice(-LEDGERS_PAGE).map((d) => d.entryCount).reverse());
    expect(page.ledgers[0]!.otsStatus).toBe('pending');
    expect(page.ledgers[1]!.otsStatus).toBe('verified');
    expect(page.next).toBe(days.at(-LEDGERS_PAGE)!.date);
    const small = (await get(10)).page;
    expect(small.ledgers).toHaveLength(10);
    expect(small.next).toBeNull();
  });

  test('paging back with before and limit covers every day once, in order', async () => {
    const seen: string[] = [];
    let before: string | null = '9999-12-31';
    while (before !== null) {
      const { page }: { page: Page } = await get(3650, `?before=${before}&limit=366`);
      expect(page.ledgers.length).toBeLessThanOrEqual(366);
      seen.push(...page.ledgers.map((l) => l.date));
      before = page.next;
    }
    expect(seen).toEqual(archives.get(3650)!.long.days.map((d) => d.date).reverse());
    // A date between published days, a page of one, and the oldest day.
    const days = archives.get(3650)!.long.days;
    expect((await get(3650, `?before=${days[100]!.date}&limit=1`)).page).toMatchObject({ ledgers: [{ date: days[99]!.date }], next: days[99]!.date });
    expect((await get(3650, `?before=${days[0]!.date}`)).page).toMatchObject({ ledgers: [], next: null });
  });

  test('bad paging parameters are 400 with a sentence', async () => {
    const { f } = archives.get(10)!;
    for (const q of ['?limit=0', '?limit=367', '?limit=abc', '?before=2025-02-30', '?before=yesterday', '?limit=1&limit=2', '?page=2']) {
      const res = await f.app.inject(`/api/ledgers.php${q}`);
      expect(res.statusCode, q).toBe(400);
      expect((res.json() as { error: string }).error, q).toMatch(/\w+ \w+/);
    }
  });

  test('the newest page costs the same bytes at 365 and 3,650 days, and about the same time', async () => {
    const a = await get(365);
    const b = await get(3650);
    expect(b.bytes / a.bytes).toBeGreaterThan(0.97);
    expect(b.bytes / a.bytes).toBeLessThan(1.03);
    const median = async (count: number) => {
      const times: number[] = [];
      for (let i = 0; i < 15; i++) {
        const t = performance.now();
        await get(count);
        times.push(performance.now() - t);
      }
      return times.sort((x, y) => x - y)[7]!;
    };
    // Alternated, so that the machine's drift falls on both alike.
    const t365: number[] = [];
    const t3650: number[] = [];
    for (let round = 0; round < 3; round++) {
      t365.push(await median(365));
      t3650.push(await median(3650));
    }
    const ratio = Math.min(...t3650) / Math.min(...t365);
    console.info(`/api/ledgers.php median: 365 days ${Math.min(...t365).toFixed(2)} ms, 3,650 days ${Math.min(...t3650).toFixed(2)} ms (ratio ${ratio.toFixed(2)})`);
    expect(ratio).toBeLessThan(2);
  });
});
