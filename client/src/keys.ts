// The pinned key files read into the forms core/ checks with. Internal: its types are core's.
import { parseVkey, type Vkey } from '../../core/cosignature.ts';
import type { PublicKeySet } from '../../core/day.ts';
import { fromBase64 } from '../../core/encoding.ts';
import { pemCertificates } from '../../core/rfc3161.ts';
import { ALG_ES256, ALG_ML_DSA_65, parseRetiredReceiptKeys, type ReceiptPublicKey } from '../../core/cose-receipt.ts';
import { ecdsaPublicKeyFromPem, mldsaPublicKeyFromPem, MLDSA_PUBLIC_KEY_SIZE } from '../../core/sig.ts';
import { readWitnessPolicy, type WitnessPolicy } from '../../core/witness-policy.ts';
import { TimesealClientError } from './errors.ts';
import type { KeyFiles } from './types.ts';

/** The keys of a server in the form every check takes. */
export interface LoadedKeys {
  set: PublicKeySet;
  ed25519Vkey: Vkey | null;
  mldsa44Vkey: Vkey | null;
  /** DER certificates of the TSA root (receipts), empty when the server has none. */
  tsaRoots: Uint8Array[];
  policy: WitnessPolicy | null;
  /** The COSE receipt keys (ES256, ML-DSA-65) and the retired ones, empty when the server has none. */
  receiptKeys: ReceiptPublicKey[];
}

/** Parses key files; a malformed key is an 'invalid' error naming the file. */
export function loadKeys(files: KeyFiles): LoadedKeys {
  const named = <T>(name: string, f: () => T): T => {
    try {
      return f();
    } catch (err) {
      throw new TimesealClientError('invalid', `key ${name}: ${(err as Error).message}`, { cause: err });
    }
  };
  const ecdsa = named('public.pem', () => ecdsaPublicKeyFromPem(files.publicPem));
  const mldsa = named('dilithium_public.key', () => {
    const raw = fromBase64(files.dilithiumKey);
    if (raw.length !== MLDSA_PUBLIC_KEY_SIZE) throw new Error(`${raw.length} bytes, expected ${MLDSA_PUBLIC_KEY_SIZE}`);
    return raw;
  });
  const ed25519Vkey =
    files.ed25519Vkey === undefined ? null : named('ed25519.vkey', () => parseVkey(files.ed25519Vkey!));
  const mldsa44Vkey =
    files.mldsa44Vkey === undefined ? null : named('mldsa44.vkey', () => parseVkey(files.mldsa44Vkey!));
  const tsaRoots =
    files.tsaRootPem === undefined ? [] : named('timeseal-tsa-root.pem', () => pemCertificates(files.tsaRootPem!));
  const policy =
    files.witnessPolicy === undefined ? null : named('witnesses', () => readWitnessPolicy(files.witnessPolicy!));
  const receiptKeys: ReceiptPublicKey[] = [];
  if (files.receiptEs256Pem !== undefined)
    receiptKeys.push({
      alg: ALG_ES256,
      publicKey: named('receipt-es256.pem', () => ecdsaPublicKeyFromPem(files.receiptEs256Pem!)),
    });
  if (files.receiptMldsa65Pem !== undefined)
    receiptKeys.push({
      alg: ALG_ML_DSA_65,
      publicKey: named('receipt-mldsa65.pem', () => mldsaPublicKeyFromPem(files.receiptMldsa65Pem!)),
    });
  if (files.receiptKeysRetired !== undefined)
    receiptKeys.push(...named('receipt-keys.retired', () => parseRetiredReceiptKeys(files.receiptKeysRetired!)));
  const set: PublicKeySet = { ecdsa, mldsa };
  if (ed25519Vkey !== null) set.ed25519 = ed25519Vkey.publicKey;
  if (mldsa44Vkey !== null) set.mldsa44 = mldsa44Vkey.publicKey;
  return { set, ed25519Vkey, mldsa44Vkey, tsaRoots, policy, receiptKeys };
}
