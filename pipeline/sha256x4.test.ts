// hashBatch on four WebAssembly SIMD lanes (pipeline/sha256x4.ts) and on its JavaScript fallback: the same leaf
// hashes and level-0 tile roots as node:crypto (OpenSSL) computes them, RFC 6962 §2.1, for ragged batch lengths,
// starts within a tile, and batches longer than the kernel's buffer.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256x4 } from './sha256x4.ts';
import { hashBatch } from './tree-hashes.ts';

const sha256 = (...parts: Uint8Array[]) => crypto.hash('sha256', Buffer.concat(parts), 'buffer');
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** hashBatch's answer computed with node:crypto: leaf hashes, and the roots of the tiles wholly within. */
function reference(entries: Uint8Array, start: number): { leaves: string; tileRoots: string } {
  const n = entries.length / 32;
  const leaves = Array.from({ length: n }, (_, i) =>
    sha256(Buffer.from([0x00]), entries.subarray(32 * i, 32 * i + 32)),
  );
  const roots: Buffer[] = [];
  for (let i = (256 - (start % 256)) % 256; i + 256 <= n; i += 256) {
    let level = leaves.slice(i, i + 256);
    while (level.length > 1)
      level = level.filter((_, j) => j % 2 === 0).map((l, j) => sha256(Buffer.from([0x01]), l, level[2 * j + 1]!));
    roots.push(level[0]!);
  }
  return { leaves: hex(Buffer.concat(leaves)), tileRoots: hex(Buffer.concat(roots)) };
}

const x4 = sha256x4();
// [entries, start]: one entry, fewer than four, a tile less, one more, a start inside a tile, lengths that are
// not a multiple of four, 1, 3, 5, 7, 32 and 256 whole tiles (four a step on the lanes, the rest one by one),
// and more entries than the kernel's buffer (8192) with a tile across its end.
const cases: [number, number][] = [
  [1, 0],
  [3, 5],
  [255, 0],
  [256, 0],
  [257, 0],
  [256, 1],
  [257, 255],
  [511, 129],
  [1021, 3],
  [1280, 0],
  [2048 + 17, 100],
  [100, 200],
  [8192 + 300, 7],
  [65_536, 65_536 * 3],
];

describe('hashBatch on four SIMD lanes', () => {
  it('this Node has WebAssembly SIMD, so the lanes are tested here', () => {
    expect(x4).not.toBeNull();
  });

  for (const [n, start] of cases) {
    it(`equals node:crypto: ${n} entries from leaf ${start}`, () => {
      const entries = new Uint8Array(crypto.randomBytes(32 * n));
      const want = reference(entries, start);
      const got = hashBatch(entries, start, x4);
      expect(hex(got.leaves)).toBe(want.leaves);
      expect(hex(got.tileRoots)).toBe(want.tileRoots);
    });
  }

  it('hashes entries at any offset and writes only the leaf hashes asked for', () => {
    const src = new Uint8Array(crypto.randomBytes(32 * 9 + 5));
    const out = new Uint8Array(32 * 7 + 64).fill(0xaa);
    x4!.leaves(src, 5, 6, out, 32);
    expect(hex(out.subarray(32, 32 + 32 * 6))).toBe(reference(src.subarray(5, 5 + 32 * 6), 1).leaves);
    expect([...out.subarray(0, 32), ...out.subarray(32 * 7)].every((b) => b === 0xaa)).toBe(true);
  });
});

describe('hashBatch without SIMD', () => {
  it('sha256x4 gives no kernel when the module does not validate', () => {
    expect(sha256x4(() => false)).toBeNull();
  });

  it('uses the kernel it is given, and the JavaScript when given none', () => {
    const entries = new Uint8Array(crypto.randomBytes(32 * 300));
    const zeros = { leaves: () => {}, tileRoots: () => {} };
    expect(hashBatch(entries, 0, zeros).leaves.every((b) => b === 0)).toBe(true);
    const want = reference(entries, 0);
    const got = hashBatch(entries, 0, null);
    expect(hex(got.leaves)).toBe(want.leaves);
    expect(hex(got.tileRoots)).toBe(want.tileRoots);
  });

  for (const [n, start] of cases.filter(([n]) => n < 2000)) {
    it(`equals node:crypto: ${n} entries from leaf ${start}`, () => {
      const entries = new Uint8Array(crypto.randomBytes(32 * n));
      const got = hashBatch(entries, start, null);
      expect({ leaves: hex(got.leaves), tileRoots: hex(got.tileRoots) }).toEqual(reference(entries, start));
    });
  }
});
