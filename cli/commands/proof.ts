// `timeseal proof HASH [--ots FILE]`: print the proof bundle (JSON) of a published hash; with --ots also write
// its per-hash OpenTimestamps proof (the bundle's `ots` field, decoded), which fails while the hash's day has
// no calendar proof yet. With --tlog-proof FILE also write the same proof as c2sp.org/tlog-proof@v1
// (docs/FORMAT.md §8a); FILE '-' prints it instead of the bundle. With --receipt FILE also write the leaf's COSE
// receipt (RFC 9942, ES256; docs/FORMAT.md §11: FILE.receipt.cose by convention) and, with --receipt-mldsa65 FILE,
// its ML-DSA-65 receipt; both fail for a day published before the archive had receipt keys. The bundle's `receipts` come from the
// configured database (Store.receipts), as GET /api/proof/<hash> gives them; they are empty when there is no
// database here (no TIMESEAL_DATABASE_URL and no SQLite file: an archive-only machine), which the command says
// on stderr. A database that cannot be read fails the command rather than printing a bundle without them.
import fs from 'node:fs';
import type { TimesealCommand } from '../command.ts';
import { ALG_ES256, ALG_ML_DSA_65, ALGORITHM_NAMES, parseCoseSign1, receiptHeader } from '../../core/cose-receipt.ts';
import { fromBase64, toBase64 } from '../../core/encoding.ts';
import { TimesealError } from '../../core/errors.ts';
import { isHashHex } from '../../core/hash.ts';
import { encodeProofBundle } from '../../core/proof.ts';
import { encodeTlogProof, tlogProofFromBundle } from '../../core/tlog-proof.ts';
import { UsageError } from '../../runtime/config.ts';
import type { Context } from '../context.ts';
import { buildProof } from '../../pipeline/proof.ts';

export function registerProof(program: TimesealCommand, ctx: () => Context): void {
  program
    .command('proof')
    .description('print the proof bundle (JSON) of a published hash')
    .argument('<hash>', 'the SHA-256 hash, 64 hexadecimal characters')
    .option('--ots <file>', "also write the hash's OpenTimestamps proof to this file")
    .option(
      '--tlog-proof <file>',
      "also write the hash's c2sp.org/tlog-proof@v1 to this file ('-': print it instead of the bundle)",
    )
    .option('--receipt <file>', "also write the hash's COSE receipt (RFC 9942, ES256) to this file (.receipt.cose)")
    .option('--receipt-mldsa65 <file>', "also write the hash's ML-DSA-65 COSE receipt to this file")
    .option('--json', 'machine-readable output (the bundle is JSON either way)')
    .act(
      async (
        hash: string,
        opts: { ots?: string; tlogProof?: string; receipt?: string; receiptMldsa65?: string; json?: boolean },
      ) => {
        if (!isHashHex(hash)) throw new UsageError(`not a SHA-256 hash (64 hexadecimal characters): ${hash}`);
        if (opts.tlogProof === '-' && opts.json)
          throw new UsageError('--tlog-proof - prints text, not JSON: drop --json or name a file');
        const c = ctx();
        const archived = buildProof(c.config.archive, c.config.logOrigin, hash, c.publicKeys());
        const bundle = { ...archived, receipts: await keptReceipts(c, archived.hash, archived.date) };
        if (opts.ots !== undefined) {
          if (bundle.ots === null) {
            throw new TimesealError(
              'not-found',
              `${bundle.date} has no calendar proof yet (run timeseal anchor); ${opts.ots} not written`,
            );
          }
          fs.writeFileSync(opts.ots, fromBase64(bundle.ots));
        }
        for (const [file, alg] of [
          [opts.receipt, ALG_ES256],
          [opts.receiptMldsa65, ALG_ML_DSA_65],
        ] as const) {
          if (file === undefined) continue;
          const receipt = bundle.coseReceipts
            .map((r) => fromBase64(r))
            .find((r) => receiptHeader(parseCoseSign1(r, 'receipt'), 'receipt').alg === alg);
          if (receipt === undefined) {
            throw new TimesealError(
              'not-found',
              `${bundle.date} was published before the archive had receipt keys: it has no ${ALGORITHM_NAMES[alg]} COSE receipt; ${file} not written`,
            );
          }
          fs.writeFileSync(file, receipt);
        }
        if (opts.tlogProof !== undefined) {
          const text = encodeTlogProof(tlogProofFromBundle(bundle));
          if (opts.tlogProof === '-') {
            process.stdout.write(text);
            return 'ok';
          }
          fs.writeFileSync(opts.tlogProof, text);
        }
        process.stdout.write(encodeProofBundle(bundle));
        return 'ok';
      },
    );
}

/** The hash's receipts of `date` kept in the configured database, base64; [] (said on stderr) without one. */
async function keptReceipts(c: Context, hash: string, date: string): Promise<string[]> {
  if (c.config.databaseUrl === undefined && !fs.existsSync(c.config.db)) {
    process.stderr.write(
      `timeseal: no database here (${c.config.db}): the bundle's receipts are left empty; GET /api/proof/<hash> on the server gives them\n`,
    );
    return [];
  }
  return (await (await c.store()).receipts.forDay(hash, date)).map(toBase64);
}
