// The /beta-api donation link follows the server's DONATION_URL at run time: a "Donate by card" link
// to it when set, nothing when unset (the site is built once for every deployment). Under `make screenshots`
// (TIMESEAL_SCREENSHOTS=1) also screenshots of the pages this change and the PDF certificate touch (the /beta-api
// support card; a found hash's downloads on /verify with "Download certificate (PDF)"), at 1280 and 390 px, dark
// and light.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  capture,
  CAPTURE,
  createProject,
  ensureBuilt,
  launchBrowser,
  removeProject,
  ROOT,
  startServer,
  type Project,
  type Server,
} from './helpers.ts';

const DONATE = 'https://donate.example/timeseal?x=1&y=2';
const NOW = '2025-11-03T10:00:00.000Z';
const SEALED_SHA256 = crypto
  .createHash('sha256')
  .update(fs.readFileSync(path.join(ROOT, 'docs/sealed-disclosure.md')))
  .digest('hex');

let browser: Browser;
const projects: Project[] = [];
const servers: Server[] = [];

async function serve(env: Record<string, string>): Promise<Server> {
  const project = createProject();
  Object.assign(project.env, env);
  projects.push(project);
  const server = await startServer(project, { demo: true, now: NOW });
  servers.push(server);
  return server;
}

async function open(server: Server, url: string, width = 1280, theme?: 'light' | 'dark'): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, baseURL: server.url });
  if (theme) await context.addInitScript((t) => localStorage.setItem('theme', t), theme);
  const page = await context.newPage();
  await page.goto(url);
  return page;
}

async function hydrated(page: Page): Promise<void> {
  await page.waitForFunction(() => [...document.querySelectorAll('astro-island')].every((i) => !i.hasAttribute('ssr')));
}

beforeAll(async () => {
  ensureBuilt();
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const s of servers) await s.stop();
  for (const p of projects) removeProject(p);
});

it('with DONATION_URL the support card links to it', async () => {
  const server = await serve({ DONATION_URL: DONATE });
  const page = await open(server, '/beta-api');
  const link = page.getByRole('link', { name: 'Donate by card' });
  await link.waitFor();
  await expect(link.getAttribute('href')).resolves.toBe(DONATE);
  await page.context().close();
  // The support card at both widths, in both themes: for the screenshots only.
  for (const width of CAPTURE ? [1280, 390] : []) {
    for (const theme of ['light', 'dark'] as const) {
      const p = await open(server, '/beta-api', width, theme);
      await p.getByRole('link', { name: 'Donate by card' }).waitFor();
      const card = p.locator('section[aria-labelledby=support-title]');
      await card.scrollIntoViewIfNeeded();
      await capture(card, `beta-api-donation-${width}-${theme}`);
      await p.context().close();
    }
  }
});

it('without DONATION_URL there is no donation link or promise; the found result offers the PDF certificate', async () => {
  const server = await serve({});
  const page = await open(server, '/beta-api');
  await hydrated(page);
  await expect(page.locator('section[aria-labelledby=support-title]').textContent()).resolves.not.toMatch(/donat/i);
  await expect(page.getByRole('link', { name: 'Contact Us' }).count()).resolves.toBe(1);
  await page.context().close();
  for (const width of [1280, 390]) {
    for (const theme of ['light', 'dark'] as const) {
      const p = await open(server, `/verify?hash=${SEALED_SHA256}&search=true`, width, theme);
      const downloads = p.locator('[data-testid=proof-downloads]');
      await downloads.waitFor({ timeout: 30_000 });
      const pdf = downloads.getByRole('link', { name: 'Download certificate (PDF)' });
      await expect(pdf.getAttribute('href')).resolves.toBe(`/api/certificate.php?hash=${SEALED_SHA256}&format=pdf`);
      await downloads.scrollIntoViewIfNeeded();
      await capture(downloads, `verify-downloads-pdf-${width}-${theme}`);
      if (width === 1280 && theme === 'light') {
        const [download] = await Promise.all([p.waitForEvent('download'), pdf.click()]);
        expect(download.suggestedFilename()).toBe(`timeseal-certificate-${SEALED_SHA256.slice(0, 12)}-2025-11-02.pdf`);
      }
      await p.context().close();
    }
  }
});

it('verify-email: a link that succeeded in this tab shows "already verified" on reload, not "Verification Failed"', async () => {
  const server = servers[0] ?? (await serve({}));
  for (const width of [1280, 390]) {
    for (const theme of ['light', 'dark'] as const) {
      const context = await browser.newContext({ viewport: { width, height: 700 }, baseURL: server.url });
      await context.addInitScript((t) => {
        localStorage.setItem('theme', t);
        sessionStorage.setItem('timeseal-verified-token', 'used-token');
      }, theme);
      const page = await context.newPage();
      await page.goto('/verify-email?token=used-token');
      await page.getByRole('heading', { name: 'Email Verified!' }).waitFor();
      await page.getByText('Your email address is already verified').waitFor();
      await capture(page, `verify-email-already-${width}-${theme}`);
      await context.close();
    }
  }
  // Another token in the same tab is still checked by the server.
  const page = await open(server, '/verify-email?token=other-token');
  await page.getByRole('heading', { name: 'Verification Failed' }).waitFor();
  await page.context().close();
});
