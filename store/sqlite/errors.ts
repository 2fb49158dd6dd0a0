// The SQLite engine's errors made engine-neutral (store/store.ts): a full or failing disk becomes
// StorageUnavailableError, a repeated username or e-mail UniqueViolationError. Callers never see SQLite codes.
import { storageFault, type StorageFault } from '../faults.ts';
import { DayClosedError, StorageUnavailableError, type Submission } from '../store.ts';

/** The text of store/sqlite/db.ts's trigger submissions_day_open (migration 8). */
const DAY_CLOSED = 'timeseal: day closed';

/**
 * DayClosedError when `err` is the refusal of the trigger that keeps closed days closed, for the earliest day
 * of `rows` (closed days are a prefix, so that one is closed); else undefined.
 */
export function dayClosed(err: unknown, rows: readonly Submission[]): DayClosedError | undefined {
  if (rows.length === 0) return undefined;
  return dayClosedOn(
    err,
    rows.map((r) => r.submittedAt.toISOString().slice(0, 10)).reduce((a, b) => (b < a ? b : a)),
  );
}

/** The same, when the caller knows the earliest day of its rows. */
export function dayClosedOn(err: unknown, earliest: string): DayClosedError | undefined {
  if ((err as { message?: unknown } | null | undefined)?.message !== DAY_CLOSED) return undefined;
  return new DayClosedError(earliest);
}

/**
 * 'full' for a write that found no space (SQLITE_FULL; ENOSPC or EDQUOT from a file call), 'io' for one that
 * failed otherwise at the disk (SQLITE_IOERR and its extended codes; EIO from a write or sync), else undefined.
 */
export function sqliteFault(err: unknown): StorageFault | undefined {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  if (code === 'SQLITE_FULL') return 'full';
  if (typeof code === 'string' && code.startsWith('SQLITE_IOERR')) return 'io';
  return storageFault(err);
}

/** `err` as StorageUnavailableError when it is a disk fault (its code kept for the log), else `err` itself. */
export function neutralError(err: unknown, committed = false): unknown {
  if (err instanceof StorageUnavailableError) return err;
  const kind = sqliteFault(err);
  if (kind === undefined) return err;
  const code = String((err as { code: unknown }).code);
  return new StorageUnavailableError(kind, code, (err as Error).message ?? code, { committed, cause: err });
}

/** Runs `work`, turning a disk fault into StorageUnavailableError. */
export function neutral<T>(work: () => T): T {
  try {
    return work();
  } catch (err) {
    throw neutralError(err);
  }
}
