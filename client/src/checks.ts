// Checks shared by upgrade (before it keeps anything) and verify (offline): a checkpoint's signature lines with
// the pinned keys and the witness policy, and the path of a bundle's per-hash OpenTimestamps proof. Every byte
// is read by core/.
import { vkeyVerifier } from '../../core/cosignature.ts';
import { equalBytes, fromBase64, fromHex, toHex } from '../../core/encoding.ts';
import { logVerifiers } from '../../core/log-keys.ts';
import { verifyNoteSignatures } from '../../core/note.ts';
import { appendOp, parseDetached, SHA256_OP, walkAttestations, type OtsOp, type Timestamp } from '../../core/ots.ts';
import { dayCommitment, inclusionPathOps } from '../../core/ots-path.ts';
import type { ProofBundle } from '../../core/proof.ts';
import { judgeCheckpoint } from '../../core/witness-policy.ts';
import type { LoadedKeys } from './keys.ts';

export interface LineFacts {
  /** The log's keys whose lines verified: 'ECDSA P-256', 'ML-DSA-65', and 'Ed25519', 'ML-DSA-44' when present. */
  signers: string[];
  /** The witness policy's judgement; null when no policy is pinned. */
  witnesses: null | {
    required: boolean;
    met: boolean;
    cosigned: Array<{ name: string; time: string | null }>;
    unknown: number;
    problems: string[];
  };
}

const SIGNER_NAMES: Record<string, string> = {
  'ECDSA-P256-SHA256': 'ECDSA P-256',
  'ML-DSA-65': 'ML-DSA-65',
  Ed25519: 'Ed25519',
  'ML-DSA-44 cosignature': 'ML-DSA-44',
};

/**
 * The signature lines of a checkpoint (signed note): the log's own lines must verify under the pinned keys
 * (Ed25519 and ML-DSA-44 together or not at all), and the other lines are judged against the witness policy
 * (core/witness-policy.ts judgeCheckpoint: a known witness's bad or second line is a problem, unknown lines are
 * ignored). Throws when a log line does not verify, or the note is not signature lines.
 */
export function checkpointLines(note: string, origin: string, keys: LoadedKeys): LineFacts {
  const verifiers = logVerifiers(origin, keys.set);
  const { verified } = verifyNoteSignatures(note, verifiers);
  const algorithms = verified.map((v) => v.algorithm);
  if (!algorithms.includes('ECDSA-P256-SHA256') || !algorithms.includes('ML-DSA-65'))
    throw new Error('the checkpoint lacks a verified ECDSA P-256 or ML-DSA-65 line of the log');
  if (algorithms.includes('Ed25519') !== algorithms.includes('ML-DSA-44 cosignature'))
    throw new Error('the checkpoint has one of the Ed25519 and ML-DSA-44 lines without the other');
  const signers = verified.map((v) => SIGNER_NAMES[v.algorithm] ?? v.algorithm);
  if (keys.policy === null) return { signers, witnesses: null };
  // The bundle's checkpoint carries the log's lines (checked above with the pinned keys; the judgement leaves
  // them alone) and the witnesses' lines in one note.
  const verdict = judgeCheckpoint(keys.policy, note, undefined, (w, text, sig) =>
    vkeyVerifier(w.vkey).verify(text, sig),
  );
  const cosigned = verdict.cosigned.map((c) => ({
    name: c.witness,
    time: c.time === null || c.time === 0 || c.time > 8.64e12 ? null : new Date(c.time * 1000).toISOString(),
  }));
  const unknown = verdict.ignored.filter((i) => i.reason !== 'log').length;
  return {
    signers,
    witnesses: {
      required: keys.policy.quorum !== 'none',
      met: verdict.met,
      cosigned,
      unknown,
      problems: verdict.problems.map((p) => p.reason),
    },
  };
}

export interface OtsFacts {
  /** Bitcoin attestations on the day commitment's tree: the block height and the merkle root it must carry. */
  bitcoin: Array<{ height: number; message: Uint8Array }>;
  /** Calendars still pending. */
  pending: string[];
}

const sameOp = (a: OtsOp, b: OtsOp): boolean =>
  a.kind === b.kind && (!('argument' in a) || ('argument' in b && equalBytes(a.argument, b.argument)));

/**
 * Reads a bundle's per-hash `.ots` (docs/FORMAT.md §8): it must start at the hash, follow the inclusion path to
 * the checkpoint root (`root`, verified by the caller), append the ledger file's SHA-256 and hash to the day's
 * commitment C = SHA-256(root || ledger SHA-256); the attestations on C's tree are returned. Throws otherwise.
 */
export function readBundleOts(bundle: ProofBundle, root: string): OtsFacts {
  const detached = parseDetached(fromBase64(bundle.ots!, 'ots'));
  if (detached.fileHashOp !== 'sha256' || toHex(detached.timestamp.message) !== bundle.hash) {
    throw new Error(
      `the .ots starts at ${detached.fileHashOp} ${toHex(detached.timestamp.message)}, not at the hash ${bundle.hash}`,
    );
  }
  const ledgerSha = fromHex(bundle.ledger.sha256);
  const ops = [
    ...inclusionPathOps(
      bundle.leafIndex,
      bundle.treeSize,
      bundle.inclusionPath.map((h) => fromHex(h)),
    ),
    appendOp(ledgerSha),
    SHA256_OP,
  ];
  let node: Timestamp = detached.timestamp;
  for (const op of ops) {
    const branch = node.ops.find((b) => sameOp(b.op, op));
    if (branch === undefined)
      throw new Error(
        "the .ots does not follow the inclusion path through the checkpoint root and the ledger file's SHA-256",
      );
    node = branch.timestamp;
  }
  const commitment = dayCommitment(fromHex(root), ledgerSha);
  if (!equalBytes(node.message, commitment))
    throw new Error(`the .ots reaches ${toHex(node.message)}, not the day's commitment ${toHex(commitment)}`);
  const bitcoin: OtsFacts['bitcoin'] = [];
  const pending: string[] = [];
  for (const { message, attestation } of walkAttestations(node)) {
    if (attestation.kind === 'bitcoin') bitcoin.push({ height: attestation.height, message });
    else if (attestation.kind === 'pending') pending.push(attestation.uri);
  }
  return { bitcoin, pending };
}
