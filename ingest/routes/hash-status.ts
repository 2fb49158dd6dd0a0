// GET /api/status/:hash — where a hash stands (docs/API.md): published (each day whose ledger holds it, with its
// leaf and the proof's address), queued (each day it waits for, with the time its ledger is published: 00:01 UTC
// the next day), or unknown to this server. /verify says "queued for the ledger of D" from it instead of "not
// found" for a hash submitted today. Published days come from the index (archive-view.ts find: a few shard
// reads); queued days from the store's rows after the last published day (Store.submissions.queued: the
// hash's own rows by its index). Each address has a budget of lookups (STATUS_LOOKUP_RATE, lookup-budget.ts):
// past it, 429 with Retry-After.
import { publicationTime } from './beta.ts';
import { lookupBudget } from '../lookup-budget.ts';
import { hashParams, noQuery, plainErrors, type TypedRoutes, type Answer } from '../schemas.ts';
import type { Services } from '../services.ts';

/** GET /api/status/<hash>: where a hash stands. */
export const hashStatusSchema = {
  type: 'object',
  properties: {
    hash: { type: 'string' },
    state: {
      type: 'string',
      enum: ['published', 'queued', 'unknown'],
      description: 'published when any ledger holds it; else queued when it waits for one; else unknown',
    },
    message: { type: 'string' },
    published: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          date: { type: 'string' },
          leafIndex: { type: 'integer' },
          submittedAt: { type: 'string' },
          proofUrl: { type: 'string' },
        },
        required: ['date', 'leafIndex', 'submittedAt', 'proofUrl'],
      },
    },
    queued: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          ledgerDate: { type: 'string' },
          submittedAt: { type: 'string', description: 'the earliest submission that day' },
          publishedAt: { type: 'string', description: 'when that ledger is published' },
        },
        required: ['ledgerDate', 'submittedAt', 'publishedAt'],
      },
    },
  },
  required: ['hash', 'state', 'message', 'published', 'queued'],
} as const;
export type HashStatus = Answer<typeof hashStatusSchema>;

export const hashStatusRoutes: TypedRoutes<Services> = async (app, s) => {
  const budget = lookupBudget(s.ingest.statusLookupRate);
  app.get(
    '/api/status/:hash',
    {
      schema: {
        hide: false,
        summary: 'Where a SHA-256 hash stands: published, queued for a ledger, or unknown',
        tags: ['status'],
        params: hashParams,
        querystring: noQuery,
        response: {
          200: hashStatusSchema,
          ...plainErrors,
        },
      },
    },
    async (request, reply) => {
      const refused = budget.take(request.ip, s.clock());
      if (refused !== null)
        return reply.code(429).header('Retry-After', String(refused.retryAfter)).send({ error: refused.error });
      const hash = request.params.hash.toLowerCase();
      const published = s.archive.find(hash).map((o) => ({
        date: o.date,
        leafIndex: o.leafIndex,
        submittedAt: o.submittedAt,
        proofUrl: `/api/proof/${hash}`,
      }));
      const last = s.archive.days().at(-1)?.date ?? '';
      const queued = (await s.store.submissions.queued(hash, last)).map((q) => ({
        ledgerDate: q.date,
        submittedAt: q.submittedAt.toISOString(),
        publishedAt: publicationTime(q.date),
      }));
      const next = queued[0];
      const state: 'published' | 'queued' | 'unknown' =
        published.length > 0 ? 'published' : next !== undefined ? 'queued' : 'unknown';
      const message =
        state === 'published'
          ? `Published in the ledger of ${published.map((p) => p.date).join(', ')}.${next ? ` Also queued for the ledger of ${next.ledgerDate}, published at ${next.publishedAt}.` : ''}`
          : state === 'queued'
            ? `Queued for the ledger of ${next!.ledgerDate}, published at ${next!.publishedAt} (00:01 UTC).`
            : 'This server has no record of this hash: it was not submitted here, or it is in no published ledger yet.';
      reply.header('Cache-Control', 'no-cache');
      return { hash, state, message, published, queued };
    },
  );
};
