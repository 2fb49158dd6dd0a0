// The schedule lease (store/README.md, "The schedule lease"): its name in Store.lease and its ttl. One node at a
// time runs `timeseal serve`'s schedule (cli/schedule.ts), and one writer at a time publishes an s3:// archive
// (cli/archive-publish.ts): the holder of this lease.
/** The schedule lease's name in Store.lease. */
export const SCHEDULE_LEASE = 'schedule';
export const DEFAULT_LEASE_SECONDS = 90;

/** The lease's ttl in ms from TIMESEAL_SCHEDULE_LEASE_SECONDS (seconds, default 90; at least 1). */
export function scheduleLeaseMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.TIMESEAL_SCHEDULE_LEASE_SECONDS;
  if (text === undefined || text === '') return DEFAULT_LEASE_SECONDS * 1000;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds < 1)
    throw new Error(
      `TIMESEAL_SCHEDULE_LEASE_SECONDS must be a number of seconds, at least 1 (got ${JSON.stringify(text)})`,
    );
  return Math.round(seconds * 1000);
}
