// `history` on SQLite (store/store.ts HistoryStore; the PostgreSQL side: store/postgres/history.ts): a user's
// timestamps (table `timestamps`, written by limits.submit for a paying user), read by the user's id only.
import type { HistoryEntry, HistoryStore } from '../store.ts';
import type { SqliteConnection } from './connection.ts';

const HISTORY_COLUMNS = 'id, file_name AS fileName, submitted_at AS submittedAt, hash, ledger_date AS ledgerDate';

export function historyStore({ sql, run }: SqliteConnection): HistoryStore {
  return {
    list: (userId) =>
      run(
        () =>
          sql(
            `SELECT ${HISTORY_COLUMNS} FROM timestamps WHERE user_id = ? ORDER BY submitted_at DESC, id DESC LIMIT 1000`,
          ).all(userId) as HistoryEntry[],
      ),
    get: (id, userId) =>
      run(
        () =>
          sql(`SELECT ${HISTORY_COLUMNS} FROM timestamps WHERE id = ? AND user_id = ?`).get(id, userId) as
            HistoryEntry | undefined,
      ),
  };
}
