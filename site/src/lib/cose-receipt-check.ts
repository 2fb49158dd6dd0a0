// A COSE receipt of inclusion checked in the browser (the /verify page's receipt card loads this module only once a
// `.receipt.cose` is given; RFC 9942, docs/FORMAT.md §11): the receipt keys this site publishes as a COSE Key Set
// (GET /.well-known/scitt-keys: the keys in use and the retired ones, each kid its RFC 9679 thumbprint), then
// core/cose-receipt.ts verifyReceipt for the person's hash — the file's SHA-256 made on this device, or a pasted
// hash: the inclusion proof leads from SHA-256(0x00 || hash) to a root, and the receipt key's ES256 or ML-DSA-65
// signature over that root verifies. A COSE receipt names no hash, so without a file or a hash nothing is judged.
import { parseCoseKeySet, verifyReceipt, type VerifiedReceipt } from '../../../core/cose-receipt.ts';
import { toHex } from '../../../core/encoding.ts';
import { subjectDigest, type ReceiptSubject } from './receipt-check.ts';

export const SCITT_KEYS_URL = '/.well-known/scitt-keys';

export type CoseReceiptReport =
  | { kind: 'invalid'; reason: string; comparedWith: 'file' | 'hash' }
  | { kind: 'needs-subject' }
  | { kind: 'valid'; facts: VerifiedReceipt; hash: string; comparedWith: 'file' | 'hash' };

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export async function checkCoseReceiptOnline(receipt: Uint8Array, subject: ReceiptSubject): Promise<CoseReceiptReport> {
  const comparedWith = subject.file !== undefined ? 'file' : 'hash';
  let digest: Uint8Array | undefined;
  try {
    digest = await subjectDigest(subject, 'SHA-256');
  } catch (err) {
    return { kind: 'invalid', reason: message(err), comparedWith };
  }
  if (digest === undefined) return { kind: 'needs-subject' };
  const res = await fetch(SCITT_KEYS_URL, { credentials: 'include' });
  if (!res.ok) throw new Error(`${SCITT_KEYS_URL}: ${res.status} ${res.statusText}`);
  const keys = parseCoseKeySet(new Uint8Array(await res.arrayBuffer()));
  try {
    return { kind: 'valid', facts: verifyReceipt(receipt, digest, keys), hash: toHex(digest), comparedWith };
  } catch (err) {
    return { kind: 'invalid', reason: message(err), comparedWith };
  }
}
