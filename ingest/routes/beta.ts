// POST /api/v1/beta/timestamp (docs/API.md): the free beta API for developers. No rate limit
// and no authentication during the beta, unless the operator sets BETA_API_RATE (limits.ts betaRateCap: 429
// with Retry-After past the cap; unset, the route does nothing more than before). The answer (201) waits for
// the row's commit (group commit, services.ts), so an acknowledged hash is in the next ledger even if the
// server is killed right after. While the clock is not after the last published day the answer is 503 and
// nothing is written (submission-gate.ts); on a full or failing disk it is 503 with Retry-After (errors.ts
// storageRefusal), and the first submission stored again clears that condition. The order of those refusals
// is every submission route's (submission-admission.ts).
import crypto from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { ledgerPath } from '../../core/archive.ts';
import { errorBody } from '../errors.ts';
import { betaErrorSchema, HASH_PATTERN, noQuery, type Answer } from '../schemas.ts';
import type { Services } from '../services.ts';
import { submissionAdmission } from '../submission-admission.ts';
import { tsaAuthority } from '../tsa-authority.ts';

export const BETA_NOTE =
  'Free beta API: no SLA; rate limiting or authentication may be added later. Commercial use should credit Timeseal. Hashes and their submission times are published permanently.';

/** When day D's ledger is published and signed: 00:01 UTC the next day. */
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
    receipt: {
      type: 'string',
      description: 'with "receipt": true: base64 DER RFC 3161 TimeStampResp for the hash, genTime = submittedAt',
    },
    verification: {
      type: 'object',
      properties: {
        availableAt: {
          type: 'string',
          description: 'when the ledger is published and dual-signed (00:01 UTC after ledgerDate)',
        },
        anchoring: { type: 'string' },
        instructions: { type: 'string' },
        verifyUrl: url,
        proofUrl: url,
        ledgerUrl: url,
      },
      required: ['availableAt', 'anchoring', 'instructions', 'verifyUrl', 'proofUrl', 'ledgerUrl'],
    },
  },
  required: ['success', 'hash', 'submittedAt', 'ledgerDate', 'message', 'origin', 'note', 'verification'],
} as const;
export type BetaAnswer = Answer<typeof betaResponseSchema>;

/** The 201 body for `hash` submitted at `submittedAt` (ISO) into the ledger of `ledgerDate`. */
export function betaResponse(base: string, hash: string, submittedAt: string, ledgerDate: string) {
  const availableAt = publicationTime(ledgerDate);
  return {
    success: true,
    hash,
    submittedAt,
    ledgerDate,
    message: `Hash queued. It will be included in the ledger of ${ledgerDate}, published and dual-signed (ECDSA P-256 + ML-DSA-65) at ${availableAt}.`,
    origin: 'api_beta',
    note: BETA_NOTE,
    verification: {
      availableAt,
      anchoring:
        'Anchored to Bitcoin through OpenTimestamps from 00:02 UTC; confirmation typically follows within 12 to 24 hours.',
      instructions: `After ${availableAt}, search the hash at verifyUrl, or download proofUrl and verify it offline with the public keys (${base}/keys/public.pem, ${base}/keys/dilithium_public.key). ledgerUrl is the day's ledger; its signatures and Bitcoin proof sit beside it (.sig, .dilithium.sig, .ots).`,
      verifyUrl: `${base}/verify?hash=${hash}&search=true`,
      proofUrl: `${base}/api/proof/${hash}`,
      ledgerUrl: `${base}/ledgers/${ledgerPath(ledgerDate)}`,
    },
  };
}

/**
 * The 201 body as JSON text, from a template made once per ledger day: JSON.stringify of the answer with two
 * unguessable tokens in place of the hash and the time, split on them. A hash is 64 hex digits and a time
 * ISO-8601, so neither needs escaping when put back. This is the beta API's hot path; the template saves
 * building and serializing the object for every submission.
 */
export function betaResponseWriter(base: string): (hash: string, submittedAt: string, ledgerDate: string) => string {
  const HASH = `hash-${crypto.randomUUID()}`;
  const TIME = `time-${crypto.randomUUID()}`;
  let day = '';
  let parts: string[] = [];
  let slots: boolean[] = [];
  return (hash, submittedAt, ledgerDate) => {
    if (ledgerDate !== day) {
      const pieces = JSON.stringify(betaResponse(base, HASH, TIME, ledgerDate)).split(new RegExp(`(${HASH}|${TIME})`));
      parts = pieces.filter((_, i) => i % 2 === 0);
      slots = pieces.filter((_, i) => i % 2 === 1).map((token) => token === HASH);
      day = ledgerDate;
    }
    let out = parts[0]!;
    for (let i = 0; i < slots.length; i++) out += (slots[i] ? hash : submittedAt) + parts[i + 1]!;
    return out;
  };
}

export const betaRoutes: FastifyPluginAsync<Services> = async (app, s) => {
  const base = s.config.origin.replace(/\/+$/, '');
  const answer = betaResponseWriter(base);
  const admit = submissionAdmission(s);
  const tsa = tsaAuthority(s);
  app.post<{ Body: { hash: string; receipt?: boolean } }>(
    '/api/v1/beta/timestamp',
    {
      config: { errorStyle: 'beta' },
      // The hottest route sends its small answer (1.3 KB) uncompressed and takes no compressed bodies: without
      // @fastify/compress's two hooks it serves ~4 % more submissions per second (bench/NOTES.md, "Beta-API
      // throughput").
      compress: false,
      decompress: false,
      schema: {
        summary: 'Timestamp a SHA-256 hash',
        description:
          "Queues a SHA-256 hash (64 hexadecimal characters) for the daily ledger of the current UTC day. The answer is sent only after the submission is stored. Free, no authentication, no rate limit during the beta (an operator may set a per-address cap: then 429 with Retry-After past it). 503 (nothing stored) while the server's clock is not after the last published ledger, and with Retry-After while its disk is full.",
        tags: ['beta'],
        querystring: noQuery,
        body: {
          type: 'object',
          properties: {
            hash: { type: 'string', pattern: HASH_PATTERN, description: 'SHA-256 hash, 64 hexadecimal characters' },
            receipt: {
              type: 'boolean',
              description: 'true: the answer also carries `receipt`, an RFC 3161 token for the hash',
            },
          },
          required: ['hash'],
          additionalProperties: false,
        },
        response: { 201: betaResponseSchema, '4xx': betaErrorSchema, '5xx': betaErrorSchema },
      },
    },
    async (request, reply) => {
      const now = s.clock();
      const submittedAt = now.toISOString();
      // The ledger date is the UTC date of the time, read off its ISO text (what core/ledger.ts utcDate does).
      const ledgerDate = submittedAt.slice(0, 10);
      const wantsReceipt = request.body.receipt === true;
      const hash = request.body.hash.toLowerCase();
      let receipt = null as Promise<string> | null;
      const admitted = await admit({
        now,
        ip: request.ip,
        // A receipt that cannot be made is said before anything is stored or counted.
        ...(wantsReceipt ? { receiptRefusal: () => tsa.refusal(now) } : {}),
        capCount: 1,
        write: () => {
          // A receipt is signed on libuv's thread pool while the row is committed, and sent only after both. Its
          // failure is handled where it is awaited (an error answer), or ignored if the write fails first.
          receipt = wantsReceipt ? tsa.receiptOffThread(hash, now) : null;
          receipt?.catch(() => undefined);
          return s.store.submissions.write({ hash, submittedAt: now, source: 'api_beta' });
        },
      });
      if ('refused' in admitted) {
        const { status, message, retryAfter } = admitted.refused;
        if (retryAfter !== undefined) void reply.header('Retry-After', retryAfter);
        return reply.code(status).type('application/json; charset=utf-8').send(errorBody('beta', message));
      }
      // A string body is sent as it is (the response schema above documents it for OpenAPI). A receipt is one
      // more member, base64 (no escaping needed), put before the closing brace.
      const body = answer(hash, submittedAt, ledgerDate);
      return reply
        .code(201)
        .type('application/json; charset=utf-8')
        .send(receipt === null ? body : `${body.slice(0, -1)},"receipt":"${await receipt}"}`);
    },
  );
};
