// `users` and `sessions` on PostgreSQL (store/store.ts UserStore, SessionStore; the SQLite side:
// store/sqlite/accounts.ts). A token is used once by one UPDATE ... WHERE token = $1 (a concurrent one waits
// for the row, then finds the token gone); a password reset and the deletion of the user's sessions are one
// transaction.
import type { SessionStore, User, UserStore } from '../store.ts';
import type { PostgresConnection } from './connection.ts';

const USER_COLUMNS = 'u.id, u.username, u.email, u.email_verified AS v';
const userRow = (row: { id: string; username: string; email: string; v: boolean } | undefined): User | undefined =>
  row && { id: row.id, username: row.username, email: row.email, emailVerified: row.v };

export function userStore({ query, one, tx }: PostgresConnection): UserStore {
  return {
    create: (u) =>
      tx(async (c) => {
        await c.query(
          `INSERT INTO users (id, username, email, password, newsletter_subscribed, created_at, verification_token, verification_expires)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [
            u.id,
            u.username,
            u.email,
            u.passwordHash,
            u.newsletter,
            u.createdAt.toISOString(),
            u.verification.tokenHash,
            u.verification.expires.toISOString(),
          ],
        );
      }),
    get: async (id) => userRow(await one(`SELECT ${USER_COLUMNS} FROM users u WHERE u.id = $1`, [id])),
    forLogin: async (name) => {
      const row = await one<{ id: string; password: string }>(
        'SELECT id, password FROM users WHERE lower(username) = lower($1) OR email = lower($1) LIMIT 1',
        [name],
      );
      return row && { id: row.id, passwordHash: row.password };
    },
    byEmail: (email) =>
      one<{ id: string; username: string }>('SELECT id, username FROM users WHERE email = $1', [email]),
    setVerification: async (userId, tokenHash, expires) =>
      void (await query(
        'UPDATE users SET replaced_verification_token = verification_token, verification_token = $1, verification_expires = $2 WHERE id = $3',
        [tokenHash, expires.toISOString(), userId],
        true,
      )),
    verifyEmail: async (tokenHash, now) =>
      (
        await query(
          'UPDATE users SET email_verified = true, verification_token = NULL, verification_expires = NULL, replaced_verification_token = NULL WHERE verification_token = $1 AND verification_expires > $2 RETURNING id',
          [tokenHash, now.toISOString()],
          true,
        )
      ).rowCount === 1,
    replacedVerification: async (tokenHash) =>
      (await one<{ id: string }>(
        'SELECT id FROM users WHERE replaced_verification_token = $1 AND email_verified = false',
        [tokenHash],
      )) !== undefined,
    setReset: async (userId, tokenHash, expires) =>
      void (await query(
        'UPDATE users SET password_reset_token = $1, password_reset_expires = $2 WHERE id = $3',
        [tokenHash, expires.toISOString(), userId],
        true,
      )),
    forReset: async (tokenHash, now) =>
      (
        await one<{ id: string }>(
          'SELECT id FROM users WHERE password_reset_token = $1 AND password_reset_expires > $2',
          [tokenHash, now.toISOString()],
        )
      )?.id,
    resetPassword: (userId, tokenHash, passwordHash) =>
      tx(async (c) => {
        const n = (
          await c.query(
            'UPDATE users SET password = $1, password_reset_token = NULL, password_reset_expires = NULL, email_verified = true WHERE id = $2 AND password_reset_token = $3 RETURNING id',
            [passwordHash, userId, tokenHash],
          )
        ).rowCount;
        if (n === 1) await c.query('DELETE FROM sessions WHERE user_id = $1', [userId]);
        return n === 1;
      }),
  };
}

export function sessionStore({ query, one }: PostgresConnection): SessionStore {
  return {
    create: async (idHash, userId, createdAt, expiresAt) =>
      void (await query(
        'INSERT INTO sessions (id_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)',
        [idHash, userId, createdAt.toISOString(), expiresAt.toISOString()],
        true,
      )),
    user: async (idHash, now) =>
      userRow(
        await one(
          `SELECT ${USER_COLUMNS} FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id_hash = $1 AND s.expires_at > $2`,
          [idHash, now.toISOString()],
        ),
      ),
    destroy: async (idHash) => void (await query('DELETE FROM sessions WHERE id_hash = $1', [idHash], true)),
    destroyUser: async (userId) => void (await query('DELETE FROM sessions WHERE user_id = $1', [userId], true)),
    prune: async (now) => void (await query('DELETE FROM sessions WHERE expires_at <= $1', [now.toISOString()], true)),
  };
}
