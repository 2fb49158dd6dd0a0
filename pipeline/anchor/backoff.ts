// Retries after failures, for the schedule's runs of the steps that ask outside services about published days
// (docs/OPERATIONS.md "Retries after failures"): anchoring and upgrades (the OpenTimestamps calendars), RFC 3161
// stamping (pipeline/tsa-client.ts) and witness cosigning (pipeline/witness.ts). Commands run by hand do not use it:
// they try every day at once, as asked.
//
// The rule, per day (per day and witness for cosigning):
// - a failed attempt counts one more failure and sets the next attempt min(1 h · 2^(failures − 1), 24 h) later
//   (1 h, 2 h, 4 h, 8 h, 16 h, then every 24 h); a day is due again up to 10 minutes early, so that the hourly
//   step, whose start drifts by the time the steps before it take, does not skip a turn;
// - a successful attempt clears the day's record;
// - a run works on the due days newest first (the recent days people wait for before the old backlog), at most
//   a configured number of days, starts no day once its time budget is spent, and (for the calendars) stops
//   after STOP_AFTER_FAILURES days in a row failed: the service is down, and the other days wait, uncounted.
// The records live in small JSON files next to the database file (beside anchor.lock and witness-state.json),
// never in the archive: they are this server's memory, not something a reader needs. A file that is missing or
// unreadable is an empty one (every day is due); deleting it is always safe.
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../runtime/config.ts';

/** The wait after the first failure, and the longest wait. */
export const FIRST_WAIT_MS = 3_600_000;
export const MAX_WAIT_MS = 86_400_000;
/** How early a day counts as due (the hourly steps' start drifts by the steps run before them). */
export const EARLY_MS = 10 * 60_000;
/** A calendar run stops after this many days in a row failed. */
export const STOP_AFTER_FAILURES = 2;

/** The wait before the next attempt after `failures` failures in a row (at least 1). */
export function waitAfter(failures: number): number {
  return Math.min(FIRST_WAIT_MS * 2 ** Math.max(0, failures - 1), MAX_WAIT_MS);
}

export interface RetryEntry {
  /** Failed attempts in a row. */
  failures: number;
  /** When the last attempt started and when the next may (ISO times). */
  last: string;
  next: string;
  reason: string;
}

/**
 * What a scheduled run gets from the schedule (pipeline/schedule.ts): its log, and the clock its waits are measured
 * on (the machine's real clock, like the schedule's timers; tests pass a simulated one).
 */
export interface ScheduledRun {
  /** A day delayed: "<what> delayed: <day>: <reason>, retrying at <time>", one line per day and attempt. */
  warn(fields: Record<string, unknown>, message: string): void;
  /** A run cut short (days left for a later run), once per run. */
  info(fields: Record<string, unknown>, message: string): void;
  now(): Date;
  /** Milliseconds for the run's time budget; performance.now() by default. */
  elapsed?: () => number;
}

/** The folder of the database file, where the server keeps its own state (locks, witness sizes, retries). */
export function stateDir(config: Config): string {
  return path.dirname(path.resolve(config.db));
}

/** The retry records of one step (a JSON object of key → entry), read at the start of a run, saved at its end. */
export class RetryBook {
  readonly file: string;
  private readonly entries = new Map<string, RetryEntry>();

  constructor(file: string) {
    this.file = file;
    let parsed: unknown;
    try {
      parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch {
      return;
    }
    if (parsed === null || typeof parsed !== 'object') return;
    for (const [key, v] of Object.entries(parsed as Record<string, Partial<RetryEntry>>)) {
      if (
        Number.isSafeInteger(v?.failures) &&
        typeof v.last === 'string' &&
        typeof v.next === 'string' &&
        !Number.isNaN(Date.parse(v.next))
      ) {
        this.entries.set(key, { failures: v.failures!, last: v.last, next: v.next, reason: String(v.reason ?? '') });
      }
    }
  }

  get(key: string): RetryEntry | undefined {
    return this.entries.get(key);
  }

  /** Whether `key` may be tried at `now`: never failed, or its wait is over (up to EARLY_MS early). */
  due(key: string, now: Date): boolean {
    const e = this.entries.get(key);
    return e === undefined || now.getTime() >= Date.parse(e.next) - EARLY_MS;
  }

  /** Counts a failure of the attempt started at `at`; returns when the next attempt may start. */
  failed(key: string, reason: string, at: Date): Date {
    const failures = (this.entries.get(key)?.failures ?? 0) + 1;
    const next = new Date(at.getTime() + waitAfter(failures));
    this.entries.set(key, { failures, last: at.toISOString(), next: next.toISOString(), reason });
    return next;
  }

  succeeded(key: string): void {
    this.entries.delete(key);
  }

  /** Drops the records of keys no longer waiting (a day stamped by hand, a day confirmed, an old checkpoint). */
  retain(keep: (key: string) => boolean): void {
    for (const key of [...this.entries.keys()]) if (!keep(key)) this.entries.delete(key);
  }

  /** Writes the file (temp file and rename); no file while nothing is recorded. */
  save(): void {
    if (this.entries.size === 0) {
      fs.rmSync(this.file, { force: true });
      return;
    }
    const sorted = Object.fromEntries([...this.entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    fs.writeFileSync(`${this.file}.tmp`, `${JSON.stringify(sorted, null, 1)}\n`);
    fs.renameSync(`${this.file}.tmp`, this.file);
  }
}

export interface RunBounds {
  /** At most this many days attempted. */
  days: number;
  /** No day started once the run has lasted this long (ms). */
  runMs: number;
  /** Stop after this many days in a row failed (Infinity: never). */
  stopAfterFailures: number;
}

export interface RetryRunResult<T> {
  /** The days attempted, in the order tried. */
  attempted: T[];
  /** Failed days and when each is tried again. */
  delayed: Map<string, Date>;
  /** Days due but left for a later run (bounds), and days still waiting out their backoff. */
  left: number;
  waiting: number;
}

/**
 * One scheduled run over `items` (each a day, by `key` in `book`): the due ones newest first, within `bounds`;
 * `attempt` returns null on success or the reason of the failure. Logs each failure (`<what> delayed: …`) and,
 * once, the days left for a later run. The caller saves the book.
 */
export async function retryRun<T extends { key: string; date: string }>(
  book: RetryBook,
  items: readonly T[],
  bounds: RunBounds,
  run: ScheduledRun,
  what: string,
  attempt: (item: T) => Promise<string | null>,
): Promise<RetryRunResult<T>> {
  const startedAt = run.now();
  const elapsed = run.elapsed ?? (() => performance.now());
  const started = elapsed();
  const due = items
    .filter((i) => book.due(i.key, startedAt))
    .sort((a, b) => (a.date > b.date ? -1 : a.date < b.date ? 1 : a.key < b.key ? -1 : 1));
  const attempted: T[] = [];
  const delayed = new Map<string, Date>();
  let inARow = 0;
  let stop = '';
  for (const item of due) {
    if (attempted.length >= bounds.days) stop = `at most ${bounds.days} days a run`;
    else if (elapsed() - started >= bounds.runMs) stop = `the run's ${Math.round(bounds.runMs / 1000)} s are spent`;
    else if (inARow >= bounds.stopAfterFailures) stop = `${inARow} days in a row failed`;
    if (stop !== '') break;
    attempted.push(item);
    const at = run.now();
    const reason = await attempt(item);
    if (reason === null) {
      book.succeeded(item.key);
      inARow = 0;
      continue;
    }
    inARow++;
    const next = book.failed(item.key, reason, at);
    delayed.set(item.key, next);
    run.warn(
      { date: item.date, failures: book.get(item.key)!.failures, retry_at: next.toISOString(), reason },
      `${what} delayed: ${item.date}: ${reason}, retrying at ${next.toISOString()}`,
    );
  }
  const left = due.length - attempted.length;
  const waiting = items.length - due.length;
  if (left > 0)
    run.info(
      { left, waiting, reason: stop },
      `${what}: ${left} day${left === 1 ? '' : 's'} left for a later run (${stop})${waiting ? `; ${waiting} more waiting out their backoff` : ''}`,
    );
  return { attempted, delayed, left, waiting };
}
