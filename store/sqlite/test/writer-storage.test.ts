// The submission writer on a full or failing disk (docs/OPERATIONS.md §6): a batch refused by the disk rejects every
// row at once with the disk's error, without a second failing write per row; a sync that fails after the commit
// marks the error `committed`, so that the answer does not claim nothing was recorded. The disk's errors are
// simulated here (the insert and the fdatasync); disk-full.test.ts fills a real one.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { storageRefusal } from '../../../ingest/errors.ts';

const inserts: number[] = [];
let failWith: Error | undefined;

vi.mock('../queue.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../queue.ts')>();
  return {
    ...original,
    submissionInserter: (db: Parameters<typeof original.submissionInserter>[0]) => {
      const insert = original.submissionInserter(db);
      return (rows: Parameters<ReturnType<typeof original.submissionInserter>>[0]) => {
        inserts.push(rows.length);
        if (failWith !== undefined) throw failWith;
        insert(rows);
      };
    },
  };
});

const { createSubmissionWriter } = await import('../submission-writer.ts');

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
  inserts.length = 0;
  failWith = undefined;
});

function dbFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-writer-storage-'));
  dirs.push(dir);
  return path.join(dir, 'timeseal.db');
}

const row = () => ({
  hash: crypto.randomBytes(32).toString('hex'),
  submittedAt: new Date('2025-11-03T12:00:00Z'),
  source: 'api_beta' as const,
});

describe('submission writer on a failing disk', () => {
  it('rejects a whole batch with the disk error in one attempt, and writes again once the disk has room', async () => {
    const writer = createSubmissionWriter(dbFile());
    try {
      failWith = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      const results = await Promise.allSettled(Array.from({ length: 50 }, () => writer.write(row())));
      expect(
        results.every((r) => r.status === 'rejected' && (r.reason as { code: string }).code === 'SQLITE_FULL'),
      ).toBe(true);
      expect(inserts).toEqual([50]);
      // Any other error still retries each row on its own (one bad row must not fail the others).
      inserts.length = 0;
      failWith = Object.assign(new Error('constraint failed'), { code: 'SQLITE_CONSTRAINT' });
      await Promise.allSettled(Array.from({ length: 3 }, () => writer.write(row())));
      expect(inserts).toEqual([3, 1, 1, 1]);
      failWith = undefined;
      await expect(writer.write(row())).resolves.toBeUndefined();
    } finally {
      await writer.close();
    }
  });

  it('marks a sync failure after the commit as committed: the answer says it could not confirm, not "nothing recorded"', async () => {
    const writer = createSubmissionWriter(dbFile());
    try {
      await writer.write(row()); // opens the -wal file's descriptor
      vi.spyOn(fs, 'fdatasyncSync').mockImplementation(() => {
        throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO', syscall: 'fdatasync' });
      });
      const err = await writer.write(row()).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'EIO', committed: true });
      const failures: string[] = [];
      expect(storageRefusal(err, { storageFailed: (fault) => failures.push(fault) }, 'submission')).toEqual({
        message:
          'The server could not confirm that your submission was stored (writing to its disk failed). Please submit it again later.',
        retryAfter: '60',
      });
      expect(failures).toEqual(['io']);
    } finally {
      vi.restoreAllMocks();
      await writer.close();
    }
  });
});
