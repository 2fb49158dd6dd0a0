// The PostgreSQL engine's errors made engine-neutral (store/store.ts): a full or failing disk at the server, or a
// server that cannot be reached or dropped the connection, becomes StorageUnavailableError; a repeated username
// or e-mail UniqueViolationError. Callers never see SQLSTATE codes. Codes: PostgreSQL's appendix A "Error
// Codes".
import { DayClosedError, StorageUnavailableError, UniqueViolationError, type StorageKind } from '../store.ts';

/** The refusal raised by the trigger of migration 3 (store/postgres/migrations.ts): SQLSTATE P0001, this text. */
const DAY_CLOSED = /^timeseal: day closed: (\d{4}-\d{2}-\d{2})$/;

/** SQLSTATE 23505 unique_violation. */
export const UNIQUE_VIOLATION = '23505';

/** Node's socket errors that mean the server is not there (connect) or went away (mid-query). */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * 'full' for the server's disk full (53100 disk_full), 'io' for another failure of its storage (58030
 * io_error), 'unreachable' for a server out of reach or gone (class 08 connection exceptions, 57P01-57P03
 * shutdown/cannot connect now, 53300 too_many_connections, a socket error, the pg client's "Connection
 * terminated" and pool time-outs), else undefined (a bug or a constraint: not the storage's fault).
 */
export function postgresFault(err: unknown): StorageKind | undefined {
  if (err instanceof StorageUnavailableError) return err.kind;
  const code = (err as { code?: unknown } | null | undefined)?.code;
  if (code === '53100') return 'full';
  if (code === '58030') return 'io';
  if (typeof code === 'string') {
    if (
      /^08[0-9A-Z]{3}$/.test(code) ||
      code === '57P01' ||
      code === '57P02' ||
      code === '57P03' ||
      code === '53300' ||
      SOCKET_CODES.has(code)
    )
      return 'unreachable';
  }
  const message = (err as { message?: unknown } | null | undefined)?.message;
  if (
    code === undefined &&
    typeof message === 'string' &&
    /^Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(
      message,
    )
  )
    return 'unreachable';
  return undefined;
}

/** Whether `err` says the connection went away after a statement was sent (so a write may have committed). */
function lostMidStatement(err: unknown): boolean {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  const message = (err as { message?: unknown } | null | undefined)?.message;
  return (
    code === 'ECONNRESET' ||
    code === 'EPIPE' ||
    code === '57P01' ||
    code === '57P02' ||
    (typeof message === 'string' && message.startsWith('Connection terminated'))
  );
}

/**
 * `err` as an engine-neutral error: StorageUnavailableError for a storage or connection fault (its code kept
 * for the log; `committed` when `mayHaveCommitted` and the connection was lost while the commit was under way),
 * UniqueViolationError for 23505 on the users table, DayClosedError for the closed-day trigger's refusal, else
 * `err` itself.
 */
export function neutralError(err: unknown, mayHaveCommitted = false): unknown {
  if (err instanceof StorageUnavailableError || err instanceof UniqueViolationError || err instanceof DayClosedError)
    return err;
  const e = err as { code?: unknown; constraint?: unknown; table?: unknown; message?: string };
  const closedDay = e?.code === 'P0001' ? DAY_CLOSED.exec(e.message ?? '') : null;
  if (closedDay !== null) return new DayClosedError(closedDay[1]!);
  if (e?.code === UNIQUE_VIOLATION && e.table === 'users') {
    return new UniqueViolationError(
      /email/.test(String(e.constraint)) ? 'email' : 'username',
      e.message ?? 'unique violation',
    );
  }
  const kind = postgresFault(err);
  if (kind === undefined) return err;
  const code = typeof e.code === 'string' ? e.code : 'ECONNLOST';
  return new StorageUnavailableError(kind, code, `PostgreSQL: ${e.message ?? code}`, {
    committed: mayHaveCommitted && lostMidStatement(err),
    cause: err,
  });
}
