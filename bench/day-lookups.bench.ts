// Lookups on a day of a million queued rows (docs/API.md `GET /api/status/<hash>` and a batch's "already"
// check, Store.submissions.queued and submittedOn), on SQLite and PostgreSQL, against one `timeseal serve`
// on loopback. For each engine, BENCH_DAY_ROWS (1,000,000) rows are queued for today in one statement (the
// insert's time is the bulk insert path's cost), then measured:
// - one status lookup of a queued hash and one batch of one fresh hash, each the median of 21 in a row;
// - beta submissions (`POST /api/v1/beta/timestamp`, fresh random hashes) from 4 connections for BENCH_SECONDS (15):
//   alone (BENCH_ROUNDS rounds, 3, before and after taking turns), while 8 connections ask `GET /api/status/<one hash>`, and while 8 connections send 1-hash batches
//   (autocannon; the answers counted by status, the submissions' latency percentiles).
// PostgreSQL's statistics are left as the insert leaves them (no ANALYZE): on a live server today's rows are
// always newer than the statistics.
// With BENCH_BASELINE=<a checkout of an earlier commit, with node_modules> the same is measured on its code in
// the same run (its server, its schema, its own database), engine by engine: both servers are started, then
// each phase runs on one and the other in turn, so "before" and "after" share the machine's minute. The status lookup's per-address budget is raised for the measurement (STATUS_LOOKUP_RATE) so that
// the lookups' own cost is what is measured. Prints a Markdown section on stdout; progress on stderr.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { benchProjectEnv, gitCommit, ROOT } from './common.ts';
import { load, loadRequests, stop, waitForUrl, type AutocannonResult } from './load.ts';
import { createDatabase, startPostgres } from '../test/support/postgres.ts';

const DAY_ROWS = Number(process.env.BENCH_DAY_ROWS ?? 1_000_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BASELINE = process.env.BENCH_BASELINE;
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Array<'sqlite' | 'postgres'>;
const TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100);
const log = (m: string) => process.stderr.write(`bench day-lookups: ${m}\n`);
const fresh = (): string => crypto.randomBytes(32).toString('hex');
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Code {
  label: string;
  root: string;
}
interface Row {
  engine: string;
  code: string;
  insertMs: number;
  statusMs: number;
  batchMs: number;
  alone: AutocannonResult[];
  /** The server's CPU time (user + system, /proc) per 201 in each round alone, µs. */
  aloneCpu: number[];
  withStatus: { beta: AutocannonResult; side: AutocannonResult };
  withBatches: { beta: AutocannonResult; side: AutocannonResult };
}

/** One code's server on its own day of DAY_ROWS rows, ready to measure. */
interface Prepared {
  code: Code;
  dir: string;
  server: ChildProcess;
  url: string;
  known: string;
  insertMs: number;
}

const codes: Code[] = [
  ...(BASELINE ? [{ label: `before (${gitCommit(BASELINE)})`, root: path.resolve(BASELINE) }] : []),
  { label: `after (${gitCommit(ROOT)})`, root: ROOT },
];

const postgres = ENGINES.includes('postgres') ? await startPostgres() : undefined;
const rows: Row[] = [];
try {
  for (const engine of ENGINES) rows.push(...(await measureEngine(engine)));
} finally {
  await postgres?.stop();
}

async function prepare(engine: 'sqlite' | 'postgres', code: Code): Promise<Prepared> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-lookups-'));
  const bin = path.join(code.root, 'cli/bin/timeseal');
  const env: NodeJS.ProcessEnv = benchProjectEnv(dir, { STATUS_LOOKUP_RATE: '1000000/second' });
  if (postgres && engine === 'postgres')
    env.TIMESEAL_DATABASE_URL = await createDatabase(postgres.url, `lookups_${crypto.randomBytes(4).toString('hex')}`);
  for (const args of [
    ['keys', 'init'],
    ['db', 'migrate'],
  ]) {
    const r = spawnSync(bin, args, { cwd: dir, env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${code.label}: timeseal ${args.join(' ')} failed: ${r.stderr}`);
  }
  const now = new Date();
  const known = fresh();
  log(
    `${engine}, ${code.label}: queueing ${DAY_ROWS.toLocaleString('en-US')} rows for ${now.toISOString().slice(0, 10)}`,
  );
  const insertMs = await queueRows(engine, env, known, now);
  const server = spawn(bin, ['serve'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'ignore'] });
  return { code, dir, server, url: await waitForUrl(server), known, insertMs };
}

/**
 * Both codes' servers prepared first, then each phase measured on each in turn, so "before" and "after" share
 * the machine's minute: the lookups, BENCH_ROUNDS rounds of beta submissions alone (the order rotating each
 * round; the median round is shown), then the two runs beside other traffic.
 */
async function measureEngine(engine: 'sqlite' | 'postgres'): Promise<Row[]> {
  const prepared: Prepared[] = [];
  try {
    for (const code of codes) prepared.push(await prepare(engine, code));
    const results = new Map<Prepared, Partial<Row>>(prepared.map((p) => [p, { alone: [], aloneCpu: [] }]));
    for (const p of prepared) {
      const status = async (): Promise<void> => {
        const res = await fetch(`${p.url}/api/status/${p.known}`);
        const body = (await res.json()) as { state?: string };
        if (res.status !== 200 || body.state !== 'queued') throw new Error(`status: ${res.status} ${body.state}`);
      };
      const batch = async (): Promise<void> => {
        const res = await fetch(`${p.url}/api/v1/beta/timestamps`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ hashes: [fresh()] }),
        });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`batch: ${res.status}`);
      };
      const timed = async (work: () => Promise<void>): Promise<number> => {
        const t = performance.now();
        await work();
        return performance.now() - t;
      };
      for (let i = 0; i < 5; i++) await Promise.all([status(), batch()]); // the routes' code compiled
      const statusTimes: number[] = [];
      const batchTimes: number[] = [];
      for (let i = 0; i < 21; i++) statusTimes.push(await timed(status));
      for (let i = 0; i < 21; i++) batchTimes.push(await timed(batch));
      Object.assign(results.get(p)!, { statusMs: median(statusTimes), batchMs: median(batchTimes) });
    }
    const beta = (p: Prepared) => load(p.url, '/api/v1/beta/timestamp', 4, SECONDS);
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < prepared.length; k++) {
        const p = prepared[(k + round) % prepared.length]!;
        log(`${engine}, ${p.code.label}: beta submissions alone, round ${round + 1}/${ROUNDS}`);
        const cpuBefore = cpuMs(p.server.pid!);
        const run = await beta(p);
        results.get(p)!.alone!.push(run);
        results.get(p)!.aloneCpu!.push(((cpuMs(p.server.pid!) - cpuBefore) * 1000) / Math.max(1, run['2xx']));
      }
    }
    for (const p of prepared) {
      log(`${engine}, ${p.code.label}: beta submissions while 8 connections look a hash up`);
      const [b1, s1] = await Promise.all([
        beta(p),
        loadRequests(p.url, 8, SECONDS, { method: 'GET', path: `/api/status/${p.known}` }),
      ]);
      log(`${engine}, ${p.code.label}: beta submissions while 8 connections send 1-hash batches`);
      const [b2, s2] = await Promise.all([
        beta(p),
        loadRequests(p.url, 8, SECONDS, {
          method: 'POST',
          path: '/api/v1/beta/timestamps',
          headers: { 'content-type': 'application/json' },
          setupRequest: (request) => ({ ...request, body: `{"hashes":["${fresh()}"]}` }),
        }),
      ]);
      Object.assign(results.get(p)!, { withStatus: { beta: b1, side: s1 }, withBatches: { beta: b2, side: s2 } });
    }
    return prepared.map((p) => ({
      ...(results.get(p) as Row),
      engine: engine === 'sqlite' ? 'SQLite' : 'PostgreSQL',
      code: p.code.label,
      insertMs: p.insertMs,
    }));
  } finally {
    for (const p of prepared) {
      await stop(p.server);
      fs.rmSync(p.dir, { recursive: true, force: true });
    }
  }
}

/** A process's CPU time so far (user + system, from /proc/<pid>/stat), ms. */
function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** Queues DAY_ROWS random hashes and `known` for `now`'s day in one statement; its wall time in ms. */
async function queueRows(
  engine: 'sqlite' | 'postgres',
  env: NodeJS.ProcessEnv,
  known: string,
  now: Date,
): Promise<number> {
  const at = now.toISOString();
  const day = at.slice(0, 10);
  const t = performance.now();
  if (engine === 'sqlite') {
    const db = new Database(env.TIMESEAL_DB!);
    try {
      db.pragma('busy_timeout = 5000');
      db.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO submissions (hash, submitted_at, ledger_date, file_name, source)
         SELECT lower(hex(randomblob(32))), ?, ?, NULL, 'import' FROM n`,
      ).run(DAY_ROWS, at, day);
      db.prepare(
        "INSERT INTO submissions (hash, submitted_at, ledger_date, file_name, source) VALUES (?, ?, ?, NULL, 'import')",
      ).run(known, at, day);
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      db.close();
    }
  } else {
    const client = new pg.Client({ connectionString: env.TIMESEAL_DATABASE_URL });
    await client.connect();
    try {
      await client.query(
        `INSERT INTO submissions (hash, submitted_at, ledger_date, file_name, source)
         SELECT md5(random()::text || i) || md5(random()::text || i), $2, $3, NULL, 'import' FROM generate_series(1, $1::int) AS i
         UNION ALL SELECT $4, $2, $3, NULL, 'import'`,
        [DAY_ROWS, at, day, known],
      );
    } finally {
      await client.end();
    }
  }
  return performance.now() - t;
}

const medianRun = (runs: AutocannonResult[]): AutocannonResult =>
  [...runs].sort((a, b) => a['2xx'] - b['2xx'])[Math.floor(runs.length / 2)]!;
const ms = (x: number) => (x < 10 ? `${x.toFixed(1)} ms` : `${Math.round(x).toLocaleString('en-US')} ms`);
const count = (n: number) => n.toLocaleString('en-US');
const answered = (r: AutocannonResult) =>
  `${count(r['2xx'])}${r.non2xx > 0 ? ` (+${count(r.non2xx)} non-2xx)` : ''}${r.errors > 0 ? ` (${count(r.errors)} errors)` : ''}`;
const beta = (r: AutocannonResult) => `${answered(r)} × 201, p50 ${ms(r.latency.p50)}, p99 ${ms(r.latency.p99)}`;

const out = [
  '## Lookups on a day of a million rows: status, "already", and the beta API beside them',
  '',
  `\`timeseal serve\` on loopback with ${count(DAY_ROWS)} rows queued for today (made in one statement: the "queue" column is its time, the bulk insert path). One status lookup (\`GET /api/status/<queued hash>\`) and one batch of one fresh hash: the median of 21 in a row. Then beta submissions (\`POST /api/v1/beta/timestamp\`, fresh random hashes) from 4 connections for ${SECONDS} s alone (${ROUNDS} rounds, the codes taking turns, every server already started on its own day), while 8 connections ask \`GET /api/status/<one hash>\`, and while 8 connections send 1-hash batches (autocannon in the same process as the measurement; PostgreSQL a private cluster on the same machine, fsync on). The status lookup's per-address budget was raised for the run. PostgreSQL's statistics are as the insert left them (no ANALYZE), as on a live server. Load average during the run: ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(', ')} (1, 5, 15 min, at its end) on ${os.cpus().length} cores.`,
  '',
  `| engine | code | queue 1 M rows | one status lookup | one 1-hash batch | beta alone (median of ${ROUNDS} rounds) | beta + 8 status lookups (lookups answered) | beta + 8 batch senders (batches answered) |`,
  '|---|---|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.engine} | ${r.code} | ${ms(r.insertMs)} | ${ms(r.statusMs)} | ${ms(r.batchMs)} | ${beta(medianRun(r.alone))} (rounds: ${r.alone.map((a) => count(a['2xx'])).join(', ')}; the server's CPU per 201: ${r.aloneCpu.map((c) => `${Math.round(c)} µs`).join(', ')}) | ${beta(r.withStatus.beta)} (${answered(r.withStatus.side)}) | ${beta(r.withBatches.beta)} (${answered(r.withBatches.side)}) |`,
  ),
];
process.stdout.write(`${out.join('\n')}\n`);
