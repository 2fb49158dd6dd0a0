// What the routes are given: configuration, clock, the store (store/store.ts: every table behind one interface),
// archive view, mailer and the submission gate.
// Built once per app (app.ts); tests build the same thing around temporary folders.
import type { DayRecord } from '../core/archive.ts';
import type { PublicKeySet } from '../core/day.ts';
import type { IndexHead } from '../core/index-segments.ts';
import type { Occurrence, ProofBundle } from '../core/proof.ts';
import type { Config } from '../runtime/config.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Store } from '../store/store.ts';
import type { PublicKeys } from '../runtime/keys.ts';
import type { ArchiveView } from './archive-view.ts';
import type { IngestConfig } from './config.ts';
import type { Mailer } from './mail.ts';
import type { SubmissionGate } from './submission-gate.ts';

export interface Services {
  config: Config;
  ingest: IngestConfig;
  clock: Clock;
  /** Every database access (store/store.ts); never SQL here. */
  store: Store;
  archive: ArchiveView;
  /** The served public keys, loaded once. */
  publicKeys(): PublicKeys;
  mailer: Mailer;
  /** Refuses submissions while the clock is not after the last published day (503). */
  gate: SubmissionGate;
}

/**
 * The published archive read through the archive writer's own readers. The service never imports `pipeline/`
 * (DESIGN.md §8): whoever composes it (cli/serve.ts, the tests) passes one to `buildApp`, made by
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
