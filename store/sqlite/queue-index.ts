// The queue's hashes by day, in the serving process's memory: how the SQLite engine answers Store.submissions
// `queued` (the status lookup) and `submittedOn` (a batch's "already") without reading a day's rows and without
// an index of the hash on `submissions`. Any B-tree of random keys kept up to date by every commit costs that
// commit a leaf of its own per row (docs/BENCHMARKS.md, "What a hash index costs each SQLite commit"), so the
// table keeps only its date index and this index is caught up from the table before each lookup.
//
// Catching up is by id: SQLite has one writer at a time and a new row's id is the largest one + 1, so ids grow in
// commit order and the rows with an id above the last one read are exactly those committed since, by any process
// (this server's group-commit writer, `timeseal import`, another server on the same file). They are read in slices
// of SLICE_ROWS, the event loop running between two slices. Only days after a floor are held: the status lookup
// gives the last published day, and the days up to it are dropped (a batch's lookup drops those up to two days
// before its own); a lookup about an earlier day lowers the floor
// and reads that day's rows again (adding a row twice changes nothing).
//
// Each day is an open-addressing table (linear probing) in typed arrays, one slot per distinct hash: a 64-bit
// fingerprint of the hash and the id of its earliest row that day (16 bytes a slot, at most 3/4 of the slots
// used; docs/BENCHMARKS.md gives the bytes per queued row measured). The fingerprint is SHA-256 of a random
// per-process secret and the hash: a submitter chooses hash values freely, and with a fingerprint it could compute
// it could make any number of them share one probe sequence. A fingerprint that matches is confirmed by reading
// its row by id and comparing the whole hash, so a collision costs one read and never changes an answer.
//
// The tables' slots, all days together, stay within a budget (`maxSlots`, default MAX_SLOTS): when a table would
// grow past it, the largest table is frozen instead and its day starts a new, empty one. A frozen table stays
// searchable in memory while it is written to disk as a run (queue-runs.ts: sorted by fingerprint, a small
// fan-out table in memory, one pread a lookup), in slices with the event loop running between two, one at a
// time (a second freeze waits for the first's run). A day's lookup reads its table, its frozen tables and each
// of its runs, and answers the earliest time found: a hash can have an entry in several of them. A dropped day's
// runs are deleted. The runs live in a folder of this process under `runsDir` (default `<database
// folder>/cache/queue-index/`), removed at exit; nothing survives a restart.
import { hash as sha, randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type Database from 'better-sqlite3';
import type { DB } from './db.ts';
import { Run, writeRun, runFolder, removeStaleRunFolders, type RowReader } from './queue-runs.ts';

/** Rows read per catch-up query: about a millisecond of work, then the event loop runs (docs/BENCHMARKS.md). */
const SLICE_ROWS = 512;
/** Slots of a day's table when it is made (a power of two); it doubles when more than 3/4 of them are used. */
const INITIAL_SLOTS = 1_024;
/** The slots of every day's table together, at most: 2^23 slots of 16 bytes, 128 MiB (a day's table then holds
 * up to 3,145,728 entries, 2^22 slots, before it is frozen; docs/BENCHMARKS.md). */
const MAX_SLOTS = 1 << 23;
/** Sorts after every date: the upper bound of "every day after the floor". */
const LAST_DATE = '9999-12-31';

/** Writes a 64-bit fingerprint of `hash` (64 lower-case hexadecimal digits) into out[0] and out[1]. */
export type Fingerprint = (hash: string, out: Uint32Array) => void;

/** SHA-256 of a secret and the hash, its first 8 bytes: keyed with 32 random bytes unless `secret` is given. */
export function keyedFingerprint(secret: string = randomBytes(32).toString('hex')): Fingerprint {
  // The digest as a 'binary' string (one character a byte): no Buffer a hash, whose backing stores a catch-up
  // of a million rows would leave to the garbage collector.
  const word = (d: string, k: number): number =>
    (d.charCodeAt(k) | (d.charCodeAt(k + 1) << 8) | (d.charCodeAt(k + 2) << 16) | (d.charCodeAt(k + 3) << 24)) >>> 0;
  return (hash, out) => {
    const digest = sha('sha256', secret + hash, 'binary');
    out[0] = word(digest, 0);
    out[1] = word(digest, 4);
  };
}

/** The submission time of the row that the last `Slots.find` matched. */
let foundAt = '';

/** Open-addressing slots (linear probing): slot i holds a fingerprint (high[i], low[i]) and a row id (ids[i]; 0 is
 * empty: SQLite's rowids start at 1). */
class Slots {
  readonly high: Uint32Array;
  readonly low: Uint32Array;
  readonly ids: Float64Array;
  readonly mask: number;

  constructor(slots: number) {
    this.high = new Uint32Array(slots);
    this.low = new Uint32Array(slots);
    this.ids = new Float64Array(slots);
    this.mask = slots - 1;
  }

  /** The slot holding `hash` (its row's time in foundAt), else the empty slot where it would go. */
  find(high: number, low: number, hash: string, read: RowReader): number {
    for (let i = low & this.mask; ; i = (i + 1) & this.mask) {
      const id = this.ids[i]!;
      if (id === 0) return i;
      if (this.high[i] !== high || this.low[i] !== low) continue;
      const row = read(id);
      if (row !== undefined && row[0] === hash) {
        foundAt = row[1];
        return i;
      }
    }
  }

  /** Puts an entry that these slots do not hold. */
  put(high: number, low: number, id: number): void {
    let i = low & this.mask;
    while (this.ids[i] !== 0) i = (i + 1) & this.mask;
    this.high[i] = high;
    this.low[i] = low;
    this.ids[i] = id;
  }

  get bytes(): number {
    return this.high.byteLength + this.low.byteLength + this.ids.byteLength;
  }
}

/** Old slots moved into the new ones at each add while a day's table grows: the move ends after a quarter of the
 * old size in adds, long before the new slots (twice as many) are 3/4 full, and no add ever waits for a whole
 * rehash (which took ~90 ms at a million entries). */
const MOVES_PER_ADD = 8;

/** Distinct hashes of one day, each with the id of its earliest row that day among the rows added. */
class DayTable {
  #slots: Slots;
  /** While growing: the previous slots; those from #moved on are not in #slots yet. */
  #old: Slots | undefined;
  #moved = 0;
  size = 0;

  constructor(slots: number) {
    this.#slots = new Slots(slots);
  }

  /** The time of `hash`'s earliest row that day, if it has one. */
  at(high: number, low: number, hash: string, read: RowReader): string | undefined {
    if (this.#slots.ids[this.#slots.find(high, low, hash, read)] !== 0) return foundAt;
    const old = this.#old;
    if (old !== undefined && old.ids[old.find(high, low, hash, read)] !== 0) return foundAt;
    return undefined;
  }

  /** Row `id` of `hash` at `at`: the hash's entry keeps the earliest time's row (the first of equal times).
   * True when the table is now more than 3/4 full: the caller grows it or freezes it before the next add. */
  add(high: number, low: number, id: number, hash: string, at: string, read: RowReader): boolean {
    this.#move(MOVES_PER_ADD);
    let slots = this.#slots;
    let i = slots.find(high, low, hash, read);
    // Not in the new slots: in the old ones only if not moved yet (a moved entry is found in the new ones).
    if (slots.ids[i] === 0 && this.#old !== undefined) {
      const k = this.#old.find(high, low, hash, read);
      if (this.#old.ids[k] !== 0) [slots, i] = [this.#old, k];
    }
    if (slots.ids[i] !== 0) {
      if (at < foundAt) slots.ids[i] = id;
      return false;
    }
    slots.high[i] = high;
    slots.low[i] = low;
    slots.ids[i] = id;
    return ++this.size * 4 > this.#slots.ids.length * 3;
  }

  /** Doubles the slots (the old ones moved over the next adds). */
  grow(): void {
    this.#move(Infinity);
    this.#old = this.#slots;
    this.#moved = 0;
    this.#slots = new Slots(this.#old.ids.length * 2);
  }

  /** Its one array of slots, every entry in it (a table that takes no more adds: to be frozen). */
  settled(): Slots {
    this.#move(Infinity);
    return this.#slots;
  }

  /** Its slots, the old ones included while it grows. */
  get slots(): number {
    return this.#slots.ids.length + (this.#old?.ids.length ?? 0);
  }

  /** Moves up to `count` old slots into the new ones. */
  #move(count: number): void {
    const old = this.#old;
    if (old === undefined) return;
    const end = Math.min(old.ids.length, this.#moved + count);
    for (let k = this.#moved; k < end; k++)
      if (old.ids[k] !== 0) this.#slots.put(old.high[k]!, old.low[k]!, old.ids[k]!);
    this.#moved = end;
    if (end === old.ids.length) this.#old = undefined;
  }

  get bytes(): number {
    return this.#slots.bytes + (this.#old?.bytes ?? 0);
  }
}

/** One held day: the table that takes its rows, the tables frozen and not written yet, and its runs. */
class Day {
  table: DayTable;
  readonly frozen: DayTable[] = [];
  readonly runs: Run[] = [];
  /** Set when the day is dropped: a run written after that is deleted at once. */
  dropped = false;

  constructor(slots: number) {
    this.table = new DayTable(slots);
  }

  /** The earliest time of `hash` in its table, frozen tables and runs, if any. */
  at(high: number, low: number, hash: string, read: RowReader): string | undefined {
    let earliest = this.table.at(high, low, hash, read);
    for (const part of [...this.frozen, ...this.runs]) {
      const at = part.at(high, low, hash, read);
      if (at !== undefined && (earliest === undefined || at < earliest)) earliest = at;
    }
    return earliest;
  }

  drop(): void {
    this.dropped = true;
    for (const run of this.runs.splice(0)) run.remove();
  }
}

export interface QueueIndexOptions {
  /** The fingerprint (default: keyedFingerprint() with a secret of this process); a test gives a tiny one. */
  fingerprint?: Fingerprint;
  /** Rows read per catch-up query (default SLICE_ROWS). */
  sliceRows?: number;
  /** The slots of all the day tables together, at most (default MAX_SLOTS); a test gives a handful. */
  maxSlots?: number;
  /** Where this process's folder of runs is made (default: `<database folder>/cache/queue-index`, or the
   * system's temporary folder for a database in memory); folders of processes gone are removed from it. */
  runsDir?: string;
}

/** The index of `submissions` on `db` (module comment). Its lookups see every row committed before they began. */
export class QueueIndex {
  readonly #db: DB;
  readonly #fingerprint: Fingerprint;
  readonly #sliceRows: number;
  readonly #maxSlots: number;
  /** Slots of a new table: INITIAL_SLOTS, fewer when the budget is tiny (at least 8: a table frozen at 3/4 full
   * and one more entry keeps an empty slot, where a lookup of an absent hash stops). */
  readonly #newSlots: number;
  readonly #runsRoot: string;
  /** This process's folder of runs, made at the first freeze. */
  #runsDir: string | undefined;
  #runNumber = 0;
  /** The freeze under way (its run being written), if any: never rejects. */
  #freezing: Promise<void> = Promise.resolve();
  readonly #fp = new Uint32Array(2);
  readonly #days = new Map<string, Day>();
  /** Rows already added before the floor was last lowered (a lowering reads them again): ids up to `through`
   * of the days after `above`. */
  #replay = { through: 0, above: LAST_DATE };
  /** Days strictly after it are held; undefined before the first lookup. */
  #floor: string | undefined;
  /** The largest id read. */
  #seen = 0;
  /** The catch-up under way: one at a time. */
  #tail: Promise<void> = Promise.resolve();
  readonly #slice: Database.Statement;
  readonly #row: Database.Statement;
  readonly #read: RowReader;

  constructor(db: DB, options: QueueIndexOptions = {}) {
    this.#db = db;
    this.#fingerprint = options.fingerprint ?? keyedFingerprint();
    this.#sliceRows = options.sliceRows ?? SLICE_ROWS;
    this.#maxSlots = options.maxSlots ?? MAX_SLOTS;
    this.#newSlots = Math.max(8, Math.min(INITIAL_SLOTS, 2 ** Math.floor(Math.log2(this.#maxSlots / 4))));
    this.#runsRoot =
      options.runsDir ??
      (db.memory
        ? path.join(os.tmpdir(), 'timeseal-queue-index')
        : path.join(path.dirname(path.resolve(db.name)), 'cache', 'queue-index'));
    removeStaleRunFolders(this.#runsRoot);
    this.#slice = db
      .prepare('SELECT id, hash, submitted_at, ledger_date FROM submissions WHERE id > ? ORDER BY id LIMIT ?')
      .raw(true);
    this.#row = db.prepare('SELECT hash, submitted_at FROM submissions WHERE id = ?').raw(true);
    this.#read = (id) => this.#row.get(id) as [string, string] | undefined;
  }

  /** For each day after `lastPublished` on which `hash` was submitted, its earliest time there, days ascending.
   * The days up to `lastPublished` are dropped from memory. */
  queued(hash: string, lastPublished: string): Promise<Array<{ date: string; submittedAt: Date }>> {
    return this.#serial(lastPublished, lastPublished, () => {
      this.#fingerprint(hash, this.#fp);
      const found: Array<{ date: string; submittedAt: Date }> = [];
      for (const date of [...this.#days.keys()].sort()) {
        if (date <= lastPublished) continue;
        const at = this.#lookup(this.#days.get(date)!, hash);
        if (at !== undefined) found.push({ date, submittedAt: new Date(at) });
      }
      return found;
    });
  }

  /** Which of `hashes` were submitted on `date`, each with its earliest time that day. The days up to two before
   * `date` are dropped from memory: a batch is for today, whose day before is published or being built, so a
   * server that only takes batches holds no more than three days (a status lookup about an earlier day reads it
   * again). */
  submittedOn(date: string, hashes: readonly string[]): Promise<Map<string, Date>> {
    if (hashes.length === 0) return Promise.resolve(new Map());
    const before = dayBefore(date);
    return this.#serial(before, dayBefore(before), () => {
      const found = new Map<string, Date>();
      const day = this.#days.get(date);
      if (day === undefined) return found;
      for (const hash of hashes) {
        this.#fingerprint(hash, this.#fp);
        const at = this.#lookup(day, hash);
        if (at !== undefined) found.set(hash, new Date(at));
      }
      return found;
    });
  }

  /** What the index holds: (day, hash) entries (a hash counted once in each table and run of a day that has it),
   * the bytes it keeps in memory (the tables' arrays and the runs' fan-out tables) and the number of runs. */
  get size(): { entries: number; bytes: number; runs: number } {
    let entries = 0;
    let bytes = 0;
    let runs = 0;
    for (const day of this.#days.values()) {
      for (const part of [day.table, ...day.frozen, ...day.runs]) {
        entries += part instanceof Run ? part.entries : part.size;
        bytes += part.bytes;
      }
      runs += day.runs.length;
    }
    return { entries, bytes, runs };
  }

  /** Resolves once the freeze under way, if any, has its run written (a frozen table leaves memory then). */
  frozen(): Promise<void> {
    return this.#freezing;
  }

  /** The time of `hash` in `day` (its fingerprint in #fp), if any. */
  #lookup(day: Day, hash: string): string | undefined {
    return day.at(this.#fp[0]!, this.#fp[1]!, hash, this.#read);
  }

  /** `answer` once the days after `floor` are caught up, the days up to `dropThrough` (at most `floor`) dropped
   * and any others already held kept: one call at a time, so that no other call's catch-up changes the days
   * between the two. */
  #serial<T>(floor: string, dropThrough: string, answer: () => T): Promise<T> {
    const run = this.#tail.then(async () => {
      await this.#catchUp(floor, dropThrough);
      return answer();
    });
    this.#tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  async #catchUp(floor: string, dropThrough: string): Promise<void> {
    if (this.#floor === undefined || floor < this.#floor) this.#lower(floor);
    else if (dropThrough > this.#floor) {
      this.#floor = dropThrough;
      for (const [date, day] of this.#days) {
        if (date > dropThrough) continue;
        day.drop();
        this.#days.delete(date);
      }
    }
    const held = this.#floor!;
    for (;;) {
      const rows = this.#slice.all(this.#seen, this.#sliceRows) as Array<[number, string, string, string]>;
      let day: Day | undefined;
      let dayDate = '';
      for (const [id, hash, at, date] of rows) {
        if (date <= held || (id <= this.#replay.through && date > this.#replay.above)) continue;
        if (date !== dayDate) {
          dayDate = date;
          day = this.#days.get(date);
          if (day === undefined) this.#days.set(date, (day = new Day(this.#newSlots)));
        }
        this.#fingerprint(hash, this.#fp);
        if (day!.table.add(this.#fp[0]!, this.#fp[1]!, id, hash, at, this.#read)) await this.#makeRoom(day!);
      }
      if (rows.length > 0) this.#seen = rows[rows.length - 1]![0];
      if (rows.length < this.#sliceRows) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Grows `day`'s table, which is more than 3/4 full, if the slots fit the budget; else freezes the largest
   * table (another day's if larger, then tries again) or this one. */
  async #makeRoom(day: Day): Promise<void> {
    for (;;) {
      let used = 0;
      let largest = day;
      for (const held of this.#days.values()) {
        used += held.table.slots;
        if (held.table.slots > largest.table.slots) largest = held;
      }
      // Growing holds the old slots and twice as many new ones for a while.
      if (used + 2 * day.table.slots <= this.#maxSlots) return day.table.grow();
      await this.#freeze(largest);
      if (largest === day) return;
    }
  }

  /** Moves `day`'s table to its frozen ones (a new empty table takes its rows) and writes it as a run, once the
   * freeze under way, if any, is over. */
  async #freeze(day: Day): Promise<void> {
    // Two callers may wait for the same freeze: the first to resume starts the next one, the other waits for it.
    for (let under = this.#freezing; ; under = this.#freezing) {
      await under;
      if (under === this.#freezing) break;
    }
    const table = day.table;
    day.table = new DayTable(this.#newSlots);
    day.frozen.push(table);
    this.#runsDir ??= runFolder(this.#runsRoot);
    const file = path.join(this.#runsDir, `${this.#runNumber++}.run`);
    this.#freezing = writeRun(table.settled(), table.size, file).then(
      (run) => {
        day.frozen.splice(day.frozen.indexOf(table), 1);
        if (day.dropped) run.remove();
        else day.runs.push(run);
      },
      // A run that cannot be written (a full disk): the table stays in memory, the answers unchanged.
      () => undefined,
    );
  }

  /** Holds the days after `floor` from now on: the rows of the days it did not hold are read (again) from the
   * first one's id; the days' first ids come from the date index, one seek each. */
  #lower(floor: string): void {
    const before = this.#floor ?? LAST_DATE;
    const next = this.#db.prepare('SELECT MIN(ledger_date) AS d FROM submissions WHERE ledger_date > ?');
    const first = this.#db.prepare('SELECT id FROM submissions WHERE ledger_date = ? ORDER BY id LIMIT 1').pluck();
    let start = Infinity;
    for (
      let d = (next.get(floor) as { d: string | null }).d;
      d !== null && d <= before;
      d = (next.get(d) as { d: string | null }).d
    ) {
      start = Math.min(start, first.get(d) as number);
    }
    if (this.#floor === undefined) {
      this.#seen =
        start === Infinity
          ? ((this.#db.prepare('SELECT MAX(id) FROM submissions').pluck().get() as number | null) ?? 0)
          : start - 1;
    } else if (start !== Infinity && start - 1 < this.#seen) {
      // The rows of the days held already are read again from `start`: those read before are skipped.
      this.#replay = { through: this.#seen, above: this.#floor };
      this.#seen = start - 1;
    }
    this.#floor = floor;
  }
}

/** The UTC date before `date` (YYYY-MM-DD). */
function dayBefore(date: string): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
}
