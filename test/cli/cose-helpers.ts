// What the tests that check COSE receipts with @transmute/cose (code we did not write) share: node:crypto's
// SHA-256 and RFC 9162 leaf hash, a byte view as the ArrayBuffer that library takes, its detached verifier
// resolving a receipt's kid against a published COSE Key Set (GET /.well-known/scitt-keys), and Signed
// Statements made by its own signer with the log entry it gives them.
import crypto from 'node:crypto';
import * as cose from '@transmute/cose';

const { cbor, detached, key: coseKey } = cose;

/** The iss of the test issuer's statements. */
export const ISS = 'https://issuer.example';

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

/** A Signed Statement made by @transmute/cose's attached signer: alg ES256, a content type, kid, CWT claims. */
export async function signStatement(
  privateKeyJwk: cose.SecretKeyJwk,
  payload: Uint8Array,
  claims: Map<number, string> | null = new Map([
    [1, ISS],
    [2, 'urn:example:product@1.2.3'],
  ]),
): Promise<Uint8Array> {
  const header: [number, unknown][] = [
    [cose.Protected.Alg, cose.Signature.ES256],
    [cose.Protected.ContentType, 'application/json'],
    [cose.Protected.Kid, Buffer.from(privateKeyJwk.kid ?? 'issuer-key')],
  ];
  if (claims !== null) header.push([cose.Protected.CWTClaims, claims]);
  const signer = cose.attached.signer({ remote: cose.crypto.signer({ privateKeyJwk }) });
  return new Uint8Array(
    await signer.sign({
      protectedHeader: cose.ProtectedHeader(header as never),
      unprotectedHeader: new Map(),
      payload: arrayBuffer(payload),
    }),
  );
}

/** The entry of a statement as the log holds it: SHA-256 of the statement with an empty unprotected header,
 * computed by @transmute/cose (receipt.remove re-encodes it with {} as its unprotected header). */
export const entryOf = async (statement: Uint8Array): Promise<string> =>
  sha256(new Uint8Array(await cose.receipt.remove(arrayBuffer(statement)))).toString('hex');
