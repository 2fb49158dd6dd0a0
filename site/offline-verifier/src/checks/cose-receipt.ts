// A COSE receipt of inclusion (RFC 9942; docs/FORMAT.md §11), given as a `.receipt.cose` file or carried by a proof
// bundle (`cose_receipts`, timeseal-proof/4): the root its inclusion proof leads to from the document's hash, and
// the receipt key's signature over that root (core/cose-receipt.ts verifyReceipt, ES256 with Web Crypto through
// src/p256.ts, ML-DSA-65 with @noble/post-quantum). In a bundle, it must also be for the bundle's leaf and root.
// A Transparent Statement's receipts are checked the same way, for the statement's entry.
import {
  ALGORITHM_NAMES,
  parseCoseSign1,
  receiptHeader,
  verifyDaySignature,
  verifyReceipt,
} from '../../../../core/cose-receipt.ts';
import { fromHex, toHex } from '../../../../core/encoding.ts';
import { parseCheckpoint } from '../../../../core/checkpoint.ts';
import { parseNote } from '../../../../core/note.ts';
import type { ProofBundle } from '../../../../core/proof.ts';
import { readTransparentStatement } from '../../../../core/signed-statement.ts';
import type { ClassifiedInput } from '../inputs.ts';
import type { Context } from './context.ts';
import { fail, info, message, ok, pending, short, type Check, type Section } from './report.ts';

export const NO_RECEIPT_KEY = 'add receipt-es256.pem and receipt-mldsa65.pem from /keys/ (the receipt keys)';

export function coseReceiptSection(ctx: Context, input: ClassifiedInput, within?: ProofBundle): Section {
  const title = `COSE receipt ${input.name}`;
  const hash = within?.hash ?? ctx.inputs.document?.hash;
  const lead: Check[] = within
    ? []
    : [
        hash === undefined
          ? pending(
              'Hash matches the document',
              'no document given: choose the original file or paste its hash (a COSE receipt names no hash: it proves the one given is in the log)',
            )
          : info('For the hash', hash, [`From ${ctx.inputs.document!.source}`]),
      ];
  return { title, checks: [...lead, ...receiptChecks(ctx, input.bytes, hash, within)] };
}

/** One receipt's checks for `hash`: its signature and inclusion proof, and (in a bundle) the bundle's leaf. */
function receiptChecks(ctx: Context, bytes: Uint8Array, hash: string | undefined, within?: ProofBundle): Check[] {
  let alg: string;
  try {
    alg = ALGORITHM_NAMES[receiptHeader(parseCoseSign1(bytes, 'receipt'), 'receipt').alg];
  } catch (err) {
    return [fail('COSE receipt (RFC 9942)', message(err))];
  }
  const label = `COSE receipt (${alg})`;
  if (hash === undefined || hash.length !== 64) return [];
  const keys = ctx.receiptKeys;
  // Not checked here for want of a key: named, without holding back a bundle's own verdict.
  if (keys.length === 0)
    return [(within ? info : pending)(label, `${within ? 'not checked here: ' : ''}${NO_RECEIPT_KEY}`)];
  try {
    const r = verifyReceipt(bytes, fromHex(hash), keys);
    const details = [
      `Leaf ${r.leafIndex} of a tree of ${r.treeSize}, root ${r.root}`,
      `Issuer ${r.iss}, day ${r.sub}`,
      `Receipt key kid ${short(r.kid)}`,
    ];
    return within ? [ok(label, details), bundleAgreement(within, r)] : [ok(label, details)];
  } catch (err) {
    return [fail(label, message(err))];
  }
}

/**
 * A SCITT Transparent Statement (RFC 9943 §7; docs/FORMAT.md §12): the statement's entry (SHA-256 of its form on
 * the log, which the statement itself gives: no document is needed), then each receipt it carries (394) for it.
 */
export function transparentStatementSection(ctx: Context, input: ClassifiedInput): Section {
  const title = `Transparent Statement ${input.name}`;
  let parts;
  try {
    parts = readTransparentStatement(input.bytes);
  } catch (err) {
    return { title, checks: [fail('Transparent Statement (RFC 9943)', message(err))] };
  }
  const entry = toHex(parts.entry);
  return {
    title,
    checks: [
      info("The statement's entry", entry, [
        'SHA-256 of the statement with an empty unprotected header, as the log holds it',
      ]),
      ...parts.receipts.flatMap((r) => receiptChecks(ctx, r, entry)),
    ],
  };
}

/** A bundle's receipt is for the bundle's own leaf, in the tree its checkpoint signs. */
function bundleAgreement(bundle: ProofBundle, r: ReturnType<typeof verifyReceipt>): Check {
  const label = "The bundle's leaf and root";
  if (r.leafIndex !== bundle.leafIndex || r.treeSize !== bundle.treeSize)
    return fail(
      label,
      `the receipt is for leaf ${r.leafIndex} of a tree of ${r.treeSize}, the bundle for leaf ${bundle.leafIndex} of ${bundle.treeSize}`,
    );
  try {
    const root = toHex(parseCheckpoint(parseNote(bundle.checkpoint).text).root);
    if (root !== r.root) return fail(label, `the receipt's root ${r.root} is not the checkpoint's ${root}`);
  } catch (err) {
    return fail(label, `the bundle's checkpoint: ${message(err)}`);
  }
  return ok(label, [`Leaf ${r.leafIndex}, root ${r.root}`]);
}

/**
 * A day's receipt signature (`YYYY-MM-DD.receipt-es256.cose`, `.receipt-mldsa65.cose`; docs/FORMAT.md §11): the
 * receipt key's signature over the root of that day's ledger, for the log it names (verifyDaySignature), once
 * the day's ledger is given (its root and origin; the ledger's own signatures are checked in its section).
 */
export function daySignatureSection(ctx: Context, input: ClassifiedInput): Section {
  const title = `Receipt signature ${input.name}`;
  const label = 'COSE receipt signature of the day';
  const ledger = ctx.ledgers.find((l) => (l.input.date ?? l.ledger?.date) === input.date)?.ledger;
  if (!ledger)
    return { title, checks: [pending(label, `add the ledger of ${input.date} (${input.date}.json) to check it`)] };
  if (ctx.receiptKeys.length === 0) return { title, checks: [info(label, `not checked here: ${NO_RECEIPT_KEY}`)] };
  try {
    const alg = verifyDaySignature(
      input.bytes,
      { origin: ledger.origin, date: input.date!, root: fromHex(ledger.root) },
      ctx.receiptKeys,
    );
    return { title, checks: [ok(label, [`${ALGORITHM_NAMES[alg]} over the root ${ledger.root} of ${input.date}`])] };
  } catch (err) {
    return { title, checks: [fail(label, message(err))] };
  }
}
