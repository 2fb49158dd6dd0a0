// Shared by the site tests and bench/site.bench.ts: the built site, a temporary Timeseal project (keys, DB,
// archive), the real server (`pipeline/bin/timeseal serve`) on a free port, the CLI, and one headless
// Debian Chromium (DESIGN.md §6).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const SITE_DIR = path.join(ROOT, 'dist/site');
/** The CLI; TIMESEAL_BIN runs another checkout's (e.g. a clean copy of HEAD while server files are being edited). */
export const TIMESEAL = process.env.TIMESEAL_BIN ?? path.join(ROOT, 'cli/bin/timeseal');
export const AXE_PATH = path.join(ROOT, 'node_modules/axe-core/axe.min.js');
export const SCREENSHOTS = path.join(ROOT, 'test-results/screenshots');

/** Every public route of spec §2 that this site owns (account screens belong to the accounts issue). */
export const ROUTES = [
  '/', '/proof', '/verify', '/use-cases', '/ledgers', '/live', '/pricing', '/contact', '/quantum-shield', '/beta-api', '/privacy', '/terms',
] as const;

/** Builds the site once if `make test` / `make build` has not (scripts/build.ts: Astro, then site/*\/build.ts). */
export function ensureBuilt(): void {
  if (fs.existsSync(path.join(SITE_DIR, 'index.html')) && fs.existsSync(path.join(SITE_DIR, 'quantum-shield/index.html'))) return;
  const result = spawnSync(process.execPath, ['scripts/build.ts'], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, ASTRO_TELEMETRY_DISABLED: '1' } });
  if (result.status !== 0) throw new Error('site build failed');
}

export interface Project {
  dir: string;
  env: NodeJS.ProcessEnv;
}

/** A fresh temporary project with its own keys, database and archive. */
export function createProject(): Project {
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
  cli(['keys', 'init'], { env });
  return { dir, env };
}

export function removeProject(project: Project): void {
  fs.rmSync(project.dir, { recursive: true, force: true });
}

/** Runs the timeseal CLI; throws with its stderr on a non-zero exit. */
export function cli(args: string[], options: { env: NodeJS.ProcessEnv; now?: string; input?: string }): string {
  const env = { ...options.env, ...(options.now ? { TIMESEAL_NOW: options.now } : {}) };
  const result = spawnSync(TIMESEAL, args, { cwd: ROOT, env, encoding: 'utf8', input: options.input });
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
  const child: ChildProcess = spawn(TIMESEAL, ['serve', ...(options.demo ? ['--demo'] : [])], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
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

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'],
  });
}

export function sha256sum(file: string): string {
  const result = spawnSync('sha256sum', [file], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`sha256sum failed: ${result.stderr}`);
  return result.stdout.split(' ')[0]!;
}
