// The submission insert (queue.ts): batches of any size go in multi-row statements of 32, 16, … 1 rows; the
// stored rows must be exactly the rows given, in order, and a batch is all or nothing.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, type DB } from './db.ts';
import { stagedEnqueue, submissionInserter, type Submission, type SubmissionSource } from './queue.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-queue-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshDb = (): DB => openDatabase(path.join(dir, `q${n++}.db`));

const SOURCES: SubmissionSource[] = ['web', 'api_beta', 'import', 'account', 'demo'];
const submission = fc.record({
  hash: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex')),
  // Any instant from 1970 to 2100, including day boundaries.
  submittedAt: fc.integer({ min: 0, max: 4_102_444_800_000 }).map((ms) => new Date(ms)),
  fileName: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
  source: fc.constantFrom(...SOURCES),
});

type Stored = { hash: string; submitted_at: string; ledger_date: string; file_name: string | null; source: string };
const stored = (db: DB): Stored[] =>
  db
    .prepare('SELECT hash, submitted_at, ledger_date, file_name, source FROM submissions ORDER BY id')
    .all() as Stored[];
const expected = (rows: readonly Submission[]): Stored[] =>
  rows.map((r) => ({
    hash: r.hash,
    submitted_at: r.submittedAt.toISOString(),
    ledger_date: r.submittedAt.toISOString().slice(0, 10),
    file_name: r.fileName ?? null,
    source: r.source,
  }));

describe('submissionInserter', () => {
  it('stores every row of batches of 0 to 100 rows, in order, with the UTC date of its time', () => {
    const db = freshDb();
    const insert = submissionInserter(db);
    const all: Submission[] = [];
    fc.assert(
      fc.property(fc.array(submission, { maxLength: 100 }), (rows) => {
        insert(rows);
        all.push(...rows);
        expect(stored(db)).toEqual(expected(all));
      }),
      { numRuns: 60 },
    );
    db.close();
  });

  it('a bad row anywhere in a batch of 77 (32 + 32 + 8 + 4 + 1 rows) stores nothing of the batch', () => {
    const db = freshDb();
    const insert = submissionInserter(db);
    const at = new Date('2026-11-22T23:59:59.999Z');
    const good = Array.from({ length: 77 }, (): Submission => ({
      hash: crypto.randomBytes(32).toString('hex'),
      submittedAt: at,
      source: 'api_beta',
    }));
    for (const bad of [0, 31, 32, 70, 76]) {
      const rows = good.map((r, i) => (i === bad ? { ...r, hash: 'not-a-hash' } : r));
      expect(() => insert(rows)).toThrow(/CHECK constraint/);
      expect(stored(db)).toEqual([]);
    }
    insert(good);
    expect(stored(db)).toEqual(expected(good));
    db.close();
  });
});

describe('stagedEnqueue', () => {
  it("runs the stage and the copy with a 2 MiB page cache each, and gives the main database's cache back", async () => {
    // A large import's stage and copy pass each page once: with SQLite's 16 MB caches they held 32 MB of its peak.
    const db = freshDb();
    db.pragma('main.cache_size = -16000');
    const at = new Date('2026-11-22T12:00:00.000Z');
    const rows = Array.from({ length: 40 }, (): Submission => ({
      hash: crypto.randomBytes(32).toString('hex'),
      submittedAt: at,
      source: 'import',
    }));
    const seen: Record<string, unknown>[] = [];
    const cacheOf = (schema: string) => db.pragma(`${schema}.cache_size`, { simple: true });
    async function* batches() {
      yield rows.slice(0, 20);
      seen.push({ stage: cacheOf('temp'), main: cacheOf('main') });
      yield rows.slice(20);
    }
    const n = await stagedEnqueue(db, batches(), async (copy) => {
      const changes = db.transaction(copy)();
      seen.push({ main: cacheOf('main') });
      return changes;
    });
    expect(n).toBe(40);
    expect(stored(db)).toEqual(expected(rows));
    // While the source is read the connection serves others with its own cache; the copy's is given back.
    expect(seen).toEqual([{ stage: -2048, main: -16000 }, { main: -16000 }]);
    expect(cacheOf('main')).toBe(-16000);
    db.close();
  });
});
