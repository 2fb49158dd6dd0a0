// The server's bundle inside a proof file, read by core/proof.ts. Internal: its types are core's.
import { fromBase64 } from '../../core/encoding.ts';
import { parseDetached, walkAttestations } from '../../core/ots.ts';
import { parseProofBundle, type ProofBundle } from '../../core/proof.ts';
import { TimesealClientError } from './errors.ts';
import type { ProofFile } from './types.ts';

/** The bundle of a proof file, parsed strictly by core/proof.ts, or null. */
export function bundleOf(p: ProofFile): ProofBundle | null {
  if (p.bundle === null) return null;
  try {
    return parseProofBundle(JSON.stringify(p.bundle));
  } catch (err) {
    throw new TimesealClientError('invalid', `proof file: bundle: ${(err as Error).message}`, { cause: err });
  }
}

/** The Bitcoin block heights a bundle's `.ots` attests to. */
export function bitcoinHeights(bundle: ProofBundle | null): number[] {
  if (bundle?.ots == null) return [];
  try {
    const heights = walkAttestations(parseDetached(fromBase64(bundle.ots)).timestamp).flatMap((a) =>
      a.attestation.kind === 'bitcoin' ? [a.attestation.height] : [],
    );
    return [...new Set(heights)].sort((a, b) => a - b);
  } catch {
    return [];
  }
}
