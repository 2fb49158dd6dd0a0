// POST /api/v1/beta/timestamps (docs/API.md): the beta API for up to 1,000 hashes in one request. The body is
// {"hashes": [...], "receipt"?: boolean}; the answer (200) gives one result per entry, in the request's order:
//
//   accepted   a valid hash, stored by this batch
//   already    a valid hash that this server already holds for today (any path, anyone), stored again by this
//              batch all the same; `firstSubmittedAt` is the earliest of those earlier submissions
//   duplicate  the same hash as an earlier entry of this batch (compared lower-case): stored once, for that
//              entry; `duplicateOf` is its index
//   invalid    not 64 hexadecimal characters: `error` says so; nothing stored for it, the others go ahead
//
// Every stored hash of a batch is one row of the day at the same `submittedAt` (the request's clock time),
// and all of them are stored by ONE transaction, all or none (Store.submissions.enqueue; on SQLite the group
// commit's transaction of that turn, shared with other batches and single submissions), committed and synced
// to disk before the answer: a 200 survives kill -9 and power loss, a refusal stored nothing. `already` hashes
// are stored again because the ledger keeps a hash's earliest time of the day anyway (the extra row changes
// nothing published), and so that the promise of the 200 never rests on another request's row, which may be
// committed but not yet synced when it is read; their receipts then have a row at their genTime too.
// `already` is what the store held just before this batch was stored (Store.submissions.submittedOn, asked
// CHECK_PER_TURN hashes at a time), not a lock: two batches racing with the same hash may both call it `accepted`.
//
// Refusals, with nothing stored and nothing counted unless said: 400 for a body that is not this shape (no
// list, an empty one, more than 1,000 entries, an entry that is not a string, an unknown field); 413 above
// BATCH_BODY_LIMIT; 503 while the submission gate refuses (submission-gate.ts), and before anything else when
// "receipt": true and the server cannot sign (no TSA key, as the single route); 429 with Retry-After when the
// operator's cap (BETA_API_RATE, limits.ts) would be passed: it counts the hashes a batch stores, whole batch
// or nothing; 503 with Retry-After on a full or failing disk or a closed day (errors.ts storageRefusal; the
// cap has then counted the batch, as it counts a single submission that the disk refuses). That order is every
// submission route's (submission-admission.ts).
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { EXAMPLE_HASH, errorBody, errorHandler, formatSchemaErrors, INVALID_HASH_ERROR } from '../errors.ts';
import { noQuery, type Answer, type TypedRoutes } from '../schemas.ts';
import type { Services } from '../services.ts';
import { submissionAdmission } from '../submission-admission.ts';
import { tsaAuthority } from '../tsa-authority.ts';
import type { Submission } from '../../store/store.ts';
import { BETA_NOTE, betaResponse } from './beta.ts';

/** The most entries of one batch. */
export const BATCH_MAX = 1_000;
/**
 * The route's body limit. 1,000 hashes are 67 KB of compact JSON (66 bytes and a comma each) and about 72 KB
 * pretty-printed with two-space indentation; 96 KiB leaves room for any common formatting, and nothing more.
 */
export const BATCH_BODY_LIMIT = 96 * 1024;
/**
 * Receipts signed between two turns of the event loop, so that other requests are served meanwhile. A receipt
 * costs 0.3-0.65 ms (1,000 of them add ~650 ms to a batch at a load average of 22: docs/BENCHMARKS.md, "Beta
 * API: one batch of 1,000 hashes"), so 4 hold the loop for 1-3 ms where 10 held it for 3-7 ms and 50 for 15-33 ms.
 */
const RECEIPTS_PER_TURN = 4;
/**
 * Results serialized between two turns of the event loop. 1,000 results with receipts are 2.1 MB of JSON, 2-11 ms
 * of serialization in one piece; 100 of them 0.2-1 ms.
 */
const RESULTS_PER_TURN = 100;
/**
 * Hashes of one "already" query, a turn of the event loop between two: on SQLite each query runs on the server's
 * thread (the longest blocks of a whole batch's query and of these slices: docs/BENCHMARKS.md, "Beta API: one
 * batch of 1,000 hashes").
 */
export const CHECK_PER_TURN = 200;

const HEX64 = /^[0-9a-fA-F]{64}$/;

export type BatchStatus = 'accepted' | 'already' | 'duplicate' | 'invalid';

// A type alias, not an interface: the answer's type read from its schema admits other fields, which only an
// alias's plain object type satisfies.
export type BatchResult = {
  hash: string;
  status: BatchStatus;
  firstSubmittedAt?: string;
  duplicateOf?: number;
  error?: string;
  receipt?: string;
};

/** Our texts for a body that is not a batch (the spec gives none). */
// "1,000": grouped by hand, as Intl (toLocaleString) would cost ~25 ms of CPU at every start to load its data.
const BATCH_MAX_TEXT = String(BATCH_MAX).replace(/\B(?=(\d{3})+$)/g, ',');
export const BATCH_EMPTY_ERROR = `hashes: the list is empty; send 1 to ${BATCH_MAX_TEXT} hashes`;
export const BATCH_TOO_MANY_ERROR = `hashes: at most ${BATCH_MAX_TEXT} hashes per batch; send the others in further batches`;
export const BATCH_MISSING_ERROR = `hashes: is required: a list of 1 to ${BATCH_MAX_TEXT} SHA-256 hashes (for one hash, POST {"hash": …} to /api/v1/beta/timestamp)`;
export const BATCH_TOO_LARGE_ERROR = `Request body is larger than ${BATCH_BODY_LIMIT} bytes: a batch holds at most ${BATCH_MAX_TEXT} hashes (67 KB as compact JSON)`;

const url = { type: 'string' } as const;

/** The batch route's error body: the beta shape, its example a batch. */
export const batchErrorSchema = {
  type: 'object',
  properties: {
    success: { type: 'boolean', const: false },
    error: { type: 'string' },
    message: { type: 'string', description: 'the same text as error, for clients that show message' },
    example: {
      type: 'object',
      properties: { hashes: { type: 'array', items: { type: 'string' } } },
      required: ['hashes'],
    },
  },
  required: ['success', 'error', 'example'],
} as const;

export const batchResponseSchema = {
  type: 'object',
  properties: {
    success: { type: 'boolean', const: true },
    submittedAt: {
      type: 'string',
      description: "ISO-8601 UTC time of every hash this batch stored (the request's clock time)",
    },
    ledgerDate: { type: 'string', description: 'UTC date of the daily ledger that will hold them' },
    message: { type: 'string' },
    origin: { type: 'string', const: 'api_beta' },
    note: { type: 'string' },
    counts: {
      type: 'object',
      description: 'how many entries got each status; accepted + already hashes were stored',
      properties: {
        accepted: { type: 'integer' },
        already: { type: 'integer' },
        duplicate: { type: 'integer' },
        invalid: { type: 'integer' },
      },
      required: ['accepted', 'already', 'duplicate', 'invalid'],
    },
    results: {
      type: 'array',
      description: 'one per entry of `hashes`, in the same order',
      items: {
        type: 'object',
        properties: {
          hash: { type: 'string', description: 'the hash lower-case; an invalid entry as it was sent' },
          status: {
            type: 'string',
            enum: ['accepted', 'already', 'duplicate', 'invalid'],
            description:
              'accepted: stored by this batch. already: this server already held it for today (any submitter); stored again, the ledger keeps the earliest time. duplicate: the same hash as an earlier entry of this batch, stored once for that entry. invalid: not 64 hexadecimal characters, not stored (the other entries are).',
          },
          firstSubmittedAt: {
            type: 'string',
            description: 'already: the earliest earlier submission of the hash today (ISO-8601 UTC)',
          },
          duplicateOf: { type: 'integer', description: 'duplicate: the index in `hashes` of the entry that stored it' },
          error: { type: 'string', description: 'invalid: why' },
          receipt: {
            type: 'string',
            description:
              'with "receipt": true, for accepted and already: base64 DER RFC 3161 TimeStampResp for the hash, genTime = submittedAt',
          },
        },
        required: ['hash', 'status'],
      },
    },
    verification: {
      type: 'object',
      description:
        "as the single route's, for every hash of the batch: verifyUrl and proofUrl are templates, {hash} standing for a result's hash",
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
  required: ['success', 'submittedAt', 'ledgerDate', 'message', 'origin', 'note', 'counts', 'results', 'verification'],
} as const;
export type BatchAnswer = Answer<typeof batchResponseSchema>;

/** The answer's `message`: what was stored and where it goes. */
export function batchMessage(stored: number, invalid: number, ledgerDate: string, availableAt: string): string {
  if (stored === 0)
    return `No hash stored: ${invalid === 1 ? 'the entry is not' : `none of the ${invalid} entries is`} a valid SHA-256 hash (64 hexadecimal characters).`;
  const them = stored === 1 ? 'It' : 'They';
  const skipped =
    invalid === 0
      ? ''
      : ` ${invalid} entr${invalid === 1 ? 'y is' : 'ies are'} not a valid SHA-256 hash and ${invalid === 1 ? 'was' : 'were'} not stored (status "invalid").`;
  return `${stored} hash${stored === 1 ? '' : 'es'} stored. ${them} will be included in the ledger of ${ledgerDate}, published and dual-signed (ECDSA P-256 + ML-DSA-65) at ${availableAt}.${skipped}`;
}

/** The single route's `verification`, with {hash} in place of a hash. */
function batchVerification(base: string, submittedAt: string, ledgerDate: string) {
  const v = betaResponse(base, '{hash}', submittedAt, ledgerDate).verification;
  return {
    ...v,
    instructions: `${v.instructions} In verifyUrl and proofUrl, put each result's hash in place of {hash}.`,
  };
}

/** Fastify schemaErrorFormatter of this route: the batch's own sentences for its size and a missing list. */
function formatBatchErrors(errors: Parameters<typeof formatSchemaErrors>[0], dataVar: string): Error {
  const e = errors[0];
  if (e !== undefined && dataVar === 'body') {
    if (e.instancePath === '/hashes' && e.keyword === 'minItems') return new Error(BATCH_EMPTY_ERROR);
    if (e.instancePath === '/hashes' && e.keyword === 'maxItems') return new Error(BATCH_TOO_MANY_ERROR);
    if (e.instancePath === '' && e.keyword === 'required' && e.params.missingProperty === 'hashes')
      return new Error(BATCH_MISSING_ERROR);
  }
  return formatSchemaErrors(errors, dataVar);
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export const betaBatchRoutes: TypedRoutes<Services> = async (app, s) => {
  const base = s.config.origin.replace(/\/+$/, '');
  const admit = submissionAdmission(s);
  const tsa = tsaAuthority(s);

  // This context only (the route is its only one): its body limit in the 413's text, its sentences for a
  // body of the wrong size, and its error bodies' example a batch.
  const fallback = errorHandler(s.gate);
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      return reply.code(413).type('application/json; charset=utf-8').send(errorBody('beta', BATCH_TOO_LARGE_ERROR));
    return fallback(err, request, reply);
  });
  app.setSchemaErrorFormatter(formatBatchErrors);
  app.addHook('preSerialization', async (_request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (reply.statusCode < 400 || payload === null || typeof payload !== 'object' || !('example' in payload))
      return payload;
    return { ...payload, example: { hashes: [EXAMPLE_HASH] } };
  });
  const refuse = (reply: FastifyReply, code: number, message: string, retryAfter?: string) => {
    if (retryAfter !== undefined) void reply.header('Retry-After', retryAfter);
    return reply.code(code).type('application/json; charset=utf-8').send(errorBody('beta', message));
  };

  app.post(
    '/api/v1/beta/timestamps',
    {
      config: { errorStyle: 'beta' },
      bodyLimit: BATCH_BODY_LIMIT,
      schema: {
        summary: 'Timestamp up to 1,000 SHA-256 hashes at once',
        description:
          'Stores every valid hash of the list for the daily ledger of the current UTC day, all at one submittedAt, in one transaction (all or none), and answers only after it is stored, with one result per entry in the request\'s order: accepted, already (already submitted today; stored again, the ledger keeps the earliest time), duplicate (repeats an earlier entry; stored once) or invalid (not 64 hexadecimal characters; not stored, the others are). 400 (nothing stored) for an empty list, more than 1,000 entries or a body of another shape; 413 above 96 KiB. With "receipt": true each accepted and already result carries an RFC 3161 token; a server without a TSA key refuses that with 503 before storing anything. Free, no authentication; an operator may set a per-address cap, which counts the hashes a batch stores (429 with Retry-After, nothing stored, when a batch would pass it). 503 (nothing stored) while the server\'s clock is not after the last published ledger, and with Retry-After while its disk is full.',
        tags: ['beta'],
        querystring: noQuery,
        body: {
          type: 'object',
          properties: {
            hashes: {
              type: 'array',
              minItems: 1,
              maxItems: BATCH_MAX,
              items: { type: 'string' },
              description:
                'SHA-256 hashes, 64 hexadecimal characters each (an entry that is not gets the status invalid)',
            },
            receipt: {
              type: 'boolean',
              description:
                'true: every accepted and already result also carries `receipt`, an RFC 3161 token for its hash',
            },
          },
          required: ['hashes'],
          additionalProperties: false,
        },
        response: { 200: batchResponseSchema, '4xx': batchErrorSchema, '5xx': batchErrorSchema },
      },
    },
    async (request, reply) => {
      const now = s.clock();
      const submittedAt = now.toISOString();
      const ledgerDate = submittedAt.slice(0, 10);
      const wantsReceipt = request.body.receipt === true;

      const results: BatchResult[] = [];
      /** Each valid hash (lower-case) and the index of its first entry. */
      const first = new Map<string, number>();
      const rows: Submission[] = [];
      let invalid = 0;
      for (const given of request.body.hashes) {
        if (!HEX64.test(given)) {
          results.push({ hash: given, status: 'invalid', error: INVALID_HASH_ERROR });
          invalid++;
          continue;
        }
        const hash = given.toLowerCase();
        const earlier = first.get(hash);
        if (earlier !== undefined) {
          results.push({ hash, status: 'duplicate', duplicateOf: earlier });
          continue;
        }
        first.set(hash, results.length);
        results.push({ hash, status: 'accepted' });
        rows.push({ hash, submittedAt: now, source: 'api_beta' });
      }

      const admitted = await admit({
        now,
        ip: request.ip,
        // Receipts that cannot be made are said before anything is stored or counted.
        ...(wantsReceipt ? { receiptRefusal: () => tsa.refusal(now) } : {}),
        capCount: rows.length,
        write: async (): Promise<Map<string, Date>> => {
          if (rows.length === 0) return new Map();
          const already = new Map<string, Date>();
          const hashes = [...first.keys()];
          for (let i = 0; i < hashes.length; i += CHECK_PER_TURN) {
            if (i > 0) await nextTurn();
            const found = await s.store.submissions.submittedOn(ledgerDate, hashes.slice(i, i + CHECK_PER_TURN));
            for (const [hash, at] of found) already.set(hash, at);
          }
          await s.store.submissions.enqueue(rows);
          return already;
        },
        stored: () => rows.length > 0,
      });
      if ('refused' in admitted) {
        const { status, message, retryAfter } = admitted.refused;
        return refuse(reply, status, message, retryAfter);
      }
      for (const [hash, at] of admitted.written) {
        const r = results[first.get(hash)!]!;
        r.status = 'already';
        r.firstSubmittedAt = at.toISOString();
      }
      // Signed after the commit, as the single route's; a few at a time, so that a batch of 1,000 receipts
      // (about 0.3 ms each) does not hold every other request back for its whole duration.
      if (wantsReceipt) {
        let signed = 0;
        for (const index of first.values()) {
          if (signed > 0 && signed % RECEIPTS_PER_TURN === 0) await nextTurn();
          const r = results[index]!;
          const receipt = tsa.receipt(r.hash, now);
          if (receipt !== null) r.receipt = receipt;
          signed++;
        }
      }

      const counts = { accepted: 0, already: 0, duplicate: 0, invalid: 0 };
      for (const r of results) counts[r.status]++;
      const verification = batchVerification(base, submittedAt, ledgerDate);
      const answer: BatchAnswer = {
        success: true,
        submittedAt,
        ledgerDate,
        message: batchMessage(rows.length, invalid, ledgerDate, verification.availableAt),
        origin: 'api_beta',
        note: BETA_NOTE,
        counts,
        results,
        verification,
      };
      const json = await serializeInTurns(reply, answer);
      // Already the answer's JSON: a string with a JSON type is sent as it is (no second serialization).
      return (reply as FastifyReply).code(200).type('application/json; charset=utf-8').send(json);
    },
  );
};

/**
 * The answer's JSON as the route's 200 serializer writes it, the same bytes, but its results RESULTS_PER_TURN at a
 * time, a turn of the event loop between two slices: the envelope with no results, then each result by the
 * serializer of the schema's result, spliced in where the empty list stood.
 */
async function serializeInTurns(reply: FastifyReply, answer: BatchAnswer): Promise<string> {
  const envelope = reply.getSerializationFunction('200');
  if (envelope === undefined) throw new Error('beta batch: the route has no serializer for its 200 answer');
  const result = reply.compileSerializationSchema(batchResponseSchema.properties.results.items);
  const head = envelope({ ...answer, results: [] });
  // A key of the envelope: inside a JSON string every quote is escaped, so this text is the list's own.
  const empty = '"results":[]';
  const at = head.indexOf(empty);
  if (at === -1) throw new Error('beta batch: the serialized answer has no empty results list to fill');
  const parts: string[] = [head.slice(0, at + empty.length - 1)];
  let i = 0;
  for (const r of answer.results) {
    if (i > 0 && i % RESULTS_PER_TURN === 0) await nextTurn();
    parts.push(i === 0 ? result(r) : `,${result(r)}`);
    i++;
  }
  parts.push(head.slice(at + empty.length - 1));
  return parts.join('');
}
