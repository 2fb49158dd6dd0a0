// `timeseal proof HASH`: print the proof bundle (JSON) of a published hash.
import type { Command } from 'commander';
import { isHashHex } from '../../core/hash.ts';
import { encodeProofBundle } from '../../core/proof.ts';
import { UsageError } from '../config.ts';
import type { Context } from '../context.ts';
import { buildProof } from '../proof.ts';

export function registerProof(program: Command, ctx: () => Context): void {
  program
    .command('proof')
    .description('print the proof bundle (JSON) of a published hash')
    .argument('<hash>', 'the SHA-256 hash, 64 hexadecimal characters')
    .option('--json', 'machine-readable output (the bundle is JSON either way)')
    .action((hash: string) => {
      if (!isHashHex(hash)) throw new UsageError(`not a SHA-256 hash (64 hexadecimal characters): ${hash}`);
      const c = ctx();
      process.stdout.write(encodeProofBundle(buildProof(c.config.archive, c.config.logOrigin, hash, c.publicKeys())));
    });
}
