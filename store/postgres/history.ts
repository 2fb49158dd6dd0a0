// `history` on PostgreSQL (store/store.ts HistoryStore; the SQLite side: store/sqlite/history.ts): a user's
// timestamps (table `timestamps`, written by limits.submit for a paying user), read by the user's id only.
import type { HistoryEntry, HistoryStore } from '../store.ts';
import type { PostgresConnection } from './connection.ts';

const HISTORY_COLUMNS = 'id, file_name AS "fileName", submitted_at AS "submittedAt", hash, ledger_date AS "ledgerDate"';

export function historyStore({ query, one }: PostgresConnection): HistoryStore {
  return {
    list: async (userId) =>
      (
        await query<HistoryEntry>(
          `SELECT ${HISTORY_COLUMNS} FROM timestamps WHERE user_id = $1 ORDER BY submitted_at DESC, id DESC LIMIT 1000`,
          [userId],
        )
      ).rows,
    get: (id, userId) =>
      one<HistoryEntry>(`SELECT ${HISTORY_COLUMNS} FROM timestamps WHERE id = $1 AND user_id = $2`, [id, userId]),
  };
}
