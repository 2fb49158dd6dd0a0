// What the verified search needs to check a checkpoint's lines beyond ECDSA and ML-DSA-65 (the log's Ed25519 and
// ML-DSA-44 lines, the witnesses' cosignatures and their policy): one module, loaded on demand as one chunk, so
// that pages which check only the first two lines (the home page's showcase) load none of it.
import { parseVkey, vkeyVerifier } from '../../../core/cosignature.ts';
import { parseNote, type NoteVerifier } from '../../../core/note.ts';
import { flatWitnessPolicy } from '../../../core/witness-policy.ts';
import { SearchUnavailableError, VerificationFailedError, type SearchResult } from './verified-search.ts';

/**
 * The checkpoint's other lines: the log's Ed25519 and ML-DSA-44 lines (with its published vkeys) and the
 * witnesses' cosignatures (with keys/witnesses). A known key's line that fails to verify fails the search: the
 * checkpoint is not what its signers signed.
 */
export async function otherLines(
  note: Uint8Array,
  origin: string,
  baseSigners: readonly string[],
  edVkey: Uint8Array | null,
  mlVkey: Uint8Array | null,
  witnessPolicy: Uint8Array | null,
): Promise<Pick<SearchResult, 'signers' | 'witnesses' | 'witnessQuorum'>> {
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  const signers = [...baseSigners];
  const log: NoteVerifier[] = [];
  let witnessKeys: NoteVerifier[] = [];
  let quorum: number | undefined;
  try {
    for (const v of [edVkey, mlVkey]) if (v !== null) log.push(vkeyVerifier(parseVkey(decode(v))));
    if (witnessPolicy !== null) {
      const policy = flatWitnessPolicy(decode(witnessPolicy));
      quorum = policy.quorum;
      witnessKeys = policy.witnesses.map(vkeyVerifier);
    }
  } catch (err) {
    throw new SearchUnavailableError(`published keys: ${(err as Error).message}`, { cause: err });
  }
  if (log.some((v) => v.name !== origin)) throw new VerificationFailedError(`checkpoint keys are named ${log.map((v) => v.name).join(', ')}, not ${origin}`);
  const { text, signatures } = parseNote(note);
  const bytes = new TextEncoder().encode(text);
  const vouched = new Set<NoteVerifier>();
  for (const sig of signatures) {
    const v = [...log, ...witnessKeys].find((k) => k.name === sig.name && k.keyId === sig.keyId);
    if (v === undefined) continue;
    if (!v.verify(bytes, sig.signature)) throw new VerificationFailedError(`checkpoint: the ${v.algorithm} line of ${v.name} does not verify`);
    vouched.add(v);
  }
  for (const v of log) if (vouched.has(v)) signers.push(v.algorithm === 'Ed25519' ? 'Ed25519' : 'ML-DSA-44');
  const witnesses = witnessKeys.map((v) => ({ name: v.name, cosigned: vouched.has(v) }));
  for (const w of witnesses) if (w.cosigned) signers.push(w.name);
  return { signers, ...(quorum === undefined ? {} : { witnesses, witnessQuorum: quorum }) };
}
