// The Bitcoin anchor of a COSE receipt's root (docs/FORMAT.md §11, "Anchored in Bitcoin"). A receipt's signature
// covers the day's checkpoint root R, and the day's calendar commitment is C = SHA-256(R || F) (core/ots-path.ts,
// F the SHA-256 of the day's ledger file), so R has a standard detached OpenTimestamps proof of its own: the
// file digest R, `append F`, `sha256` (reaching C), then the calendar's tree. It is cut out of a leaf's per-hash
// proof, whose path runs from the leaf's hash through R to C, so any published leaf's `.ots` gives its
// receipt's anchor. Pure: Uint8Array only.
import { equalBytes, toHex } from './encoding.ts';
import { FormatError, MismatchError } from './errors.ts';
import { dayCommitment } from './ots-path.ts';
import type { DetachedTimestampFile, Timestamp } from './ots.ts';

/** A per-hash proof's path to the root has one op a level; more than this many is not one of ours. */
const MAX_PATH_OPS = 4 * 64 + 8;

/**
 * The `.ots` of the root `root` cut from `perHash`, the per-hash proof of a leaf of that day (docs/FORMAT.md §8):
 * the single chain of ops from the leaf's hash to R, then at R exactly `append F, sha256` to the day's
 * commitment. Throws a FormatError or MismatchError when the proof does not have that shape.
 */
export function receiptRootTimestamp(
  perHash: DetachedTimestampFile,
  root: Uint8Array,
  ledgerSha256: Uint8Array,
): DetachedTimestampFile {
  if (perHash.fileHashOp !== 'sha256') throw new FormatError('per-hash proof', 'its file hash op is not sha256');
  let node: Timestamp = perHash.timestamp;
  for (let steps = 0; !equalBytes(node.message, root); steps++) {
    if (steps > MAX_PATH_OPS || node.ops.length !== 1 || node.attestations.length > 0)
      throw new FormatError('per-hash proof', `its path does not reach the root ${toHex(root)}`);
    node = node.ops[0]!.timestamp;
  }
  const commitment = dayCommitment(root, ledgerSha256);
  const append = node.ops.length === 1 ? node.ops[0]! : undefined;
  const hashed = append?.timestamp.ops.length === 1 ? append.timestamp.ops[0]! : undefined;
  if (
    append === undefined ||
    append.op.kind !== 'append' ||
    !equalBytes(append.op.argument, ledgerSha256) ||
    hashed === undefined ||
    hashed.op.kind !== 'sha256'
  )
    throw new FormatError('per-hash proof', `the root is not followed by "append ${toHex(ledgerSha256)}, sha256"`);
  if (!equalBytes(hashed.timestamp.message, commitment))
    throw new MismatchError('day commitment', toHex(commitment), toHex(hashed.timestamp.message));
  return { fileHashOp: 'sha256', timestamp: node };
}
