// SCITT registration of Signed Statements, as draft-ietf-scitt-scrapi-11 says (docs/API.md, "SCITT"):
//   POST /entries                                  Register Signed Statement (§2.3): 303 while the day is open
//   GET  /entries/{id}                             Query Registration Status / Resolve Receipt (§2.4, §2.5)
//   GET  /entries/{id}/transparent-statement       the statement with its receipt (RFC 9943 §7, label 394)
//   GET  /.well-known/transparency-configuration   the service's configuration (CBOR; see docs/API.md: -11 has none)
//   GET  /api/scitt/registration-policy            the registration policy (JSON), itself registered as an entry
// A statement passes the registration policy (runtime/statement-policy.ts) and is stored with its submission row in one
// durable transaction through the submission admission every route shares (submission-admission.ts: the gate,
// the optional BETA_API_RATE cap, the write, a full disk), and the registrant gets at once an RFC 3161 receipt
// for the statement's entry (the body of the 303), as the beta API's `"receipt": true` gives. The day's build
// publishes the entry like any other; from then on GET /entries/{id} answers its COSE receipt. Every refusal is
// an RFC 9290 Concise Problem Details body (CBOR), and nothing is stored.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { encodeCbor, type CborValue } from '../../core/cbor.ts';
import {
  ALG_ES256,
  ALG_ML_DSA_65,
  COSE_MEDIA_TYPE,
  VDS_RFC9162_SHA256,
  parseCoseSign1,
  receiptHeader,
} from '../../core/cose-receipt.ts';
import { fromBase64, toHex, utf8 } from '../../core/encoding.ts';
import {
  signServiceStatement,
  StatementRefusal,
  STATEMENT_MAX_BYTES,
  readSignedStatement,
  transparentStatement,
} from '../../core/signed-statement.ts';
import { loadReceiptSigningKeys } from '../../runtime/receipt-keys.ts';
import { publicationTime } from './beta.ts';
import type { TypedRoutes } from '../schemas.ts';
import type { Services } from '../services.ts';
import { loadIssuerKeys, policyDocument, statementPolicy } from '../../runtime/statement-policy.ts';
import { submissionAdmission } from '../submission-admission.ts';
import { tsaAuthority } from '../tsa-authority.ts';
import { TSA_REPLY_TYPE } from './tsa-authority.ts';

/** RFC 9290 §6.3: the media type of Concise Problem Details. */
export const PROBLEM_TYPE = 'application/concise-problem-details+cbor';
/** RFC 9290 §2: the title (−1) and detail (−2) of a problem. */
const PROBLEM_TITLE = -1;
const PROBLEM_DETAIL = -2;
export const REGISTRATION_POLICY_PATH = '/api/scitt/registration-policy';
/** The sub (CWT claim 2) of the policy statement Timeseal registers itself. */
export const POLICY_SUB = 'registration-policy';
const ENTRY_ID = /^[0-9a-fA-F]{64}$/;
/** Retry-After once the day's publication time has passed but the build has not published it yet. */
const LATE_RETRY_SECONDS = 60;

/** An RFC 9290 Concise Problem Details body: `{-1: title, -2: detail}`. */
export function problemDetails(title: string, detail: string): Buffer {
  return Buffer.from(
    encodeCbor(
      new Map<number, CborValue>([
        [PROBLEM_TITLE, title],
        [PROBLEM_DETAIL, detail],
      ]),
    ),
  );
}

const sendProblem = (reply: FastifyReply, status: number, title: string, detail: string, retryAfter?: string) => {
  if (retryAfter !== undefined) void reply.header('Retry-After', retryAfter);
  return reply
    .code(status)
    .header('Cache-Control', 'no-store')
    .type(PROBLEM_TYPE)
    .send(problemDetails(title, detail) as never);
};

/** Seconds from `now` until the ledger of `date` is published (00:01 UTC the next day), at least 1. */
function secondsUntilPublication(date: string, now: Date): string {
  const seconds = Math.ceil((Date.parse(publicationTime(date)) - now.getTime()) / 1000);
  return String(seconds >= 1 ? seconds : LATE_RETRY_SECONDS);
}

const isCose = (type: string | undefined): boolean =>
  type !== undefined && type.split(';')[0]!.trim().toLowerCase() === COSE_MEDIA_TYPE;

export const scittEntryRoutes: TypedRoutes<Services> = async (app, s) => {
  const base = s.config.origin.replace(/\/+$/, '');
  const ownIss = s.config.logOrigin;
  const ownKeys = () => [...(s.publicKeys().receipt ?? []), ...(s.publicKeys().retiredReceipt ?? [])];
  // The operator's issuer keys are read now (a bad setting stops the start); the service's own receipt keys at
  // the first statement: a server without keys yet (a test's app, a node before `timeseal keys init`) still
  // starts and answers everything else.
  const issuerKeys = loadIssuerKeys(s.ingest.scittIssuerKeys);
  let policy: ReturnType<typeof statementPolicy> | undefined;
  const policyInForce = () => (policy ??= statementPolicy(issuerKeys, ownIss, ownKeys()));
  const policyText = `${JSON.stringify(policyDocument(base, ownIss), null, 2)}\n`;
  const admit = submissionAdmission(s);
  const tsa = tsaAuthority(s);

  /** The policy statement (signed with the ES256 receipt key in use), or undefined without receipt keys. */
  let policyStatement: { bytes: Uint8Array; entry: string } | undefined;
  const policyStatementOf = () => {
    if (policyStatement !== undefined) return policyStatement;
    const key = loadReceiptSigningKeys(s.config).find((k) => k.alg === ALG_ES256);
    if (key === undefined) return undefined;
    const statement = readSignedStatement(
      signServiceStatement(key, { iss: ownIss, sub: POLICY_SUB }, 'application/json', utf8(policyText)),
    );
    policyStatement = { bytes: statement.ledgerBytes, entry: toHex(statement.entry) };
    return policyStatement;
  };
  /** Whether the policy in force is on the log or queued for it (RFC 9943 §5.1.1: registered as an entry). */
  let policyRegistered = false;

  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: STATEMENT_MAX_BYTES }, (_request, body, done) =>
    done(null, body),
  );
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      return sendProblem(
        reply,
        413,
        'Rejected',
        `a Signed Statement is at most ${STATEMENT_MAX_BYTES} bytes; nothing was stored`,
      );
    if (err.validation !== undefined || (err.statusCode !== undefined && err.statusCode < 500))
      return sendProblem(reply, err.statusCode ?? 400, 'Malformed request', err.message);
    request.log.error({ err }, 'SCITT request failed');
    return sendProblem(
      reply,
      500,
      'Internal error',
      'The Transparency Service failed; nothing was stored. Please try again.',
    );
  });

  /** Registers `bytes` (already through the policy) as the entry `entry` at `now`: a refusal or the receipt. */
  const register = async (
    request: FastifyRequest,
    entry: string,
    bytes: Uint8Array,
    now: Date,
  ): Promise<{ refused: { status: number; message: string; retryAfter?: string } } | { receipt: string | null }> => {
    let receipt: Promise<string> | null = null;
    const admitted = await admit({
      now,
      ip: request.ip,
      receiptRefusal: () => tsa.refusal(now),
      capCount: 1,
      write: () => {
        receipt = tsa.receiptOffThread(entry, now);
        receipt?.catch(() => undefined);
        return s.store.statements.register({ entry, bytes, registeredAt: now });
      },
    });
    if ('refused' in admitted) return { refused: admitted.refused };
    // null only if the TSA's key became unusable between the admission's check and the write: the statement
    // stands, only its receipt is missing (the 303 is then empty), as tsa-authority.ts says of every receipt.
    return { receipt: receipt === null ? null : await receipt };
  };

  const binary = { type: 'string', format: 'binary' } as const;
  const problem = { ...binary, description: 'RFC 9290 Concise Problem Details (CBOR)' } as const;
  const entryParams = {
    type: 'object',
    properties: { id: { type: 'string', maxLength: 200 } },
    required: ['id'],
    additionalProperties: false,
  } as const;

  app.post(
    '/entries',
    {
      compress: false,
      decompress: false,
      bodyLimit: STATEMENT_MAX_BYTES,
      schema: {
        hide: false,
        summary: 'Register a SCITT Signed Statement (draft-ietf-scitt-scrapi-11 §2.3)',
        description:
          'Body: a COSE_Sign1 Signed Statement (application/cose, at most 64 KiB). Accepted: 303 See Other, Location the entry, Retry-After until the day is published; the body is an RFC 3161 TimeStampResp for the entry. Refused: 4xx with RFC 9290 Concise Problem Details (CBOR), nothing stored.',
        tags: ['scitt'],
        response: { 303: { ...binary, description: 'RFC 3161 TimeStampResp (DER)' }, '4xx': problem, '5xx': problem },
      },
      onRequest: (request, reply, done) => {
        if (!isCose(request.headers['content-type']))
          void sendProblem(
            reply,
            415,
            'Malformed request',
            `Content-Type must be ${COSE_MEDIA_TYPE} (a COSE_Sign1 Signed Statement); nothing was stored`,
          );
        else done();
      },
    },
    async (request, reply) => {
      const now = s.clock();
      const body = Buffer.isBuffer(request.body) ? new Uint8Array(request.body) : new Uint8Array();
      let statement;
      try {
        statement = policyInForce().check(body);
      } catch (err) {
        if (!(err instanceof StatementRefusal)) throw err;
        return sendProblem(reply, 400, err.title, `${err.detail}; nothing was stored`);
      }
      // The policy in force is registered before the first statement it admits (docs/API.md).
      if (!policyRegistered) {
        const own = policyStatementOf();
        if (own !== undefined && (await s.store.statements.get(own.entry)) === undefined) {
          const done = await register(request, own.entry, own.bytes, now);
          if ('refused' in done)
            return sendProblem(
              reply,
              done.refused.status,
              'Unavailable',
              done.refused.message,
              done.refused.retryAfter,
            );
        }
        policyRegistered = true;
      }
      const entry = toHex(statement.entry);
      const done = await register(request, entry, statement.ledgerBytes, now);
      if ('refused' in done) {
        const { status, message, retryAfter } = done.refused;
        return sendProblem(reply, status, status === 429 ? 'Too Many Requests' : 'Unavailable', message, retryAfter);
      }
      return reply
        .code(303)
        .header('Location', `${base}/entries/${entry}`)
        .header('Retry-After', secondsUntilPublication(now.toISOString().slice(0, 10), now))
        .header('Cache-Control', 'no-store')
        .type(TSA_REPLY_TYPE)
        .send((done.receipt === null ? Buffer.alloc(0) : Buffer.from(fromBase64(done.receipt))) as never);
    },
  );

  /**
   * Where a registered statement stands: published (its ES256 receipt and the day), running (its day and
   * Retry-After), or not registered here (undefined). A bad id is a refusal.
   */
  type EntryState =
    | { kind: 'invalid' }
    | { kind: 'unknown'; entry: string }
    | { kind: 'running'; entry: string; date: string }
    | { kind: 'registered'; entry: string; bytes: Uint8Array; receipt: Uint8Array };
  const entryState = async (id: string): Promise<EntryState> => {
    if (!ENTRY_ID.test(id)) return { kind: 'invalid' };
    const entry = id.toLowerCase();
    const bytes = await s.store.statements.get(entry);
    if (bytes === undefined) return { kind: 'unknown', entry };
    if (s.archive.find(entry).length > 0) {
      const receipt = s.archive
        .proof(entry)
        .coseReceipts.map((r) => fromBase64(r))
        .find((r) => receiptHeader(parseCoseSign1(r, 'receipt'), 'receipt').alg === ALG_ES256);
      if (receipt !== undefined) return { kind: 'registered', entry, bytes, receipt };
    }
    const last = s.archive.days().at(-1)?.date ?? '';
    const queued = (await s.store.submissions.queued(entry, last))[0];
    return queued === undefined ? { kind: 'unknown', entry } : { kind: 'running', entry, date: queued.date };
  };

  const entryRoute = (suffix: '' | '/transparent-statement') =>
    app.get(
      `/entries/:id${suffix}`,
      {
        schema: {
          hide: false,
          summary:
            suffix === ''
              ? 'The COSE receipt of a registered statement, or its registration status (draft-ietf-scitt-scrapi-11 §2.4, §2.5)'
              : 'The Transparent Statement: the registered statement with its receipt (label 394)',
          tags: ['scitt'],
          params: entryParams,
          response: { 200: { ...binary, description: 'application/cose' }, '4xx': problem, '5xx': problem },
        },
      },
      async (request, reply) => {
        const state = await entryState(request.params.id ?? '');
        if (state.kind === 'invalid')
          return sendProblem(
            reply,
            400,
            'Invalid locator',
            'Operation locator is not in a valid form: an entry id is 64 hexadecimal digits',
          );
        if (state.kind === 'unknown')
          return sendProblem(
            reply,
            404,
            'Not Found',
            `Receipt with entry ID ${state.entry} not known to this Transparency Service`,
          );
        const location = `${base}/entries/${state.entry}${suffix}`;
        if (state.kind === 'running') {
          return reply
            .code(302)
            .header('Location', location)
            .header('Retry-After', secondsUntilPublication(state.date, s.clock()))
            .header('Cache-Control', 'no-store')
            .type(COSE_MEDIA_TYPE)
            .send(Buffer.alloc(0) as never);
        }
        const body = suffix === '' ? state.receipt : transparentStatement(state.bytes, [state.receipt]);
        return reply
          .code(200)
          .header('Location', location)
          .header('Cache-Control', 'no-cache')
          .type(COSE_MEDIA_TYPE)
          .send(Buffer.from(body) as never);
      },
    );
  entryRoute('');
  entryRoute('/transparent-statement');

  app.get(
    '/.well-known/transparency-configuration',
    {
      schema: {
        hide: false,
        summary: 'The Transparency Service configuration (CBOR)',
        tags: ['scitt'],
        response: { 200: binary },
      },
    },
    async (_request, reply) => {
      const configuration = new Map<string, CborValue>([
        ['issuer', ownIss],
        ['scrapi', 'draft-ietf-scitt-scrapi-11'],
        ['registration_endpoint', `${base}/entries`],
        ['registration_policy', `${base}${REGISTRATION_POLICY_PATH}`],
        ['scitt_keys', `${base}/.well-known/scitt-keys`],
        ['verifiable_data_structure', VDS_RFC9162_SHA256],
        ['receipt_algorithms', [ALG_ES256, ALG_ML_DSA_65]],
        ['max_statement_bytes', STATEMENT_MAX_BYTES],
      ]);
      const own = policyStatementOf();
      if (own !== undefined) configuration.set('registration_policy_entry', `${base}/entries/${own.entry}`);
      return reply
        .header('Cache-Control', 'public, max-age=300')
        .type('application/cbor')
        .send(Buffer.from(encodeCbor(configuration)) as never);
    },
  );

  app.get(
    REGISTRATION_POLICY_PATH,
    {
      schema: {
        hide: false,
        summary: 'The SCITT registration policy (JSON)',
        tags: ['scitt'],
        response: { 200: { type: 'string' } },
      },
    },
    async (_request, reply) =>
      reply.header('Cache-Control', 'public, max-age=300').type('application/json; charset=utf-8').send(policyText),
  );
};
