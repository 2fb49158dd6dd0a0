// Benchmark of `timeseal import -` beside a server-like writer: `--lines` random hex lines piped from this process
// into the real CLI under GNU time (`/usr/bin/time -v`: wall, user + system CPU, peak RSS) in a fresh project,
// while a second process on the same database (SQLite's busy timeout of 5 s, as every connection of the engine)
// commits one row every 100 ms, as `timeseal serve` would. Reported: the import's figures, its process's memory
// from /proc/<pid>/status (VmHWM, and RssAnon, RssFile at that peak), the largest WAL and WAL index (-shm) seen,
// and the writer's longest wait for SQLite's write lock and how many of its inserts failed.
// Prints a Markdown section. Usage: node bench/import.bench.ts [--lines 2000000] [--bin CLI] [--dir DIR]
//   (CLI: the timeseal executable to measure, by default this checkout's; DIR: a new folder for the project, by
//   default one under the system's temporary folder, removed at the end).
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { benchProjectEnv, gitCommit, mb, TIMESEAL } from './common.ts';

const { values } = parseArgs({
  options: {
    lines: { type: 'string', default: '2000000' },
    bin: { type: 'string' },
    dir: { type: 'string' },
    writer: { type: 'string' },
  },
});

// The writer: `--writer DB` runs this file as the server-like process (started by the bench, below).
if (values.writer !== undefined) {
  const db = new Database(values.writer);
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = FULL');
  const insert = db.prepare(
    "INSERT INTO submissions (hash, submitted_at, ledger_date, file_name, source) VALUES (?, ?, ?, NULL, 'api_beta')",
  );
  let longest = 0;
  let failed = 0;
  let done = 0;
  let stopping = false;
  process.on('SIGTERM', () => (stopping = true));
  while (!stopping) {
    const at = new Date();
    const began = performance.now();
    try {
      db.transaction(() => insert.run(crypto.randomBytes(32).toString('hex'), at.toISOString(), '2025-11-02'))();
      done++;
    } catch {
      failed++;
    }
    longest = Math.max(longest, performance.now() - began);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  db.close();
  process.stdout.write(JSON.stringify({ longest, failed, done }));
  process.exit(0);
}

const LINES = Number(values.lines);
const bin = values.bin ?? TIMESEAL;
const dir = values.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-import-'));
fs.mkdirSync(path.join(dir, 'tmp'), { recursive: true });
fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
// SQLite's temporary files (the import's stage) on the project's disk; Node's compile cache where it stays warm,
// as an installation's does (a cold one loads Node's TypeScript stripper: 25-50 MB more of the import's RSS).
const env = benchProjectEnv(dir, {
  TMPDIR: path.join(dir, 'tmp'),
  NODE_COMPILE_CACHE: path.join(os.tmpdir(), 'node-compile-cache'),
  TIMESEAL_NOW: '2025-11-02T10:00:00Z',
});
const dbFile = env.TIMESEAL_DB;

// The database made and migrated first (an import of one line), so that the writer has its table from the start.
const seed = spawn(bin, ['import', '-'], { cwd: dir, env, stdio: ['pipe', 'ignore', 'inherit'] });
seed.stdin.end(`${'ab'.repeat(32)}\n`);
await new Promise((resolve) => seed.once('exit', resolve));

const writer = spawn(process.execPath, [path.join(import.meta.dirname, 'import.bench.ts'), '--writer', dbFile], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
let writerOut = '';
writer.stdout.on('data', (c: Buffer) => (writerOut += c.toString()));

const child = spawn('/usr/bin/time', ['-v', bin, 'import', '-'], { cwd: dir, env, stdio: ['pipe', 'pipe', 'pipe'] });
let stderr = '';
child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
child.stdout.resume();
const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));

// The import's process is /usr/bin/time's child (cli/bin/timeseal execs Node).
const status = { hwm: 0, anonAtPeak: 0, fileAtPeak: 0 };
let wal = 0;
let shm = 0;
const size = (file: string): number => {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
};
const sampler = setInterval(() => {
  wal = Math.max(wal, size(`${dbFile}-wal`));
  shm = Math.max(shm, size(`${dbFile}-shm`));
  try {
    const pid = fs.readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0];
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0);
    const rss = kb('VmRSS');
    if (rss >= status.hwm) Object.assign(status, { hwm: rss, anonAtPeak: kb('RssAnon'), fileAtPeak: kb('RssFile') });
  } catch {
    // not started yet, or gone
  }
}, 250);

const feed = child.stdin;
for (let i = 0; i < LINES; i += 16_384) {
  const n = Math.min(16_384, LINES - i);
  const hex = crypto.randomBytes(32 * n).toString('hex');
  const out = Buffer.allocUnsafe(65 * n);
  for (let k = 0; k < n; k++) {
    out.write(hex.slice(64 * k, 64 * k + 64), 65 * k, 'latin1');
    out[65 * k + 64] = 10;
  }
  if (!feed.write(out)) await new Promise((resolve) => feed.once('drain', resolve));
}
feed.end();
const code = await exited;
clearInterval(sampler);
writer.kill('SIGTERM');
await new Promise((resolve) => writer.once('exit', resolve));
if (code !== 0) throw new Error(`timeseal import failed (${code}):\n${stderr.slice(-4000)}`);
const field = (label: string): number => {
  const m = new RegExp(`${label}: (.*)`).exec(stderr)?.[1] ?? '';
  return m.includes(':') ? m.split(':').reduce((a, p) => a * 60 + Number(p), 0) : Number(m);
};
const wall = field('Elapsed \\(wall clock\\) time \\(h:mm:ss or m:ss\\)');
const user = field('User time \\(seconds\\)');
const system = field('System time \\(seconds\\)');
const peak = field('Maximum resident set size \\(kbytes\\)') / 1024;
const w = JSON.parse(writerOut) as { longest: number; failed: number; done: number };
if (values.dir === undefined) fs.rmSync(dir, { recursive: true, force: true });

const commit = bin === TIMESEAL ? gitCommit(path.join(import.meta.dirname, '..')) : bin;
process.stdout.write(
  [
    `## \`timeseal import -\` of ${LINES.toLocaleString('en-US')} lines beside a writer`,
    '',
    `${commit}, ${new Date().toISOString().slice(0, 16)} UTC, load ${os.loadavg()[0]!.toFixed(1)} at the end.`,
    '',
    '| wall | CPU (user + system) | per line | peak RSS (anon + file at the peak) | largest WAL, -shm | writer: longest wait, failed |',
    '|---|---|---|---|---|---|',
    `| ${wall.toFixed(1)} s | ${(user + system).toFixed(1)} s (${user.toFixed(1)} + ${system.toFixed(1)}) | ${((wall / LINES) * 1e6).toFixed(2)} µs (CPU ${(((user + system) / LINES) * 1e6).toFixed(2)}) | ${peak.toFixed(0)} MB (${(status.anonAtPeak / 1024).toFixed(0)} + ${(status.fileAtPeak / 1024).toFixed(0)}) | ${mb(wal)}, ${mb(shm)} | ${w.longest.toFixed(0)} ms, ${w.failed} of ${w.done + w.failed} |`,
    '',
  ].join('\n'),
);
