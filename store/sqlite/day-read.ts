// Reading a day's rows out of `submissions` in parts of arrival order: the snapshot (the largest id now and the
// day's row count, in one read transaction), its cut into id ranges, and one range streamed in packed chunks
// (store.ts PackedDayRows). submissions.ts readDay streams a part on the store's own connection; a build's
// worker thread (pipeline/day-sort.ts) streams another on a read-only connection of its own, beside it (WAL lets
// readers run at once).
import Database from 'better-sqlite3';
import type { DayBatch, DayPart, DayRow, DaySplit } from '../store.ts';
import type { DB } from './db.ts';
import { neutral } from './errors.ts';

/**
 * The day's snapshot in at most `parts` parts: rows are only appended and ids grow with each commit (one writer
 * at a time), so the day's rows with an id up to the largest one now are exactly those committed now. The parts
 * cut the ids from the day's first to that largest one into ranges of equal width (a day's rows are mostly one
 * stretch of ids, so the parts hold about as many rows each).
 */
export function splitDaySnapshot(db: DB, date: string, parts: number): Omit<DaySplit, 'sqliteFile'> {
  const { last, total, first } = neutral(() =>
    db.transaction(() => {
      const last = (db.prepare('SELECT MAX(id) AS m FROM submissions').get() as { m: number | null }).m ?? 0;
      // Two queries: COUNT(*) alone counts the date's index entries (0.2 s at 10 M), MIN(id) is its first entry;
      // one query of both walks the index row by row (twice the time).
      const total = (
        db.prepare('SELECT COUNT(*) AS n FROM submissions WHERE ledger_date = ?').get(date) as { n: number }
      ).n;
      const first = (
        db.prepare('SELECT MIN(id) AS m FROM submissions WHERE ledger_date = ?').get(date) as { m: number | null }
      ).m;
      return { last, total, first: first ?? last };
    })(),
  );
  if (total === 0) return { total, parts: [] };
  const n = Math.max(1, Math.min(Math.floor(parts), last - first + 1));
  const cuts: DayPart[] = [];
  for (let k = 0, after = first - 1; k < n; k++) {
    const end = k === n - 1 ? last : first - 1 + Math.floor(((k + 1) * (last - first + 1)) / n);
    cuts.push({ total, after, last: end });
    after = end;
  }
  return { total, parts: cuts };
}

/** A read-only connection on the database `file`, for reading a part of a day beside the store's own. */
export function openDayReader(file: string): DB {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  return db;
}

/**
 * The day's rows with an id in the part's range, in arrival order, a window of `batchRows` ids a chunk (at most
 * as many rows): packed in one result row (store.ts PackedDayRows), or, when a time is not 24 ASCII characters,
 * as pairs (the reader refuses it by its text). Both aggregates take the window's rows in one pass of the date's
 * index, so the n-th hash and the n-th time are one row's. A window of ids, not a LIMIT of rows: the aggregates
 * then read the index directly, where a LIMIT needs a subquery (a coroutine that hands each row on: 0.33 µs a row
 * against 0.27 on 3 M rows); a window without rows of the day costs one step of the index. A time's length is
 * checked by its bytes only (SQLite's length() counts the characters, 0.05 µs a row), its characters here.
 */
export function* readDayPart(db: DB, date: string, part: DayPart, batchRows: number): Generator<DayBatch> {
  const { total, last } = part;
  const range = 'FROM submissions WHERE ledger_date = ? AND id > ? AND id <= ?';
  const packed = db
    .prepare(
      `SELECT count(*), sum(octet_length(submitted_at) = 24), string_agg(hash, ''), string_agg(submitted_at, '') ${range}`,
    )
    .raw(true);
  const pairs = db.prepare(`SELECT hash, submitted_at ${range} ORDER BY id`).raw(true);
  for (let after = part.after; after < last; after += batchRows) {
    const end = Math.min(last, after + batchRows);
    const [count, fixed, hashes, times] = neutral(() => packed.get(date, after, end)) as [
      number,
      number | null,
      string | null,
      string | null,
    ];
    if (count === 0) continue;
    // Each time 24 bytes, and together 24 characters a row: 24 ASCII characters each (a character that is not
    // ASCII takes more bytes in SQLite's UTF-8 than characters in JavaScript's string).
    if (fixed === count && hashes !== null && times !== null && times.length === 24 * count) {
      yield { total, rows: { count, hashes, times } };
    } else {
      const rows = neutral(() => pairs.all(date, after, end)) as Array<[string, string]>;
      yield { total, rows: rows.map(([hash, time]): DayRow => [hash, time]) };
    }
  }
}
