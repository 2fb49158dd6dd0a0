// `timeseal upgrade`: stamp days that have no calendar proof yet, fetch upgrades from the calendars for days
// not yet in Bitcoin, verify Bitcoin attestations against block headers, refresh confirmations and the status
// files. Days still pending are normal (exit 0); a failed stamp is exit 1.
import type { TimesealCommand } from '../command.ts';
import { anchorContextOf, upgradeDays } from '../../pipeline/anchor/anchor.ts';
import { withPublishedArchive } from '../../pipeline/archive-publish.ts';
import type { Context } from '../context.ts';
import { output, publishedLines } from '../output.ts';

export function registerUpgrade(program: TimesealCommand, ctx: () => Context): void {
  program
    .command('upgrade')
    .description('fetch calendar upgrades, verify Bitcoin attestations, refresh confirmations')
    .option('--json', 'machine-readable output')
    .act(async (opts: { json?: boolean }) => {
      const c = ctx();
      const { result: report, archive } = await withPublishedArchive(c, () => upgradeDays(anchorContextOf(c)));
      output(!!opts.json).result({ ...report, ...(archive ? { archive } : {}) }, () => [
        ...(report.days.length === 0 ? ['No published day yet.'] : []),
        ...report.days.map((d) => {
          if (d.state === 'confirmed') {
            return `${d.date}: confirmed in Bitcoin block ${d.block_height} (${d.confirmations} confirmation${d.confirmations === 1 ? '' : 's'})${d.upgraded_from.length ? `; upgraded from ${d.upgraded_from.join(', ')}` : ''}`;
          }
          return `${d.date}: ${d.state} — ${d.reason ?? ''}`;
        }),
        ...(report.tip_height === null ? [] : [`Bitcoin tip: block ${report.tip_height}`]),
        ...publishedLines(archive),
      ]);
      return report.stamps.some((s) => s.outcome === 'failed') ? 'failed' : 'ok';
    });
}
