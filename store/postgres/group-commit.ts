// Group commit on PostgreSQL (like the SQLite engine's writer, store/sqlite/submission-writer.ts): items that
// arrive while `flushes` statements are in flight wait and go together in the next one, one statement and one
// commit (one WAL flush) for all of them; each promise resolves after that commit. A statement that fails for one
// item (not for the server) is retried item by item, so an item that fails fails alone. The connection's close()
// waits for every queued item (PostgresConnection.keep). Used by submissions.write and statements.register.
import { StorageUnavailableError, StoreClosedError } from '../store.ts';
import type { PostgresConnection } from './connection.ts';
import { neutralError } from './errors.ts';

export interface GroupCommit<T> {
  /** Statements in flight at once. */
  flushes: number;
  /** Items in one statement at most. */
  batchMax: number;
  /** Commits `items` in one statement (an implicit transaction: all or none). */
  commit(items: readonly T[]): Promise<unknown>;
}

/** A function that queues an item and resolves once it is committed (rejects with its own error if not). */
export function groupCommit<T>(conn: PostgresConnection, group: GroupCommit<T>): (item: T) => Promise<void> {
  const queued: Array<{ item: T; resolve: () => void; reject: (err: unknown) => void }> = [];
  let flushing = 0;
  const flush = (): void => {
    while (flushing < group.flushes && queued.length > 0) {
      const batch = queued.splice(0, group.batchMax);
      flushing++;
      const p = (async () => {
        try {
          await group.commit(batch.map((w) => w.item));
          for (const w of batch) w.resolve();
        } catch (err) {
          const neutral = neutralError(err, true);
          if (batch.length === 1 || neutral instanceof StorageUnavailableError)
            for (const w of batch) w.reject(neutral);
          else {
            await Promise.all(
              batch.map((w) =>
                group.commit([w.item]).then(
                  () => w.resolve(),
                  (e: unknown) => w.reject(neutralError(e, true)),
                ),
              ),
            );
          }
        } finally {
          flushing--;
          flush();
        }
      })();
      conn.keep(p);
    }
  };
  return (item) =>
    conn.closed
      ? Promise.reject(new StoreClosedError())
      : new Promise<void>((resolve, reject) => {
          queued.push({ item, resolve, reject });
          flush();
        });
}
