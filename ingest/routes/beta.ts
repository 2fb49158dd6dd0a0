// POST /api/v1/beta/timestamp (product spec §3, §7, §8, §9): the free beta API for developers. No rate limit
// and no authentication during the beta. The answer (201) waits for the row's commit (group commit,
// services.ts), so an acknowledged hash is in the next ledger even if the server is killed right after.
import type { FastifyPluginAsync } from 'fastify';
import { ecdsaSignaturePath, ledgerOtsPath, ledgerPath, mldsaSignaturePath } from '../../core/archive.ts';
import { utcDate } from '../../core/ledger.ts';
import { betaErrorSchema, HASH_PATTERN, noQuery } from '../schemas.ts';
import type { Services } from '../services.ts';

export const BETA_NOTE =
  'Free beta API: no SLA; rate limiting or authentication may be added later. Commercial use should credit Timeseal. Hashes and their submission times are published permanently.';

/** When day D's ledger is published and signed: 00:01 UTC the next day (product spec §4, §9). */
export function publicationTime(ledgerDate: string): string {
  const t = Date.parse(`${ledgerDate}T00:01:00.000Z`) + 86_400_000;
  return new Date(t).toISOString();
}

const url = { type: 'string' } as const;

export const betaResponseSchema = {
  type: 'object',
  properties: {
    success: { type: 'boolean', const: true },
    hash: { type: 'string', description: 'the submitted hash, lower-case' },
    submittedAt: { type: 'string', description: 'ISO-8601 UTC time the submission was recorded' },
    ledgerDate: { type: 'string', description: 'UTC date of the daily ledger that will hold the hash' },
    message: { type: 'string' },
    origin: { type: 'string', const: 'api_beta' },
    note: { type: 'string' },
    verification: {
      type: 'object',
      properties: {
        availableAt: { type: 'string', description: 'when the ledger is published and dual-signed (00:01 UTC after ledgerDate)' },
        anchoring: { type: 'string' },
        instructions: { type: 'string' },
        verifyUrl: url,
        proofUrl: url,
        otsProofUrl: url,
        certificateUrl: url,
        ledgerUrl: url,
        ecdsaSignatureUrl: url,
        mldsaSignatureUrl: url,
        ledgerOtsUrl: url,
        publicKeys: { type: 'object', properties: { ecdsaP256: url, mlDsa65: url }, required: ['ecdsaP256', 'mlDsa65'] },
      },
      required: ['availableAt', 'anchoring', 'instructions', 'verifyUrl', 'proofUrl', 'otsProofUrl', 'certificateUrl', 'ledgerUrl', 'ecdsaSignatureUrl', 'mldsaSignatureUrl', 'ledgerOtsUrl', 'publicKeys'],
    },
  },
  required: ['success', 'hash', 'submittedAt', 'ledgerDate', 'message', 'origin', 'note', 'verification'],
} as const;

export const betaRoutes: FastifyPluginAsync<Services> = async (app, s) => {
  const base = s.config.origin.replace(/\/+$/, '');
  app.post<{ Body: { hash: string } }>(
    '/api/v1/beta/timestamp',
    {
      config: { errorStyle: 'beta' },
      schema: {
        summary: 'Timestamp a SHA-256 hash',
        description:
          'Queues a SHA-256 hash (64 hexadecimal characters) for the daily ledger of the current UTC day. The answer is sent only after the submission is stored. Free, no authentication, no rate limit during the beta.',
        tags: ['beta'],
        querystring: noQuery,
        body: {
          type: 'object',
          properties: { hash: { type: 'string', pattern: HASH_PATTERN, description: 'SHA-256 hash, 64 hexadecimal characters' } },
          required: ['hash'],
          additionalProperties: false,
        },
        response: { 201: betaResponseSchema, '4xx': betaErrorSchema, '5xx': betaErrorSchema },
      },
    },
    async (request, reply) => {
      const now = s.clock();
      const hash = request.body.hash.toLowerCase();
      await s.submissions.write({ hash, submittedAt: now, source: 'api_beta' });
      const ledgerDate = utcDate(now);
      const availableAt = publicationTime(ledgerDate);
      return reply.code(201).send({
        success: true,
        hash,
        submittedAt: now.toISOString(),
        ledgerDate,
        message: `Hash queued. It will be included in the ledger of ${ledgerDate}, published and dual-signed (ECDSA P-256 + ML-DSA-65) at ${availableAt}.`,
        origin: 'api_beta',
        note: BETA_NOTE,
        verification: {
          availableAt,
          anchoring: 'The ledger is submitted for Bitcoin anchoring through OpenTimestamps at 00:02 UTC; Bitcoin confirmation typically follows within 12 to 24 hours.',
          instructions: `After ${availableAt}, search the hash at verifyUrl, or download proofUrl and check it offline with the public keys. The ledger file and its two detached signatures are at ledgerUrl, ecdsaSignatureUrl and mldsaSignatureUrl; the Bitcoin proofs (ledgerOtsUrl, otsProofUrl) appear once the day is anchored.`,
          verifyUrl: `${base}/verify?hash=${hash}&search=true`,
          proofUrl: `${base}/api/proof/${hash}`,
          otsProofUrl: `${base}/api/proof/${hash}.ots`,
          certificateUrl: `${base}/api/certificate.php?hash=${hash}`,
          ledgerUrl: `${base}/ledgers/${ledgerPath(ledgerDate)}`,
          ecdsaSignatureUrl: `${base}/ledgers/${ecdsaSignaturePath(ledgerDate)}`,
          mldsaSignatureUrl: `${base}/ledgers/${mldsaSignaturePath(ledgerDate)}`,
          ledgerOtsUrl: `${base}/ledgers/${ledgerOtsPath(ledgerDate)}`,
          publicKeys: { ecdsaP256: `${base}/keys/public.pem`, mlDsa65: `${base}/keys/dilithium_public.key` },
        },
      });
    },
  );
};
