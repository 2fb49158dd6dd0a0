// The leaf hashes of a day's sorted entries and the roots of their level-0 tiles, batch by batch in order, with
// the batches shared out between the build's thread and worker threads: batch i of dayBatches is hashed by
// thread i mod (workers + 1), 0 being the caller's. Those hashes are nearly all of a tree's SHA-256 (a level-0
// tile is 256 leaves and 255 nodes; the levels above add 1/255 of that), and they need nothing but the entries,
// so the tree's hashing uses both cores of a two-core machine. Given the archive, a worker also writes the
// level-0 tiles wholly within its batches (their bytes are the batch's leaf hashes; each file's creation costs
// this machine's ext4 100-160 µs of system time), and the caller (core/tiles.ts TreeAppender) the rest. A
// worker's batch is handed over without a copy (its buffer transferred), at most LAG_BATCHES ahead of the caller. The answers are read synchronously (Atomics.wait and
// receiveMessageOnPort), as index-worker.ts does, so the build stays synchronous.
import os from 'node:os';
import {
  isMainThread,
  MessageChannel,
  receiveMessageOnPort,
  Worker,
  workerData,
  type MessagePort,
} from 'node:worker_threads';
import { TimesealError, type ErrorCode } from '../core/errors.ts';
import { HASH_SIZE } from '../core/hash.ts';
import { tilePath, TILE_WIDTH } from '../core/tiles.ts';
import { dayBatches, dayCount, type DayData } from './day-sort.ts';
import { writeImmutable } from './files.ts';
import type { Written } from './segment-files.ts';
import { sha256x4, type Sha256x4 } from './sha256x4.ts';
import { leafSha256Into, nodeSha256Into } from './small-sha256.ts';

/** One batch of the day: its leaf hashes, and the roots of the level-0 tiles that lie wholly within it. */
export interface HashedBatch {
  leaves: Uint8Array;
  tileRoots: Uint8Array;
  /** Set when a worker wrote the batch's whole level-0 tiles to the archive: what it wrote (an identical file
   *  already there is not written, as pipeline/files.ts writeImmutable says). */
  written?: Written;
}

/** Batches a worker hashes ahead of the caller before it waits (a batch of 65,536 entries is 2 MB of hashes). */
const LAG_BATCHES = 4;

/** The smallest day hashed on more than one thread: below it, a worker's start costs more than it saves. */
export const TREE_WORKERS_FROM = 262_144;

interface Job {
  treeHashes: true;
  day: DayData;
  oldSize: number;
  archive: string | undefined;
  /** This worker's thread number (1 …) and how many threads share the batches. */
  thread: number;
  threads: number;
  /** [0]: batches posted; [1]: batches taken by the caller. */
  state: Int32Array;
  port: MessagePort;
}

type Answer = ({ ok: true } & HashedBatch) | { ok: false; message: string; name: string; code?: ErrorCode };

/** The 4-lane WebAssembly SIMD SHA-256 (pipeline/sha256x4.ts), or null where the engine has no SIMD: made on
 *  first use (writing and compiling the module takes ~20 ms, which a command that builds nothing need not pay). */
let lanes: Sha256x4 | null | undefined;
const simdSha256 = (): Sha256x4 | null => (lanes === undefined ? (lanes = sha256x4()) : lanes);

/**
 * The leaf hashes of `entries` (32-byte entries back to back, the first at leaf `start` of the tree), and the
 * roots of the level-0 tiles wholly within them, in order: four at a time on SIMD lanes (`x4`) where there are
 * SIMD lanes, else (`x4` null) with small-sha256.ts's JavaScript.
 */
export function hashBatch(entries: Uint8Array, start: number, x4: Sha256x4 | null = simdSha256()): HashedBatch {
  const n = entries.length / HASH_SIZE;
  const leaves = new Uint8Array(entries.length);
  if (x4) x4.leaves(entries, 0, n, leaves, 0);
  else for (let at = 0; at < entries.length; at += HASH_SIZE) leafSha256Into(entries, at, leaves, at);
  const first = Math.ceil(start / TILE_WIDTH) * TILE_WIDTH;
  const whole = Math.max(0, Math.floor((start + n) / TILE_WIDTH) - first / TILE_WIDTH);
  const tileRoots = new Uint8Array(whole * HASH_SIZE);
  if (x4) {
    x4.tileRoots(leaves, (first - start) * HASH_SIZE, whole, tileRoots, 0);
    return { leaves, tileRoots };
  }
  const scratch = new Uint8Array((TILE_WIDTH / 2) * HASH_SIZE);
  for (let t = 0; t < whole; t++) {
    const at = (first - start + t * TILE_WIDTH) * HASH_SIZE;
    for (let i = 0; i < TILE_WIDTH / 2; i++) nodeSha256Into(leaves, at + 2 * i * HASH_SIZE, scratch, i * HASH_SIZE);
    // Each level above in place: node i reads hashes 2i and 2i + 1 before it writes hash i.
    for (let width = TILE_WIDTH / 4; width >= 1; width /= 2) {
      for (let i = 0; i < width; i++) nodeSha256Into(scratch, 2 * i * HASH_SIZE, scratch, i * HASH_SIZE);
    }
    tileRoots.set(scratch.subarray(0, HASH_SIZE), t * HASH_SIZE);
  }
  return { leaves, tileRoots };
}

/** Writes the level-0 tiles wholly within `leaves` (leaf hashes, the first at leaf `start`) to `archive`. */
export function writeWholeTiles(archive: string, leaves: Uint8Array, start: number): Written {
  const written: Written = { files: 0, bytes: 0 };
  const end = start + leaves.length / HASH_SIZE;
  for (let t = Math.ceil(start / TILE_WIDTH); (t + 1) * TILE_WIDTH <= end; t++) {
    const at = (t * TILE_WIDTH - start) * HASH_SIZE;
    const data = leaves.subarray(at, at + TILE_WIDTH * HASH_SIZE);
    if (writeImmutable(archive, tilePath(0, t, TILE_WIDTH), data)) {
      written.files++;
      written.bytes += data.length;
    }
  }
  return written;
}

/** How many worker threads hash a day of `count` entries beside the caller: one a core beyond the first, at
 *  most three; none for a small day, or one whose entries a worker could not read without a copy. */
export function treeWorkers(day: DayData): number {
  if (dayCount(day) < TREE_WORKERS_FROM) return 0;
  if (!('files' in day) && !(day.hashes.buffer instanceof SharedArrayBuffer)) return 0;
  return Math.max(1, Math.min(3, os.availableParallelism() - 1));
}

/**
 * The day's batches hashed (leaf i at leaf oldSize + i of the tree), in dayBatches' order, `workers` worker
 * threads hashing their share beside this one, and with `archive` writing their batches' whole level-0 tiles
 * (`written`); a worker's batch is yielded once its tiles are on disk. The caller must not change or remove the
 * day's data until the generator is done; leaving it early (return or throw) stops the workers.
 */
export function* hashedBatches(
  day: DayData,
  oldSize: number,
  workers: number,
  archive?: string,
): Generator<HashedBatch> {
  const threads = workers + 1;
  const started = Array.from({ length: workers }, (_, k) => startWorker(day, oldSize, archive, k + 1, threads));
  try {
    let start = oldSize;
    let i = 0;
    for (const { hashes } of dayBatches(day)) {
      const thread = i % threads;
      yield thread === 0 ? hashBatch(hashes, start) : started[thread - 1]!.next();
      start += hashes.length / HASH_SIZE;
      i++;
    }
  } finally {
    for (const w of started) w.stop();
  }
}

function startWorker(
  day: DayData,
  oldSize: number,
  archive: string | undefined,
  thread: number,
  threads: number,
): { next(): HashedBatch; stop(): void } {
  const state = new Int32Array(new SharedArrayBuffer(8));
  const { port1, port2 } = new MessageChannel();
  const job: Job = { treeHashes: true, day, oldSize, archive, thread, threads, state, port: port2 };
  const worker = new Worker(new URL(import.meta.url), { workerData: job, transferList: [port2] });
  worker.unref();
  return {
    next() {
      for (;;) {
        const posted = Atomics.load(state, 0);
        const answer = receiveMessageOnPort(port1)?.message as Answer | undefined;
        if (answer !== undefined) {
          if (!answer.ok) {
            const err = answer.code ? new TimesealError(answer.code, answer.message) : new Error(answer.message);
            err.name = answer.name;
            throw err;
          }
          Atomics.add(state, 1, 1);
          Atomics.notify(state, 1);
          const { leaves, tileRoots, written } = answer;
          return written === undefined ? { leaves, tileRoots } : { leaves, tileRoots, written };
        }
        Atomics.wait(state, 0, posted, 1000);
      }
    },
    stop() {
      port1.close();
      void worker.terminate();
    },
  };
}

if (!isMainThread && (workerData as Job | undefined)?.treeHashes === true) {
  const job = workerData as Job;
  const post = (answer: Answer, transfer: ArrayBuffer[]): void => {
    job.port.postMessage(answer, transfer);
    Atomics.add(job.state, 0, 1);
    Atomics.notify(job.state, 0);
  };
  try {
    let start = job.oldSize;
    let i = 0;
    let mine = 0;
    for (const { hashes } of dayBatches(job.day)) {
      if (i % job.threads === job.thread) {
        waitTaken(job.state, mine - LAG_BATCHES + 1);
        const { leaves, tileRoots } = hashBatch(hashes, start);
        const transfer = [leaves.buffer as ArrayBuffer, tileRoots.buffer as ArrayBuffer];
        if (job.archive === undefined) post({ ok: true, leaves, tileRoots }, transfer);
        else post({ ok: true, leaves, tileRoots, written: writeWholeTiles(job.archive, leaves, start) }, transfer);
        mine++;
      }
      start += hashes.length / HASH_SIZE;
      i++;
    }
    // Ends once the caller has every batch (it stops this worker when it is done or fails).
    waitTaken(job.state, mine);
  } catch (err) {
    const e = err as Error;
    post({ ok: false, message: e.message, name: e.name, code: (err as TimesealError).code }, []);
  }
}

/** Waits until the caller has taken at least `count` batches. */
function waitTaken(state: Int32Array, count: number): void {
  for (let taken = Atomics.load(state, 1); taken < count; taken = Atomics.load(state, 1))
    Atomics.wait(state, 1, taken, 1000);
}
