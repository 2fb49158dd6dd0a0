// `timeseal-client info`: what proof files hold, without checking them.
import path from 'node:path';
import { worstOutcome, type Outcome } from '../../../core/exit-codes.ts';
import { describeProof } from '../info.ts';
import { PROOF_SUFFIX } from '../proof-file.ts';
import type { ProofFile } from '../types.ts';
import { printer, readProof, shown, type Common } from './common.ts';
import { outcomeOfError } from './exit.ts';
import { proofPathFor } from './files.ts';

export async function runInfo(paths: string[], opts: Common): Promise<Outcome> {
  const out = printer(!!opts.json);
  const outcomes: Outcome[] = [];
  for (const p of paths) {
    const file = p.endsWith(PROOF_SUFFIX) ? path.resolve(p) : proofPathFor(path.resolve(p), opts.outDir);
    let proof: ProofFile;
    try {
      proof = readProof(file);
    } catch (err) {
      const outcome = outcomeOfError(err);
      outcomes.push(outcome);
      out.record({ proof: shown(file), error: (err as Error).message }, () => [
        `${shown(file)}: ${outcome === 'not-found' ? 'NOT FOUND' : 'INVALID'}: ${(err as Error).message}`,
      ]);
      continue;
    }
    const info = await describeProof(proof);
    outcomes.push('ok');
    out.record({ proof: shown(file), ...info }, () => [
      `${shown(file)}: ${info.stage}`,
      `  hash:      ${info.hash}${info.file === null ? '' : ` (${info.file})`}`,
      `  server:    ${info.server}`,
      `  submitted: ${info.submittedAt ?? 'unknown'}${info.ledgerDate === null ? '' : `, for the ledger of ${info.ledgerDate}`}`,
      `  receipt:   ${info.receipt === null ? 'none' : `${info.receipt.genTime}, ${info.receipt.tsa}, serial ${info.receipt.serialNumber}`}`,
      `  ledger:    ${info.ledger === null ? (info.omittedFrom === null ? 'not published in this proof yet' : `the signed ledger of ${info.omittedFrom.date} does not hold it: kept in ${info.omittedFrom.ledger} (${info.omittedFrom.size} bytes, SHA-256 ${info.omittedFrom.sha256}; verify checks it)`) : `${info.ledger.date}, leaf ${info.ledger.leafIndex} of ${info.ledger.treeSize}, log ${info.ledger.origin}`}`,
      `  bitcoin:   ${info.ots === null ? 'no .ots yet' : `${info.ots.bitcoin.length > 0 ? `block(s) ${info.ots.bitcoin.join(', ')}` : 'not yet'}${info.ots.pending.length > 0 ? `; pending at ${info.ots.pending.join(', ')}` : ''}`}; headers kept: ${info.headers.join(', ') || 'none'}`,
      `  updated:   ${info.updatedAt}`,
    ]);
  }
  return worstOutcome(outcomes);
}
