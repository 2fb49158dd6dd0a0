// The clock against the archive. A day's ledger can be published only while it is after the last published
// day (days are appended in order), so a clock whose UTC date is on or before that day (a VM snapshot restored,
// an NTP step back, a wrong TIMESEAL_NOW) would file submissions under a ledger that can never be built. This
// is the one rule every writer of the queue and the build share: `timeseal import`, `timeseal ledger build`,
// the schedule in `timeseal serve`, and the two submission routes (through ingest/submission-gate.ts).
import fs from 'node:fs';
import path from 'node:path';
import { DAYS_PATH, parseDays } from '../core/archive.ts';
import { TimesealError } from '../core/errors.ts';

/** The last published day named by the archive's days.json, or '' when nothing is published (no file). */
export function readLastPublishedDay(archive: string): string {
  let text: string;
  try {
    text = fs.readFileSync(path.join(archive, DAYS_PATH), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
  return parseDays(text).days.at(-1)?.date ?? '';
}

/** True when the clock's UTC date `today` is on or before `lastPublished` ('' = nothing published). */
export function clockBehindArchive(today: string, lastPublished: string): boolean {
  return lastPublished !== '' && today <= lastPublished;
}

/** "clock (D) is not after the last published ledger (L)": the core of every message about the condition. */
export function clockBehindText(today: string, lastPublished: string): string {
  return `clock (${today}) is not after the last published ledger (${lastPublished})`;
}

/**
 * The operator CLI's refusal: throws (exit 1) when the clock is behind the archive. `nothing` says what was
 * left undone, e.g. "Nothing was enqueued."
 */
export function refuseClockBehindArchive(today: string, lastPublished: string, nothing: string): void {
  if (!clockBehindArchive(today, lastPublished)) return;
  throw new TimesealError(
    'conflict',
    `the ${clockBehindText(today, lastPublished)}: the clock is behind the archive, and no day on or before ${lastPublished} can be published again. Correct the system clock (or TIMESEAL_NOW). ${nothing}`,
  );
}

export interface LastPublishedDayOptions {
  /** How long a value is trusted before days.json is looked at again, in ms (default 1000). */
  recheckMs?: number;
  /** Monotonic milliseconds (default performance.now). */
  now?: () => number;
  /** days.json changed but cannot be read or parsed: the previous value is kept. */
  onError?: (err: unknown) => void;
}

/**
 * The last published day, cheaply, for a server's every request. At most once per `recheckMs` (one second by
 * default) days.json is stat()ed, and it is read and parsed again only when its inode, size or modification
 * time changed (the build replaces it by rename, so each publication is a new inode). Between checks the call
 * is one comparison of numbers. A second is ample: the build publishes only days before its own clock's date,
 * so with one clock shared by the server and the build a newly published day is never the server's today.
 */
export function lastPublishedDayReader(archive: string, options: LastPublishedDayOptions = {}): () => string {
  const file = path.join(archive, DAYS_PATH);
  const recheckMs = options.recheckMs ?? 1000;
  const now = options.now ?? (() => performance.now());
  let last = '';
  let key = '';
  let checkedAt = -Infinity;
  return () => {
    const t = now();
    if (t - checkedAt < recheckMs) return last;
    checkedAt = t;
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(file, { throwIfNoEntry: false });
    } catch (err) {
      options.onError?.(err);
      return last;
    }
    if (stat === undefined) {
      key = '';
      last = '';
      return last;
    }
    const next = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    if (next === key) return last;
    key = next;
    try {
      last = readLastPublishedDay(archive);
    } catch (err) {
      options.onError?.(err);
    }
    return last;
  };
}
