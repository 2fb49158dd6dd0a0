// Secrets handed to a browser or an inbox (session ids, e-mail verification and password reset tokens): 32
// random bytes as base64url. Only their SHA-256 is stored, so a copy of the database lets nobody log in or
// use a pending link; lookups are by that hash (an index lookup, not a string compare in our code).
import crypto from 'node:crypto';

export function newToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

export function tokenHash(token: string): string {
  return crypto.createHash('sha256').update(token).digest('hex');
}

/** A plausible token: 43 base64url characters (32 bytes). Anything else is refused before a lookup. */
export function isTokenShape(token: unknown): token is string {
  return typeof token === 'string' && /^[A-Za-z0-9_-]{43}$/.test(token);
}
