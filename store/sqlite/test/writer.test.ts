// The group-commit submission writer (submission-writer.ts): an acknowledgement means committed and synced to disk.
// The fdatasync calls are observed (not replaced): each acknowledged row must have been committed before an
// fdatasync of the -wal file that finished before the acknowledgement.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createSubmissionWriter } from '../submission-writer.ts';

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
