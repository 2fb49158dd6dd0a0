// Tests for core/tiles.ts: c2sp.org/tlog-tiles paths (table cases from the spec and from the path tests of
// transparency-dev/tessera api/layout/paths_test.go, commit 1811ae1a7c401c971d9cff2a5cfdfba07a26161e), entry
// bundles, which tiles exist (the spec's size-70,000 example), proofs built from tiles alone, and appendLeaves
// in random batches against building all at once and against an in-memory tree.
import { hash as nodeHash256 } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { concatBytes, toHex, utf8 } from './encoding.ts';
import { FormatError, NotFoundError } from './errors.ts';
import { sha256, type Hasher } from './hash.ts';
import {
  consistencyProof,
  inclusionProof,
  leafHash,
  nodeHash,
  treeHash,
  verifyConsistency,
  verifyInclusion,
  type HashReader,
} from './merkle.ts';
import {
  TILE_HEIGHT,
  TILE_WIDTH,
  appendLeaves,
  encodeEntryBundle,
  entryBundlePath,
  parseEntryBundle,
  parseTilePath,
  tileCoordinatesForSize,
  tileHashReader,
  tilePath,
  tileWidthAt,
  tilesForConsistency,
  tilesForInclusion,
  type Tile,
  type TileCoordinate,
} from './tiles.ts';

const fastHasher: Hasher = (data) => new Uint8Array(nodeHash256('sha256', data, 'buffer'));

describe('tile paths', () => {
  const table: Array<[level: number | 'entries', index: number, width: number, path: string]> = [
    [0, 0, 256, 'tile/0/000'],
    [0, 5, 256, 'tile/0/005'],
    [0, 255, 256, 'tile/0/255'],
    [0, 256, 256, 'tile/0/256'],
    [0, 1000, 256, 'tile/0/x001/000'],
    [0, 1234067, 256, 'tile/0/x001/x234/067'], // tlog-tiles' own example
    [0, 0, 255, 'tile/0/000.p/255'],
    [1, 0, 256, 'tile/1/000'],
    [2, 5, 1, 'tile/2/005.p/1'],
    [15, 455667, 256, 'tile/15/x455/667'],
    [15, 123456789, 41, 'tile/15/x123/x456/789.p/41'],
    [63, 2 ** 53 - 1, 256, 'tile/63/x009/x007/x199/x254/x740/991'],
    ['entries', 0, 256, 'tile/entries/000'],
    ['entries', 0, 8, 'tile/entries/000.p/8'],
    ['entries', 1, 1, 'tile/entries/001.p/1'],
    ['entries', 255, 253, 'tile/entries/255.p/253'],
    ['entries', 123456789, 256, 'tile/entries/x123/x456/789'],
  ];

  it.each(table)('level %s index %d width %d ↔ %s', (level, index, width, path) => {
    expect(level === 'entries' ? entryBundlePath(index, width) : tilePath(level, index, width)).toBe(path);
    expect(parseTilePath(path)).toEqual(
      level === 'entries' ? { kind: 'entries', index, width } : { kind: 'hashes', level, index, width },
    );
  });

  it('paths round-trip for random coordinates', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 63 }),
        fc.maxSafeNat(),
        fc.integer({ min: 1, max: 256 }),
        (level, index, width) => {
          expect(parseTilePath(tilePath(level, index, width))).toEqual({ kind: 'hashes', level, index, width });
          expect(parseTilePath(entryBundlePath(index, width))).toEqual({ kind: 'entries', index, width });
        },
      ),
    );
  });

  it.each([
    '',
    'x',
    'tile',
    'tile/0',
    'tile/0/',
    '/tile/0/000',
    'tile/0/000/',
    'ledgers/tile/0/000',
    'tile/0/x001',
    'tile/0/x001/',
    'tile/0/x001/x234',
    'tile/0/001/002',
    'tile/0/x001/0002',
    'tile/0/x001/-002',
    'tile/0/x1/002',
    'tile/0/X001/002',
    'tile/0/x000/005', // same number as 005: only the canonical encoding is accepted
    'tile/0/x000/x001/000',
    'tile/0/05',
    'tile/0/0005',
    'tile/0/+05',
    'tile/0/ 005',
    'tile/0/005.p/0',
    'tile/0/005.p/00',
    'tile/0/005.p/007',
    'tile/0/005.p/256',
    'tile/0/005.p/300',
    'tile/0/005.p/',
    'tile/0/005.p',
    'tile/0/005.p/1/',
    'tile/0/x001/.p/abc',
    'tile/00/000',
    'tile/01/000',
    'tile/-1/000',
    'tile/64/000',
    'tile/abc/000',
    'tile/entries/000.p/256',
    'tile/entry/000',
    'tile/0/../000',
    'tile/../0/000',
    'tile/0/./000',
    'tile//0/000',
    'tile\\0\\000',
    'tile/0/000%2f',
    'tile/0/x009/x007/x199/x254/x740/992', // 2^53: not a safe integer
    'tile/63/x999/x999/x999/x999/x999/999.p/255',
    `tile/0/${'x000/'.repeat(20)}001`,
  ])('rejects %j', (path) => {
    expect(() => parseTilePath(path)).toThrow(FormatError);
  });

  it('tilePath rejects what no path can name', () => {
    expect(() => tilePath(0, 0, 0)).toThrow(FormatError);
    expect(() => tilePath(0, 0, 257)).toThrow(FormatError);
    expect(() => tilePath(0, 0, 1.5)).toThrow(FormatError);
    expect(() => tilePath(64, 0, 256)).toThrow(FormatError);
    expect(() => tilePath(-1, 0, 256)).toThrow(FormatError);
    expect(() => tilePath(0, -1, 256)).toThrow(FormatError);
    expect(() => tilePath(0, 2 ** 53, 256)).toThrow(FormatError);
    expect(() => entryBundlePath(0.5, 256)).toThrow(FormatError);
  });
});

describe('entry bundles', () => {
  const entries = fc.array(fc.uint8Array({ maxLength: 300 }), { minLength: 1, maxLength: 256 });

  it('round-trip', () => {
    fc.assert(
      fc.property(entries, (list) => {
        const bytes = encodeEntryBundle(list);
        expect(bytes.length).toBe(list.reduce((sum, e) => sum + 2 + e.length, 0));
        expect(parseEntryBundle(bytes).map(toHex)).toEqual(list.map(toHex));
        expect(parseEntryBundle(bytes, list.length)).toHaveLength(list.length);
      }),
      { numRuns: 50 },
    );
  });

  it('is a big-endian uint16 length before each entry', () => {
    const big = new Uint8Array(0x1234).fill(7);
    const bytes = encodeEntryBundle([utf8('ab'), new Uint8Array(0), big]);
    expect(toHex(bytes.subarray(0, 6))).toBe('000261620000');
    expect(toHex(bytes.subarray(6, 8))).toBe('1234');
    expect(encodeEntryBundle([new Uint8Array(0xffff)]).length).toBe(0x10001);
  });

  it('every cut inside an entry is a FormatError', () => {
    fc.assert(
      fc.property(entries, fc.nat(), (list, cut) => {
        const bytes = encodeEntryBundle(list);
        const boundaries = new Set<number>([0]);
        let at = 0;
        for (const e of list) boundaries.add((at += 2 + e.length));
        const length = cut % bytes.length;
        if (boundaries.has(length) && length > 0) {
          expect(() => parseEntryBundle(bytes.subarray(0, length), list.length)).toThrow(/expected \d+ entries/);
        } else {
          expect(() => parseEntryBundle(bytes.subarray(0, length))).toThrow(FormatError);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('names what is wrong', () => {
    expect(() => parseEntryBundle(new Uint8Array([0]))).toThrow(/entry 0: truncated length prefix/);
    expect(() => parseEntryBundle(new Uint8Array([0, 5, 1, 2]))).toThrow(/entry 0: 5 bytes announced, 2 present/);
    expect(() => parseEntryBundle(new Uint8Array([0, 1, 9, 0]))).toThrow(/entry 1: truncated length prefix/);
    expect(() => parseEntryBundle(new Uint8Array(0))).toThrow(/empty/);
    expect(() => parseEntryBundle(new Uint8Array(2 * 257))).toThrow(/more than 256 entries/);
    expect(parseEntryBundle(new Uint8Array(2 * 256))).toHaveLength(256);
    expect(() => encodeEntryBundle([])).toThrow(FormatError);
    expect(() => encodeEntryBundle(Array.from({ length: 257 }, () => new Uint8Array(1)))).toThrow(FormatError);
    expect(() => encodeEntryBundle([new Uint8Array(0x10000)])).toThrow(/entry bundle entry 0/);
  });
});

describe('which tiles exist', () => {
  it('follows the tlog-tiles example: size 70,000', () => {
    const tiles = tileCoordinatesForSize(70000);
    const level0 = tiles.filter((t) => t.level === 0);
    expect(level0).toHaveLength(274);
    expect(level0.filter((t) => t.width === 256)).toHaveLength(273);
    expect(level0.at(-1)).toEqual({ level: 0, index: 273, width: 112 });
    expect(tiles.filter((t) => t.level > 0)).toEqual([
      { level: 1, index: 0, width: 256 },
      { level: 1, index: 1, width: 17 },
      { level: 2, index: 0, width: 1 },
    ]);
  });

  it('size 256 is a full level-0 tile and a level-1 tile of width 1; size 0 has none', () => {
    expect(tileCoordinatesForSize(256)).toEqual([
      { level: 0, index: 0, width: 256 },
      { level: 1, index: 0, width: 1 },
    ]);
    expect(tileCoordinatesForSize(255)).toEqual([{ level: 0, index: 0, width: 255 }]);
    expect(tileCoordinatesForSize(0)).toEqual([]);
  });

  it('tileWidthAt', () => {
    expect(tileWidthAt(0, 273, 70000)).toBe(112);
    expect(tileWidthAt(0, 272, 70000)).toBe(256);
    expect(tileWidthAt(1, 1, 70000)).toBe(17);
    expect(() => tileWidthAt(0, 274, 70000)).toThrow(NotFoundError);
    expect(() => tileWidthAt(3, 0, 70000)).toThrow(NotFoundError);
    expect(TILE_WIDTH).toBe(2 ** TILE_HEIGHT);
  });
});

describe('proofs from tiles', () => {
  it('inclusion and consistency proofs from the tiles they list equal the in-memory ones and verify', () => {
    const cases = fc
      .integer({ min: 1, max: 2000 })
      .chain((size) =>
        fc.tuple(fc.constant(size), fc.integer({ min: 0, max: size - 1 }), fc.integer({ min: 1, max: size })),
      );
    fc.assert(
      fc.property(cases, ([size, index, oldSize]) => {
        const leaves = testLeaves(size);
        const memory = memoryReader(leaves);
        const store = tileStore(appendLeaves(0, noReads, leaves).tiles);
        const root = treeHash(size, memory);

        const inclusionTiles = tilesForInclusion(index, size);
        const fromTiles = tileHashReader(size, store.fetcher(inclusionTiles));
        const proof = inclusionProof(index, size, fromTiles);
        expect(proof.map(toHex)).toEqual(inclusionProof(index, size, memory).map(toHex));
        verifyInclusion(leaves[index]!, index, size, proof, root);

        const consistencyTiles = tilesForConsistency(oldSize, size);
        const cproof = consistencyProof(oldSize, size, tileHashReader(size, store.fetcher(consistencyTiles)));
        expect(cproof.map(toHex)).toEqual(consistencyProof(oldSize, size, memory).map(toHex));
        verifyConsistency(oldSize, size, cproof, treeHash(oldSize, memory), root);

        expect(toHex(treeHash(size, tileHashReader(size, store.fetcher(tileCoordinatesForSize(size)))))).toBe(
          toHex(root),
        );
      }),
      { numRuns: 120 },
    );
  });

  it('a level-1 hash is read from the level-1 tile, and heights between from the tile below', () => {
    const size = 256 * 3 + 10;
    const leaves = testLeaves(size);
    const memory = memoryReader(leaves);
    const store = tileStore(appendLeaves(0, noReads, leaves).tiles);
    const fetched: string[] = [];
    const read = tileHashReader(size, (level, index, width) => {
      fetched.push(tilePath(level, index, width));
      return store.get(level, index, width);
    });
    expect(toHex(read(8, 2))).toBe(toHex(memory(8, 2)));
    expect(toHex(read(7, 5))).toBe(toHex(memory(7, 5)));
    expect(toHex(read(3, 96))).toBe(toHex(memory(3, 96)));
    expect(toHex(read(0, size - 1))).toBe(toHex(memory(0, size - 1)));
    expect(fetched).toEqual(['tile/1/000.p/3', 'tile/0/002', 'tile/0/003.p/10']);
    expect(() => read(2, 194)).toThrow(NotFoundError);
    expect(() => read(8, 3)).toThrow(NotFoundError);
  });

  it('a tile of the wrong length is a FormatError naming its path', () => {
    const read = tileHashReader(300, () => new Uint8Array(32 * 255));
    expect(() => read(0, 0)).toThrow(/tile\/0\/000: expected 8192 bytes, got 8160/);
  });
});

describe('appendLeaves', () => {
  it('in random batches gives the same roots and tile bytes as building at once', () => {
    const batches = fc.array(
      fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 300 }), fc.integer({ min: 200, max: 700 })),
      { minLength: 1, maxLength: 8 },
    );
    fc.assert(
      fc.property(batches, (sizes) => {
        const total = sizes.reduce((a, b) => a + b, 0);
        const leaves = testLeaves(total);
        const store = tileStore([]);
        let size = 0;
        for (const count of sizes) {
          const read = tileHashReader(size, (level, index, width) => store.get(level, index, width));
          const result = appendLeaves(size, read, leaves.slice(size, size + count));
          size += count;
          expect(result.size).toBe(size);
          expect(toHex(result.root)).toBe(toHex(referenceRoot(leaves.slice(0, size))));
          expect(result.tiles.map(({ level, index, width }) => ({ level, index, width }))).toEqual(
            changedTiles(size - count, size),
          );
          store.add(result.tiles);
        }
        const once = appendLeaves(0, noReads, leaves);
        const latest = store.latest();
        expect(once.tiles.map(coordinates)).toEqual(tileCoordinatesForSize(total));
        expect(latest.map(coordinates)).toEqual(tileCoordinatesForSize(total));
        expect(latest.map((t) => toHex(t.data))).toEqual(once.tiles.map((t) => toHex(t.data)));
      }),
      { numRuns: 60 },
    );
  });

  it('crosses level 2 (70,000 leaves in three batches, node:crypto hasher) as the spec example lists', () => {
    const leaves = testLeaves(70000);
    const store = tileStore([]);
    let size = 0;
    for (const count of [65535, 1, 4464]) {
      const read = tileHashReader(size, (level, index, width) => store.get(level, index, width), fastHasher);
      const result = appendLeaves(size, read, leaves.slice(size, size + count), fastHasher);
      store.add(result.tiles);
      size += count;
      expect(toHex(result.root)).toBe(toHex(treeHash(size, memoryReader(leaves.slice(0, size)))));
    }
    expect(store.latest().map(coordinates)).toEqual(tileCoordinatesForSize(70000));
    expect(store.latest().map((t) => toHex(t.data))).toEqual(
      appendLeaves(0, noReads, leaves).tiles.map((t) => toHex(t.data)),
    );
    expect(store.get(2, 0, 1).length).toBe(32);
  });

  it('full tiles hold leaf hashes (level 0) and the roots of full tiles below (level 1)', () => {
    const leaves = testLeaves(600);
    const { tiles } = appendLeaves(0, noReads, leaves);
    const level0 = tiles.find((t) => t.level === 0 && t.index === 1)!;
    expect(toHex(level0.data)).toBe(toHex(concatBytes(...leaves.slice(256, 512))));
    const level1 = tiles.find((t) => t.level === 1)!;
    expect(level1.width).toBe(2);
    expect(toHex(level1.data.subarray(32, 64))).toBe(toHex(referenceRoot(leaves.slice(256, 512))));
  });

  it('an empty batch changes nothing; empty tree root is SHA-256("")', () => {
    const empty = appendLeaves(0, noReads, []);
    expect(empty).toEqual({ size: 0, root: empty.root, tiles: [] });
    expect(toHex(empty.root)).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('rejects hashes that are not 32 bytes', () => {
    expect(() => appendLeaves(0, noReads, [new Uint8Array(31)])).toThrow(/new leaf hash 0: expected 32 bytes/);
    expect(() => appendLeaves(1, () => new Uint8Array(33), [new Uint8Array(32)])).toThrow(
      /old hash at level 0 index 0/,
    );
    expect(() => appendLeaves(-1, noReads, [])).toThrow(FormatError);
  });
});

const noReads: HashReader = (level, index) => {
  throw new Error(`unexpected read of level ${level} index ${index}`);
};

const leafCache: Uint8Array[] = [];
function testLeaves(count: number): Uint8Array[] {
  while (leafCache.length < count) leafCache.push(leafHash(utf8(`entry ${leafCache.length}`), fastHasher));
  return leafCache.slice(0, count);
}

/** A HashReader over a tree held in memory; it refuses subtrees that are not complete. */
function memoryReader(leafHashes: Uint8Array[]): HashReader {
  const levels: Uint8Array[][] = [leafHashes];
  for (let below = leafHashes; below.length > 1;) {
    const above: Uint8Array[] = [];
    for (let i = 0; i + 1 < below.length; i += 2) above.push(nodeHash(below[i]!, below[i + 1]!, fastHasher));
    levels.push(above);
    below = above;
  }
  return (level, index) => {
    const found = levels[level]?.[index];
    if (found === undefined) throw new Error(`no complete subtree at level ${level} index ${index}`);
    return found;
  };
}

/** RFC 6962 §2.1 MTH as the RFC states it, recursively. */
function referenceRoot(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return fastHasher(new Uint8Array(0));
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(referenceRoot(leaves.slice(0, k)), referenceRoot(leaves.slice(k)), fastHasher);
}

/** The tiles a tree growing from oldSize to newSize must (re)publish, from the tlog-tiles definitions. */
function changedTiles(oldSize: number, newSize: number): TileCoordinate[] {
  const before = new Set(tileCoordinatesForSize(oldSize).map((t) => tilePath(t.level, t.index, t.width)));
  return tileCoordinatesForSize(newSize).filter((t) => !before.has(tilePath(t.level, t.index, t.width)));
}

const coordinates = ({ level, index, width }: TileCoordinate): TileCoordinate => ({ level, index, width });

/**
 * Tiles as a static site would hold them, by path. A path is immutable: adding different bytes under an
 * existing path fails the test.
 */
function tileStore(initial: Tile[]) {
  const byPath = new Map<string, Tile>();
  const add = (tiles: Tile[]) => {
    for (const tile of tiles) {
      const path = tilePath(tile.level, tile.index, tile.width);
      const existing = byPath.get(path);
      if (existing !== undefined) expect(toHex(tile.data), `rewrite of ${path}`).toBe(toHex(existing.data));
      byPath.set(path, { ...tile, data: tile.data.slice() });
    }
  };
  add(initial);
  const get = (level: number, index: number, width: number): Uint8Array => {
    const tile = byPath.get(tilePath(level, index, width));
    if (tile === undefined) throw new Error(`no tile ${tilePath(level, index, width)}`);
    return tile.data;
  };
  return {
    add,
    get,
    /** A TileFetcher that serves only the listed tiles, so a test sees when more are read. */
    fetcher: (allowed: TileCoordinate[]) => {
      const paths = new Set(allowed.map((t) => tilePath(t.level, t.index, t.width)));
      return (level: number, index: number, width: number) => {
        if (!paths.has(tilePath(level, index, width)))
          throw new Error(`fetch outside the list: ${tilePath(level, index, width)}`);
        return get(level, index, width);
      };
    },
    /** For each (level, index), the widest version, in tileCoordinatesForSize order; older widths are prefixes. */
    latest: (): Tile[] => {
      const widest = new Map<string, Tile>();
      for (const tile of byPath.values()) {
        const key = `${tile.level}/${tile.index}`;
        const seen = widest.get(key);
        if (seen === undefined || tile.width > seen.width) {
          if (seen !== undefined) expect(toHex(tile.data.subarray(0, seen.data.length))).toBe(toHex(seen.data));
          widest.set(key, tile);
        } else {
          expect(toHex(seen.data.subarray(0, tile.data.length))).toBe(toHex(tile.data));
        }
      }
      return [...widest.values()].sort((a, b) => a.level - b.level || a.index - b.index);
    },
  };
}

describe('appendLeaves with one flat buffer of leaf hashes', () => {
  it('gives the same root and tiles as a list of leaf hashes', () => {
    const leaves = Array.from({ length: 700 }, (_, i) => sha256(new Uint8Array([i & 255, i >> 8])));
    const none: HashReader = () => {
      throw new Error('empty tree');
    };
    const listed = appendLeaves(0, none, leaves);
    const flat = appendLeaves(0, none, new Uint8Array(Buffer.concat(leaves)));
    expect(toHex(flat.root)).toBe(toHex(listed.root));
    expect(flat.tiles.map((t) => `${t.level}/${t.index}/${t.width}/${toHex(t.data)}`)).toEqual(
      listed.tiles.map((t) => `${t.level}/${t.index}/${t.width}/${toHex(t.data)}`),
    );
    expect(() => appendLeaves(0, none, new Uint8Array(33))).toThrow(/whole 32-byte hashes/);
  });
});
