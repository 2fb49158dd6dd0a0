// COSE receipts of inclusion (RFC 9942; the server's docs/FORMAT.md §11) checked offline with the pinned receipt
// keys: the receipts a proof bundle carries (`cose_receipts`, timeseal-proof/4), and a `.receipt.cose` given alone
// (what `upgrade` writes beside a proof file). The check is core/cose-receipt.ts verifyReceipt: the inclusion
// proof from SHA-256(0x00 || hash) to a root, and the receipt key's ES256 or ML-DSA-65 signature over that root.
// A SCITT Transparent Statement (RFC 9943 §7) is checked the same way: each receipt it carries (394), for the
// statement's entry (SHA-256 of its form on the log, core/signed-statement.ts readTransparentStatement).
import {
  ALGORITHM_NAMES,
  parseCoseSign1,
  receiptHeader,
  verifyReceipt,
  type ReceiptPublicKey,
} from '../../core/cose-receipt.ts';
import { fromBase64, fromHex, toHex } from '../../core/encoding.ts';
import { EXIT_CODES } from '../../core/exit-codes.ts';
import { readTransparentStatement } from '../../core/signed-statement.ts';
import type { LayerReport, VerifyReport } from './types.ts';

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** One layer per receipt, for `hash`; with `leaf` (a bundle's), the receipt must be for that leaf and root. */
export function coseReceiptLayers(
  receipts: Array<string | Uint8Array>,
  hash: string,
  keys: readonly ReceiptPublicKey[],
  leaf?: { leafIndex: number; treeSize: number; root: string },
  verified?: Map<string, boolean>,
): LayerReport[] {
  return receipts.map((r, i) => {
    const label = receipts.length > 1 ? `COSE receipt ${i + 1}: ` : '';
    try {
      const bytes = typeof r === 'string' ? fromBase64(r, 'cose_receipts') : r;
      const alg = ALGORITHM_NAMES[receiptHeader(parseCoseSign1(bytes, 'receipt'), 'receipt').alg];
      if (keys.length === 0)
        return {
          layer: 'cose-receipt',
          status: 'skipped',
          checked: `${label}${alg}: not checked: no receipt keys (receipt-es256.pem, receipt-mldsa65.pem) are pinned for this server`,
        };
      const v = verifyReceipt(bytes, fromHex(hash, 'hash'), keys, verified === undefined ? {} : { verified });
      if (leaf && (v.leafIndex !== leaf.leafIndex || v.treeSize !== leaf.treeSize || v.root !== leaf.root))
        throw new Error(
          `it is for leaf ${v.leafIndex} of a tree of ${v.treeSize} (root ${v.root}), the bundle for leaf ${leaf.leafIndex} of ${leaf.treeSize} (root ${leaf.root})`,
        );
      return {
        layer: 'cose-receipt',
        status: 'ok',
        checked: `${label}${alg} receipt of ${v.iss} for ${v.sub}: the inclusion proof leads from the hash at leaf ${v.leafIndex} to the root ${v.root} of the tree of size ${v.treeSize}, signed by the receipt key (kid ${v.kid.slice(0, 16)}…)`,
      };
    } catch (err) {
      return { layer: 'cose-receipt', status: 'failed', checked: `${label}${message(err)}` };
    }
  });
}

/**
 * A `.receipt.cose` alone, for `hash` (the document's SHA-256, or a digest given): the document layer, then the
 * receipt. `keys` null: none pinned for the log the receipt names (`why` says so).
 */
export function verifyCoseReceipt(
  receipt: Uint8Array,
  options: { hash: string; documentHash?: string; keys: readonly ReceiptPublicKey[] | null; why?: string },
): VerifyReport {
  const layers: LayerReport[] = [];
  const hash = options.hash.toLowerCase();
  if (options.documentHash !== undefined)
    layers.push({ layer: 'document', status: 'ok', checked: `the document's SHA-256 is ${options.documentHash}` });
  else
    layers.push({ layer: 'document', status: 'skipped', checked: `no document given: checked for the hash ${hash}` });
  return reportOf(hash, [...layers, ...receiptLayers([receipt], hash, options)]);
}

/** The receipts' layers, or one failed 'keys' layer when no receipt keys are pinned (`why` says so). */
function receiptLayers(
  receipts: Uint8Array[],
  hash: string,
  options: { keys: readonly ReceiptPublicKey[] | null; why?: string },
): LayerReport[] {
  if (options.keys === null || options.keys.length === 0)
    return [{ layer: 'keys', status: 'failed', checked: options.why ?? 'no receipt keys are pinned' }];
  return coseReceiptLayers(receipts, hash, options.keys);
}

function reportOf(hash: string, layers: LayerReport[]): VerifyReport {
  const failed = layers.filter((l) => l.status === 'failed');
  const state = failed.length > 0 ? 'invalid' : 'complete';
  return {
    state,
    exitCode: EXIT_CODES[state === 'complete' ? 'ok' : 'failed'],
    hash,
    layers,
    existedNoLaterThan: null,
    problems: failed.map((l) => `${l.layer}: ${l.checked}`),
  };
}

/** The iss of a COSE receipt (the log it names), or null when it cannot be read. */
export function receiptIss(receipt: Uint8Array): string | null {
  try {
    return receiptHeader(parseCoseSign1(receipt, 'receipt'), 'receipt').iss;
  } catch {
    return null;
  }
}

/** The receipts of a Transparent Statement, read from `bytes`, or the reason it cannot be read. */
export function transparentStatementParts(bytes: Uint8Array): { entry: string; receipts: Uint8Array[] } | string {
  try {
    const parts = readTransparentStatement(bytes);
    return { entry: toHex(parts.entry), receipts: parts.receipts };
  } catch (err) {
    return message(err);
  }
}

/** A Transparent Statement: the statement's entry, then each receipt it carries checked for that entry. */
export function verifyTransparentStatement(
  bytes: Uint8Array,
  options: { keys: readonly ReceiptPublicKey[] | null; why?: string },
): VerifyReport {
  const parts = transparentStatementParts(bytes);
  if (typeof parts === 'string') return reportOf('', [{ layer: 'statement', status: 'failed', checked: parts }]);
  return reportOf(parts.entry, [
    {
      layer: 'statement',
      status: 'ok',
      checked: `a SCITT Transparent Statement with ${parts.receipts.length} receipt${parts.receipts.length === 1 ? '' : 's'}; the statement's entry (SHA-256 of its form on the log) is ${parts.entry}`,
    },
    ...receiptLayers(parts.receipts, parts.entry, options),
  ]);
}
