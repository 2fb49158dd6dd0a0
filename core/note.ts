// Signed notes (c2sp.org/signed-note v1.0.0) and the two signature types Timeseal uses in them
// (docs/FORMAT.md §4): ECDSA P-256 (type 0x02) and ML-DSA-65 (the 0xff escape, "timeseal/ML-DSA-65").
//
//   <text ending in newline>
//   <blank line>
//   — <key name> <base64(uint32 key id, big-endian || signature)>   one line per signature
import { sha256 } from './hash.ts';
import { concatBytes, equalBytes, fromBase64, fromUtf8, toBase64, toHex, utf8 } from './encoding.ts';
import { FormatError, MismatchError, SignatureError } from './errors.ts';
import {
  ecdsaPublicKey,
  ecdsaPublicKeyToSpkiDer,
  ecdsaSign,
  ecdsaVerify,
  mldsaPublicKey,
  mldsaSign,
  mldsaVerify,
  MLDSA_PUBLIC_KEY_SIZE,
} from './sig.ts';

/** signed-note §Format: em dash (U+2014) and a space open every signature line. */
const SIGNATURE_LINE_PREFIX = '\u2014 ';
/**
 * signed-note §Format asks verifiers for a limit of at least 16 signatures; 100 is the limit of the Go
 * reference implementation (golang.org/x/mod/sumdb/note).
 */
export const MAX_NOTE_SIGNATURES = 100;
/** signed-note §Signature types: 0x02 is ECDSA as in github.com/transparency-dev/witness. */
export const NOTE_TYPE_ECDSA = 0x02;
/** signed-note §Signature types: 0xff escapes to a longer identifier; FORMAT.md §4 names ours. */
export const NOTE_TYPE_ESCAPE = 0xff;
export const MLDSA_NOTE_IDENTIFIER = 'timeseal/ML-DSA-65';

export type NoteAlgorithm =
  'ECDSA-P256-SHA256' | 'ML-DSA-65' | 'Ed25519' | 'ML-DSA-44 cosignature' | 'Ed25519 cosignature';

/** Signs note text bytes; `keyId` is the uint32 written before each signature. */
export type NoteSigner = {
  readonly name: string;
  readonly keyId: number;
  readonly algorithm: NoteAlgorithm;
  sign(text: Uint8Array): Uint8Array;
};

/** Checks a signature over note text bytes for the key (`name`, `keyId`). Never throws for a bad signature. */
export type NoteVerifier = {
  readonly name: string;
  readonly keyId: number;
  readonly algorithm: NoteAlgorithm;
  verify(text: Uint8Array, signature: Uint8Array): boolean;
};

export type NoteSignature = { name: string; keyId: number; signature: Uint8Array };
export type ParsedNote = { text: string; signatures: NoteSignature[] };
export type VerifiedNote = { text: string; verified: NoteVerifier[] };

/** The note `text` followed by one signature line per signer, in the given order. */
export function signNote(text: string, signers: readonly NoteSigner[]): string {
  checkNoteCharacters(text, 'note text');
  if (!text.endsWith('\n')) throw new FormatError('note text', 'does not end in a newline');
  if (signers.length === 0) throw new FormatError('note signers', 'at least one signer is required');
  if (signers.length > MAX_NOTE_SIGNATURES) {
    throw new FormatError('note signers', `${signers.length} signers, at most ${MAX_NOTE_SIGNATURES}`);
  }
  const bytes = utf8(text);
  let note = text + '\n';
  for (const signer of signers) {
    checkKeyName(signer.name, 'note signer name');
    const line = concatBytes(keyIdBytes(signer.keyId), signer.sign(bytes));
    note += `${SIGNATURE_LINE_PREFIX}${signer.name} ${toBase64(line)}\n`;
  }
  return note;
}

/** Splits a signed note into its text and signature lines without checking any signature. */
export function parseNote(note: string | Uint8Array): ParsedNote {
  const all = typeof note === 'string' ? note : fromUtf8(note, 'note');
  checkNoteCharacters(all, 'note');
  const split = all.lastIndexOf('\n\n');
  if (split < 0) throw new FormatError('note', 'no blank line between the text and the signatures');
  const text = all.slice(0, split + 1);
  const block = all.slice(split + 2);
  if (block.length === 0) throw new FormatError('note', 'no signature lines after the blank line');
  if (!block.endsWith('\n')) throw new FormatError('note', 'the last signature line does not end in a newline');
  const lines = block.slice(0, -1).split('\n');
  if (lines.length > MAX_NOTE_SIGNATURES) {
    throw new FormatError('note', `${lines.length} signature lines, at most ${MAX_NOTE_SIGNATURES}`);
  }
  const signatures = lines.map((line, i) => parseSignatureLine(line, `note signature line ${i + 1}`));
  return { text, signatures };
}

/**
 * Verifies a note against known keys (signed-note §Signatures): lines from unknown keys (name and key id
 * not both matching a verifier) are ignored; a known key whose signature fails rejects the whole note; at
 * least one known key must have signed. Returns the text and the verifiers whose signatures verified.
 */
export function verifyNoteSignatures(note: string | Uint8Array, verifiers: readonly NoteVerifier[]): VerifiedNote {
  const { text, signatures } = parseNote(note);
  const bytes = utf8(text);
  const verified: NoteVerifier[] = [];
  for (const sig of signatures) {
    const verifier = verifiers.find((v) => v.name === sig.name && v.keyId === sig.keyId);
    if (verifier === undefined) continue;
    if (!verifier.verify(bytes, sig.signature)) {
      throw new SignatureError(`note: ${verifier.algorithm} line of ${sig.name} (key id ${keyIdHex(sig.keyId)})`);
    }
    if (!verified.includes(verifier)) verified.push(verifier);
  }
  if (verified.length === 0) {
    const known = verifiers.map((v) => `${v.name} ${keyIdHex(v.keyId)}`).join(', ') || 'none';
    const seen = signatures.map((s) => `${s.name} ${keyIdHex(s.keyId)}`).join(', ');
    throw new SignatureError(`note: no line from a known key (known: ${known}; signed by: ${seen})`);
  }
  return { text, verified };
}

/** The note's text once at least one known key verified it (see verifyNoteSignatures). */
export function openNote(note: string | Uint8Array, verifiers: readonly NoteVerifier[]): string {
  return verifyNoteSignatures(note, verifiers).text;
}

// ---------------------------------------------------------------------------------------------------------
// ECDSA P-256, type 0x02

/** signed-note §Signature types, 0x02: the first 4 bytes of SHA-256 of the SPKI DER public key. */
export function ecdsaNoteKeyId(publicKey: Uint8Array): number {
  return readUint32(sha256(ecdsaPublicKeyToSpkiDer(publicKey)));
}

/** Signs DER ECDSA over SHA-256(note text); `publicKey` must belong to `secretKey`. */
export function ecdsaNoteSigner(name: string, secretKey: Uint8Array, publicKey: Uint8Array): NoteSigner {
  checkKeyName(name, 'ECDSA note key name');
  const derived = ecdsaPublicKey(secretKey);
  if (!equalBytes(derived, publicKey)) {
    throw new MismatchError('ECDSA note signer public key', toHex(derived), toHex(publicKey));
  }
  const keyId = ecdsaNoteKeyId(publicKey);
  return { name, keyId, algorithm: 'ECDSA-P256-SHA256', sign: (text) => ecdsaSign(text, secretKey) };
}

export function ecdsaNoteVerifier(name: string, publicKey: Uint8Array): NoteVerifier {
  checkKeyName(name, 'ECDSA note key name');
  const keyId = ecdsaNoteKeyId(publicKey);
  return {
    name,
    keyId,
    algorithm: 'ECDSA-P256-SHA256',
    verify: (text, signature) => ecdsaVerify(text, signature, publicKey),
  };
}

// ---------------------------------------------------------------------------------------------------------
// ML-DSA-65, type 0xff "timeseal/ML-DSA-65"

/** FORMAT.md §4: SHA-256(name || 0x0A || 0xff || "timeseal/ML-DSA-65" || raw public key)[:4]. */
export function mldsaNoteKeyId(name: string, publicKey: Uint8Array): number {
  if (publicKey.length !== MLDSA_PUBLIC_KEY_SIZE) {
    throw new FormatError('ML-DSA-65 public key', `expected ${MLDSA_PUBLIC_KEY_SIZE} bytes, got ${publicKey.length}`);
  }
  const preimage = concatBytes(
    utf8(name),
    Uint8Array.of(0x0a, NOTE_TYPE_ESCAPE),
    utf8(MLDSA_NOTE_IDENTIFIER),
    publicKey,
  );
  return readUint32(sha256(preimage));
}

/** Signs pure ML-DSA-65 (empty context, deterministic) over the note text; `publicKey` must match. */
export function mldsaNoteSigner(name: string, seedOrSecretKey: Uint8Array, publicKey: Uint8Array): NoteSigner {
  checkKeyName(name, 'ML-DSA-65 note key name');
  const derived = mldsaPublicKey(seedOrSecretKey);
  if (!equalBytes(derived, publicKey)) {
    throw new MismatchError('ML-DSA-65 note signer public key', toHex(derived), toHex(publicKey));
  }
  const keyId = mldsaNoteKeyId(name, publicKey);
  return { name, keyId, algorithm: 'ML-DSA-65', sign: (text) => mldsaSign(text, seedOrSecretKey) };
}

export function mldsaNoteVerifier(name: string, publicKey: Uint8Array): NoteVerifier {
  checkKeyName(name, 'ML-DSA-65 note key name');
  const keyId = mldsaNoteKeyId(name, publicKey);
  return { name, keyId, algorithm: 'ML-DSA-65', verify: (text, signature) => mldsaVerify(text, signature, publicKey) };
}

// ---------------------------------------------------------------------------------------------------------

function parseSignatureLine(line: string, field: string): NoteSignature {
  if (!line.startsWith(SIGNATURE_LINE_PREFIX)) {
    throw new FormatError(field, 'does not start with an em dash (U+2014) and a space');
  }
  const parts = line.slice(SIGNATURE_LINE_PREFIX.length).split(' ');
  if (parts.length !== 2)
    throw new FormatError(field, `expected "— <name> <base64>", got ${parts.length - 1} spaces after the dash`);
  const [name, encoded] = parts as [string, string];
  checkKeyName(name, field);
  const bytes = fromBase64(encoded, field);
  if (bytes.length < 5)
    throw new FormatError(field, `signature is ${bytes.length} bytes, less than a key id and one byte`);
  return { name, keyId: readUint32(bytes), signature: bytes.slice(4) };
}

/** signed-note §Format: valid UTF-8 (no lone surrogates) and no ASCII control character except newline. */
function checkNoteCharacters(text: string, field: string): void {
  if (!text.isWellFormed()) throw new FormatError(field, 'not valid UTF-8 (lone surrogate)');
  const control = /[\u0000-\u0009\u000b-\u001f]/.exec(text);
  if (control) {
    const line = text.slice(0, control.index).split('\n').length;
    throw new FormatError(
      field,
      `control character U+${control[0].charCodeAt(0).toString(16).padStart(4, '0')} on line ${line}`,
    );
  }
}

/** signed-note §Format: key names are non-empty, without Unicode spaces or '+'. */
function checkKeyName(name: string, field: string): void {
  if (name.length === 0) throw new FormatError(field, 'key name is empty');
  if (/[\p{White_Space}+]/u.test(name)) throw new FormatError(field, `key name "${name}" contains a space or '+'`);
  checkNoteCharacters(name, field);
}

function keyIdBytes(keyId: number): Uint8Array {
  if (!Number.isInteger(keyId) || keyId < 0 || keyId > 0xffffffff) {
    throw new FormatError('note key id', `${keyId} is not a uint32`);
  }
  return Uint8Array.of(keyId >>> 24, (keyId >>> 16) & 0xff, (keyId >>> 8) & 0xff, keyId & 0xff);
}

function readUint32(bytes: Uint8Array): number {
  return ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
}

function keyIdHex(keyId: number): string {
  return keyId.toString(16).padStart(8, '0');
}
