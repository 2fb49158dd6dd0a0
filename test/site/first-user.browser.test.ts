// What a first user meets, in Debian's Chromium against the real server (`timeseal serve --demo`
// on a temporary project): no page scrolls sideways on a phone, every control shows where the keyboard
// focus is, the home hero stays put while files are added, dialogs and toasts, search input, status labels,
// the free tier's limit, and the downloads a person needs to verify offline. Screenshots of what these tests show
// only under `make screenshots` (TIMESEAL_SCREENSHOTS=1, test/site/helpers.ts capture()).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTlogProof, verifyTlogProof } from '../../core/tlog-proof.ts';
import { loadPublicKeys } from '../../runtime/keys.ts';
import {
  capture,
  CAPTURE,
  createProject,
  ensureBuilt,
  ROOT,
  launchBrowser,
  pngProblems,
  removeProject,
  ROUTES,
  settled,
  startServer,
  type Project,
  type Server,
} from './helpers.ts';
import type { LedgersPage } from '../../ingest/routes/status.ts';

/** The server's clock: the demo ledger is the day before (2025-11-02). */
const NOW = '2025-11-03T10:00:00.000Z';
/** In the demo ledger of 2025-11-02. */
const SEALED_SHA256 = crypto
  .createHash('sha256')
  .update(fs.readFileSync(path.join(ROOT, 'docs/sealed-disclosure.md')))
  .digest('hex');

/** Every page: the site's routes, the account screens, and the 404 page. */
const ALL_ROUTES = [
  ...ROUTES,
  '/login',
  '/signup',
  '/forgot-password',
  '/reset-password?token=t',
  '/verify-email?token=t',
  '/dashboard',
  '/no-such-page',
];

let project: Project;
let server: Server;
let browser: Browser;
let tmp: string;

async function newPage(
  options: { theme?: 'light' | 'dark'; width?: number; height?: number } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 900 },
    baseURL: server.url,
  });
  if (options.theme) await context.addInitScript((t) => localStorage.setItem('theme', t), options.theme);
  const page = await context.newPage();
  return { context, page };
}

/** Waits until the island holding `selector` has hydrated (Astro removes `ssr` from <astro-island>). */
async function hydrated(page: Page, selector: string): Promise<void> {
  const el = page.locator(selector).first();
  await el.scrollIntoViewIfNeeded();
  await page.waitForFunction((s) => {
    const island = document.querySelector(s)?.closest('astro-island');
    return !!island && !island.hasAttribute('ssr');
  }, selector);
}

/** Opens `route` and waits until it has settled; /dashboard without a session first goes on to /login. */
async function openSettled(page: Page, route: string): Promise<void> {
  await page.goto(route);
  if (route === '/dashboard') await page.waitForURL('**/login');
  await settled(page);
}

beforeAll(async () => {
  ensureBuilt();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-first-user-'));
  project = createProject();
  server = await startServer(project, { demo: true, now: NOW });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (project) removeProject(project);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('phone widths', () => {
  // Each route is opened once, at the widest width, then narrowed: the layout follows the viewport (CSS media
  // queries; no island sizes itself from the width it loaded at), and a page load costs more than the rest.
  it('lays out every route within the viewport at 430, 390 and 320 px (no sideways scroll)', async () => {
    const overflowing: string[] = [];
    const { context, page } = await newPage({ width: 430, height: 800 });
    // The HTML certificate of a published hash too (the server's page, not the site's).
    for (const route of [...ALL_ROUTES, `/api/certificate.php?hash=${SEALED_SHA256}`]) {
      await page.setViewportSize({ width: 430, height: 800 });
      await openSettled(page, route);
      for (const width of [430, 390, 320]) {
        if (width !== 430) await page.setViewportSize({ width, height: 800 });
        const { scrollWidth, innerWidth } = await page.evaluate(async () => {
          await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
          return { scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth };
        });
        expect(innerWidth, `${route}: the viewport is ${width} px`).toBe(width);
        if (scrollWidth > innerWidth) overflowing.push(`${route} at ${width} px: ${scrollWidth} px wide`);
      }
    }
    await context.close();
    expect(overflowing).toEqual([]);
  }, 240_000);
});

/** Whether the keyboard focus is visible, in the dark and in the light theme (the `dark` class on <html> is the
 *  whole theme, so both are read on the same focused element): on the focused element, or, for a visually hidden
 *  input (the file pickers), on the label people see around it. */
async function focusIndicator(
  page: Page,
): Promise<{ name: string; themes: { theme: string; visible: boolean; shown: string }[] }> {
  return page.evaluate(() => {
    let el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return { name: 'body', themes: [] };
    const name = `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''} "${(el.textContent || el.getAttribute('aria-label') || '').trim().slice(0, 40)}"`;
    const rect = el.getBoundingClientRect();
    if (rect.width <= 2 || rect.height <= 2) el = el.closest('label') ?? (el as HTMLInputElement).labels?.[0] ?? el;
    const root = document.documentElement;
    const wasDark = root.classList.contains('dark');
    const themes = (['dark', 'light'] as const).map((theme) => {
      root.classList.toggle('dark', theme === 'dark');
      for (const a of document.getAnimations()) if ('transitionProperty' in a) a.finish(); // the theme's transitions, ended
      const style = getComputedStyle(el);
      const outline = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 1;
      const ring = style.boxShadow !== 'none';
      const box = el.getBoundingClientRect();
      return {
        theme,
        visible: (outline || ring) && box.width > 2 && box.height > 2,
        shown: `${el.tagName.toLowerCase()} outline ${style.outlineStyle} ${style.outlineWidth}`,
      };
    });
    root.classList.toggle('dark', wasDark);
    for (const a of document.getAnimations()) if ('transitionProperty' in a) a.finish();
    return { name, themes };
  });
}

describe('keyboard focus', () => {
  it('shows a ring on the visible "Choose files" / "Choose a file" control (home, /proof, /verify)', async () => {
    const { context, page } = await newPage();
    for (const [route, input, label] of [
      ['/', '#home-dropzone-input', 'Choose files'],
      ['/proof', '#proof-dropzone-input', 'Choose files'],
      ['/verify', '#verify-file', 'Choose a file'],
    ] as const) {
      await page.goto(route);
      await hydrated(page, input);
      let reached = false;
      for (let i = 0; i < 60 && !reached; i++) {
        await page.keyboard.press('Tab');
        reached = await page.evaluate((sel) => document.activeElement === document.querySelector(sel), input);
      }
      expect(reached, `${route}: Tab reaches ${input}`).toBe(true);
      const seen = await page.evaluate((sel) => {
        const input = document.querySelector(sel) as HTMLInputElement;
        const visible = input.closest('label') ?? input.labels![0]!;
        const style = getComputedStyle(visible);
        return {
          text: visible.textContent!.trim(),
          outlineStyle: style.outlineStyle,
          outlineWidth: parseFloat(style.outlineWidth),
          width: visible.getBoundingClientRect().width,
        };
      }, input);
      expect(seen.text, route).toBe(label);
      expect(seen.width, route).toBeGreaterThan(40);
      expect(seen.outlineStyle, route).not.toBe('none');
      expect(seen.outlineWidth, route).toBeGreaterThanOrEqual(2);
      await capture(page, `focus-${route === '/' ? 'home' : route.slice(1)}`);
    }
    await context.close();
  }, 60_000);

  it('shows a visible focus indicator on every control reached with Tab, on every page, in both themes', async () => {
    const missing: string[] = [];
    let checked = 0;
    const { context, page } = await newPage({ theme: 'dark' });
    for (const route of ALL_ROUTES) {
      await openSettled(page, route);
      const seen = new Set<string>();
      for (let i = 0; i < 80; i++) {
        await page.keyboard.press('Tab');
        const f = await focusIndicator(page);
        if (f.name === 'body' || seen.has(f.name)) break;
        seen.add(f.name);
        expect(f.themes.map((t) => t.theme)).toEqual(['dark', 'light']);
        for (const t of f.themes) {
          checked++;
          if (!t.visible) missing.push(`${t.theme} ${route}: ${f.name} (${t.shown})`);
        }
      }
    }
    await context.close();
    expect(missing).toEqual([]);
    expect(checked, 'controls reached with Tab, counted once per theme').toBeGreaterThan(ALL_ROUTES.length * 2 * 5);
  }, 240_000);
});

describe('home hero', () => {
  it('keeps the headline where it is while 8 files are added', async () => {
    const files: string[] = [];
    for (let i = 1; i <= 8; i++) {
      const file = path.join(tmp, `notes-${i}.txt`);
      fs.writeFileSync(file, `first user file ${i} ${Date.now()}`);
      files.push(file);
    }
    const { context, page } = await newPage();
    await page.goto('/');
    await hydrated(page, '#home-dropzone-input');
    await page.evaluate(() => window.scrollTo(0, 0));
    const before = await page.locator('h1').evaluate((h) => h.getBoundingClientRect().top + window.scrollY);
    await page.setInputFiles('#home-dropzone-input', files);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=file-hash]').length === 8);
    const after = await page.locator('h1').evaluate((h) => h.getBoundingClientRect().top + window.scrollY);
    expect(after).toBe(before);
    await capture(page, 'home-8-files');
    await context.close();
  }, 60_000);
});

// Only takes screenshots: registered under `make screenshots` alone.
if (CAPTURE) {
  describe('screenshots', () => {
    it('captures the pages this issue touches, at 1280 and 390 px, dark and light', async () => {
      const start = Date.now();
      const written: string[] = [];
      for (const route of ['/', '/proof', '/verify', '/ledgers', '/live', '/pricing', '/beta-api']) {
        for (const theme of ['dark', 'light'] as const) {
          for (const [label, width] of [
            ['desktop', 1280],
            ['phone', 390],
          ] as const) {
            const { context, page } = await newPage({ theme, width, height: 900 });
            await openSettled(page, route);
            const name = route === '/' ? 'home' : route.slice(1);
            written.push((await capture(page, `first-user-${name}-${label}-${theme}`, { fullPage: true }))!);
            await context.close();
          }
        }
      }
      expect(written).toHaveLength(7 * 2 * 2);
      expect(pngProblems(written, start)).toEqual([]);
    }, 600_000); // 28 full-page captures: 180 s ran out beside a loaded machine
  });
}

describe('dialogs, menus and disabled buttons', () => {
  it('shows a toast raised while the waitlist dialog is open above its backdrop, and it can be dismissed', async () => {
    const { context, page } = await newPage();
    await page.route('**/api/professional-waitlist.php', (route) =>
      route.fulfill({ status: 500, contentType: 'application/json', body: '{"error":"waitlist store down"}' }),
    );
    await page.goto('/pricing');
    await page.waitForFunction(
      () => !document.querySelector('#waitlist-name')?.closest('astro-island')?.hasAttribute('ssr'),
    );
    await page.click('button:has-text("Join Waitlist")');
    await page.fill('#waitlist-name', 'Ada');
    await page.fill('#waitlist-email', 'ada@example.org');
    await page.fill('#waitlist-message', 'Team plan for a lab');
    await page.locator('dialog button[type=submit]').click();
    const toastEl = page.locator('#toaster .toast');
    await expect(toastEl.locator('.toast-title').textContent()).resolves.toBe('Error');
    expect(await page.locator('dialog[open]').count()).toBe(1);
    const onTop = await toastEl.evaluate((t) => {
      const r = t.getBoundingClientRect();
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      return !!hit && t.contains(hit);
    });
    expect(onTop).toBe(true);
    await capture(page, 'waitlist-dialog-toast');
    await toastEl.locator('.toast-close').click({ timeout: 3000 });
    expect(await toastEl.count()).toBe(0);
    expect(await page.locator('dialog[open]').count()).toBe(1);
    await page.locator('dialog button:has-text("Cancel")').click();
    expect(await page.locator('dialog[open]').count()).toBe(0);
    await context.close();
  }, 60_000);

  it('closes the mobile menu on Escape and returns the focus to its button', async () => {
    const { context, page } = await newPage({ width: 390, height: 844 });
    await page.goto('/');
    await page.click('[data-menu-toggle]');
    await expect(page.locator('#mobile-menu').isVisible()).resolves.toBe(true);
    await page.keyboard.press('Escape');
    await expect(page.locator('#mobile-menu').isVisible()).resolves.toBe(false);
    await expect(page.locator('[data-menu-toggle]').getAttribute('aria-expanded')).resolves.toBe('false');
    await expect(page.evaluate(() => document.activeElement?.hasAttribute('data-menu-toggle'))).resolves.toBe(true);
    await context.close();
  });

  it('gives disabled buttons a grey, clearly disabled look in both themes', async () => {
    /** Chroma of an element's background as painted (sRGB bytes through a canvas): 0 for a grey, large for emerald. */
    const chroma = (el: HTMLElement) => {
      const ctx = document.createElement('canvas').getContext('2d')!;
      ctx.fillStyle = getComputedStyle(el).backgroundColor;
      ctx.fillRect(0, 0, 1, 1);
      const [r, g, b] = ctx.getImageData(0, 0, 1, 1).data;
      return Math.max(r!, g!, b!) - Math.min(r!, g!, b!);
    };
    for (const theme of ['dark', 'light'] as const) {
      const { context, page } = await newPage({ theme });
      await page.goto('/verify');
      await hydrated(page, '#search-hash');
      const search = page.locator('#search-hash ~ button[type=submit]');
      await expect(search.isDisabled()).resolves.toBe(true);
      const disabled = await search.evaluate(
        (b, fn) => ({ chroma: (0, eval)(fn)(b) as number, opacity: getComputedStyle(b).opacity }),
        chroma.toString(),
      );
      await page.fill('#search-hash', 'a'.repeat(64));
      await page.waitForFunction(
        () => !(document.querySelector('#search-hash ~ button[type=submit]') as HTMLButtonElement).disabled,
      );
      await page.mouse.move(0, 0);
      // The colour is read once its transition (transition-colors) to the enabled look has finished.
      await search.evaluate((b) => Promise.all(b.getAnimations().map((a) => a.finished)).then(() => undefined));
      const enabled = await search.evaluate((b, fn) => (0, eval)(fn)(b) as number, chroma.toString());
      expect(enabled, `${theme} enabled`).toBeGreaterThan(60);
      expect(disabled.chroma, `${theme} disabled`).toBeLessThan(40);
      expect(disabled.opacity, theme).toBe('1');
      await context.close();
    }
  });
});

describe('search input', () => {
  it('takes a pasted hash with surrounding spaces and in upper case, in the field and in ?hash=', async () => {
    const { context, page } = await newPage();
    await page.goto('/verify');
    await hydrated(page, '#search-hash');
    await page.fill('#search-hash', `  ${SEALED_SHA256.toUpperCase()} \n`);
    expect(await page.locator('[data-testid=length-hint]').count()).toBe(0);
    await page.locator('#search-hash ~ button[type=submit]').click({ timeout: 3000 });
    await page.waitForSelector('[data-testid=search-result]');
    await expect(page.locator('[data-testid=search-result]').getAttribute('data-found')).resolves.toBe('true');
    await expect(page.inputValue('#search-hash')).resolves.toBe(SEALED_SHA256);

    await page.goto(`/verify?hash=${encodeURIComponent(` ${SEALED_SHA256.toUpperCase()} `)}&search=true`);
    await page.waitForSelector('[data-testid=search-result]');
    await expect(page.locator('[data-testid=search-result]').getAttribute('data-found')).resolves.toBe('true');
    await expect(page.inputValue('#search-hash')).resolves.toBe(SEALED_SHA256);
    await context.close();
  }, 60_000);
});

describe('status labels say what their number is', () => {
  it('/live and the home card name the latest published ledger and the latest anchored day apart', async () => {
    const { context, page } = await newPage();
    for (const route of ['/live', '/']) {
      await page.goto(route);
      if (route === '/') await page.locator('#status-title').scrollIntoViewIfNeeded();
      const published = page.locator('[data-testid=latest-published]');
      await expect(published.locator('dt').textContent()).resolves.toBe('Latest published ledger');
      await expect(published.locator('dd').textContent()).resolves.toBe('November 2, 2025');
      const anchored = page.locator('[data-testid=latest-anchored]');
      await expect(anchored.locator('dt').textContent()).resolves.toBe('Latest anchored day');
      await expect(anchored.locator('dd').textContent()).resolves.toBe('None yet');
      expect(await page.getByText('Latest processed day').count(), route).toBe(0);
    }
    await context.close();
  });

  it('/ledgers counts the ledgers awaiting Bitcoin confirmation under "Bitcoin anchoring", not the submissions', async () => {
    const { context, page } = await newPage();
    await page.goto('/ledgers');
    const badge = page.locator('[data-testid=ots-card] [data-testid=ots-pending]');
    await expect(badge.textContent()).resolves.toBe('1 ledger awaiting Bitcoin confirmation');
    await context.close();
  });
});

describe("the free tier's daily limit on the file list", () => {
  let own: Project;
  let ownServer: Server;
  beforeAll(async () => {
    own = createProject();
    ownServer = await startServer(own, { now: NOW });
  }, 60_000);
  afterAll(async () => {
    await ownServer?.stop();
    if (own) removeProject(own);
  });

  function writeFiles(prefix: string, n: number): string[] {
    return Array.from({ length: n }, (_, i) => {
      const file = path.join(tmp, `${prefix}-${i + 1}.txt`);
      fs.writeFileSync(file, `${prefix} ${i} ${crypto.randomBytes(8).toString('hex')}`);
      return file;
    });
  }

  it('shows each file its outcome and what is left, then stops submitting and offering retries; no upgrade where it cannot be bought', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: ownServer.url });
    const page = await context.newPage();
    const submits: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/api/submit')) submits.push(r.postData() ?? '');
    });
    await page.goto('/');
    await hydrated(page, '#home-dropzone-input');
    await page.setInputFiles('#home-dropzone-input', writeFiles('limit', 4));
    await page.waitForFunction(
      () => document.querySelectorAll('li[data-submit="submitted"], li[data-submit="limited"]').length === 4,
    );
    const submitted = page.locator('li[data-submit="submitted"]');
    await expect(submitted.count()).resolves.toBe(2);
    const notes = await submitted.locator('[data-testid=file-note]').allTextContents();
    expect(notes.sort()).toEqual(['0 free timestamps left today', '1 free timestamp left today']);
    await expect(
      page.locator('li[data-submit="limited"] [data-testid=file-limited]').allTextContents(),
    ).resolves.toEqual(['Not submitted: daily limit reached', 'Not submitted: daily limit reached']);
    await expect(page.getByRole('button', { name: 'Create Proof' }).count()).resolves.toBe(0);
    const notice = page.locator('[data-testid=limit-notice]');
    await expect(notice.textContent()).resolves.toMatch(
      /^Daily limit reached: the free tier allows 2 timestamps per day\. It resets at 00:00 UTC \(in (14 h 0|13 h 59) min\)\./,
    ); // by the server's clock (10:00 UTC), not this machine's
    expect((await notice.textContent())!.toLowerCase()).not.toContain('upgrade');
    expect(await page.locator('#toaster').textContent()).not.toMatch(/upgrade/i);
    await capture(page, 'free-limit-home');

    const before = submits.length;
    await page.setInputFiles('#home-dropzone-input', writeFiles('after-limit', 1));
    await page.waitForFunction(() => document.querySelectorAll('li[data-submit="limited"]').length === 3);
    expect(submits.length).toBe(before);
    await context.close();
  }, 60_000);

  it('offers the upgrade to Standard only where payments are available', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: ownServer.url });
    const page = await context.newPage();
    await page.route('**/api/stripe/config', (route) =>
      route.fulfill({ status: 200, contentType: 'application/json', body: '{"paymentsAvailable":true}' }),
    );
    await page.goto('/proof');
    await hydrated(page, '#proof-dropzone-input');
    await page.setInputFiles('#proof-dropzone-input', writeFiles('paid', 1));
    const link = page.locator('[data-testid=limit-notice] a', { hasText: 'Upgrade to Standard' });
    await link.waitFor();
    await expect(link.getAttribute('href')).resolves.toBe('/pricing/');
    await context.close();
  }, 60_000);

  it("shows a free user's usage today on the dashboard", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: ownServer.url });
    const page = await context.newPage();
    const res = await page.request.post('/api/auth/signup', {
      data: {
        username: 'firstuser',
        email: 'first@example.org',
        password: 'correct horse battery',
        agreeTerms: true,
        newsletterSubscribed: false,
      },
    });
    expect(res.status(), await res.text()).toBeLessThan(300);
    await page.goto('/dashboard');
    await expect(page.locator('[data-testid=daily-card] [data-testid=daily-usage]').textContent()).resolves.toBe(
      '2 of 2 today',
    );
    await capture(page, 'dashboard-free-usage');
    await context.close();
  }, 60_000);
});

describe('pricing without payments', () => {
  it('says on the Standard card that it cannot be bought here, instead of sending visitors to /signup', async () => {
    const { context, page } = await newPage();
    await page.goto('/pricing');
    await hydrated(page, '[data-tier=standard]');
    const card = page.locator('[data-tier=standard]');
    await expect(card.locator('[data-testid=payments-unavailable]').textContent()).resolves.toBe(
      'Payments are not available on this server right now, so Standard cannot be bought here. The free tier works as usual.',
    );
    const button = card.getByRole('button', { name: 'Subscribe Now' });
    await expect(button.isDisabled()).resolves.toBe(true);
    await button.click({ force: true });
    // Asserts an absence (the disabled button goes nowhere), so there is nothing to wait for: a navigation the
    // click would wrongly start has 300 ms to change the URL.
    await page.waitForTimeout(300);
    expect(new URL(page.url()).pathname).toBe('/pricing');
    await capture(page, 'pricing-no-payments');
    await context.close();
  });
});

describe('what a person needs to verify offline', () => {
  it('/ledgers offers the day\'s checkpoint, and a disabled "pending" OTS control with the reason until the file exists', async () => {
    const { context, page } = await newPage();
    await page.goto('/ledgers');
    const card = page.locator('[data-testid=ledger-card][data-date="2025-11-02"]');
    const checkpoint = card.getByRole('link', { name: 'Checkpoint' });
    await expect(checkpoint.getAttribute('href')).resolves.toBe('/ledgers/2025-11-02.checkpoint');
    expect((await fetch(server.url + '/ledgers/2025-11-02.checkpoint')).status).toBe(200);
    expect((await fetch(server.url + '/ledgers/2025-11-02.json.ots')).status).toBe(404);
    await card.locator('[data-testid=ots-reason]').waitFor();
    expect(await card.locator('a[href$=".json.ots"]').count()).toBe(0);
    const pending = card.getByRole('button', { name: 'OTS proof: pending, usually within 24 hours' });
    await expect(pending.isDisabled()).resolves.toBe(true);
    await expect(card.locator('[data-testid=ots-reason]').textContent()).resolves.toMatch(
      /^No OpenTimestamps file yet: .+\.$/,
    );
    await capture(page, 'ledgers-ots-pending');
    await context.close();
  });

  it('/ledgers links the OTS proof of an anchored day', async () => {
    const { context, page } = await newPage();
    await page.route(/\/api\/ledgers\.php(\?|$)/, async (route) => {
      const answer = (await (await route.fetch()).json()) as LedgersPage;
      for (const l of answer.ledgers) l.otsStatus = 'verified';
      await route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(answer) });
    });
    await page.goto('/ledgers');
    const card = page.locator('[data-testid=ledger-card][data-date="2025-11-02"]');
    await expect(card.getByRole('link', { name: 'OTS Proof' }).getAttribute('href')).resolves.toBe(
      '/ledgers/2025-11-02.json.ots',
    );
    await context.close();
  });

  it('a found hash on /verify offers the proof bundle under a name a person understands, the certificate, and the .ots only once anchored', async () => {
    const { context, page } = await newPage();
    await page.goto(`/verify?hash=${SEALED_SHA256}&search=true`);
    const downloads = page.locator('[data-testid=search-result][data-found=true] [data-testid=proof-downloads]');
    await downloads.waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      downloads.getByRole('link', { name: 'Download proof bundle' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`timeseal-proof-${SEALED_SHA256.slice(0, 12)}.json`);
    const saved = path.join(tmp, download.suggestedFilename());
    await download.saveAs(saved);
    const expected = await (await fetch(`${server.url}/api/proof/${SEALED_SHA256}`)).text();
    expect(fs.readFileSync(saved, 'utf8')).toBe(expected);
    await expect(downloads.getByRole('link', { name: 'View certificate' }).getAttribute('href')).resolves.toBe(
      `/api/certificate.php?hash=${SEALED_SHA256}`,
    );
    // The demo day is not anchored: no per-hash .ots yet (it would be a 404), a pending note instead.
    expect(await downloads.locator('a[href$=".ots"]').count()).toBe(0);
    await expect(downloads.locator('[data-testid=ots-pending]').textContent()).resolves.toBe(
      'OTS proof: pending, usually within 24 hours',
    );
    await capture(page, 'verify-found-downloads');
    await context.close();
    // The result at phone width, in both themes: for the screenshots only.
    for (const theme of CAPTURE ? (['light', 'dark'] as const) : []) {
      const phone = await newPage({ theme, width: 390, height: 844 });
      await phone.page.goto(`/verify?hash=${SEALED_SHA256}&search=true`);
      const panel = phone.page.locator('[data-testid=proof-downloads]');
      await panel.waitFor();
      await capture(phone.page.locator('[data-testid=search-result]'), `verify-found-downloads-phone-${theme}`);
      await phone.context.close();
    }
  });

  it('offers the per-hash .ots on /verify once the day is anchored', async () => {
    const { context, page } = await newPage();
    await page.route('**/ledgers/ots_status.json', (route) =>
      route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ latest_ots_ok: '2025-11-02', last_update: NOW, queue_size: 0 }),
      }),
    );
    await page.goto(`/verify?hash=${SEALED_SHA256}&search=true`);
    const downloads = page.locator('[data-testid=search-result][data-found=true] [data-testid=proof-downloads]');
    await downloads.waitFor();
    const ots = downloads.getByRole('link', { name: 'Download OTS proof (.ots)' });
    await expect(ots.getAttribute('href')).resolves.toBe(`/api/proof/${SEALED_SHA256}.ots`);
    await context.close();
  });

  it('a found hash on /verify offers its c2sp.org/tlog-proof, saved as <hash>.tlog-proof, which verifies with the served keys', async () => {
    const { context, page } = await newPage();
    await page.goto(`/verify?hash=${SEALED_SHA256}&search=true`);
    const downloads = page.locator('[data-testid=search-result][data-found=true] [data-testid=proof-downloads]');
    await downloads.waitFor();
    const link = downloads.getByRole('link', { name: 'Download the proof for log tools' });
    await expect(link.getAttribute('title')).resolves.toBe('c2sp.org/tlog-proof@v1 (.tlog-proof file)');
    await expect(link.getAttribute('href')).resolves.toBe(`/api/proof/${SEALED_SHA256}.tlog-proof`);
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toBe(`${SEALED_SHA256}.tlog-proof`);
    const saved = path.join(tmp, download.suggestedFilename());
    await download.saveAs(saved);
    const keys = loadPublicKeys(project.env.TIMESEAL_KEYS!);
    const verified = verifyTlogProof(parseTlogProof(fs.readFileSync(saved)), keys, {
      hash: Buffer.from(SEALED_SHA256, 'hex'),
    });
    expect(verified.hash).toBe(SEALED_SHA256);
    await context.close();
    // The result at both widths, in both themes: for the screenshots only.
    for (const width of CAPTURE ? [1280, 390] : []) {
      for (const theme of ['light', 'dark'] as const) {
        // Tall enough that the whole result shows without scrolling (no sticky header over it); the "Proof found"
        // toast is closed as a person would.
        const shot = await newPage({ theme, width, height: width === 390 ? 1400 : 1000 });
        await shot.page.goto(`/verify?hash=${SEALED_SHA256}&search=true`);
        await shot.page.locator('[data-testid=tlog-proof-download]').waitFor();
        await shot.page.getByRole('button', { name: 'Close notification' }).click();
        await shot.page.locator('#toaster li').waitFor({ state: 'detached' });
        await capture(shot.page.locator('[data-testid=search-result]'), `verify-found-tlog-proof-${width}-${theme}`);
        await shot.context.close();
      }
    }
  });
});

describe('offline verifier', () => {
  it('recognises a proof bundle dropped on "Your document", says what it proves and what is missing, then verifies with the file', async () => {
    const bundle = path.join(tmp, `timeseal-proof-${SEALED_SHA256.slice(0, 12)}.json`);
    fs.writeFileSync(bundle, await (await fetch(`${server.url}/api/proof/${SEALED_SHA256}`)).text());
    const keys = ['public.pem', 'dilithium_public.key'].map((k) => path.join(project.env.TIMESEAL_KEYS!, k));
    const { context, page } = await newPage();
    await page.goto('/offline-verifier.html');
    await page.setInputFiles('#doc-file', bundle);
    await page.waitForFunction(() => /proof bundle/.test(document.getElementById('doc-status')!.textContent ?? ''));
    await expect(page.locator('#doc-status').textContent()).resolves.toContain(
      'not your document: added to the proof files',
    );
    await expect(page.inputValue('#hash-input')).resolves.toBe('');
    await page.locator('#sections', { hasText: 'What this bundle proves' }).waitFor();
    const report = (await page.locator('#sections').textContent())!;
    expect(report).toContain(`that SHA-256 ${SEALED_SHA256} is in the signed ledger of 2025-11-02`);
    expect(report).toContain('Still needed: your original file');
    await capture(page, 'offline-verifier-bundle-only');
    await capture(page.locator('#sections'), 'offline-verifier-bundle-only-result');

    // Dropped (not chosen) on the document zone: the same.
    const b64 = fs.readFileSync(bundle).toString('base64');
    const dataTransfer = await page.evaluateHandle(
      ({ b64, name }) => {
        const dt = new DataTransfer();
        dt.items.add(
          new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name, { type: 'application/json' }),
        );
        return dt;
      },
      { b64, name: 'proof.json' },
    );
    await page.dispatchEvent('#doc-drop', 'drop', { dataTransfer });
    await page.waitForFunction(() =>
      /proof\.json is a proof bundle/.test(document.getElementById('doc-status')!.textContent ?? ''),
    );
    await expect(page.inputValue('#hash-input')).resolves.toBe('');

    // With what the result panel gave (the bundle and the public keys) and the original file: verified.
    await page.setInputFiles('#proof-files', keys);
    await page.setInputFiles('#doc-file', path.join(ROOT, 'docs/sealed-disclosure.md'));
    await page.waitForFunction(
      (h) => (document.getElementById('hash-input') as HTMLInputElement).value === h,
      SEALED_SHA256,
    );
    await page.waitForFunction(() => document.getElementById('summary')!.dataset.state === 'ok');
    // The day is not anchored here (no calendar): the headline says what it did not check.
    await expect(page.locator('#summary').textContent()).resolves.toMatch(
      /^Verified: all \d+ checks passed\. Bitcoin anchor not checked: the bundle has no \.ots yet\.$/,
    );
    expect(await page.locator('#sections').textContent()).not.toContain('What this bundle proves');
    await capture(page, 'offline-verifier-bundle-and-file');
    await context.close();
  }, 60_000);
});
