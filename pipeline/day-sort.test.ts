// A day sorted on two threads (day-sort.ts sortStoredDay: a worker thread reads the second half of the day's ids
// on its own SQLite connection) gives the same entries as the one-thread sort in memory, whatever the number of
// runs or none (both threads reading into shared columns), however the day's ids are spread among other days'
// rows, with repeats in both halves; a malformed row in the worker's half is refused with the message the
// one-thread sort gives, and no spill file is left behind.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FormatError } from '../core/errors.ts';
import { openDatabase } from '../store/sqlite/db.ts';
import { openSqliteStore } from '../store/sqlite/engine.ts';
import type { Store } from '../store/store.ts';
import { dayBatches, sortDay, sortStoredDay, ROW_BYTES, type SortedDay } from './day-sort.ts';

const DAY = '2025-11-02';
const dirs: string[] = [];
const stores: Store[] = [];
afterAll(async () => {
  for (const s of stores) await s.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** A SQLite store whose rows are `rows` ([hash, time, date]) in that order of ids, and an archive folder. */
function storeOf(rows: ReadonlyArray<readonly [string, string, string]>): { store: Store; archive: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-day-sort-'));
  dirs.push(dir);
  const file = path.join(dir, 'timeseal.db');
  const db = openDatabase(file);
  const insert = db.prepare(
    "INSERT INTO submissions (hash, submitted_at, ledger_date, source) VALUES (?, ?, ?, 'import')",
  );
  db.transaction(() => {
    for (const row of rows) insert.run(...row);
  })();
  db.close();
  const store = openSqliteStore(file);
  stores.push(store);
  return { store, archive: path.join(dir, 'ledgers') };
}

/** The sorted entries as hex hashes and their times. */
function entries(day: SortedDay): string[] {
  const out: string[] = [];
  for (const batch of dayBatches(day.data)) {
    for (let i = 0; i < batch.ms.length; i++)
      out.push(`${Buffer.from(batch.hashes.subarray(32 * i, 32 * i + 32)).toString('hex')} ${batch.ms[i]}`);
  }
  return out;
}

const time = (ms: number) => new Date(Date.parse(`${DAY}T00:00:00.000Z`) + ms).toISOString();

/** 6,000 distinct hashes of DAY, 1,500 of them again (earlier or later) near the end of the ids, the day's second
 * half of ids shared with 4,000 rows of the next day; returns the rows and the distinct hashes. */
function dayRows(): { rows: Array<[string, string, string]>; distinct: number } {
  const hashes = Array.from({ length: 6_000 }, () => crypto.randomBytes(32).toString('hex'));
  const rows: Array<[string, string, string]> = hashes.map((h, i) => [h, time(10_000 + 7 * i), DAY]);
  for (let i = 0; i < 1_500; i++) {
    rows.push([hashes[4 * i]!, time(i % 2 === 0 ? 3 * i : 50_000 + i), DAY]);
    if (i < 1_000) rows.push([hashes[4 * i + 1]!, time(60_000 + i), DAY]);
    for (let k = 0; k < 4 && i < 1_000; k++) rows.push([crypto.randomBytes(32).toString('hex'), time(0), '2025-11-03']);
  }
  return { rows, distinct: hashes.length };
}

describe('sortStoredDay', () => {
  it('two threads and their runs give the entries of the one-thread sort in memory', async () => {
    const { rows, distinct } = dayRows();
    const { store, archive } = storeOf(rows);
    const reference = await sortDay(store.submissions.readDay(DAY), DAY, { archive, memoryBytes: 2 ** 30 });
    expect(reference.runs).toBe(0);
    const expected = entries(reference);
    expect(expected).toHaveLength(distinct);
    // A repeat keeps its earliest time, whichever half of the ids it is in.
    expect(expected).toContain(`${rows[0]![0]} ${Date.parse(time(0))}`);
    for (const runRows of [1_000, 2_600, 4_000]) {
      const day = await sortStoredDay(store.submissions, DAY, { archive, memoryBytes: ROW_BYTES * runRows });
      try {
        // Both halves spilled runs of at most half a run's rows each: 8,500 rows of the day.
        expect(day.runs).toBeGreaterThanOrEqual(2 * Math.ceil(8_500 / 2 / Math.floor(runRows / 2)) - 1);
        expect(day.count).toBe(distinct);
        expect(entries(day)).toEqual(expected);
      } finally {
        day.dispose();
      }
    }
    // A day that fits is read by both threads into the same columns and sorted there, in place (at any size here;
    // a build does so from 1,000,000 rows on).
    const inMemory = await sortStoredDay(store.submissions, DAY, {
      archive,
      memoryBytes: ROW_BYTES * 8_500,
      twoThreadsFrom: 0,
    });
    expect(inMemory.runs).toBe(0);
    expect(entries(inMemory)).toEqual(expected);
    expect(fs.readdirSync(path.join(archive, '.tmp'))).toEqual([]);
  });

  // Too short; 24 bytes of UTF-8 in 23 characters; 24 characters in 25 bytes.
  it.each(['2025-11-02 10:00:00', '2025-11-02T10:00:00.00é', '2025-11-02T10:00:00.000é'])(
    "a malformed time in the worker's half (%s) is refused as the one-thread sort refuses it; no spill file is left",
    async (bad) => {
      const { rows } = dayRows();
      rows.splice(rows.length - 10, 0, [crypto.randomBytes(32).toString('hex'), bad, DAY]);
      const { store, archive } = storeOf(rows);
      const one = await sortDay(store.submissions.readDay(DAY), DAY, { archive, memoryBytes: 2 ** 30 }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(one).toBeInstanceOf(FormatError);
      // Spilled in runs, and read into shared columns (the day's 8,501 rows fit).
      for (const rows of [1_000, 8_501]) {
        const two = sortStoredDay(store.submissions, DAY, {
          archive,
          memoryBytes: ROW_BYTES * rows,
          twoThreadsFrom: 0,
        });
        await expect(two).rejects.toThrow(FormatError);
        await expect(two).rejects.toThrow((one as Error).message);
      }
      expect((one as Error).message).toContain(`not an ISO-8601 UTC time with milliseconds in the queue: ${bad}`);
      expect(fs.readdirSync(path.join(archive, '.tmp'))).toEqual([]);
    },
  );
});
