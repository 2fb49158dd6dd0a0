// README.md's "A day in five minutes", run as printed: its code blocks are read from README.md (so the README
// cannot drift from what works) and run on a fresh copy of the repository (the files git tracks; node_modules
// and .tools linked from this checkout, as `make install` would have left them), as a newcomer runs them: the
// system's Node 20 and npm first on PATH, a home of the test's, npm's global prefix in a temporary folder (what
// `npm install -g` writes there instead of /usr), offline. `make start` runs in the background (PORT set to a
// free port: the one change to the printed text is localhost:8080 → localhost:<that port>); then each command
// line of the second block runs in bash from the copy's root, and must exit 0, or N where its comment says
// "(exit N)". The comment line "In a browser, open … and drop F …" is done in Chromium: the file dropped on the
// home page's drop zone, its receipt downloaded beside it. After `timeseal clock next-day` the home page's
// countdown must say 23:59:… (the site follows the server's moved clock); the status answer must say published;
// the client's upgrade says its next check on the server's clock; no `npx timeseal` line gets a warning of npm's
// (its first installs the project into the empty npx cache: npm checks engines there). Then the running server
// takes the new day's submissions (201, not the 503 of a server left on the closed day), and `make start` run
// again starts without building the site again.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from './support/chromium.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';
let tmp: string;
let repo: string;
let port: number;
let server: ChildProcess | undefined;
let serverLog = '';
let browser: Browser | undefined;

/** The code blocks of README.md's "## A day in five minutes" section, in order. */
function walkthroughBlocks(): string[] {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = /^## A day in five minutes\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(readme)?.[1];
  if (section === undefined) throw new Error('README.md has no "## A day in five minutes" section');
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port: p } = s.address() as net.AddressInfo;
      s.close(() => resolve(p));
    });
  });
}

function env(): NodeJS.ProcessEnv {
  return {
    PATH: `${path.join(tmp, 'prefix/bin')}:${SYSTEM_PATH}`,
    HOME: path.join(tmp, 'home'),
    LANG: 'C.UTF-8',
    PORT: String(port),
    npm_config_prefix: path.join(tmp, 'prefix'),
    npm_config_cache: path.join(tmp, 'npm-cache'),
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
}

/** The printed text with the test's port for the README's 8080. */
const local = (text: string): string => text.replaceAll('localhost:8080', `localhost:${port}`);

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-walkthrough-'));
  repo = path.join(tmp, 'timeseal');
  fs.mkdirSync(path.join(tmp, 'home'));
  // A fresh clone: the files git tracks (and new ones it would), as they are in this working tree.
  const tracked = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  }).stdout.split('\0');
  for (const file of tracked.filter(Boolean)) {
    const from = path.join(ROOT, file);
    if (!fs.existsSync(from)) continue; // deleted in the working tree, not yet committed
    fs.mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    fs.cpSync(from, path.join(repo, file), { preserveTimestamps: true, verbatimSymlinks: true });
  }
  // What `make install` leaves: Node 24 in .tools/ (none when the machine's own Node is new enough), the packages
  // in node_modules/ (each linked, so that what the build caches there, .astro and .vite, stays in the copy) and
  // the stamp file that says they are installed.
  if (fs.existsSync(path.join(ROOT, '.tools')))
    fs.symlinkSync(fs.realpathSync(path.join(ROOT, '.tools')), path.join(repo, '.tools'));
  const modules = fs.realpathSync(path.join(ROOT, 'node_modules'));
  fs.mkdirSync(path.join(repo, 'node_modules'));
  for (const name of fs.readdirSync(modules))
    if (!['.astro', '.vite', '.vite-temp', '.installed', '.cache'].includes(name))
      fs.symlinkSync(path.join(modules, name), path.join(repo, 'node_modules', name));
  fs.writeFileSync(path.join(repo, 'node_modules/.installed'), '');
  port = await freePort();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopServer();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** Runs one printed line in bash from the copy's root. */
function run(line: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('/bin/bash', ['-c', local(line)], { cwd: repo, env: env(), encoding: 'utf8', timeout: 300_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs the printed start command in the background and waits until the server answers; its output in serverLog. */
async function startServer(start: string): Promise<void> {
  serverLog = '';
  server = spawn('/bin/bash', ['-c', start], {
    cwd: repo,
    env: env(),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout!.on('data', (d: Buffer) => (serverLog += d.toString()));
  server.stderr!.on('data', (d: Buffer) => (serverLog += d.toString()));
  const exited = new Promise<never>((_, reject) =>
    server!.once('exit', (code) => reject(new Error(`make start exited ${code}:\n${serverLog.slice(-6000)}`))),
  );
  exited.catch(() => {});
  await Promise.race([
    exited,
    expect
      .poll(
        () =>
          fetch(`http://127.0.0.1:${port}/api/queue-stats.php`).then(
            (r) => r.status,
            () => 0,
          ),
        { timeout: 300_000, interval: 500 },
      )
      .toBe(200),
  ]);
}

/** Stops the server `make start` runs (its whole process group) and waits for it to end. */
async function stopServer(): Promise<void> {
  if (server?.pid === undefined || server.exitCode !== null) return;
  const exited = new Promise((resolve) => server!.once('exit', resolve));
  process.kill(-server.pid, 'SIGTERM');
  await exited;
}

/** The server's clock, from its Date header. */
async function serverDate(): Promise<Date> {
  return new Date((await fetch(`http://127.0.0.1:${port}/`, { method: 'HEAD' })).headers.get('date')!);
}

/** A new hash sent to the running server's beta API: its status and the day it was queued for. */
async function submitNew(): Promise<{ status: number; ledgerDate?: string }> {
  const hash = crypto.randomBytes(32).toString('hex');
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/beta/timestamp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ hash }),
  });
  const body = (await res.json()) as { ledgerDate?: string };
  return { status: res.status, ledgerDate: body.ledgerDate };
}

async function homeCountdown(): Promise<string> {
  const page = await browser!.newPage();
  try {
    await page.goto(`http://localhost:${port}/`);
    const countdown = page.locator('[data-testid=countdown]').first();
    await countdown.scrollIntoViewIfNeeded(); // its card hydrates once visible
    await expect.poll(async () => countdown.textContent(), { timeout: 30_000 }).toMatch(/^\d\d:\d\d:\d\d$/);
    return (await countdown.textContent())!;
  } finally {
    await page.close();
  }
}

test("README's \"A day in five minutes\" works as printed: the site's and the client's stamps, the day closed by the moved clock, the proofs published, upgraded and verified offline", async () => {
  const [start, steps] = walkthroughBlocks();
  expect(start?.trim()).toBe('make start');
  expect(steps).toBeDefined();

  await startServer(start!);
  browser = await launchChromium();

  const done: string[] = [];
  for (const raw of steps!.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    if (line.startsWith('#')) {
      const site = /In a browser, open (http\S+) and drop (\S+) on .*?its receipt, (\S+\.tsr)/.exec(line);
      if (site === null) continue;
      const [, url, file, receipt] = site;
      const page = await browser.newPage();
      await page.goto(local(url!));
      // The drop zone's island hydrates once visible: files chosen before that would go nowhere.
      await page.waitForFunction(() => {
        const island = document.querySelector('#home-dropzone-input')?.closest('astro-island');
        return !!island && !island.hasAttribute('ssr');
      });
      await page.setInputFiles('#home-dropzone-input', path.join(repo, file!));
      const link = page.getByRole('link', { name: 'Download receipt (.tsr)' }).first();
      await link.waitFor({ timeout: 60_000 });
      const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
      expect(download.suggestedFilename()).toBe(receipt);
      await download.saveAs(path.join(repo, receipt!));
      await page.close();
      done.push('site');
      continue;
    }
    const expected = Number(/#.*\(exit (\d+)\)/.exec(line)?.[1] ?? 0);
    // The server's day before the clock moves: the moved clock is 00:01 of the day after it.
    const dayBefore = /timeseal clock next-day/.test(line) ? (await serverDate()).toISOString().slice(0, 10) : '';
    const r = run(line);
    expect(r.status, `${line}\n${r.stdout}\n${r.stderr}\n--- server:\n${serverLog.slice(-4000)}`).toBe(expected);
    // npm says nothing of its own before the command's output: the first `npx timeseal` installs the project into
    // npm's npx cache (an empty one here), which printed the "Unsupported engine" block on the system's Node 20.
    if (line.startsWith('npx ')) expect(r.stderr, line).not.toMatch(/^npm (warn|error)/m);
    if (/timeseal clock next-day/.test(line)) {
      // The running server follows the moved clock within a second (its Date header): 00:0x UTC of the day after
      // dayBefore (its hour alone would not do: between 00:00 and 01:00 the unmoved clock has it too). The site
      // follows the server's: 23:59:… to the next ledger.
      const dayAfter = new Date(Date.parse(`${dayBefore}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
      await expect
        .poll(async () => (await serverDate()).toISOString().slice(0, 15), { timeout: 10_000 })
        .toBe(`${dayAfter}T00:0`);
      expect(await homeCountdown()).toMatch(/^23:5\d:\d\d$/);
      done.push('countdown');
    }
    if (/\/api\/status\//.test(line)) {
      expect(JSON.parse(r.stdout)).toMatchObject({ state: 'published' });
      done.push('published');
    }
    if (/timeseal receipt check/.test(line)) done.push('receipt kept');
    if (/timeseal-client upgrade/.test(line)) {
      // Its next check is said on the server's (moved) clock, the one the person sees everywhere else.
      const next = /next check (\S+)/.exec(r.stdout)?.[1];
      expect(next, r.stdout).toBeDefined();
      expect(next!.slice(0, 10), r.stdout).toBe((await serverDate()).toISOString().slice(0, 10));
      done.push('upgraded');
    }
    if (/timeseal-client verify/.test(line) && done.includes('published')) done.push('client verified');
  }
  // Every part the section promises was run.
  expect(done).toEqual(['site', 'countdown', 'published', 'receipt kept', 'upgraded', 'client verified']);

  // The running server takes the new day's submissions at once (its clock moved with the CLI's: no 503 until a
  // restart), and a restart of `make start` serves the site as built, without building it again.
  const today = (await serverDate()).toISOString().slice(0, 10);
  expect(await submitNew()).toEqual({ status: 201, ledgerDate: today });
  await stopServer();
  await startServer(start!);
  expect(serverLog).toContain('build: dist/site is up to date (no input changed since the last build)');
  expect(await submitNew()).toEqual({ status: 201, ledgerDate: today });
}, 900_000);
