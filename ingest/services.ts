// What the routes are given: configuration, clock, the store (store/store.ts: every table behind one interface),
// archive view, mailer and the submission gate.
// Built once per app (app.ts); tests build the same thing around temporary folders.
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

export type { ArchiveAccess } from './archive-access.ts';
