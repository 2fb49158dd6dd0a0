// Benchmark of the index at 100,000,000 hashes: the bytes of a verified lookup, and the time and
// memory of making index-sha256.json. The index is written by the real code (pipeline/segment-files.ts: a
// segment per day, merged by core/index-segments.ts's rule) from `--days` days of random sorted hashes; days
// are larger than a million so that the archive is built in minutes, and no ledger files are written (a
// lookup reads none). Each lookup then runs the site's real verifiedSearch against the folder, counting every
// byte it downloads: the checkpoint, the two public keys, the head, one shard per segment and the inclusion
// proof's tiles. The tiles of each present hash's proof path are written for that lookup (random siblings,
// its leaf in place) with a checkpoint signed over the root they give, so the proof verifies and the sizes are
// exactly those of a real archive of that size.
// Prints a Markdown section. Usage: node bench/index.bench.ts [--hashes 100000000] [--days 3] [--index-json]
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { diskFetcher } from '../test/support/disk-fetcher.ts';
import { mergeStart, type IndexHead } from '../core/index-segments.ts';
import {
  removeUnnamedIndexFiles,
  writeDaySegment,
  writeIndexHead,
  writeMergedSegment,
  type Written,
} from '../pipeline/segment-files.ts';
import { sortedOrder } from '../store/sort-keys.ts';
import { verifiedSearch, type Fetcher } from '../site/src/lib/verified-search.ts';
import { mb, run, timed, writeProofWorld } from './common.ts';

const { values } = parseArgs({
  options: {
    hashes: { type: 'string', default: '100000000' },
    days: { type: 'string', default: '3' },
    'index-json': { type: 'boolean', default: false },
  },
});
const total = Number(values.hashes);
const days = Number(values.days);
const ORIGIN = 'localhost:8080';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-index-bench-'));
run(['keys', 'init'], dir);
const archive = path.join(dir, 'ledgers');
const keysDir = path.join(dir, 'keys');
const lines: string[] = ['## The index at scale (`node bench/index.bench.ts`)', ''];
const log = (m: string) => process.stderr.write(`index.bench: ${m}\n`);

// 1. The index of `days` days, merged as the build merges it.
const head: IndexHead = { treeSize: 0, segments: [] };
const present: { hash: string; leaf: number }[] = [];
const written: Written = { files: 0, bytes: 0 };
const started = performance.now();
for (let d = 0; d < days; d++) {
  const n = Math.floor(total / days) + (d < total % days ? 1 : 0);
  const raw = crypto.randomBytes(32 * n);
  const order = sortedOrder(raw, n);
  const hashes = new Uint8Array(32 * n);
  order.forEach((i, k) => hashes.set(raw.subarray(32 * i, 32 * i + 32), 32 * k));
  const ms = new Float64Array(n).fill(Date.parse('2025-11-02T12:00:00Z') + d * 86_400_000);
  for (let k = 0; k < Math.ceil(20 / days); k++) {
    const i = Math.floor(Math.random() * n);
    present.push({ hash: Buffer.from(hashes.subarray(32 * i, 32 * i + 32)).toString('hex'), leaf: head.treeSize + i });
  }
  head.segments.push(writeDaySegment(archive, head.treeSize, n, [{ hashes, ms }], written));
  head.treeSize += n;
  writeIndexHead(archive, head);
  for (let start = mergeStart(head.segments); start >= 0; start = mergeStart(head.segments)) {
    const inputs = head.segments.slice(start);
    head.segments.splice(start, inputs.length, writeMergedSegment(archive, inputs, written));
    writeIndexHead(archive, head);
  }
  removeUnnamedIndexFiles(archive, head, () => true, { legacy: false });
  log(
    `day ${d + 1}: ${head.treeSize.toLocaleString('en-US')} leaves, ${head.segments.length} segments, ${mb(written.bytes)} written so far`,
  );
}
const buildSeconds = (performance.now() - started) / 1000;

// 2. Verified lookups: 20 present (from every day), 20 absent.
const privateKeys = path.join(dir, 'data/private-keys');
const size = head.treeSize;

// Served like the web server, segment files by byte range (test/support/disk-fetcher.ts).
const fetcher: Fetcher = diskFetcher(archive, keysDir);

const sample = present.sort(() => Math.random() - 0.5).slice(0, 20);
const found: number[] = [];
for (const { hash, leaf } of sample) {
  writeProofWorld(archive, privateKeys, ORIGIN, size, hash, leaf);
  const result = await verifiedSearch(hash, fetcher);
  if (!result.found || !result.inclusionVerified || result.leafIndex !== leaf)
    throw new Error(`${hash} at leaf ${leaf}: not found and verified`);
  found.push(result.bytesFetched);
}
const absent: number[] = [];
for (let i = 0; i < 20; i++) {
  const result = await verifiedSearch(crypto.randomBytes(32).toString('hex'), fetcher);
  if (result.found) throw new Error('a random hash was found');
  absent.push(result.bytesFetched);
}
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
lines.push(
  `${size.toLocaleString('en-US')} hashes in ${days} days, merged as the build merges them: ${head.segments.length} segments (${head.segments.map((s) => `${((s.to - s.from) / 1e6).toFixed(1)} M`).join(', ')}); the index written in ${buildSeconds.toFixed(0)} s (${written.files.toLocaleString('en-US')} files, ${mb(written.bytes)}, merges included).`,
  '',
  '| verified lookup (site `verifiedSearch`: checkpoint, both public keys, index head, one shard per segment, proof tiles) | worst | mean | goal |',
  '|---|---|---|---|',
  `| ${found.length} present hashes | ${kb(Math.max(...found))} | ${kb(avg(found))} | ≤ 64 KB |`,
  `| ${absent.length} absent hashes | ${kb(Math.max(...absent))} | ${kb(avg(absent))} | ≤ 64 KB |`,
  '',
  `A segment count of log2(N / day) + 1 is the most the merge rule leaves; each extra segment adds one shard (1.4–2.8 KB) to a lookup.`,
  '',
);

log(lines.join(' | '));

// 3. index-sha256.json at this size (optional: about 170 bytes a hash on disk).
if (values['index-json']) {
  const out = path.join(dir, 'index-sha256.json');
  const m = timed(['index-json', '--json', '--out', out], dir, { TIMESEAL_ARCHIVE: archive });
  lines.push(
    `\`timeseal index-json\` at ${size.toLocaleString('en-US')} hashes: ${mb(fs.statSync(out).size)} in ${m.seconds.toFixed(0)} s, peak RSS ${m.maxRssMb.toFixed(0)} MB.`,
    '',
  );
}

fs.rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${lines.join('\n')}\n`);
