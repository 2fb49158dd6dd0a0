// What a batch of the beta API (docs/API.md "POST /api/v1/beta/timestamps") costs the other requests of a
// `timeseal serve` (SQLite, loopback), on a day of BENCH_DAY_ROWS (1,000,000) queued rows (made in one statement):
// - the event loop's longest block while one batch of 1,000 fresh hashes with "receipt": true is answered, seen
//   from outside: one connection asks `GET /robots.txt` (an answer from memory) back to back meanwhile, and its
//   longest wait is the longest time the server did nothing else (its median wait when idle is given beside it);
//   BENCH_ROUNDS (3) batches, the median and the longest of their longest waits;
// - beta submissions (`POST /api/v1/beta/timestamp`, fresh random hashes) from 4 connections for BENCH_SECONDS
//   (10) while 8 connections send 1-hash batches, BENCH_ROUNDS rounds, the median round shown;
// - BENCH_CONCURRENT (64) connections sending batches of 1,000 with receipts, twice as many batches in all: the
//   wall time, and the server's resident memory before them and its peak (VmRSS, VmHWM of /proc/<pid>/status).
// With BENCH_BASELINE=<a checkout of an earlier commit, with node_modules> the same is measured on its code in
// the same run: both servers run, each on its own day, and each phase runs on one and the other in turn (the
// order rotating each round), so "before" and "after" share the machine's minute. Every batch's answer is checked
// (200, 1,000 accepted results with a receipt each). Prints a Markdown section on stdout; progress on stderr.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { benchProjectEnv, gitCommit, ROOT } from './common.ts';
import { load, loadRequests, stop, waitForUrl, type AutocannonResult } from './load.ts';

const DAY_ROWS = Number(process.env.BENCH_DAY_ROWS ?? 1_000_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BASELINE = process.env.BENCH_BASELINE;
const N = 1_000;
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 64);
const log = (m: string) => process.stderr.write(`bench batch-block: ${m}\n`);
const fresh = (): string => crypto.randomBytes(32).toString('hex');
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Code {
  label: string;
  root: string;
}
interface Server {
  code: Code;
  dir: string;
  child: ChildProcess;
  url: string;
}
interface Block {
  /** The batch's wall time, ms. */
  batchMs: number;
  /** The probe's longest wait while the batch ran, ms. */
  longestMs: number;
  /** The probe's median wait just before the batch, ms. */
  idleMs: number;
}
interface Crowd {
  /** The wall time of all 2 × CONCURRENT batches, ms. */
  ms: number;
  /** The server's resident memory before them and its peak since it started, MB. */
  rssBeforeMb: number;
  peakMb: number;
}
interface Result {
  blocks: Block[];
  beside: Array<{ beta: AutocannonResult; batches: AutocannonResult }>;
  crowd?: Crowd;
}

/** A figure of /proc/<pid>/status (VmRSS, VmHWM), MB. */
function procMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no ${field} for ${pid}`);
  return Number(m[1]) / 1024;
}

/** 2 × CONCURRENT batches of N with receipts from CONCURRENT connections at once. */
async function crowd(s: Server): Promise<Crowd> {
  const pid = s.child.pid!;
  const rssBeforeMb = procMb(pid, 'VmRSS');
  let sent = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENT }, async () => {
      while (sent < 2 * CONCURRENT) {
        sent++;
        await batch(s.url);
      }
    }),
  );
  return { ms: performance.now() - t, rssBeforeMb, peakMb: procMb(pid, 'VmHWM') };
}

const codes: Code[] = [
  ...(BASELINE ? [{ label: `before (${gitCommit(BASELINE)})`, root: path.resolve(BASELINE) }] : []),
  { label: `after (${gitCommit(ROOT)})`, root: ROOT },
];

/** A server of `code` in a project of its own, DAY_ROWS rows queued for today. */
async function start(code: Code): Promise<Server> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-block-'));
  const bin = path.join(code.root, 'cli/bin/timeseal');
  const env = benchProjectEnv(dir);
  for (const args of [
    ['keys', 'init'],
    ['db', 'migrate'],
  ]) {
    const r = spawnSync(bin, args, { cwd: dir, env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${code.label}: timeseal ${args.join(' ')} failed: ${r.stderr}`);
  }
  log(`${code.label}: queueing ${DAY_ROWS.toLocaleString('en-US')} rows for today`);
  const now = new Date().toISOString();
  const db = new Database(env.TIMESEAL_DB);
  try {
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO submissions (hash, submitted_at, ledger_date, file_name, source)
       SELECT lower(hex(randomblob(32))), ?, ?, NULL, 'import' FROM n`,
    ).run(DAY_ROWS, now, now.slice(0, 10));
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  const child = spawn(bin, ['serve'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'ignore'] });
  return { code, dir, child, url: await waitForUrl(child) };
}

/** One batch of N fresh hashes with receipts, its answer checked. */
async function batch(url: string): Promise<void> {
  const hashes = Array.from({ length: N }, fresh);
  const res = await fetch(`${url}/api/v1/beta/timestamps`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ hashes, receipt: true }),
  });
  const body = (await res.json()) as { results?: Array<{ hash: string; status: string; receipt?: string }> };
  const results = body.results ?? [];
  if (
    res.status !== 200 ||
    results.length !== N ||
    !results.every((r, i) => r.status === 'accepted' && r.hash === hashes[i] && typeof r.receipt === 'string')
  )
    throw new Error(`batch: ${res.status}, ${results.length} results`);
}

/** `GET /robots.txt` back to back on one connection until `done` is true; each wait, ms. */
async function probe(url: string, done: () => boolean): Promise<number[]> {
  const waits: number[] = [];
  while (!done()) {
    const t = performance.now();
    const res = await fetch(`${url}/robots.txt`);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`probe: ${res.status}`);
    waits.push(performance.now() - t);
  }
  return waits;
}

async function measureBlock(s: Server): Promise<Block> {
  let idleDone = false;
  const idle = probe(s.url, () => idleDone);
  await new Promise((resolve) => setTimeout(resolve, 500));
  idleDone = true;
  const idleWaits = await idle;
  let finished = false;
  const during = probe(s.url, () => finished);
  const t = performance.now();
  await batch(s.url);
  const batchMs = performance.now() - t;
  finished = true;
  const waits = await during;
  return { batchMs, longestMs: Math.max(...waits), idleMs: median(idleWaits) };
}

const servers: Server[] = [];
const results = new Map<Server, Result>();
try {
  for (const code of codes) servers.push(await start(code));
  for (const s of servers) {
    results.set(s, { blocks: [], beside: [] });
    for (let i = 0; i < 3; i++) await batch(s.url); // the routes' code compiled
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < servers.length; k++) {
      const s = servers[(k + round) % servers.length]!;
      log(`${s.code.label}: a batch of 1,000 with receipts beside a probe, round ${round + 1}/${ROUNDS}`);
      results.get(s)!.blocks.push(await measureBlock(s));
    }
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < servers.length; k++) {
      const s = servers[(k + round) % servers.length]!;
      log(`${s.code.label}: beta submissions beside 8 senders of 1-hash batches, round ${round + 1}/${ROUNDS}`);
      const [beta, batches] = await Promise.all([
        load(s.url, '/api/v1/beta/timestamp', 4, SECONDS),
        loadRequests(s.url, 8, SECONDS, {
          method: 'POST',
          path: '/api/v1/beta/timestamps',
          headers: { 'content-type': 'application/json' },
          setupRequest: (request) => ({ ...request, body: `{"hashes":["${fresh()}"]}` }),
        }),
      ]);
      results.get(s)!.beside.push({ beta, batches });
    }
  }
  for (const s of servers) {
    log(`${s.code.label}: ${2 * CONCURRENT} batches of 1,000 with receipts from ${CONCURRENT} connections`);
    results.get(s)!.crowd = await crowd(s);
  }
} finally {
  for (const s of servers) {
    await stop(s.child);
    fs.rmSync(s.dir, { recursive: true, force: true });
  }
}

const ms = (x: number) => (x < 10 ? `${x.toFixed(1)} ms` : `${Math.round(x).toLocaleString('en-US')} ms`);
const count = (n: number) => n.toLocaleString('en-US');
const answered = (r: AutocannonResult) =>
  `${count(r['2xx'])}${r.non2xx > 0 ? ` (+${count(r.non2xx)} non-2xx)` : ''}${r.errors > 0 ? ` (${count(r.errors)} errors)` : ''}`;
const out = [
  '## A batch of 1,000 with receipts beside other requests, and 1-hash batches beside beta submissions',
  '',
  `\`timeseal serve\` (SQLite) on loopback with ${count(DAY_ROWS)} rows queued for today. The longest block: while one batch of 1,000 fresh hashes with "receipt": true is answered, one connection asks \`GET /robots.txt\` back to back; its longest wait is the longest the server answered nothing else (${ROUNDS} batches each, the codes taking turns). Then beta submissions (\`POST /api/v1/beta/timestamp\`) from 4 connections for ${SECONDS} s while 8 connections send 1-hash batches (${ROUNDS} rounds, the codes taking turns). Load average at the end: ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(', ')} (1, 5, 15 min) on ${os.cpus().length} cores.`,
  '',
  `| code | a batch of 1,000 with receipts (wall, median) | the probe's longest wait during it (median; each batch) | the probe's median wait, idle | beta 201s beside 8 senders of 1-hash batches (median round; rounds) | batches answered (median round's) |`,
  '|---|---|---|---|---|---|',
  ...servers.map((s) => {
    const r = results.get(s)!;
    const longest = r.blocks.map((b) => b.longestMs);
    const rounds = r.beside.map((x) => x.beta['2xx']);
    const mid = [...r.beside].sort((a, b) => a.beta['2xx'] - b.beta['2xx'])[Math.floor(r.beside.length / 2)]!;
    return `| ${s.code.label} | ${ms(median(r.blocks.map((b) => b.batchMs)))} | ${ms(median(longest))} (${longest.map(ms).join(', ')}) | ${ms(median(r.blocks.map((b) => b.idleMs)))} | ${answered(mid.beta)}, p50 ${ms(mid.beta.latency.p50)}, p99 ${ms(mid.beta.latency.p99)} (${rounds.map(count).join(', ')}) | ${answered(mid.batches)} |`;
  }),
];
out.push(
  '',
  `${2 * CONCURRENT} batches of 1,000 fresh hashes with receipts from ${CONCURRENT} connections at once (each code in turn, after the phases above):`,
  '',
  '| code | wall time | batches a second | server RSS before | server peak RSS |',
  '|---|---|---|---|---|',
  ...servers.map((s) => {
    const c = results.get(s)!.crowd!;
    return `| ${s.code.label} | ${(c.ms / 1000).toFixed(1)} s | ${((2 * CONCURRENT) / (c.ms / 1000)).toFixed(1)} | ${Math.round(c.rssBeforeMb)} MB | ${Math.round(c.peakMb)} MB |`;
  }),
);
process.stdout.write(`${out.join('\n')}\n`);
