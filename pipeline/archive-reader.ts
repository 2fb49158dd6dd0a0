// Reading an archive from a local folder or from a live site over HTTP(S), behind one small interface, so the
// same verifier checks both (as tessera's fetcher does). Over HTTP every file goes through the bounded client
// (pipeline/http.ts): a deadline per request, no redirects, nothing decompressed, and a cap per file from what
// the file can be (archiveFileCap), so that a hostile or broken host costs bounded memory. A read that failed in
// passing (a reset connection, a 502/503/504) is asked again, three attempts in all: a mirror pull makes tens
// of thousands of requests, and one reset must not end it.
// A day's ledger is the one file whose size is not small and fixed: it is read by streamLedger, as a stream and
// never held, within the size its signed entry count allows (ledgerStreamCap), hashed and parsed on the way in.
import fs from 'node:fs';
import path from 'node:path';
import { dateOfDayFile, DAYS_PATH, ledgerPath } from '../core/archive.ts';
import { verifyCheckpoint } from '../core/checkpoint.ts';
import type { LedgerPass, PublicKeySet } from '../core/day.ts';
import { fromUtf8 } from '../core/encoding.ts';
import { TimesealError, withContext } from '../core/errors.ts';
import { LEDGER_FORMAT } from '../core/ledger.ts';
import { ecdsaNoteVerifier, mldsaNoteVerifier } from '../core/note.ts';
import { boundedStream, NetworkError, readBody } from './http.ts';

const MiB = 1 << 20;
/** days.json: one line of about 200 bytes a day, so 16 MiB is some 80,000 days (over two centuries). */
export const MAX_DAYS_FILE = 16 * MiB;
/** A day's ledger (docs/FORMAT.md §3) read whole: about 97 bytes an entry; 4 GiB (some 45 million entries a
 * day) is also the most one buffer holds. A reader that knows the day's signed entry count streams it within
 * ledgerStreamCap instead (streamLedger), never held. */
export const MAX_LEDGER_FILE = 4 * 1024 * MiB;

/** The longest a safe integer is written: 9007199254740991. */
const LONGEST_NUMBER = '9'.repeat(16);
const HEX64 = '0'.repeat(64);
/** The bytes of one entry's line (docs/FORMAT.md §3): `["<64 hex>","<24-character ISO time>"]` and the `,\n`
 * before the next. */
const ENTRY_LINE = 2 + 64 + 3 + 24 + 2 + 2;

/**
 * The most bytes the canonical ledger of a day of `entries` entries in the log `origin` can hold (docs/FORMAT.md
 * §3, written by core/ledger.ts): its header with every number at its longest and a previous day, one line an
 * entry, and the closing `]}` and newline. An honest ledger is at most 140 bytes shorter (the numbers' digits, a
 * first day's `null` previous). A reader that streams the ledger (streamLedger) holds it to this, with no bound
 * of one buffer: a day of 100,000,000 entries is a ledger of 9.7 GB.
 */
export function ledgerStreamCap(origin: string, entries: number): number {
  const header =
    `{"format":"${LEDGER_FORMAT}","origin":${JSON.stringify(origin)},"date":"YYYY-MM-DD",` +
    `"first_index":${LONGEST_NUMBER},"entry_count":${LONGEST_NUMBER},"tree_size":${LONGEST_NUMBER},` +
    `"root":"${HEX64}","previous":{"date":"YYYY-MM-DD","sha256":"${HEX64}"},"entries":[\n`;
  return Buffer.byteLength(header) + Math.max(0, entries) * ENTRY_LINE + 4;
}

/** The tree size of a day's checkpoint, once both of the log's signatures on it check (under `origin`): with the
 * tree size before the day, what says how many entries the day's ledger holds before a byte of it is read. */
export function signedTreeSize(checkpoint: Uint8Array, origin: string, keys: PublicKeySet): number {
  return verifyCheckpoint(
    fromUtf8(checkpoint, 'checkpoint'),
    [ecdsaNoteVerifier(origin, keys.ecdsa), mldsaNoteVerifier(origin, keys.mldsa)],
    { origin },
  ).size;
}

/** A ledger larger than its entry count allows: refused at the first byte too many. */
export class LedgerTooLargeError extends TimesealError {
  constructor(rel: string, maxBytes: number, entries: number) {
    super(
      'format',
      `${rel}: more than ${maxBytes} bytes, the most a ledger of ${entries} entr${entries === 1 ? 'y' : 'ies'} can hold (docs/FORMAT.md §3): refused before the rest was read`,
    );
    this.name = 'LedgerTooLargeError';
  }
}

/**
 * The day's ledger `rel` of `entries` entries (its signed checkpoint's tree size less the tree before it) in the
 * log `origin`, read as a stream through `pass` (core/day.ts LedgerPass: hashed and parsed as it passes, never
 * held) and refused with a LedgerTooLargeError at the first piece past ledgerStreamCap (the rest is never asked
 * for); `afterPiece` runs after each piece that parsed. False when the file does not exist.
 */
export async function streamLedger(
  reader: ArchiveReader,
  rel: string,
  origin: string,
  entries: number,
  pass: LedgerPass,
  afterPiece?: () => Promise<void>,
): Promise<boolean> {
  const maxBytes = ledgerStreamCap(origin, entries);
  const body = await reader.stream(rel, maxBytes);
  if (body === undefined) return false;
  // Leaving the loop ends the transfer (the ArchiveReader contract).
  for await (const piece of body) {
    if (pass.size + piece.length > maxBytes) throw new LedgerTooLargeError(rel, maxBytes, entries);
    if (pass.push(piece) && afterPiece) await afterPiece();
  }
  return true;
}

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
 * leaving the loop early releases it. `maxBytes`, when the caller knows how large the file may be (a day's ledger:
 * ledgerStreamCap, which the caller holds it to), gives the transfer time in proportion (httpReader:
 * STREAM_MIN_RATE). `pieceBytes`, when given, is the most a piece of a file read from disk may hold (1 MiB
 * otherwise): for a caller that reads many files at once (the index check merges every day of a segment). */
export interface ArchiveReader {
  readonly location: string;
  read(rel: string): Promise<Uint8Array | undefined>;
  stream(rel: string, maxBytes?: number, pieceBytes?: number): Promise<AsyncIterable<Uint8Array> | undefined>;
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
    async stream(rel, _maxBytes, pieceBytes = MiB) {
      const handle = await opened(rel, (file) => fs.promises.open(file));
      return handle?.createReadStream({ highWaterMark: pieceBytes });
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

/**
 * The slowest a streamed file of known size may arrive, bytes a second, on top of the request's deadline: a day's
 * ledger is read as verify checks it, between the tiles and bundles it fetches meanwhile (some 8 MB/s on these
 * machines), so the 970 MB ledger of a 10,000,000-hash day needed more than the 30 s of one request. A peer that
 * sends slower than this is still cut off, after time in proportion to what it may send.
 */
export const STREAM_MIN_RATE = MiB;

export function httpReader(baseUrl: string, timeoutMs = 30_000): ArchiveReader {
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  /** The body of `rel` within `maxBytes` and `deadlineMs`, undefined on 404 (no such file); any other status throws. */
  const open = async (
    rel: string,
    maxBytes: number,
    deadlineMs = timeoutMs,
  ): Promise<AsyncIterable<Uint8Array> | undefined> => {
    const url = new URL(rel, base).href;
    const res = await boundedStream(url, { timeoutMs: deadlineMs, maxBytes });
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
    // The caller checks the size it knows (a ledger against its signed entry count, with its own message); here
    // it only gives the transfer its time.
    stream: (rel, maxBytes) =>
      withRetries(() =>
        open(
          rel,
          MAX_STREAMED_FILE,
          maxBytes === undefined ? timeoutMs : timeoutMs + Math.ceil((maxBytes / STREAM_MIN_RATE) * 1000),
        ),
      ),
  };
}

export function readerFor(location: string, timeoutMs?: number): ArchiveReader {
  return /^https?:\/\//.test(location) ? httpReader(location, timeoutMs) : folderReader(location);
}
