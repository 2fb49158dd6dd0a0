// `timeseal receipt check FILE.receipt.cose (--file F | --digest HEX) [--keys DIR|URL]`: a COSE receipt of
// inclusion (RFC 9942; docs/FORMAT.md §11) checked for a file's SHA-256 or a digest with the receipt keys the keys
// folder publishes (receipt-es256.pem, receipt-mldsa65.pem, and the retired ones of receipt-keys.retired): its
// inclusion proof from SHA-256(0x00 || hash) to a root, and the ES256 or ML-DSA-65 signature over that root
// (core/cose-receipt.ts verifyReceipt). The outcome: ok when valid, failed when not.
// `timeseal receipt check FILE` of a SCITT Transparent Statement (RFC 9943 §7; docs/FORMAT.md §12): each receipt
// of its unprotected header (394) checked the same way for the statement's entry, which the statement itself
// gives (SHA-256 of its form on the log), so no --file or --digest is needed.
import crypto from 'node:crypto';
import { verifyReceipt, type VerifiedReceipt } from '../../core/cose-receipt.ts';
import { fromHex, toHex } from '../../core/encoding.ts';
import type { Outcome } from '../../core/exit-codes.ts';
import { TimesealError } from '../../core/errors.ts';
import { readTransparentStatement } from '../../core/signed-statement.ts';
import { nodeSha256 } from '../../runtime/node-hash.ts';
import { UsageError } from '../../runtime/config.ts';
import type { Context } from '../context.ts';
import { output } from '../output.ts';
import { readFile, type CheckOptions } from '../receipt-check.ts';
import { keysLocationFor, loadReceiptKeys } from './verify.ts';

export async function checkCoseReceipt(file: string, opts: CheckOptions, c: Context): Promise<Outcome> {
  const receipt = readFile(file, 'COSE receipt');
  const hash =
    opts.file !== undefined
      ? crypto.createHash('sha256').update(readFile(opts.file, 'file')).digest('hex')
      : opts.digest!.toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(hash))
    throw new UsageError(
      `a COSE receipt is for a SHA-256 hash: --digest has ${hash.length} hexadecimal characters, not 64`,
    );
  const keys = await receiptKeysFor(opts, c);
  const out = output(!!opts.json);
  let v: VerifiedReceipt;
  try {
    v = verifyReceipt(receipt, fromHex(hash), keys.keys);
  } catch (err) {
    const reason = (err as Error).message;
    out.result({ state: 'invalid', receipt: file, hash, reason }, () => [
      `INVALID: ${file} is not a sound COSE receipt for this ${opts.file !== undefined ? 'file' : 'digest'}: ${reason}.`,
    ]);
    return 'failed';
  }
  out.result({ state: 'valid', receipt: file, hash, ...v, keys: keys.from }, () => [
    `${file}: a COSE receipt (RFC 9942, ${algName(v)}) of ${v.iss} for ${v.sub}`,
    `  leaf ${v.leafIndex} of the tree of size ${v.treeSize}, root ${v.root}; receipt key kid ${v.kid} (from ${keys.from.location})`,
    `VALID: its inclusion proof leads from SHA-256 ${hash} to the root, and the receipt key's signature over it verifies.`,
  ]);
  return 'ok';
}

const algName = (v: VerifiedReceipt) => (v.alg === -7 ? 'ES256' : 'ML-DSA-65');

/** The receipt keys of the keys folder (current and retired), and where they were read. */
async function receiptKeysFor(opts: CheckOptions, c: Context) {
  const timeoutMs = Number(opts.timeout);
  const { keysLocation, keysFrom } = keysLocationFor(opts.archive ?? c.config.archive, opts.keys, c.config.keys);
  const keys = await loadReceiptKeys(keysLocation, timeoutMs);
  if (keys.length === 0)
    throw new TimesealError('not-found', `no receipt keys (receipt-es256.pem, receipt-mldsa65.pem) in ${keysLocation}`);
  return { keys, from: { location: keysLocation, from: keysFrom } };
}

/** A Transparent Statement: every receipt it carries, for its statement's entry. Valid when all of them are. */
export async function checkTransparentStatement(file: string, opts: CheckOptions, c: Context): Promise<Outcome> {
  if (opts.file !== undefined || opts.digest !== undefined)
    throw new UsageError(
      `${file} is a Transparent Statement: its receipts are for the statement itself; give no --file or --digest`,
    );
  const out = output(!!opts.json);
  let parts;
  try {
    parts = readTransparentStatement(readFile(file, 'Transparent Statement'), nodeSha256);
  } catch (err) {
    const reason = (err as Error).message;
    out.result({ state: 'invalid', receipt: file, reason }, () => [`INVALID: ${file}: ${reason}.`]);
    return 'failed';
  }
  const entry = toHex(parts.entry);
  const keys = await receiptKeysFor(opts, c);
  const results = parts.receipts.map((r) => {
    try {
      return { state: 'valid' as const, ...verifyReceipt(r, parts.entry, keys.keys) };
    } catch (err) {
      return { state: 'invalid' as const, reason: (err as Error).message };
    }
  });
  const valid = results.every((r) => r.state === 'valid');
  out.result({ state: valid ? 'valid' : 'invalid', receipt: file, entry, receipts: results, keys: keys.from }, () => [
    `${file}: a SCITT Transparent Statement with ${results.length} receipt${results.length === 1 ? '' : 's'}; its entry (SHA-256 of the statement on the log) is ${entry}`,
    ...results.map((r, i) =>
      r.state === 'valid'
        ? `  receipt ${i + 1}: ${algName(r)} of ${r.iss} for ${r.sub}, leaf ${r.leafIndex} of the tree of size ${r.treeSize}, root ${r.root}: verifies`
        : `  receipt ${i + 1}: ${r.reason}`,
    ),
    valid
      ? `VALID: every receipt's inclusion proof leads from the entry to its root, signed by a receipt key (from ${keys.from.location}). The issuer's signature is for its verifier to check.`
      : `INVALID: ${file}: a receipt does not verify for the statement's entry.`,
  ]);
  return valid ? 'ok' : 'failed';
}
