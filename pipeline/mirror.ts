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
  type DaysFile,
} from '../core/archive.ts';
import { verifyCheckpoint } from '../core/checkpoint.ts';
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
import { verifyArchive, type VerifiedBase } from './verify.ts';
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

async function pull({
  remote: remoteReader,
  dir,
  keys,
  keyFiles,
  full = false,
  progress = () => {},
  receiptKeys: givenReceiptKeys = [],
}: MirrorOptions): Promise<MirrorReport> {
  removeStaleTemps(dir);
  let requests = 0;
  let bytes = 0;
  const remote = {
    async read(rel: string): Promise<Uint8Array | undefined> {
      requests++;
      const data = await remoteReader.read(rel);
      bytes += data?.length ?? 0;
      return data;
    },
  };
  const local = (rel: string): Uint8Array | undefined => {
    try {
      return fs.readFileSync(path.join(dir, rel));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw withContext(`mirror: reading ${rel}`, err);
    }
  };
  /** rel -> its temp file, for every file fetched in this run that differs from the mirror's. */
  const staged = new Map<string, string>();
  /** Every temp file this run made (staged, or still being written), removed when the run ends. */
  const temps = new Set<string>();
  /** Set when the run has ended: a read still under way then (one of several asked for at once) stages nothing. */
  let ended = false;
  /** Files asked for in this run: their bytes (undefined: absent), so each is read once. */
  const seen = new Map<string, Uint8Array | undefined>();
  const checkPath = (rel: string): void => {
    if (rel.split('/').some((part) => part === '' || part === '.' || part === '..'))
      throw new MirrorError(`refusing the path ${JSON.stringify(rel)}`);
  };
  const newTemp = (): string => {
    const temp = tempFile(dir);
    temps.add(temp);
    return temp;
  };
  const stage = (rel: string, data: Uint8Array): void => {
    checkPath(rel);
    if (ended) return;
    const existing = local(rel);
    if (existing !== undefined && equalBytes(existing, data)) return;
    const temp = newTemp();
    fs.writeFileSync(temp, data);
    staged.set(rel, temp);
  };
  /**
   * The remote's `rel` as a stream (a day's ledger, an index segment: files too large to hold twice), written on
   * the way into a temp file that is staged once the stream has been read to its end; a reader that stops early
   * (a ledger over its size, a segment that differs) leaves nothing staged.
   */
  const streamRemote = async (rel: string): Promise<AsyncIterable<Uint8Array> | undefined> => {
    checkPath(rel);
    requests++;
    const body = await remoteReader.stream(rel);
    if (body === undefined) return undefined;
    return (async function* () {
      const temp = newTemp();
      const fd = fs.openSync(temp, 'w');
      let whole = false;
      try {
        for await (const piece of body) {
          bytes += piece.length;
          fs.writeSync(fd, piece);
          yield piece;
        }
        whole = true;
      } finally {
        fs.closeSync(fd);
        if (whole && !ended) staged.set(rel, temp);
        else {
          fs.rmSync(temp, { force: true });
          temps.delete(temp);
        }
      }
    })();
  };
  const fetchRemote = async (rel: string): Promise<Uint8Array | undefined> => {
    if (seen.has(rel)) return seen.get(rel);
    const data = await remote.read(rel);
    seen.set(rel, data);
    if (data !== undefined) stage(rel, data);
    return data;
  };
  /** Nothing fetched stays behind: every temp file left (all of them when the pull failed), and none is made
   * after this by a read still under way. */
  const discard = () => {
    ended = true;
    for (const temp of temps) fs.rmSync(temp, { force: true });
  };

  try {
    // The remote's state: days.json and the latest checkpoint, signed by the pinned keys.
    const remoteDaysBytes = await fetchRemote(DAYS_PATH);
    if (remoteDaysBytes === undefined) throw new MirrorError(`${DAYS_PATH}: not found at ${remoteReader.location}`);
    let remoteDays: DaysFile;
    try {
      remoteDays = parseDays(fromUtf8(remoteDaysBytes, DAYS_PATH));
    } catch (err) {
      throw new MirrorError(`remote ${DAYS_PATH}: ${(err as Error).message}`, { cause: err });
    }
    const origin = remoteDays.origin;
    const last = remoteDays.days.at(-1);
    if (last === undefined) throw new MirrorError(`remote ${DAYS_PATH} names no day yet: nothing to mirror`);
    const latestBytes = await fetchRemote(CHECKPOINT_PATH);
    if (latestBytes === undefined) throw new MirrorError(`${CHECKPOINT_PATH}: not found at ${remoteReader.location}`);
    const logVerifiers = [ecdsaNoteVerifier(origin, keys.ecdsa), mldsaNoteVerifier(origin, keys.mldsa)];
    let latest;
    try {
      latest = verifyCheckpoint(latestBytes, logVerifiers, { origin });
    } catch (err) {
      throw new MirrorError(`remote ${CHECKPOINT_PATH}: ${(err as Error).message}`, { cause: err });
    }
    if (latest.size !== last.treeSize || toHex(latest.root) !== last.root)
      throw new MirrorError(
        `remote ${CHECKPOINT_PATH} (tree size ${latest.size}) is not the checkpoint of the last day in ${DAYS_PATH} (${last.date}, tree size ${last.treeSize}): the archive is being updated or is inconsistent; try again later`,
      );

    // The mirror's state, re-verified before it is extended.
    const localDaysBytes = local(DAYS_PATH);
    const localDays = localDaysBytes === undefined ? undefined : parseDays(fromUtf8(localDaysBytes, DAYS_PATH));
    const localLatestBytes = local(CHECKPOINT_PATH);
    let before: { size: number; root: Uint8Array } = { size: 0, root: new Uint8Array(0) };
    if (localDays !== undefined && localDays.days.length > 0) {
      if (localDays.origin !== origin)
        throw new MirrorError(`the remote's origin ${origin} != the mirror's ${localDays.origin}`);
      if (localLatestBytes === undefined)
        throw new MirrorError(`the mirror has ${DAYS_PATH} but no ${CHECKPOINT_PATH}`);
      try {
        const held = verifyCheckpoint(localLatestBytes, logVerifiers, { origin });
        before = { size: held.size, root: held.root };
      } catch (err) {
        throw new MirrorError(`the mirror's ${CHECKPOINT_PATH}: ${(err as Error).message}`, { cause: err });
      }
    }

    // The tiles at the new size, each once: the consistency proof reads them, and verify then compares them with
    // the tree it recomputes from the ledgers. A tile the mirror holds at that width is never fetched again.
    const tileAt = async (level: number, index: number, width: number): Promise<Uint8Array> => {
      const rel = tilePath(level, index, width);
      const data = local(rel) ?? (await fetchRemote(rel));
      if (data === undefined) throw new MirrorError(`${rel}: missing at ${remoteReader.location}`);
      return data;
    };
    if (before.size > 0) {
      if (latest.size < before.size)
        throw new MirrorError(
          `the remote's tree (size ${latest.size}) is smaller than the mirror's (size ${before.size}): the log went back`,
        );
      const tiles = new Map<string, Uint8Array>();
      if (latest.size > before.size) {
        for (const t of tilesForConsistency(before.size, latest.size))
          tiles.set(`${t.level}/${t.index}`, await tileAt(t.level, t.index, t.width));
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
      // Every day the mirror holds must be the remote's, record for record.
      localDays!.days.forEach((held, i) => {
        const now = remoteDays.days[i];
        if (now === undefined || JSON.stringify(now) !== JSON.stringify(held))
          throw new MirrorError(
            `${DAYS_PATH}: day ${held.date} of the mirror is ${now === undefined ? 'missing' : `${now.date} with ledger sha256 ${now.sha256} (the mirror's: ${held.sha256})`} at the remote: the log rewrote its history`,
          );
      });
    }

    // Which copy each file comes from. Immutable files the mirror holds are never asked for again; files that are
    // replaced (status, index head, checkpoint) always are; of the files that can change or appear after a day is
    // published: a day's .ots while its Bitcoin proof can still move on (block_info.json), and the cosignatures and
    // RFC 3161 tokens of the new days and of the last day held (witnesses and TSAs answer within hours of a build).
    const heldDays = localDays?.days ?? [];
    const lastHeld = heldDays.at(-1)?.date;
    const heldDates = new Set(heldDays.map((d) => d.date));
    const remoteBlockInfo = blockInfoEntries(await fetchRemote(BLOCK_INFO_PATH), 'remote');
    const localBlockInfo = blockInfoEntries(local(BLOCK_INFO_PATH), "the mirror's") ?? new Map<string, ProofState>();
    /** Where a day's .ots comes from: nowhere while block_info.json says the day is not stamped yet; the mirror's
     * own once both say it is confirmed in Bitcoin (it never changes again); else the remote's. */
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
    /** Files the overlay found absent in this run. */
    const absent = new Set<string>();
    const resolve = async (rel: string): Promise<Uint8Array | undefined> => {
      const temp = staged.get(rel);
      if (temp !== undefined) return fs.readFileSync(temp);
      const source = sourceOf(rel);
      if (source !== 'remote') {
        const held = local(rel);
        if (held !== undefined || source === 'local') return held;
      }
      return fetchRemote(rel);
    };
    const overlay = async (rel: string): Promise<Uint8Array | undefined> => {
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
    const reader: ArchiveReader = {
      location: dir,
      read: overlay,
      async stream(rel) {
        // Index segments and ledgers can be large: streamed from the remote (and into a temp file on the way).
        const date = dateOfDayFile(rel);
        const large = parseSegmentPath(rel) !== null || (date !== null && rel === ledgerPath(date));
        if (large && !staged.has(rel) && !fs.existsSync(path.join(dir, rel))) return streamRemote(rel);
        const file = staged.get(rel) ?? (sourceOf(rel) === 'remote' ? undefined : path.join(dir, rel));
        if (file !== undefined && fs.existsSync(file)) return fs.createReadStream(file, { highWaterMark: 1 << 20 });
        const data = await overlay(rel);
        return data === undefined
          ? undefined
          : (async function* () {
              yield data;
            })();
      },
    };

    // The witnesses' quorum on the new latest checkpoint, when the pinned policy asks for one.
    const policyText = keyFiles.get(WITNESS_POLICY_FILE) ?? local(`${MIRROR_KEYS_DIR}/${WITNESS_POLICY_FILE}`);
    const retiredText = keyFiles.get(RETIRED_WITNESSES_FILE) ?? local(`${MIRROR_KEYS_DIR}/${RETIRED_WITNESSES_FILE}`);
    const tsaCa = keyFiles.get(TSA_CA_FILE) ?? local(`${MIRROR_KEYS_DIR}/${TSA_CA_FILE}`);
    const keyText = (name: string): string | undefined => {
      const data = keyFiles.get(name) ?? local(`${MIRROR_KEYS_DIR}/${name}`);
      return data === undefined ? undefined : fromUtf8(data, name);
    };
    const retiredReceipt = keyText(RETIRED_RECEIPT_KEYS);
    const pinnedReceiptKeys = [
      ...receiptKeysFromPems(keyText(PUBLIC_RECEIPT_ES256_PEM), keyText(PUBLIC_RECEIPT_MLDSA_PEM)),
      ...(retiredReceipt === undefined ? [] : parseRetiredReceiptKeys(retiredReceipt)),
    ];
    const receiptKeys = pinnedReceiptKeys.length > 0 ? pinnedReceiptKeys : givenReceiptKeys;
    if (policyText !== undefined) {
      const policy = readWitnessPolicy(fromUtf8(policyText, WITNESS_POLICY_FILE));
      if (policy.quorum !== 'none') {
        const dayCheckpoint = await overlay(dayCheckpointPath(last.date));
        if (dayCheckpoint === undefined)
          throw new MirrorError(`${dayCheckpointPath(last.date)}: missing at ${remoteReader.location}`);
        const cosignatures = await overlay(cosignaturesPath(last.date));
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
    }

    const newDays = remoteDays.days.filter((d) => !heldDates.has(d.date));
    progress(
      `mirror: ${newDays.length} new day${newDays.length === 1 ? '' : 's'} (tree size ${before.size} → ${latest.size}); fetching and verifying`,
    );
    // Block information of each month whose days' entries changed (status, not signed: copied as served).
    if (remoteBlockInfo !== undefined) {
      const changed = [...remoteBlockInfo].filter(
        ([date, v]) => localBlockInfo.get(date)?.text !== v.text || localBlockInfo.get(date)?.state !== v.state,
      );
      const months = new Set(changed.map(([date]) => date.slice(0, 7)));
      for (const month of months) await fetchRemote(blockInfoMonthPath(month));
    }
    await fetchRemote(VERIFIER_ARCHIVE_PATH);

    // What the mirror holds was verified by the pull that wrote it: only what comes after is checked (and the
    // held days' .ots that are fetched again), as a CT monitor keeps the last tree it verified. A mirror whose own
    // files were changed or lost since is for `timeseal verify` to find and `--full` to check and repair.
    const heldHead = local(INDEX_HEAD_PATH);
    const from: VerifiedBase | undefined =
      before.size > 0 && !full
        ? {
            days: heldDays,
            segments: new Set(
              heldHead === undefined
                ? []
                : parseIndexHead(fromUtf8(heldHead, INDEX_HEAD_PATH)).segments.map(segmentPath),
            ),
            recheckOts: new Set(heldDays.filter((d) => otsSource(d.date) === 'remote').map((d) => d.date)),
          }
        : undefined;
    const report = await verifyArchive(reader, keys, {
      ...(from === undefined ? {} : { from }),
      ...(policyText === undefined ? {} : { witnessPolicy: fromUtf8(policyText, WITNESS_POLICY_FILE) }),
      ...(retiredText === undefined ? {} : { retiredWitnesses: fromUtf8(retiredText, RETIRED_WITNESSES_FILE) }),
      ...(tsaCa === undefined ? {} : { tsaCaPem: fromUtf8(tsaCa, TSA_CA_FILE) }),
      ...(receiptKeys.length === 0 ? {} : { receiptKeys }),
    });
    if (!report.ok) throw new MirrorError(report.problems[0]!);
    if (report.treeSize !== latest.size || report.root !== toHex(latest.root))
      throw new MirrorError(
        `the verified tree (size ${report.treeSize}) is not the remote's checkpoint (size ${latest.size})`,
      );

    // The keys, when new or changed (the first pull; a newer witness policy given with --keys).
    for (const [name, data] of keyFiles) stage(`${MIRROR_KEYS_DIR}/${name}`, data);

    // The commit, in the archive's order.
    const segmentsKept = new Set<string>();
    const headBytes = seen.get(INDEX_HEAD_PATH) ?? local(INDEX_HEAD_PATH);
    if (headBytes !== undefined)
      for (const s of parseIndexHead(fromUtf8(headBytes, INDEX_HEAD_PATH)).segments) segmentsKept.add(segmentPath(s));
    // After the commit point, as a build writes them: the index head, the latest checkpoint, the status files.
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
    // Index segments the new head stops naming (merged into a larger one) go once the head naming the new one is in.
    const indexDir = path.join(dir, 'index');
    if (headBytes !== undefined && fs.existsSync(indexDir)) {
      for (const name of fs.readdirSync(indexDir)) {
        const rel = `index/${name}`;
        if (parseSegmentPath(rel) !== null && !segmentsKept.has(rel)) fs.rmSync(path.join(dir, rel), { force: true });
      }
    }
    return {
      ok: true,
      remote: remoteReader.location,
      dir,
      origin,
      treeSize: { before: before.size, after: latest.size },
      days: { before: heldDays.length, after: remoteDays.days.length, fetched: newDays.map((d) => d.date) },
      files,
      filesChecked: report.filesChecked,
      bytes,
      requests,
      notes: report.notes,
    };
  } finally {
    discard();
  }
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
