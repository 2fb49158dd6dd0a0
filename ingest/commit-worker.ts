// The submission committer's thread (services.ts): commits each batch of submissions it is sent in one
// transaction on its own connection and reports back. The fsync of a commit (synchronous=FULL) blocks only
// this thread, so the server keeps parsing requests, and the next batch grows, while the disk works.
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../pipeline/db.ts';
import { enqueue, type SubmissionSource } from '../pipeline/queue.ts';

export interface CommitRequest {
  id: number;
  rows: Array<{ hash: string; submittedAt: string; fileName: string | null; source: SubmissionSource }>;
}

export type CommitResult = { id: number; ok: true } | { id: number; ok: false; error: string };

const port = parentPort!;
const db = openDatabase((workerData as { db: string }).db);
port.on('message', (message: CommitRequest | 'close') => {
  if (message === 'close') {
    db.close();
    port.close();
    return;
  }
  let result: CommitResult;
  try {
    enqueue(
      db,
      message.rows.map((r) => ({ ...r, submittedAt: new Date(r.submittedAt) })),
    );
    result = { id: message.id, ok: true };
  } catch (err) {
    result = { id: message.id, ok: false, error: (err as Error).message };
  }
  port.postMessage(result);
});
