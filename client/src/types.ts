// The library's public data types. Plain JSON-compatible objects, so a proof file or a trust store is exactly
// what JSON.parse gives back, in Node and in a browser alike.

/** The format name of a proof file (one per stamped file or digest). */
export const PROOF_FILE_FORMAT = 'timeseal-client-proof/1';
/** The format name of a proof file that keeps the day's signed ledger its hash is not in (`omittedFrom`): a promise
 * broken by omission. Every other proof file is version 1 (a version 1 reader refuses the field). */
export const PROOF_FILE_FORMAT_OMITTED = 'timeseal-client-proof/2';
/** The format name of a trust store (the keys pinned per server, the checkpoints seen per log). */
export const TRUST_FORMAT = 'timeseal-client-trust/1';

export type BitcoinNetwork = 'mainnet' | 'regtest';

/** A Bitcoin block header the proof's OpenTimestamps attestation needs, fetched once so verifying needs no network. */
export interface HeaderRecord {
  height: number;
  /** The block hash as explorers print it (byte-reversed hex). */
  hash: string;
  /** The 80-byte header, hex. */
  header: string;
}

/**
 * What the client keeps for one stamped file or digest: the receipt at once, the server's proof bundle once
 * the day is published, a consistency proof to the latest checkpoint seen then, and the Bitcoin block headers
 * once the day is anchored.
 */
/**
 * The day's signed ledger a proof's hash is not in, kept beside the proof file by `upgrade` (checked before it was
 * kept: its SHA-256 the one the server's days.json lists, both signatures with the pinned keys, its date and origin,
 * the hash absent): `ledger` is the ledger file's path relative to the proof file's folder (slashes), its detached
 * signatures beside it as `<ledger>.sig` (ECDSA P-256) and `<ledger>.dilithium.sig` (ML-DSA-65).
 */
export interface Omission {
  /** The day whose ledger does not hold the hash (the receipt's day). */
  date: string;
  ledger: string;
  /** SHA-256 of the ledger file (lower-case hex) and its length in bytes. */
  sha256: string;
  size: number;
}

/** A file beside a proof file, by its path relative to the proof's folder (slashes), in pieces; null when it is
 * not there (the kept ledger of a version 2 proof file is read so: verify, checkPdf). */
export type ReadBeside = (relativePath: string) => AsyncIterable<Uint8Array> | null;

export interface ProofFile {
  /** Version 2 exactly when `omittedFrom` is there. */
  format: typeof PROOF_FILE_FORMAT | typeof PROOF_FILE_FORMAT_OMITTED;
  /** The SHA-256 stamped, lower-case hex. */
  hash: string;
  /** The document's path relative to the proof file's folder (slashes), or null for a digest or stdin. */
  file: string | null;
  /** The server's base URL, without a trailing slash. */
  server: string;
  /** What the submission answered: its time and the day whose ledger will hold it (null when unknown). */
  submittedAt: string | null;
  ledgerDate: string | null;
  /** The RFC 3161 receipt from the server's time-stamp authority: base64 DER TimeStampResp, or null. */
  receipt: string | null;
  /** The `timeseal-proof/4` bundle (GET /api/proof/<hash>; older versions are read too) as the server sent it, or null before publication. */
  bundle: Record<string, unknown> | null;
  /** The bundle's checkpoint shown consistent with a later one: that checkpoint (signed note) and the RFC 9162
   * consistency proof from the bundle's tree to it (hex hashes). Null before publication. */
  consistency: { checkpoint: string; proof: string[] } | null;
  /** Headers of the Bitcoin blocks the bundle's `.ots` attests to. */
  headers: HeaderRecord[];
  /** When the client last changed this file. */
  updatedAt: string;
  /** The kept signed ledger of the day that does not hold the hash (version 2 only): the promise is broken. */
  omittedFrom?: Omission;
}

/** How far a proof file has come: a receipt only, the signed ledger too, or anchored in Bitcoin with its headers. */
export type ProofStage = 'stamped' | 'published' | 'anchored';

/** The public key files of a server, as it serves them under /keys/ (texts; the ML-DSA-65 key base64). */
export interface KeyFiles {
  /** keys/public.pem: the ECDSA P-256 key (SubjectPublicKeyInfo PEM). */
  publicPem: string;
  /** keys/dilithium_public.key: the raw 1952-byte ML-DSA-65 key, base64. */
  dilithiumKey: string;
  /** keys/ed25519.vkey and keys/mldsa44.vkey: the checkpoint keys witnesses know, when the archive has them. */
  ed25519Vkey?: string;
  mldsa44Vkey?: string;
  /** keys/timeseal-tsa-root.pem: the root of the server's RFC 3161 time-stamp authority (receipts). */
  tsaRootPem?: string;
  /** keys/witnesses: the witness policy (c2sp.org/tlog-policy), when the server has witnesses. */
  witnessPolicy?: string;
  /** keys/receipt-es256.pem and keys/receipt-mldsa65.pem: the COSE receipt keys (RFC 9942), when the server has them. */
  receiptEs256Pem?: string;
  receiptMldsa65Pem?: string;
  /** keys/receipt-keys.retired: the receipt keys a rotation retired, with the days they signed. */
  receiptKeysRetired?: string;
}

export interface PinnedServer {
  /** When the keys were first pinned. */
  pinnedAt: string;
  /** The log origin the server's checkpoints name, once seen. */
  origin: string | null;
  keys: KeyFiles;
}

/** One checkpoint the client has verified (signatures with pinned keys): a tree size and its root. */
export interface SeenCheckpoint {
  size: number;
  root: string;
  /** When it was first seen. */
  seenAt: string;
}

export interface LogMemory {
  /** Every checkpoint seen, by tree size (ascending). Two roots for one size are a fork. */
  checkpoints: SeenCheckpoint[];
  /** The latest signed checkpoint seen (note text), or null. */
  latest: string | null;
}

/** Trust on first use: keys pinned per server URL, and per log origin the checkpoints seen. */
export interface TrustData {
  format: typeof TRUST_FORMAT;
  servers: Record<string, PinnedServer>;
  logs: Record<string, LogMemory>;
}

export type LayerName =
  | 'document'
  | 'keys'
  | 'receipt'
  | 'ledger'
  | 'log-signatures'
  | 'witnesses'
  | 'log-view'
  | 'rfc3161'
  | 'cose-receipt'
  | 'statement'
  | 'bitcoin';
export type LayerStatus = 'ok' | 'pending' | 'failed' | 'skipped';

/** One layer of a verification: what was checked, its verdict, and the time it bounds the hash's existence by. */
export interface LayerReport {
  layer: LayerName;
  status: LayerStatus;
  /** What was checked (or why it could not be), in a sentence. */
  checked: string;
  /** "The hash existed no later than `time`", by whose statement (`by`), when this layer gives such a bound. */
  bound?: { time: string; by: string };
}

export type VerifyState = 'complete' | 'pending' | 'invalid' | 'broken';

export interface VerifyReport {
  /** complete: every layer checked; pending: valid so far, some layer still to come; invalid: something failed;
   * broken: everything checked, and the day's signed ledger kept in the proof does not hold the hash. */
  state: VerifyState;
  /** The command line's exit code for this state (the table of core/exit-codes.ts): 0 complete, 2 pending, 1
   * invalid or broken. */
  exitCode: 0 | 1 | 2;
  hash: string;
  layers: LayerReport[];
  /** The earliest of the layers' bounds, or null when none checked. */
  existedNoLaterThan: { time: string; by: string } | null;
  /** The failed layers' sentences, in order. */
  problems: string[];
}

/** A summary of a proof file without checking anything (`info`). */
export interface ProofInfo {
  hash: string;
  file: string | null;
  server: string;
  stage: ProofStage;
  submittedAt: string | null;
  ledgerDate: string | null;
  receipt: { genTime: string; tsa: string; serialNumber: string } | null;
  ledger: { date: string; leafIndex: number; treeSize: number; origin: string } | null;
  ots: { bitcoin: number[]; pending: string[] } | null;
  headers: number[];
  updatedAt: string;
  /** The kept signed ledger of the day that does not hold the hash (a version 2 proof file), or null. */
  omittedFrom: Omission | null;
}
