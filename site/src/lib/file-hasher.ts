// Main-thread side of lib/hash.worker.ts: one worker, one file at a time, progress callbacks, and cancel
// (which terminates the worker; the next hash starts a fresh one).
import type { HashReply } from './hash.worker.ts';

export class HashCancelledError extends Error {
  constructor() {
    super('hashing cancelled');
    this.name = 'HashCancelledError';
  }
}

export interface HashJob {
  promise: Promise<string>;
  cancel(): void;
}

let worker: Worker | null = null;
let nextId = 1;
let busy: Promise<unknown> = Promise.resolve();

function getWorker(): Worker {
  worker ??= new Worker(new URL('./hash.worker.ts', import.meta.url), { type: 'module' });
  return worker;
}

/** Hashes `file` (SHA-256, lower-case hex). Jobs run one after the other. */
export function hashFile(file: Blob, onProgress?: (loaded: number, total: number) => void): HashJob {
  let cancelled = false;
  let rejectCurrent: ((err: Error) => void) | null = null;
  let started = false;
  const run = async (): Promise<string> => {
    if (cancelled) throw new HashCancelledError();
    started = true;
    const w = getWorker();
    const id = nextId++;
    return new Promise<string>((resolve, reject) => {
      rejectCurrent = reject;
      const onMessage = (event: MessageEvent<HashReply>) => {
        const reply = event.data;
        if (reply.id !== id) return;
        if (reply.type === 'progress') onProgress?.(reply.loaded, reply.total);
        else {
          w.removeEventListener('message', onMessage);
          if (reply.type === 'done') resolve(reply.hash);
          else reject(new Error(reply.message));
        }
      };
      w.addEventListener('message', onMessage);
      w.postMessage({ id, file });
    });
  };
  const promise = busy.then(run, run);
  busy = promise.catch(() => undefined);
  return {
    promise,
    cancel() {
      if (cancelled) return;
      cancelled = true;
      if (started && rejectCurrent) {
        worker?.terminate();
        worker = null;
        (rejectCurrent as (err: Error) => void)(new HashCancelledError());
      }
    },
  };
}

/** SHA-256 of UTF-8 text with WebCrypto (text is small; no worker needed). */
export async function hashText(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}
