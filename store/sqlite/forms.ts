// `forms` on SQLite (store/store.ts FormStore; the PostgreSQL side: store/postgres/forms.ts): the professional
// waitlist (one entry per e-mail: ON CONFLICT (email) DO NOTHING) and the contact messages.
import type { FormStore } from '../store.ts';
import type { SqliteConnection } from './connection.ts';

export function formStore({ sql, run }: SqliteConnection): FormStore {
  return {
    joinWaitlist: (e) =>
      run(
        () =>
          sql(
            'INSERT INTO professional_waitlist (name, email, message, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (email) DO NOTHING',
          ).run(e.name, e.email, e.message, e.createdAt.toISOString()).changes === 1,
      ),
    addContact: (m) =>
      run(() =>
        Number(
          sql('INSERT INTO contact_messages (name, email, subject, message, created_at) VALUES (?, ?, ?, ?, ?)').run(
            m.name,
            m.email,
            m.subject,
            m.message,
            m.createdAt.toISOString(),
          ).lastInsertRowid,
        ),
      ),
    setContactDelivery: (id, delivery) =>
      run(() => void sql('UPDATE contact_messages SET delivery = ? WHERE id = ?').run(delivery, id)),
  };
}
