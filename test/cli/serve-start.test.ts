// What `timeseal serve` checks before it accepts anything (docs/OPERATIONS.md §6): each broken installation
// refuses to start with exit code 64 (1 for a damaged database) and one line naming the cause, instead of
// starting and answering 500 (or, for TRUST_PROXY=true, letting every client pick its address); and a read-only
// archive is served without the server ever writing to it.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../store/sqlite/db.ts';
import { enqueue } from '../../store/sqlite/queue.ts';
import { BIN, childEnv, projectEnv, removeTempDirs, startServer, tempDir } from '../../ingest/test/fixture.ts';

afterAll(removeTempDirs);

function timeseal(
  cwd: string,
  env: Record<string, string>,
  args: string[],
  timeout = 60_000,
): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(BIN, args, { cwd, env: childEnv({ PORT: '0', ...env }), encoding: 'utf8', timeout });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A project with keys and a database holding 2,000 queued submissions. */
function project(label: string): { dir: string; env: Record<string, string> } {
  const dir = tempDir(label);
  const env = projectEnv(dir);
  expect(timeseal(dir, env, ['keys', 'init']).code).toBe(0);
  const db = openDatabase(env.TIMESEAL_DB!);
  const hashes = Array.from({ length: 2000 }, (_, i) => ({
    hash: i.toString(16).padStart(64, '0'),
    submittedAt: new Date('2025-11-02T09:00:00Z'),
    source: 'import' as const,
  }));
  enqueue(db, hashes);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { dir, env };
}

/** `timeseal serve` must exit by itself (it would otherwise listen until killed) with `code` and this line: 64 for
 * a setting, 3 for a missing part of the installation, 1 for a damaged database or key. */
function expectRefused(dir: string, env: Record<string, string>, code: 1 | 3 | 64, message: RegExp): void {
  const r = timeseal(dir, env, ['serve'], 30_000);
  expect(r.stdout).not.toMatch(/listening/);
  expect(r.code).toBe(code);
  expect(r.stderr).toMatch(message);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
}

describe('timeseal serve refuses to start', () => {
  it('with TRUST_PROXY=true, naming the safe settings', () => {
    const { dir, env } = project('trust-true');
    expectRefused(
      dir,
      { ...env, TRUST_PROXY: 'true' },
      64,
      /^timeseal: TRUST_PROXY=true would let every client choose its own address .*TRUST_PROXY=1 behind one nginx/,
    );
  });

  it('without a public key file, or with an unreadable one', () => {
    const { dir, env } = project('keys');
    const keys = env.TIMESEAL_KEYS!;
    const pem = fs.readdirSync(keys).find((f) => f.endsWith('.pem') && !f.startsWith('timeseal-tsa'))!; // the TSA's are optional
    const saved = fs.readFileSync(path.join(keys, pem));
    fs.rmSync(path.join(keys, pem));
    expectRefused(
      dir,
      env,
      3,
      new RegExp(`cannot serve without the public keys in ${keys}: .*${pem.replace('.', '\\.')}.*timeseal keys init`),
    );
    fs.writeFileSync(path.join(keys, pem), 'not a key\n');
    expectRefused(dir, env, 1, /cannot serve without the public keys/);
    fs.writeFileSync(path.join(keys, pem), saved);
    const started = timeseal(dir, { ...env, TIMESEAL_NOW: '2025-11-03T12:00:00Z' }, ['status']);
    expect(started.code).toBe(0);
  });

  it('on an empty (0-byte) database file, which SQLite would take as a new database', () => {
    const { dir, env } = project('empty-db');
    const db = env.TIMESEAL_DB!;
    for (const f of [db, `${db}-wal`, `${db}-shm`]) fs.rmSync(f, { force: true });
    fs.writeFileSync(db, '');
    expectRefused(
      dir,
      env,
      1,
      /the database file .* is empty \(0 bytes\): it is not a Timeseal database\. Restore it from a backup/,
    );
    expect(fs.statSync(db).size).toBe(0);
  });

  it('on a file that is not a database', () => {
    const { dir, env } = project('garbage-db');
    const db = env.TIMESEAL_DB!;
    fs.writeFileSync(db, Buffer.alloc(8192, 0x41));
    expectRefused(dir, env, 1, /the database file .* cannot be opened: .*not a database.*Restore it from a backup/);
  });

  it('on a database with a damaged page (PRAGMA quick_check)', () => {
    const { dir, env } = project('damaged-db');
    const db = env.TIMESEAL_DB!;
    const bytes = fs.readFileSync(db);
    const page = Math.floor(bytes.length / 4096 / 2);
    for (let i = 0; i < 64; i++) bytes[page * 4096 + 8 + i]! ^= 0xff;
    fs.writeFileSync(db, bytes);
    expectRefused(
      dir,
      env,
      1,
      /the database file .* is damaged \(PRAGMA quick_check: .*page.*\)\. Restore it from a backup/,
    );
    // The same check as a command, for files too large to check at every start.
    const checked = timeseal(dir, env, ['db', 'check']);
    expect(checked.code).toBe(1);
    expect(checked.stderr).toMatch(/is damaged \(PRAGMA quick_check/);
  });

  it('`timeseal db check` passes a sound database', () => {
    const { dir, env } = project('sound-db');
    const checked = timeseal(dir, env, ['db', 'check', '--json']);
    expect(checked.code).toBe(0);
    expect(JSON.parse(checked.stdout)).toMatchObject({ ok: true, file: env.TIMESEAL_DB });
  });
});

describe('timeseal serve on a read-only archive', () => {
  it('serves the archive and writes nothing to it', async () => {
    const { dir, env } = project('read-only');
    expect(timeseal(dir, { ...env, TIMESEAL_NOW: '2025-11-03T00:01:00Z' }, ['ledger', 'build']).code).toBe(0);
    const archive = env.TIMESEAL_ARCHIVE!;
    // A built offline verifier in the site folder: on a writable archive serve would list it there.
    fs.mkdirSync(env.TIMESEAL_SITE!, { recursive: true });
    fs.writeFileSync(
      path.join(env.TIMESEAL_SITE!, 'offline-verifier.html'),
      '<html><head><meta name="generator" content="Timeseal offline verifier 1.0.0"></head></html>\n',
    );
    const before = listing(archive);
    const serverEnv = childEnv({ ...env, PORT: '0', TIMESEAL_NOW: '2025-11-03T12:00:00Z' });
    // Root ignores file modes, so as root the archive is made read-only by a bind mount in a mount namespace of
    // the server's own (gone with it); otherwise by taking away write permission.
    const root = process.getuid?.() === 0;
    if (!root) chmodTree(archive, false);
    const child = root
      ? spawn('unshare', ['-m', 'sh', '-c', 'mount --bind -o ro "$0" "$0" && exec "$1" serve', archive, BIN], {
          cwd: dir,
          env: serverEnv,
          stdio: ['ignore', 'pipe', 'pipe'],
        })
      : spawn(BIN, ['serve'], { cwd: dir, env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /Timeseal listening on (http:\/\/\S+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.on('exit', (code) => reject(new Error(`serve exited with ${code}:\n${stderr}`)));
      });
      const checkpoint = await fetch(`${url}/ledgers/checkpoint`);
      expect(checkpoint.status).toBe(200);
      expect(await checkpoint.text()).toBe(fs.readFileSync(path.join(archive, 'checkpoint'), 'utf8'));
      const ledger = await fetch(`${url}/ledgers/2025-11-02.json`);
      expect(ledger.status).toBe(200);
      expect(
        Buffer.from(await ledger.arrayBuffer()).equals(fs.readFileSync(path.join(archive, '2025-11-02.json'))),
      ).toBe(true);
      const submitted = await fetch(`${url}/api/v1/beta/timestamp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ hash: 'ab'.repeat(32) }),
      });
      expect(submitted.status).toBe(201);
      // The log is buffered (written at least every second).
      await vi.waitFor(() => expect(stderr).toMatch(/the archive is read-only here/), { timeout: 5000, interval: 100 });
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.on('exit', resolve)));
      if (!root) chmodTree(archive, true);
    }
    expect(listing(archive)).toEqual(before);
    expect(fs.existsSync(path.join(archive, 'offline-verifier.json'))).toBe(false);
  });
});

function listing(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .map((f) => `${f} ${fs.statSync(path.join(dir, f)).mtimeMs}`)
    .sort();
}

function chmodTree(dir: string, writable: boolean): void {
  for (const f of [dir, ...(fs.readdirSync(dir, { recursive: true }) as string[]).map((r) => path.join(dir, r))]) {
    if (fs.statSync(f).isDirectory()) fs.chmodSync(f, writable ? 0o755 : 0o555);
  }
}

describe('timeseal serve with its clock on a published day', () => {
  // A node restarted just after midnight with a lagging clock (here TIMESEAL_NOW on the published day): the
  // offline verifier's release cannot be enqueued for a closed day, and the server must start all the same.
  it('starts, serves the site and the archive, answers submissions 503 and records no release yet', async () => {
    const { dir, env } = project('closed-day');
    expect(timeseal(dir, { ...env, TIMESEAL_NOW: '2025-11-03T00:01:00Z' }, ['ledger', 'build']).code).toBe(0);
    fs.mkdirSync(env.TIMESEAL_SITE!, { recursive: true });
    fs.writeFileSync(
      path.join(env.TIMESEAL_SITE!, 'index.html'),
      '<!doctype html><title>Timeseal</title><h1>Home</h1>\n',
    );
    fs.writeFileSync(
      path.join(env.TIMESEAL_SITE!, 'offline-verifier.html'),
      '<html><head><meta name="generator" content="Timeseal offline verifier 1.0.0"></head></html>\n',
    );
    const server = await startServer(dir, { ...env, TIMESEAL_NOW: '2025-11-02T23:30:00Z' });
    try {
      const home = await fetch(`${server.url}/`);
      expect(home.status).toBe(200);
      expect(await home.text()).toContain('<h1>Home</h1>');
      const ledger = await fetch(`${server.url}/ledgers/2025-11-02.json`);
      expect(ledger.status).toBe(200);
      const submitted = await fetch(`${server.url}/api/v1/beta/timestamp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ hash: 'cd'.repeat(32) }),
      });
      expect(submitted.status).toBe(503);
      expect(await submitted.text()).toMatch(
        /clock \(2025-11-02\) is not after the last published ledger \(2025-11-02\)/,
      );
      await expect
        .poll(() => server.stderr(), { timeout: 30_000 })
        .toMatch(/offline verifier release is not recorded yet: the clock's day 2025-11-02 is closed/);
      expect(server.child.exitCode).toBeNull();
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    expect(fs.existsSync(path.join(env.TIMESEAL_ARCHIVE!, 'offline-verifier.json'))).toBe(false);
  });
});

describe('timeseal serve with TRUST_PROXY a hop count', () => {
  // HOST=0.0.0.0 would take X-Forwarded-For from anyone who reaches the port. The test never listens there: the
  // port is held on 127.0.0.1 by the test, so the server warns, then fails to listen and exits.
  it('warns at start when HOST is not loopback, naming the safe settings', async () => {
    const { dir, env } = project('trust-hops');
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = String((holder.address() as net.AddressInfo).port);
    try {
      const r = timeseal(dir, { ...env, HOST: '0.0.0.0', PORT: port, TRUST_PROXY: '1' }, ['serve'], 30_000);
      expect(r.stdout).not.toMatch(/listening/);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(
        /TRUST_PROXY=1 is a hop count and HOST=0\.0\.0\.0 is not a loopback address: a client that reaches this port directly, not through the proxy, chooses its own address in X-Forwarded-For .*Set TRUST_PROXY to the proxies' addresses/,
      );
    } finally {
      holder.close();
    }
  });
});
