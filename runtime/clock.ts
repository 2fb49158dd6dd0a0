// The injectable clock (all times UTC). Two ways to move it, one for each use:
//   - the development clock (docs/OPERATIONS.md, "The development clock"): `timeseal clock set|next-day`
//     writes `dev-clock.json` beside the database (the folder of TIMESEAL_DB, `data/` by default); every process
//     of the installation — a running `timeseal serve`, its schedule and the builds it starts, every `timeseal`
//     command — reads it, a server at most a second after it changed, and it ticks at the system clock's pace.
//     The server sends its time in every answer's Date header, from which the client and the site take their
//     countdowns and retry times. Honoured only by a local server (TIMESEAL_ORIGIN unset or on a loopback
//     address), as FREE_TIER_DAILY_LIMIT is: on a public origin the file stops every command (UsageError).
//   - TIMESEAL_NOW (an ISO-8601 instant): one process's clock, fixed, for tests; it wins over the file.
import fs from 'node:fs';
import path from 'node:path';
import { isLoopbackOrigin, UsageError, type Config } from './config.ts';
import { setting } from './settings.ts';

/** The time now. `development`: it follows the development clock's file, which `timeseal clock` may move at any
 * time (the schedule then re-arms its steps at the new time: pipeline/schedule.ts). */
export type Clock = (() => Date) & { readonly development?: boolean };

/** The development clock's file: `{ "clock": <what it showed>, "at": <the system clock then> }`, both ISO. */
export interface DevClockFile {
  clock: string;
  at: string;
}

/** Where `timeseal clock` writes the development clock: beside the database. */
export function devClockPath(config: Pick<Config, 'db'>): string {
  return path.join(path.dirname(config.db), 'dev-clock.json');
}

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** Milliseconds of an ISO-8601 instant with its zone, or UsageError naming `what`. */
export function parseInstant(value: string, what: string): number {
  const t = Date.parse(value);
  // An instant needs its zone: without one, Date.parse would read the machine's local time.
  if (Number.isNaN(t) || !INSTANT.test(value))
    throw new UsageError(
      `${what} is not an ISO-8601 instant: ${value} (write it with its zone, e.g. 2025-11-02T10:00:00Z)`,
    );
  return t;
}

/** The development clock's offset from the system clock (ms), or null when the file does not exist. */
export function readDevClock(file: string): number | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not JSON: remove it (timeseal clock reset) or set it again (timeseal clock set)`);
  }
  const { clock, at } = (raw ?? {}) as Partial<DevClockFile>;
  if (typeof clock !== 'string' || typeof at !== 'string')
    throw new UsageError(`${file} must hold {"clock": ISO, "at": ISO}: remove it (timeseal clock reset)`);
  return parseInstant(clock, `${file}: clock`) - parseInstant(at, `${file}: at`);
}

/** Sets the development clock to `clock` now (temp file + rename: a reader sees the old file or the new one). */
export function writeDevClock(file: string, clock: Date, systemNow: Date = new Date()): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const body: DevClockFile = { clock: clock.toISOString(), at: systemNow.toISOString() };
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(body)}\n`);
  fs.renameSync(tmp, file);
}

/** The refusal of a development clock on a public origin. */
export function devClockRefusal(file: string, origin: string): UsageError {
  return new UsageError(
    `${file} (timeseal clock) moves the clock of a local development server only (TIMESEAL_ORIGIN unset or on localhost); this one is ${origin}: remove the file (timeseal clock reset)`,
  );
}

export interface ClockOptions {
  /** The development clock's file (devClockPath); none: the system clock. */
  devClock?: string;
  /** The server's public origin (Config.origin): a development clock on a non-loopback one is refused. */
  origin?: string;
  /** How long a development clock's offset is trusted before its file is looked at again, ms (default 1000). */
  recheckMs?: number;
}

export function clockFromEnv(env: NodeJS.ProcessEnv = process.env, options: ClockOptions = {}): Clock {
  const fixed = setting(env, 'TIMESEAL_NOW');
  if (fixed !== undefined) {
    const t = parseInstant(fixed, 'TIMESEAL_NOW');
    return () => new Date(t);
  }
  const file = options.devClock;
  if (file === undefined) return () => new Date();
  let offset = readDevClock(file);
  if (offset !== null && options.origin !== undefined && !isLoopbackOrigin(options.origin))
    throw devClockRefusal(file, options.origin);
  if (options.origin !== undefined && !isLoopbackOrigin(options.origin)) return () => new Date();
  // At most once per recheckMs the file is stat()ed, and read again only when it changed (each write is a new
  // inode: rename); a file that cannot be read then keeps the offset it had.
  const recheckMs = options.recheckMs ?? 1000;
  let key = '';
  let checkedAt = performance.now();
  try {
    const s = fs.statSync(file, { throwIfNoEntry: false });
    key = s === undefined ? '' : `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    key = '';
  }
  const clock = () => {
    const t = performance.now();
    if (t - checkedAt >= recheckMs) {
      checkedAt = t;
      try {
        const s = fs.statSync(file, { throwIfNoEntry: false });
        const next = s === undefined ? '' : `${s.ino}:${s.size}:${s.mtimeMs}`;
        if (next !== key) {
          key = next;
          offset = s === undefined ? null : readDevClock(file);
        }
      } catch {
        // Kept: the offset read last (a half-written file is never seen: writes are renames).
      }
    }
    return new Date(Date.now() + (offset ?? 0));
  };
  return Object.assign(clock, { development: true });
}
