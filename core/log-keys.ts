// The log's own checkpoint keys (docs/FORMAT.md §4): ECDSA P-256 and ML-DSA-65 on every checkpoint, and the
// Ed25519 (0x01) and ML-DSA-44 cosignature (0x06) keys that witnesses know, on checkpoints made after the
// archive got them. Separate from core/day.ts so that the offline verifier, which checks the first two only,
// does not bundle Ed25519 and ML-DSA-44.
import { ed25519NoteVerifier, mldsa44CosignatureVerifier } from './cosignature.ts';
import type { PublicKeySet } from './day.ts';
import { SignatureError } from './errors.ts';
import { ecdsaNoteVerifier, mldsaNoteVerifier, parseNote, verifyNoteSignatures, type NoteVerifier } from './note.ts';

/** Every key that signs the log's checkpoints: ECDSA P-256, ML-DSA-65, and the Ed25519 and ML-DSA-44 keys when given. */
export function logVerifiers(origin: string, keys: PublicKeySet): NoteVerifier[] {
  const verifiers = [ecdsaNoteVerifier(origin, keys.ecdsa), mldsaNoteVerifier(origin, keys.mldsa)];
  if (keys.ed25519 !== undefined) verifiers.push(ed25519NoteVerifier(origin, keys.ed25519));
  if (keys.mldsa44 !== undefined) verifiers.push(mldsa44CosignatureVerifier(origin, keys.mldsa44));
  return verifiers;
}

/**
 * A day's checkpoint holds the log's own lines only (witness cosignatures live in D.cosignatures): each line must
 * be from one of the log's keys and verify, so a changed byte anywhere (even in a key name) is caught. The Ed25519
 * and ML-DSA-44 lines come together or not at all (checkpoints made before `timeseal keys add` have neither).
 */
export function checkLogLines(text: string, verifiers: NoteVerifier[]): void {
  const { signatures } = parseNote(text);
  signatures.forEach((sig, i) => {
    if (!verifiers.some((v) => v.name === sig.name && v.keyId === sig.keyId)) {
      throw new SignatureError(
        `signature line ${i + 1} (${sig.name}, key id ${sig.keyId.toString(16).padStart(8, '0')}) is from none of the log's keys`,
      );
    }
  });
  const { verified } = verifyNoteSignatures(text, verifiers);
  const extra = verified.filter((v) => v.algorithm === 'Ed25519' || v.algorithm === 'ML-DSA-44 cosignature');
  if (extra.length === 1)
    throw new SignatureError(
      `has a ${extra[0]!.algorithm} line without the ${extra[0]!.algorithm === 'Ed25519' ? 'ML-DSA-44 cosignature' : 'Ed25519'} line`,
    );
}
