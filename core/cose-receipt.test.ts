// core/cose-receipt.ts: day signatures and receipts of a small log, checked by our verifier and by code we did
// not write — @transmute/cose (npm; the ES256 receipt, RFC 9942's own verification) and node:crypto's ML-DSA-65
// (OpenSSL 3.5; the ML-DSA-65 receipt's signature over the Sig_structure, since no third-party COSE verifier
// knows alg −49 yet) — and the things a verifier must refuse.
import crypto from 'node:crypto';
import { cbor, detached, key as coseKey, receipt as coseReceipt } from '@transmute/cose';
import { describe, expect, it } from 'vitest';
import { CborTag, decodeCbor, encodeCbor, type CborMap } from './cbor.ts';
import {
  ALG_ES256,
  ALG_ML_DSA_65,
  encodeCoseKeySet,
  parseCoseKeySet,
  parseCoseSign1,
  receiptFromDaySignature,
  receiptKid,
  sigStructure,
  signDayRoot,
  verifyReceipt,
  type ReceiptSigningKey,
} from './cose-receipt.ts';
import { toHex } from './encoding.ts';
import { MismatchError, SignatureError } from './errors.ts';
import { inclusionProof, leafHash, nodeHash, treeHash } from './merkle.ts';
import { ecdsaKeygen, mldsaKeygen, mldsaPublicKeyToSpkiDer } from './sig.ts';

const ORIGIN = 'timeseal.example';
const DATE = '2025-11-02';
const entries = Array.from({ length: 13 }, (_, i) => crypto.createHash('sha256').update(`entry ${i}`).digest());
const leaves = entries.map((e) => leafHash(new Uint8Array(e)));
/** The complete subtree hash at (level, index), from the leaves (RFC 9162 §2.1.1 MTH of 2^level leaves). */
const read = (level: number, index: number): Uint8Array =>
  level === 0 ? leaves[index]! : nodeHash(read(level - 1, 2 * index), read(level - 1, 2 * index + 1));
const size = entries.length;
const root = treeHash(size, read);

function es256Key(seedByte: number): ReceiptSigningKey {
  const pair = ecdsaKeygen(new Uint8Array(48).fill(seedByte));
  return { alg: ALG_ES256, secret: pair.secretKey, publicKey: pair.publicKey };
}
function mldsaKey(seedByte: number): ReceiptSigningKey {
  const pair = mldsaKeygen(new Uint8Array(32).fill(seedByte));
  return { alg: ALG_ML_DSA_65, secret: pair.seed, publicKey: pair.publicKey };
}
const es256 = es256Key(1);
const mldsa = mldsaKey(2);

function receiptFor(index: number, key: ReceiptSigningKey = es256): Uint8Array {
  const day = signDayRoot(root, key, ORIGIN, DATE);
  return receiptFromDaySignature(day, { treeSize: size, leafIndex: index, path: inclusionProof(index, size, read) });
}

/** @transmute/cose's resolver: the COSE key from our key set, converted by that library to a JWK. */
async function transmuteVerifier(keySet: Uint8Array, kidOf: (r: ArrayBuffer) => Uint8Array) {
  const keys = cbor.decode(keySet) as Map<number, unknown>[];
  return detached.verifier({
    resolver: {
      resolve: async (sign1: ArrayBuffer) => {
        const kid = toHex(kidOf(sign1));
        const found = keys.find((k) => toHex(new Uint8Array(k.get(2) as Uint8Array)) === kid);
        if (found === undefined) throw new Error(`no key ${kid}`);
        return coseKey.convertCoseKeyToJsonWebKey(found as never);
      },
    },
  });
}
const arrayBuffer = (bytes: Uint8Array): ArrayBuffer =>
  bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
const kidOfSign1 = (sign1: ArrayBuffer): Uint8Array => {
  const decoded = cbor.decode(new Uint8Array(sign1)) as { value: [Uint8Array] };
  return new Uint8Array((cbor.decode(decoded.value[0]) as Map<number, Uint8Array>).get(4)!);
};

describe('day signatures', () => {
  it('are deterministic: signing again gives the same bytes, for both algorithms', () => {
    expect(toHex(signDayRoot(root, es256, ORIGIN, DATE))).toBe(toHex(signDayRoot(root, es256, ORIGIN, DATE)));
    expect(toHex(signDayRoot(root, mldsa, ORIGIN, DATE))).toBe(toHex(signDayRoot(root, mldsa, ORIGIN, DATE)));
  });

  it('hold alg, kid, the CWT claims iss and sub, and vds 1 in the protected header; nothing else', () => {
    const sign1 = parseCoseSign1(signDayRoot(root, es256, ORIGIN, DATE), 'day signature');
    expect([...sign1.protectedHeader.keys()]).toEqual([1, 4, 15, 395]);
    expect(sign1.protectedHeader.get(1)).toBe(-7);
    expect(sign1.protectedHeader.get(4)).toEqual(receiptKid(es256));
    expect(sign1.protectedHeader.get(15)).toEqual(
      new Map<number, string>([
        [1, ORIGIN],
        [2, DATE],
      ]),
    );
    expect(sign1.protectedHeader.get(395)).toBe(1);
    expect(sign1.unprotectedHeader.size).toBe(0);
    expect(sign1.payload).toBeNull();
    expect(sign1.signature).toHaveLength(64);
  });
});

describe('receipts', () => {
  it('verify for every leaf of the tree with our verifier, for both algorithms', () => {
    for (let i = 0; i < size; i++) {
      for (const key of [es256, mldsa]) {
        const verified = verifyReceipt(receiptFor(i, key), entries[i]!, [es256, mldsa]);
        expect(verified).toMatchObject({ leafIndex: i, treeSize: size, root: toHex(root), iss: ORIGIN, sub: DATE });
      }
    }
  });

  it("a reader of many receipts verifies a day's signature once: every leaf shares it; a changed one is still refused", () => {
    const verified = new Map<string, boolean>();
    for (let i = 0; i < size; i++)
      for (const key of [es256, mldsa])
        expect(verifyReceipt(receiptFor(i, key), entries[i]!, [es256, mldsa], { verified }).leafIndex).toBe(i);
    expect([...verified.values()]).toEqual([true, true]);
    const changed = receiptFor(4);
    changed[changed.length - 1] = changed.at(-1)! ^ 0x01;
    expect(() => verifyReceipt(changed, entries[4]!, [es256], { verified })).toThrow(/signature/);
    expect(() => verifyReceipt(receiptFor(4), entries[5]!, [es256], { verified })).toThrow(/signature/);
    expect([...verified.values()]).toEqual([true, true, false, false]);
  });

  it('ES256: @transmute/cose verifies each with the key from the key set, and refuses another leaf', async () => {
    const keySet = encodeCoseKeySet([es256, mldsa].filter((k) => k.alg === ALG_ES256));
    const verifier = await transmuteVerifier(keySet, kidOfSign1);
    for (const i of [0, 5, 12]) {
      const receipt = receiptFor(i);
      const payload = await coseReceipt.inclusion.verify({
        entry: leafHash(entries[i]!),
        receipt: arrayBuffer(receipt),
        verifier,
      });
      expect(toHex(new Uint8Array(payload))).toBe(toHex(root));
      await expect(
        coseReceipt.inclusion.verify({
          entry: leafHash(entries[(i + 1) % size]!),
          receipt: arrayBuffer(receipt),
          verifier,
        }),
      ).rejects.toThrow(/Signature verification failed|sn is not zero/);
    }
  });

  it('ML-DSA-65: node:crypto verifies the signature over the Sig_structure of the root the proof leads to', () => {
    const receipt = receiptFor(7, mldsa);
    const sign1 = parseCoseSign1(receipt, 'receipt');
    const publicKey = crypto.createPublicKey({
      key: Buffer.from(mldsaPublicKeyToSpkiDer(mldsa.publicKey)),
      format: 'der',
      type: 'spki',
    });
    const tbs = sigStructure(sign1.protectedBytes, root);
    expect(crypto.verify(null, tbs, publicKey, sign1.signature)).toBe(true);
    const other = sigStructure(sign1.protectedBytes, leaves[0]!);
    expect(crypto.verify(null, other, publicKey, sign1.signature)).toBe(false);
  });

  it('are refused for another leaf, a flipped proof byte, another key, and unknown header parameters', () => {
    const receipt = receiptFor(3);
    expect(() => verifyReceipt(receipt, entries[4]!, [es256])).toThrow(SignatureError);
    // A flipped byte in the first path hash (the last 32-byte string before the signature's header).
    const sign1 = parseCoseSign1(receipt, 'r');
    const vdp = sign1.unprotectedHeader.get(396) as CborMap;
    const proof = decodeCbor((vdp.get(-1) as Uint8Array[])[0]!) as [number, number, Uint8Array[]];
    proof[2][0]![0]! ^= 1;
    const flipped = encodeCbor(
      new CborTag(18, [
        sign1.protectedBytes,
        new Map([[396, new Map([[-1, [encodeCbor(proof)]]])]]),
        null,
        sign1.signature,
      ]),
    );
    expect(() => verifyReceipt(flipped, entries[3]!, [es256])).toThrow(SignatureError);
    // Another key: its kid is not published.
    expect(() => verifyReceipt(receiptFor(3, es256Key(9)), entries[3]!, [es256])).toThrow(
      /none of the published ES256/,
    );
    const extra = encodeCbor(
      new CborTag(18, [
        sign1.protectedBytes,
        new Map([...sign1.unprotectedHeader, [33, new Uint8Array(1)]]),
        null,
        sign1.signature,
      ]),
    );
    expect(() => verifyReceipt(extra, entries[3]!, [es256])).toThrow(/unexpected parameter 33/);
  });

  it('a proof of the wrong length or an index outside the tree is a format error, not a signature error', () => {
    const day = signDayRoot(root, es256, ORIGIN, DATE);
    const short = receiptFromDaySignature(day, {
      treeSize: size,
      leafIndex: 3,
      path: inclusionProof(3, size, read).slice(1),
    });
    expect(() => verifyReceipt(short, entries[3]!, [es256])).toThrow(
      /inclusion proof: proof: expected 4 hashes, got 3/,
    );
    const outside = receiptFromDaySignature(day, { treeSize: size, leafIndex: size, path: [] });
    expect(() => verifyReceipt(outside, entries[3]!, [es256])).toThrow(/inclusion proof: .*13/);
  });
});

describe('key sets', () => {
  it('round-trip, with a retired key’s days, and kids are the RFC 9679 thumbprints', () => {
    const entriesIn = [
      { alg: es256.alg, publicKey: es256.publicKey },
      { alg: mldsa.alg, publicKey: mldsa.publicKey },
      { alg: ALG_ES256, publicKey: es256Key(3).publicKey, days: ['2025-01-01', '2025-10-31'] as [string, string] },
    ] as const;
    const bytes = encodeCoseKeySet(entriesIn);
    expect(parseCoseKeySet(bytes)).toEqual(entriesIn);
    // RFC 9679 §3: SHA-256 over the deterministic encoding of {1: kty, -1: crv, -2: x, -3: y}.
    const p = es256.publicKey;
    const thumb = crypto
      .createHash('sha256')
      .update(
        Buffer.concat([
          Buffer.from('a401022001215820', 'hex'),
          p.subarray(1, 33),
          Buffer.from('225820', 'hex'),
          p.subarray(33),
        ]),
      )
      .digest('hex');
    expect(toHex(receiptKid(es256))).toBe(thumb);
  });

  it('refuse a kid that is not the thumbprint, and unknown parameters', () => {
    const key = decodeCbor(encodeCoseKeySet([es256])) as CborMap[];
    key[0]!.set(2, new Uint8Array(32));
    expect(() => parseCoseKeySet(encodeCbor(key))).toThrow(MismatchError);
    const extra = decodeCbor(encodeCoseKeySet([es256])) as CborMap[];
    extra[0]!.set(-4, new Uint8Array(32));
    expect(() => parseCoseKeySet(encodeCbor(extra))).toThrow(/parameters a receipt key does not have/);
  });
});
