// `receipts` on PostgreSQL (store/store.ts ReceiptStore; the SQLite side: store/sqlite/receipts.ts): the
// RFC 3161 receipts of the site's submissions, written by limits.submit in the transaction of their row.
import { dayAfter, RECEIPTS_PER_DAY, type ReceiptStore } from '../store.ts';
import type { Client, PostgresConnection } from './connection.ts';

/** The site's receipt of a submission, inside the caller's transaction (after its row). */
export const insertReceipt = async (
  c: Client,
  hash: string,
  time: string,
  der: Uint8Array | undefined,
): Promise<void> => {
  if (der === undefined) return;
  await c.query('INSERT INTO receipts (hash, submitted_at, der) VALUES ($1, $2, $3)', [
    hash,
    time,
    Buffer.from(der.buffer, der.byteOffset, der.byteLength),
  ]);
};

export function receiptStore({ query }: PostgresConnection): ReceiptStore {
  return {
    forDay: async (hash, date) =>
      (
        await query<{ der: Buffer }>(
          'SELECT der FROM receipts WHERE hash = $1 AND submitted_at >= $2 AND submitted_at < $3 ORDER BY submitted_at, id LIMIT $4',
          [hash, date, dayAfter(date), RECEIPTS_PER_DAY],
        )
      ).rows.map((r) => new Uint8Array(r.der)),
  };
}
