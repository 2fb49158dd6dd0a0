// node:crypto's signature checks (OpenSSL) for core/'s NativeVerify: ECDSA P-256 with SHA-256, Ed25519,
// ML-DSA-65 and ML-DSA-44 (OpenSSL >= 3.5, which Node 24 carries). core/ stays pure (noble) and asks noble
// whenever this says no (core/sig.ts useNativeVerify), so installing it only makes accepting faster: measured
// here, a `timeseal verify` of three days spent ~400 ms in noble's checks, ~2 ms with these.
import crypto from 'node:crypto';
import { ecdsaPublicKeyToSpkiDer, type NativeAlgorithm, type NativeVerify } from '../core/sig.ts';

/** The DER SubjectPublicKeyInfo before the raw key, and the key's size, of each algorithm but ECDSA. */
const SPKI_PREFIX: Partial<Record<NativeAlgorithm, { prefix: Buffer; size: number }>> = {
  // RFC 8410 §4: id-Ed25519 1.3.101.112.
  ed25519: { prefix: Buffer.from('302a300506032b6570032100', 'hex'), size: 32 },
  // RFC 9881 §4: id-ml-dsa-65 2.16.840.1.101.3.4.3.18 and id-ml-dsa-44 …3.17, the key a BIT STRING.
  'ml-dsa-65': { prefix: Buffer.from('308207b2300b0609608648016503040312038207a100', 'hex'), size: 1952 },
  'ml-dsa-44': { prefix: Buffer.from('30820532300b06096086480165030403110382052100', 'hex'), size: 1312 },
};

const keys = new Map<string, crypto.KeyObject | null>();
const MAX_KEYS = 64;

/** The key as a KeyObject, remembered (a run checks the same few keys thousands of times); null if refused. */
function keyObject(algorithm: NativeAlgorithm, publicKey: Uint8Array): crypto.KeyObject | null {
  const id = `${algorithm}:${Buffer.from(publicKey).toString('base64')}`;
  let key = keys.get(id);
  if (key !== undefined) return key;
  try {
    const spec = SPKI_PREFIX[algorithm];
    let der: Uint8Array | null;
    if (spec === undefined) der = ecdsaPublicKeyToSpkiDer(publicKey);
    else der = publicKey.length === spec.size ? Buffer.concat([spec.prefix, publicKey]) : null;
    key = der === null ? null : crypto.createPublicKey({ key: Buffer.from(der), format: 'der', type: 'spki' });
  } catch {
    key = null;
  }
  if (keys.size >= MAX_KEYS) keys.clear();
  keys.set(id, key);
  return key;
}

export const nodeVerify: NativeVerify = (algorithm, message, signature, publicKey) => {
  const key = keyObject(algorithm, publicKey);
  if (key === null) return false;
  try {
    if (algorithm !== 'ecdsa-p256-sha256') return crypto.verify(null, message, key, signature);
    // DER or r || s, as core/sig.ts's ecdsaVerify takes them (a 64-byte DER signature is possible: try both).
    if (signature[0] === 0x30 && crypto.verify('sha256', message, { key, dsaEncoding: 'der' }, signature)) return true;
    return signature.length === 64 && crypto.verify('sha256', message, { key, dsaEncoding: 'ieee-p1363' }, signature);
  } catch {
    return false;
  }
};
