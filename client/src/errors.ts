// The one error type the library throws. `code` says what kind of failure it is, so a caller can tell a proof
// that does not check ('invalid') from a server that could not be reached ('network') or a request it cancelled
// ('aborted') without reading messages.

export type ClientErrorCode =
  /** A bad argument: not a SHA-256 hash, an unknown option value, a malformed URL. */
  | 'usage'
  /** The server could not be reached, or the connection broke. */
  | 'network'
  /** The server answered with an unexpected status or body. */
  | 'http'
  /** The server does not know the hash (or a file or key is missing). */
  | 'not-found'
  /** Bytes that do not check: a proof, receipt, key, checkpoint or block header. */
  | 'invalid'
  /** The keys a server serves differ from those pinned for it, or no keys are pinned for it. */
  | 'trust'
  /** The log showed two different trees of one size, or a tree that does not extend an earlier one. */
  | 'fork'
  /** The caller's AbortSignal fired, or a request's own deadline passed. */
  | 'aborted'
  /** The day's ledger is published and the server has no proof of the hash in it: the receipt's promise is broken. */
  | 'broken'
  /** A PDF that cannot be read or stamped: damaged, encrypted, or in a form not read (the message says which). */
  | 'pdf';

export class TimesealClientError extends Error {
  readonly code: ClientErrorCode;
  /** The HTTP status, for 'http' and 'not-found' errors that came from an answer. */
  readonly status?: number;
  /** Seconds the server asked to wait before trying again (its Retry-After), when it said. */
  readonly retryAfter?: number;
  constructor(
    code: ClientErrorCode,
    message: string,
    options?: { cause?: unknown; status?: number; retryAfter?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TimesealClientError';
    this.code = code;
    if (options?.status !== undefined) this.status = options.status;
    if (options?.retryAfter !== undefined) this.retryAfter = options.retryAfter;
  }
}

/** `err` as a TimesealClientError: itself, or wrapped with `code` (an AbortError becomes 'aborted'). */
export function asClientError(err: unknown, code: ClientErrorCode, context?: string): TimesealClientError {
  if (err instanceof TimesealClientError)
    return context === undefined
      ? err
      : new TimesealClientError(err.code, `${context}: ${err.message}`, {
          cause: err,
          ...(err.status === undefined ? {} : { status: err.status }),
        });
  const name = (err as { name?: string } | null)?.name;
  const message = err instanceof Error ? err.message : String(err);
  const kind: ClientErrorCode = name === 'AbortError' || name === 'TimeoutError' ? 'aborted' : code;
  return new TimesealClientError(kind, context === undefined ? message : `${context}: ${message}`, { cause: err });
}

/**
 * Whether a failure is the server's or the network's rather than the request's: the server could not be reached,
 * the connection broke, a request's deadline passed, or it answered 429 or 5xx. Asking again later may succeed.
 */
export function isTemporary(err: TimesealClientError): boolean {
  return (
    err.code === 'network' ||
    err.code === 'aborted' ||
    (err.code === 'http' && err.status !== undefined && (err.status === 429 || err.status >= 500))
  );
}

/** Throws an 'aborted' error when `signal` has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted)
    throw new TimesealClientError('aborted', `aborted: ${reasonText(signal.reason)}`, { cause: signal.reason });
}

function reasonText(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  return reason === undefined ? 'the operation was cancelled' : String(reason);
}
