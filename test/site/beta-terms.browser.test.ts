// The free tier and the open API say the same thing wherever limits are sold, in Debian's Chromium against the
// real server (`timeseal serve` on a temporary project with FREE_TIER_DAILY_LIMIT=50 and no payment keys): /pricing
// and the dashboard's cards name the beta terms (free, no rate limit, no authentication during beta) beside the
// site's daily limit, the dashboard says the server's limit in both of its cards, and offers no upgrade that cannot
// be bought. Screenshots only under `make screenshots` (test/site/helpers.ts capture()).
import crypto from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture, CAPTURE, openPage, settled, startSite, stopSite, type Project, type Server } from './helpers.ts';

const NOW = '2025-11-03T10:00:00.000Z';
/** The product's words for the beta API's terms (docs/API.md; the free tier's card and the dashboard). */
const BETA_TERMS = 'free, no rate limit, no authentication during beta';

let project: Project;
let server: Server;
let browser: Browser;

beforeAll(async () => {
  // A limit of its own is for a development server only (TIMESEAL_ORIGIN on localhost; ingest/config.ts).
  ({ project, server, browser } = await startSite({
    now: NOW,
    env: { FREE_TIER_DAILY_LIMIT: '50', TIMESEAL_ORIGIN: 'http://localhost' },
  }));
}, 120_000);

afterAll(() => stopSite({ browser, server, project }));

const newPage = (width = 1280, theme?: 'light' | 'dark'): Promise<{ context: BrowserContext; page: Page }> =>
  openPage(browser, server, { width, ...(theme ? { theme } : {}) });

/** A new free account, logged in on `page`'s context, with `submitted` hashes sent from the site today. */
async function freeUser(page: Page, name: string, submitted: number): Promise<void> {
  const res = await page.request.post('/api/auth/signup', {
    data: {
      username: name,
      email: `${name}@example.org`,
      password: 'correct horse battery',
      agreeTerms: true,
      newsletterSubscribed: false,
    },
  });
  expect(res.status(), await res.text()).toBeLessThan(300);
  for (let i = 0; i < submitted; i++) {
    const hash = crypto.createHash('sha256').update(`${name} ${i}`).digest('hex');
    const sent = await page.request.post('/api/submit', { data: { hash }, headers: { origin: server.url } });
    expect(sent.status(), await sent.text()).toBe(201);
  }
}

describe('/pricing', () => {
  it('names the beta terms on the free tier and says what the limits count', async () => {
    const { context, page } = await newPage();
    await page.goto('/pricing');
    await settled(page);
    await expect(page.locator('[data-tier=free]').innerText()).resolves.toContain(`Beta API: ${BETA_TERMS}`);
    const terms = page.locator('[data-testid=beta-terms]');
    await expect(terms.innerText()).resolves.toMatch(
      /limits above count what you timestamp on this site.*beta API.*POST \/tsa.*command-line client.*no rate limit and no authentication/s,
    );
    await expect(terms.locator('a[href="/beta-api"]').count()).resolves.toBe(1);
    await context.close();
  });
});

describe('the dashboard of a free user', () => {
  it("says the server's daily limit in both cards, the beta terms, and no upgrade while payments are off", async () => {
    const { context, page } = await newPage();
    await freeUser(page, 'freeuser', 3);
    await page.goto('/dashboard');
    await settled(page);
    await expect(page.locator('[data-testid=daily-usage]').textContent()).resolves.toBe('3 of 50 today');
    await expect(page.locator('[data-testid=status-card]').innerText()).resolves.toContain('50 timestamps per day');
    await expect(page.locator('main').innerText()).resolves.not.toContain('2 timestamps per day');
    await expect(page.locator('[data-testid=daily-card] [data-testid=beta-terms]').innerText()).resolves.toContain(
      BETA_TERMS,
    );
    await page.getByRole('link', { name: 'Create New Timestamp' }).waitFor();
    await expect(page.getByText('Upgrade to Standard').count()).resolves.toBe(0);
    // Logged in, /login sends the user on to the dashboard rather than showing the form again.
    await page.goto('/login');
    await page.waitForURL('**/dashboard');
    await page.getByRole('heading', { name: 'Welcome, freeuser' }).waitFor();
    await context.close();
  });

  if (CAPTURE)
    it('screenshots /pricing and the dashboard at 1280 and 390 px, dark and light', async () => {
      const { context, page } = await newPage();
      await freeUser(page, 'shots', 1);
      const cookies = await context.cookies();
      await context.close();
      for (const width of [1280, 390])
        for (const theme of ['dark', 'light'] as const) {
          const { context: c, page: p } = await newPage(width, theme);
          await c.addCookies(cookies);
          for (const route of ['/pricing', '/dashboard']) {
            await p.goto(route);
            await settled(p);
            await capture(p, `${route.slice(1)}-beta-terms-${width}-${theme}`, { fullPage: true });
          }
          await c.close();
        }
    }, 120_000);
});
