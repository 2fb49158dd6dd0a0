// Sessions (ingest/accounts/README.md): a random 32-byte id in the `ts_session` cookie (HttpOnly, SameSite=Lax, Path=/, Secure
// when the request is HTTPS or TIMESEAL_ORIGIN is https), stored server-side as its SHA-256 in `sessions`
// with a 30-day lifetime. Login rotates the id (the old session is deleted); logout deletes it; a password
// reset deletes every session of that user.
//
// Also the CSRF rule: a state-changing request that carries the session cookie must come from the site's own
// origin — its Origin header equals TIMESEAL_ORIGIN or the request's own scheme://host, or, without Origin,
// Sec-Fetch-Site is same-origin. A cross-origin request carrying the cookie is refused (403) before any
// handler runs. Functions here take the request, so public routes (submit, certificate) use the same rules.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Store, User } from '../../store/store.ts';
import { newToken, tokenHash } from './tokens.ts';

export const SESSION_COOKIE = 'ts_session';
export const SESSION_DAYS = 30;
const SESSION_MS = SESSION_DAYS * 86_400_000;

/** The value of one cookie from the Cookie header (RFC 6265 §5.4; the first occurrence wins). */
export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    return value;
  }
  return undefined;
}

function secureCookie(request: FastifyRequest, origin: string): boolean {
  return request.protocol === 'https' || origin.startsWith('https:');
}

export function setSessionCookie(reply: FastifyReply, request: FastifyRequest, origin: string, id: string): void {
  const attrs = [`${SESSION_COOKIE}=${id}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${SESSION_DAYS * 86_400}`];
  if (secureCookie(request, origin)) attrs.push('Secure');
  void reply.header('set-cookie', attrs.join('; '));
}

export function clearSessionCookie(reply: FastifyReply, request: FastifyRequest, origin: string): void {
  const attrs = [`${SESSION_COOKIE}=`, 'Path=/', 'HttpOnly', 'SameSite=Lax', 'Max-Age=0'];
  if (secureCookie(request, origin)) attrs.push('Secure');
  void reply.header('set-cookie', attrs.join('; '));
}

export async function createSession(store: Store, userId: string, now: Date): Promise<string> {
  const id = newToken();
  await store.sessions.create(tokenHash(id), userId, now, new Date(now.getTime() + SESSION_MS));
  return id;
}

export async function destroySession(store: Store, id: string): Promise<void> {
  await store.sessions.destroy(tokenHash(id));
}

export type SessionUser = User;

/** The user of the request's session cookie, or undefined (no cookie, unknown or expired session). */
export async function sessionUser(store: Store, request: FastifyRequest, now: Date): Promise<SessionUser | undefined> {
  const id = readCookie(request, SESSION_COOKIE);
  if (!id || id.length > 100) return undefined;
  return store.sessions.user(tokenHash(id), now);
}

/** Deletes expired sessions (called now and then; an expired row is never honoured anyway). */
export async function pruneSessions(store: Store, now: Date): Promise<void> {
  await store.sessions.prune(now);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * CSRF: whether a state-changing request may be served. Safe methods always may. A request with the session
 * cookie must prove it comes from this site (Origin, else Sec-Fetch-Site: same-origin). A request without the
 * cookie that names a foreign Origin is refused too (no logging a victim into an attacker's account).
 */
export function sameOriginAllowed(request: FastifyRequest, origin: string): boolean {
  if (SAFE_METHODS.has(request.method)) return true;
  const hasSession = readCookie(request, SESSION_COOKIE) !== undefined;
  const claimed = request.headers.origin;
  if (typeof claimed === 'string' && claimed !== '') {
    return claimed === new URL(origin).origin || claimed === `${request.protocol}://${request.host}`;
  }
  if (!hasSession) return true;
  return request.headers['sec-fetch-site'] === 'same-origin';
}

export const CROSS_ORIGIN_ERROR = 'Cross-origin request refused: this action must come from the Timeseal site itself.';
