// `timeseal anchor [--date D]`: submit the commitment of day D (default: every published day without a calendar
// proof) to the OpenTimestamps calendars. Fails (exit 1) when a day got fewer than OTS_MIN_CALENDARS answers;
// that day stays "not stamped" with the reason in block_info.json.
import type { TimesealCommand } from '../command.ts';
import { isDate } from '../../core/ledger.ts';
import { anchorContextOf, anchorDays } from '../../pipeline/anchor/anchor.ts';
import { UsageError } from '../../runtime/config.ts';
import { withPublishedArchive } from '../../pipeline/archive-publish.ts';
import type { Context } from '../context.ts';
import { output, publishedLines } from '../output.ts';

export function registerAnchor(program: TimesealCommand, ctx: () => Context): void {
  program
    .command('anchor')
    .description("submit each published day's commitment to the OpenTimestamps calendars")
    .option('--date <date>', 'the day to stamp, YYYY-MM-DD (default: every published day not yet stamped)')
    .option('--json', 'machine-readable output')
    .act(async (opts: { date?: string; json?: boolean }) => {
      if (opts.date !== undefined && !isDate(opts.date))
        throw new UsageError(`--date must be a date written YYYY-MM-DD: ${opts.date}`);
      const c = ctx();
      const { result: results, archive } = await withPublishedArchive(c, () =>
        anchorDays(anchorContextOf(c), opts.date === undefined ? {} : { date: opts.date }),
      );
      output(!!opts.json).result({ days: results, ...(archive ? { archive } : {}) }, () => [
        ...(results.length === 0
          ? ['Nothing to stamp: every published day has a calendar proof.']
          : results.map((r) => {
              if (r.outcome === 'already-stamped')
                return `${r.date}: already stamped (${r.date}.json.ots exists); timeseal upgrade fetches its upgrades.`;
              if (r.outcome === 'failed') return `${r.date}: NOT stamped — ${r.reason}`;
              const missed = r.failures.length ? ` No answer from: ${r.failures.map((f) => f.error).join('; ')}.` : '';
              return `${r.date}: stamped; commitment ${r.commitment} accepted by ${r.answered.length} calendar${r.answered.length === 1 ? '' : 's'} (${r.answered.join(', ')}).${missed}`;
            })),
        ...publishedLines(archive),
      ]);
      return results.some((r) => r.outcome === 'failed') ? 'failed' : 'ok';
    });
}
