// `timeseal ledger build [--date D]`: build, sign and publish finished days.
import type { TimesealCommand } from '../command.ts';
import { isDate, utcDate } from '../../core/ledger.ts';
import { publishLedgers } from '../../pipeline/build.ts';
import { readLastPublishedDay, refuseClockBehindArchive } from '../../runtime/clock-guard.ts';
import { UsageError } from '../../runtime/config.ts';
import { withPublishedArchive } from '../../pipeline/archive-publish.ts';
import type { Context } from '../context.ts';
import { formatBytes, output, publishedLines } from '../output.ts';

export function registerLedger(program: TimesealCommand, ctx: () => Context): void {
  const ledger = program.command('ledger').description('daily ledgers');
  ledger
    .command('build')
    .description('build, sign and publish day D (default: every finished day not yet published)')
    .option('--date <date>', 'the day to build or re-check, YYYY-MM-DD')
    .option('--json', 'machine-readable output')
    .act(async (opts: { date?: string; json?: boolean }) => {
      if (opts.date !== undefined && !isDate(opts.date))
        throw new UsageError(`--date must be a date written YYYY-MM-DD: ${opts.date}`);
      const c = ctx();
      // On an s3:// archive: caught up from the store first, then what was committed is published (pipeline/archive-publish.ts).
      const {
        result: { days: results, index },
        archive,
      } = await withPublishedArchive(
        c,
        async () => {
          // A clock on or before the last published day can publish nothing, ever: say so (exit 1) rather than
          // "Nothing to publish", and leave the archive as it is.
          refuseClockBehindArchive(utcDate(c.clock()), readLastPublishedDay(c.config.archive), 'Nothing was built.');
          return publishLedgers(
            { config: c.config, store: await c.store(), clock: c.clock, keys: c.signingKeys(), progress: c.progress },
            opts.date === undefined ? {} : { date: opts.date },
          );
        },
        { rebuilds: true },
      );
      const upkeep =
        index.merged.length === 0
          ? []
          : [
              `Index: merged into ${index.merged.map((s) => `leaves ${s.from}–${s.to - 1}`).join(', ')}; ${index.segments} segment${index.segments === 1 ? '' : 's'}; ${index.filesWritten} files, ${formatBytes(index.bytesWritten)} written in ${index.seconds.toFixed(1)} s.`,
            ];
      output(!!opts.json).result({ days: results, index, ...(archive ? { archive } : {}) }, () => [
        ...(results.length === 0
          ? ['Nothing to publish: no finished day has unpublished submissions.']
          : results.map((r) =>
              r.alreadyPublished
                ? `${r.date}: already published; the rebuild reproduced every file byte for byte.`
                : `${r.date}: published ${r.entryCount} hash${r.entryCount === 1 ? '' : 'es'} (leaves ${r.firstIndex}–${r.treeSize - 1}, tree size ${r.treeSize}, root ${r.root.slice(0, 16)}…); ${r.filesWritten} files, ${formatBytes(r.bytesWritten)} written.`,
            )),
        ...upkeep,
        ...publishedLines(archive),
      ]);
      return 'ok';
    });
}
