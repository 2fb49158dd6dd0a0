// `timeseal keys init`: create the signing keys if absent (ECDSA P-256 and ML-DSA-65 for ledgers and checkpoints,
// Ed25519 and ML-DSA-44 for the checkpoint lines witnesses know). `timeseal keys add`: the last two for an archive
// made before them.
import type { Command } from 'commander';
import { addCheckpointKeys, initKeys } from '../../runtime/keys.ts';
import type { Context } from '../context.ts';
import { output } from '../output.ts';

export function registerKeys(program: Command, ctx: () => Context): void {
  const keys = program.command('keys').description('manage the signing keys');
  keys
    .command('init')
    .description('create the ECDSA P-256, ML-DSA-65, Ed25519 and ML-DSA-44 keys (refuses to overwrite existing keys)')
    .option('--json', 'machine-readable output')
    .action((opts: { json?: boolean }) => {
      const { config } = ctx();
      const files = initKeys({ keys: config.keys, privateKeys: config.privateKeys }, config.logOrigin);
      output(!!opts.json).result({ created: files }, () => [
        'Created signing keys:',
        ...files.map((f) => `  ${f}`),
        `Private keys (mode 0600) are in ${config.privateKeys}; keep them out of any served folder and back them up.`,
      ]);
    });
  keys
    .command('add')
    .description('create the Ed25519 and ML-DSA-44 checkpoint keys an archive made before them lacks (past checkpoints stay as they are)')
    .option('--json', 'machine-readable output')
    .action((opts: { json?: boolean }) => {
      const { config } = ctx();
      const files = addCheckpointKeys({ keys: config.keys, privateKeys: config.privateKeys }, config.logOrigin);
      output(!!opts.json).result({ created: files }, () => [
        `Created the checkpoint keys of ${config.logOrigin}:`,
        ...files.map((f) => `  ${f}`),
        'From the next build on, each new checkpoint carries an Ed25519 line and an ML-DSA-44 cosignature line besides its ECDSA P-256 and ML-DSA-65 lines; published checkpoints do not change.',
      ]);
    });
}
