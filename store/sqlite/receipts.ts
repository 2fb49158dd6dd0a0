// `receipts` on SQLite (store/store.ts ReceiptStore; the PostgreSQL side: store/postgres/receipts.ts): the
// RFC 3161 receipts of the site's submissions, written by limits.submit in the transaction of their row.
import { dayAfter, RECEIPTS_PER_DAY, type ReceiptStore } from '../store.ts';
import type { SqliteConnection } from './connection.ts';

/** The site's receipt of a submission, inside the caller's transaction (after its row). */
export const insertReceipt = (
  conn: SqliteConnection,
  hash: string,
  time: string,
  der: Uint8Array | undefined,
): void => {
  if (der === undefined) return;
  conn
    .sql('INSERT INTO receipts (hash, submitted_at, der) VALUES (?, ?, ?)')
    .run(hash, time, Buffer.from(der.buffer, der.byteOffset, der.byteLength));
};

export function receiptStore({ sql, run }: SqliteConnection): ReceiptStore {
  return {
    forDay: (hash, date) =>
      run(() =>
        (
          sql(
            'SELECT der FROM receipts WHERE hash = ? AND submitted_at >= ? AND submitted_at < ? ORDER BY submitted_at, id LIMIT ?',
          )
            .raw(true)
            .all(hash, date, dayAfter(date), RECEIPTS_PER_DAY) as Array<[Buffer]>
        ).map(([der]) => new Uint8Array(der)),
      ),
  };
}
