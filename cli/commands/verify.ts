// `timeseal verify [--archive DIR|URL|s3://…] [--keys DIR|URL] [--timeout MS]`: check the whole archive from
// scratch; an s3:// archive (the default when TIMESEAL_ARCHIVE names one) is read from its bucket with the AWS
// variables (pipeline/storage/open.ts), not from the writer's working copy.
// For an archive URL without --keys, the keys come from the same host (<site>/keys/): the check is then only as
// good as that host, and the command says so (stderr, and `keys` in --json) so that a person can pin them.
import fs from 'node:fs';
import type { TimesealCommand } from '../command.ts';
import type { ReceiptKeyEntry } from '../../core/cose-receipt.ts';
import { ecdsaPublicKeyFromPem, mldsaPublicKeyFromPem } from '../../core/sig.ts';
import { equalBytes, fromUtf8 } from '../../core/encoding.ts';
import { TimesealError } from '../../core/errors.ts';
import { UsageError } from '../../runtime/config.ts';
import { setting } from '../../runtime/settings.ts';
import { loadIssuerKeys } from '../../runtime/statement-policy.ts';
import { readerFor } from '../../pipeline/archive-reader.ts';
import { openArchiveReader } from '../../pipeline/storage/open.ts';
import type { Context } from '../context.ts';
import {
  checkpointKeysFromVkeys,
  PUBLIC_ECDSA_PEM,
  PUBLIC_ED25519_VKEY,
  PUBLIC_MLDSA44_VKEY,
  PUBLIC_MLDSA_PEM,
  PUBLIC_MLDSA_RAW,
} from '../../runtime/keys.ts';
import { output } from '../output.ts';
import { verifyArchive } from '../../pipeline/verify.ts';
import { RETIRED_WITNESSES_FILE, WITNESS_POLICY_FILE } from '../../pipeline/witness.ts';
import { TSA_CA_FILE } from '../../pipeline/tsa-client.ts';
import {
  parseRetiredReceiptKeys,
  PUBLIC_RECEIPT_ES256_PEM,
  PUBLIC_RECEIPT_MLDSA_PEM,
  receiptKeysFromPems,
  RETIRED_RECEIPT_KEYS,
} from '../../runtime/receipt-keys.ts';

/** The public keys of an archive (a folder or URL), checked against each other. */
export async function loadKeys(location: string, timeoutMs: number) {
  const reader = readerFor(location, timeoutMs);
  const get = async (name: string) => {
    const data = await reader.read(name);
    if (data === undefined) throw new TimesealError('not-found', `public key ${name} not found in ${location}`);
    return data;
  };
  const ecdsa = ecdsaPublicKeyFromPem(fromUtf8(await get(PUBLIC_ECDSA_PEM)));
  const mldsa = mldsaPublicKeyFromPem(fromUtf8(await get(PUBLIC_MLDSA_PEM)));
  if (!equalBytes(await get(PUBLIC_MLDSA_RAW), mldsa))
    throw new TimesealError('mismatch', `${PUBLIC_MLDSA_RAW} is not the key in ${PUBLIC_MLDSA_PEM}`);
  // The checkpoint keys witnesses know, when published (archives made before `timeseal keys add` have none).
  const optional = async (name: string) => {
    const data = await reader.read(name);
    return data === undefined ? undefined : fromUtf8(data, name);
  };
  return {
    ecdsa,
    mldsa,
    ...checkpointKeysFromVkeys(await optional(PUBLIC_ED25519_VKEY), await optional(PUBLIC_MLDSA44_VKEY)),
  };
}

/** Where an archive's public keys are taken from: --keys, else <site>/keys/ for an archive URL, else the configured folder. */
/** The COSE receipt keys published at `keysLocation` (docs/FORMAT.md §11): in use (both or neither) and retired. */
export async function loadReceiptKeys(keysLocation: string, timeoutMs: number): Promise<ReceiptKeyEntry[]> {
  const reader = readerFor(keysLocation, timeoutMs);
  const [es256, mldsa, retired] = await Promise.all([
    reader.read(PUBLIC_RECEIPT_ES256_PEM),
    reader.read(PUBLIC_RECEIPT_MLDSA_PEM),
    reader.read(RETIRED_RECEIPT_KEYS),
  ]);
  return [
    ...receiptKeysFromPems(
      es256 && fromUtf8(es256, PUBLIC_RECEIPT_ES256_PEM),
      mldsa && fromUtf8(mldsa, PUBLIC_RECEIPT_MLDSA_PEM),
    ),
    ...(retired === undefined ? [] : parseRetiredReceiptKeys(fromUtf8(retired, RETIRED_RECEIPT_KEYS))),
  ];
}

export function keysLocationFor(
  archive: string,
  keys: string | undefined,
  configured: string,
): { keysLocation: string; keysFrom: '--keys' | 'archive host' | 'configured' } {
  if (keys !== undefined) return { keysLocation: keys, keysFrom: '--keys' };
  if (/^https?:\/\//.test(archive))
    return {
      keysLocation: new URL('../keys/', archive.endsWith('/') ? archive : `${archive}/`).href,
      keysFrom: 'archive host',
    };
  return { keysLocation: configured, keysFrom: 'configured' };
}

export function registerVerify(program: TimesealCommand, ctx: () => Context): void {
  program
    .command('verify')
    .description(
      'recompute and check the whole archive: tiles, roots, checkpoints, ledgers, signatures, chain of days, index',
    )
    .option('--archive <dir-or-url>', 'archive folder, URL or s3://BUCKET/PREFIX (default: TIMESEAL_ARCHIVE)')
    .option(
      '--keys <dir-or-url>',
      'public keys folder or URL (default: TIMESEAL_KEYS, or <site>/keys/ for an archive URL)',
    )
    .option('--timeout <ms>', 'deadline of each HTTP request, in milliseconds', '30000')
    .option('--json', 'machine-readable output')
    .act(async (opts: { archive?: string; keys?: string; timeout: string; json?: boolean }) => {
      const c = ctx();
      const timeoutMs = Number(opts.timeout);
      if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
        throw new UsageError(`--timeout must be a whole number of milliseconds, got ${JSON.stringify(opts.timeout)}`);
      // An s3:// archive is read from its bucket (its working copy is not what readers see).
      const location = opts.archive ?? c.config.archiveStore ?? c.config.archive;
      const remote = /^(https?|s3):\/\//.test(location);
      // Named explicitly, a missing folder is a mistake; the default one simply has nothing published yet.
      if (!remote && opts.archive !== undefined && !fs.existsSync(location)) {
        throw new TimesealError('not-found', `archive folder ${location} does not exist`);
      }
      const { keysLocation, keysFrom } = keysLocationFor(location, opts.keys, c.config.keys);
      if (keysFrom === 'archive host')
        process.stderr.write(
          `timeseal: keys: taken from ${keysLocation} on the same host as the archive: pin them with --keys DIR|URL\n`,
        );
      const keys = await loadKeys(keysLocation, timeoutMs);
      const keysReader = readerFor(keysLocation, timeoutMs);
      const [policy, retired, tsaCa, receiptKeys] = await Promise.all([
        keysReader.read(WITNESS_POLICY_FILE),
        keysReader.read(RETIRED_WITNESSES_FILE),
        keysReader.read(TSA_CA_FILE),
        // The COSE receipt keys (docs/FORMAT.md §11), when published: both or neither.
        loadReceiptKeys(keysLocation, timeoutMs),
      ]);
      const reader = await openArchiveReader(location, timeoutMs);
      const report = await verifyArchive(reader, keys, {
        ...(policy === undefined ? {} : { witnessPolicy: fromUtf8(policy, WITNESS_POLICY_FILE) }),
        ...(retired === undefined ? {} : { retiredWitnesses: fromUtf8(retired, RETIRED_WITNESSES_FILE) }),
        ...(tsaCa === undefined ? {} : { tsaCaPem: fromUtf8(tsaCa, TSA_CA_FILE) }),
        ...(receiptKeys.length === 0 ? {} : { receiptKeys }),
        issuerKeys: loadIssuerKeys(setting(process.env, 'SCITT_ISSUER_KEYS')),
      });
      output(!!opts.json).result({ ...report, keys: { location: keysLocation, from: keysFrom } }, () =>
        report.ok
          ? [
              `OK: ${report.location} — ${report.days} day${report.days === 1 ? '' : 's'}, tree size ${report.treeSize}, root ${report.root ?? '(empty)'}; ${report.filesChecked} files checked.`,
              ...report.notes.map((n) => `  note: ${n}`),
            ]
          : [
              `FAILED: ${report.location} — ${report.problems.length} problem${report.problems.length === 1 ? '' : 's'}:`,
              ...report.problems.map((p) => `  ${p}`),
            ],
      );
      return report.ok ? 'ok' : 'failed';
    });
}
