// Tiles and entry bundles of a tiled transparency log (c2sp.org/tlog-tiles, "Merkle Tree", "Partial Tiles" and
// "Log entries"; docs/FORMAT.md §2): archive paths, entry bundle bytes, which tiles exist or a proof needs, a
// HashReader over tile contents, and the tiles a batch of new leaves creates.
//
// Every reader and writer of the archive takes its paths from here, so the layout is defined once.
import { FormatError, NotFoundError } from './errors.ts';
import { HASH_SIZE, sha256, type Hasher } from './hash.ts';
import {
  consistencyProofCoordinates,
  inclusionProofCoordinates,
  treeHash,
  type HashReader,
  type Subtree,
} from './merkle.ts';

/** tlog-tiles: a tile is a subtree of height 8 whose leaves are the stored hashes. */
export const TILE_HEIGHT = 8;
/** tlog-tiles: a full tile holds 256 hashes (8,192 bytes); a partial tile 1 to 255. */
export const TILE_WIDTH = 256;
/** tlog-tiles: `<L>` is a decimal integer between 0 and 63. */
const MAX_TILE_LEVEL = 63;
/** tlog-tiles: entry bundles are sequences of big-endian uint16 length-prefixed entries. */
const MAX_ENTRY_SIZE = 0xffff;
/** RFC 6962 §2.1: an interior node hash is SHA-256(0x01 || left || right). */
const NODE_PREFIX = 0x01;
/** Longer than any valid path (level 63 or "entries", 2^53 − 1 as x009/x007/x199/x254/x740/991, ".p/255"). */
const MAX_PATH_LENGTH = 64;

/** A tile of the tree: level L holds hashes of level 8·L subtrees; `width` is 1…256 (256 = full). */
export interface TileCoordinate {
  level: number;
  index: number;
  width: number;
}

export interface Tile extends TileCoordinate {
  /** `width` × 32 bytes: the hashes, left to right. */
  data: Uint8Array;
}

/** What a tile path names: a hash tile, or the entry bundle matching level-0 tile `index`. */
export type ParsedTilePath =
  { kind: 'hashes'; level: number; index: number; width: number } | { kind: 'entries'; index: number; width: number };

/**
 * Contract: returns the bytes published at `tilePath(level, index, width)` (width × 32 bytes); throws when
 * they cannot be had. Called at most once per tile by one `tileHashReader`.
 */
export type TileFetcher = (level: number, index: number, width: number) => Uint8Array;

/** `tile/<L>/<N>` for a full tile (width 256), `tile/<L>/<N>.p/<W>` for a partial one. */
export function tilePath(level: number, index: number, width: number): string {
  checkLevel(level);
  return `tile/${level}/${encodeTileIndex(index, width)}`;
}

/** `tile/entries/<N>` for a full bundle (256 entries), `tile/entries/<N>.p/<W>` for a partial one. */
export function entryBundlePath(index: number, width: number): string {
  return `tile/entries/${encodeTileIndex(index, width)}`;
}

/**
 * Parses a path relative to the archive root (`tile/…`, no leading slash), accepting only what `tilePath` and
 * `entryBundlePath` produce: no leading zeros, no empty `x000/` groups, level ≤ 63, width 1…255, index below 2^53.
 */
export function parseTilePath(path: string): ParsedTilePath {
  const match =
    path.length <= MAX_PATH_LENGTH
      ? /^tile\/(entries|0|[1-9][0-9]?)\/((?:x[0-9]{3}\/)*[0-9]{3})(?:\.p\/([1-9][0-9]{0,2}))?$/.exec(path)
      : null;
  if (match === null) throw new FormatError('tile path', `not a tile or entry bundle path: ${JSON.stringify(path)}`);
  const [, levelText, indexText, widthText] = match;
  const width = widthText === undefined ? TILE_WIDTH : Number(widthText);
  if (widthText !== undefined && width >= TILE_WIDTH) {
    throw new FormatError('tile path', `partial width ${width} is not between 1 and 255`);
  }
  const index = Number(indexText!.replaceAll('x', '').replaceAll('/', ''));
  if (!Number.isSafeInteger(index) || encodeTileIndex(index, TILE_WIDTH) !== indexText) {
    throw new FormatError('tile path', `tile index ${indexText} is not canonical or too large`);
  }
  if (levelText === 'entries') return { kind: 'entries', index, width };
  const level = Number(levelText);
  if (level > MAX_TILE_LEVEL) throw new FormatError('tile path', `level ${level} is above ${MAX_TILE_LEVEL}`);
  return { kind: 'hashes', level, index, width };
}

/** tlog-tiles entry bundle: each entry as a big-endian uint16 length then its bytes; 1 to 256 entries. */
export function encodeEntryBundle(entries: readonly Uint8Array[]): Uint8Array {
  if (entries.length === 0 || entries.length > TILE_WIDTH) {
    throw new FormatError('entry bundle', `holds 1 to ${TILE_WIDTH} entries, got ${entries.length}`);
  }
  let length = 0;
  entries.forEach((entry, i) => {
    if (entry.length > MAX_ENTRY_SIZE) {
      throw new FormatError(`entry bundle entry ${i}`, `${entry.length} bytes is more than ${MAX_ENTRY_SIZE}`);
    }
    length += 2 + entry.length;
  });
  const out = new Uint8Array(length);
  let offset = 0;
  for (const entry of entries) {
    out[offset] = entry.length >> 8;
    out[offset + 1] = entry.length & 0xff;
    out.set(entry, offset + 2);
    offset += 2 + entry.length;
  }
  return out;
}

/**
 * Strict inverse of `encodeEntryBundle`: truncated prefixes or data, an empty bundle, more than 256 entries or
 * (when `width` is given) a different number of entries are FormatErrors. Entries are copies.
 */
export function parseEntryBundle(bytes: Uint8Array, width?: number): Uint8Array[] {
  const entries: Uint8Array[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const i = entries.length;
    if (i === TILE_WIDTH) throw new FormatError('entry bundle', `more than ${TILE_WIDTH} entries`);
    if (offset + 2 > bytes.length) throw new FormatError('entry bundle', `entry ${i}: truncated length prefix`);
    const length = (bytes[offset]! << 8) | bytes[offset + 1]!;
    const end = offset + 2 + length;
    if (end > bytes.length) {
      const present = bytes.length - offset - 2;
      throw new FormatError('entry bundle', `entry ${i}: ${length} bytes announced, ${present} present`);
    }
    entries.push(bytes.slice(offset + 2, end));
    offset = end;
  }
  if (entries.length === 0) throw new FormatError('entry bundle', 'empty');
  if (width !== undefined && entries.length !== width) {
    throw new FormatError('entry bundle', `expected ${width} entries, got ${entries.length}`);
  }
  return entries;
}

/**
 * tlog-tiles "Partial Tiles": the width of tile (level, index) in the tree of `size` leaves; the level holds
 * floor(size / 256^level) hashes. A NotFoundError when that tile does not exist at this size.
 */
export function tileWidthAt(level: number, index: number, size: number): number {
  checkLevel(level);
  checkCount(index, 'tile index');
  checkCount(size, 'size');
  const remaining = levelCount(level, size) - index * TILE_WIDTH;
  if (remaining <= 0) throw new NotFoundError(`tile ${level}/${index} does not exist in a tree of size ${size}`);
  return Math.min(remaining, TILE_WIDTH);
}

/** Every tile of the tree of `size` leaves, level by level, left to right; the rightmost of a level may be partial. */
export function tileCoordinatesForSize(size: number): TileCoordinate[] {
  checkCount(size, 'size');
  const tiles: TileCoordinate[] = [];
  for (let level = 0; level <= MAX_TILE_LEVEL; level++) {
    const count = levelCount(level, size);
    if (count === 0) break;
    for (let index = 0; index * TILE_WIDTH < count; index++) {
      tiles.push({ level, index, width: Math.min(count - index * TILE_WIDTH, TILE_WIDTH) });
    }
  }
  return tiles;
}

/** The tiles (at their width in the tree of `size`) holding every hash the inclusion proof of `index` reads. */
export function tilesForInclusion(index: number, size: number): TileCoordinate[] {
  return tilesHolding(inclusionProofCoordinates(index, size), size);
}

/** The tiles (at their width in the tree of `newSize`) holding every hash the consistency proof reads. */
export function tilesForConsistency(oldSize: number, newSize: number): TileCoordinate[] {
  return tilesHolding(consistencyProofCoordinates(oldSize, newSize), newSize);
}

/**
 * A HashReader for the tree of `size` leaves that reads only tiles: the hash of a complete subtree of height
 * h, 8·L ≤ h < 8·L + 8, is recomputed from the up to 2^(h − 8L) hashes it spans in the level-L tile. Each tile
 * is fetched once (at its width at `size`) and its length checked.
 */
export function tileHashReader(size: number, getTile: TileFetcher, hasher: Hasher = sha256): HashReader {
  checkCount(size, 'size');
  const cache = new Map<string, Uint8Array>();
  const scratch = new Uint8Array((TILE_WIDTH / 2) * HASH_SIZE);
  const nodeInto = nodeHasherInto(hasher);
  return (level, index) => {
    const { tileLevel, first, span } = locate(level, index);
    if (first + span > levelCount(tileLevel, size)) {
      throw new NotFoundError(
        `hash at level ${level} index ${index}: not a complete subtree of a tree of size ${size}`,
      );
    }
    const tileIndex = Math.floor(first / TILE_WIDTH);
    const width = tileWidthAt(tileLevel, tileIndex, size);
    const key = `${tileLevel}/${tileIndex}`;
    let tile = cache.get(key);
    if (tile === undefined) {
      tile = getTile(tileLevel, tileIndex, width);
      if (tile.length !== width * HASH_SIZE) {
        const expected = width * HASH_SIZE;
        throw new FormatError(tilePath(tileLevel, tileIndex, width), `expected ${expected} bytes, got ${tile.length}`);
      }
      cache.set(key, tile);
    }
    const out = new Uint8Array(HASH_SIZE);
    hashRun(tile, first - tileIndex * TILE_WIDTH, span, nodeInto, out, 0, scratch);
    return out;
  };
}

/** What `appendLeaves` produces. */
export interface AppendResult {
  /** The new tree size. */
  size: number;
  /** RFC 6962 root of the new tree. */
  root: Uint8Array;
  /**
   * Every tile the new leaves create or widen, level by level, left to right, at its width in the new tree.
   */
  tiles: Tile[];
}

/**
 * Appends `newLeafHashes` (32-byte leaf hashes) to the tree of `oldSize` leaves whose stored hashes `read`
 * returns, and gives the new root and the tiles that changed, level by level, left to right. `newLeafHashes` may
 * also be one flat buffer of concatenated 32-byte leaf hashes, which spares a writer with millions of leaves one
 * object per leaf. The whole batch at once; a writer of more leaves than it wants to hold uses TreeAppender.
 */
export function appendLeaves(
  oldSize: number,
  read: HashReader,
  newLeafHashes: readonly Uint8Array[] | Uint8Array,
  hasher: Hasher = sha256,
): AppendResult {
  checkCount(oldSize, 'old size');
  const flat = newLeafHashes instanceof Uint8Array ? newLeafHashes : undefined;
  if (flat !== undefined && flat.length % HASH_SIZE !== 0) {
    throw new FormatError('new leaf hashes', `a flat buffer must hold whole 32-byte hashes, got ${flat.length} bytes`);
  }
  const list = newLeafHashes as readonly Uint8Array[];
  const count = flat !== undefined ? flat.length / HASH_SIZE : list.length;
  const tiles: Tile[] = [];
  const keep = (tile: Tile): void => {
    tiles.push({ ...tile, data: tile.data.slice() });
  };
  const appender = new TreeAppender(oldSize, count, read, hasher, keep);
  if (flat !== undefined) appender.push(flat);
  else {
    list.forEach((leaf, i) => {
      if (leaf.length !== HASH_SIZE) throw hashSizeError(`new leaf hash ${i}`, leaf);
      appender.push(leaf);
    });
  }
  const { size, root } = appender.finish();
  tiles.sort((a, b) => a.level - b.level || a.index - b.index);
  return { size, root, tiles };
}

/**
 * The tree of `oldSize` leaves extended by `count` new leaf hashes that arrive in order, a batch at a time
 * (`push`), holding only the rightmost tile of each level (8 KB a level): each tile the new leaves create or
 * widen goes to `onTile` once it is complete (full), and the rightmost partial ones at `finish`, which gives the
 * new size and root. The tile's `data` is valid only during the call (copy it to keep it). `read` is asked only
 * for the level-8·L hashes of the old rightmost partial tiles and for old complete subtrees the new root needs.
 * Each full tile is reduced to its root through one reused scratch buffer: the only per-hash allocation is the
 * digest the hasher returns. The same tiles and root as the whole batch at once (appendLeaves).
 */
export class TreeAppender {
  private readonly size: number;
  /** Per level: the rightmost tile's hashes so far (`base`: its first hash's index in the level). */
  private readonly levels: Array<{ base: number; hashes: Uint8Array; n: number }> = [];
  private readonly scratch = new Uint8Array((TILE_WIDTH / 2) * HASH_SIZE);
  private pushed = 0;
  /** During a push with tile roots: them, and the first leaf of the first tile they are the roots of. */
  private given: { roots: Uint8Array; from: number } | undefined;

  private readonly oldSize: number;
  private readonly count: number;
  private readonly read: HashReader;
  private readonly hasher: Hasher;
  private readonly nodeInto: NodeHasherInto;
  private readonly onTile: (tile: Tile) => void;

  /** `nodeInto`, when given, must compute what `hasher` does for a node (a writer's faster path for the tiles). */
  constructor(
    oldSize: number,
    count: number,
    read: HashReader,
    hasher: Hasher,
    onTile: (tile: Tile) => void,
    nodeInto: NodeHasherInto = nodeHasherInto(hasher),
  ) {
    checkCount(oldSize, 'old size');
    checkCount(count, 'new leaf count');
    this.oldSize = oldSize;
    this.count = count;
    this.read = read;
    this.hasher = hasher;
    this.nodeInto = nodeInto;
    this.onTile = onTile;
    this.size = oldSize + count;
    checkCount(this.size, 'new size');
  }

  /**
   * The next leaf hashes, 32 bytes each, back to back. `tileRoots`, when given, holds the roots of the level-0
   * tiles that lie wholly within these leaves (from a tile boundary to the next), in order, 32 bytes each:
   * computed elsewhere (a writer's other threads), they are taken instead of hashing those tiles here.
   */
  push(leafHashes: Uint8Array, tileRoots?: Uint8Array): void {
    if (leafHashes.length % HASH_SIZE !== 0) {
      throw new FormatError(
        'new leaf hashes',
        `a flat buffer must hold whole 32-byte hashes, got ${leafHashes.length} bytes`,
      );
    }
    const n = leafHashes.length / HASH_SIZE;
    if (this.pushed + n > this.count) {
      throw new FormatError('new leaf hashes', `more than the ${this.count} announced`);
    }
    const start = this.oldSize + this.pushed;
    if (tileRoots !== undefined) {
      const first = Math.ceil(start / TILE_WIDTH);
      const whole = Math.max(0, Math.floor((start + n) / TILE_WIDTH) - first);
      if (tileRoots.length !== whole * HASH_SIZE) {
        throw new FormatError(
          'level-0 tile roots',
          `expected ${whole} for leaves ${start} to ${start + n}, got ${tileRoots.length} bytes`,
        );
      }
      this.given = { roots: tileRoots, from: first * TILE_WIDTH };
    }
    this.pushed += n;
    try {
      for (let at = 0; at < leafHashes.length;) at += this.add(0, leafHashes, at);
    } finally {
      this.given = undefined;
    }
  }

  /** The new size and root, after the rightmost partial tiles went to `onTile`. */
  finish(): { size: number; root: Uint8Array } {
    if (this.pushed !== this.count) {
      throw new FormatError('new leaf hashes', `${this.pushed} pushed, ${this.count} announced`);
    }
    this.levels.forEach((layer, level) => {
      if (layer.n > 0) this.emit(level, layer, layer.n);
    });
    const readNew: HashReader = (level, index) => {
      const { tileLevel, first, span } = locate(level, index);
      const layer = this.levels[tileLevel];
      // The root's complete subtrees of tile level L lie in the level's rightmost tile (those left of it are
      // covered by larger subtrees), which is kept here once the new leaves reached the level.
      if (layer === undefined || first < layer.base) return this.read(level, index);
      const out = new Uint8Array(HASH_SIZE);
      hashRun(layer.hashes, first - layer.base, span, this.nodeInto, out, 0, this.scratch);
      return out;
    };
    return { size: this.size, root: treeHash(this.size, readNew, this.hasher) };
  }

  /** Adds hashes of level 8·`level` from `source` at byte `at` into that level's rightmost tile, up to its end;
   * returns the bytes taken. A tile that becomes full goes out and its root one level up. */
  private add(level: number, source: Uint8Array, at: number): number {
    const layer = this.levels[level] ?? this.openLevel(level);
    const take = Math.min(source.length - at, (TILE_WIDTH - layer.n) * HASH_SIZE);
    layer.hashes.set(source.subarray(at, at + take), layer.n * HASH_SIZE);
    layer.n += take / HASH_SIZE;
    if (layer.n === TILE_WIDTH) {
      this.emit(level, layer, TILE_WIDTH);
      const given = this.given;
      let root: Uint8Array;
      if (level === 0 && given !== undefined && layer.base >= given.from) {
        const at = ((layer.base - given.from) / TILE_WIDTH) * HASH_SIZE;
        root = given.roots.subarray(at, at + HASH_SIZE);
      } else {
        root = new Uint8Array(HASH_SIZE);
        hashRun(layer.hashes, 0, TILE_WIDTH, this.nodeInto, root, 0, this.scratch);
      }
      layer.base += TILE_WIDTH;
      layer.n = 0;
      this.add(level + 1, root, 0);
    }
    return take;
  }

  /** The level's rightmost tile in the old tree, its old hashes read (the new leaves reach this level). */
  private openLevel(level: number): { base: number; hashes: Uint8Array; n: number } {
    if (level > MAX_TILE_LEVEL) throw new FormatError('tile level', `expected 0 to ${MAX_TILE_LEVEL}, got ${level}`);
    const oldCount = levelCount(level, this.oldSize);
    const base = oldCount - (oldCount % TILE_WIDTH);
    const layer = { base, hashes: new Uint8Array(TILE_WIDTH * HASH_SIZE), n: oldCount - base };
    for (let i = base; i < oldCount; i++) {
      const hash = this.read(level * TILE_HEIGHT, i);
      if (hash.length !== HASH_SIZE) throw hashSizeError(`old hash at level ${level * TILE_HEIGHT} index ${i}`, hash);
      layer.hashes.set(hash, (i - base) * HASH_SIZE);
    }
    this.levels[level] = layer;
    return layer;
  }

  private emit(level: number, layer: { base: number; hashes: Uint8Array }, width: number): void {
    const data = layer.hashes.subarray(0, width * HASH_SIZE);
    this.onTile({ level, index: layer.base / TILE_WIDTH, width, data });
  }
}

/** Where the complete subtree (level, index) lies in the tiles: its first level-8·L hash and how many it spans. */
function locate(level: number, index: number): { tileLevel: number; first: number; span: number } {
  checkCount(level, 'level');
  checkCount(index, 'index');
  const tileLevel = Math.floor(level / TILE_HEIGHT);
  const span = 2 ** (level - tileLevel * TILE_HEIGHT);
  return { tileLevel, first: index * span, span };
}

function tilesHolding(subtrees: readonly Subtree[], size: number): TileCoordinate[] {
  const seen = new Map<string, TileCoordinate>();
  for (const subtree of subtrees) {
    const { tileLevel, first } = locate(subtree.level, subtree.index);
    const index = Math.floor(first / TILE_WIDTH);
    const key = `${tileLevel}/${index}`;
    if (!seen.has(key)) seen.set(key, { level: tileLevel, index, width: tileWidthAt(tileLevel, index, size) });
  }
  return [...seen.values()].sort((a, b) => a.level - b.level || a.index - b.index);
}

/** Writes SHA-256(0x01 ‖ src[at … at+64)) into out[outAt … outAt+32): the RFC 6962 node hash of the two
 *  hashes back to back at `at`, read before anything is written (`out` may be `src`, at or before `at`). */
export type NodeHasherInto = (src: Uint8Array, at: number, out: Uint8Array, outAt: number) => void;

/** The node hash of `hasher` as a NodeHasherInto, through one reused 65-byte input. */
export function nodeHasherInto(hasher: Hasher): NodeHasherInto {
  const input = new Uint8Array(1 + 2 * HASH_SIZE);
  input[0] = NODE_PREFIX;
  return (src, at, out, outAt) => {
    input.set(src.subarray(at, at + 2 * HASH_SIZE), 1);
    out.set(hasher(input), outAt);
  };
}

/**
 * Writes into out[outOffset…] the RFC 6962 root of the `count` (a power of two, at most 256) consecutive
 * hashes of `hashes` starting at hash `first`, reducing level by level in `scratch` (128 hashes).
 */
function hashRun(
  hashes: Uint8Array,
  first: number,
  count: number,
  nodeInto: NodeHasherInto,
  out: Uint8Array,
  outOffset: number,
  scratch: Uint8Array,
): void {
  let source = hashes;
  let offset = first * HASH_SIZE;
  for (let n = count; n > 1; n /= 2) {
    for (let i = 0; i < n / 2; i++) {
      nodeInto(source, offset + i * 2 * HASH_SIZE, scratch, i * HASH_SIZE);
    }
    source = scratch;
    offset = 0;
  }
  out.set(source.subarray(offset, offset + HASH_SIZE), outOffset);
}

/** floor(size / 256^level): how many level-8·level hashes the tree of `size` leaves has. */
function levelCount(level: number, size: number): number {
  return Math.floor(size / TILE_WIDTH ** level);
}

/** tlog-tiles `<N>[.p/<W>]`: N in 3-digit groups, all but the last prefixed with `x`. */
function encodeTileIndex(index: number, width: number): string {
  checkCount(index, 'tile index');
  if (!Number.isInteger(width) || width < 1 || width > TILE_WIDTH) {
    throw new FormatError('tile width', `expected 1 to ${TILE_WIDTH}, got ${width}`);
  }
  let digits = String(index);
  digits = digits.padStart(Math.ceil(digits.length / 3) * 3, '0');
  const groups: string[] = [];
  for (let i = 0; i < digits.length; i += 3) groups.push(digits.slice(i, i + 3));
  const encoded = groups.map((group, i) => (i < groups.length - 1 ? `x${group}` : group)).join('/');
  return width === TILE_WIDTH ? encoded : `${encoded}.p/${width}`;
}

function checkLevel(level: number): void {
  if (!Number.isInteger(level) || level < 0 || level > MAX_TILE_LEVEL) {
    throw new FormatError('tile level', `expected 0 to ${MAX_TILE_LEVEL}, got ${level}`);
  }
}

function checkCount(value: number, field: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new FormatError(field, `expected a non-negative integer below 2^53, got ${value}`);
  }
}

function hashSizeError(field: string, hash: Uint8Array): FormatError {
  return new FormatError(field, `expected ${HASH_SIZE} bytes, got ${hash.length}`);
}
