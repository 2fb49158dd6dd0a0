// `timeseal keys init`: create the ECDSA P-256 and ML-DSA-65 signing keys if absent.
import type { Command } from 'commander';
import { initKeys } from '../../runtime/keys.ts';
import type { Context } from '../context.ts';
import { output } from '../output.ts';

export function registerKeys(program: Command, ctx: () => Context): void {
  const keys = program.command('keys').description('manage the signing keys');
  keys
    .command('init')
    .description('create the ECDSA P-256 and ML-DSA-65 keys (refuses to overwrite existing keys)')
    .option('--json', 'machine-readable output')
    .action((opts: { json?: boolean }) => {
      const { config } = ctx();
      const files = initKeys({ keys: config.keys, privateKeys: config.privateKeys });
      output(!!opts.json).result({ created: files }, () => [
        'Created signing keys:',
        ...files.map((f) => `  ${f}`),
        `Private keys (mode 0600) are in ${config.privateKeys}; keep them out of any served folder and back them up.`,
      ]);
    });
}
