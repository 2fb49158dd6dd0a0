// `timeseal witness cosign`: send the latest published checkpoint to the witnesses of TIMESEAL_WITNESSES
// (c2sp.org/tlog-witness add-checkpoint) and publish the cosignatures that verify (pipeline/witness.ts). Exit 1
// when fewer than TIMESEAL_WITNESS_QUORUM have cosigned it; the hourly schedule asks again.
import type { TimesealCommand } from '../command.ts';
import { cosignLatest, witnessContextOf } from '../../pipeline/witness.ts';
import { withPublishedArchive } from '../../pipeline/archive-publish.ts';
import type { Context } from '../context.ts';
import { output, publishedLines } from '../output.ts';

export function registerWitness(program: TimesealCommand, ctx: () => Context): void {
  const witness = program
    .command('witness')
    .description('witness cosignatures of the checkpoints (c2sp.org/tlog-witness)');
  witness
    .command('cosign')
    .description(
      'ask the witnesses of TIMESEAL_WITNESSES to cosign the latest checkpoint, and publish their verified cosignatures',
    )
    .option('--json', 'machine-readable output')
    .act(async (opts: { json?: boolean }) => {
      const c = ctx();
      const context = witnessContextOf(c);
      const { result: report, archive } = await withPublishedArchive(c, () => cosignLatest(context));
      const lines = (): string[] => {
        if (context.witness.witnesses.length === 0)
          return ['No witnesses configured (TIMESEAL_WITNESSES is empty): nothing to do.'];
        if (report.date === null) return ['Nothing published yet: no checkpoint to cosign.'];
        return [
          `${report.date} (tree size ${report.treeSize}): cosigned by ${report.cosigned.length} of ${context.witness.witnesses.length} witnesses (${report.quorum} required)${report.cosigned.length ? `: ${report.cosigned.join(', ')}` : ''}.`,
          ...report.failures.map((f) => `  ${f.witness}: ${f.reason}`),
        ];
      };
      output(!!opts.json).result({ ...report, ...(archive ? { archive } : {}) }, () => [
        ...lines(),
        ...publishedLines(archive),
      ]);
      return report.met ? 'ok' : 'failed';
    });
}
