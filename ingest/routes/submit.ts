// POST /api/submit (product spec §7): the site's free-tier submission, {hash, fileName?}. 2 per UTC day per
// client IP (ingest/limits.ts). The limit check and the row are one transaction, committed before the answer.
import type { FastifyPluginAsync } from 'fastify';
import { utcDate } from '../../core/ledger.ts';
import { enqueue } from '../../pipeline/queue.ts';
import { checkAndCount } from '../limits.ts';
import { HASH_PATTERN, noQuery, okErrorSchema, SINGLE_LINE } from '../schemas.ts';
import type { Services } from '../services.ts';

/** Product spec §8: the client shows "Hash queued!" / "Your timestamp has been submitted". */
export const SUBMIT_MESSAGE = 'Your timestamp has been submitted';

interface SubmitBody {
  hash: string;
  fileName?: string | null;
}

export const submitRoutes: FastifyPluginAsync<Services> = async (app, s) => {
  app.post<{ Body: SubmitBody }>(
    '/api/submit',
    {
      config: { errorStyle: 'ok' },
      schema: {
        querystring: noQuery,
        body: {
          type: 'object',
          properties: {
            hash: { type: 'string', pattern: HASH_PATTERN },
            fileName: { type: ['string', 'null'], maxLength: 255, pattern: SINGLE_LINE },
          },
          required: ['hash'],
          additionalProperties: false,
        },
        response: {
          201: {
            type: 'object',
            properties: {
              ok: { type: 'boolean', const: true },
              hash: { type: 'string' },
              submittedAt: { type: 'string' },
              ledgerDate: { type: 'string' },
              message: { type: 'string' },
              remainingToday: { type: 'integer' },
            },
            required: ['ok', 'hash', 'submittedAt', 'ledgerDate', 'message', 'remainingToday'],
          },
          '4xx': okErrorSchema,
          '5xx': okErrorSchema,
        },
      },
    },
    async (request, reply) => {
      const now = s.clock();
      const hash = request.body.hash.toLowerCase();
      const decision = s.db.transaction(() => {
        const d = checkAndCount(s.db, { ip: request.ip, now });
        if (d.allowed) enqueue(s.db, [{ hash, submittedAt: now, fileName: request.body.fileName ?? null, source: 'web' }]);
        return d;
      })();
      if (!decision.allowed) return reply.code(decision.status).send({ ok: false, error: decision.error });
      return reply.code(201).send({
        ok: true,
        hash,
        submittedAt: now.toISOString(),
        ledgerDate: utcDate(now),
        message: SUBMIT_MESSAGE,
        remainingToday: decision.remaining,
      });
    },
  );
};
