// The schedule lease (store/README.md, "The schedule lease"): its name in Store.lease and its ttl. One node at a
// time runs `timeseal serve`'s schedule (pipeline/schedule.ts), and one writer at a time publishes an s3:// archive
// (pipeline/archive-publish.ts): the holder of this lease.
import { setting } from '../runtime/settings.ts';

/** The schedule lease's name in Store.lease. */
export const SCHEDULE_LEASE = 'schedule';

/** The lease's ttl in ms (TIMESEAL_SCHEDULE_LEASE_SECONDS: runtime/settings.ts). */
export function scheduleLeaseMs(env: NodeJS.ProcessEnv = process.env): number {
  return setting(env, 'TIMESEAL_SCHEDULE_LEASE_SECONDS');
}
