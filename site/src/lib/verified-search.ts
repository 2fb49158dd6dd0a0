// Search that the browser verifies instead of trusting (site/README.md; docs/FORMAT.md §4, §6, §7; docs/API.md):
//   1. fetch the latest signed checkpoint and both public keys, and verify the checkpoint's ECDSA P-256 and
//      ML-DSA-65 lines (core/checkpoint.ts, core/note.ts);
//   2. fetch the index head (index/segments.json) and, from each segment file it names below the verified tree
//      size, the one shard that can hold the hash: two byte ranges, its fan-out entries and then its records
//      (docs/FORMAT.md §6: a missing segment file means one merged away since the head was read, so the head
//      is read again once); the first record (oldest leaf) gives the first date, the UTC date of its
//      submission time;
//   3. fetch only the tiles the inclusion proof needs (core/tiles.ts), rebuild the RFC 6962 inclusion proof
//      and check it against the signed root;
//   4. read the OTS status and the block information of the day's month (block-info/YYYY-MM.json, or the whole
//      block_info.json of an archive written before the month files; failures keep the defaults).
// "quantum shield" means the ML-DSA-65 line verified here, "dual signature" that both did. Where the archive
// publishes them (keys/ed25519.vkey, keys/mldsa44.vkey, keys/witnesses), the checkpoint's Ed25519 and ML-DSA-44
// lines and the witnesses' cosignature lines are checked too, and the result says which of them vouched
// (keys/witnesses is asked for only when the checkpoint carries a line that is not the log's own: an archive
// without witnesses is not asked for it). index-sha256.json is never downloaded.
import {
  BLOCK_INFO_PATH,
  blockInfoMonthPath,
  CHECKPOINT_PATH,
  OTS_STATUS_PATH,
  ledgerPath,
} from '../../../core/archive-paths.ts';
import { parseCheckpoint, verifyCheckpoint, type ParsedCheckpoint } from '../../../core/checkpoint.ts';
import { fromHex } from '../../../core/encoding.ts';
import {
  INDEX_HEAD_PATH,
  parseIndexHead,
  recordBytes,
  segmentBits,
  segmentPath,
  shardOf,
  shardRecordRange,
  tableEntryOffset,
  type Segment,
} from '../../../core/index-segments.ts';
import { checkShard, lookupShard, type ShardRecord } from '../../../core/index-shard.ts';
import { utcDate } from '../../../core/ledger.ts';
import { inclusionProof, leafHash, verifyInclusion } from '../../../core/merkle.ts';
import { ecdsaNoteVerifier, mldsaNoteVerifier, parseNote, type NoteVerifier } from '../../../core/note.ts';
import { ecdsaPublicKeyFromPem } from '../../../core/sig.ts';
import { tileHashReader, tilePath, tilesForInclusion } from '../../../core/tiles.ts';
import { archiveUrl } from './archive-url.ts';
import { SearchUnavailableError, VerificationFailedError, type OtsState, type SearchResult } from './search-result.ts';

/** Where the keys are served (docs/API.md, "Static files"; the archive's files: lib/archive-url.ts). */
export const ECDSA_KEY_URL = '/keys/public.pem';
export const MLDSA_KEY_URL = '/keys/dilithium_public.key';
export const ED25519_VKEY_URL = '/keys/ed25519.vkey';
export const MLDSA44_VKEY_URL = '/keys/mldsa44.vkey';
/** The witness policy, c2sp.org/tlog-policy (or the older `quorum <N>` form; pipeline/witness.ts writes it). */
export const WITNESSES_URL = '/keys/witnesses';

/** Contract: like `fetch(url, init)` for a same-origin URL (init carries at most a Range header); may reject on
 * network failure. */
export type Fetcher = (url: string, init?: { headers: Record<string, string> }) => Promise<Response>;

export { SearchUnavailableError, VerificationFailedError, type OtsState, type SearchResult } from './search-result.ts';

const HASH_HEX = /^[0-9a-f]{64}$/;

class ByteCountingFetcher {
  bytes = 0;
  private readonly fetcher: Fetcher;
  constructor(fetcher: Fetcher) {
    this.fetcher = fetcher;
  }

  /** The body, or null for a 404; throws SearchUnavailableError for anything else. */
  async get(url: string): Promise<Uint8Array | null> {
    let res: Response;
    try {
      res = await this.fetcher(url);
    } catch (err) {
      throw new SearchUnavailableError(`${url}: network error`, { cause: err });
    }
    if (res.status === 404) return null;
    if (!res.ok) throw new SearchUnavailableError(`${url}: ${res.status} ${res.statusText}`);
    const body = new Uint8Array(await res.arrayBuffer());
    this.bytes += body.length;
    return body;
  }

  async require(url: string): Promise<Uint8Array> {
    const body = await this.get(url);
    if (body === null) throw new SearchUnavailableError(`${url}: 404 Not Found`);
    return body;
  }

  /**
   * Bytes [offset, offset + length) of a file, or null for a 404: a 206 answer must be exactly that range; a
   * server that ignores Range (200) sends the whole file, which is cut here. A file shorter than the range is
   * a broken archive, not a network problem.
   */
  async range(url: string, offset: number, length: number): Promise<Uint8Array | null> {
    let res: Response;
    try {
      res = await this.fetcher(url, { headers: { Range: `bytes=${offset}-${offset + length - 1}` } });
    } catch (err) {
      throw new SearchUnavailableError(`${url}: network error`, { cause: err });
    }
    if (res.status === 404) return null;
    if (res.status === 416) throw new VerificationFailedError(`${url}: shorter than its index says`);
    if (!res.ok) throw new SearchUnavailableError(`${url}: ${res.status} ${res.statusText}`);
    const body = new Uint8Array(await res.arrayBuffer());
    this.bytes += body.length;
    const part = res.status === 206 ? body : body.subarray(offset, offset + length);
    if (part.length !== length) throw new VerificationFailedError(`${url}: shorter than its index says`);
    return part;
  }
}

export interface VerifiedCheckpoint {
  checkpoint: ParsedCheckpoint;
  ecdsaVerified: boolean;
  mldsaVerified: boolean;
}

/** Verifies each signature line on its own, so the result says which algorithms hold; at least one must. */
export function verifyCheckpointDual(note: Uint8Array, ecdsaPem: string, mldsaKey: Uint8Array): VerifiedCheckpoint {
  let origin: string;
  try {
    origin = parseCheckpoint(parseNote(note).text).origin;
  } catch (err) {
    throw new VerificationFailedError('checkpoint: not a signed checkpoint', { cause: err });
  }
  const check = (make: () => NoteVerifier): ParsedCheckpoint | null => {
    try {
      return verifyCheckpoint(note, [make()], { origin });
    } catch {
      return null;
    }
  };
  const byEcdsa = check(() => ecdsaNoteVerifier(origin, ecdsaPublicKeyFromPem(ecdsaPem)));
  const byMldsa = check(() => mldsaNoteVerifier(origin, mldsaKey));
  const checkpoint = byMldsa ?? byEcdsa;
  if (!checkpoint)
    throw new VerificationFailedError('checkpoint: neither the ECDSA P-256 nor the ML-DSA-65 signature verifies');
  return { checkpoint, ecdsaVerified: byEcdsa !== null, mldsaVerified: byMldsa !== null };
}

/** Anchoring is verified when latest_ots_ok is on or after the ledger date, or block info has confirmations for it. */
export function otsStateFor(
  date: string,
  latestOtsOk: unknown,
  block: { confirmations?: unknown; block_height?: unknown } | undefined,
): OtsState {
  if (typeof latestOtsOk === 'string' && latestOtsOk !== '' && latestOtsOk >= date) return 'verified';
  if (block && typeof block.confirmations === 'number') return 'verified';
  return 'pending';
}

function decodeJson(bytes: Uint8Array | null): unknown {
  return bytes === null ? null : JSON.parse(new TextDecoder().decode(bytes));
}

/**
 * Every index record of `hash` below the verified tree size, oldest leaf first. Records past that size belong
 * to a day being published right now; the checkpoint does not cover them. An index that covers less than the
 * checkpoint, or a segment still missing after the head was read again, is reported, never taken as "not found".
 */
async function indexRecords(net: ByteCountingFetcher, hash: string, size: number): Promise<ShardRecord[]> {
  for (let attempt = 0; ; attempt++) {
    const raw = await net.require(archiveUrl(INDEX_HEAD_PATH));
    const head = parseIndexHead(new TextDecoder().decode(raw));
    if (head.treeSize < size) {
      throw new SearchUnavailableError(
        `the index covers ${head.treeSize} leaves, the checkpoint ${size}: the archive is being updated; try again in a minute`,
      );
    }
    const live = head.segments.filter((s) => s.from < size);
    const shards = await Promise.all(live.map((s) => segmentShard(net, s, hash)));
    if (shards.every((b) => b !== null))
      return shards.flatMap((b) => lookupShard(b!, hash)).filter((r) => r.leafIndex < size);
    if (attempt > 0) throw new SearchUnavailableError(`${INDEX_HEAD_PATH} names an index segment that is missing`);
  }
}

/** The checked records of the shard of `segment` that can hold `hash`, or null when the segment file is missing. */
async function segmentShard(net: ByteCountingFetcher, segment: Segment, hash: string): Promise<Uint8Array | null> {
  const url = archiveUrl(segmentPath(segment));
  const prefix = shardOf(segment, hash);
  const entries = await net.range(url, tableEntryOffset(prefix), 8);
  if (entries === null) return null;
  try {
    const { offset, length } = recordBytes(segmentBits(segment), shardRecordRange(segment, entries));
    const records = length === 0 ? new Uint8Array(0) : await net.range(url, offset, length);
    if (records === null) return null;
    checkShard(records, { value: prefix, bits: segmentBits(segment) });
    return records;
  } catch (err) {
    if (err instanceof SearchUnavailableError || err instanceof VerificationFailedError) throw err;
    throw new VerificationFailedError(`${url}: ${(err as Error).message}`, { cause: err });
  }
}

/** The answer for a hash that is in no published ledger of a tree of `treeSize` leaves (nothing verified). */
export function notFoundResult(hash: string, treeSize: number, bytesFetched: number): SearchResult {
  return {
    found: false,
    hash,
    date: null,
    timestamp: null,
    ledgerUrl: null,
    otsStatus: 'pending',
    blockHeight: null,
    confirmations: null,
    quantumShield: false,
    dualSignature: false,
    ecdsaVerified: false,
    inclusionVerified: false,
    leafIndex: null,
    treeSize,
    bytesFetched,
  };
}

/** Searches `hashInput` (64 hex characters, either case) in the archive and verifies what it finds. */
export async function verifiedSearch(
  hashInput: string,
  fetcher: Fetcher = (url, init) => fetch(url, { credentials: 'include', ...init }),
  options: { otherLines?: boolean } = {},
): Promise<SearchResult> {
  const hash = hashInput.trim().toLowerCase();
  if (!HASH_HEX.test(hash)) throw new RangeError('hash: expected 64 hexadecimal characters');
  const net = new ByteCountingFetcher(fetcher);
  // The showcase on the home page (LiveProof) checks the ECDSA and ML-DSA-65 lines only (otherLines: false), so
  // that it loads neither the vkeys nor the Ed25519 / ML-DSA-44 code (a chunk of its own, loaded on demand).
  const other = options.otherLines ?? true;
  const [note, pem, mldsaKey, edVkey, mlVkey] = await Promise.all([
    net.get(archiveUrl(CHECKPOINT_PATH)),
    net.require(ECDSA_KEY_URL),
    net.require(MLDSA_KEY_URL),
    other ? net.get(ED25519_VKEY_URL) : null,
    other ? net.get(MLDSA44_VKEY_URL) : null,
  ]);
  const notFound = (treeSize: number, flags: Partial<SearchResult> = {}): SearchResult => ({
    ...notFoundResult(hash, treeSize, net.bytes),
    ...flags,
  });
  // No checkpoint yet: nothing has been published, so nothing can be found.
  if (note === null) return notFound(0);

  const { checkpoint, ecdsaVerified, mldsaVerified } = verifyCheckpointDual(
    note,
    new TextDecoder().decode(pem),
    mldsaKey,
  );
  const size = checkpoint.size;
  const signers = [...(ecdsaVerified ? ['ECDSA P-256'] : []), ...(mldsaVerified ? ['ML-DSA-65'] : [])];
  // The witness policy exists only where witnesses are configured, and then the latest checkpoint carries their
  // cosignature lines, named by the witnesses (the log's own lines bear its origin): it is asked for only then,
  // so an archive without witnesses is never asked for a file it does not have. A deliberate difference from the
  // other readers: a checkpoint that no witness has cosigned yet shows no witness verdict here (they would judge
  // it "no witness cosigned, quorum not met").
  const witnessPolicy =
    other && parseNote(note).signatures.some((l) => l.name !== checkpoint.origin) ? await net.get(WITNESSES_URL) : null;
  const flags = {
    quantumShield: mldsaVerified,
    dualSignature: mldsaVerified && ecdsaVerified,
    ecdsaVerified,
    ...((edVkey ?? mlVkey ?? witnessPolicy)
      ? await (
          await import('./checkpoint-lines.ts')
        ).otherLines(note, checkpoint.origin, signers, edVkey, mlVkey, witnessPolicy)
      : { signers }),
  };
  if (size === 0) return notFound(0, flags);

  const records = await indexRecords(net, hash, size);
  const first = records[0];
  if (!first) return { ...notFound(size, flags), bytesFetched: net.bytes };

  const tiles = tilesForInclusion(first.leafIndex, size);
  const bodies = await Promise.all(tiles.map((t) => net.require(archiveUrl(tilePath(t.level, t.index, t.width)))));
  const byKey = new Map(tiles.map((t, i) => [`${t.level}/${t.index}/${t.width}`, bodies[i]!]));
  const reader = tileHashReader(size, (level, index, width) => {
    const tile = byKey.get(`${level}/${index}/${width}`);
    if (!tile) throw new VerificationFailedError(`tile ${tilePath(level, index, width)} was not fetched`);
    return tile;
  });
  try {
    const proof = inclusionProof(first.leafIndex, size, reader);
    verifyInclusion(leafHash(fromHex(hash)), first.leafIndex, size, proof, checkpoint.root);
  } catch (err) {
    throw new VerificationFailedError(
      `inclusion proof of ${hash} at leaf ${first.leafIndex}: ${(err as Error).message}`,
      { cause: err },
    );
  }

  const date = utcDate(first.submittedMs);
  // The day's month of block information (block-info/YYYY-MM.json), or the whole block_info.json of an archive
  // written before the month files.
  const [ots, blocks] = await Promise.all([
    net
      .get(archiveUrl(OTS_STATUS_PATH))
      .then(decodeJson)
      .catch((err) => void console.warn('ots_status.json', err)),
    net
      .get(archiveUrl(blockInfoMonthPath(date.slice(0, 7))))
      .then((b) => b ?? net.get(archiveUrl(BLOCK_INFO_PATH)))
      .then(decodeJson)
      .catch((err) => void console.warn('block info', err)),
  ]);
  const latestOtsOk = (ots as { latest_ots_ok?: unknown } | null | undefined)?.latest_ots_ok;
  const statusWrittenAt = (ots as { last_update?: unknown } | null | undefined)?.last_update;
  const info = blocks as
    | {
        ledgers?: Record<string, { block_height?: unknown; confirmations?: unknown }>;
        pending?: Record<string, SearchResult['anchoring']>;
      }
    | null
    | undefined;
  const block = info?.ledgers?.[date];
  const anchoring = info?.pending?.[date];
  return {
    found: true,
    hash,
    date,
    timestamp: new Date(first.submittedMs).toISOString(),
    ledgerUrl: archiveUrl(ledgerPath(date)),
    otsStatus: otsStateFor(date, latestOtsOk, block),
    blockHeight: typeof block?.block_height === 'number' ? block.block_height : null,
    confirmations: typeof block?.confirmations === 'number' ? block.confirmations : null,
    ...(typeof anchoring?.reason === 'string' ? { anchoring } : {}),
    ...(typeof statusWrittenAt === 'string' ? { statusWrittenAt } : {}),
    ...flags,
    inclusionVerified: true,
    leafIndex: first.leafIndex,
    treeSize: size,
    bytesFetched: net.bytes,
  };
}
