// A node whose clock disagrees with the database's refuses to acknowledge submissions. Every submission is
// filed under the UTC day of the node's clock, and the ledger build closes a day by the builder's clock: the
// database refuses rows of a closed day (store/store.ts closeThrough), so a lagging clock cannot lose an
// acknowledged row, but it still files rows under the wrong day and makes them refused at midnight. Nodes must
// keep their clocks with NTP, well within MAX_SKEW_MS of the database server's (docs/OPERATIONS.md §1).
//
// The check: at start and then every CHECK_EVERY_MS the database's clock is read (Store.databaseTime) and
// compared with the midpoint of the request's round trip on this machine's clock. While the two differ by more
// than MAX_SKEW_MS, `problem()` gives the 503's text; the submission gate asks it before every submission.
// A failed read keeps the last answer (the database being down is the storage's condition, not the clock's).
// Nothing is checked when the database is this process's own file (SQLite: the same machine's clock) or when
// TIMESEAL_NOW replaces the clock (tests and demonstrations move the clock on purpose).

export const MAX_SKEW_MS = 30_000;
export const CHECK_EVERY_MS = 15_000;

export interface ClockCheckLog {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface ClockCheck {
  /** The 503 text while this node's clock is more than MAX_SKEW_MS from the database's; else null. */
  problem(): string | null;
  /** Measures once now (also done every CHECK_EVERY_MS until stop). */
  measure(): Promise<void>;
  stop(): void;
}

export interface ClockCheckOptions {
  /** The database server's clock in ms since the epoch. */
  databaseTime: () => Promise<number>;
  log: ClockCheckLog;
  /** This machine's clock (default Date.now). */
  now?: () => number;
  maxSkewMs?: number;
  everyMs?: number;
}

/** The text a person reads (queue-stats and, with "Nothing was stored.", the 503). */
export function skewProblem(skewMs: number): string {
  const seconds = Math.round(Math.abs(skewMs) / 1000);
  return `The server's clock is ${seconds} s ${skewMs > 0 ? 'behind' : 'ahead of'} its database's; submissions are paused until it is corrected.`;
}

export function createClockCheck(options: ClockCheckOptions): ClockCheck {
  const now = options.now ?? Date.now;
  const maxSkewMs = options.maxSkewMs ?? MAX_SKEW_MS;
  let skewMs = 0;
  let running: Promise<void> | undefined;

  const measure = (): Promise<void> =>
    (running ??= (async () => {
      const before = now();
      let database: number;
      try {
        database = await options.databaseTime();
      } catch {
        return;
      }
      const after = now();
      const measured = database - (before + after) / 2;
      const wasOff = Math.abs(skewMs) > maxSkewMs;
      const isOff = Math.abs(measured) > maxSkewMs;
      if (isOff && !wasOff) {
        options.log.error(
          { skewMs: Math.round(measured), maxSkewMs },
          `CLOCK SKEW: ${skewProblem(measured)} Submissions are refused with 503 until the clocks agree within ${maxSkewMs / 1000} s (check NTP on this node).`,
        );
      } else if (!isOff && wasOff) {
        options.log.warn(
          { skewMs: Math.round(measured), maxSkewMs },
          "clock skew resolved: this node's clock agrees with the database's again; submissions are accepted",
        );
      }
      skewMs = measured;
    })().finally(() => (running = undefined)));

  const timer = setInterval(() => void measure(), options.everyMs ?? CHECK_EVERY_MS);
  timer.unref();
  return {
    problem: () => (Math.abs(skewMs) > maxSkewMs ? skewProblem(skewMs) : null),
    measure,
    stop: () => clearInterval(timer),
  };
}
