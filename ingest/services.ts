// What the routes are given: configuration, clock, database, archive view, mailer, and the submission writer.
// Built once per app (app.ts); tests build the same thing around temporary folders.
import type { Config } from '../pipeline/config.ts';
import type { Clock } from '../pipeline/clock.ts';
import type { DB } from '../pipeline/db.ts';
import type { PublicKeys } from '../pipeline/keys.ts';
import fs from 'node:fs';
import path from 'node:path';
import { openDatabase } from '../pipeline/db.ts';
import { submissionInserter, type Submission } from '../pipeline/queue.ts';
import type { ArchiveView } from './archive-view.ts';
import type { IngestConfig } from './config.ts';
import type { Mailer } from './mail.ts';

/**
 * Group commit for submissions. Contract of `write(row)`: resolves only after the row is committed to SQLite
 * and the commit is on disk (it survives kill -9 and power loss); rejects if the commit failed.
 *
 * How: the writer has its own connection in WAL mode with `synchronous=NORMAL`, so a commit appends its frames
 * to the -wal file without waiting for the disk, and then calls fdatasync on the -wal file itself, on
 * libuv's thread pool, before it answers. That is what `synchronous=FULL` does (sync the WAL after each
 * commit), minus blocking the event loop for the fsync. NORMAL keeps every other guarantee of FULL in WAL
 * mode: the WAL is synced before a checkpoint copies it and the database after. Rows are committed as they
 * come (one transaction per turn of the event loop); while one fdatasync runs, the rows committed meanwhile
 * wait for the next, which starts as soon as it ends: one fsync acknowledges every row committed during the
 * previous one, and the disk is never idle while a submission waits.
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
  const db = openDatabase(dbFile);
  db.pragma('synchronous = NORMAL');
  const insert = submissionInserter(db);
  const walFile = `${path.resolve(dbFile)}-wal`;
  let walFd: number | null = null;
  /** Rows not yet committed, then rows committed but not yet covered by an fdatasync. */
  let waiting: Pending[] = [];
  let committed: Pending[] = [];
  let syncing = false;
  let scheduled = false;
  let closed = false;
  let drained: (() => void) | null = null;

  /** The -wal file's descriptor, opened once; its directory entry is made durable the first time. */
  const wal = (): number => {
    if (walFd === null) {
      walFd = fs.openSync(walFile, 'r');
      const dir = fs.openSync(path.dirname(walFile), 'r');
      try {
        fs.fsyncSync(dir);
      } finally {
        fs.closeSync(dir);
      }
    }
    return walFd;
  };

  /** Starts an fdatasync covering every row committed so far, unless one is running (it restarts after). */
  const sync = (): void => {
    if (syncing) return;
    if (committed.length === 0) {
      if (waiting.length === 0 && !scheduled) drained?.();
      return;
    }
    const batch = committed;
    committed = [];
    syncing = true;
    fs.fdatasync(walFd!, (err) => {
      syncing = false;
      if (err) for (const p of batch) p.reject(err);
      else for (const p of batch) p.resolve();
      sync();
    });
  };

  /** Commits the rows that arrived in this turn of the event loop in one transaction, without waiting for the
   * disk: the fdatasync that acknowledges them starts when the previous one ends. */
  const commit = (): void => {
    scheduled = false;
    const batch = waiting;
    waiting = [];
    try {
      insert(batch.map((p) => p.row));
      for (const p of batch) committed.push(p);
    } catch {
      // One bad row must not fail the others that happened to share its transaction: each on its own.
      for (const p of batch) {
        try {
          insert([p.row]);
          committed.push(p);
        } catch (err) {
          p.reject(err);
        }
      }
    }
    if (committed.length > 0) {
      try {
        wal();
      } catch (err) {
        for (const p of committed) p.reject(err);
        committed = [];
      }
    }
    sync();
  };

  return {
    write(row) {
      if (closed) return Promise.reject(new Error('submission writer is closed'));
      return new Promise((resolve, reject) => {
        waiting.push({ row, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(commit);
        }
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await new Promise<void>((resolve) => {
        drained = resolve;
        if (!syncing && !scheduled) sync();
      });
      if (walFd !== null) fs.closeSync(walFd);
      db.close();
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
