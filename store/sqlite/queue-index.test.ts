// The in-memory index of the queue's hashes (queue-index.ts): its answers are those of SQL over the whole table
// (each hash's earliest time per day), whatever the order, repeats and days of the rows; it catches up with rows
// written by another connection, in slices with the event loop running between them; a published day is dropped
// and read again when asked about; neither hashes sharing a long prefix nor colliding fingerprints change an answer.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, type DB } from './db.ts';
import { QueueIndex, type Fingerprint } from './queue-index.ts';
import { submissionInserter, type Submission } from './queue.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-queue-index-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshFile = (): string => path.join(dir, `q${n++}.db`);
const hex = (): string => crypto.randomBytes(32).toString('hex');
const DAYS = ['2026-03-01', '2026-03-02', '2026-03-03'];
const row = (hash: string, day: string, ms: number): Submission => ({
  hash,
  submittedAt: new Date(Date.parse(`${day}T00:00:00Z`) + ms),
  source: 'import',
});

/** What SQL over the whole table says: each hash's earliest time on each day, dates ascending. */
function truths(db: DB): Map<string, Array<{ date: string; submittedAt: Date }>> {
  const all = new Map<string, Array<{ date: string; submittedAt: Date }>>();
  const rows = db
    .prepare(
      'SELECT hash, ledger_date AS date, MIN(submitted_at) AS at FROM submissions GROUP BY hash, ledger_date ORDER BY ledger_date',
    )
    .all() as Array<{ hash: string; date: string; at: string }>;
  for (const r of rows) {
    const list = all.get(r.hash) ?? [];
    list.push({ date: r.date, submittedAt: new Date(r.at) });
    all.set(r.hash, list);
  }
  return all;
}
const truth = (db: DB, hash: string) => truths(db).get(hash) ?? [];

/** `count` rows over DAYS: hashes from `pool`, repeated, times in any order. */
function randomRows(pool: readonly string[], count: number): Submission[] {
  return Array.from({ length: count }, () =>
    row(pool[crypto.randomInt(pool.length)]!, DAYS[crypto.randomInt(DAYS.length)]!, crypto.randomInt(86_400_000)),
  );
}

async function expectTruth(index: QueueIndex, db: DB, hashes: readonly string[]): Promise<void> {
  const all = truths(db);
  for (const hash of hashes) expect(await index.queued(hash, '')).toEqual(all.get(hash) ?? []);
  for (const date of DAYS) {
    const want = new Map<string, Date>();
    for (const hash of hashes) {
      const at = all.get(hash)?.find((q) => q.date === date)?.submittedAt;
      if (at !== undefined) want.set(hash, at);
    }
    expect(await index.submittedOn(date, hashes)).toEqual(want);
  }
}

describe('QueueIndex', () => {
  it('answers as SQL over the table: earliest time per hash and day, with repeats, any order, across slices', async () => {
    const db = openDatabase(freshFile());
    const insert = submissionInserter(db);
    const pool = Array.from({ length: 300 }, hex);
    const index = new QueueIndex(db, { sliceRows: 37 });
    insert(randomRows(pool, 2_000));
    await expectTruth(index, db, [...pool, hex()]);
    // More rows after the first lookups: caught up from the last id read.
    insert(randomRows(pool, 1_000));
    await expectTruth(index, db, [...pool, hex()]);
    db.close();
  });

  it('sees rows another connection committed (another process: an import, another server)', async () => {
    const file = freshFile();
    const db = openDatabase(file);
    const index = new QueueIndex(db);
    const a = hex();
    expect(await index.queued(a, '')).toEqual([]);
    const other = openDatabase(file);
    submissionInserter(other)([row(a, DAYS[1]!, 5_000), row(hex(), DAYS[1]!, 1), row(a, DAYS[1]!, 3_000)]);
    other.close();
    expect(await index.queued(a, '')).toEqual([{ date: DAYS[1], submittedAt: new Date(`${DAYS[1]}T00:00:03.000Z`) }]);
    expect(await index.submittedOn(DAYS[1]!, [a])).toEqual(new Map([[a, new Date(`${DAYS[1]}T00:00:03.000Z`)]]));
    db.close();
  });

  it('catches up in slices: the event loop runs between two of them', async () => {
    const db = openDatabase(freshFile());
    submissionInserter(db)(Array.from({ length: 5_000 }, () => row(hex(), DAYS[0]!, 1)));
    const index = new QueueIndex(db, { sliceRows: 500 });
    let turns = 0;
    let counting = true;
    const tick = (): void => {
      turns++;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    await index.queued(hex(), '');
    counting = false;
    expect(index.size.entries).toBe(5_000);
    expect(turns).toBeGreaterThanOrEqual(9);
    db.close();
  });

  it('drops a published day, and reads it again when asked about it', async () => {
    const db = openDatabase(freshFile());
    const a = hex();
    const b = hex();
    submissionInserter(db)([row(a, DAYS[0]!, 10), row(b, DAYS[0]!, 20), row(a, DAYS[1]!, 30)]);
    const index = new QueueIndex(db);
    expect((await index.queued(a, '')).map((q) => q.date)).toEqual([DAYS[0], DAYS[1]]);
    expect(index.size.entries).toBe(3);
    // DAYS[0] is published: its entries leave memory, and a lookup no longer lists it.
    expect((await index.queued(a, DAYS[0]!)).map((q) => q.date)).toEqual([DAYS[1]]);
    expect(index.size.entries).toBe(1);
    expect(await index.submittedOn(DAYS[0]!, [a, b])).toEqual(
      new Map([
        [a, new Date(`${DAYS[0]}T00:00:00.010Z`)],
        [b, new Date(`${DAYS[0]}T00:00:00.020Z`)],
      ]),
    );
    expect(await index.queued(a, '')).toEqual(truth(db, a));
    db.close();
  });

  it('a server that only takes batches holds no more than three days: each batch drops the days up to two before its own', async () => {
    const db = openDatabase(freshFile());
    const days = ['2026-04-01', '2026-04-02', '2026-04-03', '2026-04-04', '2026-04-05'];
    const byDay = days.map(() => Array.from({ length: 50 }, hex));
    const index = new QueueIndex(db);
    for (const [i, date] of days.entries()) {
      submissionInserter(db)(byDay[i]!.map((h, j) => row(h, date, j)));
      const answered = await index.submittedOn(date, [byDay[i]![0]!, hex()]);
      expect([...answered.keys()]).toEqual([byDay[i]![0]]);
      // Held: this day and the one before it (the day two before is dropped by this call).
      expect(index.size.entries).toBe(Math.min(i + 1, 2) * 50);
    }
    // A status lookup about an earlier day reads it again, and answers as SQL over the table.
    const early = byDay[0]![7]!;
    expect(await index.queued(early, '')).toEqual(truth(db, early));
    // The next batch holds its own day and the day before again (and reads nothing else).
    const last = days[days.length - 1]!;
    expect(await index.submittedOn(last, [byDay[4]![3]!])).toEqual(
      new Map([[byDay[4]![3]!, new Date(`${last}T00:00:00.003Z`)]]),
    );
    expect(index.size.entries).toBe(100);
    db.close();
  });

  it('hashes sharing 60 of their 64 digits are each found, and one more such hash is not', async () => {
    const db = openDatabase(freshFile());
    const prefix = hex().slice(0, 60);
    const shared = Array.from({ length: 0x10000 }, (_, i) => prefix + i.toString(16).padStart(4, '0'));
    const absent = shared.pop()!;
    submissionInserter(db)(shared.map((h, i) => row(h, DAYS[2]!, i)));
    const index = new QueueIndex(db);
    expect(await index.queued(absent, '')).toEqual([]);
    expect(index.size.entries).toBe(shared.length);
    const some = [shared[0]!, shared[1_234]!, shared.at(-1)!];
    expect(await index.submittedOn(DAYS[2]!, [...some, absent])).toEqual(
      new Map(some.map((h) => [h, new Date(Date.parse(`${DAYS[2]}T00:00:00Z`) + shared.indexOf(h))])),
    );
    // 16 bytes a slot, at most 3/4 of the slots used, doubled when past it: 21.3 to 42.7 bytes an entry.
    expect(index.size.bytes / index.size.entries).toBeLessThan(43);
    db.close();
  });

  it('fingerprints of 4 bits (every hash colliding with a sixteenth of the others) answer the same, while the tables grow', async () => {
    const db = openDatabase(freshFile());
    const insert = submissionInserter(db);
    const tiny: Fingerprint = (hash, out) => {
      out[0] = 0;
      out[1] = parseInt(hash.slice(0, 2), 16) & 15;
    };
    const index = new QueueIndex(db, { fingerprint: tiny, sliceRows: 64 });
    const pool = Array.from({ length: 1_200 }, hex);
    insert(randomRows(pool, 2_000));
    await expectTruth(index, db, [...pool, hex(), hex()]);
    // More rows: each day's table grows past its first 1,024 slots while lookups go on.
    insert(randomRows(pool, 2_000));
    await expectTruth(index, db, pool);
    // Every day held again (the last batch lookup dropped the day two before its own), one entry per hash and day.
    await index.queued(pool[0]!, '');
    expect(index.size.entries).toBe(
      Number(db.prepare('SELECT COUNT(DISTINCT hash || ledger_date) FROM submissions').pluck().get()),
    );
    db.close();
  });
});

describe('QueueIndex within a budget of slots: tables frozen into runs on disk', () => {
  const BUDGET = 32;
  /** 4-bit fingerprints: hashes collide within a table, across runs and across days. */
  const tiny: Fingerprint = (hash, out) => {
    out[0] = parseInt(hash.slice(0, 1), 16) >>> 3;
    out[1] = parseInt(hash.slice(1, 2), 16) >>> 1;
  };
  const runFiles = (root: string): string[] =>
    fs.existsSync(root) ? fs.readdirSync(root).flatMap((f) => fs.readdirSync(path.join(root, f))) : [];

  it('after many freezes answers as the unbounded index: present, absent, earliest time, collisions across runs', async () => {
    const db = openDatabase(freshFile());
    const insert = submissionInserter(db);
    const runsDir = fs.mkdtempSync(path.join(dir, 'runs-'));
    const index = new QueueIndex(db, { fingerprint: tiny, sliceRows: 29, maxSlots: BUDGET, runsDir });
    const pool = Array.from({ length: 150 }, hex);
    // One hash first seen late, then earlier after many other rows (frozen in between), then in between.
    const late = hex();
    const fillers = (): Submission[] => Array.from({ length: 40 }, () => row(hex(), DAYS[1]!, 1));
    insert([row(late, DAYS[1]!, 5_000), ...fillers(), row(late, DAYS[1]!, 3_000), ...fillers()]);
    insert([row(late, DAYS[1]!, 4_000), ...randomRows(pool, 700)]);
    let peak = 0;
    let sampling = true;
    const sample = (): void => {
      const { bytes, runs } = index.size;
      peak = Math.max(peak, bytes - 8 * runs);
      if (sampling) setImmediate(sample);
    };
    setImmediate(sample);
    expect(await index.queued(late, '')).toEqual([
      { date: DAYS[1], submittedAt: new Date(`${DAYS[1]}T00:00:03.000Z`) },
    ]);
    await expectTruth(index, db, [...pool, late, hex(), hex()]);
    // More rows after the first lookups: new tables, frozen again.
    insert(randomRows(pool, 500));
    await expectTruth(index, db, [...pool, late, hex()]);
    await index.queued(pool[0]!, '');
    sampling = false;
    await index.frozen();
    const runs = runFiles(runsDir).length;
    expect(runs).toBeGreaterThan(20);
    // In memory: at most the budget's slots of 16 bytes and 8 bytes of fan-out a run (runs of under 32 entries
    // have one piece), and while a run is written its table, at most half the budget (a table never grows past it),
    // beside the fresh table of 8 slots that its day starts then (a fresh run of this test peaked there, 896 bytes).
    expect(index.size.bytes).toBeLessThanOrEqual(16 * BUDGET + 8 * runs);
    expect(peak).toBeLessThanOrEqual(16 * (BUDGET * 1.5 + 8));
    expect(index.size.runs).toBe(runs);
    db.close();
  });

  it('a dropped day takes its runs with it', async () => {
    const db = openDatabase(freshFile());
    const runsDir = fs.mkdtempSync(path.join(dir, 'runs-'));
    const index = new QueueIndex(db, { fingerprint: tiny, maxSlots: BUDGET, runsDir });
    const byDay = DAYS.map(() => Array.from({ length: 60 }, hex));
    submissionInserter(db)(DAYS.flatMap((date, i) => byDay[i]!.map((h, j) => row(h, date, j))));
    await index.queued(hex(), '');
    await index.frozen();
    const all = runFiles(runsDir).length;
    expect(all).toBeGreaterThanOrEqual(3 * 4);
    expect(index.size.runs).toBe(all);
    // DAYS[0] published: its runs are deleted, the others kept and still answering.
    expect(await index.queued(byDay[1]![5]!, DAYS[0]!)).toEqual([
      { date: DAYS[1], submittedAt: new Date(`${DAYS[1]}T00:00:00.005Z`) },
    ]);
    await index.frozen();
    expect(index.size.runs).toBeLessThan(all);
    expect(runFiles(runsDir)).toHaveLength(index.size.runs);
    // Every day published: no run left.
    await index.queued(hex(), DAYS[2]!);
    await index.frozen();
    expect(index.size).toEqual({ entries: 0, bytes: 0, runs: 0 });
    expect(runFiles(runsDir)).toEqual([]);
    db.close();
  });

  it("a process's run folder goes with it at exit", () => {
    const runsDir = fs.mkdtempSync(path.join(dir, 'runs-'));
    const child = `
      import { openDatabase } from ${JSON.stringify(path.resolve('store/sqlite/db.ts'))};
      import { QueueIndex } from ${JSON.stringify(path.resolve('store/sqlite/queue-index.ts'))};
      import { submissionInserter } from ${JSON.stringify(path.resolve('store/sqlite/queue.ts'))};
      const db = openDatabase(${JSON.stringify(freshFile())});
      const at = new Date('${DAYS[0]}T00:00:00Z');
      submissionInserter(db)(Array.from({ length: 100 }, (_, i) => ({ hash: i.toString(16).padStart(64, '0'), submittedAt: at, source: 'import' })));
      const index = new QueueIndex(db, { maxSlots: ${BUDGET}, runsDir: ${JSON.stringify(runsDir)} });
      await index.queued('0'.repeat(64), '');
      await index.frozen();
      process.stdout.write(String(index.size.runs));
    `;
    const runs = execFileSync(process.execPath, ['--input-type=module', '-e', child], { encoding: 'utf8' });
    expect(Number(runs)).toBeGreaterThan(5);
    expect(fs.readdirSync(runsDir)).toEqual([]);
  });

  it('removes the run folders of processes that are gone, and only those', () => {
    const db = openDatabase(freshFile());
    const runsDir = fs.mkdtempSync(path.join(dir, 'runs-'));
    // Linux pids stop at 2^22: no process has 999999999. This process's pid on a folder it did not make: a pid
    // used again (a container's pid 1 after a restart).
    const gone = ['999999999-0a1b2c3d', `${process.pid}-0badc0de`];
    const kept = [`${process.ppid}-cafe0001`, 'notes'];
    for (const name of [...gone, ...kept]) {
      fs.mkdirSync(path.join(runsDir, name));
      fs.writeFileSync(path.join(runsDir, name, '0.run'), 'x');
    }
    new QueueIndex(db, { runsDir });
    expect(fs.readdirSync(runsDir).sort()).toEqual([...kept].sort());
    db.close();
  });
});
