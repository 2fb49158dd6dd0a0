// `lease` on PostgreSQL (store/store.ts LeaseStore; the SQLite side: store/sqlite/lease.ts): one
// `INSERT … ON CONFLICT (name) DO UPDATE … WHERE` takes or renews the lease (the conflicting row is locked and the
// condition re-read on its newest version).
import type { LeaseStore } from '../store.ts';
import type { PostgresConnection } from './connection.ts';

export function leaseStore({ query }: PostgresConnection): LeaseStore {
  return {
    acquire: async (name, holder, ttlMs, nowMs) =>
      (
        await query(
          `INSERT INTO schedule_lease (name, holder, expires_at) VALUES ($1, $2, $3)
             ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
             WHERE schedule_lease.holder = excluded.holder OR schedule_lease.expires_at < $4 RETURNING holder`,
          [name, holder, nowMs + ttlMs, nowMs],
          true,
        )
      ).rowCount === 1,
    release: async (name, holder) =>
      void (await query('DELETE FROM schedule_lease WHERE name = $1 AND holder = $2', [name, holder], true)),
  };
}
