// `timeseal ots info|verify|upgrade FILE.ots`: any OpenTimestamps proof, not only Timeseal's.
//   info     the proof as a readable tree (the layout of the reference client's `ots info`);
//   verify   with --file F (hashed with the proof's file hash op) or --digest HEX: every Bitcoin attestation
//            checked against block headers from BITCOIN_ESPLORA_URL / BITCOIN_RPC_URL; prints the block and
//            its time. Its outcome: ok when one verifies and none fails, pending when none is in Bitcoin yet but
//            a calendar has it (pending attestations) and none fails, failed otherwise;
//   upgrade  asks the trusted calendars named in the proof for upgrades and rewrites the file (atomically);
//   verify-receipt  the verdict on a COSE receipt's Bitcoin anchor (pipeline/anchor/receipt-anchor.ts): valid
//            (exit 0), invalid (1), or unverifiable (2 while too early or fewer than 6 confirmations; 75 when no
//            block header could be had).
import fs from 'node:fs';
import path from 'node:path';
import type { TimesealCommand } from '../command.ts';
import { equalBytes, fromHex, toHex } from '../../core/encoding.ts';
import { MismatchError, TimesealError, withContext } from '../../core/errors.ts';
import {
  formatAttestation,
  formatDetached,
  hashFile,
  mergeTimestamps,
  parseDetached,
  serializeDetached,
  walkAttestations,
  type DetachedTimestampFile,
} from '../../core/ots.ts';
import { checkBitcoinAttestations, collectUpgrades } from '../../pipeline/anchor/anchor.ts';
import { loadAnchorConfig } from '../../pipeline/anchor/config.ts';
import { headerSourceFor } from '../../pipeline/anchor/headers.ts';
import { verifyReceiptAnchor } from '../../pipeline/anchor/receipt-anchor.ts';
import { UsageError } from '../../runtime/config.ts';
import { loadReceiptPublicKeys, loadRetiredReceiptKeys } from '../../runtime/receipt-keys.ts';
import type { Context } from '../context.ts';
import { output } from '../output.ts';

/** Larger than any proof the reference limits allow in practice; refuses to read huge files by mistake. */
const MAX_OTS_FILE = 4 * 1024 * 1024;

function readProof(file: string): DetachedTimestampFile {
  let bytes: Buffer;
  try {
    const size = fs.statSync(file).size;
    // Not a usage mistake: the file named is not an OpenTimestamps proof (exit 1, core/exit-codes.ts).
    if (size > MAX_OTS_FILE)
      throw new TimesealError('format', `${file}: ${size} bytes is too large for an OpenTimestamps proof`);
    bytes = fs.readFileSync(file);
  } catch (err) {
    if (err instanceof TimesealError) throw err;
    throw withContext(`reading ${file}`, err);
  }
  try {
    return parseDetached(new Uint8Array(bytes));
  } catch (err) {
    throw withContext(file, err);
  }
}

function attestationsJson(d: DetachedTimestampFile) {
  return walkAttestations(d.timestamp).map(({ message, attestation }) => ({
    message: toHex(message),
    ...(attestation.kind === 'pending'
      ? { kind: 'pending', uri: attestation.uri }
      : attestation.kind === 'bitcoin'
        ? { kind: 'bitcoin', height: attestation.height }
        : { kind: 'unknown', tag: toHex(attestation.tag), payload: toHex(attestation.payload) }),
  }));
}

export function registerOts(program: TimesealCommand, ctx: () => Context): void {
  const ots = program.command('ots').description('inspect, verify and upgrade any OpenTimestamps proof');

  ots
    .command('info')
    .description('show an OpenTimestamps proof as a readable tree')
    .argument('<file>', 'the .ots file')
    .option('--json', 'machine-readable output')
    .act(async (file: string, opts: { json?: boolean }) => {
      const d = readProof(file);
      // The JSON only with --json: it repeats every attestation's message in hex beside the tree.
      output(!!opts.json).result(
        opts.json
          ? { file_hash_op: d.fileHashOp, digest: toHex(d.timestamp.message), attestations: attestationsJson(d) }
          : undefined,
        () => [formatDetached(d).trimEnd()],
      );
      return 'ok';
    });

  ots
    .command('verify')
    .description('verify a proof against Bitcoin block headers; prints the attested block and time')
    .argument('<file>', 'the .ots file')
    .option('--file <path>', 'the stamped file (hashed with the proof’s file hash op)')
    .option('--digest <hex>', 'the stamped digest, hexadecimal')
    .option('--json', 'machine-readable output')
    .act(async (file: string, opts: { file?: string; digest?: string; json?: boolean }) => {
      if ((opts.file === undefined) === (opts.digest === undefined))
        throw new UsageError('give exactly one of --file F or --digest HEX');
      let digest: Uint8Array;
      if (opts.digest !== undefined) {
        if (!/^([0-9a-fA-F]{2})+$/.test(opts.digest))
          throw new UsageError(`--digest is not hexadecimal: ${opts.digest}`);
        digest = fromHex(opts.digest);
      }
      const d = readProof(file);
      if (opts.file !== undefined) {
        try {
          digest = hashFile(d.fileHashOp, new Uint8Array(fs.readFileSync(opts.file)));
        } catch (err) {
          throw withContext(`reading ${opts.file}`, err);
        }
      }
      if (!equalBytes(digest!, d.timestamp.message)) {
        throw new MismatchError(
          `${d.fileHashOp} digest of the stamped data (the proof is for other data)`,
          toHex(d.timestamp.message),
          toHex(digest!),
        );
      }
      ctx();
      const config = loadAnchorConfig(process.env, { stamping: false });
      const headers = headerSourceFor(config.headerSource, config.bitcoinTimeoutMs);
      const checked = await checkBitcoinAttestations(d.timestamp, { headers, network: config.network });
      const pending = [
        ...new Set(
          walkAttestations(d.timestamp).flatMap(({ attestation: a }) => (a.kind === 'pending' ? [a.uri] : [])),
        ),
      ];
      const ok = checked.verified.length > 0 && checked.problems.length === 0;
      const verified = checked.verified.map((v) => ({
        height: v.height,
        time: new Date(v.time * 1000).toISOString().replace('.000Z', 'Z'),
        block_hash: v.blockHash,
        merkle_root: v.merkleRoot,
      }));
      output(!!opts.json).result(
        {
          ok,
          file_hash_op: d.fileHashOp,
          digest: toHex(d.timestamp.message),
          network: config.network,
          header_source: headers.name,
          verified,
          problems: checked.problems,
          pending,
        },
        () => [
          ...verified.map(
            (v) => `Success! Bitcoin block ${v.height} attests existence as of ${v.time} (block ${v.block_hash})`,
          ),
          ...checked.problems.map((p) => `FAILED: ${p}`),
          ...(checked.bitcoinCount === 0
            ? [
                `Not yet in Bitcoin: no Bitcoin attestation${pending.length ? `; pending at ${pending.join(', ')} (run timeseal ots upgrade)` : ''}`,
              ]
            : []),
        ],
      );
      if (ok) return 'ok';
      return checked.problems.length === 0 && checked.bitcoinCount === 0 && pending.length > 0 ? 'pending' : 'failed';
    });

  ots
    .command('verify-receipt')
    .description(
      "the verdict on a COSE receipt's Bitcoin anchor: valid, invalid or unverifiable (6 confirmations needed)",
    )
    .argument('<file>', 'the .ots of the receipt’s root (GET /api/receipt-anchor/<hash>.ots)')
    .requiredOption('--receipt <path>', 'the COSE receipt (.receipt.cose)')
    .requiredOption(
      '--entry <hex>',
      'the 32-byte entry the receipt is for (the hash, or a statement’s entry), hexadecimal',
    )
    .option(
      '--keys <dir>',
      'the folder of receipt-es256.pem, receipt-mldsa65.pem and receipt-keys.retired (default: the keys folder)',
    )
    .option('--json', 'machine-readable output')
    .act(async (file: string, opts: { receipt: string; entry: string; keys?: string; json?: boolean }) => {
      if (!/^[0-9a-fA-F]{64}$/.test(opts.entry))
        throw new UsageError(`--entry must be 64 hexadecimal digits: ${opts.entry}`);
      const anchor = readProof(file);
      let receipt: Uint8Array;
      try {
        receipt = new Uint8Array(fs.readFileSync(opts.receipt));
      } catch (err) {
        throw withContext(`reading ${opts.receipt}`, err);
      }
      const keysDir = opts.keys ?? ctx().config.keys;
      const keys = [...loadReceiptPublicKeys(keysDir), ...loadRetiredReceiptKeys(keysDir)];
      if (keys.length === 0)
        throw new TimesealError(
          'not-found',
          `${keysDir} holds no receipt keys (receipt-es256.pem, receipt-mldsa65.pem)`,
        );
      const config = loadAnchorConfig(process.env, { stamping: false });
      const headers = headerSourceFor(config.headerSource, config.bitcoinTimeoutMs);
      const report = await verifyReceiptAnchor({
        receipt,
        entry: fromHex(opts.entry),
        anchor,
        keys,
        headers,
        network: config.network,
      });
      output(!!opts.json).result(
        {
          verdict: report.verdict,
          reason: report.reason,
          ...(report.receipt ? { root: report.receipt.root, day: report.receipt.sub } : {}),
          ...(report.block
            ? {
                block: {
                  height: report.block.height,
                  time: report.block.time,
                  block_hash: report.block.blockHash,
                  confirmations: report.block.confirmations,
                },
              }
            : {}),
          header_source: headers.name,
        },
        () => [`${report.verdict}: ${report.reason}`],
      );
      if (report.verdict === 'valid') return 'ok';
      if (report.verdict === 'invalid') return 'failed';
      return report.sourceFailed ? 'temporary' : 'pending';
    });

  ots
    .command('upgrade')
    .description('fetch pending upgrades from the trusted calendars named in the proof and rewrite it')
    .argument('<file>', 'the .ots file (rewritten in place, atomically)')
    .option('--json', 'machine-readable output')
    .act(async (file: string, opts: { json?: boolean }) => {
      const d = readProof(file);
      ctx();
      const config = loadAnchorConfig(process.env, { stamping: false });
      const { upgrades, notes } = await collectUpgrades(d.timestamp, config.trusted, config.calendarTimeoutMs);
      for (const u of upgrades) mergeTimestamps(d.timestamp, u.timestamp);
      if (upgrades.length > 0) {
        const temp = path.join(path.dirname(path.resolve(file)), `.${path.basename(file)}.tmp-${process.pid}`);
        fs.writeFileSync(temp, serializeDetached(d));
        fs.renameSync(temp, file);
      }
      const bitcoin = walkAttestations(d.timestamp).filter((a) => a.attestation.kind === 'bitcoin');
      output(!!opts.json).result(
        {
          upgraded_from: upgrades.map((u) => u.calendar),
          complete: bitcoin.length > 0,
          bitcoin: bitcoin.map((a) => formatAttestation(a.attestation)),
          notes,
        },
        () => [
          ...upgrades.map((u) => `Upgraded from ${u.calendar}`),
          ...notes,
          bitcoin.length > 0
            ? `Complete: ${bitcoin.map((a) => formatAttestation(a.attestation)).join(', ')}`
            : 'Not yet in Bitcoin; try again later.',
        ],
      );
      return 'ok';
    });
}
