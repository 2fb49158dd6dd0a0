// A c2sp.org/tlog-proof@v1 file (docs/FORMAT.md §8a): the hash it names, the checkpoint's lines, the inclusion
// proof, the whole file; with the day's ledger, the leaf and its date.
import { parseCheckpoint } from '../../../../core/checkpoint.ts';
import { fromHex, toHex } from '../../../../core/encoding.ts';
import { leafHash, verifyInclusion } from '../../../../core/merkle.ts';
import { parseNote } from '../../../../core/note.ts';
import { parseTlogProof, verifyTlogProof, type TlogProof } from '../../../../core/tlog-proof.ts';
import type { ClassifiedInput } from '../inputs.ts';
import { checkpointSignatureChecks } from './checkpoint.ts';
import { documentMatch, type Context } from './context.ts';
import { attempt, fail, info, message, ok, pending, type Check, type Section } from './report.ts';

/** A c2sp.org/tlog-proof@v1 file (docs/FORMAT.md §8a): the hash it names, both checkpoint signatures, the
 *  inclusion proof; with the day's ledger, the leaf and the date. */
export function tlogProofSection(ctx: Context, input: ClassifiedInput): Section {
  const title = `tlog-proof ${input.name}`;
  let proof: TlogProof;
  try {
    proof = parseTlogProof(input.bytes);
  } catch (err) {
    return { title, checks: [fail('tlog-proof format', message(err))] };
  }
  const cp = parseCheckpoint(parseNote(proof.checkpoint).text);
  const named = proof.extra?.length === 32 ? toHex(proof.extra) : undefined;
  const doc = ctx.inputs.document;
  const hash = named ?? doc?.hash;
  const checks: Check[] = [
    info(
      'Claim',
      named
        ? `hash ${named} is leaf ${proof.index} of ${cp.origin}`
        : `leaf ${proof.index} of ${cp.origin} (the file names no hash: your document's is used)`,
      [`Checkpoint: tree size ${cp.size}, root ${toHex(cp.root)}`],
    ),
  ];
  if (named) checks.push(documentMatch(ctx, named, 'the tlog-proof'));
  checks.push(...checkpointSignatureChecks(proof.checkpoint, ctx));
  const label = 'Inclusion proof leads to the checkpoint root';
  checks.push(
    hash === undefined
      ? pending(label, 'no hash: choose the original file or paste its SHA-256 hash')
      : attempt(label, () => {
          verifyInclusion(leafHash(fromHex(hash)), proof.index, cp.size, proof.proof, cp.root);
          return [`Leaf ${proof.index} of ${cp.size}`, `Root ${toHex(cp.root)}`];
        }),
  );
  const { ecdsa, mldsa } = ctx.keys;
  if (ecdsa && mldsa && hash !== undefined) {
    checks.push(
      attempt(
        'Whole tlog-proof (both signatures, inclusion)',
        () => void verifyTlogProof(proof, { ecdsa, mldsa }, doc ? { hash: fromHex(doc.hash) } : {}),
      ),
    );
  }
  const day = ctx.ledgers.find((l) => l.ledger?.treeSize === cp.size && l.ledger.root === toHex(cp.root));
  const entry = day?.ledger?.entries[proof.index - day.ledger.firstIndex];
  if (day && entry && entry.hash === hash) {
    checks.push(
      ok(`Leaf in the ledger file ${day.input.name}`, [
        `Ledger of ${day.ledger!.date}, submitted ${entry.submittedAt}`,
      ]),
    );
  } else if (day) {
    checks.push(
      fail(
        `Leaf in the ledger file ${day.input.name}`,
        `leaf ${proof.index} of ${day.input.name} is ${entry ? entry.hash : 'not one of its day'}, not ${hash ?? 'the hash'}`,
      ),
    );
  } else {
    checks.push(
      info(
        'Date',
        `a tlog-proof names no date: its checkpoint (tree size ${cp.size}) is the end of the day it proves; add that day's ledger file to see the date and time`,
      ),
    );
  }
  return { title, checks };
}
