// A timeseal-client proof file of a promise broken by omission (`timeseal-client-proof/2`, its `omittedFrom`: the
// day's signed ledger that does not hold its hash, which `upgrade` kept beside it in timeseal-ledgers/). Given the
// day's ledger file and its two signatures (the kept ones, or the archive's: the same bytes), the page checks what
// `timeseal-client verify` checks: the ledger is the one the proof names (SHA-256 and size), both signatures verify
// with the keys given, its date is the day, the hash is not among its entries, and the proof file's receipt promised
// that hash in that day's ledger (its genTime's day): the promise is broken. Without those files, one sentence names
// them.
import { ecdsaSignaturePath, ledgerPath, mldsaSignaturePath } from '../../../../core/archive-paths.ts';
import { requireBothSignatures } from '../../../../core/day.ts';
import { fromBase64, fromUtf8, toHex } from '../../../../core/encoding.ts';
import { checkReceipt } from '../../../../core/receipt.ts';
import { ecdsaVerifyDigest } from '../../../../core/sig.ts';
import type { ClassifiedInput } from '../inputs.ts';
import { ledgerOf, mldsaVerify, sha256Of, type Context } from './context.ts';
import { fail, message, NO_ECDSA, NO_MLDSA, pending, type Section } from './report.ts';

/** What a version 2 proof file claims: its hash is not in the signed ledger of `date` it kept. */
export interface OmissionClaim {
  name: string;
  hash: string;
  date: string;
  ledger: string;
  sha256: string;
  size: number;
  /** The proof file's receipt (base64 DER), whose promise the ledger breaks. */
  receipt: string | null;
}

/** The claim of a version 2 proof file, or null for any other input (a damaged one is checked as its parts are). */
export function omissionClaim(input: ClassifiedInput): OmissionClaim | null {
  if (input.kind !== 'client-proof') return null;
  try {
    const raw = JSON.parse(fromUtf8(input.bytes)) as {
      format?: unknown;
      hash?: unknown;
      receipt?: unknown;
      omittedFrom?: { date?: unknown; ledger?: unknown; sha256?: unknown; size?: unknown };
    };
    const o = raw.omittedFrom;
    if (raw.format !== 'timeseal-client-proof/2' || typeof raw.hash !== 'string' || !o) return null;
    const { date, ledger, sha256, size } = o;
    if (
      typeof date !== 'string' ||
      typeof ledger !== 'string' ||
      typeof sha256 !== 'string' ||
      typeof size !== 'number'
    )
      return null;
    const receipt = typeof raw.receipt === 'string' ? raw.receipt : null;
    return { name: input.name, hash: raw.hash, date, ledger, sha256, size, receipt };
  } catch {
    return null;
  }
}

export function omissionSection(ctx: Context, claim: OmissionClaim): Section {
  const { date, hash } = claim;
  const title = `Broken promise in ${claim.name}`;
  const label = `The ledger of ${date} holds ${hash}`;
  const l = ctx.ledgers.find((x) => (x.input.date ?? x.ledger?.date) === date);
  const sig = (kind: ClassifiedInput['kind']) =>
    ctx.inputs.files.find((f) => f.kind === kind && (f.date ?? date) === date);
  const ecdsa = sig('ecdsa-signature');
  const mldsa = sig('mldsa-signature');
  const missing = [
    l ? '' : ledgerPath(date),
    ecdsa ? '' : ecdsaSignaturePath(date),
    mldsa ? '' : mldsaSignaturePath(date),
  ]
    .filter(Boolean)
    .join(', ');
  if (missing !== '')
    return {
      title,
      checks: [
        pending(
          label,
          `this proof file says the signed ledger of ${date} does not hold its hash: add ${missing} (kept in timeseal-ledgers/ beside the proof file) to check it`,
        ),
      ],
    };
  if (!ctx.keys.ecdsa || !ctx.keys.mldsa)
    return { title, checks: [pending(label, ctx.keys.ecdsa ? NO_MLDSA : NO_ECDSA)] };
  const bytes = l!.input.bytes;
  const sha256 = toHex(sha256Of(bytes));
  if (sha256 !== claim.sha256 || bytes.length !== claim.size)
    return {
      title,
      checks: [
        fail(
          label,
          `${l!.input.name} is not the ledger this proof file kept (${bytes.length} bytes, SHA-256 ${sha256}; it names ${claim.size} bytes, SHA-256 ${claim.sha256})`,
        ),
      ],
    };
  try {
    requireBothSignatures(
      date,
      ecdsaVerifyDigest(sha256Of(bytes), ecdsa!.bytes, ctx.keys.ecdsa),
      mldsaVerify(bytes, mldsa!.bytes, ctx.keys.mldsa),
    );
    const ledger = ledgerOf(bytes);
    if (ledger.date !== date) throw new Error(`${l!.input.name} is the ledger of ${ledger.date}, not of ${date}`);
    const i = ledger.entries.findIndex((e) => e.hash === hash);
    if (i >= 0)
      return {
        title,
        checks: [
          fail(
            label,
            `the proof file says its hash is not in the ledger of ${date}, but the signed ledger holds it at leaf ${ledger.firstIndex + i}`,
          ),
        ],
      };
    // The promise is the receipt's: for this hash, in the ledger of its genTime's day (its chain is checked in its
    // own section).
    const row = pending(label, 'checking the receipt whose promise this is…');
    const broken = fail(
      label,
      `broken promise: the signed ledger of ${date} does not hold ${hash} (both signatures verified; ${ledger.entries.length} hashes, not this one), which the receipt promised`,
      [`${l!.input.name}: ${bytes.length} bytes, SHA-256 ${sha256}, the file ${claim.name} names`],
    );
    const notIts = (why: string) => Object.assign(row, fail(label, `${why}: the kept ledger shows no broken promise`));
    if (claim.receipt === null) notIts('the proof file holds no receipt');
    else
      ctx.later.push(
        (async () => fromBase64(claim.receipt!))()
          .then((der) => checkReceipt(der, []))
          .then(
            (f) =>
              f.ledgerHash !== hash
                ? notIts(`its receipt is for ${f.ledgerHash}, not ${hash}`)
                : f.date !== date
                  ? notIts(`its receipt promised the ledger of ${f.date}, not of ${date}`)
                  : Object.assign(row, broken),
            (err: unknown) => notIts(`its receipt does not check (${message(err)})`),
          ),
      );
    return { title, checks: [row] };
  } catch (err) {
    return { title, checks: [fail(label, message(err))] };
  }
}
