// GET /.well-known/scitt-keys — the receipt keys as a COSE Key Set (RFC 9052 §7), `application/cbor`, and
// GET /.well-known/scitt-keys/{kid} — one of them as a COSE Key, its kid (32 bytes, the RFC 9679 thumbprint)
// written in base64url without padding since it is not URL-safe: draft-ietf-scitt-scrapi-11 §2.1 and §2.2
// (docs/API.md). The keys are runtime/receipt-keys.ts's, those in use then the retired ones (each with the
// first and last day it signed, label "timeseal-days"); an archive without them answers 404. Every 404 is an
// RFC 9290 Concise Problem Details body, as -11 §2.2 requires ("No such key").
import { encodeCbor } from '../../core/cbor.ts';
import { encodeCoseKey, encodeCoseKeySet, receiptKid } from '../../core/cose-receipt.ts';
import { noQuery, plainErrors, type TypedRoutes } from '../schemas.ts';
import { PROBLEM_TYPE, problemDetails } from './scitt-entries.ts';
import type { Services } from '../services.ts';

const CBOR = 'application/cbor';
const NO_KEYS = 'This archive has no receipt keys (`timeseal keys add` makes them)';
const problem = { type: 'string', format: 'binary', description: 'RFC 9290 Concise Problem Details (CBOR)' } as const;

export const scittKeyRoutes: TypedRoutes<Services> = async (app, s) => {
  const binary = { type: 'string', format: 'binary' } as const;
  /** The keys in use, then the retired ones with the days they signed (a rotation keeps old receipts verifiable). */
  const allKeys = () => [...(s.publicKeys().receipt ?? []), ...(s.publicKeys().retiredReceipt ?? [])];

  app.get(
    '/.well-known/scitt-keys',
    {
      schema: {
        hide: false,
        summary: 'The COSE receipt keys, in use and retired (a COSE Key Set)',
        tags: ['scitt'],
        querystring: noQuery,
        response: { 200: { ...binary, description: 'COSE Key Set (CBOR)' }, 404: problem, ...plainErrors },
      },
    },
    async (_request, reply) => {
      const keys = allKeys();
      if (keys.length === 0)
        return reply
          .code(404)
          .type(PROBLEM_TYPE)
          .send(problemDetails('No such key', NO_KEYS) as never);
      return reply
        .header('Cache-Control', 'public, max-age=300')
        .type(CBOR)
        .send(Buffer.from(encodeCoseKeySet(keys)) as never);
    },
  );

  app.get(
    '/.well-known/scitt-keys/:kid',
    {
      schema: {
        hide: false,
        summary: 'One COSE receipt key by its kid',
        tags: ['scitt'],
        params: {
          type: 'object',
          properties: { kid: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,100}$' } },
          required: ['kid'],
          additionalProperties: false,
        },
        querystring: noQuery,
        response: { 200: { ...binary, description: 'COSE Key (CBOR)' }, 404: problem, ...plainErrors },
      },
    },
    async (request, reply) => {
      const key = allKeys().find((k) => Buffer.from(receiptKid(k)).toString('base64url') === request.params.kid);
      if (key === undefined) {
        return reply
          .code(404)
          .type(PROBLEM_TYPE)
          .send(
            problemDetails(
              'No such key',
              `No key could be found for this kid value: ${request.params.kid} (base64url of the 32-byte kid, without padding)`,
            ) as never,
          );
      }
      return reply
        .header('Cache-Control', 'public, max-age=300')
        .type(CBOR)
        .send(Buffer.from(encodeCbor(encodeCoseKey(key))) as never);
    },
  );
};
