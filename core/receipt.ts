// A Timeseal receipt: an RFC 3161 TimeStampResp from Timeseal's own time-stamp authority (POST /tsa, or the
// `receipt` of a JSON submission; docs/FORMAT.md §3b), and the promise it carries — its ledger hash stands in
// the public ledger of its genTime's UTC day. Two questions, answered separately so that every reader (the
// `timeseal receipt check` command, /verify, the offline verifier) shares them:
// - checkReceipt: is the token sound — DER, signature, signer certificate with the time-stamping usage, the
//   chain to the TSA root given, Timeseal's policy — and which hash must the ledger hold (the imprint itself
//   when SHA-256, else the SHA-256 of the DER TSTInfo)?
// - judgePromise: given that day's ledger (already checked against its signatures by the caller) or the fact
//   that it is not published, was the promise kept, is it pending, or broken?
// The token check is core/rfc3161.ts (a strict DER reader with Web Crypto), so it runs in a browser too.
import { equalBytes, toHex } from './encoding.ts';
import { sha256 } from './hash.ts';
import type { Ledger } from './ledger.ts';
import { checkToken, type TokenFacts } from './rfc3161.ts';
import { TSA_POLICY_OID } from './tsa-authority.ts';

export interface ReceiptFacts extends TokenFacts {
  /** The SHA-256 the ledger of `date` must hold, hex. */
  ledgerHash: string;
  /** genTime's UTC day: the ledger that must hold `ledgerHash`. */
  date: string;
}

/**
 * Checks a receipt's token: sound, signed by a certificate that leads to one of `authority` (the TSA root,
 * keys/timeseal-tsa-root.pem), under Timeseal's policy, and — when `digest` is given (the file's or the
 * person's hash, made with the receipt's imprint algorithm) — for that digest. Rejects with the reason.
 */
export async function checkReceipt(
  der: Uint8Array,
  authority: Uint8Array[],
  digest?: Uint8Array,
): Promise<ReceiptFacts> {
  const facts = await checkToken(der, null, authority);
  if (facts.policy !== TSA_POLICY_OID)
    throw new Error(`the token is not under Timeseal's policy (${facts.policy}): it is not a Timeseal receipt`);
  if (authority.length > 0 && !facts.anchored)
    throw new Error("the token's certificate does not lead to the TSA root given");
  if (digest !== undefined && !equalBytes(digest, facts.imprint)) {
    throw new Error(
      `the receipt is for another ${facts.imprintAlgorithm} digest (${toHex(facts.imprint)}, not ${toHex(digest)})`,
    );
  }
  const ledgerHash = toHex(facts.imprintAlgorithm === 'SHA-256' ? facts.imprint : sha256(facts.tstInfo));
  return { ...facts, ledgerHash, date: facts.genTime.toISOString().slice(0, 10) };
}

/** The length in bytes of a digest made with an imprint algorithm ('SHA-256', 'SHA-384', 'SHA-512'). */
export const digestLength = (algorithm: string): number => Number(algorithm.slice(4)) / 8;

/** A day's ledger (core/ledger.ts, checked against its signatures): entries in leaf order, sorted by hash. */
export type LedgerDay = Pick<Ledger, 'date' | 'firstIndex' | 'entries'>;

export type PromiseVerdict =
  | { state: 'kept'; date: string; leafIndex: number; recordedAt: string }
  | { state: 'pending'; date: string; reason: string }
  | { state: 'broken'; date: string; reason: string };

/**
 * Whether the receipt's promise holds. `ledger` is the verified ledger of the receipt's day, or null when no
 * ledger of that day is published; `lastPublished` is the latest published day (null: none yet). A day with no
 * ledger is pending until a later day is published: days without submissions publish nothing, so a later day
 * proves the receipt's day will never have one. A hash submitted twice that day is one leaf with the earliest
 * time, so the ledger's time may be earlier than genTime, never later.
 */
export function judgePromise(
  facts: Pick<ReceiptFacts, 'ledgerHash' | 'date' | 'genTime'>,
  ledger: LedgerDay | null,
  lastPublished: string | null,
): PromiseVerdict {
  const { date, ledgerHash } = facts;
  if (ledger === null) {
    if (lastPublished === null || lastPublished < date) {
      return {
        state: 'pending',
        date,
        reason: `the ledger of ${date} is not published yet (published through ${lastPublished ?? 'no day yet'})`,
      };
    }
    return {
      state: 'broken',
      date,
      reason: `no ledger of ${date} is published, yet later days are (through ${lastPublished}): the receipt is evidence of a broken promise`,
    };
  }
  if (ledger.date !== date) throw new Error(`the ledger given is of ${ledger.date}, not the receipt's day ${date}`);
  let lo = 0;
  let hi = ledger.entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ledger.entries[mid]!.hash < ledgerHash) lo = mid + 1;
    else hi = mid;
  }
  const entry = ledger.entries[lo];
  if (entry === undefined || entry.hash !== ledgerHash) {
    return {
      state: 'broken',
      date,
      reason: `the ledger of ${date} is published and does not hold ${ledgerHash}: the receipt is evidence of a broken promise`,
    };
  }
  if (Date.parse(entry.submittedAt) > facts.genTime.getTime()) {
    return {
      state: 'broken',
      date,
      reason: `the ledger of ${date} records ${ledgerHash} at ${entry.submittedAt}, after the receipt's time ${facts.genTime.toISOString()}: the receipt is evidence of a broken promise`,
    };
  }
  return { state: 'kept', date, leafIndex: ledger.firstIndex + lo, recordedAt: entry.submittedAt };
}
