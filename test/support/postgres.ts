// A real PostgreSQL for tests (real parts, not mocks: "Tests start real PostgreSQL … from Debian's packages on
// loopback; nothing is mocked"). startPostgres() gives each caller its own empty database:
//
// - TIMESEAL_TEST_DATABASE_URL set (a server someone else runs): a fresh database `timeseal_test_<random>` is
//   created on it, and stop() drops it (WITH (FORCE), so open connections do not keep it alive).
// - Otherwise a private cluster from Debian's server binaries (/usr/lib/postgresql/<version>/bin, the newest
//   version present): initdb into a temporary folder, `postgres` listening on 127.0.0.1 at a free port and on
//   a unix socket in that folder, trust authentication (only this machine can reach it), fsync and
//   synchronous_commit on (their defaults, set explicitly: a 2xx from Timeseal must mean "on disk", and the
//   tests must exercise the same commit path as production). stop() shuts the server down by its pid
//   (`pg_ctl stop -m fast`, waits) and removes the folder; should the test process die first, the server gets
//   SIGINT from the kernel (parent-death signal) and stops too. Debian's own cluster (`main`, port 5432) is
//   never used.
//
// initdb and postgres refuse to run as root; as root the cluster runs as the unprivileged `postgres` user that
// Debian's package creates (a system user is created when it is missing), and the temporary folder is given to
// it. The child processes get that uid/gid straight from node:child_process (no su/runuser session).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { freePort, parentDeathSignal } from './servers.ts';

export interface TestPostgres {
  /** postgres://user@127.0.0.1:port/database, for `pg` (and anything taking a libpq URL). */
  url: string;
  /** Stops the private server (or drops the database on TIMESEAL_TEST_DATABASE_URL); safe to call twice. */
  stop(): Promise<void>;
  /** The private server's process id; undefined on TIMESEAL_TEST_DATABASE_URL. */
  pid?: number;
  /** The private cluster's temporary folder (data directory and socket); undefined on TIMESEAL_TEST_DATABASE_URL. */
  dir?: string;
}

const SUPERUSER = 'timeseal';
const DATABASE = 'timeseal';
/** How long the server may take to accept connections after it is started. */
const READY_TIMEOUT_MS = 30_000;

export async function startPostgres(): Promise<TestPostgres> {
  const external = process.env.TIMESEAL_TEST_DATABASE_URL;
  if (external !== undefined && external !== '') return freshDatabaseOn(external);
  return startPrivateCluster();
}

/**
 * For a test file: a database for the whole file, started before its tests and stopped after them.
 * `const db = postgresForSuite();` then `db.url` inside tests.
 */
export function postgresForSuite(): { readonly url: string } {
  let server: TestPostgres | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });
  return {
    get url(): string {
      if (server === undefined)
        throw new Error('postgresForSuite: the database is started in beforeAll; read url inside a test');
      return server.url;
    },
  };
}

/** Creates the database `name` on the server at `serverUrl` (a superuser's URL); the new database's URL. */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function freshDatabaseOn(serverUrl: string): Promise<TestPostgres> {
  const name = `timeseal_test_${crypto.randomBytes(6).toString('hex')}`;
  const url = await createDatabase(serverUrl, name);
  let stopped = false;
  return {
    url,
    async stop() {
      if (stopped) return;
      stopped = true;
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** The bin folder of the newest Debian PostgreSQL server package installed. */
export function postgresBinDir(): string {
  const base = '/usr/lib/postgresql';
  const versions = fs.existsSync(base)
    ? fs.readdirSync(base).filter((v) => /^\d+$/.test(v) && fs.existsSync(path.join(base, v, 'bin', 'initdb')))
    : [];
  if (versions.length === 0) {
    throw new Error(
      `no PostgreSQL server binaries in ${base}/*/bin (install Debian's postgresql: bash scripts/ensure-test-tools.sh)`,
    );
  }
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0]!;
  return path.join(base, newest, 'bin');
}

interface Account {
  uid: number;
  gid: number;
}

/** Who runs the cluster: ourselves, or (as root) the unprivileged `postgres` system user. */
function clusterAccount(): Account | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const lookup = (): Account | undefined => {
    const line = fs
      .readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('postgres:'));
    if (line === undefined) return undefined;
    const [, , uid, gid] = line.split(':');
    return { uid: Number(uid), gid: Number(gid) };
  };
  const existing = lookup();
  if (existing !== undefined) return existing;
  const r = spawnSync(
    'useradd',
    [
      '--system',
      '--user-group',
      '--no-create-home',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      'postgres',
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`useradd postgres failed (exit ${r.status}): ${r.stderr}`);
  const created = lookup();
  if (created === undefined) throw new Error('useradd postgres succeeded but /etc/passwd has no postgres line');
  return created;
}

function runChecked(command: string, args: string[], account: Account | undefined, env: NodeJS.ProcessEnv): void {
  const r = spawnSync(command, args, { encoding: 'utf8', env, ...(account ?? {}) });
  if (r.error) throw new Error(`${path.basename(command)}: ${r.error.message}`, { cause: r.error });
  if (r.status !== 0)
    throw new Error(`${path.basename(command)} ${args.join(' ')} failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
}

async function startPrivateCluster(): Promise<TestPostgres> {
  const bin = postgresBinDir();
  const account = clusterAccount();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-pg-'));
  const data = path.join(dir, 'data');
  // A minimal environment: no PG* variables of ours leak into the cluster, the locale is fixed.
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C', HOME: dir };
  try {
    if (account !== undefined) fs.chownSync(dir, account.uid, account.gid);
    // --no-sync only skips initdb's final flush of the template files (a crashed test machine loses this
    // throw-away cluster anyway); the server below runs with fsync on.
    runChecked(
      path.join(bin, 'initdb'),
      ['-D', data, '-U', SUPERUSER, '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'],
      account,
      env,
    );
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      try {
        const server = await startServer(bin, data, dir, port, account, env);
        const stop = onceOnly(() => stopServer(bin, data, dir, server, account, env));
        try {
          const admin = new pg.Client({ host: '127.0.0.1', port, user: SUPERUSER, database: 'postgres' });
          await admin.connect();
          try {
            await admin.query(`CREATE DATABASE ${DATABASE}`);
          } finally {
            await admin.end();
          }
        } catch (err) {
          await stop();
          throw err;
        }
        return { url: `postgres://${SUPERUSER}@127.0.0.1:${port}/${DATABASE}`, pid: server.pid, dir, stop };
      } catch (err) {
        if (attempt < 3 && err instanceof PortTakenError) continue;
        throw err;
      }
    }
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

class PortTakenError extends Error {}

interface RunningServer {
  pid: number;
  child: ChildProcess;
  exited: Promise<void>;
  /** Stops the exit guard: SIGINT (PostgreSQL's "fast shutdown") and removal of the folder if this process
   * exits without stop(). */
  removeExitGuard(): void;
}

/** Starts `postgres` as our child and resolves once its log says it accepts connections. */
function startServer(
  bin: string,
  data: string,
  dir: string,
  port: number,
  account: Account | undefined,
  env: NodeJS.ProcessEnv,
): Promise<RunningServer> {
  const args = [
    '-D',
    data,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    `unix_socket_directories=${dir}`,
    '-c',
    'fsync=on',
    '-c',
    'synchronous_commit=on',
    '-c',
    'max_connections=50',
  ];
  const [command, ...prefix] = [...parentDeathSignal('INT'), path.join(bin, 'postgres')];
  const child = spawn(command!, [...prefix, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'], ...(account ?? {}) });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const guard = (): void => {
    try {
      if (child.pid !== undefined) process.kill(child.pid, 'SIGINT');
    } catch {
      // Already gone.
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', guard);
  return new Promise((resolve, reject) => {
    let log = '';
    let ready = false;
    const timer = setTimeout(() => {
      guard();
      reject(new Error(`postgres did not accept connections within ${READY_TIMEOUT_MS} ms:\n${log}`));
    }, READY_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      process.off('exit', guard);
      reject(new Error(`postgres could not be started: ${err.message}`, { cause: err }));
    });
    const earlyExit = (code: number | null, signal: NodeJS.Signals | null): void => {
      clearTimeout(timer);
      process.off('exit', guard);
      const message = `postgres exited (${code ?? signal}) before accepting connections:\n${log}`;
      reject(/could not bind|Address already in use/.test(log) ? new PortTakenError(message) : new Error(message));
    };
    child.once('exit', earlyExit);
    child.stderr!.setEncoding('utf8');
    // Keeps draining stderr after start-up too, so a chatty server never blocks on a full pipe.
    child.stderr!.on('data', (chunk: string) => {
      if (ready) return;
      log += chunk;
      if (log.includes('database system is ready to accept connections')) {
        ready = true;
        clearTimeout(timer);
        child.off('exit', earlyExit);
        resolve({ pid: child.pid!, child, exited, removeExitGuard: () => process.off('exit', guard) });
      }
    });
  });
}

async function stopServer(
  bin: string,
  data: string,
  dir: string,
  server: RunningServer,
  account: Account | undefined,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  try {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      // pg_ctl reads the pid from postmaster.pid (our child's) and waits until the server is gone.
      const r = spawnSync(path.join(bin, 'pg_ctl'), ['stop', '-D', data, '-m', 'fast', '-w', '-t', '30'], {
        encoding: 'utf8',
        env,
        ...(account ?? {}),
      });
      if (r.status !== 0) process.kill(server.pid, 'SIGINT');
      await server.exited;
    }
  } finally {
    server.removeExitGuard();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function onceOnly(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= fn());
}
