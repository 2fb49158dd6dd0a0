// What a proof file holds, read without judging it (verify judges): the stage, the receipt's time and issuer,
// the ledger position, the .ots's attestations and the block headers kept.
import { parseCheckpoint } from '../../core/checkpoint.ts';
import { fromBase64 } from '../../core/encoding.ts';
import { parseNote } from '../../core/note.ts';
import { parseDetached, walkAttestations } from '../../core/ots.ts';
import { receiptFacts } from './verify.ts';
import { bundleOf } from './bundle.ts';
import { stageOf } from './proof-file.ts';
import type { ProofFile, ProofInfo } from './types.ts';

export async function describeProof(proof: ProofFile): Promise<ProofInfo> {
  const bundle = bundleOf(proof);
  let receipt: ProofInfo['receipt'] = null;
  if (proof.receipt !== null) {
    try {
      receipt = await receiptFacts(proof.receipt);
    } catch {
      receipt = null;
    }
  }
  let ots: ProofInfo['ots'] = null;
  if (bundle?.ots != null) {
    const atts = walkAttestations(parseDetached(fromBase64(bundle.ots)).timestamp);
    ots = {
      bitcoin: [...new Set(atts.flatMap((a) => (a.attestation.kind === 'bitcoin' ? [a.attestation.height] : [])))],
      pending: [...new Set(atts.flatMap((a) => (a.attestation.kind === 'pending' ? [a.attestation.uri] : [])))],
    };
  }
  return {
    hash: proof.hash,
    file: proof.file,
    server: proof.server,
    stage: stageOf(proof),
    submittedAt: proof.submittedAt,
    ledgerDate: proof.ledgerDate,
    receipt,
    ledger:
      bundle === null
        ? null
        : {
            date: bundle.date,
            leafIndex: bundle.leafIndex,
            treeSize: bundle.treeSize,
            origin: parseCheckpoint(parseNote(bundle.checkpoint).text).origin,
          },
    ots,
    headers: proof.headers.map((h) => h.height),
    updatedAt: proof.updatedAt,
    omittedFrom: proof.omittedFrom ?? null,
  };
}
