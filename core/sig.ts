// Keys and signatures for the archive (docs/FORMAT.md §3, §4, §9): ECDSA P-256 with SHA-256 (FIPS 186-5,
// RFC 6979 deterministic nonces, DER per X9.62 / RFC 3279 §2.2.3) and ML-DSA-65 (FIPS 204, pure, empty
// context, deterministic variant), plus their standard key encodings: SubjectPublicKeyInfo (RFC 5480,
// RFC 9881), PKCS#8 (RFC 5208) holding an RFC 5915 ECPrivateKey or an RFC 9881 ML-DSA seed, and PEM
// (RFC 7468). Signing never uses randomness, so rebuilding an archive reproduces identical bytes.
import { p256 } from '@noble/curves/nist.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { shake256 } from '@noble/hashes/sha3.js';
import { randomBytes } from '@noble/hashes/utils.js';
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js';
import { decode, DerReader, expectTag, TAG } from './der.ts';
import { concatBytes, equalBytes, fromBase64, fromHex, toBase64, toHex } from './encoding.ts';
import { FormatError } from './errors.ts';

// ---------------------------------------------------------------------------------------------------------
// A second verifier a runtime may add

/** The signatures a runtime's own library can check as well: each over the message itself (ECDSA over its SHA-256). */
export type NativeAlgorithm = 'ecdsa-p256-sha256' | 'ed25519' | 'ml-dsa-65' | 'ml-dsa-44';
/** True when the runtime's library accepts the signature; false for a refusal and for anything it cannot check. */
export type NativeVerify = (
  algorithm: NativeAlgorithm,
  message: Uint8Array,
  signature: Uint8Array,
  publicKey: Uint8Array,
) => boolean;

let nativeVerify: NativeVerify | undefined;

/**
 * Adds a runtime's verifier (runtime/node-verify.ts: OpenSSL through node:crypto, ~50x faster than noble for
 * ML-DSA) in front of noble for every signature check of core/. A signature it accepts is valid; one it does
 * not accept is still asked of noble, so what core/ accepts never narrows, and a runtime without it (the
 * browser, the client on Node 20) gets the same answers from noble alone. Signing always stays with noble:
 * its deterministic signatures are what makes a rebuild byte for byte the same.
 */
export function useNativeVerify(verify: NativeVerify | undefined): void {
  nativeVerify = verify;
}

/** Whether the runtime's verifier accepts the signature (false when none is installed). */
export function nativeAccepts(
  algorithm: NativeAlgorithm,
  message: Uint8Array,
  signature: Uint8Array,
  publicKey: Uint8Array,
): boolean {
  return nativeVerify !== undefined && nativeVerify(algorithm, message, signature, publicKey);
}

// ---------------------------------------------------------------------------------------------------------
// ECDSA P-256

/** SEC 1 §2.3.3: uncompressed point 0x04 || x || y. */
export const ECDSA_PUBLIC_KEY_SIZE = 65;
/** SEC 1 §2.3.7: a P-256 scalar is 32 bytes. */
export const ECDSA_SECRET_KEY_SIZE = 32;
/** Seed length @noble/curves' p256.keygen takes (FIPS 186-5 A.2.1: hash-to-field needs 64 extra bits). */
export const ECDSA_KEYGEN_SEED_SIZE = p256.lengths.seed ?? 48;
/** RFC 5480 §2: SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING (0 unused bits) }, 91 bytes. */
const ECDSA_SPKI_PREFIX = fromHex('3059301306072a8648ce3d020106082a8648ce3d030107034200');
/** RFC 5480 §2.1.1: AlgorithmIdentifier contents: id-ecPublicKey (1.2.840.10045.2.1), secp256r1 (1.2.840.10045.3.1.7). */
const EC_ALGORITHM_CONTENTS = fromHex('06072a8648ce3d020106082a8648ce3d030107');
/** RFC 5480 §2.1.1.1: secp256r1 OID. */
const P256_OID = fromHex('06082a8648ce3d030107');
/**
 * PKCS#8 (RFC 5208 §5) as OpenSSL writes it: version 0, the EC AlgorithmIdentifier, then an OCTET STRING
 * holding the RFC 5915 ECPrivateKey { version 1, privateKey OCTET STRING (32), [1] publicKey BIT STRING }.
 */
const ECDSA_PKCS8_PREFIX = fromHex('308187020100301306072a8648ce3d020106082a8648ce3d030107046d306b0201010420');
const ECDSA_PKCS8_PUBLIC_TAG = fromHex('a144034200');

export type EcdsaKeyPair = { secretKey: Uint8Array; publicKey: Uint8Array };

/** A new key pair; with `seed` (ECDSA_KEYGEN_SEED_SIZE bytes) the same pair every time. */
export function ecdsaKeygen(seed?: Uint8Array): EcdsaKeyPair {
  if (seed !== undefined && seed.length !== ECDSA_KEYGEN_SEED_SIZE) {
    throw new FormatError('ECDSA seed', `expected ${ECDSA_KEYGEN_SEED_SIZE} bytes, got ${seed.length}`);
  }
  const { secretKey } = p256.keygen(seed);
  return { secretKey, publicKey: p256.getPublicKey(secretKey, false) };
}

/** The 65-byte uncompressed public key of a secret key. */
export function ecdsaPublicKey(secretKey: Uint8Array): Uint8Array {
  checkEcdsaSecretKey(secretKey);
  return p256.getPublicKey(secretKey, false);
}

/** DER signature over SHA-256(message): RFC 6979 deterministic nonce, low S. */
export function ecdsaSign(message: Uint8Array, secretKey: Uint8Array): Uint8Array {
  checkEcdsaSecretKey(secretKey);
  return p256.sign(message, secretKey, { prehash: true, lowS: true, format: 'der', extraEntropy: false });
}

/** As ecdsaSign, over a SHA-256 digest the caller computed (for files too large to hash here). */
export function ecdsaSignDigest(digest: Uint8Array, secretKey: Uint8Array): Uint8Array {
  checkDigest(digest);
  checkEcdsaSecretKey(secretKey);
  return p256.sign(digest, secretKey, { prehash: false, lowS: true, format: 'der', extraEntropy: false });
}

/**
 * True when `signature` (DER or 64-byte r || s) signs SHA-256(message) under `publicKey` (65 bytes).
 * High-S signatures are accepted: OpenSSL and WebCrypto produce them about half the time.
 */
export function ecdsaVerify(message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array): boolean {
  if (nativeAccepts('ecdsa-p256-sha256', message, signature, publicKey)) return true;
  return ecdsaVerifyPrepared(message, true, signature, publicKey);
}

/** As ecdsaVerify, over a SHA-256 digest the caller computed. */
export function ecdsaVerifyDigest(digest: Uint8Array, signature: Uint8Array, publicKey: Uint8Array): boolean {
  checkDigest(digest);
  return ecdsaVerifyPrepared(digest, false, signature, publicKey);
}

function ecdsaVerifyPrepared(
  data: Uint8Array,
  prehash: boolean,
  signature: Uint8Array,
  publicKey: Uint8Array,
): boolean {
  checkEcdsaPublicKey(publicKey);
  // A DER signature of exactly 64 bytes is possible, so a 64-byte input is tried both ways.
  const formats: Array<'der' | 'compact'> = [];
  if (signature[0] === 0x30) formats.push('der');
  if (signature.length === 64) formats.push('compact');
  for (const format of formats) {
    try {
      if (p256.verify(signature, data, publicKey, { prehash, lowS: false, format })) return true;
    } catch {
      // Malformed in this encoding; the other one may still apply.
    }
  }
  return false;
}

export function ecdsaPublicKeyToSpkiDer(publicKey: Uint8Array): Uint8Array {
  checkEcdsaPublicKey(publicKey);
  return concatBytes(ECDSA_SPKI_PREFIX, publicKey);
}

/** The 65-byte point of an RFC 5480 P-256 SubjectPublicKeyInfo; anything but that exact form is rejected. */
export function ecdsaPublicKeyFromSpkiDer(der: Uint8Array): Uint8Array {
  const field = 'ECDSA P-256 public key';
  if (der.length !== ECDSA_SPKI_PREFIX.length + ECDSA_PUBLIC_KEY_SIZE || !startsWith(der, ECDSA_SPKI_PREFIX)) {
    throw new FormatError(
      field,
      `not a P-256 SubjectPublicKeyInfo with an uncompressed point (expected ${ECDSA_SPKI_PREFIX.length + ECDSA_PUBLIC_KEY_SIZE} bytes starting ${toHex(ECDSA_SPKI_PREFIX)}, got ${der.length} bytes starting ${toHex(der.subarray(0, ECDSA_SPKI_PREFIX.length))})`,
    );
  }
  const publicKey = der.slice(ECDSA_SPKI_PREFIX.length);
  checkEcdsaPublicKey(publicKey, field);
  return publicKey;
}

export function ecdsaPublicKeyToPem(publicKey: Uint8Array): string {
  return pemEncode(PEM_PUBLIC_KEY, ecdsaPublicKeyToSpkiDer(publicKey));
}

export function ecdsaPublicKeyFromPem(pem: string): Uint8Array {
  return ecdsaPublicKeyFromSpkiDer(pemDecode(pem, PEM_PUBLIC_KEY));
}

/** PKCS#8 "PRIVATE KEY" PEM, byte for byte what `openssl genpkey -algorithm EC` writes. */
export function ecdsaSecretKeyToPkcs8Pem(secretKey: Uint8Array): string {
  const publicKey = ecdsaPublicKey(secretKey);
  return pemEncode(PEM_PRIVATE_KEY, concatBytes(ECDSA_PKCS8_PREFIX, secretKey, ECDSA_PKCS8_PUBLIC_TAG, publicKey));
}

/**
 * The key pair in a PKCS#8 P-256 private key PEM. Accepts what OpenSSL writes and RFC 5915's optional
 * fields ([0] curve OID, which must name P-256; [1] public key, which must match the secret key).
 */
export function ecdsaSecretKeyFromPkcs8Pem(pem: string): EcdsaKeyPair {
  const field = 'ECDSA P-256 private key';
  const der = pemDecode(pem, PEM_PRIVATE_KEY);
  const outer = readSequence(der, field, 'PrivateKeyInfo');
  const version = outer.next(TAG.INTEGER, 'version');
  if (!equalBytes(version, Uint8Array.of(0)))
    throw new FormatError(field, `PrivateKeyInfo version ${toHex(version)} is not 0`);
  const algorithm = outer.next(TAG.SEQUENCE, 'privateKeyAlgorithm');
  if (!equalBytes(algorithm, EC_ALGORITHM_CONTENTS)) {
    throw new FormatError(field, `algorithm is not id-ecPublicKey on P-256 (${toHex(algorithm)})`);
  }
  const ecPrivateKey = outer.next(TAG.OCTET_STRING, 'privateKey');
  outer.end();

  const inner = readSequence(ecPrivateKey, field, 'ECPrivateKey');
  const innerVersion = inner.next(TAG.INTEGER, 'ECPrivateKey version');
  if (!equalBytes(innerVersion, Uint8Array.of(1))) {
    throw new FormatError(field, `ECPrivateKey version ${toHex(innerVersion)} is not 1`);
  }
  const secretKey = inner.next(TAG.OCTET_STRING, 'ECPrivateKey privateKey').slice();
  if (secretKey.length !== ECDSA_SECRET_KEY_SIZE) {
    throw new FormatError(field, `private key is ${secretKey.length} bytes, expected ${ECDSA_SECRET_KEY_SIZE}`);
  }
  checkEcdsaSecretKey(secretKey, field);
  const publicKey = p256.getPublicKey(secretKey, false);
  if (inner.peek() === 0xa0) {
    // RFC 5915 §3: [0] parameters and [1] publicKey, constructed context tags.
    const parameters = inner.next(0xa0, 'ECPrivateKey parameters');
    if (!equalBytes(parameters, P256_OID))
      throw new FormatError(field, `parameters are not the P-256 OID (${toHex(parameters)})`);
  }
  if (inner.peek() === 0xa1) {
    const wrapped = inner.next(0xa1, 'ECPrivateKey publicKey');
    const publicKeyField = new DerReader(wrapped, `${field}: ECPrivateKey publicKey`);
    const embedded = publicKeyField.next(TAG.BIT_STRING, 'BIT STRING');
    publicKeyField.end();
    if (!equalBytes(embedded, concatBytes(Uint8Array.of(0), publicKey))) {
      throw new FormatError(
        field,
        `embedded public key ${toHex(embedded.subarray(1))} != ${toHex(publicKey)} derived from the private key`,
      );
    }
  }
  inner.end();
  return { secretKey, publicKey };
}

function checkEcdsaSecretKey(secretKey: Uint8Array, field = 'ECDSA P-256 secret key'): void {
  if (secretKey.length !== ECDSA_SECRET_KEY_SIZE) {
    throw new FormatError(field, `expected ${ECDSA_SECRET_KEY_SIZE} bytes, got ${secretKey.length}`);
  }
  if (!p256.utils.isValidSecretKey(secretKey)) throw new FormatError(field, 'not a scalar in [1, n-1]');
}

function checkEcdsaPublicKey(publicKey: Uint8Array, field = 'ECDSA P-256 public key'): void {
  if (publicKey.length !== ECDSA_PUBLIC_KEY_SIZE || publicKey[0] !== 0x04) {
    throw new FormatError(
      field,
      `expected a ${ECDSA_PUBLIC_KEY_SIZE}-byte uncompressed point (0x04 || x || y), got ${publicKey.length} bytes`,
    );
  }
  if (!p256.utils.isValidPublicKey(publicKey, false)) throw new FormatError(field, 'point is not on the P-256 curve');
}

function checkDigest(digest: Uint8Array): void {
  if (digest.length !== 32) throw new FormatError('SHA-256 digest', `expected 32 bytes, got ${digest.length}`);
}

// ---------------------------------------------------------------------------------------------------------
// ML-DSA-65

/** FIPS 204 Table 2 (ML-DSA-65): public key 1952 bytes, private key 4032 bytes, signature 3309 bytes. */
export const MLDSA_PUBLIC_KEY_SIZE = 1952;
export const MLDSA_SECRET_KEY_SIZE = 4032;
export const MLDSA_SIGNATURE_SIZE = 3309;
/** FIPS 204 Algorithm 1: the key generation seed ξ is 32 bytes. */
export const MLDSA_SEED_SIZE = 32;
/** FIPS 204 Algorithm 7 line 6: μ = H(tr || M', 64) is 64 bytes; tr = H(pk, 64) is 64 bytes. */
export const MLDSA_MU_SIZE = 64;
/** RFC 9881: SEQUENCE { SEQUENCE { id-ml-dsa-65 (2.16.840.1.101.3.4.3.18) }, BIT STRING (1952 bytes) }. */
const MLDSA_SPKI_PREFIX = fromHex('308207b2300b0609608648016503040312038207a100');
/** RFC 9881 private key, seed-only form: PKCS#8 v0, id-ml-dsa-65, OCTET STRING { [0] IMPLICIT seed (32) }. */
const MLDSA_PKCS8_SEED_PREFIX = fromHex('3034020100300b060960864801650304031204228020');
/**
 * RFC 9881 private key, "both" form (OpenSSL 3.5's default output): OCTET STRING { SEQUENCE { seed OCTET
 * STRING (32), expandedKey OCTET STRING (4032) } }, 4098 bytes in all.
 */
const MLDSA_PKCS8_BOTH_PREFIX = fromHex('30820ffe020100300b060960864801650304031204820fea30820fe60420');
const MLDSA_PKCS8_BOTH_EXPANDED_TAG = fromHex('04820fc0');

export type MldsaKeyPair = { seed: Uint8Array; secretKey: Uint8Array; publicKey: Uint8Array };

/** A key pair from a 32-byte seed (random when omitted). Keep the seed: the private key file stores only it. */
export function mldsaKeygen(seed: Uint8Array = randomBytes(MLDSA_SEED_SIZE)): MldsaKeyPair {
  checkMldsaSeed(seed);
  const { secretKey, publicKey } = ml_dsa65.keygen(seed);
  return { seed: seed.slice(), secretKey, publicKey };
}

/** The 1952-byte public key of a seed or a 4032-byte secret key. */
export function mldsaPublicKey(secretKeyOrSeed: Uint8Array): Uint8Array {
  if (secretKeyOrSeed.length === MLDSA_SEED_SIZE) return ml_dsa65.keygen(secretKeyOrSeed).publicKey;
  return ml_dsa65.getPublicKey(mldsaSecretKey(secretKeyOrSeed));
}

/** Pure ML-DSA-65 (FIPS 204 Algorithm 2), empty context, deterministic (rnd = 0^32): 3309 bytes. */
export function mldsaSign(message: Uint8Array, secretKeyOrSeed: Uint8Array): Uint8Array {
  return ml_dsa65.sign(message, mldsaSecretKey(secretKeyOrSeed), { extraEntropy: false });
}

/**
 * Deterministic ML-DSA-65 over a precomputed μ (FIPS 204 Algorithm 7 with external μ), so a caller can
 * stream a large message: μ = SHAKE256(mldsaMuPrefix(publicKey) || message, 64 bytes) gives the same
 * signature as mldsaSign(message, …).
 */
export function mldsaSignMu(mu: Uint8Array, secretKeyOrSeed: Uint8Array): Uint8Array {
  checkMu(mu);
  return ml_dsa65.internal.sign(mu, mldsaSecretKey(secretKeyOrSeed), { externalMu: true, extraEntropy: false });
}

/** True when `signature` is a pure ML-DSA-65 signature of `message` with the empty context. */
export function mldsaVerify(message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array): boolean {
  checkMldsaPublicKey(publicKey);
  if (signature.length !== MLDSA_SIGNATURE_SIZE) return false;
  if (nativeAccepts('ml-dsa-65', message, signature, publicKey)) return true;
  return ml_dsa65.verify(signature, message, publicKey);
}

/** As mldsaVerify, over a precomputed μ (see mldsaSignMu). */
export function mldsaVerifyMu(mu: Uint8Array, signature: Uint8Array, publicKey: Uint8Array): boolean {
  checkMu(mu);
  checkMldsaPublicKey(publicKey);
  if (signature.length !== MLDSA_SIGNATURE_SIZE) return false;
  return ml_dsa65.internal.verify(signature, mu, publicKey, { externalMu: true });
}

/** FIPS 204 Algorithm 6 line 6: tr = H(pk, 64), the public key hash that μ binds. */
export function mldsaTr(publicKey: Uint8Array): Uint8Array {
  checkMldsaPublicKey(publicKey);
  return shake256(publicKey, { dkLen: 64 });
}

/**
 * tr || 0x00 || 0x00: what precedes the message in μ for pure ML-DSA with the empty context (FIPS 204
 * Algorithm 2 line 10: M' = IntegerToBytes(0, 1) || IntegerToBytes(|ctx|, 1) || ctx || M).
 */
export function mldsaMuPrefix(publicKey: Uint8Array): Uint8Array {
  return concatBytes(mldsaTr(publicKey), Uint8Array.of(0, 0));
}

export function mldsaPublicKeyToSpkiDer(publicKey: Uint8Array): Uint8Array {
  checkMldsaPublicKey(publicKey);
  return concatBytes(MLDSA_SPKI_PREFIX, publicKey);
}

/** The raw 1952-byte key of an RFC 9881 id-ml-dsa-65 SubjectPublicKeyInfo; any other form is rejected. */
export function mldsaPublicKeyFromSpkiDer(der: Uint8Array): Uint8Array {
  if (der.length !== MLDSA_SPKI_PREFIX.length + MLDSA_PUBLIC_KEY_SIZE || !startsWith(der, MLDSA_SPKI_PREFIX)) {
    throw new FormatError(
      'ML-DSA-65 public key',
      `not an id-ml-dsa-65 SubjectPublicKeyInfo (expected ${MLDSA_SPKI_PREFIX.length + MLDSA_PUBLIC_KEY_SIZE} bytes starting ${toHex(MLDSA_SPKI_PREFIX)}, got ${der.length} bytes starting ${toHex(der.subarray(0, MLDSA_SPKI_PREFIX.length))})`,
    );
  }
  return der.slice(MLDSA_SPKI_PREFIX.length);
}

export function mldsaPublicKeyToPem(publicKey: Uint8Array): string {
  return pemEncode(PEM_PUBLIC_KEY, mldsaPublicKeyToSpkiDer(publicKey));
}

export function mldsaPublicKeyFromPem(pem: string): Uint8Array {
  return mldsaPublicKeyFromSpkiDer(pemDecode(pem, PEM_PUBLIC_KEY));
}

/** The 54-byte seed-only PKCS#8 form (RFC 9881), as PEM; OpenSSL 3.5 and Node 24 read it. */
export function mldsaSeedToPkcs8Pem(seed: Uint8Array): string {
  checkMldsaSeed(seed);
  return pemEncode(PEM_PRIVATE_KEY, concatBytes(MLDSA_PKCS8_SEED_PREFIX, seed));
}

/**
 * The seed of an ML-DSA-65 PKCS#8 PEM: the seed-only form, or the seed-and-expanded-key form OpenSSL 3.5
 * writes by default (whose expanded key must match the seed). The expanded-only form holds no seed and is
 * rejected.
 */
export function mldsaSeedFromPkcs8Pem(pem: string): Uint8Array {
  const field = 'ML-DSA-65 private key';
  const der = pemDecode(pem, PEM_PRIVATE_KEY);
  if (der.length === MLDSA_PKCS8_SEED_PREFIX.length + MLDSA_SEED_SIZE && startsWith(der, MLDSA_PKCS8_SEED_PREFIX)) {
    return der.slice(MLDSA_PKCS8_SEED_PREFIX.length);
  }
  const bothSize =
    MLDSA_PKCS8_BOTH_PREFIX.length + MLDSA_SEED_SIZE + MLDSA_PKCS8_BOTH_EXPANDED_TAG.length + MLDSA_SECRET_KEY_SIZE;
  const expandedAt = MLDSA_PKCS8_BOTH_PREFIX.length + MLDSA_SEED_SIZE;
  if (
    der.length === bothSize &&
    startsWith(der, MLDSA_PKCS8_BOTH_PREFIX) &&
    startsWith(der.subarray(expandedAt), MLDSA_PKCS8_BOTH_EXPANDED_TAG)
  ) {
    const seed = der.slice(MLDSA_PKCS8_BOTH_PREFIX.length, expandedAt);
    const expanded = der.subarray(expandedAt + MLDSA_PKCS8_BOTH_EXPANDED_TAG.length);
    if (!equalBytes(expanded, ml_dsa65.keygen(seed).secretKey)) {
      throw new FormatError(field, 'expanded private key does not match the seed stored beside it');
    }
    return seed;
  }
  throw new FormatError(
    field,
    `not an id-ml-dsa-65 PKCS#8 key holding a seed (expected ${MLDSA_PKCS8_SEED_PREFIX.length + MLDSA_SEED_SIZE} bytes starting ${toHex(MLDSA_PKCS8_SEED_PREFIX)}, got ${der.length} bytes)`,
  );
}

/** The secret key to sign with: a 4032-byte key as given, or a seed expanded now (FIPS 204 ML-DSA.KeyGen_internal,
 *  about half a signature's work). No key is kept here: a caller that signs more than once holds the expanded key
 *  (`mldsaKeygen(seed).secretKey`; runtime/keys.ts SigningKeys.mldsaSecret). */
function mldsaSecretKey(secretKeyOrSeed: Uint8Array): Uint8Array {
  if (secretKeyOrSeed.length === MLDSA_SEED_SIZE) return ml_dsa65.keygen(secretKeyOrSeed).secretKey;
  if (secretKeyOrSeed.length === MLDSA_SECRET_KEY_SIZE) return secretKeyOrSeed;
  throw new FormatError(
    'ML-DSA-65 secret key',
    `expected a ${MLDSA_SEED_SIZE}-byte seed or a ${MLDSA_SECRET_KEY_SIZE}-byte secret key, got ${secretKeyOrSeed.length} bytes`,
  );
}

function checkMldsaSeed(seed: Uint8Array): void {
  if (seed.length !== MLDSA_SEED_SIZE) {
    throw new FormatError('ML-DSA-65 seed', `expected ${MLDSA_SEED_SIZE} bytes, got ${seed.length}`);
  }
}

function checkMldsaPublicKey(publicKey: Uint8Array): void {
  if (publicKey.length !== MLDSA_PUBLIC_KEY_SIZE) {
    throw new FormatError('ML-DSA-65 public key', `expected ${MLDSA_PUBLIC_KEY_SIZE} bytes, got ${publicKey.length}`);
  }
}

function checkMu(mu: Uint8Array): void {
  if (mu.length !== MLDSA_MU_SIZE)
    throw new FormatError('ML-DSA-65 mu', `expected ${MLDSA_MU_SIZE} bytes, got ${mu.length}`);
}

// ---------------------------------------------------------------------------------------------------------
// PEM (RFC 7468) and fingerprints

/** RFC 7468 §13 and §10: the labels of SubjectPublicKeyInfo and unencrypted PKCS#8. */
const PEM_PUBLIC_KEY = 'PUBLIC KEY';
const PEM_PRIVATE_KEY = 'PRIVATE KEY';
/** RFC 7468 §2: generators wrap base64 at 64 characters. */
const PEM_LINE_LENGTH = 64;

export function pemEncode(label: string, der: Uint8Array): string {
  const base64 = toBase64(der);
  let body = '';
  for (let i = 0; i < base64.length; i += PEM_LINE_LENGTH) body += base64.slice(i, i + PEM_LINE_LENGTH) + '\n';
  return `-----BEGIN ${label}-----\n${body}-----END ${label}-----\n`;
}

/**
 * The DER bytes of a PEM text with exactly one block labelled `expectedLabel` (RFC 7468 §3 strict form):
 * nothing before the BEGIN line, base64 lines of at most 64 characters all full but the last, the END line,
 * then at most one newline.
 */
export function pemDecode(text: string, expectedLabel: string): Uint8Array {
  const field = `PEM ${expectedLabel}`;
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const begin = /^-----BEGIN ([^-]*)-----$/.exec(lines[0] ?? '');
  if (!begin) throw new FormatError(field, 'does not start with a "-----BEGIN …-----" line');
  if (begin[1] !== expectedLabel) throw new FormatError(field, `label is "${begin[1]}", expected "${expectedLabel}"`);
  const endIndex = lines.indexOf(`-----END ${expectedLabel}-----`);
  if (endIndex < 0) throw new FormatError(field, `no "-----END ${expectedLabel}-----" line`);
  if (endIndex !== lines.length - 1) throw new FormatError(field, 'text after the END line');
  const body = lines.slice(1, endIndex);
  if (body.length === 0) throw new FormatError(field, 'no base64 content');
  body.forEach((line, i) => {
    const last = i === body.length - 1;
    if (last ? line.length === 0 || line.length > PEM_LINE_LENGTH : line.length !== PEM_LINE_LENGTH) {
      throw new FormatError(
        field,
        `base64 line ${i + 1} is ${line.length} characters (lines hold ${PEM_LINE_LENGTH}, the last at most that)`,
      );
    }
  });
  return fromBase64(body.join(''), field);
}

/** Hex SHA-256 of a key's bytes (FORMAT.md §3: the SPKI DER for ECDSA, the raw 1952 bytes for ML-DSA-65). */
export function fingerprint(bytes: Uint8Array): string {
  return toHex(nobleSha256(bytes));
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  return bytes.length >= prefix.length && equalBytes(bytes.subarray(0, prefix.length), prefix);
}

/** A reader of the one SEQUENCE that `bytes` holds (core/der.ts: strict DER). */
function readSequence(bytes: Uint8Array, field: string, where: string): DerReader {
  const what = `${field}: ${where}`;
  return DerReader.of(expectTag(decode(bytes, what), TAG.SEQUENCE, what), what);
}
