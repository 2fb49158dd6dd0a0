// Submission limits (docs/API.md, "Submissions"): the free tier allows 2 timestamps per UTC day per client IP,
// counted in the ip_rate_limit table; a paying Standard subscriber (status "active" or "trialing") has 500
// per UTC calendar month instead, counted in quota_usage (one row per user and month).
//
// Contract of `submitWithinLimits(store, request)`:
// - Decides whether one more submission is allowed for this client and, if so, counts it and stores it: the
//   store's `limits.submit` (store/store.ts), one transaction holding the paying check, the count and the
//   rows, exact under concurrency in this process or another one on the same database, and a rolled-back
//   submission is not counted either.
// - `ip` is the client address as Fastify reports it (socket, or the trusted proxy's forwarded address);
//   `userId` is set for a logged-in user (paying users count against their monthly quota instead of the IP's
//   daily one, and the submission goes into their history); `now` is the injectable clock's instant and picks
//   the UTC day. `receipt`, when given, is stored with the submission (and only if it is).
// - Returns { allowed: true, remaining, tier } or { allowed: false, status, error, tier } where `error` is the
//   text shown to the user and `status` the HTTP status to answer with (429).
import { PAYING_STATUSES, type Store } from '../store/store.ts';

/** The product's free tier: "Free tier — 2 timestamps per day per IP" (docs/API.md). */
export const FREE_PER_DAY = 2;

/** The product's Standard plan: "Standard — 500 per month" (docs/API.md). */
export const STANDARD_PER_MONTH = 500;

/** The subscription statuses that count as paying (kept by the store, store/store.ts). */
export { PAYING_STATUSES };

/** Our text (the spec gives none); documented in docs/API.md. `n` differs from 2 only on a local development
 * server (FREE_TIER_DAILY_LIMIT, ingest/config.ts). */
export const dailyLimitError = (n: number): string =>
  `Daily limit reached: the free tier allows ${n} timestamp${n === 1 ? '' : 's'} per day. Try again tomorrow or upgrade to Standard.`;
export const DAILY_LIMIT_ERROR = dailyLimitError(FREE_PER_DAY);
/** Our text (the spec gives none); documented in docs/API.md. */
export const MONTHLY_LIMIT_ERROR =
  'Monthly limit reached: the Standard plan allows 500 timestamps per month. Your quota renews on the 1st of next month (UTC).';

export type Tier = 'free' | 'standard';

export interface LimitRequest {
  ip: string;
  userId?: string;
  now: Date;
  hash: string;
  fileName: string | null;
  /** The free tier's daily cap when not FREE_PER_DAY: FREE_TIER_DAILY_LIMIT on a local development server. */
  freePerDay?: number;
  /** The hash's RFC 3161 receipt (DER, genTime = now), stored with the submission in its transaction. */
  receipt?: Uint8Array;
}

export type LimitDecision =
  { allowed: true; remaining: number; tier: Tier } | { allowed: false; status: 429; error: string; tier: Tier };

/** "2025-11" from an instant: the UTC calendar month a Standard submission counts in. */
export const utcMonth = (now: Date): string => now.toISOString().slice(0, 7);

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
  const groups = ip.includes('::')
    ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

export async function submitWithinLimits(store: Store, request: LimitRequest): Promise<LimitDecision> {
  const outcome = await store.limits.submit({
    submission: { hash: request.hash, submittedAt: request.now, fileName: request.fileName },
    clientKey: clientKey(request.ip),
    ...(request.userId === undefined ? {} : { userId: request.userId }),
    ...(request.receipt === undefined ? {} : { receipt: request.receipt }),
    caps: { freePerDay: request.freePerDay ?? FREE_PER_DAY, standardPerMonth: STANDARD_PER_MONTH },
  });
  if (outcome.tier === 'standard') {
    if (!outcome.allowed) return { allowed: false, status: 429, error: MONTHLY_LIMIT_ERROR, tier: 'standard' };
    return { allowed: true, remaining: STANDARD_PER_MONTH - outcome.count, tier: 'standard' };
  }
  const freePerDay = request.freePerDay ?? FREE_PER_DAY;
  if (!outcome.allowed) return { allowed: false, status: 429, error: dailyLimitError(freePerDay), tier: 'free' };
  return { allowed: true, remaining: freePerDay - outcome.count, tier: 'free' };
}

/**
 * The operator's optional cap on the beta API (BETA_API_RATE, ingest/config.ts; the product spec sets none
 * during the beta). Counted per client address like the free tier (`clientKey`: IPv6 per /64; the address is
 * Fastify's, so TRUST_PROXY applies) in the same table, ip_rate_limit, one row per address and window: the
 * `date` column holds `beta-api:<window start, ISO>/<unit>`, which sorts after every free-tier date
 * ("2025-…" < "beta-…"), so the two never meet. Windows are fixed and aligned on the UTC clock (a whole
 * minute, hour, …): a client can send up to twice the count across a window boundary. The count is of
 * submissions, not requests: a single submission (and a POST /tsa grant) counts one, a batch the hashes it
 * stores, all or none.
 *
 * Deciding and counting are one step of the store (`limits.countWindow`), as for the free tier, so processes
 * sharing the database share the cap and concurrent requests never pass it. The first request of an address in a window also deletes that
 * address's rows of earlier windows (an index look-up), so the table holds about one beta row per address.
 */
export interface RateCap {
  /**
   * null to go ahead (`amount` submissions are counted, default 1: the batch route counts the hashes it
   * stores), or the refusal, nothing counted: the 429 text and Retry-After in seconds. A batch is admitted
   * whole or not at all.
   */
  check(ip: string, now: Date, amount?: number): Promise<{ error: string; retryAfter: number } | null>;
}

const BETA_WINDOW_PREFIX = 'beta-api:';

/** Our text (the spec gives none: "rate limiting … may be added later"). */
export function betaRateError(rate: { count: number; unit: string }, retryAfter: number): string {
  return `Rate limit reached: this server accepts at most ${rate.count} beta API submission${rate.count === 1 ? '' : 's'} per ${rate.unit} from one address. Try again in ${retryAfter} second${retryAfter === 1 ? '' : 's'}.`;
}

/**
 * Our text for a batch of `amount` hashes refused by the cap: more than the cap itself (it never fits), or more
 * than the `left` submissions the address has left in this window.
 */
export function betaBatchRateError(
  rate: { count: number; unit: string },
  retryAfter: number,
  amount: number,
  left: number,
): string {
  const cap = `${rate.count} beta API submission${rate.count === 1 ? '' : 's'} per ${rate.unit} from one address`;
  if (amount > rate.count)
    return `Rate limit: this server accepts at most ${cap}, fewer than the ${amount} hashes of this batch. Send at most ${rate.count} hashes per batch.`;
  return `Rate limit reached: this server accepts at most ${cap}; this batch of ${amount} hashes would pass it (${left} left in this ${rate.unit}). Try again in ${retryAfter} second${retryAfter === 1 ? '' : 's'}, or send a smaller batch.`;
}

export function betaRateCap(store: Store, rate: { count: number; unit: string; windowMs: number }): RateCap {
  return {
    async check(ip, now, amount = 1) {
      const t = now.getTime();
      const start = t - (((t % rate.windowMs) + rate.windowMs) % rate.windowMs);
      const window = `${BETA_WINDOW_PREFIX}${new Date(start).toISOString()}/${rate.unit}`;
      const key = clientKey(ip);
      const n = await store.limits.countWindow(
        key,
        window,
        rate.count,
        { from: BETA_WINDOW_PREFIX, before: `${BETA_WINDOW_PREFIX}${new Date(start).toISOString()}` },
        amount,
      );
      if (n === undefined) {
        const retryAfter = Math.max(1, Math.ceil((start + rate.windowMs - t) / 1000));
        if (amount === 1) return { error: betaRateError(rate, retryAfter), retryAfter };
        // What is left is read after the refusal, for the text only (other requests may change it meanwhile).
        const left = amount > rate.count ? 0 : Math.max(0, rate.count - (await store.limits.dailyUsed(key, window)));
        return { error: betaBatchRateError(rate, retryAfter, amount, left), retryAfter };
      }
      return null;
    },
  };
}
