// `timeseal mirror pull`: a verified, incremental copy of a public Timeseal archive in a folder (docs/OPERATIONS.md,
// "Mirrors"). The remote is read through the same ArchiveReader as `timeseal verify --archive URL`; the copy is
// checked by the same code as `timeseal verify` (pipeline/verify.ts), run on the mirror as it would be after the
// pull: an overlay that answers from the mirror's own files where they cannot have changed and from the remote
// (staged in the mirror's .tmp/ folder) where they are new or may have changed. So only new files cross the
// network, and nothing is renamed into the mirror before the whole result has verified.
//
// Before that: the remote's latest checkpoint must carry the log's ECDSA P-256 and ML-DSA-65 signatures under the
// pinned keys and, when the pinned witness policy has a quorum, its witnesses' cosignatures (core/witness-policy.ts
// judgeCheckpoint); and a consistency proof (RFC 9162 §2.1.4), computed from the remote's tiles, must lead from
// the checkpoint the mirror holds to the new one, so a log that rewrote its history is refused.
//
// The commit follows the archive's own order (docs/FORMAT.md §10): every new immutable file and replaced day file,
// a file-system barrier, then `days.json` (the commit point), the index head, `checkpoint`, the status files.
import type { ReceiptPublicKey } from '../core/cose-receipt.ts';
import fs from 'node:fs';
import path from 'node:path';
import {
  BLOCK_INFO_PATH,
  blockInfoMonthPath,
  CHECKPOINT_PATH,
  cosignaturesPath,
  dateOfDayFile,
  DAYS_PATH,
  dayCheckpointPath,
  INDEX_JSON_PATH,
  ledgerOtsPath,
  ledgerPath,
  OTS_STATUS_PATH,
  parseDays,
  tsrPath,
  VERIFIER_ARCHIVE_PATH,
  type DayRecord,
  type DaysFile,
} from '../core/archive.ts';
import { verifyCheckpoint, type ParsedCheckpoint } from '../core/checkpoint.ts';
import type { PublicKeySet } from '../core/day.ts';
import { equalBytes, fromUtf8, toHex } from '../core/encoding.ts';
import { TimesealError, withContext } from '../core/errors.ts';
import { INDEX_HEAD_PATH, parseIndexHead, parseSegmentPath, segmentPath } from '../core/index-segments.ts';
import { consistencyProof, verifyConsistency } from '../core/merkle.ts';
import { ecdsaNoteVerifier, mldsaNoteVerifier } from '../core/note.ts';
import { tileHashReader, tilePath, tilesForConsistency } from '../core/tiles.ts';
import { describeQuorum, readWitnessPolicy } from '../core/witness-policy.ts';
import { nodeSha256 } from '../runtime/node-hash.ts';
import type { ArchiveReader } from './archive-reader.ts';
import { removeStaleTemps, syncArchive, tempFile } from './files.ts';
import { withLockAsync } from './lock.ts';
import { verifyArchive, type VerifiedBase, type VerifyReport } from './verify.ts';
import {
  parseRetiredReceiptKeys,
  PUBLIC_RECEIPT_ES256_PEM,
  PUBLIC_RECEIPT_MLDSA_PEM,
  receiptKeysFromPems,
  RETIRED_RECEIPT_KEYS,
} from '../runtime/receipt-keys.ts';
import { judgeDay, RETIRED_WITNESSES_FILE, WITNESS_POLICY_FILE } from './witness.ts';
import { TSA_CA_FILE } from './tsa-client.ts';

/** The mirror's copy of the log's public keys, pinned at the first pull: `<DIR>/keys/`. */
export const MIRROR_KEYS_DIR = 'keys';
/** The public key files a mirror keeps (docs/FORMAT.md §9, §4b, §3a), each when the keys' source has it. */
export const MIRRORED_KEY_FILES = [
  'public.pem',
  'dilithium_public.key',
  'dilithium_public.pem',
  'ed25519.vkey',
  'mldsa44.vkey',
  'timeseal-tsa.pem',
  'timeseal-tsa-root.pem',
  TSA_CA_FILE,
  WITNESS_POLICY_FILE,
  RETIRED_WITNESSES_FILE,
  PUBLIC_RECEIPT_ES256_PEM,
  PUBLIC_RECEIPT_MLDSA_PEM,
  RETIRED_RECEIPT_KEYS,
] as const;
/** The key files that identify the log: a pinned mirror refuses other ones. */
const IDENTITY_KEY_FILES = ['public.pem', 'dilithium_public.key', 'ed25519.vkey', 'mldsa44.vkey'];

/** The lock that keeps two pulls out of one mirror (pipeline/lock.ts), beside the archive files. */
const LOCK_NAME = '.mirror-lock';

/** A mirror that cannot be brought up to date: the message names the first problem found. */
export class MirrorError extends TimesealError {
  constructor(message: string, options?: ErrorOptions) {
    super('mismatch', message, options);
    this.name = 'MirrorError';
  }
}

export interface MirrorOptions {
  /** The remote archive (`…/ledgers/`), through pipeline/archive-reader.ts. */
  remote: ArchiveReader;
  /** The mirror's folder. */
  dir: string;
  /** The log's keys, pinned (the mirror's keys/ folder, or --keys the first time). */
  keys: PublicKeySet;
  /** Key files to write into the mirror's keys/ folder (the first pull, or a newer witness policy from --keys). */
  keyFiles: ReadonlyMap<string, Uint8Array>;
  /** Check the whole mirror again (and fetch what it lacks), not only what came after its last checkpoint. */
  full?: boolean;
  /** The receipt keys to check the days' receipt signatures with when the mirror's keys/ folder holds none: a
   * working copy's catch-up (pipeline/storage/publish.ts) passes its host's, since that copy has no keys/. */
  receiptKeys?: ReceiptPublicKey[];
  /** Progress lines (stderr on a terminal). */
  progress?: (line: string) => void;
}

export interface MirrorReport {
  ok: true;
  remote: string;
  dir: string;
  origin: string;
  treeSize: { before: number; after: number };
  days: { before: number; after: number; fetched: string[] };
  /** Files written into the mirror (new or replaced), bytes received, HTTP requests made (404s included). */
  files: number;
  /** Files checked: every file on the first pull, what came after the mirror's last checkpoint on later ones. */
  filesChecked: number;
  bytes: number;
  requests: number;
  /** What `timeseal verify` noted on the result (a quorum still being gathered is refused before this). */
  notes: string[];
}

type Source = 'remote' | 'local-first' | 'local';

/** What block_info.json says of a day's Bitcoin proof (docs/FORMAT.md §7), with its entry as text for comparing. */
interface ProofState {
  /** 'confirmed', or the pending entry's state ('not-stamped': no .ots yet). */
  state: string;
  text: string;
}

/** Each day's entry of a block_info.json. */
function blockInfoEntries(bytes: Uint8Array | undefined, where: string): Map<string, ProofState> | undefined {
  if (bytes === undefined) return undefined;
  const out = new Map<string, ProofState>();
  try {
    const info = JSON.parse(fromUtf8(bytes, BLOCK_INFO_PATH)) as {
      ledgers?: Record<string, unknown>;
      pending?: Record<string, { state?: unknown }>;
    };
    for (const [date, v] of Object.entries(info.ledgers ?? {}))
      out.set(date, { state: 'confirmed', text: JSON.stringify(v) });
    for (const [date, v] of Object.entries(info.pending ?? {}))
      out.set(date, { state: String(v?.state), text: JSON.stringify(v) });
  } catch (err) {
    throw new MirrorError(`${where} ${BLOCK_INFO_PATH}: ${(err as Error).message}`, { cause: err });
  }
  return out;
}

export async function pullMirror(options: MirrorOptions): Promise<MirrorReport> {
  fs.mkdirSync(options.dir, { recursive: true });
  return withLockAsync(path.join(options.dir, LOCK_NAME), () => pull(options), 'mirror pull');
}

/** The phases of a pull, in order; each throws a MirrorError naming what stops it, and then nothing is kept. */
async function pull(options: MirrorOptions): Promise<MirrorReport> {
  const { remote: remoteReader, dir, keys, keyFiles, full = false, progress = () => {} } = options;
  removeStaleTemps(dir);
  const staging = new PullStaging(remoteReader, dir);
  try {
    const remote = await readRemoteState(staging, keys);
    const held = readHeldState(staging, remote, keys);
    await checkConsistency(staging, remote, held);
    const sources = await fileSources(staging, held.days);
    const reader = overlayReader(staging, sources.sourceOf);
    const pinned = pinnedKeys(staging, keyFiles, options.receiptKeys ?? []);
    await checkQuorum(reader, pinned.witnessPolicy, remote.last, remoteReader.location);
    const heldDates = new Set(held.days.map((d) => d.date));
    const newDays = remote.days.days.filter((d) => !heldDates.has(d.date));
    progress(
      `mirror: ${newDays.length} new day${newDays.length === 1 ? '' : 's'} (tree size ${held.checkpoint.size} → ${remote.latest.size}); fetching and verifying`,
    );
    await fetchStatusFiles(staging, sources);
    const report = await verifyPulled(reader, keys, pinned, full ? undefined : verifiedBase(staging, held, sources));
    if (report.treeSize !== remote.latest.size || report.root !== toHex(remote.latest.root))
      throw new MirrorError(
        `the verified tree (size ${report.treeSize}) is not the remote's checkpoint (size ${remote.latest.size})`,
      );
    // The keys, when new or changed (the first pull; a newer witness policy given with --keys).
    for (const [name, data] of keyFiles) staging.stage(`${MIRROR_KEYS_DIR}/${name}`, data);
    const files = staging.commit();
    return {
      ok: true,
      remote: remoteReader.location,
      dir,
      origin: remote.days.origin,
      treeSize: { before: held.checkpoint.size, after: remote.latest.size },
      days: { before: held.days.length, after: remote.days.days.length, fetched: newDays.map((d) => d.date) },
      files,
      filesChecked: report.filesChecked,
      bytes: staging.bytes,
      requests: staging.requests,
      notes: report.notes,
    };
  } finally {
    staging.discard();
  }
}

/** Refuses a path that could leave the mirror's folder. */
function checkPath(rel: string): void {
  if (rel.split('/').some((part) => part === '' || part === '.' || part === '..'))
    throw new MirrorError(`refusing the path ${JSON.stringify(rel)}`);
}

/**
 * What one pull has read and staged: the remote's files (each asked for once, counted in requests and bytes),
 * the mirror's own, and a temp file in the mirror's .tmp/ for each fetched file that differs from the mirror's,
 * renamed into place by `commit` in the archive's order, or removed by `discard`.
 */
class PullStaging {
  requests = 0;
  bytes = 0;
  readonly remote: ArchiveReader;
  readonly dir: string;
  /** rel -> its temp file, for every file fetched in this run that differs from the mirror's. */
  readonly staged = new Map<string, string>();
  /** Files asked for in this run and whether the remote had them, so each is read once; their bytes are not
   * kept (a first pull of a day of 10,000,000 entries fetches some 80,000 files): they are read back from the
   * temp file, or from the mirror's own copy when the remote's was the same. */
  readonly seen = new Map<string, boolean>();
  /** Every temp file this run made (staged, or still being written), removed when the run ends. */
  private readonly temps = new Set<string>();
  /** Set when the run has ended: a read still under way then (one of several asked for at once) stages nothing. */
  private ended = false;

  constructor(remote: ArchiveReader, dir: string) {
    this.remote = remote;
    this.dir = dir;
  }

  /** The mirror's own copy of `rel`, or undefined when it has none. */
  local(rel: string): Uint8Array | undefined {
    try {
      return fs.readFileSync(path.join(this.dir, rel));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw withContext(`mirror: reading ${rel}`, err);
    }
  }

  /** The remote's `rel`, read once in the run and staged when it differs from the mirror's copy. */
  async fetch(rel: string): Promise<Uint8Array | undefined> {
    const present = this.seen.get(rel);
    if (present !== undefined) return present ? this.fetched(rel) : undefined;
    this.requests++;
    const data = await this.remote.read(rel);
    this.bytes += data?.length ?? 0;
    this.seen.set(rel, data !== undefined);
    if (data !== undefined) this.stage(rel, data);
    return data;
  }

  /** A file fetched in this run, read back: its temp file, or the mirror's copy it was the same as. */
  private fetched(rel: string): Uint8Array | undefined {
    const temp = this.staged.get(rel);
    return temp === undefined ? this.local(rel) : fs.readFileSync(temp);
  }

  stage(rel: string, data: Uint8Array): void {
    checkPath(rel);
    if (this.ended) return;
    const existing = this.local(rel);
    if (existing !== undefined && equalBytes(existing, data)) return;
    const temp = this.newTemp();
    fs.writeFileSync(temp, data);
    this.staged.set(rel, temp);
  }

  /**
   * The remote's `rel` as a stream (a day's ledger, an index segment: files too large to hold twice), written on
   * the way into a temp file that is staged once the stream has been read to its end; a reader that stops early
   * (a ledger over its size, a segment that differs) leaves nothing staged.
   */
  async stream(rel: string, maxBytes?: number): Promise<AsyncIterable<Uint8Array> | undefined> {
    checkPath(rel);
    this.requests++;
    const body = await this.remote.stream(rel, maxBytes);
    return body === undefined ? undefined : this.stageStream(rel, body);
  }

  private async *stageStream(rel: string, body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    const temp = this.newTemp();
    const fd = fs.openSync(temp, 'w');
    let whole = false;
    try {
      for await (const piece of body) {
        this.bytes += piece.length;
        fs.writeSync(fd, piece);
        yield piece;
      }
      whole = true;
    } finally {
      fs.closeSync(fd);
      if (whole && !this.ended) this.staged.set(rel, temp);
      else {
        fs.rmSync(temp, { force: true });
        this.temps.delete(temp);
      }
    }
  }

  /**
   * The commit, in the archive's order (docs/FORMAT.md §10): every staged file but the replaced ones, a
   * file-system barrier, then days.json (the commit point), the index head, the latest checkpoint and the status
   * files, as a build writes them; then the index segments the new head stops naming (merged into a larger one).
   * Returns the number of files written.
   */
  commit(): number {
    const { dir, staged } = this;
    const segmentsKept = new Set<string>();
    const headBytes = this.seen.get(INDEX_HEAD_PATH) ? this.fetched(INDEX_HEAD_PATH) : this.local(INDEX_HEAD_PATH);
    if (headBytes !== undefined)
      for (const s of parseIndexHead(fromUtf8(headBytes, INDEX_HEAD_PATH)).segments) segmentsKept.add(segmentPath(s));
    const statusFiles = [...staged.keys()].filter((r) => r.startsWith('block-info/')).sort();
    const LAST = [
      DAYS_PATH,
      INDEX_HEAD_PATH,
      CHECKPOINT_PATH,
      OTS_STATUS_PATH,
      ...statusFiles,
      BLOCK_INFO_PATH,
      VERIFIER_ARCHIVE_PATH,
    ];
    const files = staged.size;
    const move = (rel: string): void => {
      const temp = staged.get(rel);
      if (temp === undefined) return;
      fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      fs.renameSync(temp, path.join(dir, rel));
      staged.delete(rel);
    };
    for (const rel of [...staged.keys()].filter((r) => !LAST.includes(r))) move(rel);
    syncArchive(dir);
    for (const rel of LAST) move(rel);
    const indexDir = path.join(dir, 'index');
    if (headBytes !== undefined && fs.existsSync(indexDir)) {
      for (const name of fs.readdirSync(indexDir)) {
        const rel = `index/${name}`;
        if (parseSegmentPath(rel) !== null && !segmentsKept.has(rel)) fs.rmSync(path.join(dir, rel), { force: true });
      }
    }
    return files;
  }

  /** Nothing fetched stays behind: every temp file left (all of them when the pull failed), and none is made
   * after this by a read still under way. */
  discard(): void {
    this.ended = true;
    for (const temp of this.temps) fs.rmSync(temp, { force: true });
  }

  private newTemp(): string {
    const temp = tempFile(this.dir);
    this.temps.add(temp);
    return temp;
  }
}

/** The remote's state: days.json, and the latest checkpoint signed by the pinned keys and naming its last day. */
async function readRemoteState(
  staging: PullStaging,
  keys: PublicKeySet,
): Promise<{ days: DaysFile; last: DayRecord; latest: ParsedCheckpoint }> {
  const where = staging.remote.location;
  const daysBytes = await staging.fetch(DAYS_PATH);
  if (daysBytes === undefined) throw new MirrorError(`${DAYS_PATH}: not found at ${where}`);
  let days: DaysFile;
  try {
    days = parseDays(fromUtf8(daysBytes, DAYS_PATH));
  } catch (err) {
    throw new MirrorError(`remote ${DAYS_PATH}: ${(err as Error).message}`, { cause: err });
  }
  const last = days.days.at(-1);
  if (last === undefined) throw new MirrorError(`remote ${DAYS_PATH} names no day yet: nothing to mirror`);
  const latestBytes = await staging.fetch(CHECKPOINT_PATH);
  if (latestBytes === undefined) throw new MirrorError(`${CHECKPOINT_PATH}: not found at ${where}`);
  let latest;
  try {
    latest = verifyCheckpoint(latestBytes, logNoteVerifiers(days.origin, keys), { origin: days.origin });
  } catch (err) {
    throw new MirrorError(`remote ${CHECKPOINT_PATH}: ${(err as Error).message}`, { cause: err });
  }
  if (latest.size !== last.treeSize || toHex(latest.root) !== last.root)
    throw new MirrorError(
      `remote ${CHECKPOINT_PATH} (tree size ${latest.size}) is not the checkpoint of the last day in ${DAYS_PATH} (${last.date}, tree size ${last.treeSize}): the archive is being updated or is inconsistent; try again later`,
    );
  return { days, last, latest };
}

/** The log's two note verifiers under the pinned keys (ECDSA P-256, ML-DSA-65). */
function logNoteVerifiers(origin: string, keys: PublicKeySet) {
  return [ecdsaNoteVerifier(origin, keys.ecdsa), mldsaNoteVerifier(origin, keys.mldsa)];
}

/** What the mirror holds: its days and its latest checkpoint (size 0 for an empty mirror), re-verified before it
 * is extended: the same origin, and the checkpoint signed by the pinned keys. */
interface HeldState {
  days: readonly DayRecord[];
  checkpoint: { size: number; root: Uint8Array };
}

function readHeldState(staging: PullStaging, remote: { days: DaysFile }, keys: PublicKeySet): HeldState {
  const origin = remote.days.origin;
  const daysBytes = staging.local(DAYS_PATH);
  const days = daysBytes === undefined ? undefined : parseDays(fromUtf8(daysBytes, DAYS_PATH));
  const held: HeldState = { days: days?.days ?? [], checkpoint: { size: 0, root: new Uint8Array(0) } };
  if (days === undefined || days.days.length === 0) return held;
  if (days.origin !== origin) throw new MirrorError(`the remote's origin ${origin} != the mirror's ${days.origin}`);
  const latestBytes = staging.local(CHECKPOINT_PATH);
  if (latestBytes === undefined) throw new MirrorError(`the mirror has ${DAYS_PATH} but no ${CHECKPOINT_PATH}`);
  try {
    const checkpoint = verifyCheckpoint(latestBytes, logNoteVerifiers(origin, keys), { origin });
    return { days: days.days, checkpoint: { size: checkpoint.size, root: checkpoint.root } };
  } catch (err) {
    throw new MirrorError(`the mirror's ${CHECKPOINT_PATH}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * A consistency proof (RFC 9162 §2.1.4), computed from the remote's tiles at the new size, from the mirror's
 * checkpoint to the remote's, and every day the mirror holds the remote's, record for record: a log that rewrote
 * its history is refused. The tiles are read once: verify then compares them with the tree it recomputes from the
 * ledgers, and a tile the mirror holds at that width is never fetched again.
 */
async function checkConsistency(
  staging: PullStaging,
  remote: { days: DaysFile; latest: ParsedCheckpoint },
  held: HeldState,
): Promise<void> {
  const before = held.checkpoint;
  const { latest } = remote;
  if (before.size === 0) return;
  if (latest.size < before.size)
    throw new MirrorError(
      `the remote's tree (size ${latest.size}) is smaller than the mirror's (size ${before.size}): the log went back`,
    );
  const tiles = new Map<string, Uint8Array>();
  if (latest.size > before.size) {
    for (const t of tilesForConsistency(before.size, latest.size)) {
      const rel = tilePath(t.level, t.index, t.width);
      const data = staging.local(rel) ?? (await staging.fetch(rel));
      if (data === undefined) throw new MirrorError(`${rel}: missing at ${staging.remote.location}`);
      tiles.set(`${t.level}/${t.index}`, data);
    }
  }
  try {
    const read = tileHashReader(latest.size, (level, index) => tiles.get(`${level}/${index}`)!, nodeSha256);
    const proof = latest.size > before.size ? consistencyProof(before.size, latest.size, read, nodeSha256) : [];
    verifyConsistency(before.size, latest.size, proof, before.root, latest.root, nodeSha256);
  } catch (err) {
    throw new MirrorError(
      `the remote's checkpoint (tree size ${latest.size}, root ${toHex(latest.root)}) is not consistent with the mirror's (tree size ${before.size}, root ${toHex(before.root)}): the log rewrote its history (${(err as Error).message})`,
      { cause: err },
    );
  }
  held.days.forEach((day, i) => {
    const now = remote.days.days[i];
    if (now === undefined || JSON.stringify(now) !== JSON.stringify(day))
      throw new MirrorError(
        `${DAYS_PATH}: day ${day.date} of the mirror is ${now === undefined ? 'missing' : `${now.date} with ledger sha256 ${now.sha256} (the mirror's: ${day.sha256})`} at the remote: the log rewrote its history`,
      );
  });
}

interface FileSources {
  /** Where `rel` is read from in this pull. */
  sourceOf(rel: string): Source;
  /** Where a day's .ots is read from (block_info.json's states on both sides). */
  otsSource(date: string): Source;
  remoteBlockInfo: Map<string, ProofState> | undefined;
  localBlockInfo: Map<string, ProofState>;
}

/**
 * Which copy each file comes from. Immutable files the mirror holds are never asked for again; files that are
 * replaced (status, index head, checkpoint) always are; of the files that can change or appear after a day is
 * published: a day's .ots while its Bitcoin proof can still move on (block_info.json), and the cosignatures and
 * RFC 3161 tokens of the new days and of the last day held (witnesses and TSAs answer within hours of a build).
 */
async function fileSources(staging: PullStaging, heldDays: readonly DayRecord[]): Promise<FileSources> {
  const lastHeld = heldDays.at(-1)?.date;
  const heldDates = new Set(heldDays.map((d) => d.date));
  const remoteBlockInfo = blockInfoEntries(await staging.fetch(BLOCK_INFO_PATH), 'remote');
  const localBlockInfo =
    blockInfoEntries(staging.local(BLOCK_INFO_PATH), "the mirror's") ?? new Map<string, ProofState>();
  /** Nowhere while block_info.json says the day is not stamped yet; the mirror's own once both say it is
   * confirmed in Bitcoin (it never changes again); else the remote's. */
  const otsSource = (date: string): Source => {
    if (remoteBlockInfo === undefined) return 'remote';
    const now = remoteBlockInfo.get(date);
    if (now?.state === 'not-stamped') return 'local';
    return now?.state === 'confirmed' && localBlockInfo.get(date)?.state === 'confirmed' ? 'local' : 'remote';
  };
  const sourceOf = (rel: string): Source => {
    if (rel === INDEX_JSON_PATH) return 'local';
    const date = dateOfDayFile(rel) ?? (rel.endsWith('.json.ots') ? rel.slice(0, 10) : null);
    if (date !== null && rel === ledgerOtsPath(date)) return otsSource(date);
    if (date !== null && heldDates.has(date) && (rel === cosignaturesPath(date) || /\.tsr$/.test(rel)))
      return date === lastHeld ? 'remote' : 'local';
    // Immutable files: the mirror's copy when it has one (a missing one, e.g. removed by hand, is fetched again).
    if (date !== null || rel.startsWith('tile/') || parseSegmentPath(rel) !== null) return 'local-first';
    return 'remote';
  };
  return { sourceOf, otsSource, remoteBlockInfo, localBlockInfo };
}

/**
 * The mirror as it will be after the pull, for verify to read: the files staged in this run, the mirror's own
 * where they cannot have changed, the remote's (staged on the way) where they are new or may have changed.
 */
function overlayReader(staging: PullStaging, sourceOf: (rel: string) => Source): ArchiveReader {
  const { dir } = staging;
  /** Files the overlay found absent in this run. */
  const absent = new Set<string>();
  const resolve = async (rel: string): Promise<Uint8Array | undefined> => {
    const temp = staging.staged.get(rel);
    if (temp !== undefined) return fs.readFileSync(temp);
    const source = sourceOf(rel);
    if (source !== 'remote') {
      const held = staging.local(rel);
      if (held !== undefined || source === 'local') return held;
    }
    return staging.fetch(rel);
  };
  const read = async (rel: string): Promise<Uint8Array | undefined> => {
    // RFC 3161 tokens are numbered without gaps: after a missing one, the next is not asked for.
    const token = /^(\d{4}-\d{2}-\d{2})\.json\.(\d)\.tsr$/.exec(rel);
    if (token && absent.has(tsrPath(token[1]!, Number(token[2]) - 2))) {
      absent.add(rel);
      return undefined;
    }
    const data = await resolve(rel);
    if (data === undefined) absent.add(rel);
    return data;
  };
  return {
    location: dir,
    read,
    async stream(rel, maxBytes, pieceBytes = 1 << 20) {
      // Index segments and ledgers can be large: streamed from the remote (and into a temp file on the way).
      const date = dateOfDayFile(rel);
      const large = parseSegmentPath(rel) !== null || (date !== null && rel === ledgerPath(date));
      if (large && !staging.staged.has(rel) && !fs.existsSync(path.join(dir, rel)))
        return staging.stream(rel, maxBytes);
      const file = staging.staged.get(rel) ?? (sourceOf(rel) === 'remote' ? undefined : path.join(dir, rel));
      if (file !== undefined && fs.existsSync(file)) return fs.createReadStream(file, { highWaterMark: pieceBytes });
      const data = await read(rel);
      return data === undefined
        ? undefined
        : (async function* () {
            yield data;
          })();
    },
  };
}

/** The pinned keys verify checks with: from --keys when given, else the mirror's keys/ folder (receipt keys: the
 * caller's when the mirror has none). */
interface PinnedKeys {
  witnessPolicy?: string;
  retiredWitnesses?: string;
  tsaCaPem?: string;
  receiptKeys: ReceiptPublicKey[];
}

function pinnedKeys(
  staging: PullStaging,
  keyFiles: ReadonlyMap<string, Uint8Array>,
  givenReceiptKeys: ReceiptPublicKey[],
): PinnedKeys {
  const keyText = (name: string): string | undefined => {
    const data = keyFiles.get(name) ?? staging.local(`${MIRROR_KEYS_DIR}/${name}`);
    return data === undefined ? undefined : fromUtf8(data, name);
  };
  const retiredReceipt = keyText(RETIRED_RECEIPT_KEYS);
  const receiptKeys = [
    ...receiptKeysFromPems(keyText(PUBLIC_RECEIPT_ES256_PEM), keyText(PUBLIC_RECEIPT_MLDSA_PEM)),
    ...(retiredReceipt === undefined ? [] : parseRetiredReceiptKeys(retiredReceipt)),
  ];
  const pinned: PinnedKeys = { receiptKeys: receiptKeys.length > 0 ? receiptKeys : givenReceiptKeys };
  const witnessPolicy = keyText(WITNESS_POLICY_FILE);
  const retiredWitnesses = keyText(RETIRED_WITNESSES_FILE);
  const tsaCaPem = keyText(TSA_CA_FILE);
  if (witnessPolicy !== undefined) pinned.witnessPolicy = witnessPolicy;
  if (retiredWitnesses !== undefined) pinned.retiredWitnesses = retiredWitnesses;
  if (tsaCaPem !== undefined) pinned.tsaCaPem = tsaCaPem;
  return pinned;
}

/** The witnesses' quorum on the remote's last day, when the pinned policy asks for one (core/witness-policy.ts
 * judgeCheckpoint): a quorum still being gathered is refused, to be tried again. */
async function checkQuorum(
  reader: ArchiveReader,
  policyText: string | undefined,
  last: DayRecord,
  where: string,
): Promise<void> {
  if (policyText === undefined) return;
  const policy = readWitnessPolicy(policyText);
  if (policy.quorum === 'none') return;
  const dayCheckpoint = await reader.read(dayCheckpointPath(last.date));
  if (dayCheckpoint === undefined) throw new MirrorError(`${dayCheckpointPath(last.date)}: missing at ${where}`);
  const cosignatures = await reader.read(cosignaturesPath(last.date));
  const verdict = judgeDay(
    dayCheckpoint,
    cosignatures === undefined ? '' : fromUtf8(cosignatures, cosignaturesPath(last.date)),
    policy,
  );
  if (verdict.problems.length > 0)
    throw new MirrorError(`${cosignaturesPath(last.date)}: ${verdict.problems[0]!.reason}`);
  if (!verdict.met)
    throw new MirrorError(
      `${last.date}: the witness policy's quorum (${describeQuorum(policy)}) is not met (cosigned by: ${verdict.cosigned.map((c) => c.witness).join(', ') || 'none'}); try again once the witnesses have cosigned`,
    );
}

/** The block information of each month whose days' entries changed (status, not signed: copied as served), and
 * the offline verifier's archive. */
async function fetchStatusFiles(staging: PullStaging, sources: FileSources): Promise<void> {
  const { remoteBlockInfo, localBlockInfo } = sources;
  if (remoteBlockInfo !== undefined) {
    const changed = [...remoteBlockInfo].filter(
      ([date, v]) => localBlockInfo.get(date)?.text !== v.text || localBlockInfo.get(date)?.state !== v.state,
    );
    const months = new Set(changed.map(([date]) => date.slice(0, 7)));
    for (const month of months) await staging.fetch(blockInfoMonthPath(month));
  }
  await staging.fetch(VERIFIER_ARCHIVE_PATH);
}

/**
 * What the mirror holds was verified by the pull that wrote it: only what comes after is checked (and the held
 * days' .ots that are fetched again), as a CT monitor keeps the last tree it verified. A mirror whose own files
 * were changed or lost since is for `timeseal verify` to find and `--full` to check and repair.
 */
function verifiedBase(staging: PullStaging, held: HeldState, sources: FileSources): VerifiedBase | undefined {
  if (held.checkpoint.size === 0) return undefined;
  const head = staging.local(INDEX_HEAD_PATH);
  return {
    days: held.days,
    segments: new Set(
      head === undefined ? [] : parseIndexHead(fromUtf8(head, INDEX_HEAD_PATH)).segments.map(segmentPath),
    ),
    recheckOts: new Set(held.days.filter((d) => sources.otsSource(d.date) === 'remote').map((d) => d.date)),
  };
}

/** `timeseal verify`'s checks on the mirror as it will be (from the base when there is one); the first problem
 * refuses the pull. */
async function verifyPulled(
  reader: ArchiveReader,
  keys: PublicKeySet,
  pinned: PinnedKeys,
  from: VerifiedBase | undefined,
): Promise<VerifyReport> {
  const { receiptKeys, ...texts } = pinned;
  const report = await verifyArchive(reader, keys, {
    ...texts,
    ...(from === undefined ? {} : { from }),
    ...(receiptKeys.length === 0 ? {} : { receiptKeys }),
  });
  if (!report.ok) throw new MirrorError(report.problems[0]!);
  return report;
}

/** Whether `dir` holds a mirror's pinned keys. */
export function hasPinnedKeys(dir: string): boolean {
  return fs.existsSync(path.join(dir, MIRROR_KEYS_DIR, 'public.pem'));
}

/** The key files of a keys folder or URL (those of MIRRORED_KEY_FILES it has). */
export async function readKeyFiles(reader: ArchiveReader): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  for (const name of MIRRORED_KEY_FILES) {
    const data = await reader.read(name);
    if (data !== undefined) out.set(name, data);
  }
  return out;
}

/** Refuses keys that are not the ones the mirror pinned (the log's identity keys must be byte-identical). */
export function checkSameIdentity(
  pinned: ReadonlyMap<string, Uint8Array>,
  given: ReadonlyMap<string, Uint8Array>,
  where: string,
): void {
  for (const name of IDENTITY_KEY_FILES) {
    const a = pinned.get(name);
    const b = given.get(name);
    if (a === undefined && b === undefined) continue;
    if (a === undefined || b === undefined || !equalBytes(a, b))
      throw new MirrorError(
        `${where}/${name} is not the key the mirror pinned (${MIRROR_KEYS_DIR}/${name}): a mirror follows one log`,
      );
  }
}
