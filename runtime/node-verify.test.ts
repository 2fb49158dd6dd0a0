// runtime/node-verify.ts against noble: OpenSSL accepts what core/ signs for each of the four algorithms and
// refuses a changed message, signature or key; and core/'s checks, with it installed, ask it first and still
// fall back to noble, so a runtime verifier that says no never makes core/ refuse a valid signature.
import { afterEach, describe, expect, it } from 'vitest';
import { encodeCheckpoint } from '../core/checkpoint.ts';
import {
  ed25519CosignatureSigner,
  ed25519CosignatureVerifier,
  ed25519NoteSigner,
  ed25519NoteVerifier,
  ed25519PublicKey,
  mldsa44CosignatureSigner,
  mldsa44CosignatureVerifier,
  mldsa44CosignedMessage,
  mldsa44PublicKey,
} from '../core/cosignature.ts';
import {
  ecdsaKeygen,
  ecdsaSign,
  ecdsaVerify,
  mldsaKeygen,
  mldsaSign,
  mldsaVerify,
  useNativeVerify,
  type NativeAlgorithm,
} from '../core/sig.ts';
import { nodeVerify } from './node-verify.ts';

const message = new TextEncoder().encode('2025-11-01 ledger bytes');
const flip = (bytes: Uint8Array, i: number) => {
  const copy = bytes.slice();
  copy[i]! ^= 0x01;
  return copy;
};
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

afterEach(() => useNativeVerify(undefined));

describe('nodeVerify (OpenSSL) on what core/ signs', () => {
  const ecdsa = ecdsaKeygen(new Uint8Array(48).fill(7));
  const mldsa = mldsaKeygen(new Uint8Array(32).fill(8));
  const seed44 = new Uint8Array(32).fill(9);
  const seed25519 = new Uint8Array(32).fill(10);
  const ed25519Sig = ed25519NoteSigner('timeseal.test', seed25519).sign(message);
  const cases: Array<[NativeAlgorithm, Uint8Array, Uint8Array]> = [
    ['ecdsa-p256-sha256', ecdsaSign(message, ecdsa.secretKey), ecdsa.publicKey],
    ['ml-dsa-65', mldsaSign(message, mldsa.seed), mldsa.publicKey],
    ['ed25519', ed25519Sig, ed25519PublicKey(seed25519)],
  ];

  it.each(cases)(
    '%s: accepts the signature; refuses a changed message, signature or key',
    (algorithm, signature, publicKey) => {
      expect(nodeVerify(algorithm, message, signature, publicKey)).toBe(true);
      expect(nodeVerify(algorithm, flip(message, 3), signature, publicKey)).toBe(false);
      for (let i = 0; i < signature.length; i += Math.max(1, Math.floor(signature.length / 40)))
        expect(nodeVerify(algorithm, message, flip(signature, i), publicKey), `byte ${i}`).toBe(false);
      expect(nodeVerify(algorithm, message, signature, flip(publicKey, publicKey.length - 1))).toBe(false);
      expect(nodeVerify(algorithm, message, signature, publicKey.subarray(1))).toBe(false);
      expect(nodeVerify(algorithm, message, new Uint8Array(0), publicKey)).toBe(false);
    },
  );

  it('ml-dsa-44: accepts the cosignature core/ writes over its cosigned message, refuses another timestamp', () => {
    const checkpoint = { origin: 'timeseal.test', size: 3, root: new Uint8Array(32).fill(0xab) };
    const text = new TextEncoder().encode(encodeCheckpoint(checkpoint));
    const cosignature = mldsa44CosignatureSigner('witness.test', seed44, () => 1_700_000_000).sign(text);
    const publicKey = mldsa44PublicKey(seed44);
    const signed = mldsa44CosignedMessage('witness.test', 1_700_000_000, checkpoint);
    expect(nodeVerify('ml-dsa-44', signed, cosignature.subarray(8), publicKey)).toBe(true);
    expect(
      nodeVerify(
        'ml-dsa-44',
        mldsa44CosignedMessage('witness.test', 1_700_000_001, checkpoint),
        cosignature.subarray(8),
        publicKey,
      ),
    ).toBe(false);
  });

  it('ecdsa: DER and r || s, low-S and high-S, as core/ takes them', () => {
    const der = ecdsaSign(message, ecdsa.secretKey);
    // DER: 30 len 02 rlen r 02 slen s (core/ signs low-S, so s < n/2).
    const rLength = der[3]!;
    const r = BigInt(`0x${Buffer.from(der.subarray(4, 4 + rLength)).toString('hex')}`);
    const s = BigInt(`0x${Buffer.from(der.subarray(6 + rLength)).toString('hex')}`);
    const raw = (sValue: bigint) =>
      Buffer.from(r.toString(16).padStart(64, '0') + sValue.toString(16).padStart(64, '0'), 'hex');
    expect(nodeVerify('ecdsa-p256-sha256', message, raw(s), ecdsa.publicKey)).toBe(true);
    expect(nodeVerify('ecdsa-p256-sha256', message, raw(P256_N - s), ecdsa.publicKey)).toBe(true);
    expect(nodeVerify('ecdsa-p256-sha256', flip(message, 0), raw(s), ecdsa.publicKey)).toBe(false);
    expect(ecdsaVerify(message, raw(P256_N - s), ecdsa.publicKey)).toBe(true); // noble agrees
  });
});

describe('core/ with a runtime verifier installed', () => {
  const ecdsa = ecdsaKeygen(new Uint8Array(48).fill(1));
  const mldsa = mldsaKeygen(new Uint8Array(32).fill(2));
  const ecdsaSig = ecdsaSign(message, ecdsa.secretKey);
  const mldsaSig = mldsaSign(message, mldsa.seed);
  const seed = new Uint8Array(32).fill(3);
  const checkpoint = { origin: 'timeseal.test', size: 5, root: new Uint8Array(32).fill(0xcd) };
  const text = new TextEncoder().encode(encodeCheckpoint(checkpoint));
  const ed25519Note = ed25519NoteSigner('timeseal.test', seed).sign(text);
  const ed25519Cosig = ed25519CosignatureSigner('witness.test', seed, () => 1_700_000_000).sign(text);
  const mldsa44Cosig = mldsa44CosignatureSigner('witness.test', seed, () => 1_700_000_000).sign(text);
  const checks: Array<[string, NativeAlgorithm, (text: Uint8Array) => boolean]> = [
    ['ecdsaVerify', 'ecdsa-p256-sha256', (m) => ecdsaVerify(m, ecdsaSig, ecdsa.publicKey)],
    ['mldsaVerify', 'ml-dsa-65', (m) => mldsaVerify(m, mldsaSig, mldsa.publicKey)],
    [
      'Ed25519 note',
      'ed25519',
      (m) => ed25519NoteVerifier('timeseal.test', ed25519PublicKey(seed)).verify(m, ed25519Note),
    ],
    [
      'Ed25519 cosignature',
      'ed25519',
      (m) => ed25519CosignatureVerifier('witness.test', ed25519PublicKey(seed)).verify(m, ed25519Cosig),
    ],
    [
      'ML-DSA-44 cosignature',
      'ml-dsa-44',
      (m) => mldsa44CosignatureVerifier('witness.test', mldsa44PublicKey(seed)).verify(m, mldsa44Cosig),
    ],
  ];
  const signedText = (name: string) => (name.startsWith('ecdsa') || name.startsWith('mldsa') ? message : text);
  const otherText = (name: string) =>
    name.startsWith('ecdsa') || name.startsWith('mldsa')
      ? flip(message, 1)
      : new TextEncoder().encode(encodeCheckpoint({ ...checkpoint, size: 6 }));

  it.each(checks)(
    "%s asks the runtime verifier first, and OpenSSL's answer is the answer",
    (name, algorithm, check) => {
      const asked: NativeAlgorithm[] = [];
      useNativeVerify((a, m, sig, key) => {
        asked.push(a);
        return nodeVerify(a, m, sig, key);
      });
      expect(check(signedText(name))).toBe(true);
      expect(asked).toEqual([algorithm]);
      expect(check(otherText(name))).toBe(false);
    },
  );

  it.each(checks)(
    '%s: a runtime verifier that refuses everything changes no answer (noble decides)',
    (name, _, check) => {
      let asked = 0;
      useNativeVerify(() => (asked++, false));
      expect(check(signedText(name))).toBe(true);
      expect(check(otherText(name))).toBe(false);
      expect(asked).toBeGreaterThan(0);
    },
  );
});
