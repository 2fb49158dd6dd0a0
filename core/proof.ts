// The per-hash proof bundle `timeseal-proof/4` (docs/FORMAT.md §8): everything needed to check offline, with
// only the two public keys, that a hash is a leaf of a dual-signed checkpoint of the day's tree; the day's
// RFC 3161 time-stamp tokens of the ledger file; the hash's own RFC 3161 receipts of that day (Timeseal's
// TSA, docs/FORMAT.md §3b), which readers check with core/receipt.ts; and the leaf's COSE receipts (RFC 9942,
// docs/FORMAT.md §11), which readers check with core/cose-receipt.ts. Bundles of the earlier versions still
// parse, strictly: `timeseal-proof/3` (without COSE receipts), `timeseal-proof/2` (without receipts either) and
// `timeseal-proof/1` (without tokens either).
import type { DayRecord } from './archive.ts';
import { parseCheckpoint, verifyCheckpoint } from './checkpoint.ts';
import { keyFingerprints, type PublicKeySet } from './day.ts';
import { fromBase64, fromHex, toHex } from './encoding.ts';
import { FormatError, MismatchError, withContext } from './errors.ts';
import { normalizeHashHex, sha256, type Hasher } from './hash.ts';
import { isDate, isIsoTime, utcDate } from './ledger.ts';
import { leafHash, verifyInclusion } from './merkle.ts';
import { ecdsaNoteVerifier, mldsaNoteVerifier, parseNote } from './note.ts';

export const PROOF_FORMAT = 'timeseal-proof/4';
/** The third version: the same fields without `cose_receipts`. */
export const PROOF_FORMAT_V3 = 'timeseal-proof/3';
/** The second version: the same fields without `receipts`. */
export const PROOF_FORMAT_V2 = 'timeseal-proof/2';
/** The first version: the same fields without `rfc3161` and `receipts`. */
export const PROOF_FORMAT_V1 = 'timeseal-proof/1';

/** One published occurrence of a hash: its day, its leaf in the log, its submission time. */
export interface Occurrence {
  date: string;
  leafIndex: number;
  submittedAt: string;
  day: DayRecord;
}

export interface ProofBundle {
  hash: string;
  date: string;
  submittedAt: string;
  leafIndex: number;
  treeSize: number;
  inclusionPath: string[];
  checkpoint: string;
  ledger: { path: string; sha256: string; firstIndex: number; entryCount: number };
  keys: { ecdsaP256Fingerprint: string; mlDsa65Fingerprint: string };
  /** The per-hash OpenTimestamps proof, base64, once the day is anchored. */
  ots: string | null;
  /** The day's RFC 3161 time-stamp answers (DER TimeStampResp of the ledger file, base64), in the order of its
   * `.tsr` files; empty before the TSAs answered, or when none is configured (and in a version 1 bundle). */
  rfc3161: string[];
  /** The hash's RFC 3161 receipts from Timeseal's TSA whose genTime lies on `date` (DER TimeStampResp, base64),
   * earliest first: those the server kept (the site's submissions); empty when it kept none, when the bundle
   * was made without the database, and in a version 1 or 2 bundle. Not checked by verifyProofBundle: readers
   * check each with core/receipt.ts checkReceipt. */
  receipts: string[];
  /** The leaf's COSE receipts (RFC 9942; docs/FORMAT.md §11), base64: ES256 then ML-DSA-65; empty when the day
   * was published without receipt keys, and in a version 1, 2 or 3 bundle. Not checked by verifyProofBundle:
   * readers check each with core/cose-receipt.ts verifyReceipt and the published receipt keys. */
  coseReceipts: string[];
}

export function encodeProofBundle(b: ProofBundle): string {
  return `${JSON.stringify(
    {
      format: PROOF_FORMAT,
      hash: b.hash,
      date: b.date,
      submitted_at: b.submittedAt,
      leaf_index: b.leafIndex,
      tree_size: b.treeSize,
      inclusion_path: b.inclusionPath,
      checkpoint: b.checkpoint,
      ledger: {
        path: b.ledger.path,
        sha256: b.ledger.sha256,
        first_index: b.ledger.firstIndex,
        entry_count: b.ledger.entryCount,
      },
      keys: { ecdsa_p256_fingerprint: b.keys.ecdsaP256Fingerprint, ml_dsa_65_fingerprint: b.keys.mlDsa65Fingerprint },
      ots: b.ots,
      rfc3161: b.rfc3161,
      receipts: b.receipts,
      cose_receipts: b.coseReceipts,
    },
    null,
    2,
  )}\n`;
}

type Json = Record<string, unknown>;

function exactKeys(obj: unknown, keys: string[], where: string): Json {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) throw new FormatError(where, 'expected an object');
  const extra = Object.keys(obj).filter((k) => !keys.includes(k));
  if (extra.length) throw new FormatError(where, `unknown field ${extra[0]}`);
  const missing = keys.filter((k) => !(k in obj));
  if (missing.length) throw new FormatError(where, `missing field ${missing[0]}`);
  return obj as Json;
}

function str(o: Json, k: string, where: string, test?: (s: string) => boolean): string {
  const v = o[k];
  if (typeof v !== 'string' || (test && !test(v))) throw new FormatError(`${where}.${k}`, 'has the wrong form');
  return v;
}

function int(o: Json, k: string, where: string): number {
  const v = o[k];
  if (!Number.isSafeInteger(v) || (v as number) < 0)
    throw new FormatError(`${where}.${k}`, 'expected a non-negative integer');
  return v as number;
}

const HEX64 = (s: string) => /^[0-9a-f]{64}$/.test(s);

/** Strict parse of a bundle's JSON text: unknown or missing fields are errors. */
export function parseProofBundle(text: string): ProofBundle {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new FormatError('proof bundle', 'not valid JSON', { cause: err });
  }
  const w = 'proof';
  const v1Fields = [
    'format',
    'hash',
    'date',
    'submitted_at',
    'leaf_index',
    'tree_size',
    'inclusion_path',
    'checkpoint',
    'ledger',
    'keys',
    'ots',
  ];
  const byVersion: Record<string, string[]> = {
    [PROOF_FORMAT_V1]: v1Fields,
    [PROOF_FORMAT_V2]: [...v1Fields, 'rfc3161'],
    [PROOF_FORMAT_V3]: [...v1Fields, 'rfc3161', 'receipts'],
    [PROOF_FORMAT]: [...v1Fields, 'rfc3161', 'receipts', 'cose_receipts'],
  };
  const format = typeof raw === 'object' && raw !== null ? (raw as Json).format : undefined;
  const fields =
    typeof format === 'string' && Object.hasOwn(byVersion, format) ? byVersion[format]! : byVersion[PROOF_FORMAT]!;
  const o = exactKeys(raw, fields, w);
  if (typeof format !== 'string' || !Object.hasOwn(byVersion, format)) {
    throw new FormatError(
      `${w}.format`,
      `expected "${PROOF_FORMAT}" (or "${PROOF_FORMAT_V3}", "${PROOF_FORMAT_V2}", "${PROOF_FORMAT_V1}")`,
    );
  }
  const base64 = (t: unknown) => {
    try {
      return typeof t === 'string' && fromBase64(t).length > 0;
    } catch {
      return false;
    }
  };
  const base64List = (k: 'rfc3161' | 'receipts' | 'cose_receipts'): string[] => {
    if (!fields.includes(k)) return [];
    const list = o[k];
    if (!Array.isArray(list) || !list.every(base64))
      throw new FormatError(`${w}.${k}`, 'expected an array of base64 texts');
    return list as string[];
  };
  const tokens = base64List('rfc3161');
  const receipts = base64List('receipts');
  const coseReceipts = base64List('cose_receipts');
  const path = o.inclusion_path;
  if (!Array.isArray(path) || path.some((p) => typeof p !== 'string' || !HEX64(p))) {
    throw new FormatError(`${w}.inclusion_path`, 'expected an array of 64-hex hashes');
  }
  const ledger = exactKeys(o.ledger, ['path', 'sha256', 'first_index', 'entry_count'], `${w}.ledger`);
  const keys = exactKeys(o.keys, ['ecdsa_p256_fingerprint', 'ml_dsa_65_fingerprint'], `${w}.keys`);
  if (o.ots !== null && typeof o.ots !== 'string') throw new FormatError(`${w}.ots`, 'expected null or base64 text');
  return {
    hash: str(o, 'hash', w, HEX64),
    date: str(o, 'date', w, isDate),
    submittedAt: str(o, 'submitted_at', w, isIsoTime),
    leafIndex: int(o, 'leaf_index', w),
    treeSize: int(o, 'tree_size', w),
    inclusionPath: path as string[],
    checkpoint: str(o, 'checkpoint', w),
    ledger: {
      path: str(ledger, 'path', `${w}.ledger`),
      sha256: str(ledger, 'sha256', `${w}.ledger`, HEX64),
      firstIndex: int(ledger, 'first_index', `${w}.ledger`),
      entryCount: int(ledger, 'entry_count', `${w}.ledger`),
    },
    keys: {
      ecdsaP256Fingerprint: str(keys, 'ecdsa_p256_fingerprint', `${w}.keys`, HEX64),
      mlDsa65Fingerprint: str(keys, 'ml_dsa_65_fingerprint', `${w}.keys`, HEX64),
    },
    ots: o.ots as string | null,
    rfc3161: tokens,
    receipts,
    coseReceipts,
  };
}

export interface VerifiedProof {
  hash: string;
  date: string;
  submittedAt: string;
  origin: string;
  treeSize: number;
  root: string;
}

/**
 * Verifies a bundle with the two public keys: the keys are the ones the bundle names, both checkpoint
 * signatures verify, the leaf lies in the day's range, and the inclusion path leads to the checkpoint root.
 * Throws a typed error naming the first thing that fails.
 */
export function verifyProofBundle(bundle: ProofBundle, keys: PublicKeySet, hasher: Hasher = sha256): VerifiedProof {
  const hash = normalizeHashHex(bundle.hash);
  const fp = keyFingerprints(keys);
  if (fp.ecdsa !== bundle.keys.ecdsaP256Fingerprint)
    throw new MismatchError('ECDSA P-256 key fingerprint', fp.ecdsa, bundle.keys.ecdsaP256Fingerprint);
  if (fp.mldsa !== bundle.keys.mlDsa65Fingerprint)
    throw new MismatchError('ML-DSA-65 key fingerprint', fp.mldsa, bundle.keys.mlDsa65Fingerprint);
  const origin = parseCheckpoint(parseNote(bundle.checkpoint).text).origin;
  let checkpoint;
  try {
    checkpoint = verifyCheckpoint(bundle.checkpoint, [
      ecdsaNoteVerifier(origin, keys.ecdsa),
      mldsaNoteVerifier(origin, keys.mldsa),
    ]);
  } catch (err) {
    throw withContext('checkpoint', err);
  }
  if (checkpoint.size !== bundle.treeSize)
    throw new MismatchError('tree size (checkpoint vs bundle)', String(checkpoint.size), String(bundle.treeSize));
  const { firstIndex, entryCount } = bundle.ledger;
  if (firstIndex + entryCount !== bundle.treeSize) {
    throw new MismatchError(
      'ledger range end (first_index + entry_count vs tree_size)',
      String(bundle.treeSize),
      String(firstIndex + entryCount),
    );
  }
  if (bundle.leafIndex < firstIndex || bundle.leafIndex >= bundle.treeSize) {
    throw new FormatError(
      'leaf_index',
      `${bundle.leafIndex} is outside the day's leaves ${firstIndex}…${bundle.treeSize - 1}`,
    );
  }
  if (utcDate(Date.parse(bundle.submittedAt)) !== bundle.date) {
    throw new MismatchError('date of submitted_at', bundle.date, utcDate(Date.parse(bundle.submittedAt)));
  }
  const path = bundle.inclusionPath.map((h, i) => fromHex(h, `inclusion_path[${i}]`));
  try {
    verifyInclusion(leafHash(fromHex(hash), hasher), bundle.leafIndex, bundle.treeSize, path, checkpoint.root, hasher);
  } catch (err) {
    throw withContext('inclusion proof', err);
  }
  return {
    hash,
    date: bundle.date,
    submittedAt: bundle.submittedAt,
    origin,
    treeSize: checkpoint.size,
    root: toHex(checkpoint.root),
  };
}
