// What the routes are given: configuration, clock, database, archive view, mailer, and the submission writer.
// Built once per app (app.ts); tests build the same thing around temporary folders.
import type { Config } from '../pipeline/config.ts';
import type { Clock } from '../pipeline/clock.ts';
import type { DB } from '../pipeline/db.ts';
import type { PublicKeys } from '../pipeline/keys.ts';
import { Worker } from 'node:worker_threads';
import type { Submission } from '../pipeline/queue.ts';
import type { CommitRequest, CommitResult } from './commit-worker.ts';
import type { ArchiveView } from './archive-view.ts';
import type { IngestConfig } from './config.ts';
import type { Mailer } from './mail.ts';

/**
 * Group commit for submissions. Contract of `write(row)`: resolves only after the row is committed to SQLite
 * (WAL, synchronous=FULL, so it survives kill -9 and power loss); rejects if the commit failed. Rows that
 * arrive while a commit is running are committed together by the next one, so one fsync acknowledges many
 * submissions. The commits run on a worker thread with its own connection (commit-worker.ts): the fsync
 * does not stop the event loop.
 */
export interface SubmissionWriter {
  write(row: Submission): Promise<void>;
  /** Commits what is pending and stops; later writes are rejected. */
  close(): Promise<void>;
}

interface Pending {
  row: Submission;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export function createSubmissionWriter(dbFile: string): SubmissionWriter {
  const worker = new Worker(new URL('./commit-worker.ts', import.meta.url), { workerData: { db: dbFile } });
  let waiting: Pending[] = [];
  let inFlight: Pending[] | null = null;
  let nextId = 0;
  let closed = false;
  let drained: (() => void) | null = null;
  let failure: Error | null = null;

  const send = (): void => {
    if (inFlight !== null || waiting.length === 0) {
      if (inFlight === null && drained) drained();
      return;
    }
    inFlight = waiting;
    waiting = [];
    const request: CommitRequest = {
      id: nextId++,
      rows: inFlight.map(({ row }) => ({ hash: row.hash, submittedAt: row.submittedAt.toISOString(), fileName: row.fileName ?? null, source: row.source })),
    };
    worker.postMessage(request);
  };
  worker.on('message', (result: CommitResult) => {
    const batch = inFlight ?? [];
    inFlight = null;
    if (result.ok) for (const p of batch) p.resolve();
    else for (const p of batch) p.reject(new Error(`commit failed: ${result.error}`));
    send();
  });
  const fail = (err: Error): void => {
    failure = err;
    for (const p of [...(inFlight ?? []), ...waiting]) p.reject(err);
    inFlight = null;
    waiting = [];
    drained?.();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => {
    if (!closed) fail(new Error(`submission committer stopped (exit ${code})`));
  });

  return {
    write(row) {
      if (closed) return Promise.reject(new Error('submission writer is closed'));
      if (failure) return Promise.reject(failure);
      return new Promise((resolve, reject) => {
        waiting.push({ row, resolve, reject });
        send();
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await new Promise<void>((resolve) => {
        drained = resolve;
        send();
      });
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.postMessage('close');
      await exited;
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
