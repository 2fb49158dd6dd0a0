// The queue index's frozen tables on disk (queue-index.ts): when the day tables would grow past their budget of
// slots, a day's table is written here as a run and the day starts a new, empty table. A run is a file of
// fixed-size records sorted by fingerprint, each 16 bytes: the fingerprint's high and low 32-bit words and the row
// id as a 64-bit float (little-endian, like the typed arrays), with a fan-out table in memory: the record offset
// where each value of the fingerprint's top `bits` bits starts, so a lookup reads the one small piece of the file
// that can hold its fingerprint (one pread) and searches it.
//
// The fingerprint's secret is this process's, so a run means nothing to another process: the runs live in a
// folder of this process, `<root>/<pid>-<random>`, removed at exit; a folder whose process is gone (a crash, a
// kill -9) is removed by the next index made on the same root. Nothing survives a restart: the new process's
// catch-up reads the rows again.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Bytes of a record: high and low words of the fingerprint, then the row id as a float64. */
const RECORD_BYTES = 16;
/** The most fan-out bits: 65,536 pieces (256 KiB of offsets a run). */
const MAX_FAN_OUT_BITS = 16;
/** Records a piece holds on average, at least, while the run has fewer than 2^MAX_FAN_OUT_BITS of them. */
const RECORDS_PER_PIECE = 16;
/** Slots or records handled between two turns of the event loop while a run is made. */
const SLICE = 1 << 14;
/** Bytes of a write while a run is written. */
const WRITE_BYTES = 1 << 20;

/** A table's slots, as queue-index.ts keeps them: ids[i] 0 is an empty slot. */
export interface SlotArrays {
  readonly high: Uint32Array;
  readonly low: Uint32Array;
  readonly ids: Float64Array;
}

/** A row read back by id: its hash and submission time, or undefined when no row has that id. */
export type RowReader = (id: number) => [hash: string, submittedAt: string] | undefined;

/** The buffer that lookups read a piece into, grown as needed (one lookup at a time: they are synchronous). */
let piece = new ArrayBuffer(64 * RECORD_BYTES);
let pieceWords = new Uint32Array(piece);
let pieceIds = new Float64Array(piece);

/** One frozen table on disk, open for reading. */
export class Run {
  readonly #file: string;
  readonly #fd: number;
  readonly #starts: Uint32Array;
  readonly #shift: number;
  readonly entries: number;

  constructor(file: string, starts: Uint32Array, bits: number, entries: number) {
    this.#file = file;
    this.#fd = fs.openSync(file, 'r');
    this.#starts = starts;
    this.#shift = 32 - bits;
    this.entries = entries;
  }

  /** The time of the row whose hash is `hash` (fingerprint high, low), if this run holds it. */
  at(high: number, low: number, hash: string, read: RowReader): string | undefined {
    // `>>> 32` is `>>> 0` in JavaScript: a run of one piece has bits 0.
    const p = this.#shift === 32 ? 0 : high >>> this.#shift;
    const first = this.#starts[p]!;
    const count = this.#starts[p + 1]! - first;
    if (count === 0) return undefined;
    if (count * RECORD_BYTES > piece.byteLength) {
      piece = new ArrayBuffer(count * 2 * RECORD_BYTES);
      pieceWords = new Uint32Array(piece);
      pieceIds = new Float64Array(piece);
    }
    fs.readSync(
      this.#fd,
      new Uint8Array(piece, 0, count * RECORD_BYTES),
      0,
      count * RECORD_BYTES,
      first * RECORD_BYTES,
    );
    // The first record not below (high, low), then every record equal to it (colliding fingerprints).
    let lo = 0;
    let hi = count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const h = pieceWords[mid * 4]!;
      if (h < high || (h === high && pieceWords[mid * 4 + 1]! < low)) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < count && pieceWords[k * 4] === high && pieceWords[k * 4 + 1] === low; k++) {
      const row = read(pieceIds[k * 2 + 1]!);
      if (row !== undefined && row[0] === hash) return row[1];
    }
    return undefined;
  }

  /** The bytes it holds in memory: its fan-out table. */
  get bytes(): number {
    return this.#starts.byteLength;
  }

  /** Closes and deletes its file. */
  remove(): void {
    fs.closeSync(this.#fd);
    fs.rmSync(this.#file, { force: true });
  }
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Writes the `entries` used slots of `slots` (left unchanged: lookups go on reading them meanwhile) to `file`
 * as a run, a slice at a time with the event loop running between two, and opens it. The memory it takes
 * meanwhile: the records, 16 bytes an entry, and the fan-out table. */
export async function writeRun(slots: SlotArrays, entries: number, file: string): Promise<Run> {
  const bits = Math.max(0, Math.min(MAX_FAN_OUT_BITS, Math.floor(Math.log2(entries / RECORDS_PER_PIECE))));
  const shift = 32 - bits;
  const pieceOf = (high: number): number => (bits === 0 ? 0 : high >>> shift);
  const { high, low, ids } = slots;
  // Counting sort by the top bits: the fan-out table is its offsets.
  const starts = new Uint32Array((1 << bits) + 1);
  for (let from = 0; from < ids.length; from += SLICE) {
    const end = Math.min(ids.length, from + SLICE);
    for (let i = from; i < end; i++) if (ids[i] !== 0) starts[pieceOf(high[i]!) + 1]!++;
    await nextTurn();
  }
  for (let p = 1; p < starts.length; p++) starts[p]! += starts[p - 1]!;
  const records = new ArrayBuffer(entries * RECORD_BYTES);
  const words = new Uint32Array(records);
  const recordIds = new Float64Array(records);
  // Its pages touched in order, a slice at a time: the scatter below would fault them all in its first slice.
  for (let from = 0; from < words.length; from += WRITE_BYTES / 4) {
    words.fill(0, from, from + WRITE_BYTES / 4);
    await nextTurn();
  }
  const next = starts.slice(0, -1);
  for (let from = 0; from < ids.length; from += SLICE) {
    const end = Math.min(ids.length, from + SLICE);
    for (let i = from; i < end; i++) {
      if (ids[i] === 0) continue;
      const k = next[pieceOf(high[i]!)]!++;
      words[k * 4] = high[i]!;
      words[k * 4 + 1] = low[i]!;
      recordIds[k * 2 + 1] = ids[i]!;
    }
    await nextTurn();
  }
  // Each piece sorted by (high, low): a few records each (RECORDS_PER_PIECE on average), insertion sort.
  let sorted = 0;
  for (let p = 0; p + 1 < starts.length; p++) {
    sortRecords(words, recordIds, starts[p]!, starts[p + 1]!);
    sorted += starts[p + 1]! - starts[p]!;
    if (sorted >= SLICE) {
      sorted = 0;
      await nextTurn();
    }
  }
  const handle = await fs.promises.open(file, 'wx');
  try {
    for (let at = 0; at < records.byteLength; at += WRITE_BYTES) {
      const length = Math.min(WRITE_BYTES, records.byteLength - at);
      await handle.write(new Uint8Array(records, at, length), 0, length, at);
    }
    await handle.close();
    return new Run(file, starts, bits, entries);
  } catch (err) {
    await handle.close().catch(() => undefined);
    fs.rmSync(file, { force: true });
    throw err;
  }
}

/** Sorts records [from, to) by (high, low) in place. */
function sortRecords(words: Uint32Array, ids: Float64Array, from: number, to: number): void {
  for (let i = from + 1; i < to; i++) {
    const h = words[i * 4]!;
    const l = words[i * 4 + 1]!;
    const id = ids[i * 2 + 1]!;
    let j = i - 1;
    while (j >= from && (words[j * 4]! > h || (words[j * 4] === h && words[j * 4 + 1]! > l))) {
      words[(j + 1) * 4] = words[j * 4]!;
      words[(j + 1) * 4 + 1] = words[j * 4 + 1]!;
      ids[(j + 1) * 2 + 1] = ids[j * 2 + 1]!;
      j--;
    }
    words[(j + 1) * 4] = h;
    words[(j + 1) * 4 + 1] = l;
    ids[(j + 1) * 2 + 1] = id;
  }
}

/** The run folders of this process (removed at its exit). */
const ours = new Set<string>();
let removedAtExit = false;

/** A new folder of this process under `root` for runs, removed when the process exits. */
export function runFolder(root: string): string {
  if (!removedAtExit) {
    removedAtExit = true;
    process.on('exit', () => ours.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));
  }
  const dir = path.join(root, `${process.pid}-${randomBytes(4).toString('hex')}`);
  fs.mkdirSync(dir, { recursive: true });
  ours.add(dir);
  return dir;
}

/** Removes the run folders under `root` of processes that are gone: no process has the folder's pid, or this one
 * does (a pid used again, as in a container where the server is always pid 1) and did not make it. */
export function removeStaleRunFolders(root: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = /^(\d+)-[0-9a-f]+$/.exec(name)?.[1];
    if (pid === undefined) continue;
    const dir = path.join(root, name);
    if (Number(pid) === process.pid ? !ours.has(dir) : !alive(Number(pid)))
      fs.rmSync(dir, { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists, another user's.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
