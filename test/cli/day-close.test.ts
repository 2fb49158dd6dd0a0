// A 2xx is a promise even when a node's clock lags the builder's or an insert stalls across midnight: the
// ledger build closes the days it reads inside the database (Store.submissions.closeThrough) before it reads
// them, and every insert of a closed day is refused in its own transaction (503, never acknowledged). Real
// processes on both engines: a `timeseal serve` node whose clock is still on the day being built, and
// `timeseal ledger build` with the next day's clock, on one SQLite file or one PostgreSQL database.
//
// - A lagging node: 8 connections submit to it while the build runs; every 201 is in the day's ledger.
// - An insert held by a lock: another connection holds the write lock (SQLite: BEGIN IMMEDIATE on the file;
//   PostgreSQL: LOCK TABLE submissions IN EXCLUSIVE MODE) while submissions and the build wait on it; when it
//   is released, every submission answered 201 is in the ledger. (Before the close existed, the build read
//   the day without waiting and the held submissions were answered 201 and published nowhere.)
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  childEnv,
  projectEnv,
  randomHash,
  removeTempDirs,
  startServer,
  tempDir,
  type SpawnedServer,
} from '../../ingest/test/fixture.ts';
import { createDatabase, postgresForSuite } from '../support/postgres.ts';
import { BIN, ROOT } from './helpers.ts';
import type { QueueStats } from '../../ingest/routes/status.ts';
import type { ErrorAnswer } from '../../ingest/schemas.ts';
import { until } from '../support/until.ts';

const DAY = '2025-11-02';
/** The lagging node's clock: still on DAY. */
const NODE_NOW = `${DAY}T23:59:30.000Z`;
/** The builder's clock: DAY is finished. */
const BUILD_NOW = '2025-11-03T00:01:00.000Z';

const database = postgresForSuite();
const nodes: SpawnedServer[] = [];

afterAll(async () => {
  for (const node of nodes) {
    if (node.child.exitCode === null && node.child.signalCode === null) {
      node.child.kill('SIGTERM');
      await node.exited;
    }
  }
  removeTempDirs();
});

/** A new database on the suite's PostgreSQL; its URL. */
const newDatabase = (): Promise<string> =>
  createDatabase(database.url, `day_close_${crypto.randomBytes(4).toString('hex')}`);

interface Project {
  dir: string;
  env: Record<string, string>;
  /** The PostgreSQL database's URL, or undefined on SQLite. */
  url: string | undefined;
}

async function project(engine: 'sqlite' | 'postgres', label: string): Promise<Project> {
  const dir = tempDir(`day-close-${engine}-${label}`);
  const url = engine === 'postgres' ? await newDatabase() : undefined;
  const env = projectEnv(dir, { LOG_FORMAT: 'json', ...(url ? { TIMESEAL_DATABASE_URL: url } : {}) });
  const keys = await timeseal({ dir, env, url }, ['keys', 'init'], NODE_NOW);
  expect(keys.code, keys.stderr).toBe(0);
  return { dir, env, url };
}

/** Runs the CLI as its own process (asynchronously: the test goes on submitting meanwhile). */
function timeseal(
  p: Project,
  args: string[],
  now: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(BIN, args, {
      cwd: p.dir,
      env: childEnv({ ...p.env, TIMESEAL_NOW: now }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts the lagging node and waits for its schedule's catch-up at start to end (its last step is 'tsa stamp'),
 * so that the test's own build never meets the catch-up's archive lock. */
async function startNode(p: Project): Promise<SpawnedServer> {
  const node = await startServer(p.dir, { ...p.env, TIMESEAL_NOW: NODE_NOW });
  nodes.push(node);
  await until("the node's catch-up at start", 30_000, () =>
    /"msg":"scheduled tsa stamp (done|failed)/.test(node.stderr()),
  );
  return node;
}

async function submit(node: SpawnedServer, hash: string): Promise<number> {
  const res = await fetch(`${node.url}/api/v1/beta/timestamp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ hash }),
  });
  await res.arrayBuffer();
  return res.status;
}

function ledgerHashes(p: Project): Set<string> {
  const ledger = JSON.parse(fs.readFileSync(path.join(p.dir, 'ledgers', `${DAY}.json`), 'utf8')) as {
    entries: Array<[string, string]>;
  };
  return new Set(ledger.entries.map((e) => e[0]));
}

/** Holds the database's write lock until release() (SQLite: BEGIN IMMEDIATE in another process; PostgreSQL: an
 * EXCLUSIVE lock on submissions, which blocks inserts but not reads, like a stalled vacuum or migration). */
async function holdWriteLock(p: Project): Promise<{ release(): Promise<void> }> {
  if (p.url !== undefined) {
    const client = new pg.Client({ connectionString: p.url });
    await client.connect();
    await client.query('BEGIN');
    await client.query('LOCK TABLE submissions IN EXCLUSIVE MODE');
    return {
      release: async () => {
        await client.query('COMMIT');
        await client.end();
      },
    };
  }
  const script = `const D = require('better-sqlite3'); const db = new D(process.argv[1]); db.exec('BEGIN IMMEDIATE'); console.log('locked'); process.stdin.once('data', () => { db.exec('COMMIT'); db.close(); process.exit(0); });`;
  const child = spawn(process.execPath, ['-e', script, p.env.TIMESEAL_DB!], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the lock holder exited (${code})`)));
  });
  return {
    release: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.stdin.write('go\n');
      await exited;
    },
  };
}

/** The statements of the project's PostgreSQL database that wait for a lock. */
async function waitingForLocks(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (
      await client.query<{ query: string }>(
        "SELECT query FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      )
    ).rows.map((r) => r.query);
  } finally {
    await client.end();
  }
}

describe.each(['sqlite', 'postgres'] as const)('%s', (engine) => {
  it('a node whose clock lags the builder: 8 connections submit while the day is built; every 201 is in the ledger, the rest are 503', async () => {
    const p = await project(engine, 'lagging');
    const node = await startNode(p);
    const acknowledged: string[] = [];
    const statuses = new Map<number, number>();
    let duringBuild = 0;
    let building = false;
    let stop = false;
    const worker = async (): Promise<void> => {
      while (!stop) {
        const hash = randomHash();
        const status = await submit(node, hash);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status === 201) {
          acknowledged.push(hash);
          if (building) duringBuild++;
        }
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    await until('200 acknowledged submissions', 30_000, () => acknowledged.length >= 200);
    building = true;
    const build = await timeseal(p, ['ledger', 'build'], BUILD_NOW);
    building = false;
    expect(build.code, build.stderr).toBe(0);
    // Submissions go on after the build: the node's clock is still on the built day, so they are refused.
    const refusedBefore = statuses.get(503) ?? 0;
    await until('50 more refusals after the build', 30_000, () => (statuses.get(503) ?? 0) >= refusedBefore + 50);
    stop = true;
    await Promise.all(workers);
    const inLedger = ledgerHashes(p);
    expect(acknowledged.filter((h) => !inLedger.has(h))).toEqual([]);
    expect(inLedger.size).toBe(acknowledged.length);
    expect([...statuses.keys()].sort()).toEqual([201, 503]);
    process.stderr.write(
      `day-close ${engine} lagging node: ${acknowledged.length} acknowledged (${duringBuild} while the build ran), ${statuses.get(503)} refused, 0 missing\n`,
    );
    const verify = await timeseal(p, ['verify'], BUILD_NOW);
    expect(verify.code, verify.stderr).toBe(0);
  }, 120_000);

  it('submissions held by a lock across midnight: the build waits for them, and every 201 is in the ledger', async () => {
    const p = await project(engine, 'lock');
    const node = await startNode(p);
    const first = Array.from({ length: 3 }, randomHash);
    for (const hash of first) expect(await submit(node, hash)).toBe(201);
    const lock = await holdWriteLock(p);
    const held = Array.from({ length: 5 }, randomHash);
    const answers = held.map((hash) => submit(node, hash));
    let buildEnded = false;
    const build = timeseal(p, ['ledger', 'build'], BUILD_NOW).finally(() => (buildEnded = true));
    if (p.url !== undefined) {
      // The inserts and the build's close both wait on the lock (a build that does not wait ends meanwhile).
      await until('the inserts and the close to wait on the lock', 20_000, async () => {
        const waiting = await waitingForLocks(p.url!);
        return (
          buildEnded ||
          (waiting.some((q) => q.startsWith('INSERT INTO submissions')) &&
            waiting.some((q) => q.startsWith('LOCK TABLE submissions')))
        );
      });
    } else {
      // SQLite shows no waiters; the build reaches its close within this time (both wait up to 5 s).
      await new Promise((r) => setTimeout(r, 1_000));
    }
    await lock.release();
    const statuses = await Promise.all(answers);
    const built = await build;
    expect(built.code, built.stderr).toBe(0);
    const inLedger = ledgerHashes(p);
    const acknowledged = [...first, ...held.filter((_, i) => statuses[i] === 201)];
    expect(acknowledged.filter((h) => !inLedger.has(h))).toEqual([]);
    expect(inLedger.size).toBe(acknowledged.length);
    expect(statuses.every((s) => s === 201 || s === 503)).toBe(true);
    process.stderr.write(
      `day-close ${engine} held by a lock: ${statuses.filter((s) => s === 201).length} of 5 held submissions acknowledged, all published\n`,
    );
  }, 120_000);
});

describe("a node's clock against the database's (PostgreSQL)", () => {
  it("a node whose clock is 90 s behind the database server's refuses submissions (503, nothing stored) and says why; a node that agrees accepts them", async () => {
    const p = await project('postgres', 'skew');
    // Without TIMESEAL_NOW: the system clock, which libfaketime (Debian's faketime) moves back 90 s for the skewed
    // node alone. Preloaded into the node itself, not run through the faketime command, which would stay between
    // the test and the node and not pass it SIGTERM.
    const libfaketime = fs.globSync('/usr/lib/*/faketime/libfaketime.so.1')[0];
    expect(libfaketime, 'libfaketime (Debian package faketime)').toBeDefined();
    const skewed = await startServer(p.dir, { ...p.env, LD_PRELOAD: libfaketime!, FAKETIME: '-90s' });
    nodes.push(skewed);
    const good = await startServer(p.dir, p.env);
    nodes.push(good);
    const hash = randomHash();
    const res = await fetch(`${skewed.url}/api/v1/beta/timestamp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hash }),
    });
    expect(res.status).toBe(503);
    const body = (await res.json()) as ErrorAnswer;
    expect(body.error).toMatch(
      /^The server's clock is (8\d|9\d) s behind its database's; submissions are paused until it is corrected\. Nothing was stored\.$/,
    );
    const site = await fetch(`${skewed.url}/api/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hash }),
    });
    expect(site.status).toBe(503);
    const stats = (await (await fetch(`${skewed.url}/api/queue-stats.php`)).json()) as QueueStats;
    expect(stats.submissionsOpen).toBe(false);
    expect(stats.problem).toMatch(/clock is \d+ s behind its database's/);
    expect(stats.queueSize).toBe(0);
    // The JSON log is buffered and written at least every second (runtime/logger.ts): wait for the line.
    await expect.poll(() => skewed.stderr()).toMatch(/CLOCK SKEW: The server's clock is \d+ s behind its database's/);
    expect(await submit(good, hash)).toBe(201);
    const goodStats = (await (await fetch(`${good.url}/api/queue-stats.php`)).json()) as QueueStats;
    expect(goodStats).toMatchObject({ submissionsOpen: true, queueSize: 1 });
  }, 120_000);
});
