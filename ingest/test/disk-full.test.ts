// With the database's disk full every submission got a 500, /api/queue-stats.php said
// "operational", and each request logged a stack trace (74,728 in 12 s). Now: 503 with a clear text and
// Retry-After, nothing acknowledged is lost, queue-stats says "submissions failing" (and /live shows its
// `problem`), the log has one error line when it starts, a count at most once a minute and one line when it
// ends; a write that succeeds clears it.
//
// The full disk is real: as root, `timeseal serve` runs in a mount namespace of its own with a 1 MiB tmpfs on
// the database's folder; the test reaches that folder through /proc/<pid>/root to fill it and free it again.
import { spawn, type ChildProcess } from 'node:child_process';
import { timesealSync } from '../../test/support/cli-host.ts';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { storageFault, storageMessage } from '../errors.ts';
import { sqliteFault } from '../../store/sqlite/errors.ts';
import { StorageUnavailableError } from '../../store/store.ts';
import { createSubmissionGate } from '../submission-gate.ts';
import { BIN, childEnv, ORIGIN, projectEnv, randomHash, removeTempDirs, tempDir } from './fixture.ts';

afterAll(removeTempDirs);

const FULL_SUBMISSION =
  'The server cannot store submissions right now (its disk is full); nothing was recorded. Please try again later.';

describe('storage errors', () => {
  it('are told apart from other errors', () => {
    const coded = (code: string, syscall?: string) =>
      Object.assign(new Error(code), { code, ...(syscall ? { syscall } : {}) });
    // Engine-neutral (store/faults.ts): the store's StorageUnavailableError and Node's file-call codes; an
    // engine's own codes are made StorageUnavailableError inside the store (store/sqlite/errors.ts sqliteFault).
    expect(storageFault(new StorageUnavailableError('full', 'SQLITE_FULL', 'database or disk is full'))).toBe('full');
    expect(storageFault(new StorageUnavailableError('io', '58030', 'PostgreSQL: could not write'))).toBe('io');
    expect(storageFault(coded('ENOSPC', 'write'))).toBe('full');
    expect(storageFault(coded('EDQUOT', 'write'))).toBe('full');
    expect(storageFault(coded('SQLITE_IOERR_WRITE'))).toBeUndefined();
    expect(sqliteFault(coded('SQLITE_IOERR_WRITE'))).toBe('io');
    expect(sqliteFault(coded('SQLITE_FULL'))).toBe('full');
    expect(sqliteFault(coded('ENOSPC', 'write'))).toBe('full');
    expect(storageFault(coded('EIO', 'fdatasync'))).toBe('io');
    // A failed read of an archive file is not the database's disk refusing writes.
    expect(storageFault(coded('EIO', 'read'))).toBeUndefined();
    expect(storageFault(coded('SQLITE_CONSTRAINT_UNIQUE'))).toBeUndefined();
    expect(storageFault(coded('SQLITE_BUSY'))).toBeUndefined();
    expect(storageFault(new Error('plain'))).toBeUndefined();
    expect(storageFault(undefined)).toBeUndefined();
    expect(storageMessage('full', 'submission')).toBe(FULL_SUBMISSION);
    expect(storageMessage('io', 'data')).toBe(
      'The server cannot store anything right now (writing to its disk failed). Please try again later.',
    );
    expect(storageMessage('full', 'submission', true)).toBe(
      'The server could not confirm that your submission was stored (its disk is full). Please submit it again later.',
    );
  });

  it('are logged once, then at most once a minute with a count, and once when a write succeeds again', () => {
    const lines: Array<{ level: string; obj: Record<string, unknown>; msg: string }> = [];
    const log = {
      error: (obj: object, msg: string) => lines.push({ level: 'error', obj: obj as Record<string, unknown>, msg }),
      warn: (obj: object, msg: string) => lines.push({ level: 'warn', obj: obj as Record<string, unknown>, msg }),
    };
    let t = 0;
    const archive = tempDir('gate-archive');
    const gate = createSubmissionGate({
      archive,
      log,
      now: () => t,
      wallClock: () => new Date('2025-11-03T12:00:00.000Z'),
    });
    gate.stored();
    expect(lines).toHaveLength(0);
    expect(gate.condition('2025-11-03')).toBeNull();
    const err = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    for (let i = 0; i < 1000; i++) gate.storageFailed('full', err);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'error',
      obj: { code: 'SQLITE_FULL', cause: 'database or disk is full', refused: 1 },
    });
    expect(lines[0]!.msg).toBe(
      "STORAGE FAILING: a write to the database failed (SQLITE_FULL: database or disk is full); submissions and other writes are answered 503 until one succeeds. Free space on the database's disk.",
    );
    expect(gate.condition('2025-11-03')).toEqual({
      kind: 'storage',
      fault: 'full',
      code: 'SQLITE_FULL',
      since: '2025-11-03T12:00:00.000Z',
      problem:
        'The server cannot store submissions since 2025-11-03T12:00:00.000Z: its disk is full. Submissions are refused until it is fixed.',
    });
    t = 59_999;
    gate.storageFailed('full', err);
    expect(lines).toHaveLength(1);
    t = 60_000;
    gate.storageFailed('full', err);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ level: 'error', obj: { refused: 1001, refusedTotal: 1002 } });
    expect(lines[1]!.msg).toMatch(
      /^STORAGE STILL FAILING since 2025-11-03T12:00:00.000Z \(SQLITE_FULL\): 1001 writes refused with 503 since the last line, 1002 in all$/,
    );
    t = 90_000;
    gate.stored();
    gate.stored();
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatchObject({ level: 'warn', obj: { refusedTotal: 1002, seconds: 90 } });
    expect(lines[2]!.msg).toBe(
      'storage writable again: a submission was stored; 1002 writes were refused with 503 since 2025-11-03T12:00:00.000Z',
    );
    expect(gate.condition('2025-11-03')).toBeNull();
    // A new failure starts over with an error line at once.
    gate.storageFailed('io', Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' }));
    expect(lines).toHaveLength(4);
    expect(lines[3]!.msg).toMatch(/^STORAGE FAILING: .*SQLITE_IOERR_WRITE.*Check the database's disk\.$/);
  });
});

const root = process.getuid?.() === 0;

describe.skipIf(!root)('timeseal serve on a full disk (a real 1 MiB tmpfs)', () => {
  it(
    'answers 503 (never 500), loses nothing acknowledged, reports it and logs a bounded number of lines, then recovers',
    { timeout: 180_000 },
    async () => {
      const dir = tempDir('disk-full');
      const dbDir = path.join(dir, 'db');
      fs.mkdirSync(dbDir);
      const env = projectEnv(dir, {
        TIMESEAL_DB: path.join(dbDir, 'timeseal.db'),
        TIMESEAL_NOW: '2025-11-03T12:00:00Z',
        TRUST_PROXY: '1',
      });
      expect(timesealSync(['keys', 'init'], { cwd: dir, env: childEnv(env) }).status).toBe(0);
      // unshare without --fork execs: the server keeps the child's pid, and /proc/<pid>/root shows its mounts.
      const child = spawn(
        'unshare',
        ['-m', 'sh', '-c', 'mount -t tmpfs -o size=1m tmpfs "$0" && exec "$1" serve', dbDir, BIN],
        {
          cwd: dir,
          env: childEnv({ ...env, PORT: '0' }),
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      try {
        const url = await listening(child, () => stderr);
        const inNamespace = (file: string) => `/proc/${child.pid}/root${path.join(dbDir, file)}`;
        expect(fs.readFileSync(`/proc/${child.pid}/mounts`, 'utf8')).toContain(`tmpfs ${dbDir} tmpfs`);

        const acknowledged: string[] = [];
        const statuses = new Map<number, number>();
        const bodies = new Map<string, number>();
        let n = 0;
        const post = async (route: string, body: object, headers: Record<string, string> = {}) => {
          const res = await fetch(`${url}${route}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...headers },
            body: JSON.stringify(body),
          });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          return res;
        };
        const beta = async () => {
          const hash = randomHash();
          const res = await post('/api/v1/beta/timestamp', { hash });
          const text = await res.text();
          if (res.status === 201) acknowledged.push(hash);
          else
            bodies.set(
              `${res.status} ${res.headers.get('retry-after')} ${text}`,
              (bodies.get(`${res.status} ${res.headers.get('retry-after')} ${text}`) ?? 0) + 1,
            );
          return res.status;
        };
        const submit = async () => {
          const hash = randomHash();
          // Each from its own address (TRUST_PROXY=1), so the free tier's 2 a day never applies.
          const res = await post(
            '/api/submit',
            { hash },
            { 'x-forwarded-for': `198.51.${(n >> 8) & 255}.${n++ & 255}` },
          );
          if (res.status === 201) acknowledged.push(hash);
          return {
            status: res.status,
            retryAfter: res.headers.get('retry-after'),
            body: (await res.json()) as unknown,
          };
        };

        for (let i = 0; i < 30; i++) expect(await beta()).toBe(201);
        expect((await submit()).status).toBe(201);

        // Fill the tmpfs to the last byte.
        const filler = inNamespace('filler');
        const fd = fs.openSync(filler, 'w');
        try {
          for (const size of [65536, 4096, 512, 1]) {
            const chunk = Buffer.alloc(size, 1);
            for (;;) {
              try {
                fs.writeSync(fd, chunk);
              } catch (err) {
                expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
                break;
              }
            }
          }
        } finally {
          fs.closeSync(fd);
        }

        // SQLite may still fit a few rows in pages it holds; then every write fails. 1,000 failing requests,
        // 20 at a time.
        let failing = 0;
        for (let sent = 0; failing < 1000 && sent < 5000; sent += 20) {
          const batch = await Promise.all(Array.from({ length: 20 }, beta));
          failing += batch.filter((s) => s === 503).length;
        }
        expect(failing).toBeGreaterThanOrEqual(1000);
        expect(statuses.get(500)).toBeUndefined();
        expect([...bodies.keys()]).toEqual([
          `503 60 ${JSON.stringify({ success: false, error: FULL_SUBMISSION, example: { hash: 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9' }, message: FULL_SUBMISSION })}`,
        ]);
        // The site's route and an account write say so too.
        expect(await submit()).toEqual({
          status: 503,
          retryAfter: '60',
          body: { ok: false, error: FULL_SUBMISSION, message: FULL_SUBMISSION },
        });
        const signup = await post(
          '/api/auth/signup',
          { username: 'fullDisk', email: 'full@example.com', password: 'a long enough password 1', agreeTerms: true },
          { origin: ORIGIN },
        );
        expect(signup.status).toBe(503);
        expect(signup.headers.get('retry-after')).toBe('60');
        expect(await signup.json()).toEqual({
          error: 'The server cannot store anything right now (its disk is full). Please try again later.',
          message: 'The server cannot store anything right now (its disk is full). Please try again later.',
        });

        const stats = await (await fetch(`${url}/api/queue-stats.php`)).json();
        expect(stats).toMatchObject({ status: 'submissions failing', submissionsOpen: false });
        expect(stats.problem).toMatch(
          /^The server cannot store submissions since \S+: its disk is full\. Submissions are refused until it is fixed\.$/,
        );

        // Space is freed: the next submission is stored and the status is operational again.
        fs.rmSync(filler);
        expect(await beta()).toBe(201);
        expect((await submit()).status).toBe(201);
        const after = await (await fetch(`${url}/api/queue-stats.php`)).json();
        expect(after).toMatchObject({ status: 'operational', submissionsOpen: true });
        expect(after).not.toHaveProperty('problem');

        // Nothing acknowledged is lost. The files are copied out of the server's mount namespace while it is idle
        // (SQLite resolves /proc/<pid>/root as the link it is, to this namespace's empty folder).
        const copy = path.join(dir, 'copy.db');
        fs.copyFileSync(inNamespace('timeseal.db'), copy);
        fs.copyFileSync(inNamespace('timeseal.db-wal'), `${copy}-wal`);
        const db = new Database(copy, { readonly: true });
        try {
          const stored = new Set(
            (db.prepare('SELECT hash FROM submissions').all() as Array<{ hash: string }>).map((r) => r.hash),
          );
          expect(acknowledged.filter((h) => !stored.has(h))).toEqual([]);
          expect(acknowledged.length).toBeGreaterThanOrEqual(33); // 31 before the disk filled, 2 after it was freed
        } finally {
          db.close();
        }

        // The log is written at least every second.
        await vi.waitFor(() => expect(stderr).toMatch(/storage writable again/), { timeout: 5000, interval: 100 });
        const records = stderr
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { level: number; msg: string; [k: string]: unknown });
        const refused = failing + 2;
        // 1,000+ refusals: the whole log stays a few dozen lines (request-log.ts records the first failure of each
        // route and status per minute and counts the rest; the storage condition is logged once with counts).
        expect(records.length).toBeLessThan(40);
        // The built-in schedule's catch-up steps may run while the disk is full: one line each (pipeline/schedule.ts).
        const errors = records.filter((r) => r.level >= 50).map((r) => r.msg);
        const scheduled = errors.filter((m) => /^scheduled .* failed; the next run retries$/.test(m));
        expect(new Set(scheduled).size).toBe(scheduled.length);
        expect(errors.filter((m) => !scheduled.includes(m))).toEqual([
          expect.stringMatching(
            /^STORAGE FAILING: a write to the database failed \(SQLITE_FULL: database or disk is full\)/,
          ),
        ]);
        expect(stderr).not.toMatch(/"stack"|request failed/);
        const cleared = records.filter((r) => /^storage writable again/.test(r.msg));
        expect(cleared).toHaveLength(1);
        expect(cleared[0]).toMatchObject({ level: 40, refusedTotal: refused });
      } finally {
        child.kill('SIGTERM');
        await new Promise((resolve) =>
          child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.on('exit', resolve),
        );
      }
    },
  );
});

function listening(child: ChildProcess, stderr: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Timeseal listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}:\n${out}\n${stderr()}`)));
  });
}
