// One published day (docs/FORMAT.md §3–§4): the signature metadata encoding, and the pure check of a day's
// five files against the two public keys. Used by the pipeline before it extends the log, by `timeseal
// verify`, and by the browser and the offline verifier, so there is one definition of "this day is valid".
import { verifyCheckpoint, type ParsedCheckpoint } from './checkpoint.ts';
import { equalBytes, fromUtf8, toHex, utf8 } from './encoding.ts';
import { FormatError, MismatchError, SignatureError, withContext } from './errors.ts';
import { sha256, type Hasher } from './hash.ts';
import {
  LedgerReader,
  parseLedger,
  parseLedgerColumns,
  type Ledger,
  type LedgerColumns,
  type LedgerHeader,
} from './ledger.ts';
import { ecdsaNoteVerifier, mldsaNoteVerifier } from './note.ts';
import {
  ecdsaPublicKeyToSpkiDer,
  ecdsaVerifyDigest,
  fingerprint,
  mldsaMuPrefix,
  mldsaVerifyMu,
  nativeAccepts,
} from './sig.ts';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { shake256 } from '@noble/hashes/sha3.js';
import { ecdsaSignaturePath, ledgerPath, mldsaSignaturePath } from './archive.ts';

export interface PublicKeySet {
  /** 65-byte uncompressed ECDSA P-256 point. */
  ecdsa: Uint8Array;
  /** Raw 1952-byte ML-DSA-65 key. */
  mldsa: Uint8Array;
  /** The checkpoint keys witnesses know (keys/ed25519.vkey, keys/mldsa44.vkey), when the archive has them. */
  ed25519?: Uint8Array;
  mldsa44?: Uint8Array;
}

export interface KeyFingerprints {
  ecdsa: string;
  mldsa: string;
}

export function keyFingerprints(keys: PublicKeySet): KeyFingerprints {
  return { ecdsa: fingerprint(ecdsaPublicKeyToSpkiDer(keys.ecdsa)), mldsa: fingerprint(keys.mldsa) };
}

/** μ = SHAKE256(tr || 0 || 0 || message, 64) for pure ML-DSA-65; callers with a faster SHAKE pass their own. */
export type MuFunction = (publicKey: Uint8Array, message: Uint8Array) => Uint8Array;

export const nobleMu: MuFunction = (publicKey, message) =>
  shake256.create({ dkLen: 64 }).update(mldsaMuPrefix(publicKey)).update(message).digest();

export const SIGNATURES_FORMAT = 'timeseal-signatures/1';

/** The bytes of YYYY-MM-DD.json.signatures.json (docs/FORMAT.md §3). */
export function encodeSignaturesMeta(
  date: string,
  ledgerSize: number,
  ledgerSha256: string,
  keys: KeyFingerprints,
): Uint8Array {
  const meta = {
    format: SIGNATURES_FORMAT,
    file: ledgerPath(date),
    size: ledgerSize,
    sha256: ledgerSha256,
    signatures: [
      {
        algorithm: 'ECDSA-P256-SHA256',
        file: ecdsaSignaturePath(date),
        encoding: 'DER',
        public_key: '/keys/public.pem',
        key_fingerprint: keys.ecdsa,
      },
      {
        algorithm: 'ML-DSA-65',
        file: mldsaSignaturePath(date),
        encoding: 'raw FIPS 204 signature, pure, empty context',
        public_key: '/keys/dilithium_public.key',
        key_fingerprint: keys.mldsa,
      },
    ],
  };
  return utf8(`${JSON.stringify(meta, null, 2)}\n`);
}

export interface DayFiles {
  ledger: Uint8Array;
  ecdsaSignature: Uint8Array;
  mldsaSignature: Uint8Array;
  signaturesMeta: Uint8Array;
  checkpoint: Uint8Array;
}

export interface VerifiedDay<L = Ledger> {
  ledger: L;
  /** SHA-256 of the ledger file, hex. */
  sha256: string;
  checkpoint: ParsedCheckpoint;
}

export interface DayCheckOptions {
  hasher?: Hasher;
  mu?: MuFunction;
  /**
   * A further check of the checkpoint's signature lines (core/log-keys.ts checkLogLines: every line from one of
   * the log's keys, the Ed25519 and ML-DSA-44 lines too). Left out where those algorithms are not bundled.
   */
  checkpointLines?: (text: string, origin: string) => void;
}

/**
 * Checks one day's files: both detached signatures over the exact ledger bytes, the ledger's canonical
 * encoding, the signature metadata, and the day's checkpoint (both signatures, same origin, size and root as
 * the ledger). Throws a typed error naming the file and what differs.
 */
export function verifyDayFiles(
  date: string,
  files: DayFiles,
  keys: PublicKeySet,
  options: DayCheckOptions = {},
): VerifiedDay {
  return checkDay(date, files, keys, options, wholeLedger(files, keys, options, parseLedger), (ledger) => ledger);
}

/** verifyDayFiles with the ledger parsed into columns (parseLedgerColumns): for days of millions of entries. */
export function verifyDayFilesColumns(
  date: string,
  files: DayFiles,
  keys: PublicKeySet,
  options: DayCheckOptions = {},
): VerifiedDay<LedgerColumns> {
  return checkDay(
    date,
    files,
    keys,
    options,
    wholeLedger(files, keys, options, parseLedgerColumns),
    (ledger) => ledger.head,
  );
}

/** Incremental SHA-256 and ML-DSA-65 μ (as MuFunction) of one message given in pieces; the pipeline passes
 * node:crypto's (runtime/node-hash.ts messageDigests). */
export type MessageDigests = (mldsaPublicKey: Uint8Array) => {
  update(bytes: Uint8Array): void;
  digest(): { sha256: Uint8Array; mu: Uint8Array };
};

const nobleDigests: MessageDigests = (publicKey) => {
  const sha = nobleSha256.create();
  const mu = shake256.create({ dkLen: 64 }).update(mldsaMuPrefix(publicKey));
  return {
    update(bytes) {
      sha.update(bytes);
      mu.update(bytes);
    },
    digest: () => ({ sha256: sha.digest(), mu: mu.digest() }),
  };
};

/**
 * verifyDayFilesColumns for a ledger file read in pieces and never held (`ledger`: its bytes in order, e.g. a
 * file read a few MB at a time): hashed and parsed in one pass (LedgerPass), so that its memory does not depend
 * on the day. The same checks, in the same order (the signatures first, then the encoding); what it gives of the
 * ledger is its header.
 */
export function verifyDayFilesStreamed(
  date: string,
  files: Omit<DayFiles, 'ledger'>,
  ledger: Iterable<Uint8Array>,
  keys: PublicKeySet,
  options: DayCheckOptions & { digests?: MessageDigests } = {},
): VerifiedDay<LedgerHeader> {
  const pass = new LedgerPass(keys.mldsa, options.digests);
  for (const piece of ledger) pass.push(piece);
  return verifyDayFilesDigested(date, files, pass.digested(), keys, options);
}

/**
 * One pass over a day's ledger file given in pieces, never held: each piece hashed (SHA-256 and ML-DSA-65 μ),
 * counted and parsed strictly (core/ledger.ts LedgerReader without columns; `onHeader` and `onEntry` are its
 * own, for a caller that needs the entries as they pass). A parse failure is kept, and the pieces after it only
 * hashed: it is reported after the signatures (`digested().head`), as verifyDayFiles does. Where the pieces come
 * from, how many bytes the caller allows and what it does between pieces are the caller's.
 */
export class LedgerPass {
  /** Bytes pushed so far. */
  size = 0;
  private readonly digests: ReturnType<MessageDigests>;
  private readonly reader: LedgerReader;
  private failure: unknown;

  constructor(
    mldsaPublicKey: Uint8Array,
    digests: MessageDigests = nobleDigests,
    entries: Pick<ConstructorParameters<typeof LedgerReader>[0], 'onHeader' | 'onEntry'> = {},
  ) {
    this.digests = digests(mldsaPublicKey);
    this.reader = new LedgerReader({ columns: false, ...entries });
  }

  /** The file's next piece; whether the ledger still parses (false from the piece where it failed on). */
  push(piece: Uint8Array): boolean {
    this.digests.update(piece);
    this.size += piece.length;
    if (this.failure !== undefined) return false;
    try {
      this.reader.push(piece);
    } catch (err) {
      this.failure = err; // reported after the signatures, as verifyDayFiles does
      return false;
    }
    return true;
  }

  /** What the pass learnt, once every piece is pushed (verifyDayFilesDigested). */
  digested(): DigestedLedger {
    const { sha256, mu } = this.digests.digest();
    const head = () => {
      if (this.failure !== undefined) throw this.failure;
      return this.reader.end().head;
    };
    return { sha256, mu, size: this.size, head };
  }
}

/** What a reader of a day's ledger file in pieces (never held) learnt of it on the way: its SHA-256 and ML-DSA-65
 * μ, its size, and its strict parse (core/ledger.ts LedgerReader; `head` throws the FormatError it met). */
export interface DigestedLedger {
  sha256: Uint8Array;
  mu: Uint8Array;
  size: number;
  head: () => LedgerHeader;
}

/**
 * verifyDayFilesColumns for a ledger the caller read in pieces and never held (DigestedLedger): the same checks,
 * in the same order (the signatures first, then the encoding); what it gives of the ledger is its header.
 */
export function verifyDayFilesDigested(
  date: string,
  files: Omit<DayFiles, 'ledger'>,
  ledger: DigestedLedger,
  keys: PublicKeySet,
  options: DayCheckOptions = {},
): VerifiedDay<LedgerHeader> {
  const facts: LedgerFacts<LedgerHeader> = {
    digest: ledger.sha256,
    size: ledger.size,
    mldsaOk: () => mldsaVerifyMu(ledger.mu, files.mldsaSignature, keys.mldsa),
    parse: ledger.head,
  };
  return checkDay(date, files, keys, options, facts, (head) => head);
}

/** What a day's check needs of its ledger file, whether held whole or read in pieces. */
interface LedgerFacts<L> {
  /** SHA-256 of the file. */
  digest: Uint8Array;
  size: number;
  /** Whether its ML-DSA-65 signature verifies. */
  mldsaOk: () => boolean;
  /** Its strict parse (throws the FormatError that names what is wrong). */
  parse: () => L;
}

function wholeLedger<L>(
  files: DayFiles,
  keys: PublicKeySet,
  options: DayCheckOptions,
  parse: (bytes: Uint8Array) => L,
): LedgerFacts<L> {
  const { ledger, mldsaSignature } = files;
  const mu = options.mu ?? nobleMu;
  return {
    // ECDSA is checked on this digest (a runtime verifier would hash a day of up to 100 MB again).
    digest: (options.hasher ?? sha256)(ledger),
    size: ledger.length,
    // The runtime's verifier first, which derives μ from the ledger as the noble path does through `mu`.
    mldsaOk: () =>
      nativeAccepts('ml-dsa-65', ledger, mldsaSignature, keys.mldsa) ||
      mldsaVerifyMu(mu(keys.mldsa, ledger), mldsaSignature, keys.mldsa),
    parse: () => parse(ledger),
  };
}

/** Throws the SignatureError that names what failed of a day's two detached signatures over its ledger file. */
export function requireBothSignatures(date: string, ecdsaOk: boolean, mldsaOk: boolean): void {
  if (!ecdsaOk && !mldsaOk) {
    // Two independent signatures failing at once points at the signed bytes, not at both signature files.
    throw new SignatureError(
      `${ledgerPath(date)} was altered after signing: neither its ECDSA P-256 (${ecdsaSignaturePath(date)}) nor its ML-DSA-65 (${mldsaSignaturePath(date)}) signature`,
    );
  }
  if (!ecdsaOk) throw new SignatureError(ecdsaSignaturePath(date));
  if (!mldsaOk) throw new SignatureError(mldsaSignaturePath(date));
}

function checkDay<L>(
  date: string,
  files: Omit<DayFiles, 'ledger'>,
  keys: PublicKeySet,
  options: DayCheckOptions,
  facts: LedgerFacts<L>,
  headOf: (ledger: L) => LedgerHeader,
): VerifiedDay<L> {
  const digest = facts.digest;
  requireBothSignatures(date, ecdsaVerifyDigest(digest, files.ecdsaSignature, keys.ecdsa), facts.mldsaOk());
  let parsed: L;
  try {
    parsed = facts.parse();
  } catch (err) {
    throw withContext(ledgerPath(date), err);
  }
  const ledger = headOf(parsed);
  if (ledger.date !== date) throw new MismatchError(`${ledgerPath(date)} date`, date, ledger.date);
  const sha = toHex(digest);
  const expectedMeta = encodeSignaturesMeta(date, facts.size, sha, keyFingerprints(keys));
  if (!equalBytes(expectedMeta, files.signaturesMeta)) {
    throw new FormatError(`${date}.json.signatures.json`, 'does not describe this ledger and these keys');
  }
  let checkpoint: ParsedCheckpoint;
  try {
    const text = fromUtf8(files.checkpoint, 'checkpoint');
    checkpoint = verifyCheckpoint(
      text,
      [ecdsaNoteVerifier(ledger.origin, keys.ecdsa), mldsaNoteVerifier(ledger.origin, keys.mldsa)],
      { origin: ledger.origin },
    );
    options.checkpointLines?.(text, ledger.origin);
  } catch (err) {
    throw withContext(`${date}.checkpoint`, err);
  }
  if (checkpoint.size !== ledger.treeSize) {
    throw new MismatchError(`${date}.checkpoint tree size`, String(ledger.treeSize), String(checkpoint.size));
  }
  if (toHex(checkpoint.root) !== ledger.root) {
    throw new MismatchError(`${date}.checkpoint root`, ledger.root, toHex(checkpoint.root));
  }
  return { ledger: parsed, sha256: sha, checkpoint };
}
