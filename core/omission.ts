// A promise broken by omission, shown from the one file that binds a day's contents: the day's signed ledger file
// (docs/FORMAT.md §3), read in pieces and never held. Its ECDSA P-256 and ML-DSA-65 signatures over its exact bytes
// with the log's keys, its strict parse (core/ledger.ts LedgerReader), its date and origin, and which of the hashes
// asked about its entries hold, found in one pass: the entries are sorted by hash, so the hashes asked about,
// sorted too, are merged with them as they pass. A hash a valid signed ledger of its day does not hold is a promise
// of that day broken (a receipt's, docs/FORMAT.md §3b): the ledger file with its two signatures is the proof, and
// `openssl dgst -sha256 -verify keys/public.pem -signature D.json.sig D.json` checks its first signature without
// Timeseal's code. No smaller statement binds a day's range: a checkpoint names a size and a root, a day's COSE
// receipt signature its date and root, never where the day starts (docs/DECISIONS.md).
//
//   const pass = new OmissionPass(keys, [hash]);
//   for await (const piece of file) pass.push(piece);
//   const facts = pass.finish(ecdsaSig, mldsaSig, { date, origin });   // throws what does not check
//   facts.absent.includes(hash)                                       // the promise is broken
import { ledgerPath } from './archive-paths.ts';
import { LedgerPass, requireBothSignatures, type MessageDigests, type PublicKeySet } from './day.ts';
import { compareBytes, fromHex, toHex } from './encoding.ts';
import { MismatchError, withContext } from './errors.ts';
import type { LedgerHeader } from './ledger.ts';
import { ecdsaVerifyDigest, mldsaVerifyMu } from './sig.ts';

/** What a day's signed ledger file, checked, shows of the hashes asked about. */
export interface OmissionFacts {
  head: LedgerHeader;
  /** SHA-256 of the ledger file, hex, and its length in bytes. */
  sha256: string;
  size: number;
  /** The hashes asked about that the ledger does not hold (lower-case hex, sorted). */
  absent: string[];
  /** Those it holds, with their leaf index. */
  present: Map<string, number>;
}

/** What the ledger must be: its day, and its log's origin when it is known (pinned). */
export interface OmissionExpect {
  date: string;
  origin?: string | null;
  /** Its SHA-256 (hex) and size, when another statement names them (days.json, a proof file). */
  sha256?: string;
  size?: number;
}

/** One pass over a day's ledger file given in pieces: hashed, parsed, and merged with the hashes asked about. */
export class OmissionPass {
  private readonly keys: PublicKeySet;
  private readonly wanted: Uint8Array[];
  private readonly pass: LedgerPass;
  private next = 0;
  private index = 0;
  private first = 0;
  private readonly present = new Map<string, number>();

  constructor(keys: PublicKeySet, hashes: readonly string[], digests?: MessageDigests) {
    this.keys = keys;
    this.wanted = [...new Set(hashes.map((h) => h.toLowerCase()))].sort().map((h) => fromHex(h, 'hash'));
    this.pass = new LedgerPass(keys.mldsa, digests, {
      onHeader: (head) => {
        this.first = head.firstIndex;
      },
      onEntry: (hashes, at) => {
        const entry = hashes.subarray(at, at + 32);
        while (this.next < this.wanted.length && compareBytes(this.wanted[this.next]!, entry) < 0) this.next++;
        if (this.next < this.wanted.length && compareBytes(this.wanted[this.next]!, entry) === 0) {
          this.present.set(toHex(this.wanted[this.next]!), this.first + this.index);
          this.next++;
        }
        this.index++;
      },
    });
  }

  /** The file's next piece. */
  push(piece: Uint8Array): void {
    this.pass.push(piece);
  }

  /** Bytes pushed so far. */
  get size(): number {
    return this.pass.size;
  }

  /**
   * Once every piece is pushed: the digest and size against what was expected, both signatures (a SignatureError
   * naming the file), the strict parse (a FormatError), the date and origin (a MismatchError); then what it holds.
   */
  finish(ecdsaSignature: Uint8Array, mldsaSignature: Uint8Array, expect: OmissionExpect): OmissionFacts {
    const { date } = expect;
    const digested = this.pass.digested();
    const sha256 = toHex(digested.sha256);
    if (expect.sha256 !== undefined && expect.sha256 !== sha256)
      throw new MismatchError(`${ledgerPath(date)} SHA-256`, expect.sha256, sha256);
    if (expect.size !== undefined && expect.size !== digested.size)
      throw new MismatchError(`${ledgerPath(date)} size`, String(expect.size), String(digested.size));
    requireBothSignatures(
      date,
      ecdsaVerifyDigest(digested.sha256, ecdsaSignature, this.keys.ecdsa),
      mldsaVerifyMu(digested.mu, mldsaSignature, this.keys.mldsa),
    );
    let head: LedgerHeader;
    try {
      head = digested.head();
    } catch (err) {
      throw withContext(ledgerPath(date), err);
    }
    if (head.date !== date) throw new MismatchError(`${ledgerPath(date)} date`, date, head.date);
    if (expect.origin != null && head.origin !== expect.origin)
      throw new MismatchError(`${ledgerPath(date)} origin`, expect.origin, head.origin);
    const absent = this.wanted.map((h) => toHex(h)).filter((h) => !this.present.has(h));
    return { head, sha256, size: digested.size, absent, present: new Map(this.present) };
  }
}
