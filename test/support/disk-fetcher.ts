// A Fetcher (site/src/lib/verified-search.ts) over an archive folder and a keys folder, answering like the web
// server: /ledgers/… and /keys/…, 404 when absent, one byte range per `Range` header (206, or 416 past the
// end). Overrides replace a URL's body (null: 404); `ignoreRange` acts as a server without Range support.
import fs from 'node:fs';
import path from 'node:path';
import type { Fetcher } from '../../site/src/lib/verified-search.ts';

export interface DiskFetcherOptions {
  overrides?: Record<string, Uint8Array | null>;
  /** Every URL asked for, in order. */
  log?: string[];
  ignoreRange?: boolean;
}

export function diskFetcher(archive: string, keys: string, options: DiskFetcherOptions = {}): Fetcher {
  const { overrides = {}, log = [], ignoreRange = false } = options;
  return async (url, init) => {
    log.push(url);
    const range = /^bytes=(\d+)-(\d+)$/.exec(init?.headers.Range ?? '');
    let body: Uint8Array | null;
    if (Object.hasOwn(overrides, url)) body = overrides[url] ?? null;
    else {
      const file = url.startsWith('/ledgers/')
        ? path.join(archive, url.slice(9))
        : url.startsWith('/keys/')
          ? path.join(keys, url.slice(6))
          : null;
      if (file === null || !fs.existsSync(file)) body = null;
      else if (range !== null && !ignoreRange) return fileRange(file, Number(range[1]), Number(range[2]));
      else body = fs.readFileSync(file);
    }
    if (body === null) return new Response('not found', { status: 404 });
    if (range === null || ignoreRange) return new Response(body as Uint8Array<ArrayBuffer>);
    const start = Number(range[1]);
    if (start >= body.length)
      return new Response(null, { status: 416, headers: { 'Content-Range': `bytes */${body.length}` } });
    const end = Math.min(Number(range[2]), body.length - 1);
    return new Response(body.slice(start, end + 1) as Uint8Array<ArrayBuffer>, {
      status: 206,
      headers: { 'Content-Range': `bytes ${start}-${end}/${body.length}` },
    });
  };
}

/** One byte range of a file read from disk alone (segment files of a large archive pass 2 GiB). */
function fileRange(file: string, start: number, last: number): Response {
  const size = fs.statSync(file).size;
  if (start >= size) return new Response(null, { status: 416, headers: { 'Content-Range': `bytes */${size}` } });
  const end = Math.min(last, size - 1);
  const out = Buffer.alloc(end - start + 1);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, out, 0, out.length, start);
  } finally {
    fs.closeSync(fd);
  }
  return new Response(out, { status: 206, headers: { 'Content-Range': `bytes ${start}-${end}/${size}` } });
}
