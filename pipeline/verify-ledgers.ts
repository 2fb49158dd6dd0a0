// `timeseal verify`'s reads of the days' ledgers, each as a stream and never held (pipeline/verify.ts): the
// tree and entry bundles recomputed from a day's entries as they pass (DayTree), and each day's records read
// again for the index, merged across days into the shards of a segment or of index-sha256.json
// (mergedShards). What is held: the rightmost tile of each level, one entry bundle, a piece of each ledger being
// read, and one shard; none of it grows with the day or the archive.
import type { DayRecord } from '../core/archive.ts';
import { ledgerPath } from '../core/archive.ts';
import { equalBytes, toHex } from '../core/encoding.ts';
import { hashPrefix, SHARD_RECORD_SIZE, writeUint48 } from '../core/index-shard.ts';
import { LedgerReader } from '../core/ledger.ts';
import { leafHash } from '../core/merkle.ts';
import {
  encodeEntryBundle,
  entryBundlePath,
  tileHashReader,
  tilePath,
  TreeAppender,
  TILE_WIDTH,
  type Tile,
} from '../core/tiles.ts';
import crypto from 'node:crypto';
import { nodeSha256 } from '../runtime/node-hash.ts';
import { ledgerStreamCap, LedgerTooLargeError } from './archive-reader.ts';
import type { VerifyRun } from './verify-state.ts';

/**
 * The running tree extended by one day's entries as they are read (`begin` with the ledger's entry count, `add`
 * each entry, `settle` after each piece, `finish` once the day's files verify): each tile the day creates or
 * widens compared with the published one at its width at the end of the day, and the day's entry bundles (the
 * first starts with the entries carried over from the previous day's partial bundle). The findings are kept
 * apart, in the order a whole-day check gives them (tiles by level and index, then bundles), for the caller to
 * report once the day's signatures hold; `finish` hands the new partial tiles and bundle to the run's state.
 */
export class DayTree {
  readonly tileFindings: { level: number; index: number; text: string }[] = [];
  readonly bundleFindings: string[] = [];
  /** Published tiles and bundles read. */
  checked = 0;
  private readonly run: VerifyRun;
  private readonly start: number;
  private appender: TreeAppender | undefined;
  private readonly leaves = new Uint8Array(32 * TILE_WIDTH);
  private leafCount = 0;
  private readonly bundle = new Uint8Array(32 * TILE_WIDTH);
  private bundleCount = 0;
  private bundleIndex: number;
  /** Tiles and bundles made and not yet compared (a piece's worth). */
  private queue: { rel: string; data: Uint8Array; tile?: Tile }[] = [];
  /** The rightmost partial tiles at the end of the day; and the run's partial tiles the day filled. */
  private readonly partials: Tile[] = [];
  private readonly filled: string[] = [];

  constructor(run: VerifyRun) {
    this.run = run;
    this.start = run.size;
    this.bundleIndex = Math.floor(run.size / TILE_WIDTH);
    run.carried.forEach((entry, k) => this.bundle.set(entry, 32 * k));
    this.bundleCount = run.carried.length;
  }

  begin(count: number): void {
    const { run } = this;
    const read = tileHashReader(this.start, (level, index, width) => run.tile(level, index, width), nodeSha256);
    this.appender = new TreeAppender(this.start, count, read, nodeSha256, (t) => this.onTile(t));
  }

  add(hashes: Uint8Array, at: number): void {
    const entry = hashes.subarray(at, at + 32);
    this.leaves.set(leafHash(entry, nodeSha256), 32 * this.leafCount);
    if (++this.leafCount === TILE_WIDTH) this.pushLeaves();
    this.bundle.set(entry, 32 * this.bundleCount);
    if (++this.bundleCount === TILE_WIDTH) this.queueBundle();
  }

  /** Compares what the entries read so far made. */
  async settle(): Promise<void> {
    this.pushLeaves();
    const queue = this.queue;
    this.queue = [];
    for (const item of queue) {
      const published = await this.run.reader.read(item.rel);
      if (published !== undefined) this.checked++;
      const text =
        published === undefined
          ? `${item.rel}: missing`
          : equalBytes(published, item.data)
            ? undefined
            : item.tile
              ? `${item.rel}: differs from the tile recomputed from the ledgers`
              : `${item.rel}: differs from the ledger's entries`;
      if (text === undefined) continue;
      if (item.tile) this.tileFindings.push({ level: item.tile.level, index: item.tile.index, text });
      else this.bundleFindings.push(text);
    }
  }

  /** The day's tree: its size and root; the last tiles and the partial bundle compared; the run's partial tiles
   * and carried entries become the day's. */
  async finish(): Promise<{ size: number; root: Uint8Array }> {
    this.pushLeaves();
    const result = this.appender!.finish();
    if (this.bundleCount > 0) this.queueBundle();
    await this.settle();
    this.tileFindings.sort((a, b) => a.level - b.level || a.index - b.index);
    const { run } = this;
    for (const key of this.filled) run.tiles.delete(key);
    for (const t of this.partials) run.tiles.set(`${t.level}/${t.index}`, t.data);
    const rest = result.size % TILE_WIDTH;
    const carried = this.bundle.slice(32 * (this.bundleCount - rest), 32 * this.bundleCount);
    run.carried = Array.from({ length: rest }, (_, k) => carried.subarray(32 * k, 32 * k + 32));
    return result;
  }

  private pushLeaves(): void {
    if (this.leafCount === 0) return;
    this.appender!.push(this.leaves.subarray(0, 32 * this.leafCount));
    this.leafCount = 0;
  }

  private onTile(t: Tile): void {
    const tile = { ...t, data: t.data.slice() };
    const key = `${t.level}/${t.index}`;
    if (t.width < TILE_WIDTH) this.partials.push(tile);
    else if (this.run.tiles.has(key)) this.filled.push(key);
    this.queue.push({ rel: tilePath(t.level, t.index, t.width), data: tile.data, tile });
  }

  /** The bundle so far (full, or the day's last), to compare; the next one starts empty. */
  private queueBundle(): void {
    const n = this.bundleCount;
    const entries = Array.from({ length: n }, (_, k) => this.bundle.subarray(32 * k, 32 * k + 32));
    this.queue.push({ rel: entryBundlePath(this.bundleIndex, n), data: encodeEntryBundle(entries) });
    if (n === TILE_WIDTH) {
      this.bundleIndex++;
      this.bundleCount = 0;
    }
  }
}

/** A day's ledger that cannot be read again as it was verified: missing, too large, not canonical, or not the
 * bytes days.json names. The message names the file. */
export class LedgerReadFinding extends Error {}

/**
 * The records of a day already verified (its ledger's sha256 is days.json's), read again from its ledger as a
 * stream, in ledger order (sorted by hash): hash, leaf index, submission time. `ready` says whether a record is
 * at hand, reading on when the piece is used up; at the ledger's end its SHA-256 must be the one verified.
 */
export class DayRecords {
  /** The records at hand: hashes[32 at …], ms[at], leaf index first + at; `at` < `n`. */
  hashes = new Uint8Array(32 * 1024);
  ms = new Float64Array(1024);
  at = 0;
  n = 0;
  first: number;
  private done = false;
  private started = false;
  private size = 0;
  private readonly day: DayRecord;
  private readonly rel: string;
  private readonly maxBytes: number;
  private readonly entries: number;
  private readonly digest = crypto.createHash('sha256');
  private readonly body: AsyncIterator<Uint8Array>;
  private readonly reader: LedgerReader;

  private constructor(day: DayRecord, origin: string, body: AsyncIterable<Uint8Array>) {
    this.day = day;
    this.rel = ledgerPath(day.date);
    this.first = day.firstIndex;
    this.entries = day.treeSize - day.firstIndex;
    this.maxBytes = ledgerStreamCap(origin, this.entries);
    this.body = body[Symbol.asyncIterator]();
    this.reader = new LedgerReader({
      columns: false,
      onEntry: (hashes, at, ms) => {
        if (this.n === this.ms.length) this.grow();
        this.hashes.set(hashes.subarray(at, at + 32), 32 * this.n);
        this.ms[this.n++] = ms;
      },
    });
  }

  /** `pieceBytes`: the most a piece of the ledger read from disk holds (ArchiveReader.stream). */
  static async open(run: VerifyRun, origin: string, day: DayRecord, pieceBytes: number): Promise<DayRecords> {
    const rel = ledgerPath(day.date);
    const cap = ledgerStreamCap(origin, day.treeSize - day.firstIndex);
    const body = await run.reader.stream(rel, cap, pieceBytes);
    if (body === undefined) throw new LedgerReadFinding(`${rel}: missing`);
    return new DayRecords(day, origin, body);
  }

  async ready(): Promise<boolean> {
    while (this.at === this.n) {
      if (this.done) return false;
      this.first += this.n;
      this.at = 0;
      this.n = 0;
      this.started = true;
      const next = await this.body.next();
      if (next.done) this.end();
      else this.push(next.value);
    }
    return true;
  }

  /** Releases the ledger when it was not read to its end (a stream's iterator releases it only once started). */
  async close(): Promise<void> {
    if (this.done) return;
    this.done = true;
    if (!this.started) await this.body.next().catch(() => undefined);
    await this.body.return?.();
  }

  private push(piece: Uint8Array): void {
    this.size += piece.length;
    if (this.size > this.maxBytes)
      throw new LedgerReadFinding(new LedgerTooLargeError(this.rel, this.maxBytes, this.entries).message);
    this.digest.update(piece);
    try {
      this.reader.push(piece);
    } catch (err) {
      throw new LedgerReadFinding(`${this.rel}: ${(err as Error).message}`, { cause: err });
    }
  }

  private end(): void {
    this.done = true;
    try {
      this.reader.end();
    } catch (err) {
      throw new LedgerReadFinding(`${this.rel}: ${(err as Error).message}`, { cause: err });
    }
    const sha256 = toHex(this.digest.digest());
    if (sha256 !== this.day.sha256)
      throw new LedgerReadFinding(
        `${this.rel}: not the ledger verified (sha256 ${sha256} != ${this.day.sha256} in days.json)`,
      );
  }

  private grow(): void {
    const hashes = new Uint8Array(2 * this.hashes.length);
    hashes.set(this.hashes);
    this.hashes = hashes;
    const ms = new Float64Array(2 * this.ms.length);
    ms.set(this.ms);
    this.ms = ms;
  }
}

/** Whether the hash of record a.at sorts before that of b.at (ties: not before). */
function hashBefore(a: DayRecords, b: DayRecords): boolean {
  const x = a.hashes;
  const y = b.hashes;
  for (let k = 0, i = 32 * a.at, j = 32 * b.at; k < 32; k++) {
    const d = x[i + k]! - y[j + k]!;
    if (d !== 0) return d < 0;
  }
  return false;
}

/**
 * The shards, at `bits` prefix bits, of the records of consecutive days (`days`, in leaf order): for every
 * prefix from 0 to 2^bits - 1, empty ones included, the records (docs/FORMAT.md §6: hash, leaf index, time)
 * with that prefix sorted by (hash, leaf index): the days' ledgers are each sorted by hash, so this is their
 * k-way merge, the earlier day first on equal hashes. Each shard is valid until the next is asked for. Every
 * ledger is read to its end (and checked: LedgerReadFinding) unless the caller stops early.
 */
export async function* mergedShards(days: DayRecords[], bits: number): AsyncGenerator<Uint8Array> {
  let out = new Uint8Array(SHARD_RECORD_SIZE * 256);
  try {
    for (let prefix = 0; prefix < 2 ** bits; prefix++) {
      let o = 0;
      for (;;) {
        let best: DayRecords | undefined;
        for (const d of days) {
          if (d.at === d.n && !(await d.ready())) continue;
          if (hashPrefix(d.hashes, 32 * d.at, bits) !== prefix) continue;
          if (best === undefined || hashBefore(d, best)) best = d;
        }
        if (best === undefined) break;
        if (o === out.length) {
          const grown = new Uint8Array(2 * out.length);
          grown.set(out);
          out = grown;
        }
        out.set(best.hashes.subarray(32 * best.at, 32 * best.at + 32), o);
        writeUint48(out, o + 32, best.first + best.at);
        writeUint48(out, o + 38, best.ms[best.at]!);
        o += SHARD_RECORD_SIZE;
        best.at++;
      }
      yield out.subarray(0, o);
    }
    for (const d of days) await d.ready();
  } finally {
    for (const d of days) await d.close();
  }
}

/**
 * What the ledgers read at once for one merge hold in pieces, together (a fixed window): split between the days
 * of a segment, each between MIN_PIECE and 1 MiB. A piece of 1 MiB a day held some 2.7 MB a day (the piece, the
 * next one read ahead, its records), so a segment of hundreds of days held GBs.
 */
export const MERGE_WINDOW_BYTES = 16 << 20;
const MIN_PIECE = 16 << 10;

/** The days of `days` with entries in the leaves [from, to) (which begin and end on day boundaries), opened,
 * their pieces within MERGE_WINDOW_BYTES together. */
export async function openDayRecords(
  run: VerifyRun,
  origin: string,
  days: readonly DayRecord[],
  from: number,
  to: number,
): Promise<DayRecords[]> {
  const covered = days.filter((d) => d.firstIndex >= from && d.treeSize <= to && d.treeSize > d.firstIndex);
  const pieceBytes = Math.min(1 << 20, Math.max(MIN_PIECE, Math.floor(MERGE_WINDOW_BYTES / covered.length)));
  const opened: DayRecords[] = [];
  try {
    for (const day of covered) opened.push(await DayRecords.open(run, origin, day, pieceBytes));
  } catch (err) {
    for (const d of opened) await d.close();
    throw err;
  }
  return opened;
}
