// What every kind of input's checks share: the inputs as given, the context one run of checks builds from them
// (keys, parsed ledgers and bundles, block headers, the witness policy, the checks still running), the costly
// reads of a large ledger kept per file, and the two checks several inputs make (the document's hash, a ledger's
// RFC 3161 tokens).
import type { BitcoinNetwork } from '../../../../core/bitcoin.ts';
import { nobleMu, type PublicKeySet } from '../../../../core/day.ts';
import { fromHex } from '../../../../core/encoding.ts';
import { sha256 } from '../../../../core/hash.ts';
import { parseLedger, type Ledger } from '../../../../core/ledger.ts';
import type { ReceiptKeyEntry, ReceiptPublicKey } from '../../../../core/cose-receipt.ts';
import type { ProofBundle } from '../../../../core/proof.ts';
import { checkToken } from '../../../../core/rfc3161.ts';
import { mldsaVerifyMu } from '../../../../core/sig.ts';
import type { WitnessPolicy } from '../../../../core/witness-policy.ts';
import type { ClassifiedInput } from '../inputs.ts';
import type { FetchedHeader, HeaderPool } from './bitcoin.ts';
import { fail, info, message, ok, pending, short, type Check } from './report.ts';

export interface KeyInput {
  key: Uint8Array;
  /** "built into this file" or the name of the file it was loaded from. */
  source: string;
}

export interface VerifierInputs {
  /** The document's hash (SHA-256; 96 or 128 hex digits when a SHA-384 or SHA-512 hash was pasted), and its
   *  SHA-384 / SHA-512 when a receipt asked for them. */
  document?: { hash: string; source: string; digests?: Record<string, string> };
  files: ClassifiedInput[];
  keys: {
    ecdsa?: KeyInput;
    mldsa?: KeyInput;
    ed25519?: KeyInput;
    mldsa44?: KeyInput;
    /** The COSE receipt keys (keys/receipt-es256.pem, keys/receipt-mldsa65.pem; docs/FORMAT.md §11). */
    receiptEs256?: KeyInput;
    receiptMldsa65?: KeyInput;
    /** The receipt keys a rotation retired (keys/receipt-keys.retired), for the days they signed. */
    retiredReceipt?: { keys: ReceiptKeyEntry[]; source: string };
  };
  fetchedHeaders?: FetchedHeader[];
  /** Whose proof-of-work limit headers are held to; mainnet unless a test network is chosen. */
  network?: BitcoinNetwork;
  /** The RFC 3161 TSAs' certificate authority (keys/tsa-ca.pem, loaded by the person): DER certificates. */
  authority?: { certs: Uint8Array[]; source: string };
}

/** The witness policy the person dropped (keys/witnesses; the last one given), read with core/witness-policy.ts. */
export interface PolicyInput {
  policy: WitnessPolicy;
  source: string;
}

export interface Context {
  inputs: VerifierInputs;
  policy?: PolicyInput;
  keys: Partial<PublicKeySet>;
  /** The receipt keys given, for COSE receipts. */
  receiptKeys: ReceiptPublicKey[];
  ledgers: Array<{ input: ClassifiedInput; sha256: string; ledger?: Ledger }>;
  bundles: Array<{ input: ClassifiedInput; bundle?: ProofBundle }>;
  pool: HeaderPool;
  network: BitcoinNetwork;
  /** Checks that finish later (Web Crypto is asynchronous): their rows are filled in before the report. */
  later: Promise<unknown>[];
  /** The ledgers whose day checked out (both signatures, metadata, checkpoint), by date. */
  verified: Map<string, Ledger>;
  /** The digest over the ByteRange of each sound time-stamp of the timestamped PDFs given (checks/pdf.ts), and
   * which one it is: the document of a proof of that digest (timeseal-client's, beside the PDF). */
  pdfDigests: Map<string, string>;
}

// What a large ledger costs to read (its SHA-256, its ML-DSA-65 μ, its parse: seconds for a busy day's) is
// worked out once per file and kept while the page holds the file: the page checks everything again on each
// change, and in passes (p256.ts).
const memos = new WeakMap<object, Map<unknown, unknown>>();
function memo<T>(of: object, tag: unknown, make: () => T): T {
  let m = memos.get(of);
  if (!m) memos.set(of, (m = new Map()));
  if (!m.has(tag)) m.set(tag, make());
  return m.get(tag) as T;
}
export const sha256Of = (bytes: Uint8Array): Uint8Array => memo(bytes, sha256, () => sha256(bytes));
export const muOf = (publicKey: Uint8Array, bytes: Uint8Array): Uint8Array =>
  memo(bytes, publicKey, () => nobleMu(publicKey, bytes));
export const ledgerOf = (bytes: Uint8Array): Ledger => memo(bytes, parseLedger, () => parseLedger(bytes));
/** Pure ML-DSA-65 with the empty context, over the message's μ (the same check as core/sig.ts mldsaVerify). */
export const mldsaVerify = (m: Uint8Array, s: Uint8Array, k: Uint8Array): boolean => mldsaVerifyMu(muOf(k, m), s, k);

/**
 * One row per RFC 3161 answer over a ledger file (docs/FORMAT.md §3a): verified when its chain reaches the
 * authority given; without one, what it says, with its own signature checked and its authority still to check.
 */
export function tokenChecks(
  ctx: Context,
  tokens: Array<{ name: string; der: Uint8Array }>,
  ledgerSha256: string,
): Check[] {
  const authority = ctx.inputs.authority;
  return tokens.map(({ name, der }) => {
    const label = `RFC 3161 time-stamp ${name}`;
    const row = pending(label, 'checking…');
    ctx.later.push(
      checkToken(der, fromHex(ledgerSha256), authority?.certs ?? []).then(
        (f) => {
          const time = f.genTime.toISOString();
          const details = [
            `Time ${time}`,
            `TSA ${f.tsaName}`,
            `Serial ${f.serialNumber}`,
            `Certificates ${f.chain.join(' → ')}`,
            `Over the ledger SHA-256 ${ledgerSha256}`,
          ];
          if (f.anchored) return Object.assign(row, ok(label, [...details, `Authority from ${authority!.source}`]));
          return Object.assign(
            row,
            info(
              label,
              `stamped by ${f.tsaName} at ${time}; its certificate authority was not given: add tsa-ca.pem from /keys/ (or the TSA's root certificate) to check it`,
              details,
            ),
          );
        },
        (err) => Object.assign(row, fail(label, message(err))),
      ),
    );
    return row;
  });
}

export function documentMatch(ctx: Context, hash: string, what: string): Check {
  const doc = ctx.inputs.document;
  const label = 'Hash matches the document';
  const stamp = ctx.pdfDigests.get(hash);
  if (stamp !== undefined) return ok(label, [`SHA-256 ${hash}, over the ByteRange of ${stamp}`]);
  if (!doc)
    return pending(
      label,
      `no document given: choose the original file or paste its hash (${what} is for ${short(hash)})`,
    );
  return doc.hash === hash
    ? ok(label, [`SHA-256 ${hash}`])
    : fail(label, `your document's hash ${doc.hash} is not ${what}'s hash ${hash}`);
}
