// What every group of the PostgreSQL engine (engine.ts composes them) runs its statements through: the `pg` Pool,
// one autocommit statement, one transaction on one connection, advisory locks taken in a fixed order, the calls
// under way (close() waits for them), and whether the store is closed. Failures leave as engine-neutral errors
// (errors.ts neutralError).
import crypto from 'node:crypto';
import type pg from 'pg';
import { DayClosedError, StoreClosedError, UniqueViolationError } from '../store.ts';
import { neutralError } from './errors.ts';

export type Client = pg.PoolClient;

export interface PostgresConnection {
  readonly pool: pg.Pool;
  /** Whether close() was called: every later call rejects with StoreClosedError. */
  readonly closed: boolean;
  /** Runs `work` as a call under way (close() waits for it); StoreClosedError once closed. */
  track<T>(work: () => Promise<T>): Promise<T>;
  /** Makes close() wait for `p` too (work started by a call that already returned, such as a group commit). */
  keep(p: Promise<unknown>): void;
  /** One statement, autocommit. `write` marks a statement that changes rows (a lost connection may have
   * committed it). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
    write?: boolean,
  ): Promise<pg.QueryResult<R>>;
  /** The first row of one autocommit statement. */
  one<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R | undefined>;
  /** `work` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
  tx<T>(work: (c: Client) => Promise<T>): Promise<T>;
  /** Takes the advisory locks of `names` for the transaction, in a fixed order (no deadlock between two). */
  lock(c: Client, names: readonly string[]): Promise<void>;
  /** Waits for every call under way, then ends the pool. */
  close(): Promise<void>;
}

/** An advisory lock key (a signed 64-bit integer, as text) for a name. */
const lockKey = (name: string): string =>
  crypto.createHash('sha256').update(name).digest().readBigInt64BE(0).toString();

export function connection(pool: pg.Pool): PostgresConnection {
  let closed = false;
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(work: () => Promise<T>): Promise<T> => {
    if (closed) return Promise.reject(new StoreClosedError());
    const p = work();
    inFlight.add(p);
    void p.then(
      () => inFlight.delete(p),
      () => inFlight.delete(p),
    );
    return p;
  };

  const query = <R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values: unknown[] = [],
    write = false,
  ): Promise<pg.QueryResult<R>> =>
    track(async () => {
      try {
        return await pool.query<R>(text, values);
      } catch (err) {
        throw neutralError(err, write);
      }
    });
  const one = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R | undefined> =>
    (await query<R>(text, values)).rows[0];

  const tx = <T>(work: (c: Client) => Promise<T>): Promise<T> =>
    track(async () => {
      let client: Client;
      try {
        client = await pool.connect();
      } catch (err) {
        throw neutralError(err);
      }
      // A connection that failed mid-transaction is discarded, not returned to the pool.
      let broken = false;
      try {
        await client.query('BEGIN');
        let result: T;
        try {
          result = await work(client);
        } catch (err) {
          await client.query('ROLLBACK').catch(() => void (broken = true));
          throw err;
        }
        try {
          await client.query('COMMIT');
        } catch (err) {
          broken = true;
          throw neutralError(err, true);
        }
        return result;
      } catch (err) {
        const neutral = neutralError(err);
        if (neutral !== err && !(neutral instanceof UniqueViolationError) && !(neutral instanceof DayClosedError))
          broken = true;
        throw neutral;
      } finally {
        client.release(broken);
      }
    });

  const lock = async (c: Client, names: readonly string[]): Promise<void> => {
    const keys = [...new Set(names.map(lockKey))].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
    for (const key of keys) await c.query('SELECT pg_advisory_xact_lock($1)', [key]);
  };

  return {
    pool,
    get closed() {
      return closed;
    },
    track,
    keep(p) {
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    },
    query,
    one,
    tx,
    lock,
    async close() {
      if (closed) return;
      closed = true;
      // A flush that ends starts the next one for the rows queued meanwhile: wait until none is left.
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      await pool.end();
    },
  };
}
