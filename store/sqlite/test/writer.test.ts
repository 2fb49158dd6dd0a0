// The group-commit submission writer (submission-writer.ts): an acknowledgement means committed and synced to disk.
// The fdatasync calls are observed (not replaced): each acknowledged row must have been committed before an
// fdatasync of the -wal file that finished before the acknowledgement. Batches (the store's submissions.enqueue)
// share that commit with the single rows of their turn, each batch all or none.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createSubmissionWriter } from '../submission-writer.ts';
import { openSqliteStore } from '../engine.ts';
import type { Submission } from '../../store.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
});

function dbFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-writer-'));
  dirs.push(dir);
  return path.join(dir, 'timeseal.db');
}

const hash = () => crypto.randomBytes(32).toString('hex');
const submittedAt = new Date('2026-11-22T10:00:00.000Z');

describe('submission writer', () => {
  it('acknowledges a row only after an fdatasync of the WAL that started once the row was committed', async () => {
    const file = dbFile();
    const writer = createSubmissionWriter(file);
    const reader = new Database(file, { readonly: true });
    const lastId = () =>
      (reader.prepare('SELECT MAX(id) AS id FROM submissions').get() as { id: number | null }).id ?? 0;
    const idOf = (h: string) =>
      (reader.prepare('SELECT id FROM submissions WHERE hash = ?').get(h) as { id: number }).id;

    const walIno = () => fs.statSync(`${file}-wal`).ino;
    /** Highest row id committed when a finished fdatasync of the -wal file started. */
    let durableUpTo = 0;
    const real = fs.fdatasyncSync;
    const spy = vi.spyOn(fs, 'fdatasyncSync').mockImplementation((fd: number) => {
      const onWal = fs.fstatSync(fd).ino === walIno();
      const committed = lastId();
      real(fd);
      if (onWal) durableUpTo = Math.max(durableUpTo, committed);
    });

    const hashes = Array.from({ length: 400 }, hash);
    const late: string[] = [];
    await Promise.all(
      hashes.map(async (h) => {
        await writer.write({ hash: h, submittedAt, source: 'api_beta' });
        expect(idOf(h)).toBeLessThanOrEqual(durableUpTo);
        if (Math.random() < 0.1) late.push(h);
      }),
    );
    // More writes while earlier ones are being synced.
    await Promise.all(late.map((h) => writer.write({ hash: h, submittedAt, source: 'web', fileName: 'again.txt' })));
    expect(spy).toHaveBeenCalled();
    expect(spy.mock.calls.length).toBeLessThan(hashes.length); // grouped: fewer syncs than rows
    expect((reader.prepare('SELECT COUNT(*) AS n FROM submissions').get() as { n: number }).n).toBe(
      hashes.length + late.length,
    );
    await writer.close();
    reader.close();
  });

  it('a row the database refuses fails alone; the rows that shared its transaction are stored', async () => {
    const file = dbFile();
    const writer = createSubmissionWriter(file);
    const good = [hash(), hash(), hash()];
    const results = await Promise.allSettled([
      writer.write({ hash: good[0]!, submittedAt, source: 'api_beta' }),
      writer.write({ hash: 'not-a-hash', submittedAt, source: 'api_beta' }),
      writer.write({ hash: good[1]!, submittedAt, source: 'api_beta' }),
      writer.write({ hash: good[2]!, submittedAt, source: 'api_beta' }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    await writer.close();
    const db = new Database(file, { readonly: true });
    expect(
      (db.prepare('SELECT hash FROM submissions ORDER BY id').all() as Array<{ hash: string }>).map((r) => r.hash),
    ).toEqual(good);
    db.close();
  });

  it('close() waits for pending rows; writes after close are refused and store nothing', async () => {
    const file = dbFile();
    const writer = createSubmissionWriter(file);
    const pending = Array.from({ length: 50 }, () => writer.write({ hash: hash(), submittedAt, source: 'api_beta' }));
    await writer.close();
    await Promise.all(pending);
    await expect(writer.write({ hash: hash(), submittedAt, source: 'api_beta' })).rejects.toThrow(/closed/);
    const db = new Database(file, { readonly: true });
    expect((db.prepare('SELECT COUNT(*) AS n FROM submissions').get() as { n: number }).n).toBe(50);
    db.close();
  });
});

describe('batches in the group commit (submissions.enqueue)', () => {
  const rows = (n: number): Submission[] =>
    Array.from({ length: n }, () => ({ hash: hash(), submittedAt, source: 'api_beta' as const }));

  it('batches and single rows sent in one turn are committed together: one fdatasync of the WAL, then every answer', async () => {
    const file = dbFile();
    const store = openSqliteStore(file);
    try {
      await store.submissions.write(rows(1)[0]!); // opens the writer and its -wal descriptor
      const reader = new Database(file, { readonly: true });
      const count = () => (reader.prepare('SELECT COUNT(*) AS n FROM submissions').get() as { n: number }).n;
      const maxIdOf = (hashes: string[]) =>
        (
          reader
            .prepare('SELECT MAX(id) AS id FROM submissions WHERE hash IN (SELECT value FROM json_each(?))')
            .get(JSON.stringify(hashes)) as { id: number }
        ).id;
      const walIno = fs.statSync(`${file}-wal`).ino;
      const syncs: number[] = [];
      let durableUpTo = 0;
      const real = fs.fdatasyncSync;
      vi.spyOn(fs, 'fdatasyncSync').mockImplementation((fd: number) => {
        const onWal = fs.fstatSync(fd).ino === walIno;
        const committed =
          (reader.prepare('SELECT MAX(id) AS id FROM submissions').get() as { id: number | null }).id ?? 0;
        real(fd);
        if (onWal) {
          syncs.push(count());
          durableUpTo = Math.max(durableUpTo, committed);
        }
      });
      const before = count();
      const batches = [rows(1000), rows(1), rows(1), rows(250), rows(1), rows(1000), rows(1), rows(1)];
      const singles = rows(20);
      const answered = [
        ...batches.map(async (b) => {
          await store.submissions.enqueue(b);
          // Acknowledged only once a sync that began after the batch's commit has finished.
          expect(maxIdOf(b.map((r) => r.hash))).toBeLessThanOrEqual(durableUpTo);
        }),
        ...singles.map(async (r) => {
          await store.submissions.write(r);
          expect(maxIdOf([r.hash])).toBeLessThanOrEqual(durableUpTo);
        }),
      ];
      // Nothing is committed in the turn that sent them: the group commits at its end.
      expect(count()).toBe(before);
      await Promise.all(answered);
      const total = batches.reduce((n, b) => n + b.length, 0) + singles.length;
      // One commit and one sync for all of them: the first sync already saw every row.
      expect(syncs).toEqual([before + total]);
      // Each batch's rows are contiguous, in its order.
      for (const b of batches) {
        const ids = b.map(
          (r) => (reader.prepare('SELECT id FROM submissions WHERE hash = ?').get(r.hash) as { id: number }).id,
        );
        expect(ids).toEqual(ids.map((_, i) => ids[0]! + i));
      }
      reader.close();
    } finally {
      await store.close();
    }
  });

  it('a batch the database refuses fails alone and stores none of its rows; the batches and rows of its group are stored', async () => {
    const file = dbFile();
    const store = openSqliteStore(file);
    try {
      const good = rows(300);
      const single = rows(1)[0]!;
      const bad = [...rows(10), { hash: 'not-a-hash', submittedAt, source: 'api_beta' as const }, ...rows(10)];
      const results = await Promise.allSettled([
        store.submissions.enqueue(good.slice(0, 150)),
        store.submissions.enqueue(bad),
        store.submissions.write(single),
        store.submissions.enqueue(good.slice(150)),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      const db = new Database(file, { readonly: true });
      const stored = (db.prepare('SELECT hash FROM submissions ORDER BY id').all() as Array<{ hash: string }>).map(
        (r) => r.hash,
      );
      db.close();
      expect(stored).toEqual([
        ...good.slice(0, 150).map((r) => r.hash),
        single.hash,
        ...good.slice(150).map((r) => r.hash),
      ]);
    } finally {
      await store.close();
    }
  });

  it('a sync that fails rejects every member of the group, each batch marked committed (not "nothing recorded")', async () => {
    const file = dbFile();
    const store = openSqliteStore(file);
    try {
      await store.submissions.write(rows(1)[0]!);
      vi.spyOn(fs, 'fdatasyncSync').mockImplementation(() => {
        throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO', syscall: 'fdatasync' });
      });
      const results = await Promise.allSettled([
        store.submissions.enqueue(rows(1000)),
        store.submissions.write(rows(1)[0]!),
        store.submissions.enqueue(rows(1)),
      ]);
      for (const r of results) {
        expect(r.status).toBe('rejected');
        expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'EIO', committed: true });
      }
      vi.restoreAllMocks();
      await expect(store.submissions.enqueue(rows(2))).resolves.toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
