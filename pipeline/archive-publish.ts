// The commands that write the archive (ledger build, anchor, upgrade, witness cosign, tsa stamp, and the steps
// `timeseal serve` schedules) on an s3:// archive (docs/OPERATIONS.md §8): the step runs on the local working copy
// exactly as on a folder archive, between a catch-up from the store before it and the publication of what it
// committed after it (pipeline/storage/publish.ts). On a folder archive the step runs alone, as it always did.
//
// One writer: the schedule lease (pipeline/schedule.ts, Store.lease) decides it, across hosts. A command started by
// hand takes the lease for itself (renews it every ttl/3 while it awaits, and gives it back at the end); a step of
// `timeseal serve`'s schedule, or the build it runs as a child process (TIMESEAL_SCHEDULE_HOLDER), renews the
// schedule's own. The lease is checked before the catch-up and before each phase of the publication; a holder
// that lost it publishes nothing, and one stopped after the check is held off by the store's compare-and-swap of
// the mutable objects.
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { PublicKeySet } from '../core/day.ts';
import { TimesealError } from '../core/errors.ts';
import type { Config } from '../runtime/config.ts';
import type { PublicKeys } from '../runtime/keys.ts';
import { setting, type SettingName } from '../runtime/settings.ts';
import type { Store } from '../store/store.ts';
import { withLockAsync } from './lock.ts';
import { SCHEDULE_LEASE, scheduleLeaseMs } from './schedule-lease.ts';
import { openArchiveStore, openArchiveStoreToRead } from './storage/open.ts';
import type { ArchiveStore } from './storage/archive-store.ts';
import type { CatchUpReport, PublishReport } from './storage/publish.ts';

/** What a step that writes the archive needs of its command (the `timeseal` command's context, cli/context.ts,
 * is one): the configuration (the archive folder, and the s3:// store when there is one), the store (for the
 * schedule lease), the log's public keys (to verify the catch-up) and the progress lines for a person. */
export interface WriterContext {
  config: Pick<Config, 'archive' | 'archiveStore'>;
  store(): Promise<Pick<Store, 'lease'>>;
  publicKeys(): PublicKeySet & Pick<PublicKeys, 'receipt' | 'retiredReceipt'>;
  progress(message: string): void;
}

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
  c: WriterContext,
  step: () => Promise<T>,
  options: { holder?: string; rebuilds?: boolean } = {},
): Promise<Published<T>> {
  const location = c.config.archiveStore;
  if (location === undefined) return { result: await step() };
  // Loaded for an s3:// archive only: the publication and the catch-up's verified pull (the mirror's, with
  // `timeseal verify`'s checks) are modules a step on a folder archive never needs at start.
  const { catchUpWorkingCopy, publishWorkingCopy, PublishConflictError } = await import('./storage/publish.ts');
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
 * For a node that does not hold the schedule lease (pipeline/schedule.ts): brings its working copy of an s3:// archive
 * up to date from the store, as a writer's catch-up does (the mirror's verified pull, from the copy's last
 * checkpoint), so that what the node serves follows what the writer published. Nothing is written to the store.
 * Undefined on a folder archive; 'busy' while a command of this host works on the copy.
 */
export async function followArchiveStore(c: WriterContext): Promise<CatchUpReport['state'] | 'busy' | undefined> {
  const location = c.config.archiveStore;
  if (location === undefined) return undefined;
  const { catchUpWorkingCopy } = await import('./storage/publish.ts');
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
    if (err instanceof TimesealError && err.code === 'busy') return 'busy';
    throw err;
  }
}
