// Benchmark of the index merge alone (pipeline/segment-files.ts): a day's segment written on its own, and the
// same day merged at once with an older segment of as many records, as a merge day of the build writes it. The
// day's hashes are sorted by construction (a 32-bit counter in their first bytes, the rest pseudo-random from a
// fixed seed), so the merged file is the same from run to run and its SHA-256 can be compared across versions of
// the code. Each case runs `--rounds` times in turns; user and system time are the process's own (the merge
// runs on the calling thread here; in a build it runs on the bundles' worker).
// Prints a Markdown section. Usage: node bench/segment-merge.bench.ts [--records 10000000] [--rounds 3]
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { writeDayMergedSegment, writeDaySegment, type Written } from '../pipeline/segment-files.ts';
import { gitCommit, ROOT } from './common.ts';

const { values } = parseArgs({
  options: { records: { type: 'string', default: '10000000' }, rounds: { type: 'string', default: '3' } },
});
const n = Number(values.records);
const rounds = Number(values.rounds);

/** n sorted distinct hashes (first 4 bytes a counter spread over 2^32, the rest xorshift32 from `seed`). */
function sortedDay(seed: number): { hashes: Uint8Array; ms: Float64Array } {
  const hashes = new Uint8Array(32 * n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < hashes.length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    hashes[i] = x & 255;
  }
  const step = 2 ** 32 / n;
  const ms = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const top = Math.floor(i * step) >>> 0;
    hashes.set([top >>> 24, (top >>> 16) & 255, (top >>> 8) & 255, top & 255], 32 * i);
    ms[i] = 1_762_000_000_000 + i;
  }
  return { hashes, ms };
}

function* batches(day: { hashes: Uint8Array; ms: Float64Array }) {
  for (let at = 0; at < n; at += 65_536) {
    const end = Math.min(at + 65_536, n);
    yield { hashes: day.hashes.subarray(32 * at, 32 * end), ms: day.ms.subarray(at, end) };
  }
}

function measured(write: () => void): { wall: number; user: number; system: number } {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  write();
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  return { wall, user: used.user / 1e6, system: used.system / 1e6 };
}

const archive = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-segment-merge-'));
const written: Written = { files: 0, bytes: 0 };
writeDaySegment(archive, 0, n, batches(sortedDay(0x9e3779b9)), written);
const day = sortedDay(12345);
const own = path.join(archive, `index/${n}-${2 * n}.idx`);
const merged = path.join(archive, `index/0-${2 * n}.idx`);
const rows: string[] = [];
let digest = '';
for (let r = 1; r <= rounds; r++) {
  fs.rmSync(own, { force: true });
  const alone = measured(() => writeDaySegment(archive, n, n, batches(day), written));
  fs.rmSync(merged, { force: true });
  const both = measured(() => writeDayMergedSegment(archive, [{ from: 0, to: n }], n, n, batches(day), written));
  digest = crypto.createHash('sha256').update(fs.readFileSync(merged)).digest('hex');
  for (const [what, m] of [
    ['the day alone', alone],
    ['merged with the older segment', both],
  ] as const)
    rows.push(
      `| ${r} | ${what} | ${m.wall.toFixed(2)} s | ${m.user.toFixed(2)} s | ${m.system.toFixed(2)} s | ${(fs.statSync(what === 'the day alone' ? own : merged).size / 2 ** 20).toFixed(1)} MB |`,
    );
}
fs.rmSync(archive, { recursive: true, force: true });

process.stdout.write(
  [
    '## The index merge alone (`node bench/segment-merge.bench.ts`)',
    '',
    `A day of ${n.toLocaleString('en-US')} sorted hashes written as its own index segment, and merged at once with an older segment of as many records (main ${gitCommit(ROOT)}, ${new Date().toISOString().slice(0, 16)} UTC). SHA-256 of the merged file: \`${digest}\`.`,
    '',
    '| round | segment | wall | user | system | file |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n'),
);
