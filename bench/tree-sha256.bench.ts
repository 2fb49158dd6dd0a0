// The tree's SHA-256 on one thread, JavaScript (pipeline/small-sha256.ts) against four WebAssembly SIMD lanes
// (pipeline/sha256x4.ts): µs a leaf (SHA-256 of 0x00 ‖ 32 bytes), µs a node (0x01 ‖ 64 bytes, timed as level-0
// tile roots: 255 nodes each), and ms for pipeline/tree-hashes.ts hashBatch of 65,536 entries (its leaves and 256
// tile roots). BENCH_ROUNDS (7) rounds of each, the two ways in turn, the median shown; every SIMD answer is
// checked against the JavaScript one. Run it alone and niced, e.g.
//   flock /tmp/timeseal-measure.lock nice -n 5 node bench/tree-sha256.bench.ts
import crypto from 'node:crypto';
import { sha256x4 } from '../pipeline/sha256x4.ts';
import { leafSha256Into, nodeSha256Into } from '../pipeline/small-sha256.ts';
import { hashBatch } from '../pipeline/tree-hashes.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const ENTRIES = 65_536;
const x4 = sha256x4();
if (!x4) throw new Error('this engine has no WebAssembly SIMD');

const entries = new Uint8Array(crypto.randomBytes(32 * ENTRIES));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const time = (f: () => void): number => {
  const t = process.hrtime.bigint();
  f();
  return Number(process.hrtime.bigint() - t) / 1e6;
};

function jsTileRoot(leaves: Uint8Array, at: number, out: Uint8Array, outAt: number, scratch: Uint8Array): void {
  for (let i = 0; i < 128; i++) nodeSha256Into(leaves, at + 64 * i, scratch, 32 * i);
  for (let width = 64; width >= 1; width /= 2)
    for (let i = 0; i < width; i++) nodeSha256Into(scratch, 64 * i, scratch, 32 * i);
  out.set(scratch.subarray(0, 32), outAt);
}

const ways = {
  js: {
    leaves: (out: Uint8Array) => {
      for (let at = 0; at < entries.length; at += 32) leafSha256Into(entries, at, out, at);
    },
    tiles: (out: Uint8Array) => {
      const scratch = new Uint8Array(128 * 32);
      for (let t = 0; t < ENTRIES / 256; t++) jsTileRoot(entries, t * 8192, out, 32 * t, scratch);
    },
    batch: () => hashBatch(entries, 0, null),
  },
  simd: {
    leaves: (out: Uint8Array) => x4.leaves(entries, 0, ENTRIES, out, 0),
    tiles: (out: Uint8Array) => x4.tileRoots(entries, 0, ENTRIES / 256, out, 0),
    batch: () => hashBatch(entries, 0, x4),
  },
};

type Way = keyof typeof ways;
const results: Record<Way, { leaf: number[]; node: number[]; batch: number[] }> = {
  js: { leaf: [], node: [], batch: [] },
  simd: { leaf: [], node: [], batch: [] },
};
const answers: Record<Way, string[]> = { js: [], simd: [] };
for (let round = -1; round < ROUNDS; round++) {
  for (const way of (round % 2 === 0 ? ['js', 'simd'] : ['simd', 'js']) as Way[]) {
    const leaves = new Uint8Array(32 * ENTRIES);
    const roots = new Uint8Array(32 * (ENTRIES / 256));
    const leafMs = time(() => ways[way].leaves(leaves));
    const nodeMs = time(() => ways[way].tiles(roots));
    let batch: ReturnType<typeof hashBatch> | undefined;
    const batchMs = time(() => (batch = ways[way].batch()));
    answers[way] = [leaves, roots, batch!.leaves, batch!.tileRoots].map((b) => Buffer.from(b).toString('hex'));
    // Round −1 warms up (and lets V8 tier the module up); it is not counted.
    if (round < 0) continue;
    results[way].leaf.push((leafMs * 1000) / ENTRIES);
    results[way].node.push((nodeMs * 1000) / ((ENTRIES / 256) * 255));
    results[way].batch.push(batchMs);
  }
  if (answers.js.some((a, i) => a !== answers.simd[i])) throw new Error(`round ${round}: SIMD and JS differ`);
}

const row = (what: string, unit: string, key: 'leaf' | 'node' | 'batch', digits: number) => {
  const js = median(results.js[key]);
  const simd = median(results.simd[key]);
  return `| ${what} | ${js.toFixed(digits)} ${unit} | ${simd.toFixed(digits)} ${unit} | ${(js / simd).toFixed(2)}× |`;
};
console.log(`Node ${process.version}, ${ROUNDS} rounds, medians, one thread:\n`);
console.log('| | JavaScript | 4 SIMD lanes | JS ÷ SIMD |\n|---|---|---|---|');
console.log(row('a leaf, SHA-256(0x00 ‖ 32 bytes)', 'µs', 'leaf', 3));
console.log(row('a node, SHA-256(0x01 ‖ 64 bytes), in tile roots', 'µs', 'node', 3));
console.log(row(`hashBatch of ${ENTRIES.toLocaleString('en')} entries`, 'ms', 'batch', 1));
