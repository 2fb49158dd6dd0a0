// What the API reads from the published archive (ledgers/): the list of days, the status files written by
// the pipeline and the anchoring step, hash look-ups, and the real verification of a day's signatures. The
// ingest service never writes the archive (docs/ARCHITECTURE.md).
//
// Nothing here costs what the archive's age costs per request: days.json, ots_status.json and block_info.json
// are each parsed once per change of the file (one stat per call tells), and a day is found by its date in a
// map. Day verification is cached per date, keyed by the identity of the day's five files on disk (device, inode,
// size, modification and change times in nanoseconds) and the public keys: daily files are immutable, so a day is
// verified once; a file changed on disk (tampering, a test) is noticed and verified again. The result is also
// kept in the cache folder beside the database (cache/day-checks/<date>.json), so a restarted server does not
// read every day again (at 100,000,000 hashes a day a page of /ledgers is 60 ledgers of 9.7 GB): the kernel sets
// a new change time on every write, rename or touch, which no caller can set back (docs/DECISIONS.md). The check
// reads the ledger asynchronously in pieces, so the server answers other requests meanwhile, and concurrent
// requests for one day wait for the same check.
import fs from 'node:fs';
import path from 'node:path';
import {
  BLOCK_INFO_PATH,
  DAYS_PATH,
  dayCheckpointPath,
  ecdsaSignaturePath,
  ledgerPath,
  mldsaSignaturePath,
  OTS_STATUS_PATH,
  MAX_TSAS,
  signaturesMetaPath,
  tsrPath,
  type DayRecord,
} from '../core/archive.ts';
import { anchoringNote, NOT_REACHED_SENTENCE, type PendingAnchor } from '../core/anchoring-note.ts';
import { LedgerPass, verifyDayFilesDigested, type DigestedLedger, type PublicKeySet } from '../core/day.ts';
import { fromHex, toHex } from '../core/encoding.ts';
import { sha256 } from '../core/hash.ts';
import { checkLogLines, logVerifiers } from '../core/log-keys.ts';
import { checkTimeStamp } from '../runtime/tsa-client.ts';
import { isDate, isIsoTime } from '../core/ledger.ts';
import type { Occurrence, ProofBundle } from '../core/proof.ts';
import { ecdsaVerifyDigest, mldsaVerifyMu } from '../core/sig.ts';
import { messageDigests } from '../runtime/node-hash.ts';
import type { ArchiveAccess } from './archive-access.ts';

// Type aliases, not interfaces: the status routes answer them as they are, and an answer's type read from its
// JSON schema (schemas.ts TypedRoutes) admits other fields, which only an alias's plain object type satisfies.
export type OtsStatusView = {
  latest_ots_ok: string;
  last_update: string;
  queue_size: number;
};

export type BlockInfo = {
  block_height: number | null;
  confirmations: number;
};

/** Result of verifying one published day's files (see docs/API.md, verify-quantum). */
export interface DayVerification {
  /** The ML-DSA-65 detached signature verifies over the ledger file. */
  quantumShield: boolean;
  /** Everything verifies: both detached signatures, the metadata, and the dual-signed day checkpoint. */
  dualSignature: boolean;
  ecdsa: boolean;
  mldsa: boolean;
}

export interface ArchiveView {
  /** The published days, oldest first (the same array until days.json changes: do not modify it). */
  days(): readonly DayRecord[];
  /** The published day of `date`, or undefined; O(1). */
  day(date: string): DayRecord | undefined;
  otsStatus(): OtsStatusView | null;
  blockInfo(): Record<string, BlockInfo>;
  /** null when the date is not a published day. Checked once per day (its files never change) without holding
   * the event loop: concurrent requests for one day share the check. */
  verifyDay(date: string): Promise<DayVerification | null>;
  find(hash: string): Occurrence[];
  /** The proof bundle of a published hash, under the served public keys. */
  proof(hash: string): ProofBundle;
  /** The OTS state of a published day (docs/FORMAT.md §7: `latest_ots_ok`). */
  otsState(date: string): 'verified' | 'pending';
  /** Where a published day's Bitcoin anchoring stands, in the words every surface uses (anchoringText). */
  anchoring(date: string): Anchoring;
  /** The day's RFC 3161 tokens (pipeline/tsa-client.ts), checked against its ledger digest; [] when none. */
  timeStamps(day: DayRecord): Promise<TimeStampView[]>;
}

/** A day's anchoring: confirmed (with its block when known), delayed by a failure (why), or on its way. */
export type Anchoring =
  | { state: 'anchored'; block: BlockInfo | null }
  | { state: 'delayed'; reason: string }
  /** Never submitted to the calendars, a day after its publication: the run stamps the newest days first. */
  | { state: 'not-reached'; reason: string }
  | { state: 'pending'; reason: string | null };

/** The text of a day's anchoring, the same on the certificate and the ledger list as on the site
 * (site/src/lib/anchoring.ts): never "done" before a Bitcoin block confirms it, and a failure said in one plain
 * sentence ("Bitcoin anchoring is delayed; next try 14:00 UTC"); the pipeline's words are anchoringDetails'. */
export function anchoringText(a: Anchoring): string {
  if (a.state === 'anchored') {
    const b = a.block;
    return b && b.block_height !== null
      ? `Anchored in Bitcoin block ${b.block_height} (${b.confirmations} confirmation${b.confirmations === 1 ? '' : 's'})`
      : 'Anchored in Bitcoin';
  }
  if (a.state === 'delayed') {
    const next = NEXT_ATTEMPT.exec(a.reason)?.[1];
    const at = next === undefined || Number.isNaN(Date.parse(next)) ? undefined : new Date(next).toISOString();
    return `Bitcoin anchoring is delayed; ${at ? `next try ${at.slice(0, 10)} ${at.slice(11, 16)} UTC` : 'it is retried every hour'}`;
  }
  if (a.state === 'not-reached') return NOT_REACHED_SENTENCE;
  return 'Pending: the ledger is submitted for Bitcoin anchoring at 00:02 UTC and typically confirmed within 12 to 24 hours';
}

/** The pipeline's own words for a delayed day (which calendars, which error), for a technical appendix; null
 * otherwise. */
export function anchoringDetails(a: Anchoring): string | null {
  if (a.state !== 'delayed' && a.state !== 'not-reached') return null;
  const next = NEXT_ATTEMPT.exec(a.reason);
  return (next ? a.reason.slice(0, next.index) : a.reason).trim().replace(/[.;,]+$/, '');
}

const NEXT_ATTEMPT = /;\s*next attempt at (\d{4}-\d{2}-\d{2}T[\d:.]+Z)\s*$/;

/** block_info.json's `pending` reason for a day that was never submitted yet (pipeline/anchor/status.ts). */
const NOT_YET_SUBMITTED = /^not yet submitted to the OpenTimestamps calendars/;

export interface TimeStampView {
  /** Archive path, e.g. 2025-11-02.json.tsr. */
  file: string;
  genTime: string;
  tsaName: string;
}

/** The file's bytes in pieces of 1 MiB, each read asynchronously (the event loop runs between pieces), one
 * buffer reused (a piece is valid until the next). */
async function* readPieces(file: string): AsyncGenerator<Uint8Array> {
  const handle = await fs.promises.open(file, 'r');
  try {
    const piece = Buffer.alloc(1 << 20);
    for (let n; (n = (await handle.read(piece, 0, piece.length, null)).bytesRead) > 0;) yield piece.subarray(0, n);
  } finally {
    await handle.close();
  }
}

function readJson(archive: string, rel: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(path.join(archive, rel), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `load()`, made again only when the archive file `rel` changed (its inode, size or modification time). */
function cachedByFile<T>(archive: string, rel: string, load: () => T): () => T {
  let key: string | undefined;
  let value: T;
  return () => {
    const st = fs.statSync(path.join(archive, rel), { throwIfNoEntry: false, bigint: true });
    const now = st ? `${st.ino}:${st.size}:${st.mtimeNs}` : '-';
    if (now !== key) {
      value = load();
      key = now;
    }
    return value;
  };
}

/** The results of a day's check kept between runs of the server: `<cache>/day-checks/<date>.json`. */
const DAY_CHECKS = 'day-checks';

/**
 * The view of the archive the routes read. `cacheDir` (the server's cache folder beside the database) keeps each
 * day's check between runs; without it a day is checked once per run.
 */
export function createArchiveView(
  archive: string,
  access: ArchiveAccess,
  publicKeys: () => PublicKeySet,
  cacheDir?: string,
): ArchiveView {
  const cache = new Map<string, { key: string; result: Promise<DayVerification> }>();
  const checksDir = cacheDir === undefined ? undefined : path.join(cacheDir, DAY_CHECKS);
  /** The check kept on disk for `date` under `key`, if any: an unreadable or other file is none. */
  const kept = (date: string, key: string): DayVerification | undefined => {
    if (checksDir === undefined) return undefined;
    try {
      const raw = JSON.parse(fs.readFileSync(path.join(checksDir, `${date}.json`), 'utf8')) as unknown;
      if (isObject(raw) && raw.key === key && isVerification(raw.result)) return raw.result;
    } catch {
      // none kept, or not readable: checked again
    }
    return undefined;
  };
  /** Keeps a check's result (written aside, then renamed into place); a failure to keep it costs a re-check. */
  const keep = (date: string, key: string, result: DayVerification): void => {
    if (checksDir === undefined) return;
    const file = path.join(checksDir, `${date}.json`);
    const temp = `${file}.${process.pid}.tmp`;
    try {
      fs.mkdirSync(checksDir, { recursive: true });
      fs.writeFileSync(temp, `${JSON.stringify({ key, result })}\n`);
      fs.renameSync(temp, file);
    } catch {
      fs.rmSync(temp, { force: true });
    }
  };

  const dayIndex = cachedByFile(archive, DAYS_PATH, () => {
    const list = access.days();
    return { list, byDate: new Map(list.map((d) => [d.date, d])) };
  });
  const days = (): readonly DayRecord[] => dayIndex().list;
  const day = (date: string): DayRecord | undefined => dayIndex().byDate.get(date);

  const otsStatus = cachedByFile(archive, OTS_STATUS_PATH, (): OtsStatusView | null => {
    const raw = readJson(archive, OTS_STATUS_PATH);
    if (!isObject(raw)) return null;
    const latest = typeof raw.latest_ots_ok === 'string' && isDate(raw.latest_ots_ok) ? raw.latest_ots_ok : '';
    const lastUpdate = typeof raw.last_update === 'string' && isIsoTime(raw.last_update) ? raw.last_update : '';
    const queue =
      Number.isSafeInteger(raw.queue_size) && (raw.queue_size as number) >= 0 ? (raw.queue_size as number) : 0;
    return { latest_ots_ok: latest, last_update: lastUpdate, queue_size: queue };
  });

  /** block_info.json, read once per change: `ledgers` (the API's shape `{ledgers: {date: {...}}}`, or a bare map
   * of dates) and `pending` (why a day waits); malformed entries are dropped. */
  const blockFile = cachedByFile(
    archive,
    BLOCK_INFO_PATH,
    (): { ledgers: Record<string, BlockInfo>; pending: Map<string, PendingAnchor> } => {
      const raw = readJson(archive, BLOCK_INFO_PATH);
      const map = isObject(raw) ? (isObject(raw.ledgers) ? raw.ledgers : raw) : {};
      const ledgers: Record<string, BlockInfo> = {};
      for (const [date, v] of Object.entries(map)) {
        if (!isDate(date) || !isObject(v)) continue;
        const height =
          Number.isSafeInteger(v.block_height) && (v.block_height as number) >= 0 ? (v.block_height as number) : null;
        const confirmations =
          Number.isSafeInteger(v.confirmations) && (v.confirmations as number) >= 0 ? (v.confirmations as number) : 0;
        ledgers[date] = { block_height: height, confirmations };
      }
      const pending = new Map<string, PendingAnchor>();
      if (isObject(raw) && isObject(raw.pending)) {
        for (const [date, v] of Object.entries(raw.pending)) {
          if (isDate(date) && isObject(v) && typeof v.state === 'string' && typeof v.reason === 'string')
            pending.set(date, {
              state: v.state,
              reason: v.reason,
              ...(typeof v.checked_at === 'string' && isIsoTime(v.checked_at) ? { checked_at: v.checked_at } : {}),
            });
        }
      }
      return { ledgers, pending };
    },
  );
  const blockInfo = (): Record<string, BlockInfo> => blockFile().ledgers;

  /** The check of one day's five files (their paths `rels`, all present): the ledger read in pieces. */
  const checkDay = async (date: string, rels: string[]): Promise<DayVerification> => {
    const read = (rel: string) => fs.promises.readFile(path.join(archive, rel));
    const keys = publicKeys();
    const [ecdsaSignature, mldsaSignature, signaturesMeta, checkpoint] = await Promise.all(rels.slice(1).map(read));
    const files = {
      ecdsaSignature: ecdsaSignature!,
      mldsaSignature: mldsaSignature!,
      signaturesMeta: signaturesMeta!,
      checkpoint: checkpoint!,
    };
    // The ledger passes once in pieces, never held (at 100,000,000 hashes it is 9.7 GB): its digests serve the
    // whole check and each signature alone. Each piece is read asynchronously, so other requests are answered
    // between pieces: hashing and parsing 1 MiB takes a few milliseconds, the whole ledger minutes at that size.
    const pass = new LedgerPass(keys.mldsa, messageDigests);
    let digested: DigestedLedger | undefined;
    let all = true;
    try {
      for await (const piece of readPieces(path.join(archive, rels[0]!))) pass.push(piece);
      digested = pass.digested();
      verifyDayFilesDigested(date, files, digested, keys, {
        checkpointLines: (text, origin) => checkLogLines(text, logVerifiers(origin, keys)),
      });
    } catch {
      all = false;
    }
    const attempt = (check: (d: DigestedLedger) => boolean): boolean => {
      try {
        return digested !== undefined && check(digested);
      } catch {
        return false;
      }
    };
    const ecdsa = all || attempt((d) => ecdsaVerifyDigest(d.sha256, files.ecdsaSignature, keys.ecdsa));
    const mldsa = all || attempt((d) => mldsaVerifyMu(d.mu, files.mldsaSignature, keys.mldsa));
    return { quantumShield: mldsa, dualSignature: all, ecdsa, mldsa };
  };

  // A day is checked once: every request for it while the check runs waits for the same promise, and later ones
  // get its result, until one of the day's files changes on disk. A check that failed (not a day that fails
  // to verify: an error reading it) is forgotten, so that the next request tries again.
  const verifyDay = async (date: string): Promise<DayVerification | null> => {
    if (day(date) === undefined) return null;
    const rels = [
      ledgerPath(date),
      ecdsaSignaturePath(date),
      mldsaSignaturePath(date),
      signaturesMetaPath(date),
      dayCheckpointPath(date),
    ];
    const stats = rels.map((rel) => fs.statSync(path.join(archive, rel), { throwIfNoEntry: false, bigint: true }));
    if (stats.some((s) => s === undefined))
      return { quantumShield: false, dualSignature: false, ecdsa: false, mldsa: false };
    const key = [
      ...stats.map((s) => `${s!.dev}:${s!.ino}:${s!.size}:${s!.mtimeNs}:${s!.ctimeNs}`),
      keysKey(publicKeys()),
    ].join('|');
    const hit = cache.get(date);
    if (hit && hit.key === key) return hit.result;
    const known = kept(date, key);
    const result = known ? Promise.resolve(known) : checkDay(date, rels);
    cache.set(date, { key, result });
    result.then(
      (r) => {
        if (!known) keep(date, key, r);
      },
      () => {
        if (cache.get(date)?.result === result) cache.delete(date);
      },
    );
    return result;
  };

  const otsState = (date: string): 'verified' | 'pending' => {
    const status = otsStatus();
    if (status && status.latest_ots_ok !== '' && status.latest_ots_ok >= date) return 'verified';
    return (blockInfo()[date]?.confirmations ?? 0) > 0 ? 'verified' : 'pending';
  };

  const anchoring = (date: string): Anchoring => {
    if (otsState(date) === 'verified') return { state: 'anchored', block: blockInfo()[date] ?? null };
    const p = blockFile().pending.get(date);
    // A failure (calendars that did not answer, an attestation that did not check, a retry put off): delayed.
    if (
      p &&
      (p.state === 'unverified' ||
        (p.state === 'not-stamped' && !NOT_YET_SUBMITTED.test(p.reason)) ||
        /next attempt at/.test(p.reason))
    )
      return { state: 'delayed', reason: p.reason };
    // Still waiting a day after its publication, by the status's own times: said as the site says it.
    const note = anchoringNote(date, p, otsStatus()?.last_update);
    if (p && note?.kind === 'delayed') return { state: 'delayed', reason: p.reason };
    if (p && note?.kind === 'not-reached') return { state: 'not-reached', reason: p.reason };
    return { state: 'pending', reason: p?.reason ?? null };
  };

  // Tokens never change once published: each is checked once and remembered by its file's inode, size and
  // modification time (a file removed and written again may get the freed inode and the same size).
  const stamps = new Map<string, { key: string; view: TimeStampView | null }>();
  const timeStamps = async (day: DayRecord): Promise<TimeStampView[]> => {
    const date = day.date;
    const out: TimeStampView[] = [];
    for (let n = 0; n < MAX_TSAS; n++) {
      const file = tsrPath(date, n);
      const stat = fs.statSync(path.join(archive, file), { throwIfNoEntry: false, bigint: true });
      if (!stat) break;
      const key = `${stat.ino}:${stat.size}:${stat.mtimeNs}:${day.sha256}`;
      let known = stamps.get(file);
      if (known?.key !== key) {
        const facts = await checkTimeStamp(
          fs.readFileSync(path.join(archive, file)),
          fromHex(day.sha256, 'ledger sha256'),
        ).catch(() => null);
        known = { key, view: facts && { file, genTime: facts.genTime.toISOString(), tsaName: facts.tsaName } };
        stamps.set(file, known);
      }
      if (known.view) out.push(known.view);
    }
    return out;
  };
  return {
    days,
    day,
    otsStatus,
    blockInfo,
    anchoring,
    verifyDay,
    find: (hash) => access.find(hash),
    proof: (hash) => access.proof(hash, publicKeys()),
    otsState,
    timeStamps,
  };
}

const keysKeys = new WeakMap<PublicKeySet, string>();
/** What the public keys are, for a kept check's key: a check made with other keys is made again. */
function keysKey(keys: PublicKeySet): string {
  let key = keysKeys.get(keys);
  if (key === undefined) {
    const parts = [keys.ecdsa, keys.mldsa, keys.ed25519 ?? new Uint8Array(), keys.mldsa44 ?? new Uint8Array()];
    key = toHex(sha256(new Uint8Array(Buffer.concat(parts.flatMap((p) => [Buffer.from(`${p.length}:`), p])))));
    keysKeys.set(keys, key);
  }
  return key;
}

function isVerification(v: unknown): v is DayVerification {
  return (
    isObject(v) &&
    (['quantumShield', 'dualSignature', 'ecdsa', 'mldsa'] as const).every((k) => typeof v[k] === 'boolean') &&
    Object.keys(v).length === 4
  );
}
