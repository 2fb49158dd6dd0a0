// The site on an archive of ten years, in Debian's Chromium against the real server (`timeseal serve`):
//   - /ledgers shows one month at a time: its first view makes at most ~60 requests and renders at most 31
//     cards on a 3,650-day archive, and the same number of requests and about the same bytes as on a 10-day
//     one (ratio ≤ 1.2); month and year navigation, "jump to date", the year's heat map (a square a day, 365 or
//     366 for a full year) whose squares open their month, by mouse and by keyboard;
//   - a delayed anchoring is said in the same words on a /ledgers card and in a /verify result;
//   - /verify of a hash submitted today says it is queued, with its ledger's publication time;
//   - a search on a default install (no witnesses, no RFC 3161 tokens) makes no request answered 404;
//   - /live draws the last 90 days from one request;
//   - without the API, /ledgers reads the static archive's own files.
// Two archives, one server at a time: 3,650 days written by test/support/long-archive.ts (real files for the
// newest 100 days only: a page that opened an older day's files would find none), then 10 days built for real
// (a default install). Both end on LAST, so both newest months hold the same days.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockInfoMonthPath, BLOCK_INFO_PATH } from '../../core/archive.ts';
import { buildLedgers } from '../../pipeline/build.ts';
import { encodeBlockInfoMonth } from '../../pipeline/anchor/status.ts';
import { loadConfig } from '../../runtime/config.ts';
import { loadSigningKeys } from '../../runtime/keys.ts';
import { openSqliteStore } from '../../store/sqlite/engine.ts';
import { writeLongArchive } from '../support/long-archive.ts';
import {
  capture,
  CAPTURE,
  createProject,
  ensureBuilt,
  launchBrowser,
  pngProblems,
  removeProject,
  settled,
  startServer,
  type Project,
  type Server,
} from './helpers.ts';

/** The newest published day of both archives: nine days of November 2025 in each. */
const LAST = '2025-11-09';
/** The servers' clock: the ledger of 2025-11-10 is open. */
const NOW = '2025-11-10T10:00:00.000Z';
const DAYS = 3650;
/** Why the two newest days of the long archive are not anchored, as the pipeline words it (pipeline/anchor). */
const STAMP_FAILED = 'stamp failed: 0 of 2 calendars answered (2 needed): connect ECONNREFUSED 127.0.0.1:9';
const PENDING = {
  '2025-11-09': {
    state: 'not-stamped',
    reason: `${STAMP_FAILED}; next attempt at 2025-11-10T12:02:00.000Z`,
    checked_at: '2025-11-10T10:02:00.000Z',
  },
  '2025-11-08': {
    state: 'pending',
    reason: 'waiting for Bitcoin confirmation: alice.btc.calendar.opentimestamps.org: no Bitcoin attestation yet',
    checked_at: '2025-11-10T10:05:00.000Z',
  },
};

let project: Project;
let decade: Project;
let ten: Project;
let server: Server | undefined;
let browser: Browser;
const figures: Record<string, FirstView> = {};
const pageErrors: string[] = [];

/** A project folder of its own (archive and database) sharing the keys of `project`. */
function variant(name: string): Project {
  const env = {
    ...project.env,
    TIMESEAL_ARCHIVE: path.join(project.dir, name, 'ledgers'),
    TIMESEAL_DB: path.join(project.dir, name, 'data/timeseal.db'),
  };
  fs.mkdirSync(path.dirname(env.TIMESEAL_DB), { recursive: true });
  return { dir: path.join(project.dir, name), env };
}

/** What a build leaves beside block_info.json: one file a month (pipeline/anchor/status.ts). */
function writeMonths(archive: string): void {
  const info = JSON.parse(fs.readFileSync(path.join(archive, BLOCK_INFO_PATH), 'utf8')) as {
    ledgers: Record<string, never>;
    pending: Record<string, never>;
  };
  fs.mkdirSync(path.join(archive, 'block-info'), { recursive: true });
  for (const month of new Set(Object.keys({ ...info.ledgers, ...info.pending }).map((d) => d.slice(0, 7)))) {
    fs.writeFileSync(path.join(archive, blockInfoMonthPath(month)), encodeBlockInfoMonth(info, month));
  }
}

async function serve(p: Project): Promise<Server> {
  await server?.stop();
  server = await startServer(p, { now: NOW });
  return server;
}

interface FirstView {
  requests: number;
  bytes: number;
  ms: number;
  cards: number;
  urls: string[];
}

/** Opens `route` in a fresh context (no cache) and counts every request until `done` holds and none is in flight. */
async function measure(
  route: string,
  done: (page: Page) => Promise<unknown>,
): Promise<FirstView & { page: Page; close: () => Promise<void> }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: server!.url });
  const page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(`${page.url()}: ${e.message}`));
  const requests: Request[] = [];
  const sizes: Promise<number>[] = [];
  let inFlight = 0;
  let idle: () => void = () => {};
  page.on('request', (r) => {
    requests.push(r);
    inFlight++;
  });
  const finished = (r: Request) => {
    sizes.push(
      r.sizes().then(
        (s) => s.responseBodySize + s.responseHeadersSize,
        () => 0,
      ),
    );
    if (--inFlight === 0) idle();
  };
  page.on('requestfinished', finished);
  page.on('requestfailed', finished);
  const started = performance.now();
  await page.goto(route);
  await done(page);
  if (inFlight > 0) await new Promise<void>((resolve) => (idle = resolve));
  const ms = performance.now() - started;
  const bytes = (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
  const cards = await page.locator('[data-testid=ledger-card]').count();
  return {
    requests: requests.length,
    bytes,
    ms,
    cards,
    urls: requests.map((r) => new URL(r.url()).pathname + new URL(r.url()).search),
    page,
    close: () => context.close(),
  };
}

const ledgersDone = async (page: Page) => {
  await page.locator('[data-testid=ledger-cards][data-complete=true]').waitFor({ timeout: 20_000 });
  await page.locator('[data-testid=heatmap]').waitFor();
};

beforeAll(async () => {
  ensureBuilt();
  project = createProject();
  const config = loadConfig(project.env);
  const keys = loadSigningKeys({ keys: config.keys, privateKeys: config.privateKeys });
  decade = variant('decade');
  writeLongArchive({
    archive: decade.env.TIMESEAL_ARCHIVE!,
    origin: config.logOrigin,
    keys,
    count: DAYS,
    lastDate: LAST,
    signed: 100,
    anchoredThrough: '2025-11-07',
  });
  const infoFile = path.join(decade.env.TIMESEAL_ARCHIVE!, BLOCK_INFO_PATH);
  fs.writeFileSync(infoFile, JSON.stringify({ ...JSON.parse(fs.readFileSync(infoFile, 'utf8')), pending: PENDING }));
  writeMonths(decade.env.TIMESEAL_ARCHIVE!);

  // Ten days built for real (what a default install publishes): 1 to 5 hashes a day.
  ten = variant('ten');
  const tenConfig = loadConfig(ten.env);
  const store = openSqliteStore(tenConfig.db);
  const first = Date.parse(`${LAST}T00:00:00Z`) - 9 * 86_400_000;
  const rows = Array.from({ length: 10 }, (_, d) =>
    Array.from({ length: 1 + (d % 5) }, (_, k) => ({
      hash: (d * 16 + k + 1).toString(16).padStart(2, '0').repeat(32),
      submittedAt: new Date(first + d * 86_400_000 + (k + 9) * 3_600_000),
      source: 'import' as const,
    })),
  ).flat();
  await store.submissions.enqueue(rows);
  await buildLedgers({ config: tenConfig, store, clock: () => new Date(`${NOW.slice(0, 10)}T00:01:00.000Z`), keys });
  await store.close();
  browser = await launchBrowser();
  await serve(decade);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (project) removeProject(project);
  if (Object.keys(figures).length > 0)
    console.info(
      `/ledgers first view: ${JSON.stringify(Object.fromEntries(Object.entries(figures).map(([k, f]) => [k, { requests: f.requests, bytes: f.bytes, ms: Math.round(f.ms), cards: f.cards }])))}`,
    );
});

describe('/ledgers on 3,650 days', () => {
  it('first view: the newest month only, at most ~60 requests and 31 cards, verify-quantum only for the cards shown', async () => {
    const view = await measure('/ledgers', ledgersDone);
    figures[DAYS] = view;
    const { page } = view;
    await expect(page.locator('[data-testid=ledgers-month]').textContent()).resolves.toBe('November 2025');
    expect(view.cards).toBe(9);
    expect(view.requests).toBeLessThanOrEqual(60);
    const quantum = view.urls.filter((u) => u.startsWith('/api/verify-quantum.php'));
    expect(quantum.sort()).toEqual(
      Array.from({ length: 9 }, (_, i) => `/api/verify-quantum.php?date=2025-11-0${i + 1}`).sort(),
    );
    expect(view.urls.filter((u) => u.startsWith('/api/ledgers.php'))).toEqual(['/api/ledgers.php?limit=31']);
    expect(view.urls).toContain('/api/ledgers-calendar.php?year=2025');
    expect(view.urls).toContain('/ledgers/block-info/2025-11.json');
    for (const big of ['/ledgers/block_info.json', '/ledgers/days.json', '/api/ots-block-info.php'])
      expect(view.urls).not.toContain(big);
    // The month's block information on the cards: an anchored day's block, the two delayed days said so.
    await expect(
      page.locator('[data-date="2025-11-07"][data-testid=ledger-card]').getByText(/^#\d/).count(),
    ).resolves.toBe(1);
    await expect(page.locator('[data-date="2025-11-09"] [data-testid=anchoring-sentence]').textContent()).resolves.toBe(
      'Bitcoin anchoring is delayed; next try 12:02 UTC.',
    );
    await expect(page.locator('[data-date="2025-11-09"] [data-testid=anchoring-details]').textContent()).resolves.toBe(
      STAMP_FAILED,
    );
    await expect(page.locator('[data-date="2025-11-08"] [data-testid=anchoring-sentence]').textContent()).resolves.toBe(
      'Bitcoin anchoring is delayed; it is retried every hour.',
    );
    await expect(page.locator('[data-date="2025-11-08"] [data-testid=anchoring-details]').textContent()).resolves.toBe(
      PENDING['2025-11-08'].reason,
    );
    await expect(page.locator('[data-date="2025-11-09"]').getByText('Delayed', { exact: true }).count()).resolves.toBe(
      1,
    );
    await expect(
      page
        .locator('[data-testid=ledger-cards]')
        .getByText(/\bdone\b/i)
        .count(),
    ).resolves.toBe(0);
    // The year selector runs from the archive's first year to its last.
    const years = await page.locator('#ledgers-year option').allTextContents();
    expect(years).toEqual(Array.from({ length: 11 }, (_, i) => String(2015 + i)));
    await capture(page, 'ledgers-decade-desktop-dark', { fullPage: true });
    await view.close();
  });

  it('goes back and forth by month, by year, and to a date, a month of cards at a time', async () => {
    const view = await measure('/ledgers', ledgersDone);
    const { page } = view;
    const month = page.locator('[data-testid=ledgers-month]');
    const cards = page.locator('[data-testid=ledger-card]');
    const before = view.requests;
    const asked: string[] = [];
    page.on('request', (r) => asked.push(new URL(r.url()).pathname + new URL(r.url()).search));
    await page.getByRole('button', { name: '← Previous month' }).click();
    await page.locator('[data-testid=ledger-cards][data-month="2025-10"][data-complete=true]').waitFor();
    await expect(month.textContent()).resolves.toBe('October 2025');
    await expect(cards.count()).resolves.toBe(31);
    // One page, one month of block information, one verify-quantum per card; the year's calendar is kept (the
    // browser may also ask for the favicon meanwhile).
    const data = asked.filter((u) => u.startsWith('/api/') || u.startsWith('/ledgers/'));
    expect(data.length, data.join(' ')).toBe(31 + 2);
    expect(before).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Next month →' }).click();
    await page.locator('[data-testid=ledger-cards][data-month="2025-11"][data-complete=true]').waitFor();
    await expect(page.getByRole('button', { name: 'Next month →' }).isDisabled()).resolves.toBe(true);

    await page.selectOption('#ledgers-year', '2019');
    await page.locator('[data-testid=ledger-cards][data-month="2019-12"][data-complete=true]').waitFor();
    await expect(month.textContent()).resolves.toBe('December 2019');
    await expect(cards.count()).resolves.toBe(31);
    await page.locator('[data-testid=heatmap][data-year="2019"]').waitFor();

    await page.fill('#ledgers-jump', '2017-03-15');
    await page.getByRole('button', { name: 'Go' }).click();
    await page.locator('[data-testid=ledger-cards][data-month="2017-03"][data-complete=true]').waitFor();
    await expect(month.textContent()).resolves.toBe('March 2017');
    await expect(
      page.locator('[data-testid=ledger-card][data-highlighted=true]').getAttribute('data-date'),
    ).resolves.toBe('2017-03-15');
    await expect(page.locator('[data-testid=heat-day][aria-current=date]').getAttribute('data-date')).resolves.toBe(
      '2017-03-15',
    );
    expect(new URL(page.url()).search).toBe('?date=2017-03-15');
    await capture(page, 'ledgers-decade-jump-desktop-dark');

    // The first month: no month before it; the address opens a month directly.
    await page.goto('/ledgers?month=2015-11');
    await page.locator('[data-testid=ledger-cards][data-month="2015-11"][data-complete=true]').waitFor();
    await page.locator('[data-testid=heatmap][data-year="2015"]').waitFor();
    await expect(page.getByRole('button', { name: '← Previous month' }).isDisabled()).resolves.toBe(true);
    await expect(cards.first().getAttribute('data-date')).resolves.toBe('2015-11-30');
    await view.close();
  });

  it("draws a year's heat map, a square a day, and opens a day's month by mouse and by keyboard", async () => {
    const view = await measure('/ledgers?month=2016-06', ledgersDone);
    const { page } = view;
    const squares = page.locator('[data-testid=heatmap][data-year="2016"] [data-testid=heat-day]');
    await expect(squares.count()).resolves.toBe(366);
    await expect(page.locator('[data-testid=heat-day][data-anchored]').count()).resolves.toBe(366);
    const label = await page.locator('[data-testid=heat-day][data-date="2016-02-29"]').getAttribute('aria-label');
    expect(label).toMatch(/^February 29, 2016: [1-5] entr(y|ies), anchored in Bitcoin$/);
    await page.locator('[data-testid=heat-day][data-date="2016-02-29"]').click();
    await page.locator('[data-testid=ledger-cards][data-month="2016-02"][data-complete=true]').waitFor();
    await expect(page.locator('[data-testid=ledger-card]').count()).resolves.toBe(29);
    await expect(
      page.locator('[data-testid=ledger-card][data-highlighted=true]').getAttribute('data-date'),
    ).resolves.toBe('2016-02-29');
    // One tab stop in the map; arrows move by week (right) and day (down); Enter opens the day's month.
    await expect(squares.and(page.locator('[tabindex="0"]')).getAttribute('data-date')).resolves.toBe('2016-02-29');
    await page.locator('[data-testid=heat-day][tabindex="0"]').focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    await expect(page.evaluate(() => document.activeElement?.getAttribute('data-date'))).resolves.toBe('2016-03-08');
    await page.keyboard.press('Enter');
    await page.locator('[data-testid=ledger-cards][data-month="2016-03"][data-complete=true]').waitFor();
    await expect(
      page.locator('[data-testid=ledger-card][data-highlighted=true]').getAttribute('data-date'),
    ).resolves.toBe('2016-03-08');
    // The newest year: squares for every day, empty ones after the last ledger, a dot for the days not anchored.
    await page.selectOption('#ledgers-year', '2025');
    await page.locator('[data-testid=heatmap][data-year="2025"]').waitFor();
    await expect(page.locator('[data-testid=heat-day]').count()).resolves.toBe(365);
    await expect(page.locator('[data-testid=heat-day][data-anchored]').count()).resolves.toBe(313);
    await expect(
      page
        .locator('[data-testid=heat-day][data-anchored=false]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-date'))),
    ).resolves.toEqual(['2025-11-08', '2025-11-09']);
    await expect(
      page.locator('[data-testid=heat-day][data-date="2025-12-31"]').getAttribute('aria-label'),
    ).resolves.toBe('December 31, 2025: no ledger');
    await capture(page.locator('[data-testid=heatmap]'), 'ledgers-decade-heatmap-dark');
    await view.close();
  });

  it('/live draws the last 90 days from one request', async () => {
    const view = await measure('/live', async (page) => {
      await page.locator('[data-testid=live-charts]').waitFor({ timeout: 20_000 });
      await page.locator('[data-testid=live-queue][data-state=loaded]').waitFor();
    });
    const { page } = view;
    expect(view.urls.filter((u) => u.startsWith('/api/ledgers.php'))).toEqual(['/api/ledgers.php?limit=90']);
    await expect(page.locator('[data-testid=chart-submissions] rect').count()).resolves.toBe(90);
    await expect(page.locator('[data-testid=chart-anchoring] rect[data-anchored=false]').count()).resolves.toBe(2);
    await expect(page.locator('[data-testid=chart-anchoring-summary]').textContent()).resolves.toBe(
      '88 of 90 days anchored in Bitcoin; 2 days waiting, the oldest (2025-11-08) for 33 h',
    );
    await capture(page, 'live-decade-desktop-dark', { fullPage: true });
    await view.close();
  });

  if (CAPTURE) {
    it('screenshots: /ledgers and /live at 1280 and 390 px, dark and light', async () => {
      const start = Date.now();
      const written: string[] = [];
      for (const [label, width, height] of [
        ['desktop', 1280, 900],
        ['phone', 390, 844],
      ] as const) {
        for (const theme of ['dark', 'light'] as const) {
          const context = await browser.newContext({ viewport: { width, height }, baseURL: server!.url });
          await context.addInitScript((t) => localStorage.setItem('theme', t), theme);
          const page = await context.newPage();
          for (const [route, name] of [
            ['/ledgers', 'ledgers-decade'],
            ['/ledgers?date=2024-02-29', 'ledgers-decade-highlight'],
            ['/live', 'live-decade'],
          ] as const) {
            await page.goto(route);
            await settled(page);
            if (route.startsWith('/ledgers')) await ledgersDone(page);
            written.push((await capture(page, `${name}-${label}-${theme}`, { fullPage: true }))!);
          }
          await context.close();
        }
      }
      expect(pngProblems(written, start)).toEqual([]);
    }, 120_000);
  }
});

describe('/ledgers on 10 days, and /verify on a default install', () => {
  it('the first view costs the same requests and about the same bytes as on 3,650 days', async () => {
    await serve(ten);
    const view = await measure('/ledgers', ledgersDone);
    figures[10] = view;
    expect(view.cards).toBe(9);
    const long = figures[DAYS]!;
    expect(long).toBeDefined();
    expect(long.requests / view.requests).toBeLessThanOrEqual(1.2);
    expect(long.bytes / view.bytes).toBeLessThanOrEqual(1.2);
    expect(view.urls).not.toContain('/ledgers/block_info.json');
    await view.close();
  });

  it('a search makes no request answered 404 and asks for no witness policy or time-stamp token; a delayed day is worded as on /ledgers', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: server!.url });
    const page = await context.newPage();
    const answers: string[] = [];
    page.on('response', (r) => answers.push(`${r.status()} ${new URL(r.url()).pathname}`));
    const hash = '01'.repeat(32); // 2025-10-31's first hash
    // The result's RFC 3161 tokens come from the day's one-day page of the ledger list.
    const tokens = page.waitForResponse((r) => r.url().endsWith('/api/ledgers.php?before=2025-11-01&limit=1'));
    await page.goto(`/verify?hash=${hash}&search=true`);
    await page.locator('[data-testid=search-result][data-found=true]').waitFor({ timeout: 20_000 });
    await expect(page.locator('[data-testid=result-date]').textContent()).resolves.toBe('2025-10-31');
    await expect((await tokens).status()).toBe(200);
    expect(answers.filter((a) => a.startsWith('404'))).toEqual([]);
    expect(answers.some((a) => a.endsWith('/keys/witnesses') || a.endsWith('.tsr'))).toBe(false);
    expect(answers).toContain('200 /ledgers/block-info/2025-10.json');
    expect(answers).not.toContain('200 /ledgers/block_info.json');

    // The day's anchoring failed: the result says so in the words of the /ledgers cards.
    const monthFile = path.join(ten.env.TIMESEAL_ARCHIVE!, blockInfoMonthPath('2025-10'));
    const month = JSON.parse(fs.readFileSync(monthFile, 'utf8')) as { pending: Record<string, unknown> };
    month.pending['2025-10-31'] = PENDING['2025-11-09'];
    fs.writeFileSync(monthFile, JSON.stringify(month));
    await page.reload();
    const delayed = page.locator('[data-testid=search-result][data-found=true] [data-testid=anchoring-delayed]');
    await expect(delayed.locator('[data-testid=anchoring-sentence]').textContent({ timeout: 20_000 })).resolves.toBe(
      'Bitcoin anchoring is delayed; next try 12:02 UTC.',
    );
    await expect(delayed.locator('[data-testid=anchoring-details]').textContent()).resolves.toBe(STAMP_FAILED);
    await capture(page.locator('[data-testid=search-result]'), 'verify-anchoring-delayed-dark');
    await context.close();
  });

  it('says a hash submitted today is queued, with its ledger and the publication time, not "not found"', async () => {
    const hash = 'c0ffee'.padEnd(64, '5');
    const submitted = await fetch(`${server!.url}/api/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hash }),
    });
    expect(submitted.status).toBe(201);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: server!.url });
    const page = await context.newPage();
    const answers: string[] = [];
    page.on('response', (r) => answers.push(`${r.status()} ${new URL(r.url()).pathname}`));
    await page.goto(`/verify?hash=${hash}&search=true`);
    const queued = page.locator('[data-testid=search-result][data-queued=true] [data-testid=queued]');
    await expect(queued.textContent({ timeout: 20_000 })).resolves.toBe(
      'Queued for the ledger of 2025-11-10, published at 00:01 UTC on 2025-11-11',
    );
    await expect(page.getByText('Not found in any ledger').count()).resolves.toBe(0);
    expect(answers).toContain(`200 /api/status/${hash}`);
    expect(answers.filter((a) => a.startsWith('404'))).toEqual([]);
    await capture(page.locator('[data-testid=search-result]'), 'verify-queued-dark');
    // An unknown hash is still "not found", after one status lookup.
    await page.fill('#search-hash', 'ab'.repeat(32));
    await page.click('form button[type=submit]:has-text("Search")');
    await page.getByText('Not found in any ledger').waitFor();
    expect(answers.filter((a) => a.startsWith('404'))).toEqual([]);
    await context.close();
  });

  it('/ledgers reads the static archive (days.json, ots_status.json) when the API cannot be reached', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: server!.url });
    const page = await context.newPage();
    await page.route(/\/api\//, (route) => route.fulfill({ status: 502, body: 'down' }));
    await page.goto('/ledgers');
    await ledgersDone(page);
    await expect(page.locator('[data-testid=ledgers-month]').textContent()).resolves.toBe('November 2025');
    await expect(page.locator('[data-testid=ledger-card]').count()).resolves.toBe(9);
    await expect(page.locator('[data-testid=heatmap] [data-testid=heat-day][data-anchored]').count()).resolves.toBe(10);
    await expect(page.locator('[data-date="2025-11-09"] [data-testid=entry-count]').textContent()).resolves.toBe('5');
    await page.getByRole('button', { name: '← Previous month' }).click();
    await page.locator('[data-testid=ledger-cards][data-month="2025-10"][data-complete=true]').waitFor();
    await expect(page.locator('[data-testid=ledger-card]').count()).resolves.toBe(1);
    await context.close();
  });

  it('raised no uncaught error in any page', () => {
    expect(pageErrors).toEqual([]);
  });
});
