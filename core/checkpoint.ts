// Checkpoints (c2sp.org/tlog-checkpoint): the signed-note body naming a tree head, and its signing and
// verification with the archive's two keys (docs/FORMAT.md §4).
//
//   <origin>
//   <tree size, decimal>
//   <base64 root hash>
//   [extension lines — parsed, never written]
import { fromBase64, toBase64 } from './encoding.ts';
import { FormatError, MismatchError, SignatureError } from './errors.ts';
import { HASH_SIZE } from './hash.ts';
import { signNote, verifyNoteSignatures, type NoteSigner, type NoteVerifier } from './note.ts';

export type Checkpoint = { origin: string; size: number; root: Uint8Array };
export type ParsedCheckpoint = Checkpoint & { extensions: string[] };

/** tlog-checkpoint §Note text, line 2: ASCII decimal, no leading zeroes unless the tree is empty. */
const TREE_SIZE = /^(0|[1-9][0-9]*)$/;

/** The checkpoint body, without extension lines (FORMAT.md §4). */
export function encodeCheckpoint(checkpoint: Checkpoint): string {
  const { origin, size, root } = checkpoint;
  checkOrigin(origin);
  if (!Number.isSafeInteger(size) || size < 0) throw new FormatError('checkpoint size', `${size} is not a tree size`);
  if (root.length !== HASH_SIZE)
    throw new FormatError('checkpoint root', `expected ${HASH_SIZE} bytes, got ${root.length}`);
  return `${origin}\n${size}\n${toBase64(root)}\n`;
}

/** A checkpoint body (the note text, not the signed note); extension lines are returned as they are. */
export function parseCheckpoint(text: string): ParsedCheckpoint {
  if (!text.endsWith('\n')) throw new FormatError('checkpoint', 'does not end in a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3)
    throw new FormatError('checkpoint', `${lines.length} lines, expected at least 3 (origin, size, root)`);
  const [origin, sizeText, rootText, ...extensions] = lines as [string, string, string, ...string[]];
  if (origin.length === 0) throw new FormatError('checkpoint origin', 'is empty');
  if (!TREE_SIZE.test(sizeText))
    throw new FormatError('checkpoint size', `"${sizeText}" is not a decimal number without leading zeros`);
  const size = Number(sizeText);
  if (!Number.isSafeInteger(size))
    throw new FormatError('checkpoint size', `${sizeText} is larger than ${Number.MAX_SAFE_INTEGER}`);
  const root = fromBase64(rootText, 'checkpoint root');
  if (root.length !== HASH_SIZE)
    throw new FormatError('checkpoint root', `${root.length} bytes, expected ${HASH_SIZE}`);
  extensions.forEach((line, i) => {
    if (line.length === 0) throw new FormatError('checkpoint', `extension line ${i + 1} is empty`);
  });
  return { origin, size, root, extensions };
}

/** The signed checkpoint note (FORMAT.md §4: signers named after the origin, ECDSA line first). */
export function signCheckpoint(checkpoint: Checkpoint, signers: readonly NoteSigner[]): string {
  return signNote(encodeCheckpoint(checkpoint), signers);
}

export type VerifyCheckpointOptions = {
  /**
   * When true (the default), every algorithm among the verifiers must have verified a signature, so a
   * checkpoint checked with both the ECDSA and the ML-DSA-65 key needs both lines. When false, one
   * verified known key is enough, as signed-note alone requires.
   */
  requireEveryAlgorithm?: boolean;
  /** When given, the checkpoint's origin must equal it. */
  origin?: string;
};

/** Verifies a signed checkpoint note and returns its parsed body. */
export function verifyCheckpoint(
  note: string | Uint8Array,
  verifiers: readonly NoteVerifier[],
  options: VerifyCheckpointOptions = {},
): ParsedCheckpoint {
  const { text, verified } = verifyNoteSignatures(note, verifiers);
  const checkpoint = parseCheckpoint(text);
  if (options.requireEveryAlgorithm ?? true) {
    for (const verifier of verifiers) {
      if (!verified.some((v) => v.algorithm === verifier.algorithm)) {
        throw new SignatureError(
          `checkpoint ${checkpoint.origin} ${checkpoint.size}: no ${verifier.algorithm} line from ${verifier.name} (key id ${verifier.keyId.toString(16).padStart(8, '0')})`,
        );
      }
    }
  }
  if (options.origin !== undefined && options.origin !== checkpoint.origin) {
    throw new MismatchError('checkpoint origin', options.origin, checkpoint.origin);
  }
  return checkpoint;
}

/** Origins double as signed-note key names (FORMAT.md §4), so they follow the key name rules. */
function checkOrigin(origin: string): void {
  if (origin.length === 0) throw new FormatError('checkpoint origin', 'is empty');
  if (/[\p{White_Space}+]/u.test(origin) || /[\u0000-\u001f]/.test(origin)) {
    throw new FormatError('checkpoint origin', `"${origin}" contains a space, a control character or '+'`);
  }
}
