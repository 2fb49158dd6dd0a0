// Tests for core/merkle.ts.
// Known answers: the RFC 6962 test tree and the inclusion / consistency proof probes of transparency-dev/merkle
// (Google's Go implementation used by Trillian and Tessera), commit 417fb0c314750d94e53942e9f92e79b6d35915db:
// testonly/constants.go and testdata/{inclusion,consistency}/**.json, copied to test/vectors/merkle/ (see its
// README.md). Then fast-check properties over random trees of up to 2,000 leaves.
import { readFileSync } from 'node:fs';
import { hash as nodeHash256 } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromBase64, fromHex, toHex, utf8 } from './encoding.ts';
import { FormatError, MismatchError } from './errors.ts';
import type { Hasher } from './hash.ts';
import {
  consistencyProof,
  consistencyProofCoordinates,
  inclusionProof,
  inclusionProofCoordinates,
  leafHash,
  nodeHash,
  rootFromInclusionProof,
  subtreesOf,
  treeHash,
  verifyConsistency,
  verifyInclusion,
  type HashReader,
} from './merkle.ts';

const VECTORS = new URL('../test/vectors/merkle/', import.meta.url);

interface TreeVectors {
  leaf_inputs: string[];
  node_hashes: string[][];
  root_hashes: string[];
}
interface InclusionProbe {
  leafIdx: number;
  treeSize: number;
  root: string;
  leafHash: string;
  proof: string[] | null;
  desc: string;
  wantErr: boolean;
}
interface ConsistencyProbe {
  size1: number;
  size2: number;
  root1: string;
  root2: string;
  proof: string[] | null;
  desc: string;
  wantErr: boolean;
}

function loadProbes<T>(name: string): Array<{ file: string; probe: T }> {
  const parsed = JSON.parse(readFileSync(new URL(name, VECTORS), 'utf8')) as {
    probes: Array<{ file: string; probe: T }>;
  };
  if (!Array.isArray(parsed.probes) || parsed.probes.length === 0)
    throw new Error(`no probes in test/vectors/merkle/${name}`);
  return parsed.probes;
}

const tree = JSON.parse(readFileSync(new URL('tree.json', VECTORS), 'utf8')) as TreeVectors;
if (tree.leaf_inputs.length !== 8 || tree.root_hashes.length !== 9)
  throw new Error('test/vectors/merkle/tree.json is incomplete');
const inclusionProbes = loadProbes<InclusionProbe>('inclusion.json');
const consistencyProbes = loadProbes<ConsistencyProbe>('consistency.json');

const b64 = (text: string) => fromBase64(text, 'vector');
const hexOf = (hashes: Uint8Array[]) => hashes.map(toHex);

/** A HashReader over a tree held in memory; like a real store it refuses subtrees that are not complete. */
function memoryReader(leafHashes: Uint8Array[]): HashReader {
  const levels: Uint8Array[][] = [leafHashes];
  for (let below = leafHashes; below.length > 1;) {
    const above: Uint8Array[] = [];
    for (let i = 0; i + 1 < below.length; i += 2) above.push(nodeHash(below[i]!, below[i + 1]!));
    levels.push(above);
    below = above;
  }
  return (level, index) => {
    const found = levels[level]?.[index];
    if (found === undefined) throw new Error(`no complete subtree at level ${level} index ${index}`);
    return found;
  };
}

/** Leaf hashes of a deterministic tree: entry i is the UTF-8 text of i, as many as needed. */
const leafCache: Uint8Array[] = [];
function testLeaves(count: number): Uint8Array[] {
  while (leafCache.length < count) leafCache.push(leafHash(utf8(`entry ${leafCache.length}`)));
  return leafCache.slice(0, count);
}

const vectorLeaves = tree.leaf_inputs.map((hex) => leafHash(fromHex(hex)));
const vectorReader = memoryReader(vectorLeaves);
const vectorRoot = (size: number) => tree.root_hashes[size]!;

describe('RFC 6962 test tree (transparency-dev/merkle testonly/constants.go)', () => {
  it('leaf hashes are SHA-256(0x00 || entry)', () => {
    expect(vectorLeaves.map(toHex)).toEqual(tree.node_hashes[0]);
  });

  it('node hashes of every complete subtree', () => {
    for (let level = 1; level < tree.node_hashes.length; level++) {
      tree.node_hashes[level]!.forEach((expected, index) => {
        const left = fromHex(tree.node_hashes[level - 1]![2 * index]!);
        const right = fromHex(tree.node_hashes[level - 1]![2 * index + 1]!);
        expect(toHex(nodeHash(left, right)), `level ${level} index ${index}`).toBe(expected);
      });
    }
  });

  it('roots of the trees of size 0 to 8', () => {
    for (let size = 0; size <= 8; size++) {
      expect(toHex(treeHash(size, vectorReader)), `size ${size}`).toBe(vectorRoot(size));
    }
  });
});

describe('inclusion probes (transparency-dev/merkle testdata/inclusion)', () => {
  it.each(inclusionProbes.map(({ file, probe }) => [file, probe] as const))('%s', (_file, p) => {
    const verify = () => verifyInclusion(b64(p.leafHash), p.leafIdx, p.treeSize, (p.proof ?? []).map(b64), b64(p.root));
    if (p.wantErr) expect(verify).toThrow(/./);
    else expect(verify).not.toThrow();
  });

  const happy = inclusionProbes.filter(
    ({ probe }) => !probe.wantErr && probe.treeSize <= 8 && toHex(b64(probe.root)) === vectorRoot(probe.treeSize),
  );
  it('our inclusionProof gives the published proof for every happy path of the test tree', () => {
    expect(happy.length).toBeGreaterThanOrEqual(4);
    for (const { file, probe } of happy) {
      const proof = inclusionProof(probe.leafIdx, probe.treeSize, vectorReader);
      expect(hexOf(proof), file).toEqual((probe.proof ?? []).map((p) => toHex(b64(p))));
    }
  });
});

describe('consistency probes (transparency-dev/merkle testdata/consistency)', () => {
  it.each(consistencyProbes.map(({ file, probe }) => [file, probe] as const))('%s', (_file, p) => {
    const verify = () => verifyConsistency(p.size1, p.size2, (p.proof ?? []).map(b64), b64(p.root1), b64(p.root2));
    if (p.wantErr) expect(verify).toThrow(/./);
    else expect(verify).not.toThrow();
  });

  const happy = consistencyProbes.filter(
    ({ probe }) => !probe.wantErr && probe.size2 <= 8 && toHex(b64(probe.root2)) === vectorRoot(probe.size2),
  );
  it('our consistencyProof gives the published proof for every happy path of the test tree', () => {
    expect(happy.length).toBeGreaterThanOrEqual(4);
    for (const { file, probe } of happy) {
      const proof = consistencyProof(probe.size1, probe.size2, vectorReader);
      expect(hexOf(proof), file).toEqual((probe.proof ?? []).map((p) => toHex(b64(p))));
    }
  });
});

describe('errors', () => {
  const root8 = fromHex(vectorRoot(8));
  const proof05 = inclusionProof(5, 8, vectorReader);

  it('a wrong root is a MismatchError naming both roots in hex', () => {
    const wrong = new Uint8Array(32);
    const err = catchError(() => verifyInclusion(vectorLeaves[5]!, 5, 8, proof05, wrong));
    expect(err).toBeInstanceOf(MismatchError);
    expect((err as MismatchError).expected).toBe(toHex(wrong));
    expect((err as MismatchError).actual).toBe(vectorRoot(8));
  });

  it('an index outside the tree, a bad size or a proof of the wrong length is a FormatError', () => {
    expect(() => verifyInclusion(vectorLeaves[5]!, 8, 8, proof05, root8)).toThrow(FormatError);
    expect(() => verifyInclusion(vectorLeaves[5]!, -1, 8, proof05, root8)).toThrow(FormatError);
    expect(() => verifyInclusion(vectorLeaves[5]!, 1.5, 8, proof05, root8)).toThrow(FormatError);
    expect(() => verifyInclusion(vectorLeaves[5]!, 5, 2 ** 53, proof05, root8)).toThrow(FormatError);
    expect(() => verifyInclusion(vectorLeaves[5]!, 5, 8, proof05.slice(1), root8)).toThrow(/expected 3 hashes, got 2/);
    expect(() => verifyInclusion(vectorLeaves[5]!, 5, 8, [...proof05, root8], root8)).toThrow(FormatError);
    expect(() =>
      verifyInclusion(vectorLeaves[5]!, 5, 8, [proof05[0]!.subarray(1), ...proof05.slice(1)], root8),
    ).toThrow(/proof\[0\]: expected 32 bytes/);
    expect(() => inclusionProof(8, 8, vectorReader)).toThrow(FormatError);
  });

  it('consistency: sizes out of order or from the empty tree are FormatErrors; a wrong old root a MismatchError', () => {
    const proof = consistencyProof(3, 8, vectorReader);
    expect(() => verifyConsistency(8, 3, proof, root8, root8)).toThrow(FormatError);
    expect(() => verifyConsistency(0, 8, proof, root8, root8)).toThrow(FormatError);
    expect(() => consistencyProof(0, 8, vectorReader)).toThrow(FormatError);
    const err = catchError(() => verifyConsistency(3, 8, proof, fromHex(vectorRoot(4)), root8));
    expect(err).toBeInstanceOf(MismatchError);
    expect((err as MismatchError).message).toContain('old root');
  });

  it('a reader that does not know a needed hash makes proof generation fail', () => {
    const partial = memoryReader(vectorLeaves.slice(0, 5));
    expect(() => inclusionProof(1, 8, partial)).toThrow(/no complete subtree/);
  });
});

describe('properties (random trees of up to 2,000 leaves)', () => {
  const sizeAndIndex = fc
    .integer({ min: 1, max: 2000 })
    .chain((size) => fc.tuple(fc.constant(size), fc.integer({ min: 0, max: size - 1 })));

  it('the root is the fold of subtreesOf(size), each a complete subtree, and matches an independent recursion', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2000 }), (size) => {
        const leaves = testLeaves(size);
        const subtrees = subtreesOf(size);
        expect(subtrees.reduce((sum, s) => sum + 2 ** s.level, 0)).toBe(size);
        expect(toHex(treeHash(size, memoryReader(leaves)))).toBe(toHex(referenceRoot(leaves)));
      }),
      { numRuns: 60 },
    );
  });

  it('inclusion proofs verify; a flipped bit, another index or another size fails', () => {
    fc.assert(
      fc.property(sizeAndIndex, fc.nat(), fc.nat(), fc.nat(), ([size, index], pick, bit, other) => {
        const leaves = testLeaves(size);
        const read = memoryReader(leaves);
        const root = treeHash(size, read);
        const proof = inclusionProof(index, size, read);
        verifyInclusion(leaves[index]!, index, size, proof, root);
        expect(toHex(rootFromInclusionProof(leaves[index]!, index, size, proof))).toBe(toHex(root));

        const readsOnly = new Set(inclusionProofCoordinates(index, size).map((s) => `${s.level}/${s.index}`));
        const restricted: HashReader = (level, i) => {
          if (!readsOnly.has(`${level}/${i}`)) throw new Error(`read outside the coordinates: ${level}/${i}`);
          return read(level, i);
        };
        expect(hexOf(inclusionProof(index, size, restricted))).toEqual(hexOf(proof));

        if (proof.length > 0) {
          const flipped = flipBit(proof, pick, bit);
          expect(() => verifyInclusion(leaves[index]!, index, size, flipped, root)).toThrow(MismatchError);
        }
        const otherIndex = other % size;
        if (otherIndex !== index) {
          expect(() => verifyInclusion(leaves[index]!, otherIndex, size, proof, root)).toThrow();
        }
        const otherSize = index + 1 + (other % 2000);
        if (otherSize !== size) {
          const otherRoot = treeHash(otherSize, memoryReader(testLeaves(otherSize)));
          expect(() => verifyInclusion(leaves[index]!, index, otherSize, proof, otherRoot)).toThrow();
        }
      }),
      { numRuns: 150 },
    );
  });

  it('consistency proofs verify; a flipped bit or another old size fails', () => {
    const sizes = fc
      .integer({ min: 1, max: 2000 })
      .chain((newSize) => fc.tuple(fc.integer({ min: 1, max: newSize }), fc.constant(newSize)));
    fc.assert(
      fc.property(
        sizes,
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 1, max: 2000 }),
        ([oldSize, newSize], pick, bit, other) => {
          const leaves = testLeaves(newSize);
          const read = memoryReader(leaves);
          const oldRoot = treeHash(oldSize, read);
          const newRoot = treeHash(newSize, read);
          const proof = consistencyProof(oldSize, newSize, read);
          verifyConsistency(oldSize, newSize, proof, oldRoot, newRoot);

          const readsOnly = new Set(consistencyProofCoordinates(oldSize, newSize).map((s) => `${s.level}/${s.index}`));
          const restricted: HashReader = (level, i) => {
            if (!readsOnly.has(`${level}/${i}`)) throw new Error(`read outside the coordinates: ${level}/${i}`);
            return read(level, i);
          };
          expect(hexOf(consistencyProof(oldSize, newSize, restricted))).toEqual(hexOf(proof));

          if (proof.length > 0) {
            const flipped = flipBit(proof, pick, bit);
            expect(() => verifyConsistency(oldSize, newSize, flipped, oldRoot, newRoot)).toThrow(MismatchError);
          }
          const otherOld = other % (newSize + 1);
          if (otherOld !== oldSize) {
            const otherRoot = treeHash(otherOld, read);
            expect(() => verifyConsistency(otherOld, newSize, proof, otherRoot, newRoot)).toThrow();
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('an injected hasher (node:crypto) gives the same proofs and roots as the default', () => {
    const hasher: Hasher = (data) => new Uint8Array(nodeHash256('sha256', data, 'buffer'));
    const leaves = testLeaves(777);
    const read = memoryReader(leaves);
    expect(toHex(treeHash(777, read, hasher))).toBe(toHex(treeHash(777, read)));
    expect(hexOf(inclusionProof(300, 777, read, hasher))).toEqual(hexOf(inclusionProof(300, 777, read)));
    expect(toHex(leafHash(utf8('x'), hasher))).toBe(toHex(leafHash(utf8('x'))));
  });
});

/** RFC 6962 §2.1 MTH written as the RFC states it, recursively over the leaf hashes. */
function referenceRoot(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(referenceRoot(leaves.slice(0, k)), referenceRoot(leaves.slice(k)));
}

/** A copy of `proof` with one bit flipped: element `pick` mod length, bit `bit` mod 256 of it. */
function flipBit(proof: Uint8Array[], pick: number, bit: number): Uint8Array[] {
  const flipped = proof.map((p) => p.slice());
  const element = flipped[pick % flipped.length]!;
  const at = Math.floor(bit / 8) % 32;
  element[at] = element[at]! ^ (1 << (bit % 8));
  return flipped;
}

function catchError(fn: () => void): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}
