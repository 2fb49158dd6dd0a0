// The archive's small JSON files (days.json, the OTS status), its cache classes and the `Cache-Control` and
// `Content-Type` each path is served and stored with (docs/FORMAT.md §2–§7). The paths themselves are
// core/archive-paths.ts, re-exported here for the writers and readers that need both.
import { concatBytes } from './encoding.ts';
import { FormatError } from './errors.ts';
import { parseSegmentPath } from './index-segments.ts';
import { isDate, isIsoTime } from './ledger.ts';
import { BLOCK_INFO_PATH, CHECKPOINT_PATH, DAYS_PATH, monthOfBlockInfo, OTS_STATUS_PATH } from './archive-paths.ts';

export {
  BLOCK_INFO_PATH,
  blockInfoMonthPath,
  CHECKPOINT_PATH,
  cosignaturesPath,
  DAYS_PATH,
  dayCheckpointPath,
  ecdsaSignaturePath,
  FEED_PATH,
  INDEX_JSON_PATH,
  ledgerOtsPath,
  ledgerPath,
  MAX_TSAS,
  mldsaSignaturePath,
  monthOfBlockInfo,
  OTS_STATUS_PATH,
  RECEIPT_KEY_NAMES,
  type ReceiptKeyName,
  receiptSignaturePath,
  signaturesMetaPath,
  statementsPath,
  tsrPath,
  VERIFIER_ARCHIVE_PATH,
} from './archive-paths.ts';

/** A day's checkpoint note followed by its witnesses' cosignature lines (a valid signed note either way): what
 * the latest `checkpoint` and proofs carry. */
export function withCosignatures(checkpoint: Uint8Array, cosignatures: Uint8Array | undefined): Uint8Array {
  return cosignatures === undefined || cosignatures.length === 0 ? checkpoint : concatBytes(checkpoint, cosignatures);
}

export type CacheClass = 'immutable' | 'short';

// A day's files: the immutable ones (ledger, signatures, metadata, checkpoint, RFC 3161 tokens) and its witness
// cosignatures, which grow as witnesses answer (pipeline/witness.ts).
const DAY_FILE =
  /^(\d{4}-\d{2}-\d{2})\.(json|json\.sig|json\.dilithium\.sig|json\.signatures\.json|checkpoint|json\.tsr|json\.[2-9]\.tsr|receipt-es256\.cose|receipt-mldsa65\.cose|statements\.cbor|cosignatures)$/;
const FULL_TILE = /^tile\/(\d+|entries)\/(x\d{3}\/)*\d{3}$/;

/** How long a file may be cached: daily artifacts and full tiles never change; partial tiles never change
 * either (their width is in the path). Everything else (checkpoint, index, status) is replaced over time. */
export function cacheClass(path: string): CacheClass {
  if (
    (DAY_FILE.test(path) && !path.endsWith('.cosignatures')) ||
    FULL_TILE.test(path) ||
    /^tile\/.+\.p\/\d+$/.test(path)
  )
    return 'immutable';
  // An index segment file never changes (core/index-segments.ts); its head index/segments.json does.
  if (parseSegmentPath(path) !== null) return 'immutable';
  return 'short';
}

/** Date of a daily artifact path, or null. */
export function dateOfDayFile(path: string): string | null {
  const m = DAY_FILE.exec(path);
  return m && isDate(m[1]!) ? m[1]! : null;
}

/** Cache-Control of each class: never changes (a year, immutable), replaced over time (a minute), status files
 *  revalidated on every use. */
export const CACHE_IMMUTABLE = 'public, max-age=31536000, immutable';
export const CACHE_SHORT = 'public, max-age=60';
export const CACHE_REVALIDATE = 'no-cache';

/** The Cache-Control an archive file is served with, by its path: `timeseal serve` answers with it, and the S3
 *  engine sets it on every object so that a CDN in front of a bucket keeps the same classes. */
export function archiveCacheControl(path: string): string {
  if (path === OTS_STATUS_PATH || path === BLOCK_INFO_PATH || monthOfBlockInfo(path) !== null) return CACHE_REVALIDATE;
  return cacheClass(path) === 'immutable' ? CACHE_IMMUTABLE : CACHE_SHORT;
}

/** The Content-Type an archive file is served with, by its path (the server's and the S3 objects'). */
export function archiveContentType(path: string): string {
  if (path.endsWith('.json')) return 'application/json; charset=utf-8';
  if (path === CHECKPOINT_PATH || path.endsWith('.checkpoint') || path.endsWith('.cosignatures'))
    return 'text/plain; charset=utf-8';
  if (path.endsWith('.tsr')) return 'application/timestamp-reply';
  if (path.endsWith('.cose')) return 'application/cose';
  if (path.endsWith('.cbor')) return 'application/cbor';
  return 'application/octet-stream';
}

export interface DayRecord {
  date: string;
  firstIndex: number;
  entryCount: number;
  treeSize: number;
  /** Root after the day, lower-case hex. */
  root: string;
  /** SHA-256 of the ledger file, lower-case hex. */
  sha256: string;
}

export interface DaysFile {
  origin: string;
  days: DayRecord[];
}

export const DAYS_FORMAT = 'timeseal-days/1';

export function encodeDays(file: DaysFile): string {
  const days = file.days.map((d) => ({
    date: d.date,
    first_index: d.firstIndex,
    entry_count: d.entryCount,
    tree_size: d.treeSize,
    root: d.root,
    sha256: d.sha256,
  }));
  return `${JSON.stringify({ format: DAYS_FORMAT, origin: file.origin, days }, null, 1)}\n`;
}

const HEX64 = /^[0-9a-f]{64}$/;

export function parseDays(text: string): DaysFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new FormatError(DAYS_PATH, 'not valid JSON', { cause: err });
  }
  const obj = raw as { format?: unknown; origin?: unknown; days?: unknown };
  if (obj?.format !== DAYS_FORMAT) throw new FormatError(`${DAYS_PATH}.format`, `expected "${DAYS_FORMAT}"`);
  if (typeof obj.origin !== 'string' || !obj.origin) throw new FormatError(`${DAYS_PATH}.origin`, 'expected a string');
  if (!Array.isArray(obj.days)) throw new FormatError(`${DAYS_PATH}.days`, 'expected an array');
  let previous: DayRecord | undefined;
  const days = obj.days.map((d: Record<string, unknown>, i: number): DayRecord => {
    const where = `${DAYS_PATH}.days[${i}]`;
    const day: DayRecord = {
      date: String(d.date),
      firstIndex: Number(d.first_index),
      entryCount: Number(d.entry_count),
      treeSize: Number(d.tree_size),
      root: String(d.root),
      sha256: String(d.sha256),
    };
    if (!isDate(day.date)) throw new FormatError(`${where}.date`, 'expected YYYY-MM-DD');
    for (const n of ['firstIndex', 'entryCount', 'treeSize'] as const) {
      if (!Number.isSafeInteger(day[n]) || day[n] < 0) throw new FormatError(`${where}.${n}`, 'expected an integer');
    }
    if (!HEX64.test(day.root) || !HEX64.test(day.sha256)) throw new FormatError(where, 'expected hex digests');
    if (day.firstIndex + day.entryCount !== day.treeSize)
      throw new FormatError(where, 'first_index + entry_count != tree_size');
    if (previous && (previous.date >= day.date || previous.treeSize !== day.firstIndex)) {
      throw new FormatError(where, `does not follow ${previous.date}`);
    }
    previous = day;
    return day;
  });
  return { origin: obj.origin, days };
}

export interface OtsStatus {
  latest_ots_ok: string;
  last_update: string;
  queue_size: number;
}

export function encodeOtsStatus(status: OtsStatus): string {
  if (status.latest_ots_ok !== '' && !isDate(status.latest_ots_ok))
    throw new FormatError('latest_ots_ok', 'expected a date or ""');
  if (!isIsoTime(status.last_update)) throw new FormatError('last_update', 'expected an ISO time');
  return `${JSON.stringify(status, null, 2)}\n`;
}
