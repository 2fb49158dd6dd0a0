// `make bench` (bench/run.ts): the website's two costs that matter to a visitor, measured in Debian's headless
// Chromium against the real server (`timeseal serve`) and the built site:
//   1. hashing a 1 GiB file on /verify (Web Worker, hash-wasm streaming): throughput as a ratio to
//      `sha256sum` on the same file in the same run (goal ≥ 0.25), and the peak memory growth of the browser's
//      processes while hashing (goal ≤ 256 MB);
//   2. the bytes one verified search downloads on an archive of 10,000,000 hashes (goal ≤ 64 KB). The archive
//      is written directly with core/ functions and holds exactly the files a lookup reads — the signed
//      checkpoint (tree size 10,000,000), the keys, the index head with the two segments ten days of a million
//      hashes leave, one shard of each with the average number of records (docs/FORMAT.md §6) and the tiles of
//      the inclusion proof — so the sizes are those of a real archive.
// Prints a Markdown section on stdout.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  encodeIndexHead,
  encodeSegmentHeader,
  INDEX_HEAD_PATH,
  segmentBits,
  segmentPath,
  type Segment,
} from '../core/index-segments.ts';
import { encodeShard, hashPrefix, type ShardRecord } from '../core/index-shard.ts';
import { writeProofWorld } from './common.ts';
import { createProject, ensureBuilt, launchBrowser, removeProject, startServer } from '../test/site/helpers.ts';

const GIB = 1024 ** 3;
const TREE_SIZE = 10_000_000;

function log(message: string): void {
  process.stderr.write(`site.bench: ${message}\n`);
}

/** Sum of the resident memory (bytes) of every process below `pid` (the browser and its renderers). */
function descendantsRss(pid: number): number {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // The process ended while we looked.
    }
  }
  let total = 0;
  const stack = [...(children.get(pid) ?? [])];
  while (stack.length) {
    const p = stack.pop()!;
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'));
      if (m) total += Number(m[1]) * 1024;
    } catch {
      // Gone.
    }
    stack.push(...(children.get(p) ?? []));
  }
  return total;
}

function writeFile(file: string, bytes: number): void {
  const block = crypto.randomBytes(16 * 1024 * 1024);
  const fd = fs.openSync(file, 'w');
  for (let written = 0; written < bytes; written += block.length)
    fs.writeSync(fd, block, 0, Math.min(block.length, bytes - written), null);
  fs.closeSync(fd);
}

/** The files one lookup of `hash` reads in a 10,000,000-leaf archive, signed with the project's keys. */
function writeLargeArchive(archive: string, privateKeys: string, hash: string): void {
  const leafIndex = 7_654_321;
  writeProofWorld(archive, privateKeys, 'timeseal.test', TREE_SIZE, hash, leafIndex);
  // The index of ten days of a million hashes after its merges (core/index-segments.ts): segments of 8 M and
  // 2 M leaves; the hash in the first. The shard of each segment that the hash maps to holds the average
  // number of records of that segment's shards.
  const segments: Segment[] = [
    { from: 0, to: 8_000_000 },
    { from: 8_000_000, to: TREE_SIZE },
  ];
  fs.mkdirSync(path.join(archive, 'index'), { recursive: true });
  fs.writeFileSync(path.join(archive, INDEX_HEAD_PATH), encodeIndexHead({ treeSize: TREE_SIZE, segments }));
  for (const segment of segments) {
    const bits = segmentBits(segment);
    const prefix = hashPrefix(Buffer.from(hash, 'hex'), 0, bits);
    const records: ShardRecord[] =
      segment.from <= leafIndex && leafIndex < segment.to
        ? [{ hash: Buffer.from(hash, 'hex'), leafIndex, submittedMs: Date.parse('2025-11-02T09:00:00Z') }]
        : [];
    const average = Math.round((segment.to - segment.from) / 2 ** bits);
    while (records.length < average) {
      const other = crypto.randomBytes(32);
      if (hashPrefix(other, 0, bits) !== prefix) continue;
      records.push({
        hash: other,
        leafIndex: segment.from + Math.floor(Math.random() * (segment.to - segment.from)),
        submittedMs: Date.parse('2025-10-01T00:00:00Z'),
      });
    }
    records.sort((a, b) => Buffer.compare(a.hash, b.hash) || a.leafIndex - b.leafIndex);
    // The segment file with its whole fan-out table but only this shard's records (what a lookup reads).
    const counts = new Uint32Array(2 ** bits);
    counts[prefix] = records.length;
    if (prefix + 1 < counts.length) counts[prefix + 1] = segment.to - segment.from - records.length;
    else counts[0] = segment.to - segment.from - records.length;
    if (prefix + 1 === counts.length) throw new Error('the sample hash must not fall in the last shard');
    fs.writeFileSync(
      path.join(archive, segmentPath(segment)),
      Buffer.concat([encodeSegmentHeader(counts), encodeShard(records)]),
    );
  }
}

ensureBuilt();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-site-bench-'));
const bigFile = path.join(tmp, 'one-gib.bin');
const project = createProject();
const browser = await launchBrowser();
let server = await startServer(project);
const lines: string[] = [];
try {
  // 1. Hashing 1 GiB.
  log('writing a 1 GiB file');
  writeFile(bigFile, GIB);
  spawnSync('cat', [bigFile], { stdio: ['ignore', 'ignore', 'ignore'] });
  const t0 = performance.now();
  const sum = spawnSync('sha256sum', [bigFile], { encoding: 'utf8' });
  const sha256sumSeconds = (performance.now() - t0) / 1000;
  const expected = sum.stdout.split(' ')[0]!;

  const context = await browser.newContext({ baseURL: server.url });
  const page = await context.newPage();
  await page.goto('/verify');
  await page.waitForFunction(
    () => !document.querySelector('#verify-file')?.closest('astro-island')?.hasAttribute('ssr'),
  );
  const browserPid = spawnSync('pgrep', ['-P', String(process.pid), '-f', 'chromium'], { encoding: 'utf8' })
    .stdout.trim()
    .split('\n')
    .map(Number)
    .find((n) => n > 0);
  if (!browserPid) throw new Error('cannot find the Chromium process');
  await page.waitForTimeout(500);
  const baseline = descendantsRss(browserPid);
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, descendantsRss(browserPid));
  }, 100);
  log('hashing in Chromium');
  const t1 = performance.now();
  await page.setInputFiles('#verify-file', bigFile);
  await page.locator('[data-testid=computed-hash]').waitFor({ timeout: 300_000 });
  const browserSeconds = (performance.now() - t1) / 1000;
  clearInterval(sampler);
  const got = await page.locator('[data-testid=computed-hash]').textContent();
  if (got !== expected) throw new Error(`browser hash ${got} != sha256sum ${expected}`);
  await context.close();
  fs.rmSync(bigFile);
  const ratio = sha256sumSeconds / browserSeconds;
  const growthMb = (peak - baseline) / 2 ** 20;

  // 2. One verified search on a 10,000,000-hash archive.
  await server.stop();
  const archive = project.env.TIMESEAL_ARCHIVE!;
  fs.rmSync(archive, { recursive: true, force: true });
  fs.mkdirSync(archive, { recursive: true });
  const hash = crypto.randomBytes(32).toString('hex');
  writeLargeArchive(archive, project.env.TIMESEAL_PRIVATE_KEYS!, hash);
  server = await startServer(project);
  const searchContext = await browser.newContext({ baseURL: server.url });
  const searchPage = await searchContext.newPage();
  const transfers: Promise<{ url: string; bytes: number }>[] = [];
  searchPage.on('requestfinished', (request) => {
    const url = new URL(request.url()).pathname;
    if (url.startsWith('/ledgers/') || url.startsWith('/keys/'))
      transfers.push(request.sizes().then((s) => ({ url, bytes: s.responseBodySize })));
  });
  await searchPage.goto(`/verify?hash=${hash}&search=true`);
  const result = searchPage.locator('[data-testid=search-result][data-found=true]');
  await result.waitFor({ timeout: 60_000 });
  const dual = await result.locator('[data-flag="Dual signature"]').getAttribute('data-ok');
  if (dual !== 'true') throw new Error('the search did not verify both signatures');
  const fetched = await Promise.all(transfers);
  const transferred = fetched.reduce((n, f) => n + f.bytes, 0);
  const bodies = fetched.map((f) => `${f.url.replace(/^\/ledgers\//, '')} ${f.bytes} B`).join(', ');
  await searchContext.close();

  lines.push(
    '## Website (bench/site.bench.ts)',
    '',
    'Debian Chromium (headless) against `timeseal serve` and the built site.',
    '',
    '| measure | result | goal |',
    '|---|---|---|',
    `| \`sha256sum\` on a 1 GiB file (page cache warm) | ${sha256sumSeconds.toFixed(2)} s (${(1024 / sha256sumSeconds).toFixed(0)} MiB/s) | — |`,
    `| /verify hashing the same file (Web Worker, hash-wasm, 8 MiB slices) | ${browserSeconds.toFixed(2)} s (${(1024 / browserSeconds).toFixed(0)} MiB/s) | — |`,
    `| throughput ratio browser / \`sha256sum\` | **${ratio.toFixed(2)}** | ≥ 0.25 |`,
    `| peak memory growth of the browser's processes while hashing | **${growthMb.toFixed(0)} MB** (RSS, ${(baseline / 2 ** 20).toFixed(0)} MB before) | ≤ 256 MB |`,
    `| bytes transferred by one verified search, 10,000,000-hash archive | **${(transferred / 1024).toFixed(1)} KB** in ${fetched.length} requests | ≤ 64 KB |`,
    '',
    `Search requests: ${bodies}.`,
  );
} finally {
  await browser.close();
  await server.stop();
  removeProject(project);
  fs.rmSync(tmp, { recursive: true, force: true });
}
process.stdout.write(`${lines.join('\n')}\n`);
