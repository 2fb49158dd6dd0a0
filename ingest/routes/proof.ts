// GET /api/proof/:hash — the proof bundle of a published hash (docs/FORMAT.md §8), built from the archive by
// pipeline/proof.ts (through the injected ArchiveAccess, services.ts) and encoded by core/proof.ts.
// GET /api/proof/:hash.ots — the per-hash OpenTimestamps proof (DESIGN.md §2), derived from the day's
// `D.json.ots` (pipeline/anchor/proofs.ts); 404 while the hash's day has no calendar proof yet.
import type { FastifyPluginAsync } from 'fastify';
import { fromBase64 } from '../../core/encoding.ts';
import { NotFoundError } from '../../core/errors.ts';
import { encodeProofBundle } from '../../core/proof.ts';
import { errorSchema, hashParams, noQuery, plainErrors } from '../schemas.ts';
import type { Services } from '../services.ts';

export const proofRoutes: FastifyPluginAsync<Services> = async (app, s) => {
  app.get<{ Params: { hash: string } }>(
    '/api/proof/:hash.ots',
    {
      schema: {
        params: hashParams,
        querystring: noQuery,
        response: {
          200: { description: 'the per-hash OpenTimestamps proof (binary .ots, DESIGN.md §2)', type: 'string', format: 'binary' },
          404: errorSchema,
          ...plainErrors,
        },
      },
    },
    async (request, reply) => {
      const hash = request.params.hash.toLowerCase();
      let bundle;
      try {
        bundle = s.archive.proof(hash);
      } catch (err) {
        if (err instanceof NotFoundError && s.archive.find(hash).length === 0) {
          return reply.code(404).send({ error: `${hash} is not in any published ledger` });
        }
        throw err;
      }
      if (bundle.ots === null) {
        return reply.code(404).send({ error: 'not anchored yet' });
      }
      return reply
        .header('Cache-Control', 'no-cache')
        .header('Content-Disposition', `attachment; filename="${hash}.ots"`)
        .type('application/octet-stream')
        .send(Buffer.from(fromBase64(bundle.ots)));
    },
  );

  app.get<{ Params: { hash: string } }>(
    '/api/proof/:hash',
    {
      schema: {
        params: hashParams,
        querystring: noQuery,
        response: {
          200: { type: 'object', description: 'timeseal-proof/1 bundle (docs/FORMAT.md §8)', additionalProperties: true },
          ...plainErrors,
        },
      },
    },
    async (request, reply) => {
      const hash = request.params.hash.toLowerCase();
      let text: string;
      try {
        text = encodeProofBundle(s.archive.proof(hash));
      } catch (err) {
        if (err instanceof NotFoundError && s.archive.find(hash).length === 0) {
          return reply.code(404).send({ error: `${hash} is not in any published ledger` });
        }
        throw err;
      }
      return reply
        .header('Cache-Control', 'no-cache')
        .header('Content-Disposition', `inline; filename="timeseal-proof-${hash.slice(0, 12)}.json"`)
        .type('application/json; charset=utf-8')
        .send(text);
    },
  );
};
