// Shared by the site tests and bench/site.bench.ts: the built site, a temporary Timeseal project (keys, DB,
// archive), the real server (`pipeline/bin/timeseal serve`) on a free port, the CLI, and one headless
// Debian Chromium.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium.ts';
import { timesealSync } from '../support/cli-host.ts';
import { SITEMAP_PAGES } from '../../ingest/routes/crawlers.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const SITE_DIR = path.join(ROOT, 'dist/site');
/** The CLI; TIMESEAL_BIN runs another checkout's (e.g. a clean copy of HEAD while server files are being edited). */
export const TIMESEAL = process.env.TIMESEAL_BIN ?? path.join(ROOT, 'cli/bin/timeseal');
export const AXE_PATH = path.join(ROOT, 'node_modules/axe-core/axe.min.js');
export const SCREENSHOTS = path.join(ROOT, 'test-results/screenshots');
/** `make screenshots` sets TIMESEAL_SCREENSHOTS=1: the browser tests then write PNGs (capture()) and register the
 *  tests that only take screenshots. `make test` takes none. */
export const CAPTURE = process.env.TIMESEAL_SCREENSHOTS === '1';
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Every public route this site owns: the pages its sitemap lists (ingest/routes/crawlers.ts; the account screens
 *  are tested in test/accounts/). */
export const ROUTES: readonly string[] = SITEMAP_PAGES;

/** Builds the site once if `make test` / `make build` has not (scripts/build.ts: Astro, then site/*\/build.ts). */
export function ensureBuilt(): void {
  if (
    fs.existsSync(path.join(SITE_DIR, 'index.html')) &&
    fs.existsSync(path.join(SITE_DIR, 'quantum-shield/index.html'))
  )
    return;
  const result = spawnSync(process.execPath, ['scripts/build.ts'], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, ASTRO_TELEMETRY_DISABLED: '1' },
  });
  if (result.status !== 0) throw new Error('site build failed');
}

export interface Project {
  dir: string;
  env: NodeJS.ProcessEnv;
}

/** A fresh temporary project with its own keys, database and archive. `keysNow` is the clock of `keys init`: the
 *  TSA certificates are valid from a minute before it, so a server whose clock is earlier than the real time
 *  grants receipts only with an earlier `keysNow`. */
export function createProject(options: { keysNow?: string } = {}): Project {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-site-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TIMESEAL_DB: path.join(dir, 'data/timeseal.db'),
    TIMESEAL_ARCHIVE: path.join(dir, 'ledgers'),
    TIMESEAL_KEYS: path.join(dir, 'keys'),
    TIMESEAL_PRIVATE_KEYS: path.join(dir, 'data/private-keys'),
    TIMESEAL_SITE: SITE_DIR,
    TIMESEAL_ORIGIN: 'http://timeseal.test',
    OTS_CALENDARS: 'http://127.0.0.1:9/',
    HOST: '127.0.0.1',
    PORT: '0',
  };
  fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
  cli(['keys', 'init'], { env, now: options.keysNow });
  return { dir, env };
}

export function removeProject(project: Project): void {
  fs.rmSync(project.dir, { recursive: true, force: true });
}

/** Runs the timeseal CLI; throws with its stderr on a non-zero exit. */
export function cli(args: string[], options: { env: NodeJS.ProcessEnv; now?: string; input?: string }): string {
  const env = { ...options.env, ...(options.now ? { TIMESEAL_NOW: options.now } : {}) };
  const result =
    process.env.TIMESEAL_BIN === undefined
      ? timesealSync(args, { cwd: ROOT, env, ...(options.input === undefined ? {} : { input: options.input }) })
      : spawnSync(TIMESEAL, args, { cwd: ROOT, env, encoding: 'utf8', input: options.input });
  if (result.status !== 0) throw new Error(`timeseal ${args.join(' ')} failed (${result.status}): ${result.stderr}`);
  return result.stdout;
}

export interface Server {
  url: string;
  stop(): Promise<void>;
}

/** Starts `timeseal serve` on a free port and resolves once it prints its address. */
export async function startServer(project: Project, options: { now?: string; demo?: boolean } = {}): Promise<Server> {
  const env = { ...project.env, ...(options.now ? { TIMESEAL_NOW: options.now } : {}) };
  const child: ChildProcess = spawn(TIMESEAL, ['serve', ...(options.demo ? ['--demo'] : [])], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timeseal serve did not start in 30 s:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /Timeseal listening on (http:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`timeseal serve exited (${code}):\n${output}`));
    });
  });
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

export { launchChromium as launchBrowser };

/** What a site test runs against: a project (keys, database, archive), its server, one Chromium. */
export interface SiteUnderTest {
  project: Project;
  server: Server;
  browser: Browser;
}

/** The built site (ensureBuilt), a new project with `env` added to its settings (`prepare` may write its data
 *  first), its server at `now` (with `demo`, a demonstration ledger) and Chromium. What started is stopped again
 *  when a later step fails. */
export async function startSite(
  options: {
    keysNow?: string;
    now?: string;
    demo?: boolean;
    env?: Record<string, string>;
    prepare?: (project: Project) => Promise<void> | void;
  } = {},
): Promise<SiteUnderTest> {
  ensureBuilt();
  const project = createProject(options.keysNow === undefined ? {} : { keysNow: options.keysNow });
  let server: Server | undefined;
  try {
    Object.assign(project.env, options.env);
    await options.prepare?.(project);
    server = await startServer(project, {
      ...(options.now === undefined ? {} : { now: options.now }),
      ...(options.demo ? { demo: true } : {}),
    });
    return { project, server, browser: await launchChromium() };
  } catch (err) {
    await stopSite({ project, ...(server ? { server } : {}) });
    throw err;
  }
}

/** Stops what startSite started, as far as it got. */
export async function stopSite(site: Partial<SiteUnderTest>): Promise<void> {
  await site.browser?.close();
  await site.server?.stop();
  if (site.project) removeProject(site.project);
}

/** A new browser context on `server`, `width` × 900 px, in `theme` when given, accepting downloads with
 *  `downloads`, and its page, whose errors go to `errors` when given. */
export async function openPage(
  browser: Browser,
  server: Server,
  options: { width?: number; theme?: 'light' | 'dark'; downloads?: boolean; errors?: string[] } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: 900 },
    baseURL: server.url,
    ...(options.downloads ? { acceptDownloads: true } : {}),
  });
  if (options.theme) await context.addInitScript((t) => localStorage.setItem('theme', t), options.theme);
  const page = await context.newPage();
  const errors = options.errors;
  if (errors) page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
  return { context, page };
}

export function sha256sum(file: string): string {
  const result = spawnSync('sha256sum', [file], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`sha256sum failed: ${result.stderr}`);
  return result.stdout.split(' ')[0]!;
}

/** Under `make screenshots` (CAPTURE), writes a PNG of the page (or of one element) to SCREENSHOTS/<name>.png,
 *  replacing any older one, and returns its path; otherwise does nothing and returns undefined. */
export async function capture(
  target: Page | Locator,
  name: string,
  options: { fullPage?: boolean } = {},
): Promise<string | undefined> {
  if (!CAPTURE) return undefined;
  const file = path.join(SCREENSHOTS, `${name}.png`);
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  fs.rmSync(file, { force: true });
  if ('mainFrame' in target) await target.screenshot({ path: file, fullPage: options.fullPage ?? false });
  else await target.screenshot({ path: file });
  return file;
}

/** What is wrong with the PNG files a test wrote since `since` (Date.now() at its start): a file missing, older
 *  than the test, or not a non-empty PNG (its first 8 bytes the PNG signature). Empty when all are good. */
export function pngProblems(files: string[], since: number): string[] {
  const problems: string[] = [];
  for (const file of files) {
    const name = path.relative(ROOT, file);
    if (!fs.existsSync(file)) {
      problems.push(`${name}: missing`);
      continue;
    }
    const { mtimeMs, size } = fs.statSync(file);
    if (mtimeMs < since) problems.push(`${name}: older than the test (${new Date(mtimeMs).toISOString()})`);
    const head = Buffer.alloc(8);
    const fd = fs.openSync(file, 'r');
    fs.readSync(fd, head, 0, 8, 0);
    fs.closeSync(fd);
    if (size <= PNG_SIGNATURE.length || !head.equals(PNG_SIGNATURE))
      problems.push(`${name}: not a PNG (${size} bytes)`);
  }
  return problems;
}

/** Placeholders an island shows until its data arrives (LiveStatus, SystemStatus, LedgersBrowser, Dashboard,
 *  LiveProof, VerifyEmail). */
const PENDING_TEXT = /Loading[^\n]*\.\.\.|Verifying…|Verifying Email/;

/** Waits until a page is as a person sees it once it has loaded: scrolls through it and back to the top (client:visible
 *  islands hydrate when seen; a rendered frame at each step), then waits until every island has hydrated (Astro
 *  removes `ssr` from <astro-island>), none still shows a loading state, and the web fonts are ready. */
export async function settled(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    for (let y = 0; y < document.body.scrollHeight; y += 600) {
      window.scrollTo(0, y);
      await frame();
    }
    window.scrollTo(0, 0);
    await frame();
  });
  await page.waitForFunction(
    (pending) =>
      !document.querySelector('astro-island[ssr], [data-state=loading]') &&
      !new RegExp(pending).test(document.body.innerText),
    PENDING_TEXT.source,
  );
  await page.evaluate(async () => {
    await document.fonts.ready;
  });
}
