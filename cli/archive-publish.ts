// The commands that write the archive (ledger build, anchor, upgrade, witness cosign, tsa stamp, and the steps
// `timeseal serve` schedules) on an s3:// archive (docs/OPERATIONS.md §8): the step runs on the local working copy
// exactly as on a folder archive, between a catch-up from the store before it and the publication of what it
// committed after it (pipeline/storage/publish.ts). On a folder archive the step runs alone, as it always did.
//
// One writer: the schedule lease (cli/schedule.ts, Store.lease) decides it, across hosts. A command started by
// hand takes the lease for itself (renews it every ttl/3 while it awaits, and gives it back at the end); a step of
// `timeseal serve`'s schedule, or the build it runs as a child process (TIMESEAL_SCHEDULE_HOLDER), renews the
// schedule's own. The lease is checked before the catch-up and before each phase of the publication; a holder
// that lost it publishes nothing, and one stopped after the check is held off by the store's compare-and-swap of
// the mutable objects.
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { withLockAsync } from '../pipeline/lock.ts';
import { openArchiveStore, openArchiveStoreToRead } from '../pipeline/storage/open.ts';
import type { ArchiveStore } from '../pipeline/storage/archive-store.ts';
import type { CatchUpReport, PublishReport } from '../pipeline/storage/publish.ts';
import { TimesealError } from '../core/errors.ts';
import type { Context } from './context.ts';
import { formatBytes } from './output.ts';
import { SCHEDULE_LEASE, scheduleLeaseMs } from './schedule-lease.ts';
import { setting, type SettingName } from '../runtime/settings.ts';

/** The schedule's lease holder, given to the build it runs as a child process. */
export const SCHEDULE_HOLDER_ENV = 'TIMESEAL_SCHEDULE_HOLDER' satisfies SettingName;

export interface Published<T> {
  result: T;
  /** What an s3:// archive's catch-up and publication did (undefined on a folder archive). */
  archive?: { store: string; catchUp: CatchUpReport['state']; publish: PublishReport };
}

/**
 * Runs `step` on the archive: on a folder archive as it is; on an s3:// archive under the schedule lease, on the
 * working copy caught up from the store, then publishes what it committed. A step that fails publishes nothing
 * (its committed days are published by the next run). `holder`: the schedule's lease holder (serve's steps);
 * `rebuilds`: the step is `ledger build` (pipeline/storage/publish.ts catchUpWorkingCopy).
 */
export async function withPublishedArchive<T>(
  c: Context,
  step: () => Promise<T>,
  options: { holder?: string; rebuilds?: boolean } = {},
): Promise<Published<T>> {
  const location = c.config.archiveStore;
  if (location === undefined) return { result: await step() };
  // Loaded for an s3:// archive only: the publication and the catch-up's verified pull (the mirror's, with
  // `timeseal verify`'s checks) are modules a step on a folder archive never needs at start.
  const { catchUpWorkingCopy, publishWorkingCopy, PublishConflictError } =
    await import('../pipeline/storage/publish.ts');
  const inherited = options.holder ?? setting(process.env, SCHEDULE_HOLDER_ENV);
  const holder = inherited ?? `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  const leaseMs = scheduleLeaseMs();
  const db = await c.store();
  const fence = async (): Promise<void> => {
    if (!(await db.lease.acquire(SCHEDULE_LEASE, holder, leaseMs, Date.now())))
      throw new PublishConflictError(
        `this writer (${holder}) does not hold the schedule lease: another node runs the schedule and publishes ${location}; this one published nothing more`,
      );
  };
  const folder = c.config.archive;
  // Two commands on one working copy take turns (the lock is beside it, a kernel lock: pipeline/lock.ts).
  return withLockAsync(
    `${path.resolve(folder)}.publish-lock`,
    async () => {
      // A command run by hand renews its lease while it awaits (the uploads), as the schedule renews its node's.
      const renewal =
        inherited === undefined
          ? setInterval(
              () => void db.lease.acquire(SCHEDULE_LEASE, holder, leaseMs, Date.now()).catch(() => undefined),
              Math.max(1, Math.floor(leaseMs / 3)),
            ).unref()
          : undefined;
      try {
        await fence();
        const store = await openArchiveStore(location);
        const keys = c.publicKeys();
        const progress = (message: string): void => c.progress(message);
        const caught = await catchUpWorkingCopy({ folder, store, keys, progress, rebuilds: options.rebuilds === true });
        const result = await step();
        const publish = await publishWorkingCopy({ folder, store, fence, progress });
        return { result, archive: { store: location, catchUp: caught.state, publish } };
      } finally {
        clearInterval(renewal);
        if (inherited === undefined) await db.lease.release(SCHEDULE_LEASE, holder).catch(() => undefined);
      }
    },
    'publication of the working copy',
  );
}

/** The stores followed by this process, opened to read. */
const readers = new Map<string, Promise<ArchiveStore>>();

/**
 * For a node that does not hold the schedule lease (cli/schedule.ts): brings its working copy of an s3:// archive
 * up to date from the store, as a writer's catch-up does (the mirror's verified pull, from the copy's last
 * checkpoint), so that what the node serves follows what the writer published. Nothing is written to the store.
 * Undefined on a folder archive; 'busy' while a command of this host works on the copy.
 */
export async function followArchiveStore(c: Context): Promise<CatchUpReport['state'] | 'busy' | undefined> {
  const location = c.config.archiveStore;
  if (location === undefined) return undefined;
  const { catchUpWorkingCopy } = await import('../pipeline/storage/publish.ts');
  const folder = c.config.archive;
  try {
    return await withLockAsync(
      `${path.resolve(folder)}.publish-lock`,
      async () => {
        // Read only: no start-up probe (it writes a scratch object), and one client for every check.
        if (!readers.has(location)) readers.set(location, openArchiveStoreToRead(location));
        const store = await readers.get(location)!;
        // A store whose checkpoint is behind its days.json (a publication cut short) is followed up to the checkpoint.
        return (await catchUpWorkingCopy({ folder, store, keys: c.publicKeys(), rebuilds: true })).state;
      },
      'publication of the working copy',
    );
  } catch (err) {
    if (err instanceof TimesealError && err.code === 'conflict' && /^another /.test(err.message)) return 'busy';
    throw err;
  }
}

/** The text output's line on what was published (none on a folder archive). */
export function publishedLines(archive: Published<unknown>['archive']): string[] {
  if (archive === undefined) return [];
  const { created, present, replaced, bytes } = archive.publish;
  if (created + present + replaced === 0) return [`Published: ${archive.store} already holds the working copy.`];
  return [
    `Published to ${archive.store}: ${created} object${created === 1 ? '' : 's'} created, ${replaced} replaced (${formatBytes(bytes)})${present > 0 ? `; ${present} already there` : ''}.`,
  ];
}
