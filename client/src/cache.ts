// Checking many proofs of one day means checking one checkpoint many times: its ECDSA P-256, ML-DSA-65, Ed25519
// and ML-DSA-44 signatures cost tens of milliseconds per proof in JavaScript. A VerifyCache remembers, for one
// run, which signed checkpoints (byte for byte, with which keys) verified, so each is verified once, and what the
// day's RFC 3161 tokens over its ledger file (the same bytes in every bundle of the day) gave, and which COSE
// receipt signatures verified (every leaf's receipt of a day carries the day's one signature over its root);
// every other check of a bundle still runs for each proof.
import { verifyCheckpoint, type ParsedCheckpoint } from '../../core/checkpoint.ts';
import { keyFingerprints } from '../../core/day.ts';
import { fromBase64, fromHex, toHex } from '../../core/encoding.ts';
import { FormatError, MismatchError, withContext } from '../../core/errors.ts';
import { normalizeHashHex } from '../../core/hash.ts';
import { utcDate } from '../../core/ledger.ts';
import { leafHash, verifyInclusion } from '../../core/merkle.ts';
import { ecdsaNoteVerifier, mldsaNoteVerifier } from '../../core/note.ts';
import { checkToken, type TokenFacts } from '../../core/rfc3161.ts';
import { verifyProofBundle, type ProofBundle, type VerifiedProof } from '../../core/proof.ts';
import { checkpointLines, type LineFacts } from './checks.ts';
import type { LoadedKeys } from './keys.ts';

/** What one run has verified already: give one to every verify() of a batch of proofs (upgrade() keeps its own). */
export class VerifyCache {
  readonly #checkpoints = new Map<string, ParsedCheckpoint>();
  readonly #lines = new Map<string, LineFacts>();
  readonly #keyIds = new WeakMap<LoadedKeys, string>();
  readonly #tokens = new Map<string, Promise<TokenFacts>>();
  /** @internal COSE receipt signatures verified (core/cose-receipt.ts verifyReceipt's memo): one a day and key. */
  readonly coseSignatures = new Map<string, boolean>();

  /** @internal core/rfc3161.ts checkToken of a day's token (base64 DER) over the ledger file's SHA-256 (hex), once per run. */
  token(b64: string, ledgerSha256: string): Promise<TokenFacts> {
    const key = `${ledgerSha256}\n${b64}`;
    let known = this.#tokens.get(key);
    if (known === undefined) {
      known = Promise.resolve().then(() => checkToken(fromBase64(b64, 'rfc3161'), fromHex(ledgerSha256), []));
      this.#tokens.set(key, known);
    }
    return known;
  }

  /** Names a key set by its keys' fingerprints (the same keys loaded twice are the same set). */
  #keyId(keys: LoadedKeys): string {
    let id = this.#keyIds.get(keys);
    if (id === undefined) {
      const fp = keyFingerprints(keys.set);
      id = `${fp.ecdsa}:${fp.mldsa}:${keys.set.ed25519 === undefined ? '' : toHex(keys.set.ed25519)}:${keys.set.mldsa44 === undefined ? '' : toHex(keys.set.mldsa44).slice(0, 64)}:${keys.policy === null ? '' : JSON.stringify(keys.policy.witnesses.map((w) => w.text))}${keys.policy?.quorum ?? ''}`;
      this.#keyIds.set(keys, id);
    }
    return id;
  }

  /** @internal */
  checkpoint(note: string, origin: string, keys: LoadedKeys): ParsedCheckpoint {
    const key = `${this.#keyId(keys)}\n${origin}\n${note}`;
    let known = this.#checkpoints.get(key);
    if (known === undefined) {
      known = verifyCheckpoint(
        note,
        [ecdsaNoteVerifier(origin, keys.set.ecdsa), mldsaNoteVerifier(origin, keys.set.mldsa)],
        { origin },
      );
      this.#checkpoints.set(key, known);
    }
    return known;
  }

  /** @internal */
  lines(note: string, origin: string, keys: LoadedKeys): LineFacts {
    const key = `${this.#keyId(keys)}\n${origin}\n${note}`;
    let known = this.#lines.get(key);
    if (known === undefined) {
      known = checkpointLines(note, origin, keys);
      this.#lines.set(key, known);
    }
    return known;
  }

  /**
   * @internal core/proof.ts verifyProofBundle, with the checkpoint's signatures verified once per run: the first
   * bundle of a checkpoint goes through verifyProofBundle itself; later bundles of the same signed checkpoint get
   * the same checks in the same order (keys, tree size, range, leaf, date, inclusion path) without verifying
   * its signatures again.
   */
  bundle(bundle: ProofBundle, keys: LoadedKeys): VerifiedProof {
    const key = `${this.#keyId(keys)}\n\n${bundle.checkpoint}`;
    const known = this.#checkpoints.get(key);
    if (known === undefined) {
      const verified = verifyProofBundle(bundle, keys.set);
      this.#checkpoints.set(key, verifyCheckpointParsed(verified));
      return verified;
    }
    const hash = normalizeHashHex(bundle.hash);
    const fp = keyFingerprints(keys.set);
    if (fp.ecdsa !== bundle.keys.ecdsaP256Fingerprint)
      throw new MismatchError('ECDSA P-256 key fingerprint', fp.ecdsa, bundle.keys.ecdsaP256Fingerprint);
    if (fp.mldsa !== bundle.keys.mlDsa65Fingerprint)
      throw new MismatchError('ML-DSA-65 key fingerprint', fp.mldsa, bundle.keys.mlDsa65Fingerprint);
    if (known.size !== bundle.treeSize)
      throw new MismatchError('tree size (checkpoint vs bundle)', String(known.size), String(bundle.treeSize));
    const { firstIndex, entryCount } = bundle.ledger;
    if (firstIndex + entryCount !== bundle.treeSize)
      throw new MismatchError(
        'ledger range end (first_index + entry_count vs tree_size)',
        String(bundle.treeSize),
        String(firstIndex + entryCount),
      );
    if (bundle.leafIndex < firstIndex || bundle.leafIndex >= bundle.treeSize)
      throw new FormatError(
        'leaf_index',
        `${bundle.leafIndex} is outside the day's leaves ${firstIndex}…${bundle.treeSize - 1}`,
      );
    if (utcDate(Date.parse(bundle.submittedAt)) !== bundle.date)
      throw new MismatchError('date of submitted_at', bundle.date, utcDate(Date.parse(bundle.submittedAt)));
    const path = bundle.inclusionPath.map((h, i) => fromHex(h, `inclusion_path[${i}]`));
    try {
      verifyInclusion(leafHash(fromHex(hash)), bundle.leafIndex, bundle.treeSize, path, known.root);
    } catch (err) {
      throw withContext('inclusion proof', err);
    }
    return {
      hash,
      date: bundle.date,
      submittedAt: bundle.submittedAt,
      origin: known.origin,
      treeSize: known.size,
      root: toHex(known.root),
    };
  }
}

function verifyCheckpointParsed(v: VerifiedProof): ParsedCheckpoint {
  return { origin: v.origin, size: v.treeSize, root: fromHex(v.root), extensions: [] };
}
