// `limits` on SQLite (store/store.ts LimitStore; the PostgreSQL side: store/postgres/limits.ts): each count is
// one UPSERT that counts only below the cap (`... DO UPDATE SET count = count + n WHERE count <= max - n
// RETURNING count`); `submit` runs it in the IMMEDIATE transaction that also inserts the rows it admits.
import { isPayingStatus, windowAmount, type LimitOutcome, type LimitStore, type Submission } from '../store.ts';
import type { SqliteConnection } from './connection.ts';
import { dayClosed } from './errors.ts';
import { submissionInserter } from './queue.ts';
import { insertReceipt } from './receipts.ts';
import { subscriptionStatus } from './subscriptions.ts';

export function limitStore(conn: SqliteConnection): LimitStore {
  const { sql, tx, run } = conn;
  const insertSubmission = submissionInserter(conn.db);
  /** One submission inside the caller's transaction; a closed day's refusal as DayClosedError. */
  const insertRow = (row: Submission): void => {
    try {
      insertSubmission([row]);
    } catch (err) {
      throw dayClosed(err, [row]) ?? err;
    }
  };
  /** Counts `amount` for (key, date) unless the count would pass `max`: the count after, or undefined. */
  const countUpTo = (
    table: 'ip_rate_limit',
    key: string,
    date: string,
    max: number,
    amount = 1,
  ): number | undefined => {
    if (amount > max) return undefined;
    return (
      sql(`INSERT INTO ${table} (ip_address, date, count) VALUES (?1, ?2, ?3)
           ON CONFLICT (ip_address, date) DO UPDATE SET count = count + ?3 WHERE count <= ?4 - ?3
           RETURNING count`).get({ 1: key, 2: date, 3: amount, 4: max }) as { count: number } | undefined
    )?.count;
  };

  return {
    submit: ({ submission, clientKey, userId, caps, receipt }) =>
      tx((): LimitOutcome => {
        const now = submission.submittedAt;
        const time = now.toISOString();
        if (userId !== undefined && isPayingStatus(subscriptionStatus(conn, userId))) {
          const row = sql(
            `INSERT INTO quota_usage (user_id, month, count, last_reset) VALUES (?, ?, 1, ?)
               ON CONFLICT (user_id, month) DO UPDATE SET count = count + 1 WHERE count < ?
               RETURNING count`,
          ).get(userId, time.slice(0, 7), time, caps.standardPerMonth) as { count: number } | undefined;
          if (row === undefined) return { allowed: false, tier: 'standard' };
          insertRow({ ...submission, source: 'account' });
          sql(
            'INSERT INTO timestamps (user_id, hash, submitted_at, ledger_date, file_name) VALUES (?, ?, ?, ?, ?)',
          ).run(userId, submission.hash, time, time.slice(0, 10), submission.fileName ?? null);
          insertReceipt(conn, submission.hash, time, receipt);
          return { allowed: true, tier: 'standard', count: row.count };
        }
        const n = countUpTo('ip_rate_limit', clientKey, time.slice(0, 10), caps.freePerDay);
        if (n === undefined) return { allowed: false, tier: 'free' };
        insertRow({ ...submission, source: 'web' });
        insertReceipt(conn, submission.hash, time, receipt);
        return { allowed: true, tier: 'free', count: n };
      }),
    dailyUsed: (clientKey, date) =>
      run(
        () =>
          (
            sql('SELECT count FROM ip_rate_limit WHERE ip_address = ? AND date = ?').get(clientKey, date) as
              { count: number } | undefined
          )?.count ?? 0,
      ),
    monthlyUsed: (userId, month) =>
      run(
        () =>
          (
            sql('SELECT count FROM quota_usage WHERE user_id = ? AND month = ?').get(userId, month) as
              { count: number } | undefined
          )?.count ?? 0,
      ),
    countWindow: (clientKey, window, max, prune, amount) =>
      run(() => {
        const add = windowAmount(amount);
        // One statement decides and counts; the prune after it is idempotent, so no transaction is needed.
        const n = countUpTo('ip_rate_limit', clientKey, window, max, add);
        // A count equal to `add` was just created: an existing one was at least 1 before this call added to it.
        if (n === add)
          sql('DELETE FROM ip_rate_limit WHERE ip_address = ? AND date >= ? AND date < ?').run(
            clientKey,
            prune.from,
            prune.before,
          );
        return n;
      }),
  };
}
