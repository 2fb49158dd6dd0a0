// The injectable clock (DESIGN.md §3): TIMESEAL_NOW (an ISO-8601 instant) replaces the system time in the CLI
// and the server, so a whole day's cycle can be run in seconds.
import { UsageError } from './config.ts';

export type Clock = () => Date;

export function clockFromEnv(env: NodeJS.ProcessEnv = process.env): Clock {
  const fixed = env.TIMESEAL_NOW;
  if (fixed === undefined || fixed === '') return () => new Date();
  const t = Date.parse(fixed);
  if (Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}T/.test(fixed)) {
    throw new UsageError(`TIMESEAL_NOW is not an ISO-8601 instant: ${fixed}`);
  }
  return () => new Date(t);
}
