// COSE Receipts of inclusion for Timeseal's log (RFC 9942, verifiable data structure RFC9162_SHA256, vds = 1),
// signed as COSE_Sign1 (RFC 9052 §4) with ES256 (ECDSA P-256 and SHA-256, RFC 9053 §2.1) and ML-DSA-65 (COSE
// algorithm −49, RFC 9964), and the receipt keys as COSE keys (RFC 9052 §7; kid = the RFC 9679 thumbprint).
// docs/FORMAT.md §11 describes every byte.
//
// Every day's build signs the day's checkpoint root once per receipt key: a *day signature*, a COSE_Sign1 with
// a detached payload (the root), an empty unprotected header and a protected header holding alg, kid, the CWT
// claims iss (the log origin) and sub (the day, RFC 9597) and vds = 1. A receipt for one leaf of that day is
// the same COSE_Sign1 with the leaf's inclusion proof in the unprotected header (vdp, label 396, −1:
// `[bstr .cbor [tree_size, leaf_index, inclusion_path]]`): the signature covers only the protected header and
// the payload, so one signature a day serves every leaf, and any RFC 9942 verifier recomputes the root from
// the leaf and checks the signature over it. Signing is deterministic (RFC 6979 for ECDSA, the deterministic
// variant of ML-DSA), so a rebuild reproduces every byte.
import { p256 } from '@noble/curves/nist.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js';
import {
  CborTag,
  cborArray,
  cborBytes,
  cborInt,
  cborMap,
  cborText,
  cborUint,
  decodeCbor,
  encodeCbor,
  type CborMap,
  type CborValue,
} from './cbor.ts';
import type { ReceiptKeyName } from './archive.ts';
import { equalBytes, fromBase64, toHex } from './encoding.ts';
import { FormatError, MismatchError, SignatureError, withContext } from './errors.ts';
import { leafHash, rootFromInclusionProof } from './merkle.ts';
import { ECDSA_PUBLIC_KEY_SIZE, MLDSA_PUBLIC_KEY_SIZE, MLDSA_SIGNATURE_SIZE } from './sig.ts';

/** RFC 9052 §4.2: the CBOR tag of a COSE_Sign1. */
export const COSE_SIGN1_TAG = 18;
/** COSE header parameters (IANA "COSE Header Parameters"). */
export const HEADER_ALG = 1;
export const HEADER_CONTENT_TYPE = 3;
export const HEADER_KID = 4;
/** RFC 9597: CWT claims in a COSE header. */
export const HEADER_CWT_CLAIMS = 15;
/** RFC 9360: an X.509 certificate chain, the signer's first. */
export const HEADER_X5CHAIN = 33;
/** RFC 9942 §2: receipts (in a Transparent Statement's unprotected header), vds, vdp. */
export const HEADER_RECEIPTS = 394;
export const HEADER_VDS = 395;
export const HEADER_VDP = 396;
/** RFC 9942 §5.2: RFC9162_SHA256, and its inclusion proofs' label in the vdp map. */
export const VDS_RFC9162_SHA256 = 1;
export const VDP_INCLUSION = -1;
/** RFC 8392 §3.1: the CWT claims iss and sub. */
export const CWT_ISS = 1;
export const CWT_SUB = 2;
/** RFC 9053 §2.1 ES256; RFC 9964 ML-DSA-65. */
export const ALG_ES256 = -7;
export const ALG_ML_DSA_65 = -49;
/** COSE key types (RFC 9053 §7.1 EC2, RFC 9964 AKP), the EC2 curve P-256, and key parameters. */
const KTY = 1;
const KID = 2;
const KEY_ALG = 3;
const KTY_EC2 = 2;
const KTY_AKP = 7;
const EC2_CRV = -1;
const EC2_X = -2;
const EC2_Y = -3;
const CRV_P256 = 1;
const AKP_PUB = -1;
/** The media types of RFC 9052 §9 (`application/cose`) and RFC 9052 §9 for key sets. */
export const COSE_MEDIA_TYPE = 'application/cose';
export const COSE_KEY_SET_MEDIA_TYPE = 'application/cose-key-set';

export type ReceiptAlgorithm = typeof ALG_ES256 | typeof ALG_ML_DSA_65;

export const ALGORITHM_NAMES: Record<ReceiptAlgorithm, string> = {
  [ALG_ES256]: 'ES256',
  [ALG_ML_DSA_65]: 'ML-DSA-65',
};

/** The name of a key's day signature file (core/archive.ts receiptSignaturePath). */
export const receiptKeyName = (alg: ReceiptAlgorithm): ReceiptKeyName => (alg === ALG_ES256 ? 'es256' : 'mldsa65');

/** A receipt key: its algorithm, its raw public key (65-byte uncompressed P-256 point, or 1952-byte ML-DSA-65). */
export interface ReceiptPublicKey {
  alg: ReceiptAlgorithm;
  publicKey: Uint8Array;
}

/** RFC 9679 thumbprint input: the required parameters of the key type, deterministically encoded. */
function thumbprintInput(key: ReceiptPublicKey): CborMap {
  if (key.alg === ALG_ES256) {
    checkKey(key);
    return new Map<number, CborValue>([
      [KTY, KTY_EC2],
      [EC2_CRV, CRV_P256],
      [EC2_X, key.publicKey.subarray(1, 33)],
      [EC2_Y, key.publicKey.subarray(33, 65)],
    ]);
  }
  checkKey(key);
  return new Map<number, CborValue>([
    [KTY, KTY_AKP],
    [KEY_ALG, ALG_ML_DSA_65],
    [AKP_PUB, key.publicKey],
  ]);
}

function checkKey(key: ReceiptPublicKey): void {
  const size = key.alg === ALG_ES256 ? ECDSA_PUBLIC_KEY_SIZE : MLDSA_PUBLIC_KEY_SIZE;
  if (key.publicKey.length !== size || (key.alg === ALG_ES256 && key.publicKey[0] !== 0x04))
    throw new FormatError(`${ALGORITHM_NAMES[key.alg]} receipt key`, `expected a ${size}-byte public key`);
}

/** The key's kid: its RFC 9679 COSE Key Thumbprint (SHA-256), 32 bytes. */
export function receiptKid(key: ReceiptPublicKey): Uint8Array {
  return nobleSha256(encodeCbor(thumbprintInput(key)));
}

/** Extra, non-standard facts a key set states about a key (text labels, which COSE_Key allows). */
export const KEY_DAYS = 'timeseal-days';

/** A key in the published key set: the key, and for a retired key the first and last day it signed. */
export interface ReceiptKeyEntry extends ReceiptPublicKey {
  /** [first day, last day] it signed, for a retired key; absent for a key in use. */
  days?: [string, string];
}

/** Receipt keys no longer in use, with the days they signed (the keys folder's file, docs/FORMAT.md §11): appended
 * to by a rotation, never rewritten. One line each: `retired <ES256|ML-DSA-65> <first day> <last day> <base64 raw
 * public key>`. */
export const RETIRED_RECEIPT_KEYS = 'receipt-keys.retired';

/** The retired receipt keys (RETIRED_RECEIPT_KEYS' text), each with the days it signed. */
export function parseRetiredReceiptKeys(text: string): ReceiptKeyEntry[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line, i) => {
      const where = `${RETIRED_RECEIPT_KEYS} line ${i + 1}`;
      const m = /^retired (ES256|ML-DSA-65) (\d{4}-\d{2}-\d{2}) (\d{4}-\d{2}-\d{2}) ([A-Za-z0-9+/]+={0,2})$/.exec(line);
      if (m === null || m[2]! > m[3]!)
        throw new FormatError(where, 'expected "retired <ES256|ML-DSA-65> <first day> <last day> <base64 key>"');
      const entry: ReceiptKeyEntry = {
        alg: m[1] === 'ES256' ? ALG_ES256 : ALG_ML_DSA_65,
        publicKey: fromBase64(m[4]!, where),
        days: [m[2]!, m[3]!],
      };
      checkKey(entry);
      return entry;
    });
}

/** The COSE_Key of a receipt key (RFC 9052 §7): kty, kid, alg and the public key. */
export function encodeCoseKey(entry: ReceiptKeyEntry): CborMap {
  const map = thumbprintInput(entry);
  map.set(KID, receiptKid(entry));
  map.set(KEY_ALG, entry.alg);
  if (entry.days !== undefined) map.set(KEY_DAYS, [...entry.days]);
  return map;
}

/** The COSE_KeySet (RFC 9052 §7: an array of COSE_Key) that /.well-known/scitt-keys serves, bytes. */
export function encodeCoseKeySet(entries: readonly ReceiptKeyEntry[]): Uint8Array {
  return encodeCbor(entries.map(encodeCoseKey));
}

/** Strict reader of a key set of receipt keys (each kid must be the key's thumbprint). */
export function parseCoseKeySet(bytes: Uint8Array): ReceiptKeyEntry[] {
  const what = 'COSE key set';
  return cborArray(decodeCbor(bytes, what), what).map((item, i) => {
    const where = `${what}[${i}]`;
    const key = cborMap(item, where);
    const alg = cborInt(key.get(KEY_ALG), `${where}.alg`);
    const kty = cborInt(key.get(KTY), `${where}.kty`);
    let entry: ReceiptKeyEntry;
    if (alg === ALG_ES256 && kty === KTY_EC2) {
      if (cborInt(key.get(EC2_CRV), `${where}.crv`) !== CRV_P256)
        throw new FormatError(`${where}.crv`, 'expected P-256 (1)');
      const x = cborBytes(key.get(EC2_X), `${where}.x`);
      const y = cborBytes(key.get(EC2_Y), `${where}.y`);
      if (x.length !== 32 || y.length !== 32) throw new FormatError(where, 'expected 32-byte x and y');
      entry = { alg, publicKey: Uint8Array.of(0x04, ...x, ...y) };
    } else if (alg === ALG_ML_DSA_65 && kty === KTY_AKP) {
      entry = { alg, publicKey: cborBytes(key.get(AKP_PUB), `${where}.pub`) };
    } else {
      throw new FormatError(
        where,
        `key type ${kty} with algorithm ${alg} is not a receipt key (ES256 EC2, ML-DSA-65 AKP)`,
      );
    }
    checkKey(entry);
    const kid = cborBytes(key.get(KID), `${where}.kid`);
    if (!equalBytes(kid, receiptKid(entry)))
      throw new MismatchError(`${where}.kid (RFC 9679 thumbprint)`, toHex(receiptKid(entry)), toHex(kid));
    const days = key.get(KEY_DAYS);
    if (days !== undefined) {
      const [first, last, ...rest] = cborArray(days, `${where}.${KEY_DAYS}`).map((d) =>
        cborText(d, `${where}.${KEY_DAYS}`),
      );
      if (first === undefined || last === undefined || rest.length > 0 || first > last)
        throw new FormatError(`${where}.${KEY_DAYS}`, 'expected [first day, last day]');
      entry.days = [first, last];
    }
    const expected = encodeCbor(encodeCoseKey(entry));
    if (!equalBytes(expected, encodeCbor(key)))
      throw new FormatError(where, 'has parameters a receipt key does not have');
    return entry;
  });
}

// ---- COSE_Sign1 ----

export interface CoseSign1 {
  /** The protected header as serialized (a bstr's content: the signature covers these bytes). */
  protectedBytes: Uint8Array;
  protectedHeader: CborMap;
  unprotectedHeader: CborMap;
  /** null: detached. */
  payload: Uint8Array | null;
  signature: Uint8Array;
}

/** RFC 9052 §4.4 Sig_structure for a COSE_Sign1, with empty external_aad. */
export function sigStructure(protectedBytes: Uint8Array, payload: Uint8Array): Uint8Array {
  return encodeCbor(['Signature1', protectedBytes, new Uint8Array(0), payload]);
}

/** The tagged COSE_Sign1, deterministically encoded. */
export function encodeCoseSign1(m: Omit<CoseSign1, 'protectedHeader'>): Uint8Array {
  return encodeCbor(new CborTag(COSE_SIGN1_TAG, [m.protectedBytes, m.unprotectedHeader, m.payload, m.signature]));
}

/**
 * Strict reader of a COSE_Sign1 (deterministic CBOR, core/cbor.ts): tagged 18 (or untagged when `tagged` is
 * false: RFC 9052 lets the context say what it is), four elements, a protected header that is empty or a map.
 */
export function parseCoseSign1(bytes: Uint8Array, what: string, options: { tagged?: boolean } = {}): CoseSign1 {
  let item = decodeCbor(bytes, what);
  if (item instanceof CborTag) {
    if (item.tag !== COSE_SIGN1_TAG) throw new FormatError(what, `tag ${item.tag} is not a COSE_Sign1 (18)`);
    item = item.value;
  } else if (options.tagged !== false) {
    throw new FormatError(what, 'not tagged as a COSE_Sign1 (tag 18)');
  }
  const parts = cborArray(item, what);
  if (parts.length !== 4) throw new FormatError(what, `a COSE_Sign1 has 4 elements, not ${parts.length}`);
  const protectedBytes = cborBytes(parts[0], `${what} protected header`);
  const protectedHeader =
    protectedBytes.length === 0
      ? new Map()
      : cborMap(decodeCbor(protectedBytes, `${what} protected header`), `${what} protected header`);
  const unprotectedHeader = cborMap(parts[1], `${what} unprotected header`);
  const payload = parts[2] === null ? null : cborBytes(parts[2], `${what} payload`);
  const signature = cborBytes(parts[3], `${what} signature`);
  for (const label of protectedHeader.keys()) {
    if (unprotectedHeader.has(label))
      throw new FormatError(what, `header parameter ${label} is in both the protected and the unprotected header`);
  }
  return { protectedBytes, protectedHeader, unprotectedHeader, payload, signature };
}

// ---- Day signatures and receipts ----

export interface ReceiptSigningKey extends ReceiptPublicKey {
  /** 32-byte P-256 secret scalar, or the 32-byte ML-DSA-65 seed. */
  secret: Uint8Array;
}

/** The protected header of a day signature: alg, kid, CWT claims {iss, sub}, vds. */
export function daySignatureProtectedHeader(key: ReceiptPublicKey, origin: string, date: string): Uint8Array {
  return encodeCbor(
    new Map<number, CborValue>([
      [HEADER_ALG, key.alg],
      [HEADER_KID, receiptKid(key)],
      [
        HEADER_CWT_CLAIMS,
        new Map<number, CborValue>([
          [CWT_ISS, origin],
          [CWT_SUB, date],
        ]),
      ],
      [HEADER_VDS, VDS_RFC9162_SHA256],
    ]),
  );
}

/** A signature over a COSE Sig_structure: ES256 as 64-byte r || s (RFC 9053 §2.1), ML-DSA-65 pure, empty context. */
export function signSigStructure(toBeSigned: Uint8Array, key: ReceiptSigningKey): Uint8Array {
  if (key.alg === ALG_ES256)
    return p256.sign(toBeSigned, key.secret, { prehash: true, lowS: true, format: 'compact', extraEntropy: false });
  return ml_dsa65.sign(toBeSigned, ml_dsa65.keygen(key.secret).secretKey, { extraEntropy: false });
}

/** Checks a signature over a Sig_structure with the key's algorithm. */
export function verifySigStructure(toBeSigned: Uint8Array, signature: Uint8Array, key: ReceiptPublicKey): boolean {
  try {
    if (key.alg === ALG_ES256)
      return (
        signature.length === 64 &&
        p256.verify(signature, toBeSigned, key.publicKey, { prehash: true, lowS: false, format: 'compact' })
      );
    return signature.length === MLDSA_SIGNATURE_SIZE && ml_dsa65.verify(signature, toBeSigned, key.publicKey);
  } catch {
    return false;
  }
}

/** The day signature of `root` (the day's checkpoint root, 32 bytes): a detached COSE_Sign1 (docs/FORMAT.md §11). */
export function signDayRoot(root: Uint8Array, key: ReceiptSigningKey, origin: string, date: string): Uint8Array {
  if (root.length !== 32) throw new FormatError('root', 'expected 32 bytes');
  const protectedBytes = daySignatureProtectedHeader(key, origin, date);
  const signature = signSigStructure(sigStructure(protectedBytes, root), key);
  return encodeCoseSign1({ protectedBytes, unprotectedHeader: new Map(), payload: null, signature });
}

/** RFC 9942 §5.2.1: the inclusion proof of RFC9162_SHA256. */
export interface InclusionProof {
  treeSize: number;
  leafIndex: number;
  /** RFC 9162 §2.1.3 order: the leaf's sibling first. */
  path: Uint8Array[];
}

/** A receipt for one leaf: the day signature with the leaf's inclusion proof in its unprotected header. */
export function receiptFromDaySignature(daySignature: Uint8Array, proof: InclusionProof): Uint8Array {
  const sign1 = parseCoseSign1(daySignature, 'day signature');
  if (sign1.unprotectedHeader.size !== 0 || sign1.payload !== null)
    throw new FormatError('day signature', 'expected an empty unprotected header and a detached payload');
  const encodedProof = encodeCbor([proof.treeSize, proof.leafIndex, proof.path]);
  const vdp = new Map<number, CborValue>([[VDP_INCLUSION, [encodedProof]]]);
  return encodeCoseSign1({ ...sign1, unprotectedHeader: new Map([[HEADER_VDP, vdp]]) });
}

/**
 * Checks a day's receipt signature file (docs/FORMAT.md §11): a COSE_Sign1 with an empty unprotected header and
 * a detached payload, vds 1, `iss` the origin, `sub` the day, a kid among `keys`, signing the day's root.
 */
export function verifyDaySignature(
  bytes: Uint8Array,
  day: { origin: string; date: string; root: Uint8Array },
  keys: readonly ReceiptPublicKey[],
): ReceiptAlgorithm {
  const what = 'receipt signature';
  const sign1 = parseCoseSign1(bytes, what);
  const header = receiptHeader(sign1, what);
  if (sign1.unprotectedHeader.size !== 0 || sign1.payload !== null)
    throw new FormatError(what, 'expected an empty unprotected header and a detached payload');
  if (header.iss !== day.origin) throw new MismatchError(`${what} iss`, day.origin, header.iss);
  if (header.sub !== day.date) throw new MismatchError(`${what} sub`, day.date, header.sub);
  const key = keys.find((k) => k.alg === header.alg && equalBytes(receiptKid(k), header.kid));
  if (key === undefined)
    throw new FormatError(
      `${what} kid`,
      `${toHex(header.kid)} is none of the ${ALGORITHM_NAMES[header.alg]} receipt keys`,
    );
  const expected = encodeCoseSign1({ ...sign1 });
  if (!equalBytes(expected, bytes)) throw new FormatError(what, 'not in the deterministic encoding');
  if (!verifySigStructure(sigStructure(sign1.protectedBytes, day.root), sign1.signature, key))
    throw new SignatureError(`${what} (${ALGORITHM_NAMES[header.alg]}) over root ${toHex(day.root)}`);
  return header.alg;
}

export interface VerifiedReceipt {
  alg: ReceiptAlgorithm;
  kid: string;
  iss: string;
  sub: string;
  treeSize: number;
  leafIndex: number;
  /** The root the proof leads to and the signature covers, hex. */
  root: string;
}

/** The header facts of a receipt (or a day signature) before anything is checked. */
export function receiptHeader(
  sign1: CoseSign1,
  what: string,
): { alg: ReceiptAlgorithm; kid: Uint8Array; iss: string; sub: string } {
  const h = sign1.protectedHeader;
  const alg = cborInt(h.get(HEADER_ALG), `${what} alg`);
  if (alg !== ALG_ES256 && alg !== ALG_ML_DSA_65)
    throw new FormatError(`${what} alg`, `${alg} is neither ES256 (−7) nor ML-DSA-65 (−49)`);
  const vds = cborInt(h.get(HEADER_VDS), `${what} vds`);
  if (vds !== VDS_RFC9162_SHA256) throw new FormatError(`${what} vds`, `${vds} is not RFC9162_SHA256 (1)`);
  const kid = cborBytes(h.get(HEADER_KID), `${what} kid`);
  const claims = cborMap(h.get(HEADER_CWT_CLAIMS), `${what} CWT claims`);
  return {
    alg,
    kid,
    iss: cborText(claims.get(CWT_ISS), `${what} CWT claim iss`),
    sub: cborText(claims.get(CWT_SUB), `${what} CWT claim sub`),
  };
}

/**
 * Verifies a receipt for `entry` (the 32-byte leaf entry: the submitted hash, docs/FORMAT.md §1) with the
 * receipt keys: strict COSE_Sign1, vds 1, a kid among `keys` with the header's alg, a detached payload, exactly
 * one inclusion proof, the root it leads to from SHA-256(0x00 || entry), and the signature over that root.
 * Throws a typed error naming the first thing that fails.
 */
export function verifyReceipt(
  receipt: Uint8Array,
  entry: Uint8Array,
  keys: readonly ReceiptPublicKey[],
  options: {
    /** Signatures already verified (true) or refused (false), by key, protected header, root and signature:
     * every leaf of a day shares the day's signature over one root, so a reader of many receipts verifies it
     * once. Given, it is read and filled. */
    verified?: Map<string, boolean>;
  } = {},
): VerifiedReceipt {
  const what = 'receipt';
  const sign1 = parseCoseSign1(receipt, what);
  const header = receiptHeader(sign1, what);
  const key = keys.find((k) => k.alg === header.alg && equalBytes(receiptKid(k), header.kid));
  if (key === undefined)
    throw new FormatError(
      `${what} kid`,
      `${toHex(header.kid)} is none of the published ${ALGORITHM_NAMES[header.alg]} receipt keys`,
    );
  if (sign1.payload !== null) throw new FormatError(`${what} payload`, 'expected a detached payload (nil)');
  const extra = [...sign1.unprotectedHeader.keys()].filter((k) => k !== HEADER_VDP);
  if (extra.length > 0) throw new FormatError(`${what} unprotected header`, `unexpected parameter ${extra[0]}`);
  const vdp = cborMap(sign1.unprotectedHeader.get(HEADER_VDP), `${what} vdp (396)`);
  if (vdp.size !== 1 || !vdp.has(VDP_INCLUSION))
    throw new FormatError(`${what} vdp (396)`, 'expected inclusion proofs (−1) alone');
  const proofs = cborArray(vdp.get(VDP_INCLUSION), `${what} inclusion proofs`);
  if (proofs.length !== 1) throw new FormatError(`${what} inclusion proofs`, `expected one, got ${proofs.length}`);
  const proofItem = cborArray(
    decodeCbor(cborBytes(proofs[0], `${what} inclusion proof`), `${what} inclusion proof`),
    `${what} inclusion proof`,
  );
  if (proofItem.length !== 3)
    throw new FormatError(`${what} inclusion proof`, 'expected [tree_size, leaf_index, inclusion_path]');
  const treeSize = cborUint(proofItem[0], `${what} tree_size`);
  const leafIndex = cborUint(proofItem[1], `${what} leaf_index`);
  const path = cborArray(proofItem[2], `${what} inclusion_path`).map((p, i) =>
    cborBytes(p, `${what} inclusion_path[${i}]`),
  );
  if (entry.length !== 32) throw new FormatError('entry', 'expected a 32-byte hash');
  let root: Uint8Array;
  try {
    root = rootFromInclusionProof(leafHash(entry), leafIndex, treeSize, path);
  } catch (err) {
    throw withContext(`${what} inclusion proof`, err);
  }
  const toBeSigned = sigStructure(sign1.protectedBytes, root);
  const memo = `${header.alg}:${toHex(receiptKid(key))}:${toHex(toBeSigned)}:${toHex(sign1.signature)}`;
  let good = options.verified?.get(memo);
  if (good === undefined) {
    good = verifySigStructure(toBeSigned, sign1.signature, key);
    options.verified?.set(memo, good);
  }
  if (!good) {
    throw new SignatureError(
      `${what} (${ALGORITHM_NAMES[header.alg]}, kid ${toHex(header.kid).slice(0, 16)}…) over root ${toHex(root)} of leaf ${leafIndex}`,
    );
  }
  return {
    alg: header.alg,
    kid: toHex(header.kid),
    iss: header.iss,
    sub: header.sub,
    treeSize,
    leafIndex,
    root: toHex(root),
  };
}
