// Submission limits (product spec §5, §9): the free tier allows 2 timestamps per UTC day per client IP,
// counted in the ip_rate_limit table. The accounts issue extends this module with the Standard tier's 500 a
// month (quota_usage) behind the same function; callers do not change.
//
// Contract of `checkAndCount(db, request)`:
// - Decides whether one more submission is allowed for this client and, if so, counts it. Deciding and
//   counting are one SQL statement (an UPSERT that only increments while the count is below the limit), so
//   concurrent calls can never admit more than the limit, in this process or in another one on the same file.
// - Call it inside the same transaction as the write it guards (see routes/submit.ts): a rolled-back
//   submission is then not counted either.
// - `ip` is the client address as Fastify reports it (socket, or the trusted proxy's forwarded address);
//   `userId` is set for a logged-in user (accounts issue: paying users count against their monthly quota
//   instead of the IP's daily one); `now` is the injectable clock's instant and picks the UTC day.
// - Returns { allowed: true, remaining } or { allowed: false, status, error } where `error` is the text shown
//   to the user and `status` the HTTP status to answer with (429).
import type { DB } from '../pipeline/db.ts';
import { utcDate } from '../core/ledger.ts';

/** Product spec §9: "Free tier — 2 timestamps per day per IP". */
export const FREE_PER_DAY = 2;

/** Our text (the spec gives none); documented in docs/API.md. */
export const DAILY_LIMIT_ERROR =
  'Daily limit reached: the free tier allows 2 timestamps per day. Try again tomorrow or upgrade to Standard.';

export interface LimitRequest {
  ip: string;
  userId?: string;
  now: Date;
}

export type LimitDecision =
  | { allowed: true; remaining: number }
  | { allowed: false; status: 429; error: string };

/**
 * The key an address is counted under: an IPv4 address as is (IPv4-mapped IPv6 unwrapped); an IPv6 address
 * by its /64 prefix, since one subscriber usually holds a whole /64 and could otherwise rotate addresses.
 */
export function clientKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!ip.includes(':')) return ip;
  const [head = '', tail = ''] = ip.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = ip.includes('::') ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

export function checkAndCount(db: DB, request: LimitRequest): LimitDecision {
  const row = db
    .prepare(
      `INSERT INTO ip_rate_limit (ip_address, date, count) VALUES (?, ?, 1)
       ON CONFLICT (ip_address, date) DO UPDATE SET count = count + 1 WHERE count < ?
       RETURNING count`,
    )
    .get(clientKey(request.ip), utcDate(request.now), FREE_PER_DAY) as { count: number } | undefined;
  if (row === undefined) return { allowed: false, status: 429, error: DAILY_LIMIT_ERROR };
  return { allowed: true, remaining: FREE_PER_DAY - row.count };
}
