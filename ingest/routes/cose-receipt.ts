// GET /api/proof/:hash.receipt.cose — the COSE receipt (RFC 9942; docs/FORMAT.md §11) of a published hash's
// leaf (its first day), ES256, which SCITT verifiers take today; GET /api/proof/:hash.receipt-mldsa65.cose — the
// same leaf's ML-DSA-65 receipt (COSE alg −49). Both are the proof bundle's `cose_receipts` (pipeline/proof.ts,
// through the injected ArchiveAccess), served as `application/cose`; 404 for a day published before the archive
// had receipt keys. The hash is any published leaf: a submission, the ledger hash of a TSA token, a statement.
// GET /api/receipt-anchor/:hash.ots — the Bitcoin anchor of that receipt's root: a standard detached `.ots` whose
// file digest is the day's root (core/receipt-anchor.ts, cut from the leaf's per-hash `.ots`); 404 while the day
// has no calendar proof yet.
import { parseCoseSign1, receiptHeader, ALG_ES256, ALG_ML_DSA_65, COSE_MEDIA_TYPE } from '../../core/cose-receipt.ts';
import { parseCheckpoint } from '../../core/checkpoint.ts';
import { fromBase64, fromHex } from '../../core/encoding.ts';
import { parseNote } from '../../core/note.ts';
import { parseDetached, serializeDetached } from '../../core/ots.ts';
import { receiptRootTimestamp } from '../../core/receipt-anchor.ts';
import { NotFoundError } from '../../core/errors.ts';
import { errorSchema, hashParams, noQuery, plainErrors, type TypedRoutes } from '../schemas.ts';
import type { Services } from '../services.ts';

export const coseReceiptRoutes: TypedRoutes<Services> = async (app, s) => {
  app.get(
    '/api/receipt-anchor/:hash.ots',
    {
      schema: {
        hide: false,
        summary:
          "The OpenTimestamps proof of a published hash's COSE receipt root (binary .ots), once its day is anchored",
        tags: ['proofs'],
        params: hashParams,
        querystring: noQuery,
        response: {
          200: { description: "the .ots of the receipt's root (docs/FORMAT.md §11)", type: 'string', format: 'binary' },
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
        if (err instanceof NotFoundError && s.archive.find(hash).length === 0)
          return reply.code(404).send({ error: `${hash} is not in any published ledger` });
        throw err;
      }
      if (bundle.ots === null) return reply.code(404).send({ error: 'not anchored yet' });
      const root = parseCheckpoint(parseNote(bundle.checkpoint).text).root;
      const anchor = receiptRootTimestamp(parseDetached(fromBase64(bundle.ots)), root, fromHex(bundle.ledger.sha256));
      return reply
        .header('Cache-Control', 'no-cache')
        .header('Content-Disposition', `attachment; filename="${hash}.receipt.ots"`)
        .type('application/octet-stream')
        .send(Buffer.from(serializeDetached(anchor)) as never);
    },
  );

  for (const [suffix, alg] of [
    ['receipt.cose', ALG_ES256],
    ['receipt-mldsa65.cose', ALG_ML_DSA_65],
  ] as const) {
    app.get(
      `/api/proof/:hash.${suffix}`,
      {
        schema: {
          hide: false,
          summary: `A published hash's COSE receipt (RFC 9942), signed ${alg === ALG_ES256 ? 'ES256' : 'ML-DSA-65'}`,
          tags: ['proofs'],
          params: hashParams,
          querystring: noQuery,
          response: {
            200: { description: 'a COSE receipt (RFC 9942, docs/FORMAT.md §11)', type: 'string', format: 'binary' },
            404: errorSchema,
            ...plainErrors,
          },
        },
      },
      async (request, reply) => {
        const hash = request.params.hash.toLowerCase();
        let receipts: string[];
        try {
          receipts = s.archive.proof(hash).coseReceipts;
        } catch (err) {
          if (err instanceof NotFoundError && s.archive.find(hash).length === 0)
            return reply.code(404).send({ error: `${hash} is not in any published ledger` });
          throw err;
        }
        const receipt = receipts
          .map((r) => fromBase64(r))
          .find((r) => receiptHeader(parseCoseSign1(r, 'receipt'), 'receipt').alg === alg);
        if (receipt === undefined) {
          return reply.code(404).send({
            error: `the day of ${hash} was published before the archive had receipt keys: it has no COSE receipt`,
          });
        }
        return reply
          .header('Cache-Control', 'no-cache')
          .header('Content-Disposition', `attachment; filename="${hash}.${suffix}"`)
          .type(COSE_MEDIA_TYPE)
          .send(Buffer.from(receipt) as never);
      },
    );
  }
};
