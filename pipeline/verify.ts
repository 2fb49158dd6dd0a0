// `timeseal verify`: recompute the whole archive from scratch — every day's files and signatures, the chain
// of days, every tile and entry bundle, every root and checkpoint, the index (its head and every segment file it
// names) and, where the archive offers it, index-sha256.json —
// and report each mismatch by name. Reads through an ArchiveReader, so a local folder and a live site are
// checked by the same code.
//
// From a verified base (VerifyOptions.from: a mirror's last pull, which it verified whole or from its own base),
// only what came after is read: the new days' files, the tree and entry bundles extended from the base's edge
// (its partial tiles and bundle), the index segments the base did not have (with the records of the older days a
// merged segment covers), the cosignatures and RFC 3161 tokens of the new days and of the base's last day, and
// the OpenTimestamps proofs named as changed. So a mirror's daily pull costs what the day adds, not the archive's
// age, as a CT monitor that keeps the last tree it verified.
import {
  CHECKPOINT_PATH,
  DAYS_PATH,
  ledgerOtsPath,
  cosignaturesPath,
  dayCheckpointPath,
  ecdsaSignaturePath,
  INDEX_JSON_PATH,
  ledgerPath,
  mldsaSignaturePath,
  OTS_STATUS_PATH,
  parseDays,
  RECEIPT_KEY_NAMES,
  receiptSignaturePath,
  statementsPath,
  signaturesMetaPath,
  withCosignatures,
  type DayRecord,
  type DaysFile,
} from '../core/archive.ts';
import { verifyDaySignature, type ReceiptPublicKey } from '../core/cose-receipt.ts';
import { verifyDayFilesColumns, type PublicKeySet } from '../core/day.ts';
import { checkLogLines, logVerifiers } from '../core/log-keys.ts';
import { compareBytes, equalBytes, fromHex, fromUtf8, toHex } from '../core/encoding.ts';
import { TimesealError } from '../core/errors.ts';
import { parseDayStatements } from '../core/signed-statement.ts';
import {
  encodeSegmentHeader,
  INDEX_HEAD_PATH,
  parseIndexHead,
  segmentBits,
  segmentPath,
  type IndexHead,
} from '../core/index-segments.ts';
import { encodeShard, hashPrefix, indexJsonChunks, type ShardRecord } from '../core/index-shard.ts';
import { isDate, isIsoTime, parseLedgerColumns } from '../core/ledger.ts';
import { calendarTreeOf, dayCommitment } from '../core/ots-path.ts';
import { parseDetached, walkAttestations } from '../core/ots.ts';
import { leafHash } from '../core/merkle.ts';
import {
  appendLeaves,
  encodeEntryBundle,
  entryBundlePath,
  parseEntryBundle,
  tileHashReader,
  tilePath,
  TILE_WIDTH,
} from '../core/tiles.ts';
import { LedgerTooLargeError, readLedger, signedTreeSize, type ArchiveReader } from './archive-reader.ts';
import { checkCosignatures } from './witness.ts';
import { checkTimeStamps } from './tsa-client.ts';
import { mldsaMu, nodeSha256 } from '../runtime/node-hash.ts';

export interface VerifyReport {
  ok: boolean;
  location: string;
  days: number;
  treeSize: number;
  root: string | null;
  filesChecked: number;
  problems: string[];
  /** States that are not problems: the latest checkpoint or the index head behind days.json after a stopped build. */
  notes: string[];
}

export interface VerifyOptions {
  /** keys/witnesses (pipeline/witness.ts), when published: the witnesses whose cosignatures are checked. */
  witnessPolicy?: string;
  /** keys/witnesses.retired, when published: earlier witnesses, whose cosignatures of past days are checked too. */
  retiredWitnesses?: string;
  /** keys/tsa-ca.pem (pipeline/tsa-client.ts), when published: the chain RFC 3161 tokens must lead to. */
  tsaCaPem?: string;
  /** keys/receipt-es256.pem and keys/receipt-mldsa65.pem, when published: the keys of the days' COSE receipt
   * signatures (docs/FORMAT.md §11), each checked against its day's root. */
  receiptKeys?: ReceiptPublicKey[];
  /** What was verified before: only what came after it is checked. */
  from?: VerifiedBase;
}

/** An archive state verified before, by this code: its days are a prefix of the archive's days.json. */
export interface VerifiedBase {
  /** The days verified (days.json's first entries then). */
  days: readonly DayRecord[];
  /** The index segment files verified (those its index head named). */
  segments: ReadonlySet<string>;
  /** Days among them whose OpenTimestamps proof may have changed since (a proof still moving towards Bitcoin). */
  recheckOts: ReadonlySet<string>;
}

export async function verifyArchive(
  reader: ArchiveReader,
  keys: PublicKeySet,
  options: VerifyOptions = {},
): Promise<VerifyReport> {
  const problems: string[] = [];
  const notes: string[] = [];
  let filesChecked = 0;
  const report = (extra: Partial<VerifyReport>): VerifyReport => ({
    ok: problems.length === 0,
    location: reader.location,
    days: 0,
    treeSize: 0,
    root: null,
    filesChecked,
    problems,
    notes,
    ...extra,
  });
  const read = async (rel: string): Promise<Uint8Array | undefined> => {
    const data = await reader.read(rel);
    if (data === undefined) problems.push(`${rel}: missing`);
    else filesChecked++;
    return data;
  };
  /** The day's ledger within what `entries` entries allow (archive-reader.ts readLedger). */
  const readDayLedger = async (date: string, entries: number) => {
    const ledger = await readLedger(reader, ledgerPath(date), state.origin, entries);
    if (ledger === undefined) problems.push(`${ledgerPath(date)}: missing`);
    else filesChecked++;
    return ledger;
  };
  // A day's OpenTimestamps proof, when anchored: it must start at the ledger's SHA-256 and commit to
  // C = SHA-256(R || F) (docs/FORMAT.md §7). Its Bitcoin attestations are checked against block headers by
  // `timeseal ots verify`, which needs a header source.
  const checkOts = async (date: string, rootHex: string, shaHex: string): Promise<void> => {
    const ots = await reader.read(ledgerOtsPath(date));
    if (ots === undefined) return;
    filesChecked++;
    try {
      const root = fromHex(rootHex);
      const sha = fromHex(shaHex);
      const calendar = calendarTreeOf(parseDetached(ots), root, sha);
      if (!equalBytes(calendar.message, dayCommitment(root, sha)))
        throw new Error('does not reach the day commitment SHA-256(R || F)');
      if (walkAttestations(calendar).length === 0) throw new Error('holds no attestation');
    } catch (err) {
      problems.push(`${ledgerOtsPath(date)}: ${(err as Error).message}`);
    }
  };

  const daysRaw = await reader.read(DAYS_PATH);
  if (daysRaw === undefined) {
    const checkpoint = await reader.read(CHECKPOINT_PATH);
    if (checkpoint !== undefined) problems.push(`${DAYS_PATH}: missing, but a checkpoint exists`);
    return report({});
  }
  filesChecked++;
  let state: DaysFile;
  try {
    state = parseDays(fromUtf8(daysRaw, DAYS_PATH));
  } catch (err) {
    problems.push((err as Error).message);
    return report({});
  }

  // The tree, recomputed from the ledgers' entries day by day, tiles compared with the published ones. Only
  // the partial tile of each level is kept: appending reads nothing else (a full tile never changes again).
  const tiles = new Map<string, Uint8Array>();
  const memoryTile = (level: number, index: number, width: number): Uint8Array => {
    const t = tiles.get(`${level}/${index}`);
    if (!t || t.length < width * 32) throw new Error(`tile ${level}/${index} not computed`);
    return t.subarray(0, width * 32);
  };
  let carried: Uint8Array[] = [];
  let size = 0;
  let rootHex: string | null = null;
  let previous: { date: string; sha256: string } | null = null;
  const base = options.from;
  const held = base?.days.length ?? 0;
  if (base !== undefined && held > 0) {
    const differs = base.days.findIndex((d, i) => JSON.stringify(d) !== JSON.stringify(state.days[i]));
    if (differs >= 0) {
      problems.push(`${DAYS_PATH}: day ${base.days[differs]!.date} is not the one verified before`);
      return report({ days: state.days.length });
    }
    const last = base.days.at(-1)!;
    size = last.treeSize;
    rootHex = last.root;
    previous = { date: last.date, sha256: last.sha256 };
    // The tree's right edge at the base: each level's partial tile, and the partial entry bundle.
    for (let level = 0, nodes = size; nodes > 0; level++, nodes = Math.floor(nodes / TILE_WIDTH)) {
      if (nodes % TILE_WIDTH === 0) continue;
      const index = Math.floor(nodes / TILE_WIDTH);
      const tile = await read(tilePath(level, index, nodes % TILE_WIDTH));
      if (tile === undefined) return report({ days: state.days.length });
      tiles.set(`${level}/${index}`, tile);
    }
    if (size % TILE_WIDTH !== 0) {
      const rel = entryBundlePath(Math.floor(size / TILE_WIDTH), size % TILE_WIDTH);
      const bundle = await read(rel);
      if (bundle === undefined) return report({ days: state.days.length });
      try {
        carried = parseEntryBundle(bundle, size % TILE_WIDTH);
      } catch (err) {
        problems.push(`${rel}: ${(err as Error).message}`);
        return report({ days: state.days.length });
      }
    }
  }
  // The records the index segments are checked against: from the first leaf of the first segment not verified
  // before (a merged segment covers older days, whose ledgers are read again for their records only).
  const records = new RecordColumns(await firstUnverifiedLeaf(reader, base, size));
  if (records.base < size) {
    for (const day of state.days.slice(0, held)) {
      if (day.treeSize <= records.base) continue;
      // A day verified before: its entry count is the one its signed checkpoint had then.
      let ledger: { bytes: Uint8Array } | undefined;
      try {
        ledger = await readDayLedger(day.date, day.treeSize - day.firstIndex);
      } catch (err) {
        if (!(err instanceof LedgerTooLargeError)) throw err;
        problems.push(err.message);
      }
      if (ledger === undefined) return report({ days: state.days.length });
      const { hashes, ms } = parseLedgerColumns(ledger.bytes);
      for (let i = Math.max(0, records.base - day.firstIndex); i < ms.length; i++)
        records.push(hashes.subarray(32 * i, 32 * i + 32), ms[i]!);
    }
  }

  for (const day of state.days.slice(held)) {
    // The small files first: the day's checkpoint, signed, says how many entries the ledger holds (its tree
    // size less the tree before it), and so how large the ledger can be before a byte of it is read.
    const [ecdsaSignature, mldsaSignature, signaturesMeta, checkpoint] = await Promise.all([
      read(ecdsaSignaturePath(day.date)),
      read(mldsaSignaturePath(day.date)),
      read(signaturesMetaPath(day.date)),
      read(dayCheckpointPath(day.date)),
    ]);
    if (!ecdsaSignature || !mldsaSignature || !signaturesMeta || !checkpoint) break;
    let entries: number;
    try {
      entries = signedTreeSize(checkpoint, state.origin, keys) - size;
      if (entries < 0) throw new Error(`tree size ${entries + size} is smaller than the ${size} leaves before the day`);
    } catch (err) {
      problems.push(`${day.date}: ${dayCheckpointPath(day.date)}: ${(err as Error).message}`);
      break;
    }
    let ledgerRead: { bytes: Uint8Array; sha256: Uint8Array } | undefined;
    try {
      ledgerRead = await readDayLedger(day.date, entries);
    } catch (err) {
      if (!(err instanceof LedgerTooLargeError)) throw err;
      problems.push(err.message);
      break;
    }
    if (!ledgerRead) break;
    const ledgerBytes = ledgerRead.bytes;
    const streamedSha256 = ledgerRead.sha256;
    let verified;
    try {
      verified = verifyDayFilesColumns(
        day.date,
        { ledger: ledgerBytes, ecdsaSignature, mldsaSignature, signaturesMeta, checkpoint },
        keys,
        {
          // The ledger's SHA-256 was computed as it streamed in.
          hasher: (data) => (data === ledgerBytes ? streamedSha256 : nodeSha256(data)),
          mu: mldsaMu,
          checkpointLines: (text, origin) => checkLogLines(text, logVerifiers(origin, keys)),
        },
      );
    } catch (err) {
      problems.push(`${day.date}: ${(err as Error).message}`);
      break;
    }
    for (const name of RECEIPT_KEY_NAMES) {
      const rel = receiptSignaturePath(day.date, name);
      // Optional: days published before the archive had receipt keys have none.
      const signature = await reader.read(rel);
      if (signature === undefined) continue;
      filesChecked++;
      try {
        if (options.receiptKeys === undefined || options.receiptKeys.length === 0)
          throw new TimesealError('not-found', 'no receipt keys are published to check it with');
        verifyDaySignature(
          signature,
          { origin: state.origin, date: day.date, root: fromHex(day.root) },
          options.receiptKeys,
        );
      } catch (err) {
        problems.push(`${rel}: ${(err as Error).message}`);
      }
    }
    // The day's ledger in columns (40 bytes an entry), each entry's hash a view into them.
    const { head: ledger, hashes, ms } = verified.ledger;
    const expect = (what: string, want: unknown, got: unknown) => {
      if (JSON.stringify(want) !== JSON.stringify(got))
        problems.push(`${day.date}: ${what}: expected ${JSON.stringify(want)} != got ${JSON.stringify(got)}`);
    };
    expect('ledger sha256 (days.json)', day.sha256, verified.sha256);
    expect('origin (days.json)', state.origin, ledger.origin);
    expect('first_index', size, ledger.firstIndex);
    expect('first_index (days.json)', day.firstIndex, ledger.firstIndex);
    expect('tree_size (days.json)', day.treeSize, ledger.treeSize);
    expect('previous day link', previous, ledger.previous);

    const n = ms.length;
    const entry = (i: number) => hashes.subarray(32 * i, 32 * i + 32);
    // The day's SCITT statements (docs/FORMAT.md §12), when it has any: each in its form on the log, and each
    // one's entry a leaf of the day (the entries are sorted, so a binary search finds it).
    const statementsRel = statementsPath(day.date);
    const statements = await reader.read(statementsRel);
    if (statements !== undefined) {
      filesChecked++;
      try {
        for (const s of parseDayStatements(statements, nodeSha256)) {
          let lo = 0;
          let hi = n;
          while (lo < hi) {
            const mid = (lo + hi) >>> 1;
            if (compareBytes(entry(mid), s.entry) < 0) lo = mid + 1;
            else hi = mid;
          }
          if (lo >= n || !equalBytes(entry(lo), s.entry))
            problems.push(`${statementsRel}: the statement of entry ${toHex(s.entry)} is not in the day's ledger`);
        }
      } catch (err) {
        problems.push(`${statementsRel}: ${(err as Error).message}`);
      }
    }
    // The leaf hashes in one buffer, as appendLeaves accepts them: no object per leaf.
    const leaves = new Uint8Array(32 * n);
    for (let i = 0; i < n; i++) leaves.set(leafHash(entry(i), nodeSha256), 32 * i);
    const appended = appendLeaves(size, tileHashReader(size, memoryTile, nodeSha256), leaves, nodeSha256);
    for (const t of appended.tiles) {
      if (t.width < TILE_WIDTH) tiles.set(`${t.level}/${t.index}`, t.data.slice());
      else tiles.delete(`${t.level}/${t.index}`);
      const rel = tilePath(t.level, t.index, t.width);
      const published = await read(rel);
      if (published && !equalBytes(published, t.data))
        problems.push(`${rel}: differs from the tile recomputed from the ledgers`);
    }
    // Entry bundles start with the entries carried over from the previous day's partial bundle.
    const bundleEntry = (k: number) => (k < carried.length ? carried[k]! : entry(k - carried.length));
    const bundled = carried.length + n;
    const firstBundle = Math.floor(size / TILE_WIDTH);
    for (let start = 0; start < bundled; start += TILE_WIDTH) {
      const chunk = Array.from({ length: Math.min(TILE_WIDTH, bundled - start) }, (_, j) => bundleEntry(start + j));
      const rel = entryBundlePath(firstBundle + start / TILE_WIDTH, chunk.length);
      const published = await read(rel);
      if (published && !equalBytes(published, encodeEntryBundle(chunk)))
        problems.push(`${rel}: differs from the ledger's entries`);
    }
    const rest = (size + n) % TILE_WIDTH;
    carried = Array.from({ length: rest }, (_, j) => bundleEntry(bundled - rest + j).slice());
    const computedRoot = toHex(appended.root);
    expect('root recomputed from the entries', ledger.root, computedRoot);
    expect('root (days.json)', day.root, computedRoot);
    await checkOts(day.date, ledger.root, verified.sha256);
    for (let i = 0; i < n; i++) records.push(entry(i), ms[i]!);
    size = appended.size;
    rootHex = computedRoot;
    previous = { date: day.date, sha256: verified.sha256 };
  }
  for (const day of base?.days ?? [])
    if (base!.recheckOts.has(day.date)) await checkOts(day.date, day.root, day.sha256);
  if (problems.length > 0) return report({ days: state.days.length, treeSize: size, root: rootHex });

  // The latest checkpoint and the index head follow days.json (written after it, in this order: head, then
  // checkpoint). A build stopped between its commit point and its end leaves them behind days.json: the
  // checkpoint of an earlier published day (or none before the first one), and the head as well only while the
  // checkpoint is behind. That is a state readers handle ("being updated") and the next build completes, so
  // it is a note, not a problem; anything else is a problem.
  const last = state.days.at(-1);
  let checkpointBehind = false;
  if (last) {
    const latest = await reader.read(CHECKPOINT_PATH);
    const ownCheckpoint = await reader.read(dayCheckpointPath(last.date));
    // The latest checkpoint is the last day's followed by the witnesses' cosignatures of it, when there are.
    const dayCheckpoint =
      ownCheckpoint && withCosignatures(ownCheckpoint, await reader.read(cosignaturesPath(last.date)));
    if (latest !== undefined) filesChecked++;
    if (latest === undefined || (dayCheckpoint !== undefined && !equalBytes(latest, dayCheckpoint))) {
      let earlier: string | undefined;
      for (const day of state.days.slice(0, -1)) {
        const candidate = latest && (await reader.read(dayCheckpointPath(day.date)));
        if (candidate && equalBytes(candidate, latest)) earlier = day.date;
      }
      if (latest === undefined || earlier !== undefined) {
        checkpointBehind = true;
        notes.push(
          `${CHECKPOINT_PATH}: ${latest === undefined ? 'missing' : `the checkpoint of ${earlier}`}, not yet of the last published day ${last.date} (a build stopped after its commit point; the next \`timeseal ledger build\` completes it)`,
        );
      } else {
        problems.push(`${CHECKPOINT_PATH}: is not the checkpoint of the last day ${last.date}`);
      }
    }
  }

  // The index: the head must name segments that cover the published leaves exactly, on day boundaries, and
  // every segment file must be exactly its fan-out table and the records of its leaves, shard by shard.
  const headRaw = checkpointBehind ? await reader.read(INDEX_HEAD_PATH) : await read(INDEX_HEAD_PATH);
  if (headRaw === undefined && checkpointBehind && size > 0)
    notes.push(`${INDEX_HEAD_PATH}: missing, not yet written for the published days (the next build writes it)`);
  let head: IndexHead | undefined;
  if (headRaw) {
    if (checkpointBehind) filesChecked++;
    try {
      head = parseIndexHead(fromUtf8(headRaw, INDEX_HEAD_PATH));
      const boundaries = new Set([0, ...state.days.map((d) => d.treeSize)]);
      if (head.treeSize < size && checkpointBehind && boundaries.has(head.treeSize)) {
        notes.push(
          `${INDEX_HEAD_PATH}: covers ${head.treeSize} of the ${size} published leaves (the next build indexes the rest)`,
        );
      } else if (head.treeSize !== size)
        throw new Error(`tree_size ${head.treeSize} != the published tree size ${size}`);
      for (const segment of head.segments) {
        if (!boundaries.has(segment.from) || !boundaries.has(segment.to))
          throw new Error(`segment ${segment.from}-${segment.to} does not begin and end on day boundaries`);
      }
    } catch (err) {
      problems.push(`${INDEX_HEAD_PATH}: ${(err as Error).message}`);
      head = undefined;
    }
  }
  for (const segment of head?.segments ?? []) {
    const rel = segmentPath(segment);
    if (base?.segments.has(rel)) continue;
    if (segment.from < records.base) {
      problems.push(`${rel}: not among the index segments verified before, and starts before ${records.base}`);
      continue;
    }
    const published = await reader.stream(rel);
    if (published === undefined) {
      problems.push(`${rel}: missing`);
      continue;
    }
    filesChecked++;
    const shards = records.byShard(segment.from, segment.to, segmentBits(segment));
    const chunks = function* () {
      yield encodeSegmentHeader(shards.counts);
      for (let prefix = 0; prefix < shards.counts.length; prefix++) yield shards.encode(prefix);
    };
    if (!(await sameAsChunks(published, chunks()))) problems.push(`${rel}: index segment differs from the ledgers`);
  }
  if (records.count > 0 && records.base === 0) {
    // index-sha256.json is no archive file any more (a server makes it on request, a static deployment with
    // `timeseal index-json`); where it is offered, it must be exactly what the ledgers give. Compared as it
    // streams in: at 10,000,000 hashes it is 1.7 GB.
    const indexJson = await reader.stream(INDEX_JSON_PATH);
    if (indexJson !== undefined) {
      filesChecked++;
      const all = records.byShard(0, size, segmentBits({ from: 0, to: size }));
      const chunks = function* () {
        for (let prefix = 0; prefix < 2 ** all.bits; prefix++) yield all.encode(prefix);
      };
      if (!(await sameAsChunks(indexJson, indexJsonChunks(chunks))))
        problems.push(`${INDEX_JSON_PATH}: differs from the ledgers`);
    }
  }
  // Witness cosignatures: every D.cosignatures judged with D.checkpoint as every reader judges them
  // (core/witness-policy.ts judgeCheckpoint), with the witnesses of keys/witnesses and keys/witnesses.retired.
  // From a base: the days after it and its last day (whose cosignatures and tokens may have come since).
  const recent = state.days.slice(Math.max(0, held - 1));
  const cosigned = await checkCosignatures(reader, options.witnessPolicy, recent, options.retiredWitnesses);
  problems.push(...cosigned.problems);
  notes.push(...cosigned.notes);
  filesChecked += cosigned.checked;
  // RFC 3161 tokens: each for its ledger's digest, signed by a time-stamping certificate (and its chain).
  const stamped = await checkTimeStamps(reader, options.tsaCaPem, recent);
  problems.push(...stamped.problems);
  notes.push(...stamped.notes);
  filesChecked += stamped.checked;
  const status = await reader.read(OTS_STATUS_PATH);
  // A status file, re-derived by every build after its days: a build killed after its last checkpoint but
  // before this file leaves it missing, and the next run writes it (crash.test.ts hit that window).
  if (status === undefined)
    notes.push(`${OTS_STATUS_PATH}: missing, not yet written for the published days (the next build writes it)`);
  if (status) {
    filesChecked++;
    try {
      const s = JSON.parse(fromUtf8(status)) as Record<string, unknown>;
      const okDate = s.latest_ots_ok === '' || (typeof s.latest_ots_ok === 'string' && isDate(s.latest_ots_ok));
      if (
        !okDate ||
        typeof s.last_update !== 'string' ||
        !isIsoTime(s.last_update) ||
        !Number.isSafeInteger(s.queue_size)
      ) {
        problems.push(`${OTS_STATUS_PATH}: fields have the wrong form`);
      }
    } catch {
      problems.push(`${OTS_STATUS_PATH}: not valid JSON`);
    }
  }
  return report({ days: state.days.length, treeSize: size, root: rootHex });
}

/**
 * Every ledger entry of the archive as columns (hash bytes, submission time in ms; the leaf index is the
 * position), so that a large archive costs 40 bytes per entry rather than an object each.
 */
class RecordColumns {
  count = 0;
  private hashes = new Uint8Array(32 * 1024);
  private ms = new Float64Array(1024);

  /** The leaf index of the first record pushed. */
  readonly base: number;

  constructor(base = 0) {
    this.base = base;
  }

  push(hash: Uint8Array, submittedMs: number): void {
    if (this.count === this.ms.length) {
      const hashes = new Uint8Array(this.hashes.length * 2);
      hashes.set(this.hashes);
      this.hashes = hashes;
      const ms = new Float64Array(this.ms.length * 2);
      ms.set(this.ms);
      this.ms = ms;
    }
    this.hashes.set(hash, 32 * this.count);
    this.ms[this.count++] = submittedMs;
  }

  /**
   * The records of leaves [from, to) grouped by the first `bits` bits of their hash (a counting sort on the
   * prefix), each group sorted by (hash, leaf index); a group's shard is encoded when asked for, not kept.
   */
  byShard(
    from: number,
    to: number,
    bits: number,
  ): { bits: number; counts: Uint32Array; encode(prefix: number): Uint8Array } {
    const { hashes, ms, base } = this;
    from -= base;
    to -= base;
    const prefixOf = (i: number) => hashPrefix(hashes, 32 * i, bits);
    const starts = new Uint32Array(2 ** bits + 1);
    for (let i = from; i < to; i++) starts[prefixOf(i) + 1]!++;
    for (let p = 1; p < starts.length; p++) starts[p]! += starts[p - 1]!;
    const order = new Uint32Array(to - from);
    const next = starts.slice(0, -1);
    for (let i = from; i < to; i++) order[next[prefixOf(i)]!++] = i;
    const compare = (a: number, b: number): number => {
      for (let k = 0; k < 32; k++) {
        const d = hashes[32 * a + k]! - hashes[32 * b + k]!;
        if (d !== 0) return d;
      }
      return a - b;
    };
    for (let p = 0; p + 1 < starts.length; p++)
      if (starts[p + 1]! - starts[p]! > 1) order.subarray(starts[p], starts[p + 1]).sort(compare);
    const counts = new Uint32Array(2 ** bits);
    for (let p = 0; p < counts.length; p++) counts[p] = starts[p + 1]! - starts[p]!;
    return {
      bits,
      counts,
      encode: (prefix) => {
        const group: ShardRecord[] = [];
        for (const i of order.subarray(starts[prefix], starts[prefix + 1])) {
          group.push({ hash: hashes.subarray(32 * i, 32 * i + 32), leafIndex: base + i, submittedMs: ms[i]! });
        }
        return encodeShard(group);
      },
    };
  }
}

/**
 * The first leaf the index segments to check may cover: 0 without a base; else the start of the first segment of
 * the current index head the base has not verified, or the base's size when there is none (a head that cannot be
 * read is reported where the head is checked).
 */
async function firstUnverifiedLeaf(
  reader: ArchiveReader,
  base: VerifiedBase | undefined,
  size: number,
): Promise<number> {
  if (base === undefined) return 0;
  let first = size;
  try {
    const raw = await reader.read(INDEX_HEAD_PATH);
    if (raw === undefined) return first;
    for (const segment of parseIndexHead(fromUtf8(raw, INDEX_HEAD_PATH)).segments) {
      if (!base.segments.has(segmentPath(segment))) first = Math.min(first, segment.from);
    }
  } catch {
    // Reported below.
  }
  return first;
}

/** Whether the bytes of `file` are exactly those produced in `chunks`, neither side held whole. */
async function sameAsChunks(file: AsyncIterable<Uint8Array>, chunks: Iterable<string | Uint8Array>): Promise<boolean> {
  const text = chunks[Symbol.iterator]();
  let expected: Uint8Array = new Uint8Array(0);
  for await (const piece of file) {
    for (let offset = 0; offset < piece.length;) {
      if (expected.length === 0) {
        const next = text.next();
        if (next.done) return false;
        expected = Buffer.from(next.value);
        continue;
      }
      const n = Math.min(expected.length, piece.length - offset);
      if (!equalBytes(piece.subarray(offset, offset + n), expected.subarray(0, n))) return false;
      offset += n;
      expected = expected.subarray(n);
    }
  }
  if (expected.length > 0) return false;
  for (let next = text.next(); !next.done; next = text.next()) if (next.value.length > 0) return false;
  return true;
}
