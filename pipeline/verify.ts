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
//
// verifyArchive is the sequence; each step below is a small check over one running state (verify-state.ts
// VerifyRun) that adds its findings to it.
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
import { verifyDaySignature } from '../core/cose-receipt.ts';
import { LedgerPass, verifyDayFilesDigested } from '../core/day.ts';
import { checkLogLines, logVerifiers } from '../core/log-keys.ts';
import { compareBytes, equalBytes, fromHex, fromUtf8, toHex } from '../core/encoding.ts';
import { TimesealError } from '../core/errors.ts';
import { parseDayStatements, StatementRefusal } from '../core/signed-statement.ts';
import {
  encodeSegmentHeader,
  INDEX_HEAD_PATH,
  MAX_SEGMENT_BITS,
  parseIndexHead,
  segmentBits,
  segmentLayout,
  segmentPath,
  type IndexHead,
  type Segment,
} from '../core/index-segments.ts';
import { indexJsonChunksAsync, SHARD_RECORD_SIZE } from '../core/index-shard.ts';
import { isDate, isIsoTime, type LedgerHeader } from '../core/ledger.ts';
import { calendarTreeOf, dayCommitment } from '../core/ots-path.ts';
import { parseDetached, walkAttestations } from '../core/ots.ts';
import { entryBundlePath, parseEntryBundle, tilePath, TILE_WIDTH } from '../core/tiles.ts';
import type { PublicKeySet } from '../core/day.ts';
import { LedgerTooLargeError, signedTreeSize, streamLedger, type ArchiveReader } from './archive-reader.ts';
import { StreamComparer, VerifyRun, type VerifyOptions, type VerifyReport } from './verify-state.ts';
import { DayTree, LedgerReadFinding, mergedShards, openDayRecords } from './verify-ledgers.ts';
import { checkCosignatures } from './witness.ts';
import { checkTimeStamps } from './tsa-client.ts';
import { messageDigests, nodeSha256 } from '../runtime/node-hash.ts';
import { NoStatementKey, statementPolicy } from '../runtime/statement-policy.ts';

export type { VerifiedBase, VerifyOptions, VerifyReport } from './verify-state.ts';

export async function verifyArchive(
  reader: ArchiveReader,
  keys: PublicKeySet,
  options: VerifyOptions = {},
): Promise<VerifyReport> {
  const run = new VerifyRun(reader, keys, options);
  const days = await readDaysFile(run);
  if (days === undefined) return run.report();
  const counted = { days: days.days.length };
  if (!(await resumeFromBase(run, days))) return run.report(counted);
  if (!(await collectBaseRecords(run, days))) return run.report(counted);
  for (const day of days.days.slice(run.held)) if (!(await checkDay(run, days.origin, day))) break;
  await recheckBaseOts(run);
  const tree = () => run.report({ ...counted, treeSize: run.size, root: run.root });
  if (run.problems.length > 0) return tree();
  const checkpointBehind = await checkLatestCheckpoint(run, days);
  const head = await checkIndexHead(run, days, checkpointBehind);
  await checkIndexSegments(run, days, head);
  await checkIndexJson(run, days);
  await checkWitnessesAndTokens(run, days);
  await checkOtsStatus(run);
  return tree();
}

/** days.json, parsed; undefined when it is missing (a problem only when a checkpoint exists) or unreadable. */
export async function readDaysFile(run: VerifyRun): Promise<DaysFile | undefined> {
  const raw = await run.reader.read(DAYS_PATH);
  if (raw === undefined) {
    const checkpoint = await run.reader.read(CHECKPOINT_PATH);
    if (checkpoint !== undefined) run.problems.push(`${DAYS_PATH}: missing, but a checkpoint exists`);
    return undefined;
  }
  run.filesChecked++;
  try {
    return parseDays(fromUtf8(raw, DAYS_PATH));
  } catch (err) {
    run.problems.push((err as Error).message);
    return undefined;
  }
}

/**
 * From a verified base: its days must be days.json's first ones, and the tree is taken up at the base's right
 * edge (its size, root and last day; each level's partial tile and the partial entry bundle, read from the
 * archive). False when it cannot be.
 */
export async function resumeFromBase(run: VerifyRun, days: DaysFile): Promise<boolean> {
  const base = run.options.from;
  if (base === undefined || run.held === 0) return true;
  const differs = base.days.findIndex((d, i) => JSON.stringify(d) !== JSON.stringify(days.days[i]));
  if (differs >= 0) {
    run.problems.push(`${DAYS_PATH}: day ${base.days[differs]!.date} is not the one verified before`);
    return false;
  }
  const last = base.days.at(-1)!;
  run.size = last.treeSize;
  run.root = last.root;
  run.previous = { date: last.date, sha256: last.sha256 };
  for (let level = 0, nodes = run.size; nodes > 0; level++, nodes = Math.floor(nodes / TILE_WIDTH)) {
    if (nodes % TILE_WIDTH === 0) continue;
    const index = Math.floor(nodes / TILE_WIDTH);
    const tile = await run.read(tilePath(level, index, nodes % TILE_WIDTH));
    if (tile === undefined) return false;
    run.tiles.set(`${level}/${index}`, tile);
  }
  const partial = run.size % TILE_WIDTH;
  if (partial === 0) return true;
  const rel = entryBundlePath(Math.floor(run.size / TILE_WIDTH), partial);
  const bundle = await run.read(rel);
  if (bundle === undefined) return false;
  try {
    run.carried = parseEntryBundle(bundle, partial);
  } catch (err) {
    run.problems.push(`${rel}: ${(err as Error).message}`);
    return false;
  }
  return true;
}

/**
 * The records the index segments are checked against start at the first leaf of the first segment not verified
 * before: a merged segment covers days of the base, whose ledgers are read again for their records (when the
 * segment is checked). False when one of them is missing.
 */
export async function collectBaseRecords(run: VerifyRun, days: DaysFile): Promise<boolean> {
  run.recordsFrom = await firstUnverifiedLeaf(run);
  const from = run.recordsFrom;
  if (from >= run.size) return true;
  for (const day of days.days.slice(0, run.held)) {
    if (day.treeSize <= from) continue;
    const rel = ledgerPath(day.date);
    const body = await run.reader.stream(rel);
    if (body === undefined) {
      run.problems.push(`${rel}: missing`);
      return false;
    }
    run.filesChecked++;
    // Its first piece is enough to know it is there; leaving the loop releases it.
    for await (const piece of body) if (piece) break;
  }
  return true;
}

/**
 * The first leaf the index segments to check may cover: 0 without a base; else the start of the first segment of
 * the current index head the base has not verified, or the base's size when there is none (a head that cannot be
 * read is reported where the head is checked).
 */
async function firstUnverifiedLeaf(run: VerifyRun): Promise<number> {
  const base = run.options.from;
  if (base === undefined) return 0;
  let first = run.size;
  try {
    const raw = await run.reader.read(INDEX_HEAD_PATH);
    if (raw === undefined) return first;
    for (const segment of parseIndexHead(fromUtf8(raw, INDEX_HEAD_PATH)).segments) {
      if (!base.segments.has(segmentPath(segment))) first = Math.min(first, segment.from);
    }
  } catch {
    // Reported by checkIndexHead.
  }
  return first;
}

/**
 * One day after the base: its signed files, its record in days.json, its COSE receipt signatures and SCITT
 * statements, its part of the tree and of the entry bundles, its OpenTimestamps proof; then the running tree is
 * extended by it. The ledger is read once, as a stream (never held): hashed, parsed, and its entries handed to
 * the tree and the statements as they pass; what they found is reported once the day's signatures hold. False
 * when the day cannot be read far enough to go on (the days after it are not checked).
 */
export async function checkDay(run: VerifyRun, origin: string, day: DayRecord): Promise<boolean> {
  const signed = await readSignedDay(run, origin, day);
  if (signed === undefined) return false;
  await checkReceiptSignatures(run, origin, day);
  const { head: ledger, tree, statements } = signed;
  const expect = (what: string, want: unknown, got: unknown) => expectSame(run, day.date, what, want, got);
  expect('ledger sha256 (days.json)', day.sha256, signed.sha256);
  expect('origin (days.json)', origin, ledger.origin);
  expect('first_index', run.size, ledger.firstIndex);
  expect('first_index (days.json)', day.firstIndex, ledger.firstIndex);
  expect('tree_size (days.json)', day.treeSize, ledger.treeSize);
  expect('previous day link', run.previous, ledger.previous);
  statements?.report(run);
  const extended = await tree.finish();
  run.filesChecked += tree.checked;
  run.problems.push(...tree.tileFindings.map((f) => f.text), ...tree.bundleFindings);
  const root = toHex(extended.root);
  expect('root recomputed from the entries', ledger.root, root);
  expect('root (days.json)', day.root, root);
  await checkOts(run, day.date, ledger.root, signed.sha256);
  run.size = extended.size;
  run.root = root;
  run.previous = { date: day.date, sha256: signed.sha256 };
  return true;
}

/** A mismatch between what a day's record or the running tree says and what its ledger says, both printed. */
function expectSame(run: VerifyRun, date: string, what: string, want: unknown, got: unknown): void {
  if (JSON.stringify(want) !== JSON.stringify(got))
    run.problems.push(`${date}: ${what}: expected ${JSON.stringify(want)} != got ${JSON.stringify(got)}`);
}

/**
 * A day's files, checked as one (core/day.ts verifyDayFilesDigested): the small files first, since the day's
 * checkpoint, signed, says how many entries the ledger holds (its tree size less the tree before it), and so how
 * large the ledger can be (archive-reader.ts ledgerStreamCap) before a byte of it is read; then the ledger as it
 * streams in, its entries going to the tree (DayTree) and the statements as they pass. Undefined when one is
 * missing or does not verify (and then nothing the pass found is reported).
 */
async function readSignedDay(
  run: VerifyRun,
  origin: string,
  day: DayRecord,
): Promise<{ head: LedgerHeader; sha256: string; tree: DayTree; statements: DayStatements | undefined } | undefined> {
  const [ecdsaSignature, mldsaSignature, signaturesMeta, checkpoint] = await Promise.all([
    run.read(ecdsaSignaturePath(day.date)),
    run.read(mldsaSignaturePath(day.date)),
    run.read(signaturesMetaPath(day.date)),
    run.read(dayCheckpointPath(day.date)),
  ]);
  if (!ecdsaSignature || !mldsaSignature || !signaturesMeta || !checkpoint) return undefined;
  let entries: number;
  try {
    entries = signedTreeSize(checkpoint, origin, run.keys) - run.size;
    if (entries < 0)
      throw new Error(`tree size ${entries + run.size} is smaller than the ${run.size} leaves before the day`);
  } catch (err) {
    run.problems.push(`${day.date}: ${dayCheckpointPath(day.date)}: ${(err as Error).message}`);
    return undefined;
  }
  const rel = ledgerPath(day.date);
  const checked = run.filesChecked;
  const statements = await DayStatements.read(run, origin, day.date);
  const tree = new DayTree(run);
  const pass = new LedgerPass(run.keys.mldsa, messageDigests, {
    onHeader: (_head, count) => tree.begin(count),
    onEntry: (hashes, at) => {
      tree.add(hashes, at);
      statements?.pass(hashes, at);
    },
  });
  let found: boolean;
  try {
    found = await streamLedger(run.reader, rel, origin, entries, pass, () => tree.settle());
  } catch (err) {
    if (!(err instanceof LedgerTooLargeError)) throw err;
    run.filesChecked = checked;
    run.problems.push(err.message);
    return undefined;
  }
  if (!found) {
    run.filesChecked = checked;
    run.problems.push(`${rel}: missing`);
    return undefined;
  }
  run.filesChecked = checked + 1;
  try {
    const verified = verifyDayFilesDigested(
      day.date,
      { ecdsaSignature, mldsaSignature, signaturesMeta, checkpoint },
      pass.digested(),
      run.keys,
      { checkpointLines: (text, o) => checkLogLines(text, logVerifiers(o, run.keys)) },
    );
    if (statements !== undefined) run.filesChecked++;
    return { head: verified.ledger, sha256: verified.sha256, tree, statements };
  } catch (err) {
    run.problems.push(`${day.date}: ${(err as Error).message}`);
    return undefined;
  }
}

/** A day's COSE receipt signatures (docs/FORMAT.md §11), each over the day's root with the published receipt
 * keys. Optional: days published before the archive had receipt keys have none. */
export async function checkReceiptSignatures(run: VerifyRun, origin: string, day: DayRecord): Promise<void> {
  const keys = run.options.receiptKeys ?? [];
  for (const name of RECEIPT_KEY_NAMES) {
    const rel = receiptSignaturePath(day.date, name);
    const signature = await run.readOptional(rel);
    if (signature === undefined) continue;
    try {
      if (keys.length === 0) throw new TimesealError('not-found', 'no receipt keys are published to check it with');
      verifyDaySignature(signature, { origin, date: day.date, root: fromHex(day.root) }, keys);
    } catch (err) {
      run.problems.push(`${rel}: ${(err as Error).message}`);
    }
  }
}

/**
 * The day's SCITT statements (docs/FORMAT.md §12), when it has any: each in its form on the log, its issuer's
 * signature verifying as the registration policy checked it (runtime/statement-policy.ts), and each one's entry
 * a leaf of the day. The file (small: MAX_SMALL_FILE) is read and judged before the ledger; the entries are
 * looked for as the sorted ledger passes (`pass`), and `report` gives the findings in the statements' order.
 */
class DayStatements {
  private readonly rel: string;
  /** Per statement, in order: its entry, whether the ledger has it, its policy finding. */
  private readonly items: { entry: Uint8Array; found: boolean; refusal?: string }[] = [];
  /** The items by entry, sorted, and the next one the ledger has not passed. */
  private readonly sorted: { entry: Uint8Array; found: boolean }[];
  private next = 0;
  /** A failure that ended the reading of the file (reported after the items read before it). */
  private failure: string | undefined;
  private unchecked = 0;

  private constructor(rel: string, statements: Uint8Array, policy: ReturnType<typeof statementPolicy>) {
    this.rel = rel;
    try {
      for (const s of parseDayStatements(statements, nodeSha256)) {
        const item: (typeof this.items)[number] = { entry: s.entry, found: false };
        try {
          policy.check(s.bytes);
        } catch (err) {
          if (err instanceof NoStatementKey) this.unchecked++;
          else if (err instanceof StatementRefusal) item.refusal = err.detail;
          else throw err;
        }
        this.items.push(item);
      }
    } catch (err) {
      this.failure = (err as Error).message;
    }
    this.sorted = [...this.items].sort((a, b) => compareBytes(a.entry, b.entry));
  }

  /** The day's statements, or undefined when it has none (the file is counted once the day verifies). */
  static async read(run: VerifyRun, origin: string, date: string): Promise<DayStatements | undefined> {
    const rel = statementsPath(date);
    const statements = await run.reader.read(rel);
    if (statements === undefined) return undefined;
    const policy = statementPolicy(run.options.issuerKeys ?? new Map(), origin, run.options.receiptKeys ?? []);
    return new DayStatements(rel, statements, policy);
  }

  /** The ledger's next entry (entries come sorted, without repeats). */
  pass(hashes: Uint8Array, at: number): void {
    const { sorted } = this;
    const entry = hashes.subarray(at, at + 32);
    while (this.next < sorted.length) {
      const c = compareBytes(sorted[this.next]!.entry, entry);
      if (c > 0) return;
      if (c === 0) sorted[this.next]!.found = true;
      this.next++;
    }
  }

  report(run: VerifyRun): void {
    const { rel } = this;
    for (const item of this.items) {
      if (item.refusal !== undefined)
        run.problems.push(`${rel}: the statement of entry ${toHex(item.entry)}: ${item.refusal}`);
      if (!item.found)
        run.problems.push(`${rel}: the statement of entry ${toHex(item.entry)} is not in the day's ledger`);
    }
    if (this.failure !== undefined) run.problems.push(`${rel}: ${this.failure}`);
    if (this.unchecked > 0)
      run.notes.push(
        `${rel}: the signature of ${this.unchecked} statement${this.unchecked === 1 ? '' : 's'} not checked: no x5chain and no key for its iss (SCITT_ISSUER_KEYS)`,
      );
  }
}

/**
 * A day's OpenTimestamps proof, when anchored: it must start at the ledger's SHA-256 and commit to
 * C = SHA-256(R || F) (docs/FORMAT.md §7). Its Bitcoin attestations are checked against block headers by
 * `timeseal ots verify`, which needs a header source.
 */
export async function checkOts(run: VerifyRun, date: string, rootHex: string, shaHex: string): Promise<void> {
  const ots = await run.readOptional(ledgerOtsPath(date));
  if (ots === undefined) return;
  try {
    const root = fromHex(rootHex);
    const sha = fromHex(shaHex);
    const calendar = calendarTreeOf(parseDetached(ots), root, sha);
    if (!equalBytes(calendar.message, dayCommitment(root, sha)))
      throw new Error('does not reach the day commitment SHA-256(R || F)');
    if (walkAttestations(calendar).length === 0) throw new Error('holds no attestation');
  } catch (err) {
    run.problems.push(`${ledgerOtsPath(date)}: ${(err as Error).message}`);
  }
}

/** The proofs of the base's days named as possibly changed since it was verified (VerifiedBase.recheckOts). */
async function recheckBaseOts(run: VerifyRun): Promise<void> {
  const base = run.options.from;
  for (const day of base?.days ?? [])
    if (base!.recheckOts.has(day.date)) await checkOts(run, day.date, day.root, day.sha256);
}

/**
 * The latest checkpoint follows days.json (written after it, after the index head). A build stopped between its
 * commit point and its end leaves it behind: the checkpoint of an earlier published day, or none before the first
 * one. That is a state readers handle ("being updated") and the next build completes, so it is a note, not a
 * problem; any other checkpoint is a problem. True when the checkpoint is behind.
 */
export async function checkLatestCheckpoint(run: VerifyRun, days: DaysFile): Promise<boolean> {
  const last = days.days.at(-1);
  if (!last) return false;
  const { reader } = run;
  const latest = await run.readOptional(CHECKPOINT_PATH);
  const ownCheckpoint = await reader.read(dayCheckpointPath(last.date));
  // The latest checkpoint is the last day's followed by the witnesses' cosignatures of it, when there are.
  const dayCheckpoint =
    ownCheckpoint && withCosignatures(ownCheckpoint, await reader.read(cosignaturesPath(last.date)));
  if (latest !== undefined && (dayCheckpoint === undefined || equalBytes(latest, dayCheckpoint))) return false;
  let earlier: string | undefined;
  for (const day of days.days.slice(0, -1)) {
    const candidate = latest && (await reader.read(dayCheckpointPath(day.date)));
    if (candidate && equalBytes(candidate, latest)) earlier = day.date;
  }
  if (latest !== undefined && earlier === undefined) {
    run.problems.push(`${CHECKPOINT_PATH}: is not the checkpoint of the last day ${last.date}`);
    return false;
  }
  run.notes.push(
    `${CHECKPOINT_PATH}: ${latest === undefined ? 'missing' : `the checkpoint of ${earlier}`}, not yet of the last published day ${last.date} (a build stopped after its commit point; the next \`timeseal ledger build\` completes it)`,
  );
  return true;
}

/**
 * The index head must name segments that cover the published leaves exactly, on day boundaries. While the latest
 * checkpoint is behind (checkLatestCheckpoint), the head may be behind too: missing, or covering the days up to
 * one of them — a note. Returns the head when it is sound, for checkIndexSegments.
 */
export async function checkIndexHead(
  run: VerifyRun,
  days: DaysFile,
  checkpointBehind: boolean,
): Promise<IndexHead | undefined> {
  const raw = checkpointBehind ? await run.readOptional(INDEX_HEAD_PATH) : await run.read(INDEX_HEAD_PATH);
  if (raw === undefined) {
    if (checkpointBehind && run.size > 0)
      run.notes.push(`${INDEX_HEAD_PATH}: missing, not yet written for the published days (the next build writes it)`);
    return undefined;
  }
  try {
    const head = parseIndexHead(fromUtf8(raw, INDEX_HEAD_PATH));
    const boundaries = new Set([0, ...days.days.map((d) => d.treeSize)]);
    if (head.treeSize < run.size && checkpointBehind && boundaries.has(head.treeSize)) {
      run.notes.push(
        `${INDEX_HEAD_PATH}: covers ${head.treeSize} of the ${run.size} published leaves (the next build indexes the rest)`,
      );
    } else if (head.treeSize !== run.size)
      throw new Error(`tree_size ${head.treeSize} != the published tree size ${run.size}`);
    for (const segment of head.segments) {
      if (!boundaries.has(segment.from) || !boundaries.has(segment.to))
        throw new Error(`segment ${segment.from}-${segment.to} does not begin and end on day boundaries`);
    }
    return head;
  } catch (err) {
    run.problems.push(`${INDEX_HEAD_PATH}: ${(err as Error).message}`);
    return undefined;
  }
}

/** Every segment file the head names and the base did not verify: exactly its fan-out table and the records of
 * its leaves, shard by shard, as the ledgers give them (read again as streams and merged: verify-ledgers.ts). */
export async function checkIndexSegments(run: VerifyRun, days: DaysFile, head: IndexHead | undefined): Promise<void> {
  for (const segment of head?.segments ?? []) {
    const rel = segmentPath(segment);
    if (run.options.from?.segments.has(rel)) continue;
    if (segment.from < run.recordsFrom) {
      run.problems.push(`${rel}: not among the index segments verified before, and starts before ${run.recordsFrom}`);
      continue;
    }
    // Its size is known from the head (the fan-out table at most MAX_SEGMENT_BITS wide, a record an entry): it is
    // compared as the ledgers are read again, so it gets time in proportion (archive-reader.ts STREAM_MIN_RATE).
    const largest = segmentLayout(MAX_SEGMENT_BITS).recordsOffset + SHARD_RECORD_SIZE * (segment.to - segment.from + 1);
    const published = await run.reader.stream(rel, largest);
    if (published === undefined) {
      run.problems.push(`${rel}: missing`);
      continue;
    }
    run.filesChecked++;
    const file = new StreamComparer(published);
    try {
      if (!(await sameSegment(run, days, segment, file)))
        run.problems.push(`${rel}: index segment differs from the ledgers`);
    } catch (err) {
      if (!(err instanceof LedgerReadFinding)) throw err;
      run.problems.push(`${rel}: ${err.message}`);
    } finally {
      await file.close();
    }
  }
}

/** Whether `file` is the segment the days' ledgers give: its header (the fan-out table, known once every shard is
 * made) and then its shards. */
async function sameSegment(run: VerifyRun, days: DaysFile, segment: Segment, file: StreamComparer): Promise<boolean> {
  const bits = segmentBits(segment);
  const header = await file.take(segmentLayout(bits).recordsOffset);
  const counts = new Uint32Array(2 ** bits);
  let prefix = 0;
  const records = await openDayRecords(run, days.origin, days.days, segment.from, segment.to);
  for await (const shard of mergedShards(records, bits)) {
    counts[prefix++] = shard.length / SHARD_RECORD_SIZE;
    if (!(await file.expect(shard))) return false;
  }
  return (await file.end()) && equalBytes(header, encodeSegmentHeader(counts));
}

/**
 * index-sha256.json is no archive file any more (a server makes it on request, a static deployment with
 * `timeseal index-json`); where it is offered, it must be exactly what the ledgers give. Compared as it streams
 * in (at 10,000,000 hashes it is 1.7 GB), against the text made from the ledgers read again and merged. Checked
 * only when every record is to be checked (no base, or a segment from the first leaf not verified before).
 */
export async function checkIndexJson(run: VerifyRun, days: DaysFile): Promise<void> {
  if (run.size === 0 || run.recordsFrom !== 0) return;
  const indexJson = await run.reader.stream(INDEX_JSON_PATH);
  if (indexJson === undefined) return;
  run.filesChecked++;
  const bits = segmentBits({ from: 0, to: run.size });
  const shards = async function* () {
    yield* mergedShards(await openDayRecords(run, days.origin, days.days, 0, run.size), bits);
  };
  const file = new StreamComparer(indexJson);
  try {
    let same = true;
    for await (const chunk of indexJsonChunksAsync(shards)) if (!(same = await file.expect(Buffer.from(chunk)))) break;
    if (!same || !(await file.end())) run.problems.push(`${INDEX_JSON_PATH}: differs from the ledgers`);
  } catch (err) {
    if (!(err instanceof LedgerReadFinding)) throw err;
    run.problems.push(`${INDEX_JSON_PATH}: ${err.message}`);
  } finally {
    await file.close();
  }
}

/**
 * Witness cosignatures: every D.cosignatures judged with D.checkpoint as every reader judges them
 * (core/witness-policy.ts judgeCheckpoint), with the witnesses of keys/witnesses and keys/witnesses.retired; and
 * RFC 3161 tokens, each for its ledger's digest, signed by a time-stamping certificate (and its chain). From a
 * base: the days after it and its last day (whose cosignatures and tokens may have come since).
 */
async function checkWitnessesAndTokens(run: VerifyRun, days: DaysFile): Promise<void> {
  const { options } = run;
  const recent = days.days.slice(Math.max(0, run.held - 1));
  const cosigned = await checkCosignatures(run.reader, options.witnessPolicy, recent, options.retiredWitnesses);
  const stamped = await checkTimeStamps(run.reader, options.tsaCaPem, recent);
  for (const found of [cosigned, stamped]) {
    run.problems.push(...found.problems);
    run.notes.push(...found.notes);
    run.filesChecked += found.checked;
  }
}

/**
 * ots-status.json, re-derived by every build after its days: a build killed after its last checkpoint but before
 * this file leaves it missing, and the next run writes it (crash.test.ts hit that window) — a note. When there,
 * its fields must have their form.
 */
export async function checkOtsStatus(run: VerifyRun): Promise<void> {
  const status = await run.readOptional(OTS_STATUS_PATH);
  if (status === undefined) {
    run.notes.push(`${OTS_STATUS_PATH}: missing, not yet written for the published days (the next build writes it)`);
    return;
  }
  try {
    const s = JSON.parse(fromUtf8(status)) as Record<string, unknown>;
    const okDate = s.latest_ots_ok === '' || (typeof s.latest_ots_ok === 'string' && isDate(s.latest_ots_ok));
    if (
      !okDate ||
      typeof s.last_update !== 'string' ||
      !isIsoTime(s.last_update) ||
      !Number.isSafeInteger(s.queue_size)
    )
      run.problems.push(`${OTS_STATUS_PATH}: fields have the wrong form`);
  } catch {
    run.problems.push(`${OTS_STATUS_PATH}: not valid JSON`);
  }
}
