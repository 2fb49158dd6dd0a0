// `make bench` (bench/run.ts; alone: node bench/run.ts --only ledgers): what /ledgers and GET /api/ledgers.php
// cost on archives of 10, 365 and 3,650 days — the site must cost the same at day 3,650 as at day 10. Debian's
// headless Chromium against the real server (`timeseal serve`) and the built site. Each archive is written by
// test/support/long-archive.ts (days.json, ots_status.json, block_info.json and the month files for every day,
// real signed files for the newest days) and ends on the same day, so the newest month holds the same days.
//   - /ledgers first view: every request the page makes (a fresh browser context each time: nothing cached) until
//     the month's cards carry their block information and signature checks, the heat map is drawn and no
//     request is in flight; bytes = response headers + bodies as transferred; time = from navigation to then.
//   - one month further back (← Previous month: October, 31 cards, one on the 10-day archive): that step's counts.
//   - GET /api/ledgers.php (the default page of 60 days) and the month page the site asks for
//     (?before=<first of next month>&limit=31): bytes (raw and gzipped) and the median time of 200 requests.
// Ratios 3,650 days ÷ 10 days (target ≤ 1.2 for the first view's requests and bytes) and ÷ 365 days. Prints a
// Markdown section on stdout.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Browser, Request } from 'playwright-core';
import { blockInfoMonthPath, BLOCK_INFO_PATH } from '../core/archive.ts';
import { encodeBlockInfoMonth } from '../pipeline/anchor/status.ts';
import { loadConfig } from '../runtime/config.ts';
import { loadSigningKeys } from '../runtime/keys.ts';
import { writeLongArchive } from '../test/support/long-archive.ts';
import {
  createProject,
  ensureBuilt,
  launchBrowser,
  removeProject,
  startServer,
  type Project,
  type Server,
} from '../test/site/helpers.ts';

const SIZES = [10, 365, 3650] as const;
const LAST = '2025-11-09';
const NOW = '2025-11-10T10:00:00.000Z';
const RUNS = 5;
const API_REQUESTS = 200;

function log(message: string): void {
  process.stderr.write(`ledgers.bench: ${message}\n`);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

interface View {
  requests: number;
  bytes: number;
  ms: number;
  cards: number;
}

/** Counts the requests of `action` in a fresh context until `done` holds and none is in flight. */
async function viewCost(browser: Browser, url: string, step: 'first' | 'previous'): Promise<View> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: url });
  const page = await context.newPage();
  const complete = async (month: string | null) => {
    await page
      .locator(`[data-testid=ledger-cards]${month ? `[data-month="${month}"]` : ''}[data-complete=true]`)
      .waitFor({ timeout: 60_000 });
    await page.locator('[data-testid=heatmap]').waitFor();
  };
  if (step === 'previous') {
    await page.goto('/ledgers');
    await complete(null);
  }
  let requests = 0;
  let inFlight = 0;
  let idle: () => void = () => {};
  const sizes: Promise<number>[] = [];
  page.on('request', (r) => {
    if (r.url().endsWith('/favicon.svg')) return;
    requests++;
    inFlight++;
  });
  const finished = (r: Request) => {
    if (r.url().endsWith('/favicon.svg')) return;
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
  if (step === 'first') {
    await page.goto('/ledgers');
    await complete(null);
  } else {
    await page.getByRole('button', { name: '← Previous month' }).click();
    await complete('2025-10');
  }
  if (inFlight > 0) await new Promise<void>((resolve) => (idle = resolve));
  const ms = performance.now() - started;
  const bytes = (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
  const cards = await page.locator('[data-testid=ledger-card]').count();
  await context.close();
  return { requests, bytes, ms, cards };
}

/** Bytes of one answer as sent with gzip, and the median time of API_REQUESTS sequential requests. */
async function apiCost(url: string): Promise<{ bytes: number; raw: number; ms: number }> {
  const times: number[] = [];
  let body = Buffer.alloc(0);
  for (let i = 0; i < API_REQUESTS + 10; i++) {
    const t = performance.now();
    const res = await fetch(url, { headers: { 'accept-encoding': 'identity' } });
    body = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
    if (i >= 10) times.push(performance.now() - t);
  }
  return { bytes: zlib.gzipSync(body).length, raw: body.length, ms: median(times) };
}

function writeArchive(project: Project, count: number): Project {
  const name = `days-${count}`;
  const env = {
    ...project.env,
    TIMESEAL_ARCHIVE: path.join(project.dir, name, 'ledgers'),
    TIMESEAL_DB: path.join(project.dir, name, 'data/timeseal.db'),
  };
  fs.mkdirSync(path.dirname(env.TIMESEAL_DB), { recursive: true });
  const config = loadConfig(env);
  writeLongArchive({
    archive: env.TIMESEAL_ARCHIVE,
    origin: config.logOrigin,
    keys: loadSigningKeys({ keys: config.keys, privateKeys: config.privateKeys }),
    count,
    lastDate: LAST,
    signed: Math.min(count, 70),
  });
  const info = JSON.parse(fs.readFileSync(path.join(env.TIMESEAL_ARCHIVE, BLOCK_INFO_PATH), 'utf8')) as {
    ledgers: Record<string, never>;
    pending: Record<string, never>;
  };
  fs.mkdirSync(path.join(env.TIMESEAL_ARCHIVE, 'block-info'), { recursive: true });
  for (const month of new Set(Object.keys(info.ledgers).map((d) => d.slice(0, 7)))) {
    fs.writeFileSync(path.join(env.TIMESEAL_ARCHIVE, blockInfoMonthPath(month)), encodeBlockInfoMonth(info, month));
  }
  return { dir: path.join(project.dir, name), env };
}

ensureBuilt();
const project = createProject();
const browser = await launchBrowser();
const rows = new Map<
  number,
  { first: View; previous: View; page: Awaited<ReturnType<typeof apiCost>>; month: Awaited<ReturnType<typeof apiCost>> }
>();
const servers: Server[] = [];
try {
  // The three servers run side by side and the views take turns, round after round, so that the machine's
  // drift falls on every size alike.
  for (const count of SIZES) {
    log(`writing ${count} days`);
    servers.push(await startServer(writeArchive(project, count), { now: NOW }));
  }
  for (const server of servers) await viewCost(browser, server.url, 'first'); // warms the server's caches (day checks, parsed status files)
  const firsts = SIZES.map((): View[] => []);
  const previous = SIZES.map((): View[] => []);
  for (let round = 0; round < RUNS; round++) {
    log(`round ${round + 1} of ${RUNS}`);
    for (const [i, server] of servers.entries()) firsts[i]!.push(await viewCost(browser, server.url, 'first'));
    for (const [i, server] of servers.entries()) previous[i]!.push(await viewCost(browser, server.url, 'previous'));
  }
  const pick = (views: View[]): View => ({
    requests: median(views.map((v) => v.requests)),
    bytes: median(views.map((v) => v.bytes)),
    ms: median(views.map((v) => v.ms)),
    cards: median(views.map((v) => v.cards)),
  });
  for (const [i, count] of SIZES.entries()) {
    const url = servers[i]!.url;
    rows.set(count, {
      first: pick(firsts[i]!),
      previous: pick(previous[i]!),
      page: await apiCost(`${url}/api/ledgers.php`),
      month: await apiCost(`${url}/api/ledgers.php?before=2025-11-01&limit=31`),
    });
  }
} finally {
  await browser.close();
  for (const server of servers) await server.stop();
  removeProject(project);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => `${n.toFixed(n < 10 ? 2 : 0)} ms`;
const ratio = (f: (c: number) => number, a: number, b: number) => (f(a) / f(b)).toFixed(2);
const get = (c: number) => rows.get(c)!;
const row = (label: string, f: (c: number) => number, show: (n: number) => string, target = '—', strong = false) => {
  const r = (a: number, b: number) => (strong ? `**${ratio(f, a, b)}**` : ratio(f, a, b));
  return `| ${label} | ${SIZES.map((c) => show(f(c))).join(' | ')} | ${r(3650, 10)} | ${r(3650, 365)} | ${target} |`;
};
const api = (key: 'page' | 'month') => (c: number) => `${fmt(get(c)[key].bytes)} (${fmt(get(c)[key].raw)})`;
const lines = [
  '## A decade of days (bench/ledgers.bench.ts)',
  '',
  `Debian Chromium (headless) against \`timeseal serve\` and the built site, on archives of 10, 365 and 3,650 days written by test/support/long-archive.ts (with the month files of block information), all ending on ${LAST}: the first view shows the same nine days of November on each. The three servers run side by side and the views take turns for ${RUNS} rounds (a fresh browser context each time: nothing cached; the servers warmed by one view first); medians. Requests and bytes (response headers + bodies as transferred, the favicon left out) until the month's cards carry their block information and signature checks, the heat map is drawn and no request is in flight. API: ${API_REQUESTS} sequential requests from Node, median time; bytes of the body, gzipped with zlib's default level (raw in brackets).`,
  '',
  '| measure | 10 days | 365 days | 3,650 days | 3,650 ÷ 10 | 3,650 ÷ 365 | target |',
  '|---|---|---|---|---|---|---|',
  row('/ledgers first view: requests', (c) => get(c).first.requests, fmt, '≤ 1.2 (and ≤ ~60 requests)', true),
  row('/ledgers first view: bytes', (c) => get(c).first.bytes, fmt, '≤ 1.2', true),
  row('/ledgers first view: time', (c) => get(c).first.ms, ms),
  `| /ledgers first view: cards | ${SIZES.map((c) => fmt(get(c).first.cards)).join(' | ')} | | | ≤ 31 |`,
  row('← Previous month: requests', (c) => get(c).previous.requests, fmt),
  row('← Previous month: bytes', (c) => get(c).previous.bytes, fmt),
  row('← Previous month: time', (c) => get(c).previous.ms, ms),
  `| ← Previous month: cards | ${SIZES.map((c) => fmt(get(c).previous.cards)).join(' | ')} | | | ≤ 31 |`,
  `| \`GET /api/ledgers.php\` (newest 60 days): bytes gzip (raw) | ${SIZES.map(api('page')).join(' | ')} | ${ratio((c) => get(c).page.bytes, 3650, 10)} | ${ratio((c) => get(c).page.bytes, 3650, 365)} | — |`,
  row('`GET /api/ledgers.php`: median time', (c) => get(c).page.ms, ms),
  `| \`?before=2025-11-01&limit=31\` (October): bytes gzip (raw) | ${SIZES.map(api('month')).join(' | ')} | ${ratio((c) => get(c).month.bytes, 3650, 10)} | ${ratio((c) => get(c).month.bytes, 3650, 365)} | — |`,
  row('`?before=2025-11-01&limit=31`: median time', (c) => get(c).month.ms, ms),
  '',
  "On the first view only the year's heat map grows with the archive (`/api/ledgers-calendar.php`: one entry a day of the shown year, at most 366). The 10-day archive holds 10 days in all: its API page has 10 days instead of 60, its October one day instead of 31, hence the 3,650 ÷ 10 ratios of those rows; 3,650 ÷ 365 compares equal pages.",
];
process.stdout.write(`${lines.join('\n')}\n`);
