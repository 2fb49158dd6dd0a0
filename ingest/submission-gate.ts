// Submissions are paused while the server's clock is on or before the last published day
// (runtime/clock-guard.ts): a 2xx must always mean the hash will be published, and a ledger on or before the
// last published day can never be built. Both submission routes ask `refusal()` before writing anything and
// answer 503 with its text; /api/queue-stats.php reports `condition()`.
//
// The last published day is cached (runtime/clock-guard.ts lastPublishedDayReader: days.json is stat()ed at
// most once a second and parsed again only when it changed), so the check costs a comparison per request.
//
// Logging: the first refusal is logged at error level at once, then at most one error line a minute while
// refusals go on, each with the number refused since the previous line; when a submission is accepted again,
// one line says so with the total refused. A flood of requests never becomes a flood of lines.
//
// The gate also tracks the database's disk (docs/OPERATIONS.md §6): a write that fails because the disk is full or
// failing (errors.ts storageFault: the kind the storage engine gave its error, or ENOSPC, EDQUOT, EIO from the
// server's own files) is answered 503 with
// Retry-After by whoever caught it, and reported here with `storageFailed`; `condition()` then reports it
// (queue-stats: not "operational") until a submission is stored again (`stored()`). Logged the same way: the
// first failure at error level with its cause, then at most one line a minute with the count, and one line
// when a write succeeds again. Submissions are still attempted while it lasts: the next one that succeeds
// is what clears it. A database server out of reach (the kind 'unreachable', from the PostgreSQL engine) is
// said to be that, not a disk.
import { clockBehindArchive, clockBehindText, lastPublishedDayReader } from '../runtime/clock-guard.ts';
import type { ClockCheck } from './clock-check.ts';
import type { StorageFault } from './errors.ts';

export interface GateLog {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface ClockCondition {
  /** The clock's UTC date. */
  clockDate: string;
  lastPublishedDay: string;
  /** For a person: what is wrong and what it means (no "Nothing was stored"). */
  problem: string;
}

export interface StorageCondition {
  /** 'full': no space (or quota) left; 'unreachable': the database server is out of reach; 'io': writes fail otherwise. */
  fault: StorageFault;
  /** The first failure's error code, e.g. SQLITE_FULL. */
  code: string;
  /** ISO time of the first failure. */
  since: string;
  /** For a person: what is wrong and what it means. */
  problem: string;
}

export interface SubmissionGate {
  /** For a submission at UTC date `today`: null to go ahead, or the 503 message (the refusal is counted). */
  refusal(today: string): string | null;
  /**
   * What keeps submissions from being stored at UTC date `today`, or null when they are open: the clock
   * behind the archive first, else a failing disk. Counts nothing.
   */
  condition(
    today: string,
  ):
    | (
        | (ClockCondition & { kind: 'clock' })
        | (StorageCondition & { kind: 'storage' })
        | { kind: 'skew'; problem: string }
      )
    | null;
  /** A write failed because the disk is full or failing (the caller answered 503): counted and logged. */
  storageFailed(fault: StorageFault, err: unknown): void;
  /** A submission was stored: ends a storage failure (one log line); otherwise a single comparison. */
  stored(): void;
  /** A submission was refused because its day is closed (a lagging clock): counted, logged once a minute. */
  dayClosed(date: string): void;
}

export interface GateOptions {
  archive: string;
  log: GateLog;
  /** Least time between two error lines while refusals go on, in ms (default one minute). */
  logEveryMs?: number;
  /** Monotonic milliseconds (default performance.now); also drives the days.json re-check. */
  now?: () => number;
  /** Wall-clock time of a storage failure, for `since` (default the system clock). */
  wallClock?: () => Date;
  /** The check of this node's clock against the database's (clock-check.ts); none: not checked. */
  clockCheck?: ClockCheck;
}

/** The text of a failing disk or an unreachable database, in /api/queue-stats.php. */
export function storageProblem(cause: StorageFault, since: string): string {
  const what =
    cause === 'full'
      ? 'its disk is full'
      : cause === 'unreachable'
        ? 'it cannot reach its database'
        : 'writing to its disk fails';
  return `The server cannot store submissions since ${since}: ${what}. Submissions are refused until it is fixed.`;
}

/** The text of a paused server, in /api/queue-stats.php and (with "Nothing was stored.") in the 503. */
export function pausedProblem(clockDate: string, lastPublishedDay: string): string {
  return `The server's ${clockBehindText(clockDate, lastPublishedDay)}; submissions are paused until it is corrected.`;
}

export function createSubmissionGate(options: GateOptions): SubmissionGate {
  const now = options.now ?? (() => performance.now());
  const logEveryMs = options.logEveryMs ?? 60_000;
  const log = options.log;
  const lastPublished = lastPublishedDayReader(options.archive, {
    now,
    onError: (err) =>
      log.error(
        { err: (err as Error).message },
        'days.json cannot be read; submissions are checked against the last published day read before',
      ),
  });
  let paused = false;
  let refusedTotal = 0;
  let refusedSinceLine = 0;
  let lineAt = -Infinity;
  const wallClock = options.wallClock ?? (() => new Date());
  let storage: StorageCondition | undefined;
  let failedTotal = 0;
  let failedSinceLine = 0;
  let failedLineAt = -Infinity;
  let failedAt = 0;
  let closedSinceLine = 0;
  let closedLineAt = -Infinity;

  return {
    refusal(today) {
      const skew = options.clockCheck?.problem() ?? null;
      if (skew !== null) return `${skew} Nothing was stored.`;
      const last = lastPublished();
      if (!clockBehindArchive(today, last)) {
        if (paused) {
          paused = false;
          log.warn(
            { refused: refusedTotal, lastPublishedDay: last, clockDate: today },
            `submissions accepted again: the server's clock (${today}) is after the last published ledger (${last}); ${refusedTotal} were refused with 503 while it was not`,
          );
          refusedTotal = 0;
          refusedSinceLine = 0;
          lineAt = -Infinity;
        }
        return null;
      }
      paused = true;
      refusedTotal++;
      refusedSinceLine++;
      const t = now();
      if (t - lineAt >= logEveryMs) {
        log.error(
          { clockDate: today, lastPublishedDay: last, refused: refusedSinceLine, refusedTotal },
          `SUBMISSIONS PAUSED: the server's ${clockBehindText(today, last)}; ${refusedSinceLine} submission${refusedSinceLine === 1 ? '' : 's'} refused with 503 since the last line. Correct the system clock (or TIMESEAL_NOW).`,
        );
        lineAt = t;
        refusedSinceLine = 0;
      }
      return `${pausedProblem(today, last)} Nothing was stored.`;
    },
    condition(today) {
      const last = lastPublished();
      if (clockBehindArchive(today, last))
        return { kind: 'clock', clockDate: today, lastPublishedDay: last, problem: pausedProblem(today, last) };
      const skew = options.clockCheck?.problem() ?? null;
      if (skew !== null) return { kind: 'skew', problem: skew };
      return storage === undefined ? null : { kind: 'storage', ...storage };
    },
    storageFailed(fault, err) {
      const code = String((err as { code?: unknown } | null)?.code ?? 'unknown');
      const cause = err instanceof Error ? err.message : String(err);
      const t = now();
      failedTotal++;
      failedSinceLine++;
      if (storage === undefined) {
        const since = wallClock().toISOString();
        const why = fault;
        storage = { fault, code, since, problem: storageProblem(why, since) };
        failedAt = t;
        const check =
          why === 'full'
            ? "Free space on the database's disk."
            : why === 'unreachable'
              ? 'Check that the database server is running and reachable.'
              : "Check the database's disk.";
        log.error(
          { code, cause, fault, refused: 1 },
          `STORAGE FAILING: a write to the database failed (${code}: ${cause}); submissions and other writes are answered 503 until one succeeds. ${check}`,
        );
        failedLineAt = t;
        failedSinceLine = 0;
        return;
      }
      if (t - failedLineAt >= logEveryMs) {
        log.error(
          { code, cause, fault, refused: failedSinceLine, refusedTotal: failedTotal, since: storage.since },
          `STORAGE STILL FAILING since ${storage.since} (${code}): ${failedSinceLine} write${failedSinceLine === 1 ? '' : 's'} refused with 503 since the last line, ${failedTotal} in all`,
        );
        failedLineAt = t;
        failedSinceLine = 0;
      }
    },
    dayClosed(date) {
      closedSinceLine++;
      const t = now();
      if (t - closedLineAt < logEveryMs) return;
      log.error(
        { ledgerDate: date, refused: closedSinceLine },
        `SUBMISSION OF A CLOSED DAY: ${closedSinceLine} submission${closedSinceLine === 1 ? '' : 's'} for ${date} refused with 503 since the last line; its ledger is already closed, so this node's clock is behind the builder's. Check the clock (NTP).`,
      );
      closedLineAt = t;
      closedSinceLine = 0;
    },
    stored() {
      if (storage === undefined) return;
      log.warn(
        { refusedTotal: failedTotal, since: storage.since, seconds: Math.round((now() - failedAt) / 1000) },
        `storage writable again: a submission was stored; ${failedTotal} write${failedTotal === 1 ? ' was' : 's were'} refused with 503 since ${storage.since}`,
      );
      storage = undefined;
      failedTotal = 0;
      failedSinceLine = 0;
      failedLineAt = -Infinity;
    },
  };
}
