// The ledger digests on a worker thread give exactly the digests of the same pieces hashed here
// (runtime/node-hash.ts messageDigests, node:crypto), whatever the pieces: whole buffers (handed over), views
// into a larger buffer and shared memory (copied), empty ones, more of them than the worker may lag behind.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { mldsaMuPrefix, mldsaPublicKey } from '../core/sig.ts';
import { messageDigests } from '../runtime/node-hash.ts';
import { messageDigestsBeside } from './digest-worker.ts';

const publicKey = mldsaPublicKey(new Uint8Array(32).fill(7));

/** The pieces of one message: whole buffers, views, a shared buffer, empty pieces; `seed` varies the sizes. */
function pieces(seed: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < 40; i++) {
    const size = (seed * 7919 + i * 104_729) % 300_000;
    const bytes = crypto.randomBytes(size + 16);
    if (i % 5 === 1) out.push(new Uint8Array(bytes.buffer, bytes.byteOffset + 16, size));
    else if (i % 5 === 2) {
      const shared = new Uint8Array(new SharedArrayBuffer(size));
      shared.set(bytes.subarray(0, size));
      out.push(shared);
    } else if (i % 5 === 3) out.push(new Uint8Array(0));
    else out.push(new Uint8Array(bytes.subarray(0, size)));
  }
  return out;
}

describe('messageDigestsBeside', () => {
  it('gives the SHA-256 and the ML-DSA μ that messageDigests gives for the same pieces', () => {
    for (const seed of [1, 2, 3]) {
      const message = pieces(seed);
      const here = messageDigests(publicKey);
      for (const piece of message) here.update(piece);
      const expected = here.digest();
      const whole = Buffer.concat(message.map((p) => Buffer.from(p)));
      expect(Buffer.from(expected.sha256).toString('hex')).toBe(crypto.hash('sha256', whole));

      const beside = messageDigestsBeside(mldsaMuPrefix(publicKey));
      for (const piece of message) beside.update(piece);
      const got = beside.digest();
      expect(Buffer.from(got.sha256).toString('hex')).toBe(Buffer.from(expected.sha256).toString('hex'));
      expect(Buffer.from(got.mu).toString('hex')).toBe(Buffer.from(expected.mu).toString('hex'));
    }
  });

  it('of no piece at all: the digests of the empty message', () => {
    const got = messageDigestsBeside(mldsaMuPrefix(publicKey)).digest();
    const here = messageDigests(publicKey).digest();
    expect(Buffer.from(got.sha256).toString('hex')).toBe(crypto.hash('sha256', ''));
    expect(Buffer.from(got.mu).toString('hex')).toBe(Buffer.from(here.mu).toString('hex'));
  });
});
