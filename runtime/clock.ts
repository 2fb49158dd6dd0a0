// The injectable clock (all times UTC): TIMESEAL_NOW (an ISO-8601 instant) replaces the system time in the CLI
// and the server, so a whole day's cycle can be run in seconds.
import { UsageError } from './config.ts';

export type Clock = () => Date;

export function clockFromEnv(env: NodeJS.ProcessEnv = process.env): Clock {
  const fixed = env.TIMESEAL_NOW;
  if (fixed === undefined || fixed === '') return () => new Date();
  // An instant needs its zone: without one, Date.parse would read the machine's local time.
  const t = Date.parse(fixed);
  if (Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(fixed)) {
    throw new UsageError(
      `TIMESEAL_NOW is not an ISO-8601 instant: ${fixed} (write it with its zone, e.g. 2025-11-02T10:00:00Z)`,
    );
  }
  return () => new Date(t);
}
