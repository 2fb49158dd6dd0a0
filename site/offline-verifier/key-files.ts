// The files of the keys folder (TIMESEAL_KEYS, default keys/) that the offline verifier's build embeds
// (build.ts), named once: scripts/build-inputs.ts counts each of them, so that a key added or rotated
// (`timeseal keys add`, `keys rotate-receipt`) rebuilds the page at the next `make start`.
import { RETIRED_RECEIPT_KEYS } from '../../core/cose-receipt.ts';

export const VERIFIER_KEY_FILES = {
  /** The log's ECDSA P-256 key. */
  ecdsa: 'public.pem',
  /** The log's ML-DSA-65 key, raw; or as PEM. */
  mldsa: 'dilithium_public.key',
  mldsaPem: 'dilithium_public.pem',
  /** The COSE receipt keys (docs/FORMAT.md §11). */
  receiptEs256: 'receipt-es256.pem',
  receiptMldsa65: 'receipt-mldsa65.pem',
  /** The receipt keys a rotation retired, with the days they signed. */
  retiredReceipts: RETIRED_RECEIPT_KEYS,
  /** The checkpoint's witness-style signers (signed-note vkeys). */
  ed25519: 'ed25519.vkey',
  mldsa44: 'mldsa44.vkey',
} as const;
