// Error answers of the ingest service. Every client mistake gets a 4xx whose body says exactly what was
// wrong; a server fault gets a 500 that says nothing about internals (the details go to the log only).
// Bodies follow the route's shape (route config `errorStyle`):
//   plain  {error}                       most routes
//   ok     {ok: false, error}            POST /api/submit (the site's client reads ok and error)
//   beta   {success: false, error, example}  POST /api/v1/beta/timestamp (docs/API.md)
// A write refused by a full or failing disk, or by a database server that cannot be reached (said so, not blamed
// on the disk: the kind the storage engine gave its error, `storageFault`), is not a fault of the server's code: 503 with Retry-After
// and a text saying so, reported to the submission gate (which logs it once a minute with a count, and puts it
// on /api/queue-stats.php) instead of a stack trace per request (docs/OPERATIONS.md §6).
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { IndexIncompleteError } from '../core/errors.ts';
import { storageFault, type StorageFault } from '../store/faults.ts';
import { DayClosedError } from '../store/store.ts';

export type ErrorStyle = 'plain' | 'ok' | 'beta';

declare module 'fastify' {
  interface FastifyContextConfig {
    errorStyle?: ErrorStyle;
  }
}

/** The beta API's 400 body (docs/API.md); also used for an invalid hash on POST /api/submit. */
export const INVALID_HASH_ERROR = 'Invalid hash format. Expected 64-character hexadecimal SHA-256 hash.';
/** SHA-256("hello world"): a valid example for the beta API's 400 answer. */
export const EXAMPLE_HASH = 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9';
export const INTERNAL_ERROR = 'Internal server error';
export const BODY_LIMIT = 16 * 1024;

/** A 4xx with a message meant for the client. */
export class ClientError extends Error {
  readonly statusCode: number;
  constructor(statusCode: number, message: string) {
    super(message);
    this.name = 'ClientError';
    this.statusCode = statusCode;
  }
}

interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

function fieldName(dataVar: string, instancePath: string): string {
  const field = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
    .join('.');
  return field === '' ? dataVar : field;
}

/** Fastify `schemaErrorFormatter`: one sentence naming the field, e.g. `email: must be a string`. */
export function formatSchemaErrors(errors: SchemaError[], dataVar: string): Error {
  const e = errors[0];
  if (e === undefined) return new Error(`${dataVar} is invalid`);
  const where = fieldName(dataVar, e.instancePath);
  const p = e.params;
  let message: string;
  switch (e.keyword) {
    case 'required':
      message = `${fieldName(dataVar, `${e.instancePath}/${String(p.missingProperty)}`)}: is required`;
      break;
    case 'additionalProperties':
      message = `${where}: unknown field ${JSON.stringify(String(p.additionalProperty)).slice(0, 80)}`;
      break;
    case 'type':
      message = `${where}: must be ${p.type === 'object' ? 'a JSON object' : `of type ${String(p.type)}`}`;
      break;
    case 'maxLength':
      message = `${where}: must be at most ${String(p.limit)} characters`;
      break;
    case 'minLength':
      message = `${where}: must be at least ${String(p.limit)} characters`;
      break;
    case 'pattern':
    case 'format':
      message = `${where}: has the wrong format`;
      break;
    case 'enum':
      message = `${where}: must be one of ${(p.allowedValues as unknown[]).join(', ')}`;
      break;
    default:
      message = `${where}: ${e.message ?? 'is invalid'}`;
  }
  const err = new Error(message) as Error & { hashField?: boolean };
  err.hashField =
    dataVar === 'body' && (e.instancePath === '/hash' || (e.keyword === 'required' && p.missingProperty === 'hash'));
  return err;
}

/** The client-facing text for an error Fastify or a handler raised, or undefined for a server fault. */
function clientMessage(err: FastifyError & { hashField?: boolean }, style: ErrorStyle): string | undefined {
  const status = err.statusCode ?? 500;
  if (status < 400 || status >= 500) return undefined;
  if (err.validation && err.hashField && style !== 'plain') return INVALID_HASH_ERROR;
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return `Request body is larger than ${BODY_LIMIT} bytes`;
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_EMPTY_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return 'Content-Type must be application/json';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'Request body is empty; expected a JSON object';
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return 'Content-Length does not match the body';
    case 'FST_ERR_BAD_URL':
      return 'URL is not validly percent-encoded';
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return 'URL path parameter is too long';
  }
  if (err instanceof ClientError || err.validation) return err.message;
  if (status === 404) return 'Not found';
  if (status === 405) return 'Method not allowed';
  if (status === 503) return 'Server is shutting down';
  return 'Bad request';
}

/** The error body of each style: `{ok: false, error}` (submit), `{success: false, error, example}` (beta), `{error}`. */
export function errorBody(style: 'ok', message: string): { ok: false; error: string };
export function errorBody(style: 'beta', message: string): { success: false; error: string; example: { hash: string } };
export function errorBody(style: 'plain', message: string): { error: string };
export function errorBody(
  style: ErrorStyle,
  message: string,
): { ok: false; error: string } | { success: false; error: string; example: { hash: string } } | { error: string };
export function errorBody(
  style: ErrorStyle,
  message: string,
): { ok: false; error: string } | { success: false; error: string; example: { hash: string } } | { error: string } {
  if (style === 'ok') return { ok: false, error: message };
  if (style === 'beta') return { success: false, error: message, example: { hash: EXAMPLE_HASH } };
  return { error: message };
}

/**
 * 'full' (no space), 'unreachable' (the database server out of reach) or 'io' (another failure at the
 * storage) for an error of a write, else undefined: the storage module's engine-neutral classification
 * (store/faults.ts): the `kind` each engine gives its StorageUnavailableError, and the file-call codes (ENOSPC,
 * EDQUOT, EIO from a write or sync) of the server's own writes. Ingest reads no engine's codes.
 */
export { storageFault, type StorageFault };

/** Seconds a client is asked to wait after a write refused by the disk. */
export const STORAGE_RETRY_AFTER = '60';

/** Our texts (the spec has none). `committed`: the row was written but its sync to disk failed. */
export function storageMessage(cause: StorageFault, what: 'submission' | 'data', committed = false): string {
  const why =
    cause === 'full'
      ? 'its disk is full'
      : cause === 'unreachable'
        ? 'it cannot reach its database'
        : 'writing to its disk failed';
  if (committed)
    return `The server could not confirm that your submission was stored (${why}). Please submit it again later.`;
  if (what === 'submission')
    return `The server cannot store submissions right now (${why}); nothing was recorded. Please try again later.`;
  return `The server cannot store anything right now (${why}). Please try again later.`;
}

/** Our text for a submission refused because its day is closed (store/store.ts DayClosedError). */
export function dayClosedMessage(date: string): string {
  return `The ledger of ${date} is already closed (this server's clock is behind the one that builds the ledgers); nothing was stored. Please submit it again in a minute.`;
}

/** Seconds a client is asked to wait after a submission of a closed day. */
export const DAY_CLOSED_RETRY_AFTER = '60';

/** Where storage failures and submissions of closed days are reported (the submission gate). */
export interface StorageMonitor {
  storageFailed(fault: StorageFault, err: unknown): void;
  dayClosed?(date: string): void;
}

/**
 * For an error of a full or failing disk, or a submission of a closed day (never acknowledged): reports it to
 * `monitor` and gives the 503's text and Retry-After; undefined for any other error (the caller rethrows it).
 */
export function storageRefusal(
  err: unknown,
  monitor: StorageMonitor | undefined,
  what: 'submission' | 'data',
): { message: string; retryAfter: string } | undefined {
  if (err instanceof DayClosedError) {
    monitor?.dayClosed?.(err.date);
    return { message: dayClosedMessage(err.date), retryAfter: DAY_CLOSED_RETRY_AFTER };
  }
  const fault = storageFault(err);
  if (fault === undefined) return undefined;
  monitor?.storageFailed(fault, err);
  const committed = (err as { committed?: unknown }).committed === true;
  return { message: storageMessage(fault, what, committed), retryAfter: STORAGE_RETRY_AFTER };
}

export const INDEX_INCOMPLETE = "The archive's index is being completed; please try again in a few minutes.";

/**
 * Fastify error handler for the whole app. A storage failure (a full disk) is reported to `storage` and
 * answered 503 with Retry-After; the submission routes' (errorStyle ok, beta) with the submission text.
 */
export function errorHandler(
  storage?: StorageMonitor,
): (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (err, request, reply) => answerError(err, request, reply, storage);
}

/** The error handler without a storage monitor: a full disk is still a 503, only not reported. */
export const handleError = errorHandler();

function answerError(
  err: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
  storage: StorageMonitor | undefined,
): void {
  const style = request.routeOptions.config?.errorStyle ?? 'plain';
  const refusal = storageRefusal(err, storage, style === 'plain' ? 'data' : 'submission');
  if (refusal !== undefined) {
    void reply
      .code(503)
      .header('Retry-After', refusal.retryAfter)
      .type('application/json; charset=utf-8')
      .send(errorBody(style, refusal.message));
    return;
  }
  // A look-up on an archive whose index a build has not completed yet (core/errors.ts): never "not found".
  if (err instanceof IndexIncompleteError) {
    request.log.warn({ err: err.message }, 'index incomplete');
    void reply
      .code(503)
      .header('Retry-After', '300')
      .type('application/json; charset=utf-8')
      .send(errorBody(style, INDEX_INCOMPLETE));
    return;
  }
  const message = clientMessage(err, style);
  if (message === undefined) {
    request.log.error({ err, route: request.routeOptions.url }, 'request failed');
    void reply.code(500).type('application/json; charset=utf-8').send(errorBody(style, INTERNAL_ERROR));
    return;
  }
  const status = err.statusCode === 503 ? 503 : (err.statusCode ?? 400);
  void reply.code(status).type('application/json; charset=utf-8').send(errorBody(style, message));
}

/** Fastify `frameworkErrors`: malformed URLs answered before routing. */
export function handleFrameworkError(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const message = clientMessage(err, 'plain') ?? 'Bad request';
  void reply
    .code(err.statusCode && err.statusCode < 500 ? err.statusCode : 400)
    .type('application/json; charset=utf-8')
    .send({ error: message });
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** application/json bodies: strict UTF-8 (invalid bytes are a 400, not silently replaced), then JSON. */
export function parseJsonBody(
  _request: FastifyRequest,
  body: Buffer,
  done: (err: Error | null, value?: unknown) => void,
): void {
  if (body.length === 0) {
    done(new ClientError(400, 'Request body is empty; expected a JSON object'));
    return;
  }
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    done(new ClientError(400, 'Request body is not valid UTF-8'));
    return;
  }
  try {
    done(null, JSON.parse(text));
  } catch {
    done(new ClientError(400, 'Request body is not valid JSON'));
  }
}
