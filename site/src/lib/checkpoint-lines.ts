// What the verified search needs to check a checkpoint's lines beyond ECDSA and ML-DSA-65 (the log's Ed25519 and
// ML-DSA-44 lines, the witnesses' cosignatures and their policy): one module, loaded on demand as one chunk, so
// that pages which check only the first two lines (the home page's showcase) load none of it.
import { parseVkey, vkeyVerifier } from '../../../core/cosignature.ts';
import { parseNote, type NoteVerifier } from '../../../core/note.ts';
import {
  judgeCheckpoint,
  readWitnessPolicy,
  type CosignatureVerdict,
  type WitnessPolicy,
} from '../../../core/witness-policy.ts';
import { SearchUnavailableError, VerificationFailedError, type SearchResult } from './search-result.ts';

/**
 * The checkpoint's other lines: the log's Ed25519 and ML-DSA-44 lines (with its published vkeys) and the
 * witnesses' cosignatures (with keys/witnesses, in either published form), judged as every reader judges them
 * (core/witness-policy.ts judgeCheckpoint). A known key's line that fails to verify, or a witness's second line,
 * fails the search: the checkpoint is not what its signers signed.
 */
export async function otherLines(
  note: Uint8Array,
  origin: string,
  baseSigners: readonly string[],
  edVkey: Uint8Array | null,
  mlVkey: Uint8Array | null,
  witnessPolicy: Uint8Array | null,
): Promise<Pick<SearchResult, 'signers' | 'witnesses' | 'witnessQuorum' | 'witnessQuorumMet'>> {
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  const signers = [...baseSigners];
  const log: NoteVerifier[] = [];
  let policy: WitnessPolicy | null = null;
  try {
    for (const v of [edVkey, mlVkey]) if (v !== null) log.push(vkeyVerifier(parseVkey(decode(v))));
    if (witnessPolicy !== null) policy = readWitnessPolicy(decode(witnessPolicy));
  } catch (err) {
    throw new SearchUnavailableError(`published keys: ${(err as Error).message}`, { cause: err });
  }
  if (log.some((v) => v.name !== origin))
    throw new VerificationFailedError(`checkpoint keys are named ${log.map((v) => v.name).join(', ')}, not ${origin}`);
  const { text, signatures } = parseNote(note);
  const bytes = new TextEncoder().encode(text);
  for (const v of log) {
    const sig = signatures.find((s) => s.name === v.name && s.keyId === v.keyId);
    if (sig === undefined) continue;
    if (!v.verify(bytes, sig.signature))
      throw new VerificationFailedError(`checkpoint: the ${v.algorithm} line of ${v.name} does not verify`);
    signers.push(v.algorithm === 'Ed25519' ? 'Ed25519' : 'ML-DSA-44');
  }
  if (policy === null) return { signers };
  // The latest checkpoint carries the log's lines (checked above) and the witnesses' in one note: the judgement
  // leaves the log's alone.
  let verdict: CosignatureVerdict;
  try {
    verdict = judgeCheckpoint(policy, note, undefined, (w, t, s) => vkeyVerifier(w.vkey).verify(t, s));
  } catch (err) {
    throw new VerificationFailedError(`checkpoint: ${(err as Error).message}`, { cause: err });
  }
  if (verdict.problems.length > 0)
    throw new VerificationFailedError(`checkpoint: ${verdict.problems.map((p) => p.reason).join('; ')}`);
  const cosigned = new Set(verdict.cosigned.map((c) => c.witness));
  // One row per witness of the policy, for people; the verdict is the judgement's.
  const witnesses = policy.witnesses.map((w) => ({ name: w.name, cosigned: cosigned.has(w.name) }));
  for (const w of witnesses) if (w.cosigned) signers.push(w.name);
  return {
    signers,
    witnesses,
    witnessQuorumMet: verdict.met,
    ...(countedQuorum(policy) === undefined ? {} : { witnessQuorum: countedQuorum(policy) }),
  };
}

/**
 * How many of the policy's witnesses must cosign, when counting them is the whole rule: `quorum none`, or a
 * quorum of one group whose members are all the policy's witnesses (every policy Timeseal writes). Otherwise
 * undefined: a count would misstate the quorum, and only witnessQuorumMet says whether it is met.
 */
function countedQuorum(policy: WitnessPolicy): number | undefined {
  if (policy.quorum === 'none') return 0;
  const g = policy.groups.find((x) => x.name === policy.quorum);
  const all = policy.witnesses.map((w) => w.name);
  if (g !== undefined && g.members.length === all.length && all.every((n) => g.members.includes(n))) return g.threshold;
  return all.length === 1 && all[0] === policy.quorum ? 1 : undefined;
}
