// What the routes are given: configuration, clock, database, archive view, mailer, and the submission writer.
// Built once per app (app.ts); tests build the same thing around temporary folders.
import type { Config } from '../pipeline/config.ts';
import type { Clock } from '../pipeline/clock.ts';
import type { DB } from '../pipeline/db.ts';
import type { PublicKeys } from '../pipeline/keys.ts';
import { enqueue, type Submission } from '../pipeline/queue.ts';
import type { ArchiveView } from './archive-view.ts';
import type { IngestConfig } from './config.ts';
import type { Mailer } from './mail.ts';

/**
 * Group commit for submissions. Contract of `write(row)`: resolves only after the row is committed to SQLite
 * (WAL, synchronous=FULL, so it survives kill -9 and power loss); rejects if the commit failed. Rows written
 * in the same turn of the event loop share one transaction and one fsync, which is what lets the beta API
 * acknowledge thousands of submissions a second without acknowledging anything that is not on disk.
 */
export interface SubmissionWriter {
  write(row: Submission): Promise<void>;
  /** Commits what is pending; later writes are rejected. */
  close(): void;
}

export function createSubmissionWriter(db: DB): SubmissionWriter {
  let pending: Array<{ row: Submission; resolve: () => void; reject: (err: unknown) => void }> = [];
  let scheduled = false;
  let closed = false;
  const flush = (): void => {
    scheduled = false;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    try {
      enqueue(
        db,
        batch.map((b) => b.row),
      );
    } catch (err) {
      for (const b of batch) b.reject(err);
      return;
    }
    for (const b of batch) b.resolve();
  };
  return {
    write(row) {
      if (closed) return Promise.reject(new Error('submission writer is closed'));
      return new Promise((resolve, reject) => {
        pending.push({ row, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    close() {
      closed = true;
      flush();
    },
  };
}

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
}
