// Typed errors shared by every reader and writer of the archive. Each names what failed; mismatch errors show
// both sides ("root abcd… != ef01…") so an operator can see what differs without a debugger.

/** `busy`: another run holds what this one needs (the archive lock); the same command later goes on. */
export type ErrorCode = 'format' | 'mismatch' | 'signature' | 'not-found' | 'usage' | 'conflict' | 'busy' | 'io';

export class TimesealError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TimesealError';
    this.code = code;
  }
}

/** Bytes or text that do not follow their documented format. `field` names the offending part. */
export class FormatError extends TimesealError {
  readonly field: string;
  constructor(field: string, problem: string, options?: ErrorOptions) {
    super('format', `${field}: ${problem}`, options);
    this.name = 'FormatError';
    this.field = field;
  }
}

/** Two values that must be equal are not. The message shows both, shortened when long. */
export class MismatchError extends TimesealError {
  readonly what: string;
  readonly expected: string;
  readonly actual: string;
  constructor(what: string, expected: string, actual: string, options?: ErrorOptions) {
    super('mismatch', `${what}: expected ${shorten(expected)} != got ${shorten(actual)}`, options);
    this.name = 'MismatchError';
    this.what = what;
    this.expected = expected;
    this.actual = actual;
  }
}

/** A signature that does not verify under the key it claims. */
export class SignatureError extends TimesealError {
  constructor(what: string, options?: ErrorOptions) {
    super('signature', `${what}: signature does not verify`, options);
    this.name = 'SignatureError';
  }
}

export class NotFoundError extends TimesealError {
  constructor(what: string, options?: ErrorOptions) {
    super('not-found', what, options);
    this.name = 'NotFoundError';
  }
}

/** Adds context to an error as it rises, keeping the original as `cause` and its code. */
export function withContext(context: string, err: unknown): TimesealError {
  if (err instanceof TimesealError) {
    const wrapped = new TimesealError(err.code, `${context}: ${err.message}`, { cause: err });
    return wrapped;
  }
  const message = err instanceof Error ? err.message : String(err);
  // A file that is not there (the system's ENOENT) is "not found" (exit 3), not a failure of the file's content.
  const missing = err instanceof Error && (err as { code?: unknown }).code === 'ENOENT';
  return new TimesealError(missing ? 'not-found' : 'io', `${context}: ${message}`, { cause: err });
}

function shorten(value: string): string {
  return value.length > 80 ? `${value.slice(0, 38)}…${value.slice(-38)}` : value;
}

/** The index covers fewer leaves than days.json publishes: a lookup cannot answer yet (never "not found"). */
export class IndexIncompleteError extends TimesealError {
  constructor(covered: number, published: number) {
    super(
      'io',
      `the archive's index covers ${covered} of ${published} published leaves; it is completed by the next timeseal ledger build`,
    );
    this.name = 'IndexIncompleteError';
  }
}
