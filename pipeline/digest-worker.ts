// SHA-256 and the ML-DSA-65 μ (runtime/node-hash.ts messageDigests: SHAKE256 over μ's prefix then the message)
// of a day's ledger file on a worker thread, while the build's thread goes on encoding and writing it: on two
// cores the 1 GB of a 10 M-hash day is hashed beside its writing instead of after each piece. The pieces are
// handed over without a copy (each piece's buffer is transferred once the file has it); the build waits when
// LAG_PIECES are not yet hashed, so that memory stays a few pieces. The worker answers its digests on a
// message port, read synchronously (Atomics.wait and receiveMessageOnPort), as index-worker.ts does.
import crypto from 'node:crypto';
import {
  isMainThread,
  MessageChannel,
  receiveMessageOnPort,
  Worker,
  workerData,
  type MessagePort,
} from 'node:worker_threads';

/** Pieces handed over and not yet hashed before the build waits (a ledger piece is ~6.5 MB: 65,536 entries). */
const LAG_PIECES = 4;

interface Job {
  muPrefix: Uint8Array;
  /** [0]: pieces hashed; [1]: 1 once the answer is posted. */
  state: Int32Array;
  port: MessagePort;
}

type Answer = { ok: true; sha256: Uint8Array; mu: Uint8Array } | { ok: false; message: string };

export interface MessageDigests {
  /** Hashes `bytes` next. The caller must not use `bytes` afterwards (its buffer may be handed to the worker). */
  update(bytes: Uint8Array): void;
  digest(): { sha256: Uint8Array; mu: Uint8Array };
}

/** messageDigests of runtime/node-hash.ts, with the hashing on a worker thread; `muPrefix` is mldsaMuPrefix of
 * the public key. */
export function messageDigestsBeside(muPrefix: Uint8Array): MessageDigests {
  const state = new Int32Array(new SharedArrayBuffer(8));
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { muPrefix, state, port: port2 },
    transferList: [port2],
  });
  worker.unref();
  let sent = 0;
  const waitFor = (index: number, value: number): void => {
    for (let seen = Atomics.load(state, index); seen < value; seen = Atomics.load(state, index))
      Atomics.wait(state, index, seen, 1000);
  };
  return {
    update(bytes) {
      const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
      const piece = whole && !(bytes.buffer instanceof SharedArrayBuffer) ? bytes : bytes.slice();
      port1.postMessage(piece, [piece.buffer as ArrayBuffer]);
      sent++;
      waitFor(0, sent - LAG_PIECES);
    },
    digest() {
      port1.postMessage('end');
      waitFor(1, 1);
      const answer = receiveMessageOnPort(port1)?.message as Answer | undefined;
      port1.close();
      if (answer === undefined) throw new Error('ledger digest worker stopped without an answer');
      if (!answer.ok) throw new Error(`ledger digest worker: ${answer.message}`);
      return { sha256: answer.sha256, mu: answer.mu };
    },
  };
}

if (!isMainThread && (workerData as Job | undefined)?.muPrefix instanceof Uint8Array) {
  const job = workerData as Job;
  const sha256 = crypto.createHash('sha256');
  const mu = crypto.createHash('shake256', { outputLength: 64 }).update(job.muPrefix);
  job.port.on('message', (message: Uint8Array | 'end') => {
    if (message === 'end') {
      let answer: Answer;
      try {
        answer = { ok: true, sha256: new Uint8Array(sha256.digest()), mu: new Uint8Array(mu.digest()) };
      } catch (err) {
        answer = { ok: false, message: (err as Error).message };
      }
      job.port.postMessage(answer);
      job.port.close();
      Atomics.store(job.state, 1, 1);
      Atomics.notify(job.state, 1);
      return;
    }
    sha256.update(message);
    mu.update(message);
    Atomics.add(job.state, 0, 1);
    Atomics.notify(job.state, 0);
  });
}
