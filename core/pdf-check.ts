// Checking a timestamped PDF's document time-stamps, the same way for every reader (timeseal-client verify,
// timeseal receipt check --pdf, /verify, the offline page): each DocTimeStamp's ByteRange covers the whole file
// up to the end of its revision except /Contents (core/pdf-timestamp.ts inspect), the token's imprint is the
// digest over that ByteRange (made with the imprint's algorithm), and the token is sound and chains to the
// authority given (core/rfc3161.ts); a token under Timeseal's policy is a receipt (core/receipt.ts) whose
// promise — its ledger hash in the ledger of its day — the caller judges with the ledger it can read. Bytes
// after the last time-stamp are reported as inspect names them (a DSS update, or changes not covered).
// docs/FORMAT.md §3c.
import { toHex } from './encoding.ts';
import { digestOf, inspect, timeStampResp, type Inflate, type PdfInspection } from './pdf-timestamp.ts';
import { checkReceipt, type ReceiptFacts } from './receipt.ts';
import { checkToken, type TokenFacts } from './rfc3161.ts';
import { TSA_POLICY_OID } from './tsa-authority.ts';

export interface PdfTimeStampCheck {
  /** 1-based, in file order among the document time-stamps. */
  index: number;
  field: string | null;
  byteRange: number[];
  /** The end of the revision it covers (b + c). */
  revisionEnd: number;
  /** SHA-256 over the ByteRange, hex. */
  digest: string;
  /** 'valid': the ByteRange covers its revision, the token is sound, chains to the authority and is for the
   * digest over the ByteRange; else 'invalid' with `reason`. */
  state: 'valid' | 'invalid';
  reason: string | null;
  /** The token's facts, when it could be read. */
  token: TokenFacts | null;
  /** For a Timeseal token: its ledger hash and day (the promise to judge); null for another authority's. */
  receipt: ReceiptFacts | null;
  /** The DER TimeStampResp (status granted) around the token, as `timeseal receipt check` and the client read. */
  response: Uint8Array;
}

export interface PdfCheck {
  inspection: PdfInspection;
  stamps: PdfTimeStampCheck[];
  /** Signatures that are not document time-stamps (listed, not checked here). */
  otherSignatures: number;
}

/**
 * Checks every document time-stamp of `pdf` against `authority` (DER certificates the person trusts, e.g. the
 * TSA root keys/timeseal-tsa-root.pem). Rejects (PdfError) only when the file cannot be read as a PDF.
 */
export async function checkPdfTimeStamps(
  pdf: Uint8Array,
  options: { inflate: Inflate; authority: Uint8Array[] },
): Promise<PdfCheck> {
  const inspection = await inspect(pdf, { inflate: options.inflate });
  const stamps: PdfTimeStampCheck[] = [];
  for (const s of inspection.signatures) {
    if (s.kind !== 'document-time-stamp') continue;
    const response = s.contents.length > 0 ? timeStampResp(s.contents) : new Uint8Array(0);
    const base = {
      index: stamps.length + 1,
      field: s.field,
      byteRange: s.byteRange,
      revisionEnd: s.revisionEnd,
      digest: toHex(s.digest),
      response,
    };
    const invalid = (reason: string, token: TokenFacts | null = null): PdfTimeStampCheck => ({
      ...base,
      state: 'invalid',
      reason,
      token,
      receipt: null,
    });
    if (!s.coversRevision) {
      stamps.push(invalid(s.problem ?? 'its /ByteRange does not cover its revision'));
      continue;
    }
    let token: TokenFacts;
    try {
      token = await checkToken(response, null, options.authority);
      if (options.authority.length > 0 && !token.anchored)
        throw new Error("the token's certificate does not lead to the TSA root given");
    } catch (err) {
      stamps.push(invalid(`its token does not check: ${(err as Error).message}`));
      continue;
    }
    const digest = await digestOver(pdf, s.byteRange, token.imprintAlgorithm, s.digest);
    if (toHex(token.imprint) !== toHex(digest)) {
      stamps.push(
        invalid(
          `its token is for another ${token.imprintAlgorithm} digest (${toHex(token.imprint)}, not the ByteRange's ${toHex(digest)})`,
          token,
        ),
      );
      continue;
    }
    let receipt: ReceiptFacts | null = null;
    if (token.policy === TSA_POLICY_OID) {
      try {
        receipt = await checkReceipt(response, options.authority, digest);
      } catch (err) {
        stamps.push(invalid(`its token is not a sound Timeseal receipt: ${(err as Error).message}`, token));
        continue;
      }
    }
    stamps.push({ ...base, state: 'valid', reason: null, token, receipt });
  }
  return {
    inspection,
    stamps,
    otherSignatures: inspection.signatures.filter((s) => s.kind !== 'document-time-stamp').length,
  };
}

/** The digest over a ByteRange with an imprint's algorithm (the SHA-256 inspect made is reused). */
async function digestOver(pdf: Uint8Array, br: number[], algorithm: string, sha256: Uint8Array): Promise<Uint8Array> {
  if (algorithm === 'SHA-256') return sha256;
  const parts = [pdf.subarray(br[0]!, br[0]! + br[1]!), pdf.subarray(br[2]!, br[2]! + br[3]!)];
  return digestOf(algorithm === 'SHA-384' ? 'SHA-384' : 'SHA-512', parts);
}
