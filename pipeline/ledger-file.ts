// The day's ledger file (core/ledger.ts, docs/FORMAT.md §3) written beside the tree. Its header holds the root,
// known only once the tree is hashed, but the header's length does not depend on the root (ledgerHeaderLength),
// so the entries go to the file's temp file from that offset on while the tree is hashed: a big day's on a worker
// thread of their own, a batch at a time (the day's sorted entries are shared with it, or read again from an
// external sort's files). Once the root is known the header goes to offset 0, and the digests the day's
// signatures sign (SHA-256, and ML-DSA-65's μ: SHAKE256 over μ's prefix and the file) are read back from the
// file, which the page cache still holds: SHA-256 on the build's thread and μ on the worker, at the same time.
// The temp file is then published as files.ts writeImmutableChunks publishes one (renamed into place, or compared
// with the published file and removed); until then it is in the archive's .tmp/, which the next run clears after
// a kill. The worker answers on a message port, read synchronously (Atomics.wait and receiveMessageOnPort), as
// index-worker.ts does, so the build stays synchronous.
import crypto from 'node:crypto';
import fs from 'node:fs';
import {
  isMainThread,
  MessageChannel,
  receiveMessageOnPort,
  Worker,
  workerData,
  type MessagePort,
} from 'node:worker_threads';
import { TimesealError, type ErrorCode } from '../core/errors.ts';
import { encodeLedgerBody, encodeLedgerHeader, ledgerHeaderLength, type LedgerHeader } from '../core/ledger.ts';
import { mldsaMuPrefix } from '../core/sig.ts';
import { messageDigests } from '../runtime/node-hash.ts';
import { dayBatches, dayCount, type DayData } from './day-sort.ts';
import { publishImmutableTemp, tempFile } from './files.ts';

/** A ledger without its root: what is known of the day's header before the tree is hashed. */
export type LedgerHead = Omit<LedgerHeader, 'root'>;

export interface LedgerFile {
  /** Blocks until the entries are in the temp file; throws what writing them threw. */
  entriesWritten(): void;
  /** Writes the header with `root`, reads the file's digests back and publishes it: `written` false when the
   *  published file was already there with exactly these bytes (a ConflictError when it differs). */
  finish(root: string): { written: boolean; bytes: number; sha256: Uint8Array; mu: Uint8Array };
  /** After a failure: stops the entries' writing, waits until the worker has let go of the temp file and removes
   *  it. Does nothing once finish has returned. */
  abandon(): void;
}

interface Job {
  ledgerFile: true;
  temp: string;
  offset: number;
  head: LedgerHead;
  day: DayData;
  muPrefix: Uint8Array;
  /** [0]: 1 once the entries' answer is posted; [1]: 1 once μ's is; [2]: 1 when the build asks it to stop. */
  state: Int32Array;
  port: MessagePort;
}

type Failure = { ok: false; message: string; name: string; code?: ErrorCode };
type Answer = { ok: true; bytes: number } | { ok: true; mu: Uint8Array } | Failure;

/** Whether a worker can read `day` without a copy: an external sort's files, or columns in shared memory. */
function shared(day: DayData): boolean {
  return (
    'files' in day || (day.hashes.buffer instanceof SharedArrayBuffer && day.ms.buffer instanceof SharedArrayBuffer)
  );
}

/**
 * Starts the ledger file `rel` of the day `head` whose sorted entries are `day`: with `onWorker` (and entries a
 * worker can share) its entries are written by a worker thread from now on, otherwise here before this returns.
 * `mldsaPublicKey` is the key whose μ the day's ML-DSA signature signs. The caller must not change or remove the
 * day's data until entriesWritten has returned, and must call finish or abandon.
 */
export function startLedgerFile(
  archive: string,
  rel: string,
  head: LedgerHead,
  day: DayData,
  mldsaPublicKey: Uint8Array,
  options: { onWorker: boolean },
): LedgerFile {
  const count = dayCount(day);
  const offset = ledgerHeaderLength(head, count);
  const temp = tempFile(archive);
  fs.closeSync(fs.openSync(temp, 'w'));
  const worker = options.onWorker && shared(day) ? startWorker(temp, offset, head, day, mldsaPublicKey) : undefined;
  let bytes = 0;
  if (worker === undefined) {
    try {
      bytes = writeEntries(temp, offset, head, day);
    } catch (err) {
      fs.rmSync(temp, { force: true });
      throw err;
    }
  }
  let done = false;
  return {
    entriesWritten() {
      if (worker !== undefined) bytes = worker.entries();
    },
    finish(root) {
      this.entriesWritten();
      const top = encodeLedgerHeader({ ...head, root }, count);
      const size = offset + bytes;
      const fd = fs.openSync(temp, 'r+');
      let digests: { sha256: Uint8Array; mu: Uint8Array };
      try {
        writeAt(fd, top, 0);
        if (worker === undefined) {
          const both = messageDigests(mldsaPublicKey);
          readBack(fd, size, (piece) => both.update(piece));
          digests = both.digest();
        } else {
          worker.startMu(size);
          const sha256 = crypto.createHash('sha256');
          readBack(fd, size, (piece) => sha256.update(piece));
          digests = { sha256: new Uint8Array(sha256.digest()), mu: worker.mu() };
        }
      } finally {
        fs.closeSync(fd);
      }
      done = true;
      return { written: publishImmutableTemp(archive, rel, temp), bytes: size, ...digests };
    },
    abandon() {
      if (done) return;
      done = true;
      worker?.stop();
      fs.rmSync(temp, { force: true });
    },
  };
}

function startWorker(
  temp: string,
  offset: number,
  head: LedgerHead,
  day: DayData,
  mldsaPublicKey: Uint8Array,
): { entries(): number; startMu(size: number): void; mu(): Uint8Array; stop(): void } {
  const state = new Int32Array(new SharedArrayBuffer(12));
  const { port1, port2 } = new MessageChannel();
  const job: Job = {
    ledgerFile: true,
    temp,
    offset,
    head,
    day,
    muPrefix: mldsaMuPrefix(mldsaPublicKey),
    state,
    port: port2,
  };
  const worker = new Worker(new URL(import.meta.url), { workerData: job, transferList: [port2] });
  worker.unref();
  const answer = (index: number): Answer => {
    while (Atomics.load(state, index) === 0) Atomics.wait(state, index, 0, 1000);
    const message = receiveMessageOnPort(port1)?.message as Answer | undefined;
    if (message === undefined) throw new Error('ledger file worker stopped without an answer');
    if (!message.ok) {
      const err = message.code ? new TimesealError(message.code, message.message) : new Error(message.message);
      err.name = message.name;
      throw err;
    }
    return message;
  };
  let entries: number | undefined;
  let failed = false;
  return {
    entries() {
      if (entries !== undefined) return entries;
      try {
        entries = (answer(0) as { bytes: number }).bytes;
        return entries;
      } catch (err) {
        failed = true;
        throw err;
      }
    },
    startMu(size) {
      port1.postMessage(size);
    },
    mu() {
      try {
        return (answer(1) as { mu: Uint8Array }).mu;
      } finally {
        port1.close();
      }
    },
    stop() {
      // The worker checks the flag between batches and closes its file before it answers.
      Atomics.store(state, 2, 1);
      if (entries === undefined && !failed) while (Atomics.load(state, 0) === 0) Atomics.wait(state, 0, 0, 1000);
      port1.close();
    },
  };
}

/** Writes the ledger's entries and end (encodeLedgerBody) to `temp` from `offset` on; returns their length. */
function writeEntries(temp: string, offset: number, head: LedgerHead, day: DayData, stopped?: () => boolean): number {
  const fd = fs.openSync(temp, 'r+');
  let position = offset;
  try {
    const batches = (function* () {
      for (const { hashes, ms } of dayBatches(day)) {
        if (stopped?.()) throw new Error('the ledger file was abandoned');
        yield { hashes, times: ms };
      }
    })();
    for (const piece of encodeLedgerBody(head, dayCount(day), batches)) {
      writeAt(fd, piece, position);
      position += piece.length;
    }
  } finally {
    fs.closeSync(fd);
  }
  return position - offset;
}

function writeAt(fd: number, bytes: Uint8Array, position: number): void {
  for (let done = 0; done < bytes.length;) done += fs.writeSync(fd, bytes, done, bytes.length - done, position + done);
}

/** The first `size` bytes of the file `fd`, 4 MB at a time through one buffer (each piece valid during `each`). */
function readBack(fd: number, size: number, each: (piece: Uint8Array) => void): void {
  const buffer = Buffer.alloc(Math.min(size, 1 << 22));
  for (let position = 0; position < size;) {
    const n = fs.readSync(fd, buffer, 0, Math.min(buffer.length, size - position), position);
    if (n === 0) throw new Error(`ledger temp file truncated at byte ${position} of ${size}`);
    each(buffer.subarray(0, n));
    position += n;
  }
}

if (!isMainThread && (workerData as Job | undefined)?.ledgerFile === true) {
  const job = workerData as Job;
  const post = (index: number, answer: Answer): void => {
    job.port.postMessage(answer);
    Atomics.store(job.state, index, 1);
    Atomics.notify(job.state, index);
  };
  const failure = (err: unknown): Failure => {
    const e = err as Error;
    return { ok: false, message: e.message, name: e.name, code: (err as TimesealError).code };
  };
  try {
    post(0, {
      ok: true,
      bytes: writeEntries(job.temp, job.offset, job.head, job.day, () => Atomics.load(job.state, 2) === 1),
    });
  } catch (err) {
    post(0, failure(err));
  }
  job.port.on('message', (size: number) => {
    try {
      const mu = crypto.createHash('shake256', { outputLength: 64 }).update(job.muPrefix);
      const fd = fs.openSync(job.temp, 'r');
      try {
        readBack(fd, size, (piece) => mu.update(piece));
      } finally {
        fs.closeSync(fd);
      }
      post(1, { ok: true, mu: new Uint8Array(mu.digest()) });
    } catch (err) {
      post(1, failure(err));
    }
    job.port.close();
  });
}
