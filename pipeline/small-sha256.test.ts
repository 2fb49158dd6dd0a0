import crypto from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appendLeaves, TreeAppender, type Tile } from '../core/tiles.ts';
import { leafSha256Into, nodeSha256Into, smallSha256 } from './small-sha256.ts';

const reference = (data: Uint8Array) => crypto.hash('sha256', data, 'hex');
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('smallSha256', () => {
  it('matches the FIPS 180-2 examples', () => {
    expect(hex(smallSha256(new Uint8Array()))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(hex(smallSha256(Buffer.from('abc')))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(hex(smallSha256(Buffer.from('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')))).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });

  it('equals node:crypto at every length across the one/two-block and fallback boundaries', () => {
    for (let n = 0; n <= 200; n++) {
      const data = crypto.randomBytes(n);
      expect(hex(smallSha256(data)), `length ${n}`).toBe(reference(data));
    }
  });

  it('equals node:crypto on random inputs, and does not depend on earlier calls', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 130 }), fc.uint8Array({ maxLength: 130 }), (a, b) => {
        const first = hex(smallSha256(a));
        smallSha256(b);
        expect(hex(smallSha256(a))).toBe(first);
        expect(first).toBe(reference(a));
      }),
      { numRuns: 2000 },
    );
  });

  it('leafSha256Into and nodeSha256Into are SHA-256 of 0x00 ‖ 32 bytes and 0x01 ‖ 64 bytes read at any offset', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 64, maxLength: 200 }), fc.nat(), fc.nat(), (src, a, b) => {
        const leafAt = a % (src.length - 31);
        const nodeAt = b % (src.length - 63);
        const out = new Uint8Array(40);
        leafSha256Into(src, leafAt, out, 3);
        expect(hex(out.subarray(3, 35))).toBe(
          reference(Buffer.concat([Buffer.from([0]), src.subarray(leafAt, leafAt + 32)])),
        );
        nodeSha256Into(src, nodeAt, out, 5);
        expect(hex(out.subarray(5, 37))).toBe(
          reference(Buffer.concat([Buffer.from([1]), src.subarray(nodeAt, nodeAt + 64)])),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('nodeSha256Into reads its two hashes before writing: a level reduced in place, as a tile reduces to its root', () => {
    const level = crypto.randomBytes(8 * 32);
    const expected = [0, 1, 2, 3].map((i) =>
      reference(Buffer.concat([Buffer.from([1]), level.subarray(64 * i, 64 * i + 64)])),
    );
    for (let i = 0; i < 4; i++) nodeSha256Into(level, 64 * i, level, 32 * i);
    expect([0, 1, 2, 3].map((i) => hex(level.subarray(32 * i, 32 * i + 32)))).toEqual(expected);
  });

  it('a TreeAppender with nodeSha256Into gives the tiles and root of node:crypto, across a level-2 tile', () => {
    const nodeCrypto = (data: Uint8Array) => new Uint8Array(crypto.hash('sha256', data, 'buffer'));
    const leaves = crypto.randomBytes(32 * 70_000);
    const expected = appendLeaves(0, () => new Uint8Array(), leaves, nodeCrypto);
    const tiles: Tile[] = [];
    const keep = (tile: Tile) => tiles.push({ ...tile, data: tile.data.slice() });
    const tree = new TreeAppender(0, 70_000, () => new Uint8Array(), smallSha256, keep, nodeSha256Into);
    for (let at = 0; at < leaves.length; at += 32 * 9_999) tree.push(leaves.subarray(at, at + 32 * 9_999));
    const { size, root } = tree.finish();
    expect(size).toBe(70_000);
    expect(hex(root)).toBe(hex(expected.root));
    tiles.sort((a, b) => a.level - b.level || a.index - b.index);
    expect(tiles.map((t) => `${t.level}/${t.index}/${t.width} ${hex(t.data)}`)).toEqual(
      expected.tiles.map((t) => `${t.level}/${t.index}/${t.width} ${hex(t.data)}`),
    );
  });
});
