// Reading an archive from a local folder or from a live site over HTTP(S), behind one small interface, so the
// same verifier checks both (as tessera's fetcher does). Over HTTP every file goes through the bounded client
// (pipeline/http.ts): a deadline per request, no redirects, nothing decompressed, and a cap per file from what
// the file can be (archiveFileCap), so that a hostile or broken host costs bounded memory. A read that failed in
// passing (a reset connection, a 502/503/504) is asked again, three attempts in all: a mirror pull makes tens
// of thousands of requests, and one reset must not end it.
import fs from 'node:fs';
import path from 'node:path';
import { dateOfDayFile, DAYS_PATH, ledgerPath } from '../core/archive.ts';
import { withContext } from '../core/errors.ts';
import { boundedStream, NetworkError, readBody } from './http.ts';

const MiB = 1 << 20;
/** days.json: one line of about 200 bytes a day, so 16 MiB is some 80,000 days (over two centuries). */
export const MAX_DAYS_FILE = 16 * MiB;
/** A day's ledger (docs/FORMAT.md §3): about 95 bytes an entry; 4 GiB (some 45 million entries a day) is also
 * the most one buffer holds, and verify holds a day's ledger whole. */
export const MAX_LEDGER_FILE = 4 * 1024 * MiB;
/** Every other file read whole: tiles and entry bundles (8–9 KiB), signatures, a checkpoint with its cosignature
 * lines (at most 100 signatures, about 340 KB of ML-DSA-44 ones), RFC 3161 tokens, OpenTimestamps proofs, the
 * index head, status files and keys are all far below 1 MiB. */
export const MAX_SMALL_FILE = MiB;
/** Files compared as they stream in (index segments, index-sha256.json: 1.7 GB at 10,000,000 hashes) are never
 * held, and the comparison stops at the first byte too many; the cap only bounds the transfer. */
export const MAX_STREAMED_FILE = 64 * 1024 * MiB;

/** The most bytes the archive file at `rel` can hold when read whole (see the constants above). */
export function archiveFileCap(rel: string): number {
  if (rel === DAYS_PATH) return MAX_DAYS_FILE;
  const date = dateOfDayFile(rel);
  return date !== null && rel === ledgerPath(date) ? MAX_LEDGER_FILE : MAX_SMALL_FILE;
}

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

/** Waits before the second and third attempt of a read that failed in passing (see `passing`). */
const RETRY_AFTER_MS = [250, 1_000];

/** A status of a server or proxy that is briefly unable to answer. */
class PassingStatus extends Error {}

/** A failure a second attempt can cure: a connection reset or refused (among them the keep-alive race: a
 * request sent on a pooled connection just as the server closes it), or a 502, 503 or 504. A timeout, a file
 * over its cap or any other status is an answer, not asked again. */
function passing(err: unknown): boolean {
  if (err instanceof PassingStatus) return true;
  return (
    err instanceof NetworkError &&
    err.reason === 'unreachable' &&
    ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ECONNABORTED'].includes(err.detail)
  );
}

async function withRetries<T>(attempt: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      if (i >= RETRY_AFTER_MS.length || !passing(err))
        throw err instanceof PassingStatus ? new Error(err.message) : err;
      await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_MS[i]));
    }
  }
}

export function httpReader(baseUrl: string, timeoutMs = 30_000): ArchiveReader {
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  /** The body of `rel` within `maxBytes`, undefined on 404 (no such file); any other status throws. */
  const open = async (rel: string, maxBytes: number): Promise<AsyncIterable<Uint8Array> | undefined> => {
    const url = new URL(rel, base).href;
    const res = await boundedStream(url, { timeoutMs, maxBytes });
    if (res.status >= 200 && res.status <= 299) return res.body;
    res.cancel();
    if (res.status === 404) return undefined;
    const message = `fetching ${url}: HTTP ${res.status}`;
    throw [502, 503, 504].includes(res.status) ? new PassingStatus(message) : new Error(message);
  };
  return {
    location: base,
    // A file read whole is asked again, up to three times in all, when the failure was in passing (even
    // half way through its body); a streamed one only until its body begins.
    read: (rel) =>
      withRetries(async () => {
        const body = await open(rel, archiveFileCap(rel));
        return body && readBody(body);
      }),
    stream: (rel) => withRetries(() => open(rel, MAX_STREAMED_FILE)),
  };
}

export function readerFor(location: string, timeoutMs?: number): ArchiveReader {
  return /^https?:\/\//.test(location) ? httpReader(location, timeoutMs) : folderReader(location);
}
