// The signature types that witnesses know (docs/FORMAT.md §4a): a log's Ed25519 note signature (c2sp.org/
// signed-note, type 0x01), and cosignatures (c2sp.org/tlog-cosignature v1): ML-DSA-44 (type 0x06, the
// `subtree/v1` cosigned_message) and Ed25519 (type 0x04, `cosignature/v1`). Timeseal's log signs every new
// checkpoint with an Ed25519 line and an ML-DSA-44 cosignature line besides its ECDSA P-256 and ML-DSA-65
// lines; witnesses answer with cosignature lines of either type. Also the C2SP verifier key ("vkey") text
// form and the PKCS#8 files of the two new private keys.
import { ed25519 } from '@noble/curves/ed25519.js';
import { ml_dsa44 } from '@noble/post-quantum/ml-dsa.js';
import { parseCheckpoint } from './checkpoint.ts';
import { concatBytes, equalBytes, fromBase64, fromHex, fromUtf8, toBase64, toHex, utf8 } from './encoding.ts';
import { FormatError, MismatchError } from './errors.ts';
import { sha256 } from './hash.ts';
import type { NoteSigner, NoteVerifier } from './note.ts';
import { nativeAccepts, pemDecode, pemEncode } from './sig.ts';

export const NOTE_TYPE_ED25519 = 0x01;
export const NOTE_TYPE_ED25519_COSIGNATURE = 0x04;
export const NOTE_TYPE_MLDSA44_COSIGNATURE = 0x06;

export const ED25519_PUBLIC_KEY_SIZE = 32;
export const MLDSA44_PUBLIC_KEY_SIZE = 1312;
export const MLDSA44_SIGNATURE_SIZE = 2420;
const SEED_SIZE = 32;

/** SHA-256(name || "\n" || type || public key)[:4], the key ID of every type here (signed-note, tlog-cosignature). */
export function typedKeyId(name: string, type: number, publicKey: Uint8Array): number {
  const digest = sha256(concatBytes(utf8(name), Uint8Array.of(0x0a, type), publicKey));
  return ((digest[0]! << 24) | (digest[1]! << 16) | (digest[2]! << 8) | digest[3]!) >>> 0;
}

function checkSize(what: string, bytes: Uint8Array, size: number): void {
  if (bytes.length !== size) throw new FormatError(what, `expected ${size} bytes, got ${bytes.length}`);
}

// ---------------------------------------------------------------------------------------------------------
// Ed25519 note signature, type 0x01: Ed25519 (RFC 8032) over the note text.

export function ed25519PublicKey(seed: Uint8Array): Uint8Array {
  checkSize('Ed25519 private key', seed, SEED_SIZE);
  return ed25519.getPublicKey(seed);
}

export function ed25519NoteSigner(name: string, seed: Uint8Array): NoteSigner {
  const publicKey = ed25519PublicKey(seed);
  return {
    name,
    keyId: typedKeyId(name, NOTE_TYPE_ED25519, publicKey),
    algorithm: 'Ed25519',
    sign: (text) => ed25519.sign(text, seed),
  };
}

export function ed25519NoteVerifier(name: string, publicKey: Uint8Array): NoteVerifier {
  checkSize('Ed25519 public key', publicKey, ED25519_PUBLIC_KEY_SIZE);
  return {
    name,
    keyId: typedKeyId(name, NOTE_TYPE_ED25519, publicKey),
    algorithm: 'Ed25519',
    verify: (text, signature) =>
      signature.length === 64 &&
      (nativeAccepts('ed25519', text, signature, publicKey) || ed25519.verify(signature, text, publicKey)),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Cosignatures: signature = timestamp (uint64 big-endian) || signature.

/** The checkpoint a cosignature line covers: the note text's origin, size and root. */
function checkpointOf(text: Uint8Array): { origin: string; size: number; root: Uint8Array } {
  return parseCheckpoint(fromUtf8(text, 'checkpoint'));
}

function uint64(value: number): Uint8Array {
  if (!Number.isSafeInteger(value) || value < 0) throw new FormatError('uint64', `${value} is not a whole number ≥ 0`);
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(value));
  return out;
}

/** The timestamp (seconds) a cosignature line's signature starts with; null when absent or beyond safe integers. */
export function readTimestamp(signature: Uint8Array): number | null {
  if (signature.length < 8) return null;
  const value = new DataView(signature.buffer, signature.byteOffset, 8).getBigUint64(0);
  return value > BigInt(Number.MAX_SAFE_INTEGER) ? null : Number(value);
}

function opaque8(what: string, bytes: Uint8Array): Uint8Array {
  if (bytes.length < 1 || bytes.length > 255) throw new FormatError(what, `must be 1 to 255 bytes, is ${bytes.length}`);
  return concatBytes(Uint8Array.of(bytes.length), bytes);
}

/** tlog-cosignature "ML-DSA-44 signed message": the cosigned_message of a checkpoint (start 0, end = size). */
export function mldsa44CosignedMessage(
  cosigner: string,
  timestamp: number,
  checkpoint: { origin: string; size: number; root: Uint8Array },
): Uint8Array {
  checkSize('checkpoint root', checkpoint.root, 32);
  return concatBytes(
    utf8('subtree/v1\n\0'),
    opaque8('cosigner name', utf8(cosigner)),
    uint64(timestamp),
    opaque8('log origin', utf8(checkpoint.origin)),
    uint64(0),
    uint64(checkpoint.size),
    checkpoint.root,
  );
}

/** tlog-cosignature "Ed25519 signed message": cosignature/v1, the time line, then the note text. */
export function ed25519CosignedMessage(timestamp: number, text: Uint8Array): Uint8Array {
  return concatBytes(utf8(`cosignature/v1\ntime ${timestamp}\n`), text);
}

/** The 1312-byte ML-DSA-44 public key of a 32-byte seed (FIPS 204 ML-DSA.KeyGen_internal). */
export function mldsa44PublicKey(seed: Uint8Array): Uint8Array {
  checkSize('ML-DSA-44 private key seed', seed, SEED_SIZE);
  return ml_dsa44.keygen(seed).publicKey;
}

/**
 * An ML-DSA-44 cosigner of checkpoints: pure ML-DSA-44, empty context, deterministic (a rebuild gives the same
 * bytes), over the cosigned_message with `timestamp(checkpoint)` (0: no statement that the tree is the largest
 * the cosigner has seen, which is what a log says of its own checkpoint).
 */
export function mldsa44CosignatureSigner(
  name: string,
  seed: Uint8Array,
  timestamp: (size: number) => number = () => 0,
): NoteSigner {
  const { secretKey, publicKey } = ml_dsa44.keygen(seed);
  return {
    name,
    keyId: typedKeyId(name, NOTE_TYPE_MLDSA44_COSIGNATURE, publicKey),
    algorithm: 'ML-DSA-44 cosignature',
    sign: (text) => {
      const checkpoint = checkpointOf(text);
      const time = timestamp(checkpoint.size);
      return concatBytes(
        uint64(time),
        ml_dsa44.sign(mldsa44CosignedMessage(name, time, checkpoint), secretKey, { extraEntropy: false }),
      );
    },
  };
}

export function mldsa44CosignatureVerifier(
  name: string,
  publicKey: Uint8Array,
): NoteVerifier & { timestamp(signature: Uint8Array): number | null } {
  checkSize('ML-DSA-44 public key', publicKey, MLDSA44_PUBLIC_KEY_SIZE);
  return {
    name,
    keyId: typedKeyId(name, NOTE_TYPE_MLDSA44_COSIGNATURE, publicKey),
    algorithm: 'ML-DSA-44 cosignature',
    timestamp: readTimestamp,
    verify: (text, signature) => {
      const time = readTimestamp(signature);
      if (time === null || signature.length !== 8 + MLDSA44_SIGNATURE_SIZE) return false;
      let message: Uint8Array;
      try {
        message = mldsa44CosignedMessage(name, time, checkpointOf(text));
      } catch {
        return false;
      }
      return (
        nativeAccepts('ml-dsa-44', message, signature.subarray(8), publicKey) ||
        ml_dsa44.verify(signature.subarray(8), message, publicKey)
      );
    },
  };
}

/** An Ed25519 cosigner (type 0x04), as witnesses of the public network run; for the loopback witness and tests. */
export function ed25519CosignatureSigner(name: string, seed: Uint8Array, timestamp: () => number): NoteSigner {
  const publicKey = ed25519PublicKey(seed);
  return {
    name,
    keyId: typedKeyId(name, NOTE_TYPE_ED25519_COSIGNATURE, publicKey),
    algorithm: 'Ed25519 cosignature',
    sign: (text) => {
      const time = timestamp();
      return concatBytes(uint64(time), ed25519.sign(ed25519CosignedMessage(time, text), seed));
    },
  };
}

export function ed25519CosignatureVerifier(
  name: string,
  publicKey: Uint8Array,
): NoteVerifier & { timestamp(signature: Uint8Array): number | null } {
  checkSize('Ed25519 public key', publicKey, ED25519_PUBLIC_KEY_SIZE);
  return {
    name,
    keyId: typedKeyId(name, NOTE_TYPE_ED25519_COSIGNATURE, publicKey),
    algorithm: 'Ed25519 cosignature',
    timestamp: readTimestamp,
    verify: (text, signature) => {
      const time = readTimestamp(signature);
      if (time === null || signature.length !== 8 + 64) return false;
      const message = ed25519CosignedMessage(time, text);
      return (
        nativeAccepts('ed25519', message, signature.subarray(8), publicKey) ||
        ed25519.verify(signature.subarray(8), message, publicKey)
      );
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Verifier keys (signed-note §Verifier keys): <name>+<hex key ID>+<base64(type || public key)>

export interface Vkey {
  name: string;
  keyId: number;
  type: number;
  publicKey: Uint8Array;
}

export function encodeVkey(name: string, type: number, publicKey: Uint8Array): string {
  return `${name}+${typedKeyId(name, type, publicKey).toString(16).padStart(8, '0')}+${toBase64(concatBytes(Uint8Array.of(type), publicKey))}`;
}

/** Strict parse: a name without '+' or spaces, the key ID it must have, a known type with a key of its size. */
export function parseVkey(text: string): Vkey {
  // The name has no '+'; the base64 key may.
  const m = /^([^+]*)\+([^+]*)\+(.*)$/s.exec(text.trim());
  if (m === null) throw new FormatError('vkey', 'expected <name>+<key id>+<base64 key>');
  const [, name, idHex, encoded] = m as unknown as [string, string, string, string];
  if (name.length === 0 || /\s/u.test(name)) throw new FormatError('vkey', 'the name is empty or has a space');
  if (!/^[0-9a-f]{8}$/.test(idHex)) throw new FormatError('vkey', 'the key ID is not 8 lower-case hex digits');
  const bytes = fromBase64(encoded, 'vkey key');
  if (bytes.length < 2) throw new FormatError('vkey', 'no key');
  const type = bytes[0]!;
  const publicKey = bytes.slice(1);
  const size = {
    [NOTE_TYPE_ED25519]: ED25519_PUBLIC_KEY_SIZE,
    [NOTE_TYPE_ED25519_COSIGNATURE]: ED25519_PUBLIC_KEY_SIZE,
    [NOTE_TYPE_MLDSA44_COSIGNATURE]: MLDSA44_PUBLIC_KEY_SIZE,
  }[type];
  if (size === undefined)
    throw new FormatError(
      'vkey',
      `signature type 0x${type.toString(16).padStart(2, '0')} is not one Timeseal knows (0x01, 0x04, 0x06)`,
    );
  checkSize(`vkey key of type 0x${type.toString(16).padStart(2, '0')}`, publicKey, size);
  const keyId = typedKeyId(name, type, publicKey);
  if (keyId !== Number.parseInt(idHex, 16))
    throw new MismatchError('vkey key ID', keyId.toString(16).padStart(8, '0'), idHex);
  return { name, keyId, type, publicKey };
}

/** The note verifier a vkey stands for (a log key 0x01, or a cosigner 0x04 / 0x06). */
export function vkeyVerifier(vkey: Vkey): NoteVerifier & { timestamp?(signature: Uint8Array): number | null } {
  if (vkey.type === NOTE_TYPE_ED25519) return ed25519NoteVerifier(vkey.name, vkey.publicKey);
  if (vkey.type === NOTE_TYPE_ED25519_COSIGNATURE) return ed25519CosignatureVerifier(vkey.name, vkey.publicKey);
  return mldsa44CosignatureVerifier(vkey.name, vkey.publicKey);
}

// ---------------------------------------------------------------------------------------------------------
// Private key files: PKCS#8 holding the 32-byte seed — RFC 8410 for Ed25519, RFC 9881 seed-only for ML-DSA-44.

const ED25519_PKCS8_PREFIX = fromHex('302e020100300506032b657004220420');
/** PKCS#8 v0, id-ml-dsa-44 (2.16.840.1.101.3.4.3.17), OCTET STRING { [0] IMPLICIT seed (32) }. */
const MLDSA44_PKCS8_SEED_PREFIX = fromHex('3034020100300b060960864801650304031104228020');

export function seedToPkcs8Pem(algorithm: 'Ed25519' | 'ML-DSA-44', seed: Uint8Array): string {
  checkSize(`${algorithm} seed`, seed, SEED_SIZE);
  return pemEncode(
    'PRIVATE KEY',
    concatBytes(algorithm === 'Ed25519' ? ED25519_PKCS8_PREFIX : MLDSA44_PKCS8_SEED_PREFIX, seed),
  );
}

export function seedFromPkcs8Pem(algorithm: 'Ed25519' | 'ML-DSA-44', pem: string): Uint8Array {
  const der = pemDecode(pem, 'PRIVATE KEY');
  const prefix = algorithm === 'Ed25519' ? ED25519_PKCS8_PREFIX : MLDSA44_PKCS8_SEED_PREFIX;
  if (der.length !== prefix.length + SEED_SIZE || !equalBytes(der.subarray(0, prefix.length), prefix)) {
    throw new FormatError(
      `${algorithm} private key`,
      `not a PKCS#8 ${algorithm} seed (${toHex(der.subarray(0, 24))}…)`,
    );
  }
  return der.slice(prefix.length);
}
