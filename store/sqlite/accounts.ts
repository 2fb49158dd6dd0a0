// `users` and `sessions` on SQLite (store/store.ts UserStore, SessionStore; the PostgreSQL side:
// store/postgres/accounts.ts). A token is used once by one UPDATE ... WHERE token = ? RETURNING; a password
// reset and the deletion of the user's sessions are one IMMEDIATE transaction.
import { UniqueViolationError, type SessionStore, type User, type UserStore } from '../store.ts';
import type { SqliteConnection } from './connection.ts';

const userRow = (row: { id: string; username: string; email: string; v: number } | undefined): User | undefined =>
  row && { id: row.id, username: row.username, email: row.email, emailVerified: row.v === 1 };

export function userStore({ sql, tx, run }: SqliteConnection): UserStore {
  return {
    create: (u) =>
      tx(() => {
        try {
          sql(
            'INSERT INTO users (id, username, email, password, newsletter_subscribed, created_at) VALUES (?, ?, ?, ?, ?, ?)',
          ).run(u.id, u.username, u.email, u.passwordHash, u.newsletter ? 1 : 0, u.createdAt.toISOString());
        } catch (err) {
          const e = err as { code?: unknown; message?: string };
          if (e.code === 'SQLITE_CONSTRAINT_UNIQUE') {
            throw new UniqueViolationError(
              /email/.test(e.message ?? '') ? 'email' : 'username',
              e.message ?? 'unique violation',
            );
          }
          throw err;
        }
        sql('UPDATE users SET verification_token = ?, verification_expires = ? WHERE id = ?').run(
          u.verification.tokenHash,
          u.verification.expires.toISOString(),
          u.id,
        );
      }),
    get: (id) =>
      run(() =>
        userRow(sql('SELECT id, username, email, email_verified AS v FROM users WHERE id = ?').get(id) as never),
      ),
    forLogin: (name) =>
      run(() => {
        const row = sql('SELECT id, password FROM users WHERE lower(username) = lower(?) OR email = lower(?)').get(
          name,
          name,
        ) as { id: string; password: string } | undefined;
        return row && { id: row.id, passwordHash: row.password };
      }),
    byEmail: (email) =>
      run(
        () =>
          sql('SELECT id, username FROM users WHERE email = ?').get(email) as
            { id: string; username: string } | undefined,
      ),
    setVerification: (userId, tokenHash, expires) =>
      run(
        () =>
          void sql(
            'UPDATE users SET replaced_verification_token = verification_token, verification_token = ?, verification_expires = ? WHERE id = ?',
          ).run(tokenHash, expires.toISOString(), userId),
      ),
    verifyEmail: (tokenHash, now) =>
      run(
        () =>
          sql(
            'UPDATE users SET email_verified = 1, verification_token = NULL, verification_expires = NULL, replaced_verification_token = NULL WHERE verification_token = ? AND verification_expires > ? RETURNING id',
          ).get(tokenHash, now.toISOString()) !== undefined,
      ),
    replacedVerification: (tokenHash) =>
      run(
        () =>
          sql('SELECT 1 FROM users WHERE replaced_verification_token = ? AND email_verified = 0').get(tokenHash) !==
          undefined,
      ),
    setReset: (userId, tokenHash, expires) =>
      run(
        () =>
          void sql('UPDATE users SET password_reset_token = ?, password_reset_expires = ? WHERE id = ?').run(
            tokenHash,
            expires.toISOString(),
            userId,
          ),
      ),
    forReset: (tokenHash, now) =>
      run(
        () =>
          (
            sql('SELECT id FROM users WHERE password_reset_token = ? AND password_reset_expires > ?').get(
              tokenHash,
              now.toISOString(),
            ) as { id: string } | undefined
          )?.id,
      ),
    resetPassword: (userId, tokenHash, passwordHash) =>
      tx(() => {
        const n = sql(
          'UPDATE users SET password = ?, password_reset_token = NULL, password_reset_expires = NULL, email_verified = 1 WHERE id = ? AND password_reset_token = ?',
        ).run(passwordHash, userId, tokenHash).changes;
        if (n === 1) sql('DELETE FROM sessions WHERE user_id = ?').run(userId);
        return n === 1;
      }),
  };
}

export function sessionStore({ sql, run }: SqliteConnection): SessionStore {
  return {
    create: (idHash, userId, createdAt, expiresAt) =>
      run(
        () =>
          void sql('INSERT INTO sessions (id_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)').run(
            idHash,
            userId,
            createdAt.toISOString(),
            expiresAt.toISOString(),
          ),
      ),
    user: (idHash, now) =>
      run(() =>
        userRow(
          sql(
            `SELECT u.id, u.username, u.email, u.email_verified AS v FROM sessions s JOIN users u ON u.id = s.user_id
               WHERE s.id_hash = ? AND s.expires_at > ?`,
          ).get(idHash, now.toISOString()) as never,
        ),
      ),
    destroy: (idHash) => run(() => void sql('DELETE FROM sessions WHERE id_hash = ?').run(idHash)),
    destroyUser: (userId) => run(() => void sql('DELETE FROM sessions WHERE user_id = ?').run(userId)),
    prune: (now) => run(() => void sql('DELETE FROM sessions WHERE expires_at <= ?').run(now.toISOString())),
  };
}
