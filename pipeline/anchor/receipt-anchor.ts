// The verdict on a COSE receipt's Bitcoin anchor (docs/FORMAT.md §11, "Anchored in Bitcoin"): given a receipt, the
// entry it is for and the `.ots` of its root (GET /api/receipt-anchor/<hash>.ots), one of
//   valid         the receipt verifies with the receipt keys, the `.ots` is for its root, and a Bitcoin
//                 attestation of it checks against a block header with at least ANCHOR_CONFIRMATIONS (6)
//                 confirmations — the product's strong state ("6 or more confirmations");
//   invalid       the receipt does not verify, the `.ots` is for another digest, or an attestation's block
//                 header contradicts it: the anchor is not evidence of that receipt;
//   unverifiable  not yet: no Bitcoin attestation (still pending at a calendar), fewer than 6 confirmations,
//                 or no block header could be had (the header source failed). Asking again later may change it.
import { verifyReceipt, type ReceiptPublicKey, type VerifiedReceipt } from '../../core/cose-receipt.ts';
import { toHex } from '../../core/encoding.ts';
import { walkAttestations, type DetachedTimestampFile } from '../../core/ots.ts';
import type { BitcoinNetwork } from '../../core/bitcoin.ts';
import { checkBitcoinAttestations } from './anchor.ts';
import type { HeaderSource } from './headers.ts';

/** Confirmations a Bitcoin attestation needs before the anchor is valid (the product's "6 or more"). */
export const ANCHOR_CONFIRMATIONS = 6;

export type AnchorVerdict = 'valid' | 'invalid' | 'unverifiable';

export interface ReceiptAnchorReport {
  verdict: AnchorVerdict;
  /** One sentence: why. */
  reason: string;
  /** The receipt's facts when it verified. */
  receipt?: VerifiedReceipt;
  /** The best (lowest) verified block, with its confirmations at the tip the header source gave. */
  block?: { height: number; time: string; blockHash: string; confirmations: number };
  /** unverifiable because the header source could not be asked (not because it is too early). */
  sourceFailed?: boolean;
}

export async function verifyReceiptAnchor(input: {
  receipt: Uint8Array;
  entry: Uint8Array;
  anchor: DetachedTimestampFile;
  keys: readonly ReceiptPublicKey[];
  headers: HeaderSource;
  network: BitcoinNetwork;
}): Promise<ReceiptAnchorReport> {
  let receipt: VerifiedReceipt;
  try {
    receipt = verifyReceipt(input.receipt, input.entry, input.keys);
  } catch (err) {
    return { verdict: 'invalid', reason: `the receipt does not verify: ${(err as Error).message}` };
  }
  const digest = toHex(input.anchor.timestamp.message);
  if (input.anchor.fileHashOp !== 'sha256' || digest !== receipt.root)
    return {
      verdict: 'invalid',
      receipt,
      reason: `the .ots is for ${input.anchor.fileHashOp} digest ${digest}, not the receipt's root ${receipt.root}`,
    };
  const checked = await checkBitcoinAttestations(input.anchor.timestamp, {
    headers: input.headers,
    network: input.network,
  });
  if (checked.rejected > 0) return { verdict: 'invalid', receipt, reason: checked.problems.join('; ') };
  const best = checked.verified[0];
  if (best === undefined) {
    if (checked.problems.length > 0)
      return {
        verdict: 'unverifiable',
        receipt,
        sourceFailed: true,
        reason: `no block header could be had: ${checked.problems.join('; ')}`,
      };
    const pending = walkAttestations(input.anchor.timestamp).some(({ attestation }) => attestation.kind === 'pending');
    return {
      verdict: 'unverifiable',
      receipt,
      reason: pending
        ? 'not in Bitcoin yet: the root is pending at a calendar (fetch the .ots again later)'
        : 'the .ots has no Bitcoin attestation',
    };
  }
  let tip: number;
  try {
    tip = await input.headers.tipHeight();
  } catch (err) {
    return {
      verdict: 'unverifiable',
      receipt,
      sourceFailed: true,
      reason: `the chain's tip could not be had: ${(err as Error).message}`,
    };
  }
  const confirmations = Math.max(tip - best.height + 1, 1);
  const block = {
    height: best.height,
    time: new Date(best.time * 1000).toISOString().replace('.000Z', 'Z'),
    blockHash: best.blockHash,
    confirmations,
  };
  if (confirmations < ANCHOR_CONFIRMATIONS)
    return {
      verdict: 'unverifiable',
      receipt,
      block,
      reason: `Bitcoin block ${best.height} attests the root with ${confirmations} confirmation${confirmations === 1 ? '' : 's'}; ${ANCHOR_CONFIRMATIONS} are needed`,
    };
  return {
    verdict: 'valid',
    receipt,
    block,
    reason: `Bitcoin block ${best.height} (${confirmations} confirmations) attests the receipt's root as of ${block.time}`,
  };
}
