// SHA-256 of bytes and of streams, in any JavaScript runtime (@noble/hashes, as core/ uses). Streams are hashed
// chunk by chunk, so a file of any size needs no more memory than one chunk; in Node (which offers its built-in
// modules through process.getBuiltinModule, 20.16 and later) with node:crypto, several times faster than
// JavaScript, found at run time so that the library still names no node: module.
import { sha256 } from '@noble/hashes/sha2.js';
import { toHex } from '../../core/encoding.ts';
import { isHashHex } from '../../core/hash.ts';
import { throwIfAborted, TimesealClientError } from './errors.ts';

/** The SHA-256 of `data` (bytes, or text as UTF-8), lower-case hex. */
export function sha256Hex(data: Uint8Array | string): string {
  return toHex(sha256(typeof data === 'string' ? new TextEncoder().encode(data) : data));
}

export interface HashStreamOptions {
  signal?: AbortSignal;
  /** Called after each chunk with the bytes hashed so far. */
  onProgress?: (bytes: number) => void;
}

interface Sha256State {
  update(chunk: Uint8Array): unknown;
  digest(): Uint8Array;
}

/** Node's crypto module when the platform offers it without an import, else undefined. */
const nodeCrypto = ((
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.('crypto') ?? undefined) as { createHash(algorithm: 'sha256'): Sha256State } | undefined;

/** The SHA-256 of everything a stream yields (a web ReadableStream, a Node stream, any async iterable of bytes). */
export async function hashStream(
  source: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>,
  options: HashStreamOptions = {},
): Promise<string> {
  const h: Sha256State = nodeCrypto?.createHash('sha256') ?? sha256.create();
  let total = 0;
  const iterable: AsyncIterable<Uint8Array> =
    Symbol.asyncIterator in source
      ? (source as AsyncIterable<Uint8Array>)
      : readerIterable(source as ReadableStream<Uint8Array>);
  for await (const chunk of iterable) {
    throwIfAborted(options.signal);
    h.update(chunk);
    total += chunk.length;
    options.onProgress?.(total);
  }
  return toHex(h.digest());
}

async function* readerIterable(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/** `text` as a SHA-256 hash (lower-case), or a 'usage' error naming `what`. */
export function checkHash(text: string, what = 'hash'): string {
  if (!isHashHex(text))
    throw new TimesealClientError(
      'usage',
      `${what}: expected a SHA-256 hash of 64 hexadecimal characters, got ${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)}`,
    );
  return text.toLowerCase();
}
