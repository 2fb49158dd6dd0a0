// Sigstore's time-stamp API beside POST /tsa (docs/API.md "Sigstore's timestamp API"): the two routes of
// sigstore/timestamp-authority's OpenAPI document (openapi.yaml, operations getTimestampResponse and
// getTimestampCertChain), answered as that server answers, so a Sigstore client (sigstore-js's TSAWitness,
// cosign, sigstore-go) can be pointed at Timeseal by configuration alone; and the TSA as a TrustedRoot entry.
//
// POST /api/v1/timestamp takes `application/json` ({"artifactHash": base64, "hashAlgorithm", optional
// "nonce", "certificates", "tsaPolicyOID"}, at most 1,024 bytes like the reference) or
// `application/timestamp-query` (a DER TimeStampReq, at most 4 KiB like POST /tsa). The JSON is written as the
// DER TimeStampReq it stands for (core/der.ts) and read by the same reader as POST /tsa's
// (core/tsa-authority.ts), then admitted by the same path (tsa-admission.ts): the same gate, rate cap, durable
// write and leaf rule. A 200 carries the DER TimeStampResp (`application/timestamp-reply`) and means its leaf is
// on disk.
//
// The reference's answers, kept: a request it does not grant is HTTP 400 with its error model
// {"code", "message"} — sent, as its go-swagger producer sends it, as JSON under the operation's only type
// `application/timestamp-reply` — never a rejected TimeStampResp. The checks its middleware makes before the
// handler (the body's type: 415; Accept: 406; no body: 422) answer {"code", "message"} as `application/json`.
// Its messages are kept word for word; where the reference says only "Error generating timestamp response",
// a sentence saying what was wrong follows. Timeseal's own refusals (the gate, the cap, the disk) keep their
// status, Retry-After and text in the same model.
//
// GET /api/v1/timestamp/certchain: the PEM chain, leaf first (keys/timeseal-tsa.pem).
// GET /keys/sigstore-trusted-root.json: a Sigstore TrustedRoot (protobuf-specs JSON) whose one
// timestampAuthorities entry is this TSA (docs/DECISIONS.md says why this address).
import crypto from 'node:crypto';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { encode, integer, octetString, oid, sequence, TAG } from '../../core/der.ts';
import { parseTimeStampRequest, type Rejection } from '../../core/tsa-authority.ts';
import { errorHandler } from '../errors.ts';
import type { Services } from '../services.ts';
import { tsaAdmission } from '../tsa-admission.ts';
import { tsaAuthority } from '../tsa-authority.ts';
import { TSA_BODY_LIMIT, TSA_QUERY_TYPE, TSA_REPLY_TYPE } from './tsa-authority.ts';

export const SIGSTORE_TIMESTAMP_PATH = '/api/v1/timestamp';
export const SIGSTORE_CERTCHAIN_PATH = '/api/v1/timestamp/certchain';
export const SIGSTORE_TRUSTED_ROOT_PATH = '/keys/sigstore-trusted-root.json';
/** The reference's bound on a JSON request (pkg/api/timestamp.go maxJSONRequestBytes). */
export const SIGSTORE_JSON_LIMIT = 1024;
const JSON_REQUEST_TYPE = 'application/json';
/** The operation's `consumes`, in the reference's order (its 415 lists them so). */
const CONSUMES = [TSA_QUERY_TYPE, JSON_REQUEST_TYPE] as const;

/** The reference's messages (pkg/api/error.go), word for word. */
export const SIGSTORE_MESSAGES = {
  generic: 'Error generating timestamp response',
  tooLarge: 'timestamp request is too large',
  weakHash: 'Weak hash algorithm in timestamp request',
  digestLength: 'Message digest has incorrect length for specified algorithm',
  policy: 'unaccepted policy: requested TSA policy is not supported by the TSA',
  extension: 'unaccepted extension: requested extensions are not supported by the TSA',
  oid: 'OID should be comprised of at most 128 components',
} as const;

/** The headers the reference's POST sends on every answer (chi's NoCache middleware). */
const NO_CACHE = {
  'cache-control': 'no-cache, no-store, no-transform, must-revalidate, private, max-age=0',
  pragma: 'no-cache',
  expires: 'Thu, 01 Jan 1970 00:00:00 GMT',
} as const;

/** What a request the handler refuses is answered: status, the reference's sentence, what was wrong. */
interface Failure {
  status: number;
  sentence: string;
  detail?: string;
  retryAfter?: string;
}

/** RFC 5754 §2: the SHA-2 digest algorithms. */
const DIGEST_OIDS = {
  sha256: oid('2.16.840.1.101.3.4.2.1'),
  sha384: oid('2.16.840.1.101.3.4.2.2'),
  sha512: oid('2.16.840.1.101.3.4.2.3'),
};

export const sigstoreTimestampRoutes: FastifyPluginAsync<Services> = async (app, s) => {
  const tsa = tsaAuthority(s);
  const admission = tsaAdmission(s);
  const trustedRoot = tsa.identity === undefined ? undefined : trustedRootJson(tsa.identity, s.config.origin);

  // This context only: both types are read as bytes (the JSON is read here, with its nonce's digits kept).
  app.removeAllContentTypeParsers();
  const asBytes = (_request: FastifyRequest, body: Buffer, done: (err: null, body: Buffer) => void) => done(null, body);
  for (const type of [...CONSUMES, '*'])
    app.addContentTypeParser(type, { parseAs: 'buffer', bodyLimit: TSA_BODY_LIMIT }, asBytes);
  const fallback = errorHandler(s.gate);
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return fail(reply, oversize(mediaType(request)));
    return fallback(err, request, reply);
  });

  const options = {
    compress: false,
    decompress: false,
    bodyLimit: TSA_BODY_LIMIT,
    schema: {
      hide: false,
      summary:
        "Sigstore's timestamp API: the RFC 3161 time-stamp authority of POST /tsa, as sigstore/timestamp-authority",
      description: `Body: JSON {"artifactHash": base64, "hashAlgorithm": "sha256" | "sha384" | "sha512", "nonce", "certificates", "tsaPolicyOID"} (${JSON_REQUEST_TYPE}, at most ${SIGSTORE_JSON_LIMIT} bytes) or a DER TimeStampReq (${TSA_QUERY_TYPE}). Answer: a DER TimeStampResp (${TSA_REPLY_TYPE}), sent once the token's hash is stored; errors as the reference gives them, {"code", "message"}. The TSA as a Sigstore TrustedRoot: ${SIGSTORE_TRUSTED_ROOT_PATH}.`,
      tags: ['tsa'],
    },
    // The reference's middleware, before the body is read: its type, the Accept header, a body at all.
    onRequest: (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      void reply.headers(NO_CACHE);
      const headers = request.headers;
      const hasBody = headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
      if (hasBody) {
        const type = mediaType(request);
        if (!(CONSUMES as readonly string[]).includes(type))
          return void middlewareError(
            reply,
            415,
            `unsupported media type ${JSON.stringify(type)}, only [${CONSUMES.join(' ')}] are allowed`,
          );
      }
      if (!accepts(headers.accept, TSA_REPLY_TYPE))
        return void middlewareError(
          reply,
          406,
          `unsupported media type requested, only [${TSA_REPLY_TYPE}] are available`,
        );
      if (!hasBody) return void middlewareError(reply, 422, 'request in body is required');
      done();
    },
  } as const;

  app.post(SIGSTORE_TIMESTAMP_PATH, options, async (request, reply) => {
    const unavailable = admission.unavailable();
    if (unavailable !== null)
      return fail(reply, { status: 503, sentence: SIGSTORE_MESSAGES.generic, detail: unavailable });
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const json = mediaType(request) === JSON_REQUEST_TYPE;
    if (json && body.length > SIGSTORE_JSON_LIMIT) return fail(reply, oversize(JSON_REQUEST_TYPE));
    const der = json ? derFromJson(body) : body;
    if ('status' in der) return fail(reply, der);
    const parsed = parseTimeStampRequest(der);
    if ('rejection' in parsed) return fail(reply, failureOf(parsed.rejection));
    // On the whole second, as the reference's tokens are (Go's encoding/asn1 writes no fraction): sigstore-js
    // (@sigstore/core 4) reads a genTime's fraction only when it has exactly three digits, which DER's form
    // (no trailing zeros) gives one token in ten of a millisecond clock.
    const admitted = await admission.admit(parsed.request, request.ip, request.log, { wholeSeconds: true });
    if ('rejected' in admitted) return fail(reply, failureOf(admitted.rejected));
    if ('refused' in admitted) {
      const { status, message, retryAfter } = admitted.refused;
      return fail(reply, {
        status,
        sentence: SIGSTORE_MESSAGES.generic,
        detail: message,
        ...(retryAfter === undefined ? {} : { retryAfter }),
      });
    }
    const token = admitted.granted;
    return reply
      .code(200)
      .type(TSA_REPLY_TYPE)
      .send(Buffer.from(token.buffer, token.byteOffset, token.byteLength));
  });

  const certchainSchema = {
    hide: false,
    summary: "The time-stamp authority's certificate chain, PEM, leaf first (Sigstore's getTimestampCertChain)",
    tags: ['tsa'],
  };
  app.get(SIGSTORE_CERTCHAIN_PATH, { schema: certchainSchema }, async (_request, reply) => {
    if (tsa.identity === undefined)
      return reply.code(503).type('application/json').send({ code: 503, message: tsa.unavailable });
    return reply
      .code(200)
      .header('cache-control', 'max-age=86400, immutable')
      .type('application/pem-certificate-chain')
      .send(tsa.identity.chainPem);
  });

  const trustedRootSchema = {
    hide: false,
    summary: "A Sigstore trusted root naming this time-stamp authority (for sigstore's verifiers)",
    tags: ['tsa'],
  };
  app.get(SIGSTORE_TRUSTED_ROOT_PATH, { schema: trustedRootSchema }, async (_request, reply) => {
    if (trustedRoot === undefined) return reply.code(503).type('application/json').send({ error: tsa.unavailable });
    return reply.code(200).header('cache-control', 'public, max-age=300').type('application/json').send(trustedRoot);
  });
};

/** The request's media type as the reference reads it: lower case, no parameters; none is application/octet-stream. */
function mediaType(request: FastifyRequest): string {
  const header = request.headers['content-type'];
  if (header === undefined || header.trim() === '') return 'application/octet-stream';
  return header.split(';')[0]!.trim().toLowerCase();
}

/** Whether an Accept header takes `type` (no header takes anything, as the reference's negotiation does). */
function accepts(header: string | undefined, type: string): boolean {
  if (header === undefined) return true;
  const [major] = type.split('/');
  return header.split(',').some((range) => {
    const [name, ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    if (q !== undefined && !(Number(q.slice(2)) > 0)) return false;
    return name === '*/*' || name === `${major}/*` || name === type;
  });
}

/** An answer of the reference's middleware (go-openapi's ServeError): exactly `application/json`, no charset. */
function middlewareError(reply: FastifyReply, code: number, message: string): void {
  // A Buffer: Fastify would append "; charset=utf-8" to a JSON type sent as text.
  void reply
    .code(code)
    .header('content-type', 'application/json')
    .send(Buffer.from(JSON.stringify({ code, message })));
}

function fail(reply: FastifyReply, failure: Failure): FastifyReply {
  const { status, sentence, detail, retryAfter } = failure;
  if (retryAfter !== undefined) void reply.header('retry-after', retryAfter);
  const message = detail === undefined ? sentence : `${sentence}. ${detail}`;
  return reply
    .code(status)
    .type(TSA_REPLY_TYPE)
    .send(JSON.stringify({ code: status, message }));
}

function oversize(type: string): Failure {
  return type === JSON_REQUEST_TYPE
    ? {
        status: 400,
        sentence: SIGSTORE_MESSAGES.tooLarge,
        detail: `A JSON time-stamp request is at most ${SIGSTORE_JSON_LIMIT} bytes.`,
      }
    : {
        status: 400,
        sentence: SIGSTORE_MESSAGES.generic,
        detail: `A time-stamp request is at most ${TSA_BODY_LIMIT} bytes.`,
      };
}

/** The reference's answer to a request the reader or the admission did not grant. */
function failureOf(rejection: Rejection): Failure {
  const detail = rejection.text;
  switch (rejection.failInfo) {
    case 'badAlg':
      return {
        status: 400,
        sentence: /SHA-1/.test(detail) ? SIGSTORE_MESSAGES.weakHash : SIGSTORE_MESSAGES.generic,
        detail,
      };
    case 'badDataFormat':
      return {
        status: 400,
        sentence: /^A SHA-\d+ imprint is/.test(detail) ? SIGSTORE_MESSAGES.digestLength : SIGSTORE_MESSAGES.generic,
        detail,
      };
    case 'unacceptedPolicy':
      return { status: 400, sentence: SIGSTORE_MESSAGES.policy, detail };
    case 'unacceptedExtension':
      return { status: 400, sentence: SIGSTORE_MESSAGES.extension, detail };
    case 'timeNotAvailable':
      return { status: 503, sentence: SIGSTORE_MESSAGES.generic, detail };
    case 'systemFailure':
      return { status: 500, sentence: SIGSTORE_MESSAGES.generic, detail };
    default:
      return { status: 400, sentence: SIGSTORE_MESSAGES.generic, detail };
  }
}

// ---- The JSON request (the reference's JSONRequest, read as Go's encoding/json reads it) ----

const JSON_FIELDS = ['artifactHash', 'hashAlgorithm', 'nonce', 'certificates', 'tsaPolicyOID'] as const;
type JsonField = (typeof JSON_FIELDS)[number];
const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const bad = (detail: string): Failure => ({ status: 400, sentence: SIGSTORE_MESSAGES.generic, detail });

/**
 * The DER TimeStampReq a JSON request stands for, or the reference's answer to it. Field names match in any
 * case and unknown fields are ignored, as Go's encoding/json does; a null field is an absent one. The nonce's
 * digits are kept exactly (JSON.parse's source text), however long.
 */
function derFromJson(body: Buffer): Uint8Array | Failure {
  const sources = new WeakMap<object, Map<string, string>>();
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'), function (this: object, key, v: unknown, context?: { source?: string }) {
      if (typeof v === 'number' && context?.source !== undefined) {
        let m = sources.get(this);
        if (m === undefined) sources.set(this, (m = new Map()));
        m.set(key, context.source);
      }
      return v;
    });
  } catch (err) {
    return bad(`The body is not JSON (${(err as Error).message}).`);
  }
  if (value !== null && (typeof value !== 'object' || Array.isArray(value)))
    return bad('The body must be a JSON object with artifactHash and hashAlgorithm.');
  const object = value ?? {};
  const fields: Partial<Record<JsonField, unknown>> = {};
  const nonceSource: { text?: string } = {};
  for (const [key, v] of Object.entries(object)) {
    const field = JSON_FIELDS.find((f) => f.toLowerCase() === key.toLowerCase());
    if (field === undefined || v === null) continue;
    fields[field] = v;
    if (field === 'nonce') nonceSource.text = sources.get(object)?.get(key);
  }
  for (const field of ['artifactHash', 'hashAlgorithm', 'tsaPolicyOID'] as const)
    if (fields[field] !== undefined && typeof fields[field] !== 'string') return bad(`${field} must be a string.`);
  if (fields.certificates !== undefined && typeof fields.certificates !== 'boolean')
    return bad('certificates must be true or false.');

  const algorithm = String(fields.hashAlgorithm ?? '').toLowerCase();
  if (algorithm === 'sha1')
    return {
      status: 400,
      sentence: SIGSTORE_MESSAGES.weakHash,
      detail: 'SHA-1 is refused; use sha256, sha384 or sha512.',
    };
  if (algorithm !== 'sha256' && algorithm !== 'sha384' && algorithm !== 'sha512')
    return bad(
      `unsupported hash algorithm: ${JSON.stringify(fields.hashAlgorithm ?? '')}; hashAlgorithm is sha256, sha384 or sha512.`,
    );

  // Checked here for its form only; whether it is Timeseal's policy the DER reader says, after the digest's
  // length, in the reference's order.
  const policyText = (fields.tsaPolicyOID as string | undefined) ?? '';
  const policy = policyText === '' ? undefined : oidElement(policyText);
  if (policy === null)
    return {
      status: 400,
      sentence: SIGSTORE_MESSAGES.oid,
      detail: `tsaPolicyOID ${JSON.stringify(policyText)} is not an OID (digits and dots, at most 129 arcs).`,
    };

  const artifactHash = (fields.artifactHash as string | undefined) ?? '';
  if (!STANDARD_BASE64.test(artifactHash))
    return bad('artifactHash must be the digest in standard base64 (RFC 4648 §4, padded).');
  const digest = Buffer.from(artifactHash, 'base64');

  let nonce: Uint8Array | undefined;
  if (fields.nonce !== undefined) {
    const text = nonceSource.text;
    if (typeof fields.nonce !== 'number' || text === undefined || !/^\d+$/.test(text))
      return bad('nonce must be a whole number, 0 or more.');
    const hex = BigInt(text).toString(16);
    nonce = Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, 'hex');
  }
  return timeStampReq(DIGEST_OIDS[algorithm], digest, policy, nonce, fields.certificates === true);
}

/** The DER OBJECT IDENTIFIER of a dotted OID (arcs may have leading zeros, as Go's Atoi reads them), or null. */
function oidElement(text: string): Uint8Array | null {
  if (!/^\d+(\.\d+)+$/.test(text) || text.split('.').length > 129) return null;
  try {
    return oid(
      text
        .split('.')
        .map((arc) => BigInt(arc).toString())
        .join('.'),
    );
  } catch {
    return null;
  }
}

/** A DER TimeStampReq (RFC 3161 §2.4.1): version 1, the imprint, then the policy, nonce and certReq when given. */
function timeStampReq(
  algorithm: Uint8Array,
  digest: Uint8Array,
  policy: Uint8Array | undefined,
  nonce: Uint8Array | undefined,
  certReq: boolean,
): Uint8Array {
  const imprint = sequence(sequence(algorithm, encode(TAG.NULL)), octetString(digest));
  return sequence(
    integer(1),
    imprint,
    ...(policy === undefined ? [] : [policy]),
    ...(nonce === undefined ? [] : [integer(nonce)]),
    ...(certReq ? [encode(TAG.BOOLEAN, Uint8Array.of(0xff))] : []),
  );
}

// ---- The TrustedRoot ----

/**
 * A Sigstore TrustedRoot (protobuf-specs dev.sigstore.trustedroot.v1, JSON) naming this TSA only: its subject
 * (the root certificate's organization and common name), the address Sigstore clients post to, the chain leaf
 * first and the start of the TSA certificate's validity.
 */
function trustedRootJson(identity: { certificates: Uint8Array[]; validFrom: Date }, origin: string): string {
  const root = new crypto.X509Certificate(identity.certificates.at(-1)!);
  const name = (key: string): string =>
    root.subject
      .split('\n')
      .find((line) => line.startsWith(`${key}=`))
      ?.slice(key.length + 1) ?? '';
  const document = {
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    tlogs: [],
    certificateAuthorities: [],
    ctlogs: [],
    timestampAuthorities: [
      {
        subject: { organization: name('O'), commonName: name('CN') },
        uri: `${origin.replace(/\/+$/, '')}${SIGSTORE_TIMESTAMP_PATH}`,
        certChain: {
          certificates: identity.certificates.map((der) => ({ rawBytes: Buffer.from(der).toString('base64') })),
        },
        validFor: { start: identity.validFrom.toISOString() },
      },
    ],
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}
