// POST /tsa: Timeseal as an RFC 3161 time-stamp authority (docs/API.md, docs/FORMAT.md §3b). A DER
// TimeStampReq (Content-Type application/timestamp-query, at most 4 KiB) is answered with a DER TimeStampResp
// (application/timestamp-reply, no charset: Java's jarsigner refuses one). A token is granted only after its
// imprint is stored exactly as the beta API's 201 (beta.ts), by the admission path it shares with Sigstore's
// POST /api/v1/timestamp (tsa-admission.ts): the submission gate, the optional beta-API rate cap
// (the same per-address count), then the durable write of the imprint (SHA-256) or, for a SHA-384 or SHA-512
// imprint, of the SHA-256 of the token's TSTInfo; genTime is the stored submittedAt. A request Timeseal does not
// grant is a TimeStampResp with status rejection and a failInfo (HTTP 200); the gate's refusal, the rate cap, a
// full disk and a closed day are HTTP 503/429 with Retry-After and a JSON message — never a token. A body of
// another Content-Type, or sent with a Content-Encoding other than identity (gzip, …), is 415 before it is read.
// GET /tsa/certs: the TSA's certificate and its root (keys/timeseal-tsa.pem). GET /tsa: to the policy page.
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { parseTimeStampRequest, rejectionResponse } from '../../core/tsa-authority.ts';
import { errorHandler } from '../errors.ts';
import type { Services } from '../services.ts';
import { tsaAdmission } from '../tsa-admission.ts';
import { NO_TSA_KEY, tsaAuthority } from '../tsa-authority.ts';

export const TSA_QUERY_TYPE = 'application/timestamp-query';
export const TSA_REPLY_TYPE = 'application/timestamp-reply';
/** The largest TimeStampReq taken: a SHA-512 request with a long nonce and a policy is under 200 bytes. */
export const TSA_BODY_LIMIT = 4096;
const JSON_TYPE = 'application/json; charset=utf-8';

/** Our text for a request body sent with a Content-Encoding (RFC 3161 §3.4 sends the DER TimeStampReq as it is). */
export const contentEncodingError = (encoding: string): string =>
  `Content-Encoding ${JSON.stringify(encoding.slice(0, 40))} is not accepted: send the DER TimeStampReq as it is, without a Content-Encoding (or with identity); nothing was stored`;

export const tsaRoutes: FastifyPluginAsync<Services> = async (app, s) => {
  const tsa = tsaAuthority(s);
  const { identity, unavailable } = tsa;
  if (identity === undefined && unavailable !== NO_TSA_KEY)
    app.log.error({ reason: unavailable }, 'the time-stamp authority key cannot be used; POST /tsa answers 503');
  const admit = tsaAdmission(s).admit;

  // This context only: any body is read as bytes, at most TSA_BODY_LIMIT (its type is checked before, in
  // onRequest). The exact type has its own entry, which Fastify finds by the header's text without parsing it
  // again for every request; '*' takes the same type written otherwise (another case, spaces).
  const asBytes = (_request: FastifyRequest, body: Buffer, done: (err: null, body: Buffer) => void) => done(null, body);
  app.addContentTypeParser(TSA_QUERY_TYPE, { parseAs: 'buffer', bodyLimit: TSA_BODY_LIMIT }, asBytes);
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: TSA_BODY_LIMIT }, asBytes);
  const fallback = errorHandler(s.gate);
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply
        .code(413)
        .type(JSON_TYPE)
        .send({ error: `A time-stamp request is at most ${TSA_BODY_LIMIT} bytes` });
    }
    return fallback(err, request, reply);
  });

  const send = (reply: FastifyReply, der: Uint8Array) =>
    reply
      .code(200)
      .header('Cache-Control', 'no-store')
      .type(TSA_REPLY_TYPE)
      .send(Buffer.from(der.buffer, der.byteOffset, der.byteLength));
  const refuse = (reply: FastifyReply, code: number, message: string, retryAfter?: string) => {
    if (retryAfter !== undefined) void reply.header('Retry-After', retryAfter);
    return reply.code(code).header('Cache-Control', 'no-store').type(JSON_TYPE).send({ error: message });
  };

  const options = {
    compress: false,
    decompress: false,
    bodyLimit: TSA_BODY_LIMIT,
    schema: {
      hide: false,
      summary: 'RFC 3161 time-stamp authority: a DER TimeStampReq in, a DER TimeStampResp out',
      description: `Body: a DER TimeStampReq (Content-Type ${TSA_QUERY_TYPE}), as \`openssl ts -query\` makes. Answer: a DER TimeStampResp (${TSA_REPLY_TYPE}); every granted token's hash is stored before it is signed and published in the day's ledger. The policy: /tsa-policy.`,
      tags: ['tsa'],
    },
    // Before any body is read or parsed (a JSON body would otherwise be parsed by the app's JSON parser).
    onRequest: (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      const type = request.headers['content-type'];
      const encoding = request.headers['content-encoding']?.trim().toLowerCase();
      if (type !== TSA_QUERY_TYPE && type?.trim().toLowerCase() !== TSA_QUERY_TYPE)
        void refuse(reply, 415, `Content-Type must be ${TSA_QUERY_TYPE} (a DER RFC 3161 TimeStampReq)`);
      // The body is stamped as it arrives (decompress: false): an encoded one would be stamped as its encoded bytes.
      else if (encoding !== undefined && encoding !== '' && encoding !== 'identity')
        void refuse(reply, 415, contentEncodingError(request.headers['content-encoding']!));
      else done();
    },
  } as const;
  app.post('/tsa', options, async (request, reply) => {
    if (identity === undefined) return refuse(reply, 503, unavailable);
    const body = request.body;
    let parsed: ReturnType<typeof parseTimeStampRequest>;
    try {
      parsed = parseTimeStampRequest(Buffer.isBuffer(body) ? body : new Uint8Array());
    } catch (err) {
      request.log.error({ err }, 'time-stamp request reading failed');
      return send(
        reply,
        rejectionResponse({
          failInfo: 'systemFailure',
          text: 'The time-stamp authority failed to read the request; nothing was stored.',
        }),
      );
    }
    if ('rejection' in parsed) return send(reply, rejectionResponse(parsed.rejection));
    const admission = await admit(parsed.request, request.ip, request.log);
    if ('granted' in admission) return send(reply, admission.granted);
    if ('rejected' in admission) return send(reply, rejectionResponse(admission.rejected));
    const { status, message, retryAfter } = admission.refused;
    return refuse(reply, status, message, retryAfter);
  });

  // A person who opens the TSA's address in a browser is shown its policy page (site/src/pages/tsa-policy.astro).
  app.get('/tsa', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/tsa-policy', 302));

  const certsSchema = {
    hide: false,
    summary: "The time-stamp authority's certificate chain (PEM: the TSA's certificate, then its root)",
    tags: ['tsa'],
  };
  app.get('/tsa/certs', { schema: certsSchema }, async (_request, reply) => {
    if (identity === undefined) return refuse(reply, 503, unavailable);
    return reply.code(200).type('application/pem-certificate-chain').send(identity.chainPem);
  });
};
