// Writes the files made from a day's sorted hashes alone, on worker threads: the entry bundles (bundle-files.ts)
// on one, the day's index segment (segment-files.ts) on another; and the handle the build waits on. The build
// stays synchronous: `wait()` blocks on each worker's shared flag (Atomics.wait) and reads its answer with
// receiveMessageOnPort, so no caller has to become async. A worker always answers (its work is inside
// try/catch); only a failure to load this module would leave the flag unset, which every build in the tests
// would show at once. A small day is written on the calling thread instead (WORKER_FROM_HASHES): a worker's
// start costs more than its files.
import {
  isMainThread,
  MessageChannel,
  receiveMessageOnPort,
  Worker,
  workerData,
  type MessagePort,
} from 'node:worker_threads';
import { TimesealError, type ErrorCode } from '../core/errors.ts';
import { writeEntryBundles } from './bundle-files.ts';
import { dayBatches, dayCount, type DayData } from './day-sort.ts';
import type { Segment } from '../core/index-segments.ts';
import { writeDayMergedSegment, writeDaySegment, type Written } from './segment-files.ts';

interface Job {
  archive: string;
  oldSize: number;
  day: DayData;
  bundles: boolean;
  index: boolean;
  mergeWith: Segment[];
  done: Int32Array;
  port: MessagePort;
}

type Answer =
  { ok: true; written: Written } | { ok: false; message: string; name: string; code?: ErrorCode; stack?: string };

export interface HashFilesJob {
  /** Blocks until the worker has finished; returns what it wrote or throws what it threw. */
  wait(): Written;
}

/**
 * Starts writing the entry bundles of a day's sorted hashes (i at leaf oldSize + i), and with `index` the day's
 * index segment (hash i at leaf oldSize + i, times in ms) — or, given `mergeWith` (the newest published segments,
 * ending at oldSize), that segment merged with them at once. The day's files (an external sort's, day-sort.ts) are
 * read again by each worker; arrays backed by a SharedArrayBuffer (sortDay makes them so) are shared with them,
 * others copied once into shared memory; the caller must not change or remove them until wait() returns.
 */
export function startHashFilesJob(
  archive: string,
  oldSize: number,
  day: DayData,
  options: { index: boolean; mergeWith?: readonly Segment[]; onWorker?: boolean },
): HashFilesJob {
  const mergeWith = [...(options.mergeWith ?? [])];
  if (!(options.onWorker ?? dayCount(day) >= WORKER_FROM_HASHES))
    return writeHere(archive, oldSize, day, options.index, mergeWith);
  let posted = day;
  if (
    !('files' in day) &&
    !(day.hashes.buffer instanceof SharedArrayBuffer && day.ms.buffer instanceof SharedArrayBuffer)
  ) {
    // copies into shared memory (Buffer#slice would be a view), which both workers read
    const hashes = new Uint8Array(new SharedArrayBuffer(day.hashes.length));
    hashes.set(day.hashes);
    const ms = new Float64Array(new SharedArrayBuffer(day.ms.byteLength));
    ms.set(day.ms);
    posted = { hashes, ms };
  }
  // The bundles (many small files: mostly the kernel's time) and the segment (one large file: mostly the
  // merge's) on a worker each, so that neither waits for the other and the build's last seconds are not one
  // thread's.
  const workers = [startWorker({ archive, oldSize, day: posted, bundles: true, index: false, mergeWith: [] })];
  if (options.index)
    workers.push(startWorker({ archive, oldSize, day: posted, bundles: false, index: true, mergeWith }));
  let result: Written | undefined;
  return {
    wait() {
      if (result !== undefined) return result;
      // Every worker waited for before a failure is thrown, so that none is left writing the archive.
      const answers = workers.map((worker) => worker.answer());
      const total: Written = { files: 0, bytes: 0 };
      for (const answer of answers) {
        if (!answer.ok) {
          const err = answer.code ? new TimesealError(answer.code, answer.message) : new Error(answer.message);
          err.name = answer.name;
          if (answer.stack) err.stack = answer.stack;
          throw err;
        }
        total.files += answer.written.files;
        total.bytes += answer.written.bytes;
      }
      result = total;
      return result;
    },
  };
}

/** A worker writing `job`'s files; answer() blocks until it has answered (a failure if it stopped without). */
function startWorker(job: Omit<Job, 'done' | 'port'>): { answer(): Answer } {
  const done = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { ...job, done, port: port2 },
    transferList: [port2],
    // A small young generation: the worker makes ~170 MB of short-lived strings and shard copies per million
    // hashes, and frequent scavenges free them at once instead of letting the heap grow beside the build's.
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
  });
  worker.unref();
  let answer: Answer | undefined;
  return {
    answer() {
      if (answer !== undefined) return answer;
      while (Atomics.load(done, 0) === 0) Atomics.wait(done, 0, 0, 1000);
      const message = receiveMessageOnPort(port1)?.message as Answer | undefined;
      port1.close();
      answer = message ?? { ok: false, message: 'index writer stopped without an answer', name: 'Error' };
      return answer;
    },
  };
}

/**
 * Days with fewer hashes are written on the calling thread: starting a worker (a new isolate that loads these
 * modules: ~0.15–0.2 s of CPU) costs more than their files (~10 ms for 8,192 hashes), and most days of a young
 * or quiet archive are small. From this size on, the worker's files are written while the build hashes the tree.
 */
export const WORKER_FROM_HASHES = 8192;

/** The files written here, at once; wait() gives what was written or throws what failed, as the worker's would. */
function writeHere(
  archive: string,
  oldSize: number,
  day: DayData,
  index: boolean,
  mergeWith: readonly Segment[],
): HashFilesJob {
  let written: Written | undefined;
  let failure: unknown;
  try {
    written = writeHashFiles(archive, oldSize, day, true, index, mergeWith);
  } catch (err) {
    failure = err;
  }
  return {
    wait() {
      if (written === undefined) throw failure;
      return written;
    },
  };
}

/** With `bundles` the entry bundles, then with `index` the segment (the day's own, or merged with `mergeWith` at
 * once): each reads the day's entries once, a batch at a time. */
function writeHashFiles(
  archive: string,
  oldSize: number,
  day: DayData,
  bundles: boolean,
  index: boolean,
  mergeWith: readonly Segment[],
): Written {
  const written: Written = { files: 0, bytes: 0 };
  if (bundles)
    writeEntryBundles(
      archive,
      oldSize,
      (function* () {
        for (const batch of dayBatches(day)) yield batch.hashes;
      })(),
      written,
    );
  if (index && mergeWith.length > 0)
    writeDayMergedSegment(archive, mergeWith, oldSize, dayCount(day), dayBatches(day), written);
  else if (index) writeDaySegment(archive, oldSize, dayCount(day), dayBatches(day), written);
  return written;
}

if (!isMainThread && (workerData as Job | undefined)?.done instanceof Int32Array) {
  const job = workerData as Job;
  let answer: Answer;
  try {
    answer = {
      ok: true,
      written: writeHashFiles(job.archive, job.oldSize, job.day, job.bundles, job.index, job.mergeWith),
    };
  } catch (err) {
    const e = err as Error;
    answer = {
      ok: false,
      message: e.message,
      name: e.name,
      stack: e.stack,
      ...(err instanceof TimesealError ? { code: err.code } : {}),
    };
  }
  job.port.postMessage(answer);
  Atomics.store(job.done, 0, 1);
  Atomics.notify(job.done, 0);
}
