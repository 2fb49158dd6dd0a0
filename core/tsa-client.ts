// The request Timeseal sends an outside RFC 3161 time-stamp authority for a day's ledger file (docs/FORMAT.md
// §3a, RFC 3161 §2.4.1): a SHA-256 imprint, a nonce, and the TSA's certificate asked for, written with
// core/der.ts. The answer is checked by runtime/tsa-client.ts (pkijs, then core/rfc3161.ts) before it is
// published.
import { encode, integer, octetString, oid, sequence, TAG } from './der.ts';

/** id-sha256 (RFC 5758 §2) with NULL parameters, as pkijs and OpenSSL write it. */
const SHA256_ALGORITHM = sequence(oid('2.16.840.1.101.3.4.2.1'), Uint8Array.of(TAG.NULL, 0));
const CERT_REQ_TRUE = encode(TAG.BOOLEAN, Uint8Array.of(0xff));

/**
 * DER TimeStampReq: version 1, SHA-256 imprint of `digest`, `nonce`, certReq true. The nonce is written as a
 * positive minimal INTEGER (X.690 §8.3.2): its leading zero bytes dropped (a random nonce starts with one about
 * once in 256 requests; a strict TSA refuses the non-minimal form), one put back before a high bit.
 */
export function timeStampRequest(digest: Uint8Array, nonce: Uint8Array): Uint8Array {
  if (digest.length !== 32) throw new RangeError('a SHA-256 digest is 32 bytes');
  if (nonce.length === 0) throw new RangeError('a nonce has at least one byte');
  return sequence(integer(1), sequence(SHA256_ALGORITHM, octetString(digest)), integer(nonce), CERT_REQ_TRUE);
}
