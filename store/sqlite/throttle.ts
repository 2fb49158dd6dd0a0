// `throttle` on SQLite (store/store.ts ThrottleStore; the PostgreSQL side: store/postgres/throttle.ts): the
// guards are checked and the attempts recorded in one IMMEDIATE transaction, so SQLite's write lock orders
// concurrent attempts of every process on the file. A mark is the attempts' rowids.
import type { ThrottleKey, ThrottleMark, ThrottleRecord, ThrottleStore } from '../store.ts';
import type { SqliteConnection } from './connection.ts';

/** Expired throttle rows are deleted at most once per this much clock time per scope. */
const PRUNE_EVERY_MS = 60_000;

export function throttleStore({ sql, tx, run }: SqliteConnection): ThrottleStore {
  const prunedAt = new Map<string, number>();
  const count = (k: ThrottleKey, windowMs: number, nowMs: number): number =>
    (
      sql('SELECT COUNT(*) AS n FROM auth_throttle WHERE scope = ? AND key = ? AND at_ms > ? AND at_ms <= ?').get(
        k.scope,
        k.key,
        nowMs - windowMs,
        nowMs,
      ) as { n: number }
    ).n;
  const record = (keys: readonly ThrottleRecord[], nowMs: number): ThrottleMark => {
    const ids = keys.map((k) =>
      Number(
        sql('INSERT INTO auth_throttle (scope, key, at_ms) VALUES (?, ?, ?)').run(k.scope, k.key, nowMs)
          .lastInsertRowid,
      ),
    );
    for (const k of keys) {
      if (nowMs - (prunedAt.get(k.scope) ?? -Infinity) >= PRUNE_EVERY_MS) {
        sql('DELETE FROM auth_throttle WHERE scope = ? AND at_ms <= ?').run(k.scope, nowMs - k.windowMs);
        prunedAt.set(k.scope, nowMs);
      }
    }
    return ids;
  };

  return {
    count: (k, windowMs, nowMs) => run(() => count(k, windowMs, nowMs)),
    attempt: (guards, keys, nowMs) =>
      tx(() => {
        for (const g of guards) {
          if (count(g, g.windowMs, nowMs) < g.max) continue;
          if (g.unlessSeen !== undefined && count(g.unlessSeen, g.unlessSeen.windowMs, nowMs) > 0) continue;
          return undefined;
        }
        return record(keys, nowMs);
      }),
    record: (keys, nowMs) => tx(() => record(keys, nowMs)),
    change: ({ withdraw = [], clear = [], record: keys = [], nowMs }) =>
      tx(() => {
        for (const mark of withdraw) for (const id of mark) sql('DELETE FROM auth_throttle WHERE rowid = ?').run(id);
        for (const k of clear) sql('DELETE FROM auth_throttle WHERE scope = ? AND key = ?').run(k.scope, k.key);
        record(keys, nowMs);
      }),
  };
}
