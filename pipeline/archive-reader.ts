// Reading an archive from a local folder or from a live site over HTTP(S), behind one small interface, so the
// same verifier checks both (as tessera's fetcher does).
import fs from 'node:fs';
import path from 'node:path';
import { withContext } from '../core/errors.ts';

/** Contract: `read(rel)` returns the bytes of the archive file at the relative path `rel`, or undefined when
 * the file does not exist (HTTP 404); any other failure throws. `rel` never starts with '/'. `stream(rel)` is
 * the same file in pieces, for files too large to hold (index-sha256.json: 1.7 GB at 10,000,000 hashes);
 * leaving the loop early releases it. */
export interface ArchiveReader {
  readonly location: string;
  read(rel: string): Promise<Uint8Array | undefined>;
  stream(rel: string): Promise<AsyncIterable<Uint8Array> | undefined>;
}

export function folderReader(root: string): ArchiveReader {
  /** `open(file)`, or undefined when the file does not exist; other failures name `rel`. */
  const opened = async <T>(rel: string, open: (file: string) => Promise<T>): Promise<T | undefined> => {
    try {
      return await open(path.join(root, rel));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw withContext(`reading ${rel}`, err);
    }
  };
  return {
    location: root,
    read: (rel) => opened(rel, (file) => fs.promises.readFile(file)),
    async stream(rel) {
      const handle = await opened(rel, (file) => fs.promises.open(file));
      return handle?.createReadStream({ highWaterMark: 1 << 20 });
    },
  };
}

export function httpReader(baseUrl: string, timeoutMs = 30_000): ArchiveReader {
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  /** The answer for `rel`, undefined on 404; any other failure throws. */
  const get = async (rel: string): Promise<Response | undefined> => {
    const url = new URL(rel, base);
    let res: Response;
    try {
      res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      throw withContext(`fetching ${url}`, err);
    }
    if (res.status === 404) return undefined;
    if (!res.ok) throw new Error(`fetching ${url}: HTTP ${res.status}`);
    return res;
  };
  return {
    location: base,
    async read(rel) {
      const res = await get(rel);
      return res && new Uint8Array(await res.arrayBuffer());
    },
    async stream(rel) {
      const res = await get(rel);
      // Node's web ReadableStream is async-iterable; the DOM typings of fetch do not say so.
      return (res?.body ?? undefined) as AsyncIterable<Uint8Array> | undefined;
    },
  };
}

export function readerFor(location: string): ArchiveReader {
  return /^https?:\/\//.test(location) ? httpReader(location) : folderReader(location);
}
