// Anchoring that failed or has not started, as a person reads it, in Debian's Chromium against the real server
// (`timeseal serve`) on five days built for real, none anchored: the two newest days' stamping failed (the
// calendars unreachable, a retry at 12:02 UTC), the three before were never submitted to the calendars (the
// run, after downtime, stamps the newest days first). Each /ledgers card and the /verify result say one plain
// sentence, and the calendars' error only behind "Details"; a day the run has not reached says so instead of
// "usually within 24 hours". /live counts people's submissions, not the verifier's own release. Screenshots
// only under `make screenshots` (test/site/helpers.ts capture()).
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockInfoMonthPath, BLOCK_INFO_PATH, OTS_STATUS_PATH } from '../../core/archive.ts';
import { buildLedgers } from '../../pipeline/build.ts';
import { encodeBlockInfoMonth, NOT_YET_SUBMITTED } from '../../pipeline/anchor/status.ts';
import { loadConfig } from '../../runtime/config.ts';
import { loadSigningKeys } from '../../runtime/keys.ts';
import { openSqliteStore } from '../../store/sqlite/engine.ts';
import { capture, CAPTURE, openPage, settled, startSite, stopSite, type Project, type Server } from './helpers.ts';
import type { QueueStats } from '../../ingest/routes/status.ts';

const DATES = ['2025-11-05', '2025-11-06', '2025-11-07', '2025-11-08', '2025-11-09'];
/** The server's clock: the ledger of 2025-11-10 is open; the anchoring status was written at 10:05. */
const NOW = '2025-11-10T10:00:00.000Z';
const STATUS_WRITTEN = '2025-11-10T10:05:00.000Z';
/** The pipeline's words for a failed stamping (pipeline/anchor/anchor.ts), as long as a real one. */
const STAMP_FAILED =
  'stamp failed: 0 of 4 calendars answered (2 needed): https://a.pool.opentimestamps.org: unreachable (ENOTFOUND); https://b.pool.opentimestamps.org: unreachable (ENOTFOUND); https://a.pool.eternitywall.com: unreachable (ENOTFOUND); https://ots.btc.catallaxy.com: unreachable (ENOTFOUND)';
const DELAYED = 'Bitcoin anchoring is delayed; next try 12:02 UTC.';
const NOT_REACHED = 'Not anchored yet: the anchoring run has not reached this day (it stamps the newest days first).';
/** One hash a day, the day's index in its first byte. */
const hashOf = (i: number) => `${(i + 1).toString(16).padStart(2, '0')}${'ab'.repeat(31)}`;

let project: Project;
let server: Server;
let browser: Browser;

beforeAll(async () => {
  ({ project, server, browser } = await startSite({ now: NOW, prepare: (made) => writeArchive(made) }));
}, 120_000);

afterAll(() => stopSite({ browser, server, project }));

/** The five published days, and the anchoring status the runs left: none anchored. */
async function writeArchive(made: Project): Promise<void> {
  const config = loadConfig(made.env);
  const keys = loadSigningKeys({ keys: config.keys, privateKeys: config.privateKeys });
  const store = openSqliteStore(config.db);
  await store.submissions.enqueue(
    DATES.map((date, i) => ({
      hash: hashOf(i),
      submittedAt: new Date(`${date}T09:00:00.000Z`),
      source: 'import' as const,
    })),
  );
  await buildLedgers({ config, store, clock: () => new Date('2025-11-10T00:01:00.000Z'), keys });
  await store.close();
  // What the anchoring runs left: the newest two failed (a retry at 12:02), the older three never tried (their
  // entry from the status written at their publication, 00:01 UTC the next day).
  const published = (date: string) => new Date(Date.parse(`${date}T00:01:00.000Z`) + 86_400_000).toISOString();
  const pending = Object.fromEntries(
    DATES.map((date) => [
      date,
      date >= '2025-11-08'
        ? {
            state: 'not-stamped' as const,
            reason: `${STAMP_FAILED}; next attempt at 2025-11-10T12:02:00.000Z`,
            checked_at: '2025-11-10T10:02:00.000Z',
          }
        : { state: 'not-stamped' as const, reason: NOT_YET_SUBMITTED, checked_at: published(date) },
    ]),
  );
  const info = { ledgers: {}, pending, tip_height: null, last_update: STATUS_WRITTEN };
  fs.writeFileSync(path.join(config.archive, BLOCK_INFO_PATH), JSON.stringify(info));
  fs.writeFileSync(path.join(config.archive, blockInfoMonthPath('2025-11')), encodeBlockInfoMonth(info, '2025-11'));
  fs.writeFileSync(
    path.join(config.archive, OTS_STATUS_PATH),
    JSON.stringify({ latest_ots_ok: '', last_update: STATUS_WRITTEN, queue_size: DATES.length }),
  );
}

const newPage = (width = 1280, theme?: 'light' | 'dark'): Promise<{ context: BrowserContext; page: Page }> =>
  openPage(browser, server, { width, ...(theme ? { theme } : {}) });

async function openLedgers(page: Page): Promise<void> {
  await page.goto('/ledgers?month=2025-11');
  await page.locator('[data-testid=ledger-cards][data-complete=true]').waitFor({ timeout: 20_000 });
  await settled(page);
}

describe('/ledgers', () => {
  it('says one plain sentence on each card, the calendars’ error only behind Details, and which days the run has not reached', async () => {
    const { context, page } = await newPage();
    await openLedgers(page);
    const cards = page.locator('[data-testid=ledger-card]');
    await expect(cards.count()).resolves.toBe(DATES.length);
    // What a person sees without opening anything: no calendar address, no error code.
    const seen = await page.locator('[data-testid=ledger-cards]').innerText();
    expect(seen).not.toMatch(/ENOTFOUND|opentimestamps\.org|stamp failed/);
    expect(seen).not.toMatch(/usually within 24 hours/);
    for (const date of DATES) {
      const card = page.locator(`[data-testid=ledger-card][data-date="${date}"]`);
      await expect(card.locator('[data-testid=anchoring-sentence]').textContent(), date).resolves.toBe(
        date >= '2025-11-08' ? DELAYED : NOT_REACHED,
      );
    }
    await expect(page.locator('[data-date="2025-11-09"]').getByText('Delayed', { exact: true }).count()).resolves.toBe(
      1,
    );
    await expect(
      page.locator('[data-date="2025-11-05"]').getByText('Not reached', { exact: true }).count(),
    ).resolves.toBe(1);
    // The details, once asked for: the pipeline's words, whole.
    const newest = page.locator('[data-testid=ledger-card][data-date="2025-11-09"]');
    await newest.getByText('Details', { exact: true }).click();
    await expect(newest.locator('[data-testid=anchoring-details]').innerText()).resolves.toBe(STAMP_FAILED);
    await capture(newest, 'ledgers-card-anchoring-delayed');
    await context.close();
  }, 60_000);
});

describe('/verify', () => {
  it('says the same sentence for a found hash whose day failed, the details behind Details', async () => {
    const { context, page } = await newPage();
    await page.goto(`/verify?hash=${hashOf(4)}&search=true`);
    const result = page.locator('[data-testid=search-result][data-found=true]');
    await result.waitFor({ timeout: 20_000 });
    await expect(result.locator('[data-testid=anchoring-sentence]').textContent()).resolves.toBe(DELAYED);
    expect(await result.innerText()).not.toMatch(/ENOTFOUND|stamp failed/);
    await result.getByText('Details', { exact: true }).click();
    await expect(result.locator('[data-testid=anchoring-details]').innerText()).resolves.toBe(STAMP_FAILED);
    await expect(result.locator('[data-testid=ots-pending]').textContent()).resolves.toBe(
      'OTS proof: not available yet (anchoring delayed)',
    );
    await context.close();
  }, 60_000);

  it('says a day the run has not reached so, not "usually within 24 hours"', async () => {
    const { context, page } = await newPage();
    await page.goto(`/verify?hash=${hashOf(0)}&search=true`);
    const result = page.locator('[data-testid=search-result][data-found=true]');
    await result.waitFor({ timeout: 20_000 });
    await expect(result.locator('[data-testid=anchoring-sentence]').textContent()).resolves.toBe(NOT_REACHED);
    expect(await result.innerText()).not.toMatch(/usually within 24 hours/);
    await context.close();
  }, 60_000);
});

describe('/live', () => {
  // The server enqueued the offline verifier's release for today's ledger when it started; nobody else submitted.
  it('counts people’s submissions: 0 and "All caught up!" before anyone submits, the verifier’s release said apart', async () => {
    const stats = (await (await fetch(new URL('/api/queue-stats.php', server.url))).json()) as QueueStats;
    expect(stats.queueSize).toBe(1);
    const { context, page } = await newPage();
    await page.goto('/live');
    await settled(page);
    const queue = page.locator('[data-testid=live-queue]');
    await expect.poll(() => queue.locator('[data-testid=release-queued]').count()).toBe(1);
    await expect(queue.locator('[data-testid=pending-count]').textContent()).resolves.toBe('0');
    await expect(queue.innerText()).resolves.toContain('All caught up!');
    await capture(page, 'live-release-queued', { fullPage: true });
    await context.close();
  }, 60_000);
});

if (CAPTURE)
  describe('screenshots', () => {
    it('/ledgers and /verify with failed anchoring at 1280 and 390 px, dark and light', async () => {
      for (const width of [1280, 390])
        for (const theme of ['dark', 'light'] as const) {
          const { context, page } = await newPage(width, theme);
          await openLedgers(page);
          await capture(page, `ledgers-anchoring-${width}-${theme}`, { fullPage: true });
          await page.goto(`/verify?hash=${hashOf(4)}&search=true`);
          await page.locator('[data-testid=search-result][data-found=true]').waitFor({ timeout: 20_000 });
          await settled(page);
          await capture(page, `verify-anchoring-${width}-${theme}`, { fullPage: true });
          await context.close();
        }
    }, 120_000);
  });
