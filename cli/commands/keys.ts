// `timeseal keys init`: create the signing keys if absent (ECDSA P-256 and ML-DSA-65 for ledgers and checkpoints,
// Ed25519 and ML-DSA-44 for the checkpoint lines witnesses know, the RFC 3161 time-stamp authority's key and
// certificates, the COSE receipt keys: ES256 and ML-DSA-65, runtime/receipt-keys.ts). `timeseal keys add`: the last
// three sets for an archive made before them.
import type { TimesealCommand } from '../command.ts';
import fs from 'node:fs';
import path from 'node:path';
import { DAYS_PATH, parseDays, receiptSignaturePath } from '../../core/archive.ts';
import { parseCoseSign1, receiptHeader, receiptKid, type ReceiptPublicKey } from '../../core/cose-receipt.ts';
import { equalBytes } from '../../core/encoding.ts';
import { TimesealError } from '../../core/errors.ts';
import { logOriginOf } from '../../runtime/config.ts';
import { addMissingKeys, initKeys } from '../../runtime/keys.ts';
import { loadReceiptPublicKeys, rotateReceiptKeys } from '../../runtime/receipt-keys.ts';
import type { Context } from '../context.ts';
import { output } from '../output.ts';

export function registerKeys(program: TimesealCommand, ctx: () => Context): void {
  const keys = program.command('keys').description('manage the signing keys');
  keys
    .command('rotate-receipt')
    .description(
      'replace the two COSE receipt keys with new ones; the old keys are listed in keys/receipt-keys.retired with the days they signed, and stay in the key set',
    )
    .option('--json', 'machine-readable output')
    .act(async (opts: { json?: boolean }) => {
      const { config } = ctx();
      const signed = daysSignedBy(config.archive, loadReceiptPublicKeys(config.keys));
      const files = rotateReceiptKeys({ keys: config.keys, privateKeys: config.privateKeys }, signed);
      output(!!opts.json).result({ created: files, retired_days: signed }, () => [
        `Rotated the COSE receipt keys; the old ones signed ${signed[0]} to ${signed[1]} and stay in GET /.well-known/scitt-keys:`,
        ...files.map((f) => `  ${f}`),
        'Restart `timeseal serve` to serve the new key set; the next build signs with the new keys.',
      ]);
      return 'ok';
    });
  keys
    .command('init')
    .description(
      "create the ECDSA P-256, ML-DSA-65, Ed25519 and ML-DSA-44 keys, the time-stamp authority's key and certificates and the COSE receipt keys (refuses to overwrite existing keys)",
    )
    .option('--json', 'machine-readable output')
    .act(async (opts: { json?: boolean }) => {
      const { config, clock } = ctx();
      const files = initKeys(
        { keys: config.keys, privateKeys: config.privateKeys },
        config.logOrigin,
        clock(),
        logOriginOf(config.origin),
      );
      output(!!opts.json).result({ created: files }, () => [
        'Created signing keys:',
        ...files.map((f) => `  ${f}`),
        `Private keys (mode 0600) are in ${config.privateKeys}; keep them out of any served folder and back them up.`,
      ]);
      return 'ok';
    });
  keys
    .command('add')
    .description(
      "create the Ed25519 and ML-DSA-44 checkpoint keys, the time-stamp authority's key and certificates and the COSE receipt keys an archive made before them lacks (existing keys and past checkpoints stay as they are)",
    )
    .option('--json', 'machine-readable output')
    .act(async (opts: { json?: boolean }) => {
      const { config, clock } = ctx();
      const added = addMissingKeys(
        { keys: config.keys, privateKeys: config.privateKeys },
        config.logOrigin,
        clock(),
        logOriginOf(config.origin),
      );
      const files = [...added.checkpoint, ...added.tsa, ...added.receipt];
      output(!!opts.json).result({ created: files }, () => [
        ...(added.checkpoint.length > 0
          ? [
              `Created the checkpoint keys of ${config.logOrigin}:`,
              ...added.checkpoint.map((f) => `  ${f}`),
              'From the next build on, each new checkpoint carries an Ed25519 line and an ML-DSA-44 cosignature line besides its ECDSA P-256 and ML-DSA-65 lines; published checkpoints do not change.',
            ]
          : []),
        ...(added.tsa.length > 0
          ? [
              "Created the time-stamp authority's key and certificates (POST /tsa answers RFC 3161 requests after a restart of `timeseal serve`):",
              ...added.tsa.map((f) => `  ${f}`),
            ]
          : []),
        ...(added.receipt.length > 0
          ? [
              'Created the COSE receipt keys (ES256 and ML-DSA-65): from the next build on, each new day is signed for COSE receipts (GET /.well-known/scitt-keys); published days keep none:',
              ...added.receipt.map((f) => `  ${f}`),
            ]
          : []),
      ]);
      return 'ok';
    });
}

/** The first and last published day whose ES256 receipt signature is by the current ES256 receipt key. */
function daysSignedBy(archive: string, current: ReceiptPublicKey[]): [string, string] {
  const es256 = current[0];
  if (es256 === undefined)
    throw new TimesealError('not-found', 'no receipt keys to rotate (`timeseal keys add` makes them)');
  const daysFile = path.join(archive, DAYS_PATH);
  const days = fs.existsSync(daysFile) ? parseDays(fs.readFileSync(daysFile, 'utf8')).days : [];
  const signed = days.filter((d) => {
    const file = path.join(archive, receiptSignaturePath(d.date, 'es256'));
    if (!fs.existsSync(file)) return false;
    const rel = receiptSignaturePath(d.date, 'es256');
    return equalBytes(receiptHeader(parseCoseSign1(fs.readFileSync(file), rel), rel).kid, receiptKid(es256));
  });
  if (signed.length === 0)
    throw new TimesealError('conflict', 'the receipt keys have signed no published day yet: nothing to keep them for');
  return [signed[0]!.date, signed.at(-1)!.date];
}
