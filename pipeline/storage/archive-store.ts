// The archive's storage contract: what the archive writer needs of wherever the public archive lives (a folder,
// or an S3 bucket), in nine calls. Two kinds of writes and one removal, as docs/FORMAT.md §10 separates the files:
// - create: an immutable object (daily files, tiles, entry bundles, index segments, RFC 3161 tokens) is created
//   only if absent (createFromFile: the same from a local file, streamed: a day's ledger of any size). If it exists, identical bytes are success (a rerun after a crash rewrites what it already
//   wrote) and other bytes are a hard error naming the object: a published object is never overwritten.
// - replace: one of the few mutable objects (checkpoint, index head, days.json, status files) is replaced whole;
//   a reader sees the old or the new object, never a part. Given the version the writer last read or wrote, it
//   is a compare-and-swap: replaced only if the object is still at that version, else StaleVersionError and the
//   object is left as it was, so a writer that was stopped (and replaced by another) cannot put an older
//   checkpoint or days.json back over a newer one.
// - remove: the one deletion, of an index segment a merge retired (no index head names it any more), which the
//   build removes from its folder an hour or more after the merge (pipeline/segment-files.ts); the publication
//   then removes it from the store too. Nothing else is ever removed.
// Every object carries the cache class the server gives its path (immutable, short-lived, revalidated), so that
// a CDN or nginx in front of a bucket keeps the classes `timeseal serve` answers with.
// Engines: folder.ts (today's files, byte for byte) and s3.ts; open.ts picks one from TIMESEAL_ARCHIVE.
// The conformance tests every engine must pass: test/storage/contract.ts.
import { TimesealError } from '../../core/errors.ts';
import { parseSegmentPath } from '../../core/index-segments.ts';
import { UsageError } from '../../runtime/config.ts';
import type { ArchiveReader } from '../archive-reader.ts';

/** An object's bytes and its version: S3's ETag (unquoted), a folder's SHA-256 of the bytes (hex). A version
 * names the bytes of one write; it is what `replace` compares. */
export interface VersionedObject {
  bytes: Uint8Array;
  version: string;
}

/** A conditional replace found the object at another version than expected (or present where absent was
 * expected, or absent where a version was): another writer changed it. Nothing was written. */
export class StaleVersionError extends TimesealError {
  constructor(message: string, options?: ErrorOptions) {
    super('conflict', message, options);
    this.name = 'StaleVersionError';
  }
}

export interface ArchiveStore {
  /** Where the archive is, for messages: a folder's path or `s3://bucket/prefix`. */
  readonly location: string;
  /** Creates the immutable object `rel` holding `bytes`. true: written; false: it existed with these bytes.
   * Throws ConflictError (pipeline/files.ts) naming `rel` when it exists with other bytes, and leaves it. */
  create(rel: string, bytes: Uint8Array): Promise<boolean>;
  /** `create` of the bytes of the local file `file` (a day's ledger: 9.25 GB at 100,000,000 entries), streamed
   * from it and never held whole; the comparison with an object already there streams both. The file must not
   * change meanwhile (the working copy's immutable files never do). */
  createFromFile(rel: string, file: string): Promise<boolean>;
  /** Creates or replaces the mutable object `rel`, atomically for readers; returns its new version. `expected`
   * undefined: whatever is there; a version: only if the object is at that version; null: only if there is no
   * such object. Throws StaleVersionError naming `rel` when the condition fails, and leaves the object. */
  replace(rel: string, bytes: Uint8Array, expected?: string | null): Promise<string>;
  /** The object's bytes, or undefined when there is none. */
  read(rel: string): Promise<Uint8Array | undefined>;
  /** The object's bytes in pieces as they arrive, never held whole (a day's ledger: 9.7 GB at 100,000,000
   * entries), or undefined when there is none; leaving the loop early ends the transfer. */
  stream(rel: string): Promise<AsyncIterable<Uint8Array> | undefined>;
  /** The object's bytes and version, read together, or undefined when there is none. */
  readVersioned(rel: string): Promise<VersionedObject | undefined>;
  exists(rel: string): Promise<boolean>;
  /** Every object whose path starts with `prefix` ('' for all), in byte order of their paths. */
  list(prefix: string): Promise<string[]>;
  /** Removes the object `rel`; nothing happens when there is none. Only for index segments a merge retired (see
   * the module comment): refused (UsageError) for any other path. */
  remove(rel: string): Promise<void>;
}

const NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/** Checks an object path: `/`-separated names of letters, digits, `.`, `_`, `-`, none empty or starting with a
 * dot (no `..`, no hidden or temporary files). Returns it. */
export function checkObjectPath(rel: string): string {
  if (rel.length === 0 || rel.length > 512 || !rel.split('/').every((name) => NAME.test(name))) {
    throw new UsageError(`not an archive object path: ${JSON.stringify(rel.slice(0, 100))}`);
  }
  return rel;
}

/** Checks that `rel` is an object the archive may remove: an index segment file (index/<from>-<to>.idx). */
export function checkRemovable(rel: string): string {
  if (parseSegmentPath(checkObjectPath(rel)) === null)
    throw new UsageError(`only retired index segments are removed from an archive, not ${rel}`);
  return rel;
}

/** Checks a listing prefix: '' or the start of an object path (it may end in `/` or inside a name). */
export function checkListPrefix(prefix: string): string {
  if (prefix !== '') checkObjectPath(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix);
  return prefix;
}

/** A store read as an archive (pipeline/archive-reader.ts: what `timeseal verify` and the mirror's pull read):
 * `read` answers each path (a store's own read, or one that notes what it read); `stream`, when given, each file
 * read in pieces (a store's own stream: a day's ledger and index-sha256.json are never held), else a stream is
 * the object read whole. */
export function archiveStoreReader(
  location: string,
  read: (rel: string) => Promise<Uint8Array | undefined>,
  stream?: (rel: string) => Promise<AsyncIterable<Uint8Array> | undefined>,
): ArchiveReader {
  return {
    location,
    read,
    stream: async (rel) => (stream ? stream(rel) : wholeStream(await read(rel))),
  };
}

/** Bytes read whole as a stream of one piece (undefined stays undefined). */
export function wholeStream(data: Uint8Array | undefined): AsyncIterable<Uint8Array> | undefined {
  return data === undefined
    ? undefined
    : (async function* () {
        yield data;
      })();
}
