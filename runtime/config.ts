// The configuration every command shares, from the environment (runtime/settings.ts names every variable, with
// its default and its parser; docs/CONFIGURATION.md). A `.env` file in the working directory is read first if
// present; real environment variables win over it. Every setting has a working default for one machine.
import fs from 'node:fs';
import { parseEnv } from 'node:util';
import path from 'node:path';
import { setting } from './settings.ts';
import { UsageError } from './usage-error.ts';

export interface Config {
  /** The SQLite database file (TIMESEAL_DB), used when `databaseUrl` is not set. */
  db: string;
  /** TIMESEAL_DATABASE_URL (postgres://…): the PostgreSQL engine instead of SQLite (store/index.ts openStore). */
  databaseUrl?: string;
  /** TIMESEAL_DATABASE_POOL: PostgreSQL connections per process (default 10); each node holds up to this many. */
  databasePool: number;
  /** The archive folder: TIMESEAL_ARCHIVE, or for an s3:// archive the writer's working copy that every command
   * reads and writes as before (TIMESEAL_ARCHIVE_CACHE, default `archive-cache` beside the database). */
  archive: string;
  /** TIMESEAL_ARCHIVE=s3://…: where the working copy is published (pipeline/storage/publish.ts); unset for a
   * folder archive. */
  archiveStore?: string;
  keys: string;
  privateKeys: string;
  /**
   * TIMESEAL_TSA_KEY_FILE and TIMESEAL_TSA_CHAIN_FILE (both or neither): the time-stamp authority's own PEM private
   * key and PEM certificate chain (its certificate first, up to and including the root), replacing
   * `privateKeys`/tsa_private.pem and `keys`/timeseal-tsa.pem (runtime/keys.ts loadTsaKeys checks them).
   */
  tsaKeyFile?: string;
  tsaChainFile?: string;
  /** Public base URL, e.g. https://timeseal.example */
  origin: string;
  /** The log origin derived from `origin` (docs/FORMAT.md §5). */
  logOrigin: string;
  host: string;
  port: number;
  /** TIMESEAL_BUILD_MEMORY_MB: what `ledger build` may hold of a day's rows while it sorts them; a larger day is
   * sorted by an external merge through the archive's temp folder (pipeline/day-sort.ts). */
  buildMemoryMb: number;
}

export { UsageError } from './usage-error.ts';

/**
 * Reads a `.env` file with Node's own parser (util.parseEnv: `KEY=VALUE` lines, `export` prefixes, quotes, `#`
 * comments, also after a value: `PORT=8080 # local` is 8080). Only keys not already in `env` are set.
 */
export function loadDotEnv(file: string, env: NodeJS.ProcessEnv = process.env): void {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return;
  }
  for (const [key, value] of Object.entries(parseEnv(text))) if (!Object.hasOwn(env, key)) env[key] = value;
}

/** `https://timeseal.example/` → `timeseal.example` (docs/FORMAT.md §5). */
export function logOriginOf(origin: string): string {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new UsageError(`TIMESEAL_ORIGIN is not a URL: ${origin}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('TIMESEAL_ORIGIN must be http(s)');
  const rest = `${url.host}${url.pathname}`.replace(/\/+$/, '');
  if (/[\s+]/.test(rest)) throw new UsageError('TIMESEAL_ORIGIN must not contain spaces or "+"');
  return rest;
}

/**
 * True when `origin` (a URL, or a bare host) is on a loopback address: localhost, 127.x.x.x, [::1]. What a local
 * development server is; FREE_TIER_DAILY_LIMIT and the development clock (runtime/clock.ts) are honoured only there.
 */
export function isLoopbackOrigin(origin: string): boolean {
  let host: string;
  try {
    host = new URL(origin).hostname;
  } catch {
    host = origin;
  }
  return /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(host);
}

/** The public base URL when TIMESEAL_ORIGIN is not set; its host is then the log origin. */
export const DEFAULT_ORIGIN = 'http://localhost:8080';

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  loadDotEnv(path.resolve('.env'), env);
  const port = setting(env, 'PORT');
  const tsaKeyFile = setting(env, 'TIMESEAL_TSA_KEY_FILE');
  const tsaChainFile = setting(env, 'TIMESEAL_TSA_CHAIN_FILE');
  if ((tsaKeyFile === undefined) !== (tsaChainFile === undefined)) {
    throw new UsageError(
      `TIMESEAL_TSA_KEY_FILE and TIMESEAL_TSA_CHAIN_FILE go together (the key and its certificate chain): ${tsaKeyFile === undefined ? 'TIMESEAL_TSA_KEY_FILE' : 'TIMESEAL_TSA_CHAIN_FILE'} is not set`,
    );
  }
  // An s3:// archive is published from a local working copy (docs/OPERATIONS.md §8): the commands read and write
  // that folder as they do a folder archive, and publish what changed through the archive store.
  const archive = setting(env, 'TIMESEAL_ARCHIVE');
  const archiveStore = archive.startsWith('s3://') ? archive : undefined;
  const cache = setting(env, 'TIMESEAL_ARCHIVE_CACHE');
  const db = setting(env, 'TIMESEAL_DB');
  const databaseUrl = setting(env, 'TIMESEAL_DATABASE_URL');
  // Without TIMESEAL_ORIGIN (development), links follow PORT but the log origin stays DEFAULT_ORIGIN's, so
  // serving on another port never changes an archive's origin.
  const origin = setting(env, 'TIMESEAL_ORIGIN');
  return {
    db,
    ...(databaseUrl === undefined ? {} : { databaseUrl }),
    databasePool: setting(env, 'TIMESEAL_DATABASE_POOL'),
    archive: archiveStore === undefined ? archive : (cache ?? path.join(path.dirname(db), 'archive-cache')),
    ...(archiveStore === undefined ? {} : { archiveStore }),
    keys: setting(env, 'TIMESEAL_KEYS'),
    privateKeys: setting(env, 'TIMESEAL_PRIVATE_KEYS'),
    ...(tsaKeyFile !== undefined && tsaChainFile !== undefined ? { tsaKeyFile, tsaChainFile } : {}),
    origin: origin ?? (port === 0 || port === 8080 ? DEFAULT_ORIGIN : `http://localhost:${port}`),
    logOrigin: logOriginOf(origin ?? DEFAULT_ORIGIN),
    host: setting(env, 'HOST'),
    port,
    buildMemoryMb: setting(env, 'TIMESEAL_BUILD_MEMORY_MB'),
  };
}
