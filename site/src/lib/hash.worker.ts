// SHA-256 of a File in a Web Worker, so the page stays responsive whatever the size. Small files go through
// WebCrypto in one shot (fastest); larger ones stream through hash-wasm in CHUNK_BYTES slices read with
// file.slice(), so memory stays bounded. Nothing leaves this worker but progress and the digest.
import { createSHA256 } from 'hash-wasm';

/** Files up to this size are read whole and hashed by WebCrypto. */
export const WEBCRYPTO_MAX_BYTES = 64 * 1024 * 1024;
/** Streaming slice size. */
export const CHUNK_BYTES = 8 * 1024 * 1024;

export type HashRequest = { id: number; file: Blob };
export type HashReply =
  | { id: number; type: 'progress'; loaded: number; total: number }
  | { id: number; type: 'done'; hash: string }
  | { id: number; type: 'error'; message: string };

const post = (reply: HashReply) => (self as unknown as Worker).postMessage(reply);

function toHex(buffer: ArrayBuffer): string {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');
}

async function hashBlob(id: number, file: Blob): Promise<string> {
  const total = file.size;
  if (total <= WEBCRYPTO_MAX_BYTES && globalThis.crypto?.subtle) {
    const digest = await crypto.subtle.digest('SHA-256', await file.arrayBuffer());
    post({ id, type: 'progress', loaded: total, total });
    return toHex(digest);
  }
  const hasher = await createSHA256();
  hasher.init();
  for (let offset = 0; offset < total; offset += CHUNK_BYTES) {
    const chunk = new Uint8Array(await file.slice(offset, offset + CHUNK_BYTES).arrayBuffer());
    hasher.update(chunk);
    post({ id, type: 'progress', loaded: Math.min(offset + CHUNK_BYTES, total), total });
  }
  return hasher.digest('hex');
}

self.addEventListener('message', (event: MessageEvent<HashRequest>) => {
  const { id, file } = event.data;
  hashBlob(id, file).then(
    (hash) => post({ id, type: 'done', hash }),
    (err: unknown) => post({ id, type: 'error', message: err instanceof Error ? err.message : String(err) }),
  );
});
