// `timeseal tsa stamp`: ask the RFC 3161 time-stamp authorities of TSA_URLS for a token on every published
// ledger file that has none (pipeline/tsa-client.ts); exit 1 when a day got fewer than TSA_MIN good answers (nothing is
// published for it; the hourly schedule asks again).
import type { TimesealCommand } from '../command.ts';
import { stampLedgers, tsaContextOf } from '../../pipeline/tsa-client.ts';
import { withPublishedArchive } from '../../pipeline/archive-publish.ts';
import type { Context } from '../context.ts';
import { output, publishedLines } from '../output.ts';

export function registerTsa(program: TimesealCommand, ctx: () => Context): void {
  const tsa = program.command('tsa').description('RFC 3161 time-stamps of the ledger files');
  tsa
    .command('stamp')
    .description('ask the TSAs of TSA_URLS for a token on every published ledger file without one')
    .option('--json', 'machine-readable output')
    .act(async (opts: { json?: boolean }) => {
      const c = ctx();
      const context = tsaContextOf(c);
      const { result: days, archive } = await withPublishedArchive(c, () => stampLedgers(context));
      const lines = (): string[] => {
        if (context.tsa.urls.length === 0)
          return ['No time-stamp authority configured (TSA_URLS is empty): nothing to do.'];
        if (days.length === 0) return ['Nothing to do: every published ledger file has its RFC 3161 token.'];
        return days.flatMap((d) => [
          d.outcome === 'stamped'
            ? `${d.date}: time-stamped — ${d.tokens.map((t) => `${t.file} by ${t.tsaName} at ${t.genTime}`).join('; ')}`
            : `${d.date}: NOT time-stamped — ${d.reason}`,
          ...d.failures.map((f) => `  ${f.tsa}: ${f.reason}`),
        ]);
      };
      output(!!opts.json).result({ days, ...(archive ? { archive } : {}) }, () => [
        ...lines(),
        ...publishedLines(archive),
      ]);
      return days.some((d) => d.outcome === 'failed') ? 'failed' : 'ok';
    });
}
