// `timeseal receipt check FILE.receipt.cose (--file F | --digest HEX) [--keys DIR|URL]`: a COSE receipt of
// inclusion (RFC 9942; docs/FORMAT.md §11) checked for a file's SHA-256 or a digest with the receipt keys the keys
// folder publishes (receipt-es256.pem, receipt-mldsa65.pem, and the retired ones of receipt-keys.retired): its
// inclusion proof from SHA-256(0x00 || hash) to a root, and the ES256 or ML-DSA-65 signature over that root
// (core/cose-receipt.ts verifyReceipt). The outcome: ok when valid, failed when not.
import crypto from 'node:crypto';
import { verifyReceipt, type VerifiedReceipt } from '../../core/cose-receipt.ts';
import { fromHex } from '../../core/encoding.ts';
import type { Outcome } from '../../core/exit-codes.ts';
import { TimesealError } from '../../core/errors.ts';
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
  const timeoutMs = Number(opts.timeout);
  const { keysLocation, keysFrom } = keysLocationFor(opts.archive ?? c.config.archive, opts.keys, c.config.keys);
  const keys = await loadReceiptKeys(keysLocation, timeoutMs);
  if (keys.length === 0)
    throw new TimesealError('not-found', `no receipt keys (receipt-es256.pem, receipt-mldsa65.pem) in ${keysLocation}`);
  const out = output(!!opts.json);
  let v: VerifiedReceipt;
  try {
    v = verifyReceipt(receipt, fromHex(hash), keys);
  } catch (err) {
    const reason = (err as Error).message;
    out.result({ state: 'invalid', receipt: file, hash, reason }, () => [
      `INVALID: ${file} is not a sound COSE receipt for this ${opts.file !== undefined ? 'file' : 'digest'}: ${reason}.`,
    ]);
    return 'failed';
  }
  out.result({ state: 'valid', receipt: file, hash, ...v, keys: { location: keysLocation, from: keysFrom } }, () => [
    `${file}: a COSE receipt (RFC 9942, ${v.alg === -7 ? 'ES256' : 'ML-DSA-65'}) of ${v.iss} for ${v.sub}`,
    `  leaf ${v.leafIndex} of the tree of size ${v.treeSize}, root ${v.root}; receipt key kid ${v.kid} (from ${keysLocation})`,
    `VALID: its inclusion proof leads from SHA-256 ${hash} to the root, and the receipt key's signature over it verifies.`,
  ]);
  return 'ok';
}
