// A day's rows sorted by hash and de-duplicated (each hash with its earliest time) within a memory budget
// (TIMESEAL_BUILD_MEMORY_MB, docs/CONFIGURATION.md): a day whose rows fit is read into one pair of columns in
// shared memory and sorted there, in place (store/day-columns.ts columnsInPlace); a larger one is an external
// merge sort, as the textbook one: runs of the rows that fit, each sorted in place and spilled to the archive's
// temp folder, then merged in one k-way pass into two files (the hashes, the times) that the build reads in
// batches, as often as it needs and from two threads. Both give the same entries in the same order; the spill files are temp files (removed by
// `dispose`, and by the next run after a kill: pipeline/files.ts removeStaleTemps), never part of the archive.
import fs from 'node:fs';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { compareHashAt } from '../core/encoding.ts';
import { FormatError, TimesealError, type ErrorCode } from '../core/errors.ts';
import { dayRowCount, type DayBatch, type DayPart, type SubmissionStore } from '../store/store.ts';
import { columnsInPlace, decodeRows, foldSorted, type DayColumns } from '../store/day-columns.ts';
import { sortRowsInPlace, splitInPlace } from '../store/sort-keys.ts';
import { tempFile } from './files.ts';

/**
 * What a build reads a day's sorted entries from: the columns in memory (in SharedArrayBuffers when sorted
 * here, so a worker thread reads them without a copy), or the merged files of an external sort (hash i at
 * byte 32·i of `hashes`, its time at byte 8·i of `ms`, a Float64Array's bytes). Either can be posted to a
 * worker (index-worker.ts) and read there with dayBatches.
 */
export type DayData =
  | { hashes: Uint8Array; ms: Float64Array }
  | { files: { hashes: string; ms: string }; count: number; batchEntries: number };

export interface SortedDay {
  count: number;
  data: DayData;
  /** Sorted runs spilled to disk and merged: 0 for a day sorted in memory. */
  runs: number;
  /** Removes the spill files (none for a day sorted in memory); again, it does nothing. */
  dispose(): void;
}

/** A batch of the sorted entries: views, valid until the next batch is asked for. */
export interface EntryBatch {
  hashes: Uint8Array;
  ms: Float64Array;
}

/** Bytes a row costs while its run (or the whole day) is sorted in memory: its hash (32) and its time (8) as read,
 * sorted where they are (store/sort-keys.ts sortRowsInPlace, whose own memory is a few count arrays of 1 KB,
 * whatever the rows). */
export const ROW_BYTES = 40;

/** Entries a batch of dayBatches holds at most: 2.6 MB of columns (an external sort's batches are a 16th of its
 * budget, so that a tiny budget crosses many batch boundaries, as a test of it needs). */
const BATCH_ENTRIES = 65_536;

/** Rows from which sortStoredDay reads a day that fits on two threads: a worker costs ~0.1 s to start, and two
 * threads read 1,000 rows ~0.15 ms sooner than one (400,000 rows: 0.27 s on one thread, 0.33–0.42 s on two;
 * 10,000,000: ~3 s sooner). */
const TWO_THREADS_FROM = 1_000_000;

/** Rows a query of the worker of sortStoredDay reads: the store's own chunk (store/sqlite/submissions.ts). */
const DAY_PART_CHUNK = 4_096;

/** The number of entries of `data`. */
export function dayCount(data: DayData): number {
  return 'files' in data ? data.count : data.ms.length;
}

/** The entries of `data` in order, `batchEntries` at a time (the last batch may be shorter). */
export function* dayBatches(data: DayData): Generator<EntryBatch> {
  if (!('files' in data)) {
    for (let at = 0; at < data.ms.length; at += BATCH_ENTRIES) {
      const end = Math.min(at + BATCH_ENTRIES, data.ms.length);
      yield { hashes: data.hashes.subarray(32 * at, 32 * end), ms: data.ms.subarray(at, end) };
    }
    return;
  }
  const hashFd = fs.openSync(data.files.hashes, 'r');
  const msFd = fs.openSync(data.files.ms, 'r');
  try {
    const { batchEntries } = data;
    const hashes = new Uint8Array(32 * batchEntries);
    const ms = new Float64Array(batchEntries);
    const msBytes = new Uint8Array(ms.buffer);
    for (let at = 0; at < data.count; at += batchEntries) {
      const n = Math.min(batchEntries, data.count - at);
      readFully(hashFd, hashes, 32 * n, 32 * at, data.files.hashes);
      readFully(msFd, msBytes, 8 * n, 8 * at, data.files.ms);
      yield { hashes: hashes.subarray(0, 32 * n), ms: ms.subarray(0, n) };
    }
  } finally {
    fs.closeSync(hashFd);
    fs.closeSync(msFd);
  }
}

function writeFully(fd: number, bytes: Uint8Array): void {
  for (let done = 0; done < bytes.length;) done += fs.writeSync(fd, bytes, done, bytes.length - done);
}

function readFully(fd: number, into: Uint8Array, length: number, position: number, file: string): void {
  for (let got = 0; got < length;) {
    const n = fs.readSync(fd, into, got, length - got, position + got);
    if (n === 0) throw new Error(`${file}: truncated at byte ${position + got}`);
    got += n;
  }
}

/**
 * Reads the day's rows (any engine's readDay batches) and sorts them within `memoryBytes`, spilling to temp
 * files under `archive` when the day's rows need more (ROW_BYTES a row).
 */
export async function sortDay(
  batches: AsyncIterable<DayBatch>,
  date: string,
  options: { archive: string; memoryBytes: number },
): Promise<SortedDay> {
  const runRows = Math.max(1, Math.floor(options.memoryBytes / ROW_BYTES));
  const spill = new Spill(options.archive);
  const runs = new RunSorter(spill, runRows, date);
  try {
    for await (const batch of batches) runs.add(batch);
    runs.check(runs.seen);
    if (runs.files.length === 0) {
      const columns = runs.columns();
      return { count: columns.count, data: { hashes: columns.hashes, ms: columns.ms }, runs: 0, dispose: () => {} };
    }
    runs.spillRest();
    return merged(spill, runs.files, options.memoryBytes);
  } catch (err) {
    spill.removeAll();
    throw err;
  } finally {
    spill.remove(runs.files.flatMap((run) => [run.hashes, run.ms]));
  }
}

/**
 * sortDay of a day of `store`, read on two threads when the store can cut it into parts that another thread
 * reads (SubmissionStore.splitDay with a SQLite file) and the day has at least `twoThreadsFrom` rows (default
 * TWO_THREADS_FROM) or needs more than `memoryBytes`: a worker thread reads the second half of the day's ids on
 * a connection of its own, this thread the first through the store. A day within `memoryBytes` is read by both
 * into one pair of shared columns (each batch into the next rows free, claimed atomically), then sorted there,
 * split in two by the keys' first byte (store/sort-keys.ts splitInPlace), a range a thread; a larger one is
 * sorted and spilled in runs by each thread within half the budget, then merged in one pass. The entries are the same whatever the path (each hash once, with its earliest time, in hash order),
 * so the day's bytes are too.
 */
export async function sortStoredDay(
  store: SubmissionStore,
  date: string,
  options: { archive: string; memoryBytes: number; twoThreadsFrom?: number },
): Promise<SortedDay> {
  const runRows = Math.max(1, Math.floor(options.memoryBytes / ROW_BYTES));
  if (store.splitDay === undefined) return sortDay(store.readDay(date), date, options);
  const split = await store.splitDay(date, 2);
  const [mine, theirs] = split.parts;
  if (mine === undefined) return sortDay(emptyDay(), date, options);
  const fits = split.total <= runRows;
  if (
    split.sqliteFile === undefined ||
    theirs === undefined ||
    (fits && split.total < (options.twoThreadsFrom ?? TWO_THREADS_FROM))
  ) {
    return sortDay(partsOf(store, date, split.parts), date, options);
  }
  if (fits) return sortSharedDay(store, date, split.sqliteFile, mine, theirs);
  // Runs of equal size within each thread's half of the budget (the last of a part may be shorter).
  const half = Math.max(1, Math.floor(runRows / 2));
  const perPart = Math.ceil(split.total / 2);
  const partRunRows = Math.ceil(perPart / Math.ceil(perPart / half));
  const worker = sortPartInWorker({
    daySortPart: true,
    sqliteFile: split.sqliteFile,
    date,
    part: theirs,
    runRows: partRunRows,
    archive: options.archive,
  });
  const spill = new Spill(options.archive);
  const runs = new RunSorter(spill, partRunRows, date);
  let theirRuns: RunFiles[] = [];
  try {
    try {
      for await (const batch of store.readDay(date, { part: mine })) runs.add(batch);
      runs.spillRest();
    } finally {
      // Waited for even when this thread's part failed, so that no run of the worker's is left behind.
      const answer = await worker;
      if (answer.ok) theirRuns = answer.runs;
    }
    const answer = await worker;
    if (!answer.ok) throw answerError(answer);
    runs.check(runs.seen + answer.seen);
    return merged(spill, [...runs.files, ...theirRuns], options.memoryBytes);
  } catch (err) {
    spill.removeAll();
    throw err;
  } finally {
    spill.remove([...runs.files, ...theirRuns].flatMap((run) => [run.hashes, run.ms]));
  }
}

/** The in-memory path of sortStoredDay: both threads read their part into the same shared columns, then each
 * sorts a range of them. */
async function sortSharedDay(
  store: SubmissionStore,
  date: string,
  sqliteFile: string,
  mine: DayPart,
  theirs: DayPart,
): Promise<SortedDay> {
  const shared: SharedDay = {
    hashes: new SharedArrayBuffer(32 * mine.total),
    ms: new SharedArrayBuffer(8 * mine.total),
    claimed: new SharedArrayBuffer(4),
  };
  const worker = new SharedPartWorker({ daySortPart: true, sqliteFile, date, part: theirs, into: shared });
  const rows = new SharedRows(shared, date);
  try {
    const reading = worker.next();
    try {
      for await (const batch of store.readDay(date, { part: mine })) rows.add(batch);
    } finally {
      // Waited for even when this thread's part failed, so that the worker is not left writing to the columns.
      await reading;
    }
    const read = await reading;
    if (!read.ok) throw answerError(read);
    rows.check(read.seen);
    const n = rows.ms.length;
    const k = splitInPlace(rows.hashes, rows.ms, n);
    const sorting = worker.sortFrom(k);
    sortRowsInPlace(rows.hashes.subarray(0, 32 * k), rows.ms.subarray(0, k), k);
    const sorted = await sorting;
    if (!sorted.ok) throw answerError(sorted);
    const columns = foldSorted(rows.hashes, rows.ms, n);
    return { count: columns.count, data: { hashes: columns.hashes, ms: columns.ms }, runs: 0, dispose: () => {} };
  } finally {
    await worker.end();
  }
}

/**
 * The worker of sortSharedDay: its answers in order (its part read, then its range sorted), a failure for each
 * one asked for after it ended without giving it.
 */
class SharedPartWorker {
  private readonly worker: Worker;
  private readonly waiting: Array<(answer: PartAnswer) => void> = [];
  private readonly answers: PartAnswer[] = [];
  private ended: PartAnswer | undefined;
  constructor(job: PartJob) {
    this.worker = new Worker(new URL(import.meta.url), { workerData: job });
    this.worker.on('message', (answer: PartAnswer) => {
      const resolve = this.waiting.shift();
      if (resolve !== undefined) resolve(answer);
      else this.answers.push(answer);
    });
    this.worker.on('error', (err: Error) => (this.ended ??= { ok: false, message: err.message, name: err.name }));
    this.worker.on('exit', (code) => {
      this.ended ??= { ok: false, message: `the day's sorting worker exited with code ${code}`, name: 'Error' };
      for (const resolve of this.waiting.splice(0)) resolve(this.ended);
    });
  }

  /** The worker's next answer. */
  next(): Promise<PartAnswer> {
    const answer = this.answers.shift() ?? this.ended;
    return answer !== undefined ? Promise.resolve(answer) : new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Has the worker sort rows `from` to the end of the columns; resolves with its answer. */
  sortFrom(from: number): Promise<PartAnswer> {
    this.worker.postMessage({ sortFrom: from });
    return this.next();
  }

  async end(): Promise<void> {
    await this.worker.terminate();
  }
}

/** The columns that both threads of sortSharedDay read into: room for the snapshot's rows, and the number of its
 * rows claimed so far (an Int32). */
interface SharedDay {
  hashes: SharedArrayBuffer;
  ms: SharedArrayBuffer;
  claimed: SharedArrayBuffer;
}

/** One thread's reading into a SharedDay: each batch decoded into the next rows free, claimed atomically. */
class SharedRows {
  readonly hashes: Buffer;
  readonly ms: Float64Array;
  /** Rows this thread read. */
  seen = 0;
  private readonly claimed: Int32Array;
  private readonly date: string;
  constructor(shared: SharedDay, date: string) {
    this.hashes = Buffer.from(shared.hashes);
    this.ms = new Float64Array(shared.ms);
    this.claimed = new Int32Array(shared.claimed);
    this.date = date;
  }

  add(batch: DayBatch): void {
    const count = dayRowCount(batch);
    const at = Atomics.add(this.claimed, 0, count);
    if (batch.total !== this.ms.length || at + count > this.ms.length) throw changedWhileRead(this.date);
    decodeRows(this.hashes, this.ms, at, batch.rows, 0, count);
    this.seen += count;
  }

  /** Refuses a day whose rows read by both threads (this one's and `theirs`) are not the snapshot's count. */
  check(theirs: number): void {
    if (this.seen + theirs !== this.ms.length || Atomics.load(this.claimed, 0) !== this.ms.length)
      throw changedWhileRead(this.date);
  }
}

function changedWhileRead(date: string): Error {
  return new Error(`submissions of ${date} changed while the day was read`);
}

async function* emptyDay(): AsyncGenerator<DayBatch> {}

async function* partsOf(store: SubmissionStore, date: string, parts: readonly DayPart[]): AsyncGenerator<DayBatch> {
  for (const part of parts) yield* store.readDay(date, { part });
}

function merged(spill: Spill, runs: readonly RunFiles[], memoryBytes: number): SortedDay {
  const data = spill.merge(runs, memoryBytes);
  return { count: data.count, data, runs: runs.length, dispose: () => spill.removeAll() };
}

/**
 * The rows of a day gathered in runs of `runRows`, each sorted and de-duplicated in memory and spilled to a temp
 * file when the next row needs its room (the last one is left in memory until `spillRest` or `columns`).
 */
class RunSorter {
  readonly files: RunFiles[] = [];
  seen = 0;
  private all: Buffer = Buffer.alloc(0);
  private allMs: Float64Array = new Float64Array(0);
  private n = 0;
  private total = -1;
  private readonly spill: Spill;
  private readonly runRows: number;
  private readonly date: string;
  constructor(spill: Spill, runRows: number, date: string) {
    this.spill = spill;
    this.runRows = runRows;
    this.date = date;
  }

  /** Refuses a day whose rows read (`seen`, over all its parts) are not the snapshot's count. */
  check(seen: number): void {
    if (seen !== Math.max(this.total, 0)) throw changedWhileRead(this.date);
  }

  add(batch: DayBatch): void {
    if (this.total < 0) {
      this.total = batch.total;
      // Shared memory: a day sorted in memory is read there by the build's index worker (index-worker.ts).
      const rows = Math.min(this.total, this.runRows);
      this.all = Buffer.from(new SharedArrayBuffer(32 * rows));
      this.allMs = new Float64Array(new SharedArrayBuffer(8 * rows));
    }
    const count = dayRowCount(batch);
    if (this.seen + count > this.total) throw changedWhileRead(this.date);
    this.seen += count;
    for (let from = 0; from < count;) {
      if (this.n === this.allMs.length) {
        this.files.push(this.spill.run(this.columns()));
        this.n = 0;
      }
      const to = Math.min(count, from + this.allMs.length - this.n);
      decodeRows(this.all, this.allMs, this.n, batch.rows, from, to);
      this.n += to - from;
      from = to;
    }
  }

  /** The rows held, sorted where they are (views of the run's buffers): the whole day when nothing was spilled. */
  columns(): DayColumns {
    return columnsInPlace(this.all, this.allMs, this.n);
  }

  /** Spills the rows held as the last run (none when there are none) and lets their buffers go. */
  spillRest(): void {
    if (this.n > 0) this.files.push(this.spill.run(this.columns()));
    this.n = 0;
    this.all = Buffer.alloc(0);
    this.allMs = new Float64Array(0);
  }
}

/** What the worker of sortStoredDay is given: the part of the day it reads from the SQLite file, and either the
 * shared columns to read it into (a day sorted in memory) or its runs' size and where to spill them. */
type PartJob = { daySortPart: true; sqliteFile: string; date: string; part: DayPart } & (
  { into: SharedDay } | { runRows: number; archive: string }
);

type PartAnswer =
  | { ok: true; runs: RunFiles[]; seen: number }
  | { ok: false; message: string; name: string; code?: ErrorCode; field?: string };

/** Runs a PartJob on a worker thread; resolves with its answer (a failure too, as an answer). */
function sortPartInWorker(job: PartJob): Promise<PartAnswer> {
  return new Promise((resolve) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: job });
    let answer: PartAnswer | undefined;
    worker.on('message', (message: PartAnswer) => (answer = message));
    worker.on('error', (err: Error) => (answer ??= { ok: false, message: err.message, name: err.name }));
    worker.on('exit', (code) =>
      resolve(answer ?? { ok: false, message: `the day's sorting worker exited with code ${code}`, name: 'Error' }),
    );
  });
}

function answerError(answer: Extract<PartAnswer, { ok: false }>): Error {
  const err =
    answer.field !== undefined
      ? new FormatError(answer.field, answer.message.slice(answer.field.length + 2))
      : answer.code !== undefined
        ? new TimesealError(answer.code, answer.message)
        : new Error(answer.message);
  err.name = answer.name;
  return err;
}

/** A sorted run on disk, laid out as the merged day (DayData): the hashes file and the times file. */
type RunFiles = { hashes: string; ms: string };
/** Bytes of an entry in a run or the merged files: its hash and its time (a float64). */
const ENTRY_BYTES = 40;
/** Bytes written per write call. */
const WRITE_BYTES = 1 << 20;
/** Entries of the merge's output buffers: 1 MB of hashes a write. */
const WRITE_ENTRIES = WRITE_BYTES / 32;

/** The spill files of one sort, in the archive's temp folder. */
class Spill {
  private readonly files: string[] = [];
  private readonly archive: string;
  constructor(archive: string) {
    this.archive = archive;
  }

  private file(): string {
    const file = tempFile(this.archive);
    this.files.push(file);
    return file;
  }

  /** Writes one sorted, de-duplicated run: its two columns as they are in memory. */
  run(columns: DayColumns): RunFiles {
    const run = { hashes: this.file(), ms: this.file() };
    const ms = new Uint8Array(columns.ms.buffer, columns.ms.byteOffset, columns.ms.byteLength);
    for (const [file, bytes] of [
      [run.hashes, columns.hashes],
      [run.ms, ms],
    ] as const) {
      const out = new FileWriter(file);
      out.write(bytes);
      out.close();
    }
    return run;
  }

  /**
   * Merges the runs (each sorted without repeats) into the hashes and times files: a hash in several runs once,
   * with its earliest time. Each run is read through buffers of its share of the budget (4 KB to 1 MB).
   */
  merge(runs: readonly RunFiles[], memoryBytes: number): Extract<DayData, { files: unknown }> {
    const share = Math.max(100, Math.min(26_214, Math.floor(memoryBytes / 2 / runs.length / ENTRY_BYTES)));
    const cursors = runs.map((run) => new RunCursor(run, share));
    const files = { hashes: this.file(), ms: this.file() };
    // The merged entries gather in two column buffers written when full; the last entry in them may still get
    // an earlier time from the next run's copy of its hash, so it is complete only once a different hash comes.
    const outHashes = new Uint8Array(32 * WRITE_ENTRIES);
    const outMs = new Float64Array(WRITE_ENTRIES);
    const fds = { hashes: fs.openSync(files.hashes, 'w'), ms: fs.openSync(files.ms, 'w') };
    let count = 0;
    let m = 0;
    const write = (): void => {
      writeFully(fds.hashes, outHashes.subarray(0, 32 * m));
      writeFully(fds.ms, new Uint8Array(outMs.buffer, 0, 8 * m));
      count += m;
      m = 0;
    };
    // Hashes are copied and compared as 8 words (both buffers are the start of their own ArrayBuffers), the
    // first 4 bytes of the last one kept as a number.
    const outWords = new Int32Array(outHashes.buffer);
    let lastHead = -1;
    try {
      const heap = new CursorHeap(cursors.filter((c) => c.next()));
      while (heap.size > 0) {
        const top = heap.top();
        const time = top.ms[top.at]!;
        if (m > 0 && top.head === lastHead && top.equals(outWords, m - 1)) {
          if (time < outMs[m - 1]!) outMs[m - 1] = time;
        } else {
          if (m === WRITE_ENTRIES) write();
          top.copyTo(outWords, m);
          lastHead = top.head;
          outMs[m++] = time;
        }
        if (top.next()) heap.siftDown();
        else heap.pop();
      }
      write();
    } finally {
      for (const c of cursors) c.close();
      fs.closeSync(fds.hashes);
      fs.closeSync(fds.ms);
    }
    const batchEntries = Math.max(100, Math.min(BATCH_ENTRIES, Math.floor(memoryBytes / 16 / ENTRY_BYTES)));
    return { files, count, batchEntries };
  }

  remove(files: readonly string[]): void {
    for (const file of files) fs.rmSync(file, { force: true });
  }

  removeAll(): void {
    this.remove(this.files);
  }
}

/** Appends to a new file through a buffer. */
class FileWriter {
  private readonly fd: number;
  private readonly buffer = Buffer.alloc(WRITE_BYTES);
  private used = 0;
  constructor(file: string) {
    this.fd = fs.openSync(file, 'w');
  }
  write(bytes: Uint8Array): void {
    if (this.used + bytes.length > this.buffer.length) this.flush();
    if (bytes.length > this.buffer.length) {
      writeFully(this.fd, bytes);
      return;
    }
    this.buffer.set(bytes, this.used);
    this.used += bytes.length;
  }
  private flush(): void {
    writeFully(this.fd, this.buffer.subarray(0, this.used));
    this.used = 0;
  }
  close(): void {
    try {
      this.flush();
    } finally {
      fs.closeSync(this.fd);
    }
  }
}

/** A run read in order, `entries` at a time; `at` is the current entry in `hashes` and `ms`, `head` its first
 * 4 bytes as a number (big-endian: in the hashes' order). */
class RunCursor {
  readonly hashes: Uint8Array;
  readonly ms: Float64Array;
  at = -1;
  head = 0;
  private readonly words: Int32Array;
  private end = 0;
  private read = 0;
  private readonly run: RunFiles;
  private readonly fds: { hashes: number; ms: number };
  private readonly size: number;
  constructor(run: RunFiles, entries: number) {
    this.run = run;
    this.hashes = new Uint8Array(32 * entries);
    this.words = new Int32Array(this.hashes.buffer);
    this.ms = new Float64Array(entries);
    this.fds = { hashes: fs.openSync(run.hashes, 'r'), ms: fs.openSync(run.ms, 'r') };
    this.size = fs.fstatSync(this.fds.ms).size / 8;
  }
  /** Moves to the next entry; false at the end of the run. */
  next(): boolean {
    if (++this.at >= this.end) {
      const n = Math.min(this.ms.length, this.size - this.read);
      if (n === 0) return false;
      readFully(this.fds.hashes, this.hashes, 32 * n, 32 * this.read, this.run.hashes);
      readFully(this.fds.ms, new Uint8Array(this.ms.buffer), 8 * n, 8 * this.read, this.run.ms);
      this.read += n;
      this.at = 0;
      this.end = n;
    }
    const h = this.hashes;
    const x = 32 * this.at;
    this.head = ((h[x]! << 24) | (h[x + 1]! << 16) | (h[x + 2]! << 8) | h[x + 3]!) >>> 0;
    return true;
  }
  /** Whether the current hash is hash j of `words` (8 words a hash). */
  equals(words: Int32Array, j: number): boolean {
    const w = this.words;
    const i = 8 * this.at;
    for (let k = 0; k < 8; k++) if (w[i + k] !== words[8 * j + k]) return false;
    return true;
  }
  /** Copies the current hash to hash j of `words`. */
  copyTo(words: Int32Array, j: number): void {
    const w = this.words;
    const i = 8 * this.at;
    for (let k = 0; k < 8; k++) words[8 * j + k] = w[i + k]!;
  }
  close(): void {
    fs.closeSync(this.fds.hashes);
    fs.closeSync(this.fds.ms);
  }
}

/** Whether cursor a's hash comes before b's. */
function less(a: RunCursor, b: RunCursor): boolean {
  return a.head !== b.head ? a.head < b.head : compareHashAt(a.hashes, 32 * a.at, b.hashes, 32 * b.at) < 0;
}

/** A binary min-heap of run cursors by their current hash. */
class CursorHeap {
  private readonly items: RunCursor[];
  constructor(items: RunCursor[]) {
    this.items = items;
    for (let i = (items.length >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }
  get size(): number {
    return this.items.length;
  }
  top(): RunCursor {
    return this.items[0]!;
  }
  pop(): void {
    const last = this.items.pop()!;
    if (this.items.length > 0) {
      this.items[0] = last;
      this.siftDown(0);
    }
  }
  /** Restores the order after the item at `i` (the top) grew. */
  siftDown(i = 0): void {
    const items = this.items;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < items.length && less(items[l]!, items[min]!)) min = l;
      if (r < items.length && less(items[r]!, items[min]!)) min = r;
      if (min === i) return;
      [items[i], items[min]] = [items[min]!, items[i]!];
      i = min;
    }
  }
}

/** The worker of sortStoredDay: reads its part, spills its runs and answers (no top-level await: this module is
 * also loaded by the build's other workers). */
async function sortPart(job: PartJob): Promise<void> {
  const spill = 'into' in job ? undefined : new Spill(job.archive);
  let answer: PartAnswer;
  try {
    // Loaded here only: the build's own thread reads its part through the store.
    const { readSplitPart } = await import('../store/day-part.ts');
    const batches = readSplitPart(job, job.date, job.part, DAY_PART_CHUNK);
    if ('into' in job) {
      const rows = new SharedRows(job.into, job.date);
      for (const batch of batches) rows.add(batch);
      answer = { ok: true, runs: [], seen: rows.seen };
      parentPort!.once('message', ({ sortFrom }: { sortFrom: number }) => sortRest(rows, sortFrom));
    } else {
      const runs = new RunSorter(spill!, job.runRows, job.date);
      for (const batch of batches) runs.add(batch);
      runs.spillRest();
      answer = { ok: true, runs: runs.files, seen: runs.seen };
    }
  } catch (err) {
    spill?.removeAll();
    answer = failure(err);
  }
  parentPort!.postMessage(answer);
}

/** The worker of sortSharedDay, its part read: sorts the columns' rows from `from` on, answers and ends. */
function sortRest(rows: SharedRows, from: number): void {
  let answer: PartAnswer;
  try {
    const n = rows.ms.length - from;
    sortRowsInPlace(rows.hashes.subarray(32 * from), rows.ms.subarray(from), n);
    answer = { ok: true, runs: [], seen: rows.seen };
  } catch (err) {
    answer = failure(err);
  }
  parentPort!.postMessage(answer);
  parentPort!.close();
}

function failure(err: unknown): Extract<PartAnswer, { ok: false }> {
  const e = err instanceof Error ? err : new Error(String(err));
  return {
    ok: false,
    message: e.message,
    name: e.name,
    code: e instanceof TimesealError ? e.code : undefined,
    field: e instanceof FormatError ? e.field : undefined,
  };
}

if (!isMainThread && (workerData as PartJob | undefined)?.daySortPart === true) void sortPart(workerData as PartJob);
