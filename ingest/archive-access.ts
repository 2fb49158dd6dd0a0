// What ingest/ needs of the published archive, declared here and provided by the composer (cli/archive-access.ts,
// from pipeline/'s readers): ingest/ never imports pipeline/. Its own module so that services.ts and
// archive-view.ts both use it without importing each other.
import type { DayRecord } from '../core/archive.ts';
import type { PublicKeySet } from '../core/day.ts';
import type { IndexHead } from '../core/index-segments.ts';
import type { Occurrence, ProofBundle } from '../core/proof.ts';

/**
 * The published archive read through the archive writer's own readers. The service never imports `pipeline/`
 * (test/layout.test.ts enforces it): whoever composes it (cli/serve.ts, the tests) passes one to `buildApp`, made by
 * cli/archive-access.ts. Every call reads the configured archive folder as it is on disk at that moment; none
 * writes it.
 */
export interface ArchiveAccess {
  /** The published days of days.json, oldest first; none when nothing is published. */
  days(): DayRecord[];
  /** Every published occurrence of a hash, oldest first. Throws IndexIncompleteError (core/errors.ts) while a
   * build has not completed the index. */
  find(hash: string): Occurrence[];
  /** The proof bundle of a published hash (docs/FORMAT.md §8); NotFoundError when it is not published. */
  proof(hash: string, keys: PublicKeySet): ProofBundle;
  /** The index head (`index/segments.json`); an empty head when there is none. */
  indexHead(): IndexHead;
  /** index-sha256.json for `head`, in chunks streamed from the segments' shards (memory does not grow with the
   * archive); asynchronous chunks are awaited one by one. */
  indexJson(head: IndexHead): Iterable<string> | AsyncIterable<string>;
}
