// The 429 of POST /api/submit when the plan's limit is reached (docs/API.md): besides `ok: false` and the
// text, the body says which limit it was and when it resets — `limit: {period: 'day' | 'month', max, resetsAt}`
// — and `Retry-After` gives the seconds until then, so a client can wait without knowing our plans. The free
// tier's text offers the upgrade to Standard only when this server can sell it (Stripe configured).
import { DAILY_LIMIT_ERROR, FREE_PER_DAY, STANDARD_PER_MONTH } from './limits.ts';

const UPGRADE = ' or upgrade to Standard.';
import { okErrorSchema } from './schemas.ts';

/** Our text (the spec gives none) when payments are not configured: no upgrade is offered. */
export const DAILY_LIMIT_ERROR_NO_PAYMENTS = DAILY_LIMIT_ERROR.replace(UPGRADE, '.');

export interface LimitInfo {
  period: 'day' | 'month';
  max: number;
  /** ISO-8601, UTC: 00:00 of the next UTC day, or of the 1st of the next UTC month. */
  resetsAt: string;
}

export function limitInfo(tier: 'free' | 'standard', now: Date, freePerDay = FREE_PER_DAY): LimitInfo {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  return tier === 'standard'
    ? { period: 'month', max: STANDARD_PER_MONTH, resetsAt: new Date(Date.UTC(y, m + 1, 1)).toISOString() }
    : { period: 'day', max: freePerDay, resetsAt: new Date(Date.UTC(y, m, now.getUTCDate() + 1)).toISOString() };
}

export function limitRefusal(
  tier: 'free' | 'standard',
  error: string,
  now: Date,
  paymentsAvailable: boolean,
  freePerDay = FREE_PER_DAY,
): { retryAfter: number; body: { ok: false; error: string; limit: LimitInfo } } {
  const limit = limitInfo(tier, now, freePerDay);
  const retryAfter = Math.max(1, Math.ceil((Date.parse(limit.resetsAt) - now.getTime()) / 1000));
  const text = tier === 'free' && !paymentsAvailable && error.endsWith(UPGRADE) ? error.replace(UPGRADE, '.') : error;
  return { retryAfter, body: { ok: false, error: text, limit } };
}

/** POST /api/submit's error schema: the `{ok: false, error}` of every error, and `limit` on a 429. */
export const submitErrorSchema = {
  ...okErrorSchema,
  properties: {
    ...okErrorSchema.properties,
    limit: {
      type: 'object',
      description: 'on 429 only: the limit reached and when it resets (also in Retry-After, seconds)',
      properties: {
        period: { type: 'string', enum: ['day', 'month'] },
        max: { type: 'integer' },
        resetsAt: { type: 'string', format: 'date-time' },
      },
      required: ['period', 'max', 'resetsAt'],
    },
  },
} as const;
