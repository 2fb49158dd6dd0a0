// Shared by the benchmarks: the machine's description, a server project's settings and keys, running the real CLI
// with GNU time, folder sizes.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import crypto from 'node:crypto';
import path from 'node:path';
import { signCheckpoint } from '../core/checkpoint.ts';
import { inclusionProof, leafHash, rootFromInclusionProof } from '../core/merkle.ts';
import { ecdsaNoteSigner, mldsaNoteSigner } from '../core/note.ts';
import { ecdsaSecretKeyFromPkcs8Pem, mldsaPublicKey, mldsaSeedFromPkcs8Pem } from '../core/sig.ts';
import { tileHashReader, tilePath, tilesForInclusion, TILE_WIDTH } from '../core/tiles.ts';
import { openDatabase } from '../store/sqlite/db.ts';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const TIMESEAL = path.join(ROOT, 'cli/bin/timeseal');

/** The settings of a server project in `dir`: its database, archive, keys and site there, the OpenTimestamps
 *  calendars on closed loopback ports (nothing leaves the machine), a free loopback port; `extra` on top. */
export function benchProjectEnv<E extends Record<string, string>>(dir: string, extra?: E) {
  return {
    ...process.env,
    TIMESEAL_DB: path.join(dir, 'data/timeseal.db'),
    TIMESEAL_ARCHIVE: path.join(dir, 'ledgers'),
    TIMESEAL_KEYS: path.join(dir, 'keys'),
    TIMESEAL_PRIVATE_KEYS: path.join(dir, 'data/private-keys'),
    TIMESEAL_SITE: path.join(dir, 'site'),
    OTS_CALENDARS: 'http://127.0.0.1:9/,http://127.0.0.1:7/',
    HOST: '127.0.0.1',
    PORT: '0',
    ...(extra as E),
  };
}

/** `timeseal keys init` in `dir` (the CLI `bin`, by default this checkout's); throws with its stderr on failure. */
export function keysInit(dir: string, env: NodeJS.ProcessEnv, bin: string = TIMESEAL): void {
  const keys = spawnSync(bin, ['keys', 'init'], { cwd: dir, env, encoding: 'utf8' });
  if (keys.status !== 0) throw new Error(`keys init failed: ${keys.stderr}`);
}

/** The short commit id of the checkout at `root`. */
export function gitCommit(root: string): string {
  return spawnSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
}

export function machine(): string {
  const cpu =
    /model name\s*:\s*(.*)/.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model ?? 'unknown CPU';
  return `${os.cpus().length} cores (${cpu}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}, ${os.platform()} ${os.release()}`;
}

export interface Measured {
  seconds: number;
  maxRssMb: number;
  /** User and system CPU seconds of the process and its threads (and of the commands it waited for). */
  cpuSeconds: number;
  /** The system part of cpuSeconds: the kernel's work for the process (file creation, copies into the page cache). */
  systemSeconds: number;
  stdout: string;
}

/** Runs the timeseal CLI under GNU time (wall seconds, peak RSS of the process, CPU seconds). */
export function timed(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Measured {
  const result = spawnSync('/usr/bin/time', ['-f', '%e %M %U %S', TIMESEAL, ...args], {
    cwd,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  const last = result.stderr.trim().split('\n').at(-1) ?? '';
  const [seconds, kb, user, system] = last.split(' ').map(Number);
  if (result.status !== 0 || seconds === undefined || kb === undefined || user === undefined || system === undefined) {
    throw new Error(`timeseal ${args.join(' ')} failed (${result.status}): ${result.stderr}`);
  }
  return { seconds, maxRssMb: kb / 1024, cpuSeconds: user + system, systemSeconds: system, stdout: result.stdout };
}

export function run(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): string {
  const result = spawnSync(TIMESEAL, args, {
    cwd,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  if (result.status !== 0) throw new Error(`timeseal ${args.join(' ')} failed (${result.status}): ${result.stderr}`);
  return result.stdout;
}

export function folderBytes(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) {
      files++;
      bytes += fs.statSync(path.join(e.parentPath, e.name)).size;
    }
  }
  return { files, bytes };
}

/** Seconds to write and fsync `bytes` random bytes to a new file in `dir` (then removed). */
export function writeLimit(dir: string, bytes: number): number {
  const block = crypto.randomBytes(8 << 20);
  const file = path.join(dir, 'limit.bin');
  const started = process.hrtime.bigint();
  const fd = fs.openSync(file, 'w');
  for (let left = bytes; left > 0; left -= block.length) {
    // Each block made new (a counter over its first bytes), so that nothing below can deduplicate it.
    block.writeBigUInt64LE(BigInt(left), 0);
    fs.writeSync(fd, block, 0, Math.min(left, block.length));
  }
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  fs.rmSync(file);
  return seconds;
}

/** OpenSSL's SHA-256 rate on one core for 64-byte blocks, bytes a second (`openssl speed`, best of three 1 s runs). */
export function hashRate(): number {
  let best = 0;
  for (let i = 0; i < 3; i++) {
    const out = spawnSync('openssl', ['speed', '-seconds', '1', '-bytes', '64', 'sha256'], { encoding: 'utf8' });
    const k = /^sha256\s+([\d.]+)k\s*$/m.exec(out.stdout)?.[1];
    if (k === undefined) throw new Error(`openssl speed: no sha256 line in ${JSON.stringify(out.stdout)}`);
    best = Math.max(best, Number(k) * 1000);
  }
  return best;
}

export const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MB`;

/**
 * The files a verified lookup of `hash` at `leaf` reads from a log of `size` leaves besides the index: the tiles
 * of its inclusion proof (random siblings, its leaf hash in place) and the latest checkpoint, signed with the
 * project's private keys over the root those tiles give. Their sizes are exactly those of a real archive.
 */
export function writeProofWorld(
  archive: string,
  privateKeys: string,
  origin: string,
  size: number,
  hash: string,
  leaf: number,
): void {
  const { secretKey, publicKey } = ecdsaSecretKeyFromPkcs8Pem(
    fs.readFileSync(path.join(privateKeys, 'ecdsa_private.pem'), 'utf8'),
  );
  const seed = mldsaSeedFromPkcs8Pem(fs.readFileSync(path.join(privateKeys, 'dilithium_private.pem'), 'utf8'));
  const leafBytes = leafHash(Buffer.from(hash, 'hex'));
  const tiles = new Map<string, Uint8Array>();
  for (const t of tilesForInclusion(leaf, size)) {
    const data = new Uint8Array(crypto.randomBytes(t.width * 32));
    if (t.level === 0 && t.index === Math.floor(leaf / TILE_WIDTH)) data.set(leafBytes, (leaf % TILE_WIDTH) * 32);
    tiles.set(`${t.level}/${t.index}`, data);
    const file = path.join(archive, tilePath(t.level, t.index, t.width));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, data);
  }
  const proof = inclusionProof(
    leaf,
    size,
    tileHashReader(size, (level, index) => tiles.get(`${level}/${index}`)!),
  );
  const root = rootFromInclusionProof(leafBytes, leaf, size, proof);
  const signers = [ecdsaNoteSigner(origin, secretKey, publicKey), mldsaNoteSigner(origin, seed, mldsaPublicKey(seed))];
  fs.writeFileSync(path.join(archive, 'checkpoint'), signCheckpoint({ origin, size, root }, signers));
}

/** `count` random hashes on `date` straight into SQLite (the import is not what is measured). */
export function enqueueRandom(dir: string, date: string, count: number): void {
  const db = openDatabase(path.join(dir, 'data/timeseal.db'));
  // A page cache that holds the hash index, so that the random inserts of 10 M rows do not wait on the disk
  // (this connection's only: the build opens its own).
  db.pragma('cache_size = -2000000');
  const insert = db.prepare(
    "INSERT INTO submissions (hash, submitted_at, ledger_date, source) VALUES (?, ?, ?, 'import')",
  );
  const base = Date.parse(`${date}T00:00:00.000Z`);
  const CHUNK = 65_536;
  db.transaction(() => {
    for (let i = 0; i < count; i += CHUNK) {
      const m = Math.min(CHUNK, count - i);
      const bytes = crypto.randomBytes(32 * m).toString('hex');
      for (let k = 0; k < m; k++) {
        insert.run(
          bytes.slice(64 * k, 64 * k + 64),
          new Date(base + Math.floor(((i + k) / count) * 86_399_000)).toISOString(),
          date,
        );
      }
    }
  })();
  db.close();
}
