// `lease` on SQLite (store/store.ts LeaseStore; the PostgreSQL side: store/postgres/lease.ts): one UPSERT takes
// or renews the lease, under SQLite's write lock (the same statement as on PostgreSQL).
import type { LeaseStore } from '../store.ts';
import type { SqliteConnection } from './connection.ts';

export function leaseStore({ sql, run }: SqliteConnection): LeaseStore {
  return {
    acquire: (name, holder, ttlMs, nowMs) =>
      run(
        () =>
          sql(
            `INSERT INTO schedule_lease (name, holder, expires_at) VALUES (?, ?, ?)
               ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
               WHERE schedule_lease.holder = excluded.holder OR schedule_lease.expires_at < ? RETURNING holder`,
          ).get(name, holder, nowMs + ttlMs, nowMs) !== undefined,
      ),
    release: (name, holder) =>
      run(() => void sql('DELETE FROM schedule_lease WHERE name = ? AND holder = ?').run(name, holder)),
  };
}
