// What a developer meets on the site, in Debian's Chromium against the real server (`timeseal serve --demo` on a
// temporary project): /beta-api names everything a program can use (the receipt, the status lookup, the proofs,
// POST /tsa, the client, the feed, the OpenAPI document), its sample answers are what the server answers today,
// and every page links the Atom feed. Screenshots only under `make screenshots` (test/site/helpers.ts capture()).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  capture,
  CAPTURE,
  openPage,
  ROUTES,
  settled,
  startSite,
  stopSite,
  type Project,
  type Server,
} from './helpers.ts';

/** The server's clock: the demo ledger is the day before (2025-11-02). */
const NOW = '2025-11-03T10:00:00.000Z';
/** TIMESEAL_ORIGIN of createProject(): the origin the server writes into its answers. */
const SERVER_ORIGIN = 'http://timeseal.test';

let project: Project;
let server: Server;
let browser: Browser;

beforeAll(async () => {
  ({ project, server, browser } = await startSite({ demo: true, now: NOW }));
}, 120_000);

afterAll(() => stopSite({ browser, server, project }));

async function open(route: string, options: { width?: number; theme?: 'light' | 'dark' } = {}): Promise<Page> {
  const { page } = await openPage(browser, server, options);
  await page.goto(route);
  await settled(page);
  return page;
}

/** An answer's JSON text with its own hash-independent variables named: the submission time, the publication
 *  time, the ledger day and the origin, so that a sample made on another day and host compares with it. */
function normalized(
  json: unknown,
  names: { submittedAt: string; publishedAt: string; day: string; origin: string },
): unknown {
  const text = JSON.stringify(json)
    .replaceAll(names.submittedAt, '<submittedAt>')
    .replaceAll(names.publishedAt, '<publishedAt>')
    .replaceAll(names.day, '<day>')
    .replaceAll(names.origin, '<origin>');
  return JSON.parse(text);
}

/** The day after `day` at 00:01 UTC: when its ledger is published. */
const publication = (day: string) => new Date(Date.parse(`${day}T00:01:00.000Z`) + 86_400_000).toISOString();

describe('/beta-api', () => {
  it('names everything a program can use, each linked where the site has a page for it', async () => {
    const page = await open('/beta-api');
    const text = await page.locator('main').innerText();
    for (const thing of [
      '"receipt": true',
      'GET /api/status/<hash>',
      'GET /api/proof/<hash>',
      'POST /tsa',
      'POST /api/v1/timestamp',
      'timeseal-client',
      'GET /ledgers/feed.xml',
      'GET /api/openapi.json',
      '/api/v1/beta/timestamps',
    ])
      expect(text, thing).toContain(thing);
    expect(text).not.toMatch(/with the receipt below/i);
    for (const href of ['/ledgers/feed.xml', '/api/openapi.json', '/tsa-policy']) {
      const link = page.locator(`main a[href="${href}"]`);
      expect(await link.count(), href).toBeGreaterThan(0);
      const res = await fetch(new URL(href, server.url));
      expect(res.status, href).toBe(200);
    }
    await page.context().close();
  }, 60_000);

  it("shows the 201, 400 and status answers the server sends today (same fields, same texts; only the hash's day, times and origin differ)", async () => {
    const page = await open('/beta-api');
    const sample = async (name: string) =>
      JSON.parse(await page.locator(`[data-sample="${name}"]`).innerText()) as Record<string, unknown>;
    const created = await sample('beta-201');
    const pageOrigin = await page.evaluate(() => location.origin);
    const hash = created.hash as string;
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    const sampleNames = {
      submittedAt: created.submittedAt as string,
      publishedAt: publication(created.ledgerDate as string),
      day: created.ledgerDate as string,
      origin: pageOrigin,
    };

    const res = await fetch(new URL('/api/v1/beta/timestamp', server.url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ hash }),
    });
    expect(res.status).toBe(201);
    const real = (await res.json()) as Record<string, unknown>;
    const realNames = {
      submittedAt: real.submittedAt as string,
      publishedAt: publication(real.ledgerDate as string),
      day: real.ledgerDate as string,
      origin: SERVER_ORIGIN,
    };
    expect(normalized(created, sampleNames)).toEqual(normalized(real, realNames));

    const bad = await fetch(new URL('/api/v1/beta/timestamp', server.url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ hash: 'not-a-hash' }),
    });
    expect(bad.status).toBe(400);
    expect(await sample('beta-400')).toEqual(await bad.json());

    const status = await fetch(new URL(`/api/status/${hash}`, server.url));
    expect(status.status).toBe(200);
    expect(normalized(await sample('status'), sampleNames)).toEqual(normalized(await status.json(), realNames));
    await page.context().close();
  }, 180_000); // two real answers and a page; 60 s ran out in a fresh-clone run beside other tests

  if (CAPTURE)
    it('screenshots /beta-api at 1280 and 390 px, dark and light', async () => {
      for (const width of [1280, 390])
        for (const theme of ['dark', 'light'] as const) {
          const page = await open('/beta-api', { width, theme });
          await capture(page, `beta-api-${width}-${theme}`, { fullPage: true });
          await page.context().close();
        }
    }, 120_000);
});

describe('the Atom feed', () => {
  it('is linked from the head of every page (rel="alternate") and answers an Atom document', async () => {
    for (const route of [...ROUTES, '/login', '/no-such-page']) {
      const html = await (await fetch(new URL(route, server.url))).text();
      expect(html, route).toMatch(
        /<link rel="alternate" type="application\/atom\+xml" title="[^"]+" href="\/ledgers\/feed\.xml"/,
      );
    }
    const feed = await fetch(new URL('/ledgers/feed.xml', server.url));
    expect(feed.status).toBe(200);
    expect(feed.headers.get('content-type')).toMatch(/^application\/atom\+xml/);
    expect(await feed.text()).toContain('<title>Ledger of 2025-11-02');
  });
});

describe('the home FAQ', () => {
  it('says a receipt comes at once and the ledger at 00:01 UTC, and the beta terms beside the free tier', async () => {
    const page = await open('/');
    const faq = page.locator('#faq');
    await faq.getByText('When can I verify my hash?').click();
    await expect.poll(() => faq.locator('details[open]').innerText()).toMatch(/At once.*receipt.*00:01 UTC/s);
    await faq.getByText('Do I need an account?').click();
    await expect
      .poll(() => faq.locator('details[open]').innerText())
      .toMatch(/2 timestamps per day.*beta API.*no rate limit/s);
    await page.context().close();
  }, 60_000);
});
