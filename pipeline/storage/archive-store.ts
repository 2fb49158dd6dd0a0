// The archive's storage contract: what the archive writer needs of wherever the public archive lives (a folder,
// or an S3 bucket), in five calls. Two kinds of writes, as docs/FORMAT.md §10 separates the files:
// - create: an immutable object (daily files, tiles, entry bundles, index segments, RFC 3161 tokens) is created
//   only if absent. If it exists, identical bytes are success (a rerun after a crash rewrites what it already
//   wrote) and other bytes are a hard error naming the object: a published object is never overwritten.
// - replace: one of the few mutable objects (checkpoint, index head, days.json, status files) is replaced whole;
//   a reader sees the old or the new object, never a part.
// Every object carries the cache class the server gives its path (immutable, short-lived, revalidated), so that
// a CDN or nginx in front of a bucket keeps the classes `timeseal serve` answers with.
// Engines: folder.ts (today's files, byte for byte) and s3.ts; open.ts picks one from TIMESEAL_ARCHIVE.
// The conformance tests every engine must pass: test/storage/contract.ts.
import { UsageError } from '../../runtime/config.ts';

export interface ArchiveStore {
  /** Where the archive is, for messages: a folder's path or `s3://bucket/prefix`. */
  readonly location: string;
  /** Creates the immutable object `rel` holding `bytes`. true: written; false: it existed with these bytes.
   * Throws ConflictError (pipeline/files.ts) naming `rel` when it exists with other bytes, and leaves it. */
  create(rel: string, bytes: Uint8Array): Promise<boolean>;
  /** Creates or replaces the mutable object `rel`, atomically for readers. */
  replace(rel: string, bytes: Uint8Array): Promise<void>;
  /** The object's bytes, or undefined when there is none. */
  read(rel: string): Promise<Uint8Array | undefined>;
  exists(rel: string): Promise<boolean>;
  /** Every object whose path starts with `prefix` ('' for all), in byte order of their paths. */
  list(prefix: string): Promise<string[]>;
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

/** Checks a listing prefix: '' or the start of an object path (it may end in `/` or inside a name). */
export function checkListPrefix(prefix: string): string {
  if (prefix !== '') checkObjectPath(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix);
  return prefix;
}
