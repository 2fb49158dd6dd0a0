// GET /api/proof/:hash — the proof bundle of a published hash (docs/FORMAT.md §8), built from the archive by
// pipeline/proof.ts (through the injected ArchiveAccess, services.ts) and encoded by core/proof.ts, with the
// hash's receipts of the bundle's day that the store kept (Store.receipts: the site's submissions). A store that
// cannot be read is a 503 (errors.ts), never a bundle claiming no receipts.
// GET /api/proof/:hash.ots — the per-hash OpenTimestamps proof (docs/FORMAT.md), derived from the day's
// `D.json.ots` (pipeline/anchor/proofs.ts); 404 while the hash's day has no calendar proof yet.
// GET /api/proof/:hash.tlog-proof — the same proof as c2sp.org/tlog-proof@v1 text (docs/FORMAT.md §8a,
// core/tlog-proof.ts).
import type { FastifyReply } from 'fastify';
import { fromBase64, toBase64 } from '../../core/encoding.ts';
import { NotFoundError } from '../../core/errors.ts';
import { encodeProofBundle, type ProofBundle } from '../../core/proof.ts';
import { encodeTlogProof, tlogProofFromBundle, TLOG_PROOF_MEDIA_TYPE } from '../../core/tlog-proof.ts';
import { errorSchema, hashParams, noQuery, plainErrors, encoded, type TypedRoutes } from '../schemas.ts';
import type { Services } from '../services.ts';

export const proofRoutes: TypedRoutes<Services> = async (app, s) => {
  /** The bundle of a published hash (its first day), or null once the 404 naming the hash is sent. */
  const publishedProof = (hash: string, reply: FastifyReply): ProofBundle | null => {
    try {
      return s.archive.proof(hash);
    } catch (err) {
      if (err instanceof NotFoundError && s.archive.find(hash).length === 0) {
        void reply.code(404).send({ error: `${hash} is not in any published ledger` });
        return null;
      }
      throw err;
    }
  };

  app.get(
    '/api/proof/:hash.ots',
    {
      schema: {
        hide: false,
        summary: "A published hash's own OpenTimestamps proof (binary .ots), once its day is anchored",
        tags: ['proofs'],
        params: hashParams,
        querystring: noQuery,
        response: {
          200: {
            description: 'the per-hash OpenTimestamps proof (binary .ots, docs/FORMAT.md)',
            type: 'string',
            format: 'binary',
          },
          404: errorSchema,
          ...plainErrors,
        },
      },
    },
    async (request, reply) => {
      const hash = request.params.hash.toLowerCase();
      const bundle = publishedProof(hash, reply);
      if (bundle === null) return reply;
      if (bundle.ots === null) {
        return reply.code(404).send({ error: 'not anchored yet' });
      }
      return reply
        .header('Cache-Control', 'no-cache')
        .header('Content-Disposition', `attachment; filename="${hash}.ots"`)
        .type('application/octet-stream')
        .send(encoded(Buffer.from(fromBase64(bundle.ots))));
    },
  );

  app.get(
    '/api/proof/:hash.tlog-proof',
    {
      schema: {
        hide: false,
        summary: "A published hash's inclusion proof as c2sp.org/tlog-proof@v1 text",
        tags: ['proofs'],
        params: hashParams,
        querystring: noQuery,
        response: {
          200: { description: 'c2sp.org/tlog-proof@v1 text (docs/FORMAT.md §8a)', type: 'string' },
          ...plainErrors,
        },
      },
    },
    async (request, reply) => {
      const hash = request.params.hash.toLowerCase();
      const bundle = publishedProof(hash, reply);
      if (bundle === null) return reply;
      const text = encodeTlogProof(tlogProofFromBundle(bundle));
      return reply
        .header('Cache-Control', 'no-cache')
        .header('Content-Disposition', `attachment; filename="${hash}.tlog-proof"`)
        .type(TLOG_PROOF_MEDIA_TYPE)
        .send(text);
    },
  );

  app.get(
    '/api/proof/:hash',
    {
      schema: {
        hide: false,
        summary: "A published hash's proof bundle (timeseal-proof/3): everything the offline verifier needs",
        tags: ['proofs'],
        params: hashParams,
        querystring: noQuery,
        response: {
          200: {
            type: 'object',
            description: 'timeseal-proof/3 bundle (docs/FORMAT.md §8)',
            additionalProperties: true,
          },
          ...plainErrors,
        },
      },
    },
    async (request, reply) => {
      const hash = request.params.hash.toLowerCase();
      const bundle = publishedProof(hash, reply);
      if (bundle === null) return reply;
      const receipts = await s.store.receipts.forDay(bundle.hash, bundle.date);
      const text = encodeProofBundle({ ...bundle, receipts: receipts.map(toBase64) });
      return reply
        .header('Cache-Control', 'no-cache')
        .header('Content-Disposition', `inline; filename="timeseal-proof-${hash.slice(0, 12)}.json"`)
        .type('application/json; charset=utf-8')
        .send(encoded(text));
    },
  );
};
