// Submissions are paused while the server's clock is on or before the last published day
// (pipeline/clock-guard.ts): a 2xx must always mean the hash will be published, and a ledger on or before the
// last published day can never be built. Both submission routes ask `refusal()` before writing anything and
// answer 503 with its text; /api/queue-stats.php reports `condition()`.
//
// The last published day is cached (pipeline/clock-guard.ts lastPublishedDayReader: days.json is stat()ed at
// most once a second and parsed again only when it changed), so the check costs a comparison per request.
//
// Logging: the first refusal is logged at error level at once, then at most one error line a minute while
// refusals go on, each with the number refused since the previous line; when a submission is accepted again,
// one line says so with the total refused. A flood of requests never becomes a flood of lines.
import { clockBehindArchive, clockBehindText, lastPublishedDayReader } from '../pipeline/clock-guard.ts';

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

export interface SubmissionGate {
  /** For a submission at UTC date `today`: null to go ahead, or the 503 message (the refusal is counted). */
  refusal(today: string): string | null;
  /** The condition at UTC date `today`, or null when submissions are open. Counts nothing. */
  condition(today: string): ClockCondition | null;
}

export interface GateOptions {
  archive: string;
  log: GateLog;
  /** Least time between two error lines while refusals go on, in ms (default one minute). */
  logEveryMs?: number;
  /** Monotonic milliseconds (default performance.now); also drives the days.json re-check. */
  now?: () => number;
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
    onError: (err) => log.error({ err: (err as Error).message }, 'days.json cannot be read; submissions are checked against the last published day read before'),
  });
  let paused = false;
  let refusedTotal = 0;
  let refusedSinceLine = 0;
  let lineAt = -Infinity;

  return {
    refusal(today) {
      const last = lastPublished();
      if (!clockBehindArchive(today, last)) {
        if (paused) {
          paused = false;
          log.warn({ refused: refusedTotal, lastPublishedDay: last, clockDate: today }, `submissions accepted again: the server's clock (${today}) is after the last published ledger (${last}); ${refusedTotal} were refused with 503 while it was not`);
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
      return clockBehindArchive(today, last) ? { clockDate: today, lastPublishedDay: last, problem: pausedProblem(today, last) } : null;
    },
  };
}
