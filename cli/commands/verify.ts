// `timeseal verify [--archive DIR|URL] [--keys DIR|URL]`: check the whole archive from scratch.
import fs from 'node:fs';
import type { Command } from 'commander';
import { ecdsaPublicKeyFromPem, mldsaPublicKeyFromPem } from '../../core/sig.ts';
import { equalBytes, fromUtf8 } from '../../core/encoding.ts';
import { TimesealError } from '../../core/errors.ts';
import { readerFor } from '../../pipeline/archive-reader.ts';
import type { Context } from '../context.ts';
import { checkpointKeysFromVkeys, PUBLIC_ECDSA_PEM, PUBLIC_ED25519_VKEY, PUBLIC_MLDSA44_VKEY, PUBLIC_MLDSA_PEM, PUBLIC_MLDSA_RAW } from '../../runtime/keys.ts';
import { output } from '../output.ts';
import { verifyArchive } from '../../pipeline/verify.ts';
import { WITNESS_POLICY_FILE } from '../../pipeline/witness.ts';
import { TSA_CA_FILE } from '../../pipeline/tsa.ts';

async function loadKeys(location: string) {
  const reader = readerFor(location);
  const get = async (name: string) => {
    const data = await reader.read(name);
    if (data === undefined) throw new TimesealError('not-found', `public key ${name} not found in ${location}`);
    return data;
  };
  const ecdsa = ecdsaPublicKeyFromPem(fromUtf8(await get(PUBLIC_ECDSA_PEM)));
  const mldsa = mldsaPublicKeyFromPem(fromUtf8(await get(PUBLIC_MLDSA_PEM)));
  if (!equalBytes(await get(PUBLIC_MLDSA_RAW), mldsa)) throw new TimesealError('mismatch', `${PUBLIC_MLDSA_RAW} is not the key in ${PUBLIC_MLDSA_PEM}`);
  // The checkpoint keys witnesses know, when published (archives made before `timeseal keys add` have none).
  const optional = async (name: string) => {
    const data = await reader.read(name);
    return data === undefined ? undefined : fromUtf8(data, name);
  };
  return { ecdsa, mldsa, ...checkpointKeysFromVkeys(await optional(PUBLIC_ED25519_VKEY), await optional(PUBLIC_MLDSA44_VKEY)) };
}

export function registerVerify(program: Command, ctx: () => Context): void {
  program
    .command('verify')
    .description('recompute and check the whole archive: tiles, roots, checkpoints, ledgers, signatures, chain of days, index')
    .option('--archive <dir-or-url>', 'archive folder or URL (default: TIMESEAL_ARCHIVE)')
    .option('--keys <dir-or-url>', 'public keys folder or URL (default: TIMESEAL_KEYS, or <site>/keys/ for an archive URL)')
    .option('--json', 'machine-readable output')
    .action(async (opts: { archive?: string; keys?: string; json?: boolean }) => {
      const c = ctx();
      const location = opts.archive ?? c.config.archive;
      const remote = /^https?:\/\//.test(location);
      // Named explicitly, a missing folder is a mistake; the default one simply has nothing published yet.
      if (!remote && opts.archive !== undefined && !fs.existsSync(location)) {
        throw new TimesealError('not-found', `archive folder ${location} does not exist`);
      }
      const keysLocation = opts.keys ?? (remote && !opts.keys ? new URL('../keys/', location.endsWith('/') ? location : `${location}/`).href : c.config.keys);
      const keys = await loadKeys(keysLocation);
      const [policy, tsaCa] = await Promise.all([readerFor(keysLocation).read(WITNESS_POLICY_FILE), readerFor(keysLocation).read(TSA_CA_FILE)]);
      const report = await verifyArchive(readerFor(location), keys, {
        ...(policy === undefined ? {} : { witnessPolicy: fromUtf8(policy, WITNESS_POLICY_FILE) }),
        ...(tsaCa === undefined ? {} : { tsaCaPem: fromUtf8(tsaCa, TSA_CA_FILE) }),
      });
      output(!!opts.json).result(report, () =>
        report.ok
          ? [`OK: ${report.location} — ${report.days} day${report.days === 1 ? '' : 's'}, tree size ${report.treeSize}, root ${report.root ?? '(empty)'}; ${report.filesChecked} files checked.`, ...report.notes.map((n) => `  note: ${n}`)]
          : [`FAILED: ${report.location} — ${report.problems.length} problem${report.problems.length === 1 ? '' : 's'}:`, ...report.problems.map((p) => `  ${p}`)],
      );
      if (!report.ok) process.exitCode = 1;
    });
}
