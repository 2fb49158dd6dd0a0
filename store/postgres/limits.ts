// `limits` on PostgreSQL (store/store.ts LimitStore; the SQLite side: store/sqlite/limits.ts): each count is one
// `INSERT … ON CONFLICT DO UPDATE SET count = count + n WHERE count <= max - n RETURNING count` (the conflicting
// row is locked and the condition re-read on its newest version), in the transaction that inserts the rows it
// admits.
import { isPayingStatus, windowAmount, type LimitOutcome, type LimitStore } from '../store.ts';
import type { Client, PostgresConnection } from './connection.ts';
import { insertReceipt } from './receipts.ts';
import { insertSubmission } from './submissions.ts';
import { subscriptionStatus } from './subscriptions.ts';

/** Counts `amount` for (key, date) unless the count would pass `max`; the count after, or undefined. */
const countUpTo = async (
  c: Client,
  key: string,
  date: string,
  max: number,
  amount = 1,
): Promise<number | undefined> => {
  if (amount > max) return undefined;
  return (
    await c.query<{ count: number }>(
      `INSERT INTO ip_rate_limit (ip_address, date, count) VALUES ($1, $2, $3)
         ON CONFLICT (ip_address, date) DO UPDATE SET count = ip_rate_limit.count + $3 WHERE ip_rate_limit.count <= $4 - $3
         RETURNING count`,
      [key, date, amount, max],
    )
  ).rows[0]?.count;
};

export function limitStore({ one, tx }: PostgresConnection): LimitStore {
  return {
    submit: ({ submission, clientKey, userId, caps, receipt }) =>
      tx(async (c): Promise<LimitOutcome> => {
        const time = submission.submittedAt.toISOString();
        if (userId !== undefined && isPayingStatus(await subscriptionStatus(c, userId))) {
          const row = (
            await c.query<{ count: number }>(
              `INSERT INTO quota_usage (user_id, month, count, last_reset) VALUES ($1, $2, 1, $3)
                 ON CONFLICT (user_id, month) DO UPDATE SET count = quota_usage.count + 1 WHERE quota_usage.count < $4
                 RETURNING count`,
              [userId, time.slice(0, 7), time, caps.standardPerMonth],
            )
          ).rows[0];
          if (row === undefined) return { allowed: false, tier: 'standard' };
          await insertSubmission(c, { ...submission, source: 'account' });
          await c.query(
            'INSERT INTO timestamps (user_id, hash, submitted_at, ledger_date, file_name) VALUES ($1, $2, $3, $4, $5)',
            [userId, submission.hash, time, time.slice(0, 10), submission.fileName ?? null],
          );
          await insertReceipt(c, submission.hash, time, receipt);
          return { allowed: true, tier: 'standard', count: row.count };
        }
        const n = await countUpTo(c, clientKey, time.slice(0, 10), caps.freePerDay);
        if (n === undefined) return { allowed: false, tier: 'free' };
        await insertSubmission(c, { ...submission, source: 'web' });
        await insertReceipt(c, submission.hash, time, receipt);
        return { allowed: true, tier: 'free', count: n };
      }),
    dailyUsed: async (clientKey, date) =>
      (
        await one<{ count: number }>('SELECT count FROM ip_rate_limit WHERE ip_address = $1 AND date = $2', [
          clientKey,
          date,
        ])
      )?.count ?? 0,
    monthlyUsed: async (userId, month) =>
      (await one<{ count: number }>('SELECT count FROM quota_usage WHERE user_id = $1 AND month = $2', [userId, month]))
        ?.count ?? 0,
    countWindow: (clientKey, window, max, prune, amount) =>
      tx(async (c) => {
        const add = windowAmount(amount);
        const n = await countUpTo(c, clientKey, window, max, add);
        // A count equal to `add` was just created: an existing one was at least 1 before this call added to it.
        if (n === add)
          await c.query('DELETE FROM ip_rate_limit WHERE ip_address = $1 AND date >= $2 AND date < $3', [
            clientKey,
            prune.from,
            prune.before,
          ]);
        return n;
      }),
  };
}
