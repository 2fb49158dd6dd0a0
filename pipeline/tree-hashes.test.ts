// The tree's leaf hashes and level-0 tile roots shared out between this thread and worker threads: the same
// bytes as node:crypto's tree (core/tiles.ts appendLeaves), whatever the number of workers, the day's data (in
// shared memory or an external sort's files) and where the day starts in a tile.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendLeaves, tileHashReader, TreeAppender, type Tile } from '../core/tiles.ts';
import type { DayData } from './day-sort.ts';
import { nodeSha256Into, smallSha256 } from './small-sha256.ts';
import { hashBatch, hashedBatches } from './tree-hashes.ts';

const nodeCrypto = (data: Uint8Array) => new Uint8Array(crypto.hash('sha256', data, 'buffer'));
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** `n` random entries in shared memory, as sortDay gives a day sorted in memory (the order does not matter here). */
function shared(n: number): { hashes: Uint8Array; ms: Float64Array } {
  const hashes = new Uint8Array(new SharedArrayBuffer(32 * n));
  hashes.set(crypto.randomBytes(32 * n));
  return { hashes, ms: new Float64Array(new SharedArrayBuffer(8 * n)) };
}

/** The same entries as an external sort's two files, read `batchEntries` at a time. */
function files(day: { hashes: Uint8Array; ms: Float64Array }, batchEntries: number): DayData {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-tree-hashes-'));
  dirs.push(dir);
  const hashes = path.join(dir, 'hashes');
  const ms = path.join(dir, 'ms');
  fs.writeFileSync(hashes, day.hashes);
  fs.writeFileSync(ms, new Uint8Array(day.ms.buffer));
  return { files: { hashes, ms }, count: day.ms.length, batchEntries };
}

/** Every tile and the root of the tree of `old` (leaf hashes) extended by `day`, hashed by `workers` workers. */
function build(old: Uint8Array, day: DayData, workers: number): { root: string; tiles: string[] } {
  const oldSize = old.length / 32;
  const { tiles: oldTiles } = appendLeaves(0, () => new Uint8Array(), old, nodeCrypto);
  const byPath = new Map(oldTiles.map((t) => [`${t.level}/${t.index}/${t.width}`, t.data]));
  const read = tileHashReader(oldSize, (l, i, w) => byPath.get(`${l}/${i}/${w}`)!, smallSha256);
  const count = 'files' in day ? day.count : day.ms.length;
  const tiles: Tile[] = [];
  const keep = (tile: Tile) => tiles.push({ ...tile, data: tile.data.slice() });
  const tree = new TreeAppender(oldSize, count, read, smallSha256, keep, nodeSha256Into);
  for (const { leaves, tileRoots } of hashedBatches(day, oldSize, workers)) tree.push(leaves, tileRoots);
  const { root } = tree.finish();
  tiles.sort((a, b) => a.level - b.level || a.index - b.index);
  return { root: hex(root), tiles: tiles.map((t) => `${t.level}/${t.index}/${t.width} ${hex(t.data)}`) };
}

/** The same with node:crypto and no tile roots from elsewhere: the tree as every reader computes it. */
function reference(old: Uint8Array, entries: Uint8Array): { root: string; tiles: string[] } {
  const oldSize = old.length / 32;
  const { tiles: oldTiles } = appendLeaves(0, () => new Uint8Array(), old, nodeCrypto);
  const byPath = new Map(oldTiles.map((t) => [`${t.level}/${t.index}/${t.width}`, t.data]));
  const read = tileHashReader(oldSize, (l, i, w) => byPath.get(`${l}/${i}/${w}`)!, nodeCrypto);
  const leaves = new Uint8Array(entries.length);
  for (let at = 0; at < entries.length; at += 32)
    leaves.set(nodeCrypto(Buffer.concat([Buffer.from([0]), entries.subarray(at, at + 32)])), at);
  const { root, tiles } = appendLeaves(oldSize, read, leaves, nodeCrypto);
  return { root: hex(root), tiles: tiles.map((t) => `${t.level}/${t.index}/${t.width} ${hex(t.data)}`) };
}

describe('hashedBatches', () => {
  it('hashBatch: the leaf hashes, and the roots of exactly the level-0 tiles wholly within the batch', () => {
    const entries = crypto.randomBytes(32 * 700);
    const { leaves, tileRoots } = hashBatch(entries, 100); // leaves 100 … 800: tiles 1 and 2 (256 … 768) whole
    expect(hex(leaves.subarray(32 * 5, 32 * 6))).toBe(
      hex(nodeCrypto(Buffer.concat([Buffer.from([0]), entries.subarray(32 * 5, 32 * 6)]))),
    );
    expect(tileRoots.length).toBe(2 * 32);
    const tile1 = appendLeaves(0, () => new Uint8Array(), leaves.subarray(32 * 156, 32 * 412), nodeCrypto);
    expect(hex(tileRoots.subarray(0, 32))).toBe(hex(tile1.root));
    expect(hashBatch(entries.subarray(0, 32 * 200), 10).tileRoots.length).toBe(0);
  });

  it('with 0, 1 and 3 workers, from shared memory and from files, gives the tree node:crypto gives', () => {
    // 9,000 old leaves (the day starts inside a level-0 tile), 70,300 new ones crossing a level-2 tile.
    const old = crypto.randomBytes(32 * 9_000);
    const day = shared(70_300);
    const expected = reference(old, day.hashes);
    for (const workers of [0, 1, 3]) {
      expect(build(old, day, workers), `${workers} workers, shared memory`).toEqual(expected);
    }
    // Batches of 1,000 entries: tiles cross batch boundaries, and those are hashed by the caller.
    expect(build(old, files(day, 1_000), 2), '2 workers, files').toEqual(expected);
  });

  it("with an archive, a worker writes its batches' whole level-0 tiles, the bytes node:crypto's tree has", () => {
    const archive = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-tree-tiles-'));
    dirs.push(archive);
    const old = crypto.randomBytes(32 * 100);
    const day = shared(3 * 65_536);
    const batches = [...hashedBatches(day, 100, 1, archive)];
    // Batch 1 (leaves 65,636 … 131,172) is the worker's: tiles 257 … 511 wholly within it, 255 files of 8 KB.
    expect(batches.map((b) => b.written)).toEqual([undefined, { files: 255, bytes: 255 * 8192 }, undefined]);
    const tiles = new Map(reference(old, day.hashes).tiles.map((t) => [t.split(' ')[0], t.split(' ')[1]]));
    const files = fs.readdirSync(path.join(archive, 'tile/0'), { recursive: true, withFileTypes: true });
    const written = files.filter((e) => e.isFile()).map((e) => path.relative(archive, path.join(e.parentPath, e.name)));
    expect(written.length).toBe(255);
    for (const t of [257, 300, 511]) {
      const rel = `tile/0/${String(t).padStart(3, '0')}`;
      expect(written).toContain(rel);
      expect(hex(fs.readFileSync(path.join(archive, rel)))).toBe(tiles.get(`0/${t}/256`));
    }
  });
});
