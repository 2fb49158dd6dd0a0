// The promise of a Timeseal receipt checked against an archive, a folder or a URL alike (an ArchiveReader):
// whether the ledger of the receipt's day holds its ledger hash (core/receipt.ts judgePromise), from the day's
// files checked against the public keys (both signatures, the signed checkpoint), and for a kept promise the
// leaf's inclusion proof, built from the published tiles and checked against that checkpoint's root. Only the
// day's files and a handful of tiles are read, whatever the age of the archive.
import {
  DAYS_PATH,
  dayCheckpointPath,
  ecdsaSignaturePath,
  ledgerPath,
  mldsaSignaturePath,
  parseDays,
  signaturesMetaPath,
} from '../core/archive.ts';
import { LedgerPass, verifyDayFilesDigested, type PublicKeySet } from '../core/day.ts';
import { compareBytes, fromHex, fromUtf8, toHex } from '../core/encoding.ts';
import { checkLogLines, logVerifiers } from '../core/log-keys.ts';
import { inclusionProof, leafHash, verifyInclusion } from '../core/merkle.ts';
import { judgePromise, type PromiseVerdict, type ReceiptFacts } from '../core/receipt.ts';
import { tileHashReader, tilePath, tilesForInclusion } from '../core/tiles.ts';
import { messageDigests, nodeSha256 } from '../runtime/node-hash.ts';
import { signedTreeSize, streamLedger, type ArchiveReader } from './archive-reader.ts';

export type CheckedPromise = PromiseVerdict & {
  /** For a kept promise: the tree the leaf was proven in (the day's signed checkpoint). */
  treeSize?: number;
  root?: string;
  proofLength?: number;
};

export async function checkPromise(
  reader: ArchiveReader,
  keys: PublicKeySet,
  facts: Pick<ReceiptFacts, 'ledgerHash' | 'date' | 'genTime'>,
): Promise<CheckedPromise> {
  const daysRaw = await reader.read(DAYS_PATH);
  const state = daysRaw === undefined ? undefined : parseDays(fromUtf8(daysRaw, DAYS_PATH));
  const days = state?.days ?? [];
  const lastPublished = days.at(-1)?.date ?? null;
  const day = days.find((d) => d.date === facts.date);
  if (day === undefined) return judgePromise(facts, null, lastPublished);

  const need = async (rel: string): Promise<Uint8Array> => {
    const data = await reader.read(rel);
    if (data === undefined)
      throw new Error(`${rel} is missing from ${reader.location}, though ${DAYS_PATH} lists ${day.date}`);
    return data;
  };
  // The small files first: the day's signed checkpoint bounds its ledger (at most its tree size less the day's
  // first index), which is then read as a stream within that (archive-reader.ts streamLedger).
  const [ecdsaSignature, mldsaSignature, signaturesMeta, checkpoint] = await Promise.all(
    [ecdsaSignaturePath, mldsaSignaturePath, signaturesMetaPath, dayCheckpointPath].map((p) => need(p(day.date))),
  );
  const origin = state!.origin;
  let entries: number;
  try {
    entries = signedTreeSize(checkpoint!, origin, keys) - Math.min(Math.max(0, day.firstIndex), day.treeSize);
  } catch (err) {
    throw new Error(`${dayCheckpointPath(day.date)}: ${(err as Error).message}`, { cause: err });
  }
  // The ledger passes once, hashed and parsed, never held (at 10,000,000 entries it is 970 MB): of its entries,
  // sorted by hash, only the first at or after the receipt's ledger hash is kept, which is all judgePromise's
  // search of the whole ledger looks at.
  const wanted = fromHex(facts.ledgerHash, 'ledger hash');
  let position = 0;
  let candidate: { hash: string; submittedAt: string } | undefined;
  const pass = new LedgerPass(keys.mldsa, messageDigests, {
    onEntry: (hashes, at, ms) => {
      if (candidate !== undefined) return;
      if (compareBytes(hashes.subarray(at, at + 32), wanted) < 0) position++;
      else candidate = { hash: toHex(hashes.subarray(at, at + 32)), submittedAt: new Date(ms).toISOString() };
    },
  });
  const rel = ledgerPath(day.date);
  if (!(await streamLedger(reader, rel, origin, entries, pass)))
    throw new Error(`${rel} is missing from ${reader.location}, though ${DAYS_PATH} lists ${day.date}`);
  const verified = verifyDayFilesDigested(
    day.date,
    {
      ecdsaSignature: ecdsaSignature!,
      mldsaSignature: mldsaSignature!,
      signaturesMeta: signaturesMeta!,
      checkpoint: checkpoint!,
    },
    pass.digested(),
    keys,
    { checkpointLines: (text, origin) => checkLogLines(text, logVerifiers(origin, keys)) },
  );
  const head = verified.ledger;
  const ledger = {
    date: head.date,
    firstIndex: head.firstIndex + position,
    entries: candidate === undefined ? [] : [candidate],
  };
  const verdict = judgePromise(facts, ledger, lastPublished);
  if (verdict.state !== 'kept') return verdict;

  // The leaf in the signed tree of the day's end: the tiles its inclusion proof reads, fetched first.
  const { size, root } = verified.checkpoint;
  const tiles = new Map<string, Uint8Array>();
  await Promise.all(
    tilesForInclusion(verdict.leafIndex, size).map(async (t) => {
      tiles.set(`${t.level}/${t.index}`, await need(tilePath(t.level, t.index, t.width)));
    }),
  );
  const proof = inclusionProof(
    verdict.leafIndex,
    size,
    tileHashReader(size, (level, index) => tiles.get(`${level}/${index}`)!, nodeSha256),
    nodeSha256,
  );
  verifyInclusion(leafHash(fromHex(facts.ledgerHash), nodeSha256), verdict.leafIndex, size, proof, root, nodeSha256);
  return { ...verdict, treeSize: size, root: toHex(root), proofLength: proof.length };
}
