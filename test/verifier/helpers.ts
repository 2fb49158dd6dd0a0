// Helpers for the offline verifier tests: a real archive made by the real pipeline (the `timeseal` CLI in a temp
// folder, clock set with TIMESEAL_NOW), a verifier built with that archive's keys, and Chromium with the
// network shut off.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium.ts';
import { timesealAsync, timesealSync } from '../support/cli-host.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const BIN = path.join(ROOT, 'cli/bin/timeseal');
export const BUILD_SCRIPT = path.join(ROOT, 'site/offline-verifier/build.ts');
export const OTS_VECTORS = path.join(ROOT, 'test/vectors/ots');
export const RESULTS = path.join(ROOT, 'test-results');

/** The folder of the Node running the tests (the Makefile's: .tools/ when the machine's own is older than 24.8). */
const NODE_BIN = path.dirname(process.execPath);

function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TIMESEAL_') && k !== 'NODE_OPTIONS') out[k] = v;
  out.PATH = `${NODE_BIN}:${process.env.PATH ?? ''}`;
  return { ...out, ...extra };
}

export function run(
  cwd: string,
  command: string,
  args: string[],
  extra: Record<string, string> = {},
  input = '',
): string {
  const r =
    command === BIN
      ? timesealSync(args, { cwd, env: env(extra), input })
      : spawnSync(command, args, { cwd, env: env(extra), input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** As run(), without blocking the event loop (for CLI runs that talk to servers in this process). */
export async function runAsync(
  cwd: string,
  command: string,
  args: string[],
  extra: Record<string, string> = {},
): Promise<string> {
  if (command === BIN) {
    const r = await timesealAsync(args, { cwd, env: env(extra) });
    if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  }
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: env(extra), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(stdout)
        : reject(new Error(`${command} ${args.join(' ')} exited ${code}:\n${stdout}\n${stderr}`)),
    );
  });
}

export function sha256Hex(data: string | Uint8Array): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}

export function tempDir(label: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `timeseal-verifier-${label}-`));
}

export const DAY1 = '2025-11-01';
export const DAY2 = '2025-11-02';

export interface TestArchive {
  dir: string;
  ledgers: string;
  keys: string;
  /** The document whose proof the bundle is, and its hash. */
  document: string;
  documentHash: string;
  bundle: string;
  dayFiles(date: string): string[];
}

/** Two days published by the real pipeline; the document is submitted on the first day. */
export function buildArchive(): TestArchive {
  const dir = tempDir('archive');
  const document = path.join(dir, 'contract.txt');
  fs.writeFileSync(document, 'The original document, timestamped on the first day.\n');
  const documentHash = sha256Hex(fs.readFileSync(document));
  const others = (label: string, n: number) => Array.from({ length: n }, (_, i) => sha256Hex(`${label}-${i}`));
  run(dir, BIN, ['keys', 'init']);
  run(
    dir,
    BIN,
    ['import', '-'],
    { TIMESEAL_NOW: `${DAY1}T09:15:00.123Z` },
    `${[documentHash, ...others('day1', 6)].join('\n')}\n`,
  );
  run(dir, BIN, ['import', '-'], { TIMESEAL_NOW: `${DAY2}T14:00:00.000Z` }, `${others('day2', 4).join('\n')}\n`);
  run(dir, BIN, ['ledger', 'build'], { TIMESEAL_NOW: '2025-11-03T00:01:00.000Z' });
  const bundle = path.join(dir, 'proof.json');
  fs.writeFileSync(bundle, run(dir, BIN, ['proof', documentHash], { TIMESEAL_NOW: '2025-11-03T00:01:00.000Z' }));
  const ledgers = path.join(dir, 'ledgers');
  return {
    dir,
    ledgers,
    keys: path.join(dir, 'keys'),
    document,
    documentHash,
    bundle,
    dayFiles: (date) =>
      ['.json', '.json.sig', '.json.dilithium.sig', '.json.signatures.json', '.checkpoint'].map((s) =>
        path.join(ledgers, `${date}${s}`),
      ),
  };
}

/** Runs build.ts as `make build` does, with the given keys folder and output folder; returns its stdout. */
export function buildVerifier(outDir: string, keysDir: string): string {
  return run(ROOT, process.execPath, [BUILD_SCRIPT, '--out', outDir, '--keys', keysDir]);
}

export { launchChromium };

/** Chromium with the network off, showing the verifier built into `outDir` (opened from disk). */
export async function openOffline(outDir: string): Promise<{ browser: Browser; page: Page }> {
  const browser = await launchChromium();
  const context = await browser.newContext();
  await context.setOffline(true);
  const page = await context.newPage();
  await page.goto(`file://${path.join(outDir, 'offline-verifier.html')}`);
  return { browser, page };
}

/** A copy of `file` in `dir` with byte `at` XOR-ed with `mask` (never 0, so the byte always changes). */
export function corruptCopy(file: string, dir: string, at: number, mask = 0x01, name = path.basename(file)): string {
  const bytes = fs.readFileSync(file);
  bytes[at] = bytes[at]! ^ mask;
  const out = path.join(dir, name);
  fs.writeFileSync(out, bytes);
  return out;
}

/** `count` positions spread over [0, length), always including the first and last byte. */
export function samplePositions(length: number, count: number, accept: (i: number) => boolean = () => true): number[] {
  const out = new Set<number>();
  for (let k = 0; k < count; k++) {
    let i = Math.min(length - 1, Math.floor((k * (length - 1)) / Math.max(1, count - 1)));
    while (i < length - 1 && !accept(i)) i++;
    if (accept(i)) out.add(i);
  }
  return [...out];
}

/** On the offline verifier page: clears it, gives the document (if any) and the proof `files`, waits until every
 *  check has its verdict, and returns the summary. */
export async function giveOfflinePage(page: Page, files: string[], doc?: string): Promise<string> {
  await page.click('#clear');
  if (doc) {
    await page.setInputFiles('#doc-file', doc);
    await page.waitForFunction(() => document.getElementById('doc-status')!.textContent!.startsWith('SHA-256 of'));
  }
  await page.setInputFiles('#proof-files', files);
  await page.waitForFunction(
    (n) =>
      document.getElementById('file-count')!.textContent === `${n} file${n > 1 ? 's' : ''} given` &&
      !/checking…/.test(document.getElementById('sections')!.textContent!),
    files.length,
  );
  return (await page.textContent('#summary'))!;
}
