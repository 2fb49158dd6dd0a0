// POST /api/submit (docs/API.md): the site's submission, {hash, fileName?}. Anonymous and free users: 2 per
// UTC day per client IP; a logged-in paying user: 500 per month, and the submission is also recorded in the
// user's history (timestamps table) (ingest/limits.ts). The limit check and the rows are one transaction,
// committed before the answer. A request carrying the session cookie must pass the CSRF origin check. While the
// clock is not after the last published day the answer is 503 and nothing is written (submission-gate.ts); on a
// full or failing disk it is 503 with Retry-After, the transaction rolled back (errors.ts storageRefusal). The
// 201 carries the hash's receipt (tsa-authority.ts), genTime = submittedAt: signed just before the transaction
// and stored in it with the row (store receipts: the proof bundle and the certificate give it back later), sent
// only after the commit. A receipt signed for a request the limit refuses or the store fails is dropped unsent.
// The order of the refusals is every submission route's (submission-admission.ts); the limits are this route's
// own, checked in its transaction, not the beta API's cap.
import { toBase64 } from '../../core/encoding.ts';
import { utcDate } from '../../core/ledger.ts';
import {
  CROSS_ORIGIN_ERROR,
  readCookie,
  sameOriginAllowed,
  SESSION_COOKIE,
  sessionUser,
} from '../accounts/sessions.ts';
import { ClientError, errorBody } from '../errors.ts';
import { limitRefusal, submitErrorSchema } from '../limit-answer.ts';
import { submitWithinLimits } from '../limits.ts';
import { HASH_PATTERN, noQuery, okErrorSchema, SINGLE_LINE, type TypedRoutes, type Answer } from '../schemas.ts';
import type { Services } from '../services.ts';
import { submissionAdmission } from '../submission-admission.ts';
import { tsaAuthority } from '../tsa-authority.ts';

/** The client shows "Hash queued!" / "Your timestamp has been submitted". */
export const SUBMIT_MESSAGE = 'Your timestamp has been submitted';

/** POST /api/submit: the stored submission (201). */
export const submitAnswerSchema = {
  type: 'object',
  properties: {
    ok: { type: 'boolean', const: true },
    hash: { type: 'string' },
    submittedAt: { type: 'string' },
    ledgerDate: { type: 'string' },
    message: { type: 'string' },
    remainingToday: { type: 'integer' },
    remainingThisMonth: { type: 'integer' },
    receipt: {
      type: 'string',
      description:
        "base64 DER RFC 3161 TimeStampResp for the hash, genTime = submittedAt (docs/FORMAT.md §3b), also kept by the server (the proof bundle's receipts, the certificate); absent when the server has no time-stamp key",
    },
  },
  required: ['ok', 'hash', 'submittedAt', 'ledgerDate', 'message'],
} as const;
export type SubmitAnswer = Answer<typeof submitAnswerSchema>;

export const submitRoutes: TypedRoutes<Services> = async (app, s) => {
  const admit = submissionAdmission(s);
  app.post(
    '/api/submit',
    {
      config: { errorStyle: 'ok' },
      schema: {
        hide: false,
        summary: "The site's submission: a hash (and a file name) under the free tier or the Standard plan's limit",
        description:
          'What the drop zone sends: 2 a day per address on the free tier, 500 a month on the Standard plan (429 past it). Scripts use the beta API instead (no limit, no key).',
        tags: ['site'],
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
          201: submitAnswerSchema,
          '4xx': submitErrorSchema,
          '5xx': okErrorSchema,
        },
      },
    },
    async (request, reply) => {
      const now = s.clock();
      const hash = request.body.hash.toLowerCase();
      const fileName = request.body.fileName ?? null;
      let receipt = null as Uint8Array | null;
      const admitted = await admit({
        now,
        ip: request.ip,
        write: async () => {
          // Anonymous submissions stay open to any client; one that carries the session cookie must be same-origin.
          if (readCookie(request, SESSION_COOKIE) !== undefined && !sameOriginAllowed(request, s.config.origin))
            throw new ClientError(403, CROSS_ORIGIN_ERROR);
          const user = await sessionUser(s.store, request, now);
          // Signed before the transaction (genTime = now = the row's submittedAt) so that the store keeps it with
          // the row; null on a server without a usable TSA key (the submission stands without a receipt).
          receipt = tsaAuthority(s).receiptDer(hash, now);
          // The limit check, the count and the rows (with the history row of a paying user, and the receipt) are
          // one transaction of the store; on a full or failing disk nothing of it was kept (not the count either).
          return submitWithinLimits(s.store, {
            ip: request.ip,
            now,
            hash,
            fileName,
            freePerDay: s.ingest.freePerDay,
            ...(user ? { userId: user.id } : {}),
            ...(receipt === null ? {} : { receipt }),
          });
        },
        stored: (decision) => decision.allowed,
      });
      if ('refused' in admitted) {
        const { status, message, retryAfter } = admitted.refused;
        if (retryAfter !== undefined) void reply.header('Retry-After', retryAfter);
        return reply.code(status).send(errorBody('ok', message));
      }
      const decision = admitted.written;
      if (!decision.allowed) {
        const refusal = limitRefusal(
          decision.tier,
          decision.error,
          now,
          s.ingest.paymentsAvailable,
          s.ingest.freePerDay,
        );
        return reply.code(decision.status).header('Retry-After', String(refusal.retryAfter)).send(refusal.body);
      }
      return reply.code(201).send({
        ok: true,
        hash,
        submittedAt: now.toISOString(),
        ledgerDate: utcDate(now),
        message: SUBMIT_MESSAGE,
        ...(decision.tier === 'standard'
          ? { remainingThisMonth: decision.remaining }
          : { remainingToday: decision.remaining }),
        ...(receipt === null ? {} : { receipt: toBase64(receipt) }),
      });
    },
  );
};
