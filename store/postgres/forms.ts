// `forms` on PostgreSQL (store/store.ts FormStore; the SQLite side: store/sqlite/forms.ts): the professional
// waitlist (one entry per e-mail: ON CONFLICT (email) DO NOTHING) and the contact messages.
import type { FormStore } from '../store.ts';
import type { PostgresConnection } from './connection.ts';

export function formStore({ query }: PostgresConnection): FormStore {
  return {
    joinWaitlist: async (e) =>
      (
        await query(
          'INSERT INTO professional_waitlist (name, email, message, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (email) DO NOTHING RETURNING id',
          [e.name, e.email, e.message, e.createdAt.toISOString()],
          true,
        )
      ).rowCount === 1,
    addContact: async (m) =>
      (
        await query<{ id: number }>(
          'INSERT INTO contact_messages (name, email, subject, message, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id',
          [m.name, m.email, m.subject, m.message, m.createdAt.toISOString()],
          true,
        )
      ).rows[0]!.id,
    setContactDelivery: async (id, delivery) =>
      void (await query('UPDATE contact_messages SET delivery = $1 WHERE id = $2', [delivery, id], true)),
  };
}
