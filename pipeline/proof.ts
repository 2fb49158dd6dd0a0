// Finding a published hash in a local archive and assembling its proof bundle (docs/FORMAT.md §8). The archive
// holds no receipts (the site's submissions' RFC 3161 tokens are in the database, Store.receipts): buildProof
// leaves `receipts` empty, and a caller with the store fills it (ingest/routes/proof.ts, cli/commands/proof.ts).
import {
  cosignaturesPath,
  dayCheckpointPath,
  ledgerPath,
  MAX_TSAS,
  RECEIPT_KEY_NAMES,
  receiptSignaturePath,
  tsrPath,
  withCosignatures,
} from '../core/archive.ts';
import { receiptFromDaySignature } from '../core/cose-receipt.ts';
import { keyFingerprints, type PublicKeySet } from '../core/day.ts';
import { fromHex, fromUtf8, toBase64, toHex } from '../core/encoding.ts';
import { IndexIncompleteError, NotFoundError, TimesealError } from '../core/errors.ts';
import { inclusionProof } from '../core/merkle.ts';
import { normalizeHashHex } from '../core/hash.ts';
import type { Occurrence, ProofBundle } from '../core/proof.ts';
import { tileHashReader, tilePath } from '../core/tiles.ts';
import { readState } from './archive-state.ts';
import { perHashOts } from './anchor/proofs.ts';
import { readOptional } from './files.ts';
import { lookupSegment, readIndexHead } from './segment-files.ts';
import { nodeSha256 } from '../runtime/node-hash.ts';

/** Every published occurrence of a hash, oldest first (a hash submitted on several days has several). */
export function findHash(archive: string, origin: string, hashHex: string): Occurrence[] {
  const hash = normalizeHashHex(hashHex);
  const { days } = readState(archive, origin);
  const last = days.at(-1);
  if (!last) return [];
  const head = readIndexHead(archive);
  if (head.treeSize < last.treeSize) {
    // Only after a crash right after a commit point, or before the first build of this release on an archive
    // made by the previous one: never answer "not found" for leaves the index does not cover yet.
    throw new IndexIncompleteError(head.treeSize, last.treeSize);
  }
  const found: Occurrence[] = [];
  for (const segment of head.segments) {
    if (segment.from >= last.treeSize) break;
    // Records past the published size belong to a build that has not reached its commit point yet.
    for (const r of lookupSegment(archive, segment, hash)) {
      if (r.leafIndex >= last.treeSize) continue;
      const day = days.find((d) => r.leafIndex >= d.firstIndex && r.leafIndex < d.treeSize);
      if (!day) throw new TimesealError('mismatch', `index names leaf ${r.leafIndex}, which no published day holds`);
      found.push({ date: day.date, leafIndex: r.leafIndex, submittedAt: new Date(r.submittedMs).toISOString(), day });
    }
  }
  return found;
}

export function buildProof(archive: string, origin: string, hashHex: string, keys: PublicKeySet): ProofBundle {
  const hash = normalizeHashHex(hashHex);
  const found = findHash(archive, origin, hash)[0];
  if (!found) throw new NotFoundError(`${hash} is not in any published ledger`);
  const { day } = found;
  const dayCheckpoint = readOptional(archive, dayCheckpointPath(day.date));
  if (dayCheckpoint === undefined) throw new NotFoundError(`${dayCheckpointPath(day.date)} is missing`);
  // With the witnesses' cosignatures of it, when there are (a signed note with more lines; readers that do not
  // know the witnesses ignore them).
  const checkpoint = withCosignatures(dayCheckpoint, readOptional(archive, cosignaturesPath(day.date)));
  const readTile = (level: number, index: number, width: number): Uint8Array => {
    const data = readOptional(archive, tilePath(level, index, width));
    if (data === undefined) throw new NotFoundError(`tile ${tilePath(level, index, width)} is missing`);
    return data;
  };
  const path = inclusionProof(
    found.leafIndex,
    day.treeSize,
    tileHashReader(day.treeSize, readTile, nodeSha256),
    nodeSha256,
  );
  const fp = keyFingerprints(keys);
  const ots = perHashOts(archive, day, fromHex(hash), found.leafIndex, path);
  return {
    hash,
    date: day.date,
    submittedAt: found.submittedAt,
    leafIndex: found.leafIndex,
    treeSize: day.treeSize,
    inclusionPath: path.map(toHex),
    checkpoint: fromUtf8(checkpoint, 'checkpoint'),
    ledger: { path: ledgerPath(day.date), sha256: day.sha256, firstIndex: day.firstIndex, entryCount: day.entryCount },
    keys: { ecdsaP256Fingerprint: fp.ecdsa, mlDsa65Fingerprint: fp.mldsa },
    ots: ots === null ? null : toBase64(ots),
    rfc3161: dayTokens(archive, day.date).map(toBase64),
    receipts: [],
    coseReceipts: coseReceipts(archive, day.date, { treeSize: day.treeSize, leafIndex: found.leafIndex, path }).map(
      toBase64,
    ),
  };
}

/**
 * The leaf's COSE receipts (docs/FORMAT.md §11): each of the day's receipt signatures (ES256, then ML-DSA-65) with
 * the leaf's inclusion proof in its unprotected header; none for a day published without receipt keys.
 */
export function coseReceipts(
  archive: string,
  date: string,
  proof: { treeSize: number; leafIndex: number; path: Uint8Array[] },
): Uint8Array[] {
  return RECEIPT_KEY_NAMES.flatMap((name) => {
    const daySignature = readOptional(archive, receiptSignaturePath(date, name));
    return daySignature === undefined ? [] : [receiptFromDaySignature(daySignature, proof)];
  });
}

/** The day's published RFC 3161 answers, in file order (D.json.tsr, D.json.2.tsr, …; numbered without gaps). */
function dayTokens(archive: string, date: string): Uint8Array[] {
  const tokens: Uint8Array[] = [];
  for (let n = 0; n < MAX_TSAS; n++) {
    const der = readOptional(archive, tsrPath(date, n));
    if (der === undefined) break;
    tokens.push(der);
  }
  return tokens;
}
