// Ingest throughput (goal: ≥ 0.6 of a bare Fastify route; docs/BENCHMARKS.md): beta-API submissions per second against the real server (`timeseal serve`,
// production mode, loopback), divided by a bare Fastify JSON route measured in the same run on the same
// machine. autocannon, 32 connections, 8 s runs, 5 rounds taking turns (this VM's speed changes by half from
// minute to minute); every submission is a unique hash. Goal: ratio ≥ 0.6 with 0 errors. Afterwards the
// database must hold a row for every 201 (acknowledged = committed).
// Prints a Markdown section on stdout; progress on stderr.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { benchProjectEnv, keysInit, machine, ROOT, TIMESEAL } from './common.ts';
import { load as loadWith, median, stop, waitForUrl, type AutocannonResult } from './load.ts';

const CONNECTIONS = 32;
const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const load = (url: string, requestPath: string) => loadWith(url, requestPath, CONNECTIONS, DURATION);

const BARE_SERVER = `
import Fastify from 'fastify';
const app = Fastify();
app.post('/json', async (request) => ({ ok: true, echo: request.body.hash }));
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write('Timeseal listening on http://127.0.0.1:' + app.server.address().port + '\\n');
`;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-ingest-'));
try {
  const env = benchProjectEnv(dir);
  keysInit(dir, env);

  // Both servers run side by side (an idle one costs nothing) and the targets take turns, ROUNDS times, so a
  // slow minute of the machine hits both; the ratio is of the medians.
  const bare = spawn(process.execPath, ['--input-type=module', '-e', BARE_SERVER], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const server = spawn(TIMESEAL, ['serve'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'ignore'] });
  const [bareUrl, serverUrl] = await Promise.all([waitForUrl(bare), waitForUrl(server)]);
  const bareRuns: AutocannonResult[] = [];
  const betaRuns: AutocannonResult[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    process.stderr.write(
      `bench ingest: round ${round}/${ROUNDS}: bare Fastify JSON route, then POST /api/v1/beta/timestamp, ${CONNECTIONS} connections, ${DURATION} s each\n`,
    );
    bareRuns.push(await load(bareUrl, '/json'));
    betaRuns.push(await load(serverUrl, '/api/v1/beta/timestamp'));
  }
  await Promise.all([stop(bare), stop(server)]);

  const bareResult = median(bareRuns);
  const betaResult = median(betaRuns);
  const acknowledged = betaRuns.reduce((n, r) => n + r['2xx'], 0);
  const failures = (runs: AutocannonResult[]) => runs.reduce((n, r) => n + r.errors + r.timeouts + r.non2xx, 0);

  const db = new Database(env.TIMESEAL_DB, { readonly: true });
  const rows = (db.prepare("SELECT COUNT(*) AS n FROM submissions WHERE source = 'api_beta'").get() as { n: number }).n;
  db.close();

  const ratio = betaResult.requests.average / bareResult.requests.average;
  const cpu = /model name\s*:\s*(.*)/.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
  const nproc = spawnSync('nproc', { encoding: 'utf8' }).stdout.trim();
  const line = (name: string, r: AutocannonResult) =>
    `| ${name} | ${Math.round(r.requests.average).toLocaleString('en-US')} | ${r.latency.p99} ms | ${r.errors + r.timeouts} | ${r.non2xx} | ${r['2xx'].toLocaleString('en-US')} |`;
  const out = [
    '## Ingest: beta API submissions vs a bare Fastify route',
    '',
    `Machine: nproc ${nproc}, ${cpu}, Node ${process.version} (${machine()}). autocannon ${CONNECTIONS} connections, ${DURATION} s per run, ${ROUNDS} rounds taking turns, loopback; the servers and autocannon share the machine. Each row is the median run.`,
    '',
    '| target (median run) | req/s (mean) | p99 latency | errors | non-2xx | 2xx answers |',
    '|---|---|---|---|---|---|',
    line('bare Fastify JSON route (separate process)', bareResult),
    line('`POST /api/v1/beta/timestamp` (`timeseal serve`)', betaResult),
    '',
    `Every run, req/s: bare ${bareRuns.map((r) => Math.round(r.requests.average).toLocaleString('en-US')).join(', ')}; beta ${betaRuns.map((r) => Math.round(r.requests.average).toLocaleString('en-US')).join(', ')}. Errors, timeouts and non-2xx over all runs: bare ${failures(bareRuns)}, beta ${failures(betaRuns)}.`,
    '',
    `Ratio beta / bare: **${ratio.toFixed(2)}** (goal ≥ 0.6). Rows committed: ${rows.toLocaleString('en-US')} for ${acknowledged.toLocaleString('en-US')} answers 201 over all runs (${rows >= acknowledged ? 'every acknowledged submission is stored' : 'MISSING ROWS'}); each answer waits for an fdatasync of the WAL that began after its row was committed.`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
