// What a verified search answers (site/src/lib/verified-search.ts) and the two ways it fails, in a module of
// their own: checkpoint-lines.ts, the chunk verified-search.ts loads on demand, uses them too, and importing
// them from verified-search.ts would make the two modules import each other.

export type OtsState = 'pending' | 'verified';

/** A search result as the ledgers API answers it (docs/API.md), plus what the browser checked. */
export interface SearchResult {
  found: boolean;
  hash: string;
  date: string | null;
  /** Submission time, ISO-8601 UTC. */
  timestamp: string | null;
  ledgerUrl: string | null;
  otsStatus: OtsState;
  blockHeight: number | null;
  confirmations: number | null;
  /** The checkpoint's ML-DSA-65 signature verified in this browser. */
  quantumShield: boolean;
  /** Both the ECDSA P-256 and the ML-DSA-65 signatures verified in this browser. */
  dualSignature: boolean;
  ecdsaVerified: boolean;
  /** The inclusion proof led to the signed root. */
  inclusionVerified: boolean;
  leafIndex: number | null;
  treeSize: number;
  /** Why the day is not anchored yet, as the block information's `pending` says (absent when it says nothing). */
  anchoring?: { state?: string; reason: string; checked_at?: string };
  /** ots_status.json's last_update: when the anchoring status was last written (absent when unknown). */
  statusWrittenAt?: string;
  /** Bytes of every response body this search read. */
  bytesFetched: number;
  /** Every checkpoint line that verified here, by signer: the log's algorithms, then each witness by name. */
  signers?: string[];
  /** The witnesses the archive names, whether each cosigned this checkpoint (verified here), and how many must
   *  (when counting them is the whole rule; see checkpoint-lines.ts). */
  witnesses?: { name: string; cosigned: boolean }[];
  witnessQuorum?: number;
  /** Whether the witness policy's quorum is met (core/witness-policy.ts judgeCheckpoint), present with witnesses. */
  witnessQuorumMet?: boolean;
}

/** The archive or the keys could not be read ("Search unavailable"). */
export class SearchUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SearchUnavailableError';
  }
}

/** What the archive says could not be verified ("Search failed"). */
export class VerificationFailedError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'VerificationFailedError';
  }
}
