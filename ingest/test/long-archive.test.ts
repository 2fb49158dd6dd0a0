// An archive of 3,650 days costs a reader of recent days what one of 10 or 365 costs (test/support/long-archive.ts
// writes the days; only the newest 61 have files, so a path that opened an older day's files would fail).
// GET /api/ledgers.php answers the newest page (bounded), pages back with `before` and `limit` without a gap or
// a repeat, and takes about the same time and bytes at 3,650 days as at 365 (the precise ratios are in
// `make bench`, docs/BENCHMARKS.md; the bounds here are generous because this machine's speed drifts). The Atom
// feed of the newest days, read by Python's XML parser, is as long at 3,650 days as at 365.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { loadSigningKeys } from '../../runtime/keys.ts';
import { FEED_DAYS } from '../routes/feed.ts';
import { LEDGERS_PAGE } from '../routes/status.ts';
import { writeLongArchive, type LongArchive } from '../../test/support/long-archive.ts';
import { makeFixture, removeTempDirs, type Fixture } from './fixture.ts';
import type { LedgersCalendar, LedgersPage, OtsBlockInfo } from '../routes/status.ts';
import type { ErrorAnswer } from '../schemas.ts';

const LAST = '2025-11-02';
const SIZES = [10, 365, 3650] as const;
const archives = new Map<number, { f: Fixture; long: LongArchive }>();

beforeAll(async () => {
  for (const count of SIZES) {
    let long!: LongArchive;
    const f = await makeFixture({
      publish: [],
      prepare: (config) => {
        long = writeLongArchive({
          archive: config.archive,
          origin: config.logOrigin,
          keys: loadSigningKeys(config),
          count,
          lastDate: LAST,
          signed: LEDGERS_PAGE + 1,
        });
      },
    });
    archives.set(count, { f, long });
  }
}, 120_000);
afterAll(async () => {
  for (const { f } of archives.values()) await f.close();
  removeTempDirs();
});

const get = async (count: number, query = '') => {
  const res = await archives.get(count)!.f.app.inject(`/api/ledgers.php${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return { page: res.json() as LedgersPage, bytes: res.body.length };
};

describe('GET /api/ledgers.php on a long archive', () => {
  test('the default answer is the newest page, newest first, each day verified from its own files', async () => {
    const { page } = await get(3650);
    const days = archives.get(3650)!.long.days;
    expect(page.total).toBe(3650);
    expect(page.ledgers.map((l) => l.date)).toEqual(
      days
        .slice(-LEDGERS_PAGE)
        .map((d) => d.date)
        .reverse(),
    );
    expect(page.ledgers.every((l) => l.signatureVerified)).toBe(true);
    expect(page.ledgers.map((l) => l.entryCount)).toEqual(
      days
        .slice(-LEDGERS_PAGE)
        .map((d) => d.entryCount)
        .reverse(),
    );
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
      const { page }: { page: LedgersPage } = await get(3650, `?before=${before}&limit=366`);
      expect(page.ledgers.length).toBeLessThanOrEqual(366);
      seen.push(...page.ledgers.map((l) => l.date));
      before = page.next;
    }
    expect(seen).toEqual(
      archives
        .get(3650)!
        .long.days.map((d) => d.date)
        .reverse(),
    );
    // A date between published days, a page of one, and the oldest day.
    const days = archives.get(3650)!.long.days;
    expect((await get(3650, `?before=${days[100]!.date}&limit=1`)).page).toMatchObject({
      ledgers: [{ date: days[99]!.date }],
      next: days[99]!.date,
    });
    expect((await get(3650, `?before=${days[0]!.date}`)).page).toMatchObject({ ledgers: [], next: null });
  });

  test('bad paging parameters are 400 with a sentence', async () => {
    const { f } = archives.get(10)!;
    for (const q of [
      '?limit=0',
      '?limit=367',
      '?limit=abc',
      '?before=2025-02-30',
      '?before=yesterday',
      '?limit=1&limit=2',
      '?page=2',
    ]) {
      const res = await f.app.inject(`/api/ledgers.php${q}`);
      expect(res.statusCode, q).toBe(400);
      expect((res.json() as ErrorAnswer).error, q).toMatch(/\w+ \w+/);
    }
  });

  test('the newest page costs the same bytes and the same file-system work at 365 and 3,650 days', async () => {
    const a = await get(365);
    const b = await get(3650);
    expect(b.bytes / a.bytes).toBeGreaterThan(0.97);
    expect(b.bytes / a.bytes).toBeLessThan(1.03);
    // The work of a warm request, counted in file-system calls (times drift on this machine; `make bench`
    // reports them): the same at 3,650 days as at 365.
    const calls = async (count: number) => {
      const spies = (['statSync', 'readFileSync', 'openSync', 'readSync'] as const).map((name) => vi.spyOn(fs, name));
      try {
        await get(count);
        return spies.map((spy) => spy.mock.calls.length);
      } finally {
        for (const spy of spies) spy.mockRestore();
      }
    };
    const [c365, c3650] = [await calls(365), await calls(3650)];
    expect(c3650).toEqual(c365);
    expect(c365[0]).toBeGreaterThan(0); // the spies see the calls (a stat of each file the page checks)
    expect(c365[1]).toBe(0); // nothing re-read: days.json, ots_status.json and block_info.json are kept parsed
  });
});

describe('GET /api/ots-block-info.php', () => {
  test('bounded: the newest page of days by default, or one month', async () => {
    const { f, long } = archives.get(3650)!;
    const all = (await f.app.inject('/api/ots-block-info.php')).json() as OtsBlockInfo;
    // The newest day is not anchored yet: the newest page less one.
    expect(Object.keys(all.ledgers)).toEqual(long.days.slice(-LEDGERS_PAGE, -1).map((d) => d.date));
    const month = (await f.app.inject('/api/ots-block-info.php?month=2020-02')).json() as OtsBlockInfo;
    expect(Object.keys(month.ledgers)).toEqual(
      long.days.filter((d) => d.date.startsWith('2020-02-')).map((d) => d.date),
    );
    expect((await f.app.inject('/api/ots-block-info.php?month=2020-13')).statusCode).toBe(400);
  });
});

describe('GET /api/ledgers-calendar.php', () => {
  test("a year's days with size and anchoring, the same work in the first and the last year", async () => {
    const { f, long } = archives.get(3650)!;
    const year = LAST.slice(0, 4);
    const res = await f.app.inject(`/api/ledgers-calendar.php?year=${year}`);
    expect(res.statusCode).toBe(200);
    const body = res.json() as LedgersCalendar;
    const expected = long.days.filter((d) => d.date.startsWith(`${year}-`));
    expect(body.days.map((d) => [d.date, d.entryCount])).toEqual(expected.map((d) => [d.date, d.entryCount]));
    expect(body.days.at(-1)!.anchored).toBe(false);
    expect(body.days.at(-2)!.anchored).toBe(true);
    expect(body).toMatchObject({ first: long.days[0]!.date, last: LAST });
    expect((await f.app.inject('/api/ledgers-calendar.php?year=1999')).json()).toMatchObject({ days: [] });
    for (const q of ['', '?year=99', '?year=2025&x=1'])
      expect((await f.app.inject(`/api/ledgers-calendar.php${q}`)).statusCode, q).toBe(400);
  });
});

describe('GET /ledgers/feed.xml', () => {
  /** The feed read by Python's XML parser (not ours): id, title, updated, link and summary of each entry. */
  const parse = (xml: string) =>
    JSON.parse(
      execFileSync(
        'python3',
        [
          '-c',
          `import sys, json, xml.etree.ElementTree as ET
A = '{http://www.w3.org/2005/Atom}'
root = ET.fromstring(sys.stdin.buffer.read())
assert root.tag == A + 'feed'
def req(e, name):
    v = e.find(A + name)
    assert v is not None, name
    return v
print(json.dumps({'id': req(root, 'id').text, 'updated': req(root, 'updated').text, 'self': [l.get('href') for l in root.findall(A + 'link') if l.get('rel') == 'self'],
  'entries': [{'id': req(e, 'id').text, 'title': req(e, 'title').text, 'updated': req(e, 'updated').text, 'link': req(e, 'link').get('href'), 'summary': req(e, 'summary').text} for e in root.findall(A + 'entry')]}))`,
        ],
        { input: xml, encoding: 'utf8' },
      ),
    ) as {
      id: string;
      updated: string;
      self: string[];
      entries: Array<{ id: string; title: string; updated: string; link: string; summary: string }>;
    };

  test('an Atom feed of the newest 30 days, newest first, each with its size and anchoring; the same size at 3,650 days as at 365', async () => {
    const res = await archives.get(3650)!.f.app.inject('/ledgers/feed.xml');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/atom+xml; charset=utf-8');
    const feed = parse(res.body);
    const days = archives.get(3650)!.long.days;
    expect(feed.self).toEqual(['https://timeseal.test/ledgers/feed.xml']);
    expect(feed.entries).toHaveLength(FEED_DAYS);
    expect(feed.entries.map((e) => e.link)).toEqual(
      days
        .slice(-FEED_DAYS)
        .reverse()
        .map((d) => `https://timeseal.test/ledgers/${d.date}.json`),
    );
    const newest = days.at(-1)!;
    expect(feed.entries[0]).toMatchObject({
      title: `Ledger of ${newest.date}: ${newest.entryCount} hash${newest.entryCount === 1 ? '' : 'es'}`,
      updated: '2025-11-03T00:01:00.000Z',
    });
    expect(feed.updated).toBe('2025-11-03T00:01:00.000Z');
    expect(feed.entries[0]!.summary).toMatch(/Bitcoin anchoring pending/);
    expect(feed.entries[1]!.summary).toMatch(/Anchored in Bitcoin block \d+ through OpenTimestamps/);
    expect(feed.entries[1]!.summary).toContain(`Ledger SHA-256 ${days.at(-2)!.sha256}`);
    const small = await archives.get(365)!.f.app.inject('/ledgers/feed.xml');
    expect(Math.abs(small.body.length - res.body.length) / res.body.length).toBeLessThan(0.05);
    expect(parse((await archives.get(10)!.f.app.inject('/ledgers/feed.xml')).body).entries).toHaveLength(10);
  });
});
