// `throttle` on PostgreSQL (store/store.ts ThrottleStore; the SQLite side: store/sqlite/throttle.ts): the
// transaction first takes pg_advisory_xact_lock on every (scope, key) involved, in a fixed order, then checks
// the guards and records the attempts, so concurrent attempts of every node are ordered. A mark is the
// attempts' ids.
import type { ThrottleKey, ThrottleMark, ThrottleRecord, ThrottleStore } from '../store.ts';
import type pg from 'pg';
import type { Client, PostgresConnection } from './connection.ts';
import { neutralError } from './errors.ts';

/** Expired throttle rows are deleted at most once per this much clock time per scope (per process). */
const PRUNE_EVERY_MS = 60_000;

const throttleLock = (k: ThrottleKey): string => `throttle\0${k.scope}\0${k.key}`;
const count = async (c: Client | pg.Pool, k: ThrottleKey, windowMs: number, nowMs: number): Promise<number> =>
  (
    await c.query<{ n: number }>(
      'SELECT COUNT(*) AS n FROM auth_throttle WHERE scope = $1 AND key = $2 AND at_ms > $3 AND at_ms <= $4',
      [k.scope, k.key, nowMs - windowMs, nowMs],
    )
  ).rows[0]!.n;

export function throttleStore({ pool, track, tx, lock }: PostgresConnection): ThrottleStore {
  const prunedAt = new Map<string, number>();
  const record = async (c: Client, keys: readonly ThrottleRecord[], nowMs: number): Promise<ThrottleMark> => {
    const ids: number[] = [];
    for (const k of keys)
      ids.push(
        (
          await c.query<{ id: number }>(
            'INSERT INTO auth_throttle (scope, key, at_ms) VALUES ($1, $2, $3) RETURNING id',
            [k.scope, k.key, nowMs],
          )
        ).rows[0]!.id,
      );
    for (const k of keys) {
      if (nowMs - (prunedAt.get(k.scope) ?? -Infinity) >= PRUNE_EVERY_MS) {
        await c.query('DELETE FROM auth_throttle WHERE scope = $1 AND at_ms <= $2', [k.scope, nowMs - k.windowMs]);
        prunedAt.set(k.scope, nowMs);
      }
    }
    return ids;
  };

  return {
    count: (k, windowMs, nowMs) =>
      track(async () => count(pool, k, windowMs, nowMs).catch((err: unknown) => Promise.reject(neutralError(err)))),
    attempt: (guards, keys, nowMs) =>
      tx(async (c) => {
        await lock(c, [...guards, ...keys].map(throttleLock));
        for (const g of guards) {
          if ((await count(c, g, g.windowMs, nowMs)) < g.max) continue;
          if (g.unlessSeen !== undefined && (await count(c, g.unlessSeen, g.unlessSeen.windowMs, nowMs)) > 0) continue;
          return undefined;
        }
        return record(c, keys, nowMs);
      }),
    record: (keys, nowMs) =>
      tx(async (c) => {
        await lock(c, keys.map(throttleLock));
        return record(c, keys, nowMs);
      }),
    change: ({ withdraw = [], clear = [], record: keys = [], nowMs }) =>
      tx(async (c) => {
        await lock(c, [...clear, ...keys].map(throttleLock));
        const ids = withdraw.flat();
        if (ids.length > 0) await c.query('DELETE FROM auth_throttle WHERE id = ANY($1::bigint[])', [ids]);
        for (const k of clear)
          await c.query('DELETE FROM auth_throttle WHERE scope = $1 AND key = $2', [k.scope, k.key]);
        await record(c, keys, nowMs);
      }),
  };
}
