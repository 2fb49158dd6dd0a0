// The read-only status API of the site (docs/API.md): queue stats, the ledger list, Bitcoin block
// information and the per-day quantum verification. Everything comes from the database (queue) and the
// published archive (days.json, ots_status.json, block_info.json, the day files).
import { ledgerOtsPath, ledgerPath, type DayRecord } from '../../core/archive.ts';
import { isDate } from '../../core/ledger.ts';
import { ClientError } from '../errors.ts';
import { DATE_PATTERN, noQuery, plainErrors, type TypedRoutes, type Answer } from '../schemas.ts';
import type { Services } from '../services.ts';
import type { BlockInfo } from '../archive-view.ts';

const otsStatusSchema = {
  type: 'object',
  properties: { latest_ots_ok: { type: 'string' }, last_update: { type: 'string' }, queue_size: { type: 'integer' } },
  required: ['latest_ots_ok', 'last_update', 'queue_size'],
} as const;

/** The index of the first day on or after `date` in the ascending list (its length when none): a binary search. */
function firstOnOrAfter(days: readonly DayRecord[], date: string): number {
  let lo = 0;
  let hi = days.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (days[mid]!.date < date) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Days in a default /api/ledgers.php answer, and the most one page may ask for (a year). */
export const LEDGERS_PAGE = 60;
export const LEDGERS_PAGE_MAX = 366;

/** queue-stats `status` while submissions are refused (ingest/submission-gate.ts). */
export const PAUSED_STATUS = 'submissions paused';
/** queue-stats `status` while writes to the database fail (a full disk; submission-gate.ts). */
export const STORAGE_STATUS = 'submissions failing';

/** GET /api/queue-stats.php: the queue and whether submissions are open. */
export const queueStatsSchema = {
  type: 'object',
  properties: {
    status: { type: 'string' },
    lastUpdate: { type: 'string' },
    latestAnchoredDay: { type: 'string' },
    queueSize: { type: 'integer' },
    lastPublishedDay: { type: 'string' },
    // Beyond the spec's shape: false (status "submissions paused", and `problem` says why) while the
    // server's clock is not after the last published day and both submission routes answer 503; also
    // false (status "submissions failing") from a write that failed on a full or failing disk until
    // a submission is stored again.
    submissionsOpen: { type: 'boolean' },
    problem: { type: 'string' },
  },
  required: ['status', 'lastUpdate', 'latestAnchoredDay', 'queueSize', 'lastPublishedDay', 'submissionsOpen'],
} as const;
export type QueueStats = Answer<typeof queueStatsSchema>;

/** GET /api/ledgers.php: one page of the published days, newest first. */
export const ledgersPageSchema = {
  type: 'object',
  properties: {
    ledgers: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          date: { type: 'string' },
          jsonUrl: { type: 'string' },
          otsUrl: { type: 'string' },
          otsStatus: { type: 'string', enum: ['verified', 'pending'] },
          signatureVerified: { type: 'boolean' },
          entryCount: { type: 'integer' },
          // RFC 3161 tokens of the ledger file (pipeline/tsa-client.ts), checked: where, when, by whom.
          rfc3161: {
            type: 'array',
            items: {
              type: 'object',
              properties: { url: { type: 'string' }, genTime: { type: 'string' }, tsa: { type: 'string' } },
              required: ['url', 'genTime', 'tsa'],
            },
          },
        },
        required: ['date', 'jsonUrl', 'otsUrl', 'otsStatus', 'signatureVerified', 'entryCount', 'rfc3161'],
      },
    },
    otsStatus: { anyOf: [otsStatusSchema, { type: 'null' }] },
    // Beyond the spec's shape: paging.
    next: {
      type: ['string', 'null'],
      description: 'the `before` of the next, older page; null when this page reaches the oldest day',
    },
    total: { type: 'integer', description: 'published days in all' },
  },
  required: ['ledgers', 'otsStatus', 'next', 'total'],
} as const;
export type LedgersPage = Answer<typeof ledgersPageSchema>;

/** GET /api/ots-block-info.php: the Bitcoin blocks of the anchored days. */
export const otsBlockInfoSchema = {
  type: 'object',
  properties: {
    ledgers: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        properties: { block_height: { type: ['integer', 'null'] }, confirmations: { type: 'integer' } },
        required: ['block_height', 'confirmations'],
      },
    },
  },
  required: ['ledgers'],
} as const;
export type OtsBlockInfo = Answer<typeof otsBlockInfoSchema>;

/** GET /api/ledgers-calendar.php: a year's days. */
export const ledgersCalendarSchema = {
  type: 'object',
  properties: {
    year: { type: 'string' },
    days: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          date: { type: 'string' },
          entryCount: { type: 'integer' },
          anchored: { type: 'boolean' },
        },
        required: ['date', 'entryCount', 'anchored'],
      },
    },
    first: { type: ['string', 'null'], description: 'the first published day of the archive' },
    last: { type: ['string', 'null'], description: 'the last published day of the archive' },
  },
  required: ['year', 'days', 'first', 'last'],
} as const;
export type LedgersCalendar = Answer<typeof ledgersCalendarSchema>;

export const statusRoutes: TypedRoutes<Services> = async (app, s) => {
  app.get(
    '/api/queue-stats.php',
    {
      schema: {
        hide: false,
        summary:
          'The queue: hashes waiting for the next ledger, the last published and anchored days, submissions open',
        tags: ['status'],
        querystring: noQuery,
        response: {
          200: queueStatsSchema,
          ...plainErrors,
        },
      },
    },
    async (_request, reply) => {
      const last = s.archive.days().at(-1)?.date ?? '';
      const now = s.clock().toISOString();
      const paused = s.gate.condition(now.slice(0, 10));
      reply.header('Cache-Control', 'no-cache');
      return {
        status: paused === null ? 'operational' : paused.kind === 'storage' ? STORAGE_STATUS : PAUSED_STATUS,
        lastUpdate: now,
        latestAnchoredDay: s.archive.otsStatus()?.latest_ots_ok ?? '',
        queueSize: await s.store.submissions.queueSize(last),
        lastPublishedDay: last,
        submissionsOpen: paused === null,
        ...(paused ? { problem: paused.problem } : {}),
      };
    },
  );

  app.get(
    '/api/ledgers.php',
    {
      schema: {
        hide: false,
        summary: 'The published days, a page at a time',
        tags: ['status'],
        description: `The published days, newest first: at most \`limit\` (default ${LEDGERS_PAGE}, at most ${LEDGERS_PAGE_MAX}) of them, the newest before \`before\` (a date; default: all). \`next\` is the \`before\` of the following (older) page, null at the oldest day; \`total\` the number of published days. One page costs the same whatever the archive's age.`,
        querystring: {
          type: 'object',
          properties: {
            before: {
              type: 'string',
              pattern: DATE_PATTERN,
              description: 'only days strictly before this date (YYYY-MM-DD)',
            },
            limit: {
              type: 'string',
              pattern: '^[1-9][0-9]{0,2}$',
              description: `at most this many days (1 to ${LEDGERS_PAGE_MAX})`,
            },
          },
          additionalProperties: false,
        },
        response: {
          200: ledgersPageSchema,
          ...plainErrors,
        },
      },
    },
    async (request, reply) => {
      const { before } = request.query;
      if (before !== undefined && !isDate(before))
        throw new ClientError(400, `before: ${before} is not a calendar date`);
      const limit = request.query.limit === undefined ? LEDGERS_PAGE : Number(request.query.limit);
      if (limit > LEDGERS_PAGE_MAX) throw new ClientError(400, `limit: at most ${LEDGERS_PAGE_MAX} days a page`);
      const all = s.archive.days();
      // The days before `before` (a binary search in the ascending list), then the page's slice, newest first.
      const end = before === undefined ? all.length : firstOnOrAfter(all, before);
      const start = Math.max(0, end - limit);
      const days = all.slice(start, end).reverse();
      reply.header('Cache-Control', 'no-cache');
      const [stamps, verified] = await Promise.all([
        Promise.all(days.map((d) => s.archive.timeStamps(d))),
        Promise.all(days.map((d) => s.archive.verifyDay(d.date))),
      ]);
      return {
        ledgers: days.map((d, i) => ({
          date: d.date,
          jsonUrl: `/ledgers/${ledgerPath(d.date)}`,
          otsUrl: `/ledgers/${ledgerOtsPath(d.date)}`,
          otsStatus: s.archive.otsState(d.date),
          signatureVerified: verified[i]?.dualSignature ?? false,
          entryCount: d.entryCount,
          rfc3161: stamps[i]!.map((t) => ({ url: `/ledgers/${t.file}`, genTime: t.genTime, tsa: t.tsaName })),
        })),
        otsStatus: s.archive.otsStatus(),
        next: start > 0 ? all[start]!.date : null,
        total: all.length,
      };
    },
  );

  // A year's days at a glance (the heat map on /ledgers): date, size and anchoring, from days.json and the
  // anchoring status only (no per-day verification), found by a binary search: the same cost in any year.
  app.get(
    '/api/ledgers-calendar.php',
    {
      schema: {
        hide: false,
        summary: "A year's published days: date, entry count, anchored",
        tags: ['status'],
        querystring: {
          type: 'object',
          properties: { year: { type: 'string', pattern: '^[0-9]{4}$', description: 'the UTC year, YYYY' } },
          required: ['year'],
          additionalProperties: false,
        },
        response: {
          200: ledgersCalendarSchema,
          ...plainErrors,
        },
      },
    },
    async (request, reply) => {
      const { year } = request.query;
      const all = s.archive.days();
      const days = [];
      for (let i = firstOnOrAfter(all, `${year}-01-01`); i < all.length && all[i]!.date.startsWith(`${year}-`); i++) {
        const d = all[i]!;
        days.push({ date: d.date, entryCount: d.entryCount, anchored: s.archive.otsState(d.date) === 'verified' });
      }
      reply.header('Cache-Control', 'no-cache');
      return { year, days, first: all[0]?.date ?? null, last: all.at(-1)?.date ?? null };
    },
  );

  app.get(
    '/api/ots-block-info.php',
    {
      schema: {
        hide: false,
        summary: "The Bitcoin blocks of the newest days' anchors, or of one month's",
        tags: ['status'],
        // Bounded like the ledger list: the days of the newest LEDGERS_PAGE published days by default, or of one
        // month (`month=YYYY-MM`), never the whole archive's.
        querystring: {
          type: 'object',
          properties: { month: { type: 'string', pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$' } },
          additionalProperties: false,
        },
        response: {
          200: otsBlockInfoSchema,
          ...plainErrors,
        },
      },
    },
    async (request, reply) => {
      const { month } = request.query;
      const all = s.archive.days();
      const info = s.archive.blockInfo();
      const from = month === undefined ? Math.max(0, all.length - LEDGERS_PAGE) : firstOnOrAfter(all, `${month}-01`);
      const dates: string[] = [];
      for (let i = from; i < all.length && (month === undefined || all[i]!.date.startsWith(`${month}-`)); i++)
        dates.push(all[i]!.date);
      const ledgers: Record<string, BlockInfo> = {};
      for (const d of dates) if (info[d] !== undefined) ledgers[d] = info[d];
      reply.header('Cache-Control', 'no-cache');
      return { ledgers };
    },
  );

  app.get(
    '/api/verify-quantum.php',
    {
      schema: {
        hide: false,
        summary: "Whether a published day's ledger signatures (ECDSA P-256, ML-DSA-65) verify",
        tags: ['status'],
        querystring: {
          type: 'object',
          properties: { date: { type: 'string', pattern: DATE_PATTERN } },
          required: ['date'],
          additionalProperties: false,
        },
        response: {
          200: {
            type: 'object',
            properties: {
              date: { type: 'string' },
              quantum_shield: { type: 'boolean' },
              dual_signature: { type: 'boolean' },
              ecdsa_p256: { type: 'boolean' },
              ml_dsa_65: { type: 'boolean' },
            },
            required: ['date', 'quantum_shield', 'dual_signature', 'ecdsa_p256', 'ml_dsa_65'],
          },
          ...plainErrors,
        },
      },
    },
    async (request, reply) => {
      const { date } = request.query;
      if (!isDate(date)) throw new ClientError(400, `date: ${date} is not a calendar date`);
      const result = await s.archive.verifyDay(date);
      if (result === null) return reply.code(404).send({ error: `No published ledger for ${date}` });
      reply.header('Cache-Control', 'no-cache');
      return {
        date,
        quantum_shield: result.quantumShield,
        dual_signature: result.dualSignature,
        ecdsa_p256: result.ecdsa,
        ml_dsa_65: result.mldsa,
      };
    },
  );
};
