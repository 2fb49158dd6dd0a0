// What the tests that check COSE receipts with @transmute/cose (code we did not write) share: node:crypto's
// SHA-256 and RFC 9162 leaf hash, a byte view as the ArrayBuffer that library takes, and its detached verifier
// resolving a receipt's kid against a published COSE Key Set (GET /.well-known/scitt-keys).
import crypto from 'node:crypto';
import { cbor, detached, key as coseKey } from '@transmute/cose';

export const sha256 = (data: Uint8Array): Buffer => crypto.createHash('sha256').update(data).digest();
/** RFC 9162 §2.1.1: the leaf hash of an entry, SHA-256(0x00 || entry). */
export const leafHash = (entry: Buffer): Uint8Array => sha256(Buffer.concat([Buffer.of(0), entry]));
export const arrayBuffer = (bytes: Uint8Array): ArrayBuffer =>
  bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;

/** A tagged COSE_Sign1 read with @transmute/cose's CBOR (cbor-web), not ours. */
export function decodeSign1(bytes: Uint8Array) {
  const tagged = cbor.decode(bytes) as {
    tag: number;
    value: [Uint8Array, Map<number, unknown>, Uint8Array | null, Uint8Array];
  };
  if (tagged.tag !== 18) throw new Error(`tag ${tagged.tag} is not a COSE_Sign1`);
  const [protectedBytes, unprotected, payload, signature] = tagged.value;
  return {
    protectedBytes,
    header: cbor.decode(protectedBytes) as Map<number, unknown>,
    unprotected,
    payload,
    signature,
  };
}

/** @transmute/cose's detached verifier, with the published key of the receipt's kid converted by that library. */
export function transmuteVerifier(keySet: Uint8Array) {
  const keys = cbor.decode(keySet) as Map<number, unknown>[];
  return detached.verifier({
    resolver: {
      resolve: async (sign1: ArrayBuffer) => {
        const kid = Buffer.from(decodeSign1(new Uint8Array(sign1)).header.get(4) as Uint8Array).toString('hex');
        const found = keys.find((k) => Buffer.from(k.get(2) as Uint8Array).toString('hex') === kid);
        if (found === undefined) throw new Error(`no published key has kid ${kid}`);
        return coseKey.convertCoseKeyToJsonWebKey(found as never);
      },
    },
  });
}
