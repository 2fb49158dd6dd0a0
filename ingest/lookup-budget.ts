// The per-address budget of the public status lookup (GET /api/status/<hash>, STATUS_LOOKUP_RATE, default
// 120 a minute): like the other public routes' limits, counted per client address (`clientKey`: IPv6 per
// /64; Fastify's address, so TRUST_PROXY applies) in fixed windows aligned on the UTC clock, answered 429 with
// Retry-After past it. Unlike the forms' throttles (throttle.ts, rows in the store), it is counted in this
// process's memory: a lookup only reads, and a durable count would make every lookup a synced write (on SQLite
// one more fsync on the event loop's thread per lookup, the cost this budget is there to bound). Each node of
// several therefore has its own budget, and a restart forgets the counts.
//
// Memory is bounded: the counts are of the current window only (a new window forgets the last), and at most
// MAX_ADDRESSES addresses are counted apart in one window; addresses beyond them share one count.
import { clientKey } from './limits.ts';
import type { Rate } from '../runtime/setting-parsers.ts';

/** Addresses counted apart in one window (about 100 bytes each): past them, new addresses share one count. */
export const MAX_ADDRESSES = 100_000;
const SHARED = '*';

/** Our text (the spec gives none). */
export function lookupBudgetError(rate: Rate, retryAfter: number): string {
  return `Too many status lookups from this address: this server answers at most ${rate.count} ${rate.unit === 'hour' ? 'an' : 'a'} ${rate.unit} from one address. Try again in ${retryAfter} second${retryAfter === 1 ? '' : 's'}.`;
}

export interface LookupBudget {
  /** null to go ahead (the lookup is counted), or the refusal: the 429 text and Retry-After in seconds. */
  take(ip: string, now: Date): { error: string; retryAfter: number } | null;
}

export function lookupBudget(rate: Rate, maxAddresses = MAX_ADDRESSES): LookupBudget {
  let windowStart = -Infinity;
  let counts = new Map<string, number>();
  return {
    take(ip, now) {
      const t = now.getTime();
      const start = t - (((t % rate.windowMs) + rate.windowMs) % rate.windowMs);
      if (start !== windowStart) {
        windowStart = start;
        counts = new Map();
      }
      let key = clientKey(ip);
      if (!counts.has(key) && counts.size >= maxAddresses) key = SHARED;
      const used = counts.get(key) ?? 0;
      if (used >= rate.count) {
        const retryAfter = Math.max(1, Math.ceil((start + rate.windowMs - t) / 1000));
        return { error: lookupBudgetError(rate, retryAfter), retryAfter };
      }
      counts.set(key, used + 1);
      return null;
    },
  };
}
