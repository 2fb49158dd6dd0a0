// The archive's file names (docs/FORMAT.md §2–§7, §11, §12), relative to the archive root (`ledgers/`, `/`
// separators), each a pure function of a day, a month or nothing; the tiles' are core/tiles.ts's, the index's
// core/index-segments.ts's. Like tessera's layout package, this is the one place that names these files,
// imported by every writer and reader (the pipeline, the server, the browser), so none of them can disagree on
// where a file lives. It imports nothing, so what the site loads of it is these few lines; core/archive.ts
// re-exports it beside the archive's small JSON files.

export const CHECKPOINT_PATH = 'checkpoint';
export const DAYS_PATH = 'days.json';
export const INDEX_JSON_PATH = 'index-sha256.json';
export const OTS_STATUS_PATH = 'ots_status.json';
export const BLOCK_INFO_PATH = 'block_info.json';
/** block_info.json's entries of one month (`YYYY-MM`): what a reader of one day needs (docs/FORMAT.md §7). */
export const blockInfoMonthPath = (month: string): string => `block-info/${month}.json`;
const BLOCK_INFO_MONTH = /^block-info\/(\d{4}-(0[1-9]|1[0-2]))\.json$/;
/** The month of a block-info month path, or null. */
export const monthOfBlockInfo = (path: string): string | null => BLOCK_INFO_MONTH.exec(path)?.[1] ?? null;
/** The offline verifier's releases (pipeline/verifier-release.ts). */
export const VERIFIER_ARCHIVE_PATH = 'offline-verifier.json';
/** The Atom feed of the newest days: not a file of the archive but the server's answer beside it, under the same
 *  root (ingest/routes/feed.ts). */
export const FEED_PATH = 'feed.xml';

export const ledgerPath = (date: string): string => `${date}.json`;
export const ecdsaSignaturePath = (date: string): string => `${date}.json.sig`;
export const mldsaSignaturePath = (date: string): string => `${date}.json.dilithium.sig`;
export const signaturesMetaPath = (date: string): string => `${date}.json.signatures.json`;
export const dayCheckpointPath = (date: string): string => `${date}.checkpoint`;
export const ledgerOtsPath = (date: string): string => `${date}.json.ots`;
/** The n-th RFC 3161 token of a day's ledger file (0: the first; docs/FORMAT.md §3a). */
export const tsrPath = (date: string, n: number): string =>
  n === 0 ? `${date}.json.tsr` : `${date}.json.${n + 1}.tsr`;
/** At most this many tokens a day (one per configured TSA). */
export const MAX_TSAS = 9;
/** A day's COSE receipt signature (docs/FORMAT.md §11): the detached COSE_Sign1 over its root, one per receipt key. */
export type ReceiptKeyName = 'es256' | 'mldsa65';
export const RECEIPT_KEY_NAMES: readonly ReceiptKeyName[] = ['es256', 'mldsa65'];
export const receiptSignaturePath = (date: string, key: ReceiptKeyName): string => `${date}.receipt-${key}.cose`;
/** The SCITT Signed Statements registered on a day (docs/FORMAT.md §12), when it has any. */
export const statementsPath = (date: string): string => `${date}.statements.cbor`;
/** The witnesses' cosignature lines of a day's checkpoint (docs/FORMAT.md, "Witness cosignatures"). */
export const cosignaturesPath = (date: string): string => `${date}.cosignatures`;
