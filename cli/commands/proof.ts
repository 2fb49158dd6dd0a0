// `timeseal proof HASH [--ots FILE]`: print the proof bundle (JSON) of a published hash; with --ots also write
// its per-hash OpenTimestamps proof (the bundle's `ots` field, decoded), which fails while the hash's day has
// no calendar proof yet.
import fs from 'node:fs';
import type { Command } from 'commander';
import { fromBase64 } from '../../core/encoding.ts';
import { TimesealError } from '../../core/errors.ts';
import { isHashHex } from '../../core/hash.ts';
import { encodeProofBundle } from '../../core/proof.ts';
import { UsageError } from '../../runtime/config.ts';
import type { Context } from '../context.ts';
import { buildProof } from '../../pipeline/proof.ts';

export function registerProof(program: Command, ctx: () => Context): void {
  program
    .command('proof')
    .description('print the proof bundle (JSON) of a published hash')
    .argument('<hash>', 'the SHA-256 hash, 64 hexadecimal characters')
    .option('--ots <file>', "also write the hash's OpenTimestamps proof to this file")
    .option('--json', 'machine-readable output (the bundle is JSON either way)')
    .action((hash: string, opts: { ots?: string }) => {
      if (!isHashHex(hash)) throw new UsageError(`not a SHA-256 hash (64 hexadecimal characters): ${hash}`);
      const c = ctx();
      const bundle = buildProof(c.config.archive, c.config.logOrigin, hash, c.publicKeys());
      if (opts.ots !== undefined) {
        if (bundle.ots === null) {
          throw new TimesealError('not-found', `${bundle.date} has no calendar proof yet (run timeseal anchor); ${opts.ots} not written`);
        }
        fs.writeFileSync(opts.ots, fromBase64(bundle.ots));
      }
      process.stdout.write(encodeProofBundle(bundle));
    });
}
