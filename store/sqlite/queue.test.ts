// The submission insert (queue.ts): batches of any size go in multi-row statements of 32, 16, … 1 rows; the
// stored rows must be exactly the rows given, in order, and a batch is all or nothing. The staged enqueue of an
// import: its copy into the queue in slices, each committed on its own, so that another process's insert gets
// SQLite's write lock within its busy timeout while the copy runs.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { Worker } from 'node:worker_threads';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DayClosedError, PartlyStoredError } from '../store.ts';
import { openConnection } from './connection.ts';
import { openDatabase, type DB } from './db.ts';
import { dayClosedOn } from './errors.ts';
import { COPY_SLICES, stagedEnqueue, submissionInserter, type Submission, type SubmissionSource } from './queue.ts';
import { submissionStore } from './submissions.ts';

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

describe('stagedEnqueue: the copy in slices', () => {
  const settings = { ...COPY_SLICES };
  afterEach(() => void Object.assign(COPY_SLICES, settings));
  const rowsAt = (count: number, at: Date): Submission[] =>
    Array.from({ length: count }, (_, i) => ({
      hash: crypto.randomBytes(32).toString('hex'),
      submittedAt: at,
      fileName: i % 3 === 0 ? `f${i}.pdf` : null,
      source: 'import',
    }));
  async function* inBatches(rows: readonly Submission[], size: number): AsyncGenerator<Submission[]> {
    for (let i = 0; i < rows.length; i += size) yield rows.slice(i, i + size);
  }

  it('commits the stage in slices of at most stepRows rows, in order, each seen by another connection once its transaction ends, and the whole is the rows given', async () => {
    Object.assign(COPY_SLICES, { stepRows: 7, sliceMs: 0, gapMs: 0 });
    const db = freshDb();
    const other = new Database(db.name);
    const rows = rowsAt(40, new Date('2026-11-22T12:00:00.000Z'));
    const seen: number[] = [];
    const n = await stagedEnqueue(db, inBatches(rows, 16), async (run) => {
      const changes = db.transaction(run).immediate();
      seen.push((other.prepare('SELECT COUNT(*) AS n FROM submissions').get() as { n: number }).n);
      return changes;
    });
    expect(n).toBe(40);
    // Six slices of 7 rows and one of 5, each committed before the next began.
    expect(seen).toEqual([7, 14, 21, 28, 35, 40]);
    expect(stored(db)).toEqual(expected(rows));
    other.close();
    db.close();
  });

  it('a slice refused after others committed (the day closed meanwhile) leaves those rows, a prefix, and says how many: PartlyStoredError with DayClosedError as its cause; a day closed before the first slice stores nothing, even when its rows come later', async () => {
    Object.assign(COPY_SLICES, { stepRows: 10, sliceMs: 0, gapMs: 0 });
    const db = freshDb();
    const other = new Database(db.name);
    const day = '2026-11-22';
    const rows = rowsAt(35, new Date(`${day}T12:00:00.000Z`));
    let slices = 0;
    const copy = async (run: () => number, earliest: string): Promise<number> => {
      // The build closes the day between the import's second and third slices.
      if (++slices === 3) other.prepare('INSERT INTO ledger_close (id, through) VALUES (1, ?)').run(day);
      try {
        return db.transaction(run).immediate();
      } catch (err) {
        throw dayClosedOn(err, earliest) ?? err;
      }
    };
    const failed = await stagedEnqueue(db, inBatches(rows, 8), copy).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(PartlyStoredError);
    expect(failed).toMatchObject({ stored: 20, total: 35 });
    expect((failed as PartlyStoredError).cause).toBeInstanceOf(DayClosedError);
    expect(stored(db)).toEqual(expected(rows.slice(0, 20)));
    // Closed from the start: the first slice is refused, nothing is stored, the error is DayClosedError itself.
    slices = 3;
    await expect(
      stagedEnqueue(db, inBatches(rowsAt(5, new Date(`${day}T13:00:00.000Z`)), 8), copy),
    ).rejects.toBeInstanceOf(DayClosedError);
    expect(stored(db)).toHaveLength(20);
    // The closed day's rows only after a first slice of an open day's: refused before that slice, nothing stored.
    const mixed = [...rowsAt(10, new Date('2026-11-23T08:00:00.000Z')), ...rowsAt(5, new Date(`${day}T14:00:00.000Z`))];
    await expect(stagedEnqueue(db, inBatches(mixed, 8), copy)).rejects.toBeInstanceOf(DayClosedError);
    expect(stored(db)).toHaveLength(20);
    other.close();
    db.close();
  });

  it("another process's insert while the import copies gets the write lock between slices, within its busy timeout, before the copy ends", async () => {
    // Each row the import copies takes 1 ms until the other side has tried (a TEMP trigger on the import's own
    // connection), so one transaction for the 2,000 rows would hold the write lock 2 s, twice the other side's
    // busy timeout of 1 s; slices of 200 rows hold it 0.2 s at a time.
    Object.assign(COPY_SLICES, { stepRows: 200, sliceMs: 0, gapMs: 100 });
    const file = path.join(dir, `q${n++}.db`);
    const conn = openConnection(file);
    const progress = new Int32Array(new SharedArrayBuffer(8));
    const pause = new Int32Array(new SharedArrayBuffer(4));
    conn.db.function('slow_row', () => {
      if (Atomics.load(progress, 1) === 0) Atomics.wait(pause, 0, 0, 1);
      Atomics.add(progress, 0, 1);
      Atomics.notify(progress, 0);
      return 0;
    });
    conn.db.exec('CREATE TEMP TRIGGER slow_copy AFTER INSERT ON main.submissions BEGIN SELECT slow_row(); END');
    // The server-like side, on a thread of its own: once the copy has begun it inserts one row in a transaction
    // with a busy timeout of 1 s, and says how many of the import's rows were committed by then.
    const worker = new Worker(
      `
      const { workerData, parentPort } = require('node:worker_threads');
      const Database = require('better-sqlite3');
      const db = new Database(workerData.file);
      db.pragma('busy_timeout = 1000');
      const progress = workerData.progress;
      while (Atomics.load(progress, 0) === 0) Atomics.wait(progress, 0, 0);
      try {
        db.prepare("INSERT INTO submissions (hash, submitted_at, ledger_date, file_name, source) VALUES (?, ?, ?, NULL, 'api_beta')")
          .run('ab'.repeat(32), '2026-11-22T12:00:01.000Z', '2026-11-22');
        const imported = db.prepare("SELECT COUNT(*) AS n FROM submissions WHERE source = 'import'").get().n;
        parentPort.postMessage({ ok: true, imported });
      } catch (err) {
        parentPort.postMessage({ ok: false, error: err.code + ': ' + err.message });
      }
      Atomics.store(progress, 1, 1);
      db.close();
      `,
      { eval: true, workerData: { file, progress } },
    );
    const answer = new Promise<{ ok: boolean; imported?: number; error?: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    const store = submissionStore(conn);
    const rows = rowsAt(2_000, new Date('2026-11-22T12:00:00.000Z'));
    const [n1, got] = await Promise.all([store.enqueueStream(inBatches(rows, 500)), answer]);
    await worker.terminate();
    expect(got).toEqual({ ok: true, imported: expect.any(Number) as number });
    // It went in while the copy was under way, not after it.
    expect(got.imported).toBeGreaterThan(0);
    expect(got.imported).toBeLessThan(2_000);
    expect(n1).toBe(2_000);
    expect(stored(conn.db).filter((r) => r.source === 'import')).toEqual(expected(rows));
    await conn.close();
  });
});
