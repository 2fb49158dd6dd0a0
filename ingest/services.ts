// What the routes are given: configuration, clock, database, archive view, mailer, the submission writer and
// the submission gate.
// Built once per app (app.ts); tests build the same thing around temporary folders.
import type { Config } from '../runtime/config.ts';
import type { Clock } from '../runtime/clock.ts';
import type { DB } from '../store/db.ts';
import type { PublicKeys } from '../runtime/keys.ts';
import type { ArchiveView } from './archive-view.ts';
import type { IngestConfig } from './config.ts';
import type { Mailer } from './mail.ts';
import type { SubmissionGate } from './submission-gate.ts';
import type { SubmissionWriter } from './submission-writer.ts';

export interface Services {
  config: Config;
  ingest: IngestConfig;
  clock: Clock;
  db: DB;
  archive: ArchiveView;
  /** The served public keys, loaded once. */
  publicKeys(): PublicKeys;
  mailer: Mailer;
  submissions: SubmissionWriter;
  /** Refuses submissions while the clock is not after the last published day (503). */
  gate: SubmissionGate;
}
