// The storage engines and the topology (store/README.md, deploy/), as ratios within one run (this machine's speed drifts):
// 1. Beta-API durable submissions per second, one `timeseal serve` node on SQLite and one on PostgreSQL (a
//    private cluster, test/support/postgres.ts), and nginx (deploy/nginx/timeseal.conf, test/support/nginx.ts)
//    in front of two PostgreSQL nodes; the three take turns, round after round; medians. Every acknowledged
//    submission is then counted in its database.
// 2. One day of BENCH_DAY_HASHES (1,000,000) hashes imported into each engine and built with
//    `timeseal ledger build` (time, peak RSS), and the two archives compared byte for byte.
// Prints a Markdown section. BENCH_SECONDS (5) and BENCH_ROUNDS (3) set the load runs.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { treeDiff, treeDigest } from '../test/cli/helpers.ts';
import { startNginx } from '../test/support/nginx.ts';
import { startPostgres } from '../test/support/postgres.ts';
import { folderBytes, mb, run, timed, TIMESEAL } from './common.ts';
import { load, median, stop, waitForUrl, type AutocannonResult } from './load.ts';

const CONNECTIONS = 32;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DAY_HASHES = Number(process.env.BENCH_DAY_HASHES ?? 1_000_000);
const DAY = '2025-11-02';
const log = (m: string) => process.stderr.write(`store.bench: ${m}\n`);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-store-'));
const database = await startPostgres();
const children: ReturnType<typeof spawn>[] = [];
try {
  const project = (name: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
    TIMESEAL_DB: path.join(dir, name, 'data/timeseal.db'),
    TIMESEAL_ARCHIVE: path.join(dir, name, 'ledgers'),
    TIMESEAL_KEYS: path.join(dir, 'keys'),
    TIMESEAL_PRIVATE_KEYS: path.join(dir, 'private-keys'),
    TIMESEAL_SITE: path.join(dir, 'no-site'),
    OTS_CALENDARS: 'http://127.0.0.1:9/,http://127.0.0.1:7/',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_FORMAT: 'json',
    ...extra,
  });
  run(['keys', 'init'], dir, project('sqlite'));
  const pgEnv = (name: string) => project(name, { TIMESEAL_DATABASE_URL: database.url });

  // 1. Submissions.
  const serve = async (env: NodeJS.ProcessEnv): Promise<string> => {
    const child = spawn(TIMESEAL, ['serve'], {
      cwd: dir,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    children.push(child);
    return waitForUrl(child);
  };
  const sqliteUrl = await serve(project('sqlite'));
  const pgUrl = await serve(pgEnv('pg-1'));
  const pg2Url = await serve(pgEnv('pg-2'));
  const nginx = await startNginx(dir, [new URL(pgUrl).host, new URL(pg2Url).host]);
  const targets = [
    ['SQLite, one node', sqliteUrl],
    ['PostgreSQL, one node', pgUrl],
    ['nginx → two PostgreSQL nodes', nginx.url],
  ] as const;
  const runs = new Map<string, AutocannonResult[]>(targets.map(([name]) => [name, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, url] of targets) {
      log(`round ${round}/${ROUNDS}: ${name}, ${CONNECTIONS} connections, ${SECONDS} s`);
      runs.get(name)!.push(await load(url, '/api/v1/beta/timestamp', CONNECTIONS, SECONDS));
    }
  }
  await nginx.stop();
  for (const child of children.splice(0)) await stop(child);
  const acknowledged = (name: (typeof targets)[number][0]) => runs.get(name)!.reduce((n, r) => n + r['2xx'], 0);
  const failures = (name: (typeof targets)[number][0]) =>
    runs.get(name)!.reduce((n, r) => n + r.errors + r.timeouts + r.non2xx, 0);
  const sqliteRows = (() => {
    const db = new Database(project('sqlite').TIMESEAL_DB!, { readonly: true });
    try {
      return (db.prepare("SELECT COUNT(*) AS n FROM submissions WHERE source = 'api_beta'").get() as { n: number }).n;
    } finally {
      db.close();
    }
  })();
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const pgRows = Number(
    (await client.query<{ n: string }>("SELECT COUNT(*) AS n FROM submissions WHERE source = 'api_beta'")).rows[0]!.n,
  );
  await client.query('TRUNCATE submissions');
  await client.end();
  const medians = new Map(targets.map(([name]) => [name, median(runs.get(name)!)]));
  const rate = (name: (typeof targets)[number][0]) => medians.get(name)!.requests.average;
  const row = (name: (typeof targets)[number][0]) => {
    const r = medians.get(name)!;
    return `| ${name} | ${Math.round(r.requests.average).toLocaleString('en-US')} | ${r.latency.p99} ms | ${failures(name)} | ${runs
      .get(name)!
      .map((x) => Math.round(x.requests.average).toLocaleString('en-US'))
      .join(', ')} |`;
  };

  // 2. A day built from each engine.
  log(`importing ${DAY_HASHES.toLocaleString('en-US')} hashes into each engine`);
  const hashFile = path.join(dir, 'hashes.txt');
  const out = fs.openSync(hashFile, 'w');
  for (let done = 0; done < DAY_HASHES; done += 100_000) {
    const n = Math.min(100_000, DAY_HASHES - done);
    const raw = crypto.randomBytes(32 * n).toString('hex');
    let text = '';
    for (let i = 0; i < n; i++) text += `${raw.slice(64 * i, 64 * i + 64)}\n`;
    fs.writeSync(out, text);
  }
  fs.closeSync(out);
  const at = { TIMESEAL_NOW: `${DAY}T12:00:00Z` };
  const buildAt = { TIMESEAL_NOW: '2025-11-03T00:05:00Z' };
  const importTime: Record<string, number> = {};
  for (const [name, env] of [
    ['SQLite', project('day-sqlite')],
    ['PostgreSQL', pgEnv('day-pg')],
  ] as const) {
    importTime[name] = timed(['import', hashFile], dir, { ...env, ...at }).seconds;
  }
  // Alternating builds on fresh archives of the same rows: two builds per engine, the faster of each counted.
  const builds: Record<string, { seconds: number; maxRssMb: number }[]> = { SQLite: [], PostgreSQL: [] };
  for (let round = 0; round < 2; round++) {
    for (const [name, env] of [
      ['SQLite', project('day-sqlite')],
      ['PostgreSQL', pgEnv('day-pg')],
    ] as const) {
      const archive = env.TIMESEAL_ARCHIVE!;
      fs.rmSync(archive, { recursive: true, force: true });
      log(`building the day from ${name} (round ${round + 1})`);
      const m = timed(['ledger', 'build'], dir, { ...env, ...buildAt });
      builds[name]!.push({ seconds: m.seconds, maxRssMb: m.maxRssMb });
    }
  }
  const differences = treeDiff(
    treeDigest(project('day-sqlite').TIMESEAL_ARCHIVE!),
    treeDigest(pgEnv('day-pg').TIMESEAL_ARCHIVE!),
  );
  const same = differences.length === 0;
  const written = folderBytes(project('day-sqlite').TIMESEAL_ARCHIVE!);
  const best = (name: string) => builds[name]!.reduce((a, b) => (b.seconds < a.seconds ? b : a));
  const buildRatio = best('PostgreSQL').seconds / best('SQLite').seconds;

  const lines = [
    '## Storage engines and topology (`node bench/store.bench.ts`)',
    '',
    `Beta-API submissions (\`POST /api/v1/beta/timestamp\`, each answered after its row is durably committed), autocannon ${CONNECTIONS} connections, ${SECONDS} s a run, ${ROUNDS} rounds in which the three targets take turns; loopback, the servers, PostgreSQL, nginx and autocannon share this machine's ${os.cpus().length} cores. PostgreSQL is a private cluster with fsync and synchronous_commit on (test/support/postgres.ts), default settings otherwise; each node keeps up to 10 connections (TIMESEAL_DATABASE_POOL).`,
    '',
    '| target | req/s (median run) | p99 latency | errors + non-2xx (all runs) | every run, req/s |',
    '|---|---|---|---|---|',
    ...targets.map(([name]) => row(name)),
    '',
    `- PostgreSQL ÷ SQLite, one node each: **${(rate('PostgreSQL, one node') / rate('SQLite, one node')).toFixed(2)}** (goal ≥ 0.5).`,
    `- nginx with two PostgreSQL nodes ÷ one PostgreSQL node: ${(rate('nginx → two PostgreSQL nodes') / rate('PostgreSQL, one node')).toFixed(2)}. On ${os.cpus().length} cores the two nodes, PostgreSQL, nginx and the load generator compete for the same CPUs: this shows the proxy's overhead, not how the service scales with machines.`,
    `- Rows stored: SQLite ${sqliteRows.toLocaleString('en-US')} for ${acknowledged('SQLite, one node').toLocaleString('en-US')} acknowledged; PostgreSQL ${pgRows.toLocaleString('en-US')} for ${(acknowledged('PostgreSQL, one node') + acknowledged('nginx → two PostgreSQL nodes')).toLocaleString('en-US')} acknowledged (${sqliteRows >= acknowledged('SQLite, one node') && pgRows >= acknowledged('PostgreSQL, one node') + acknowledged('nginx → two PostgreSQL nodes') ? 'every acknowledged submission is stored' : 'MISSING ROWS'}).`,
    '',
    `One day of ${DAY_HASHES.toLocaleString('en-US')} random hashes, \`timeseal import\` then \`timeseal ledger build\` on an empty archive, built twice from each engine in turns (the faster run of each counted):`,
    '',
    '| engine | import | build (each run) | peak RSS of the build |',
    '|---|---|---|---|',
    ...(['SQLite', 'PostgreSQL'] as const).map(
      (name) =>
        `| ${name} | ${importTime[name]!.toFixed(1)} s | ${builds[name]!.map((b) => `${b.seconds.toFixed(2)} s`).join(', ')} | ${Math.round(Math.max(...builds[name]!.map((b) => b.maxRssMb)))} MB |`,
    ),
    '',
    `- Build from PostgreSQL ÷ from SQLite: **${buildRatio.toFixed(2)}** (goal ≤ 1.5). The two archives are ${same ? 'byte-identical' : `DIFFERENT (${differences.slice(0, 5).join('; ')})`} (${written.files.toLocaleString('en-US')} files, ${mb(written.bytes)}).`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  for (const child of children) child.kill('SIGTERM');
  await database.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
