// `timeseal ledger build [--date D]`: build, sign and publish finished days.
import type { Command } from 'commander';
import { isDate, utcDate } from '../../core/ledger.ts';
import { buildLedgers } from '../build.ts';
import { readLastPublishedDay, refuseClockBehindArchive } from '../clock-guard.ts';
import { UsageError } from '../config.ts';
import type { Context } from '../context.ts';
import { formatBytes, output } from '../output.ts';

export function registerLedger(program: Command, ctx: () => Context): void {
  const ledger = program.command('ledger').description('daily ledgers');
  ledger
    .command('build')
    .description('build, sign and publish day D (default: every finished day not yet published)')
    .option('--date <date>', 'the day to build or re-check, YYYY-MM-DD')
    .option('--json', 'machine-readable output')
    .action((opts: { date?: string; json?: boolean }) => {
      if (opts.date !== undefined && !isDate(opts.date)) throw new UsageError(`--date must be a date written YYYY-MM-DD: ${opts.date}`);
      const c = ctx();
      // A clock on or before the last published day can publish nothing, ever: say so (exit 1) rather than
      // "Nothing to publish", and leave the archive as it is.
      refuseClockBehindArchive(utcDate(c.clock()), readLastPublishedDay(c.config.archive), 'Nothing was built.');
      const results = buildLedgers(
        { config: c.config, db: c.db(), clock: c.clock, keys: c.signingKeys(), progress: c.progress },
        opts.date === undefined ? {} : { date: opts.date },
      );
      output(!!opts.json).result({ days: results }, () =>
        results.length === 0
          ? ['Nothing to publish: no finished day has unpublished submissions.']
          : results.map((r) =>
              r.alreadyPublished
                ? `${r.date}: already published; the rebuild reproduced every file byte for byte.`
                : `${r.date}: published ${r.entryCount} hash${r.entryCount === 1 ? '' : 'es'} (leaves ${r.firstIndex}–${r.treeSize - 1}, tree size ${r.treeSize}, root ${r.root.slice(0, 16)}…); ${r.filesWritten} files, ${formatBytes(r.bytesWritten)} written.`,
            ),
      );
    });
}
