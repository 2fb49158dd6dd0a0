// Benchmark of big days against the machine's limit: for each day size (1 M and 10 M hashes a day by default),
// `days` days of random hashes, one `timeseal ledger build` a day; per build its wall time, peak RSS and bytes
// written, and, measured in the same run right after it, the machine's limit for that build: the time to write
// and fsync as many random bytes as the build wrote (on the archive's disk) plus SHA-256 of the tree's nodes
// (2 N - 1 for N leaves, 64-byte blocks) at OpenSSL's one-core rate for 64-byte blocks (`openssl speed`). Then
// one profile of a build (--cpu-prof: where the time goes, by self time).
// Prints a Markdown section. Usage: node bench/tenmillion.bench.ts [--hashes 1000000,10000000] [--days 2]
//   [--profile 1000000] (0: no profile) [--drop-caches]; node bench/run.ts --only tenmillion
// --drop-caches (root only): before each build, sync and empty the kernel's page, inode and dentry caches, so
// that every day's build starts from the same state. On this machine's ext4 (no journal) the kernel's time to
// create a file grows with what those caches hold: without it a build's system time rose from 6 to 27 s over
// half an hour of the same build repeated (docs/BENCHMARKS.md, "The kernel's caches and a build's system time").
// The database is then read once, back into the page cache: a server's build finds the day's rows there, where its
// day of submissions put them (a 10 M-hash day's database is 1.4 GB); read cold, the day's row count alone took
// 4.2 s instead of 0.2 s, a cost of the bench's emptying, not of the build.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { enqueueRandom, hashRate, mb, run, timed, writeLimit } from './common.ts';

const { values } = parseArgs({
  options: {
    hashes: { type: 'string', default: '1000000,10000000' },
    days: { type: 'string', default: '2' },
    profile: { type: 'string', default: '1000000' },
    'drop-caches': { type: 'boolean', default: false },
  },
});
const sizes = values.hashes.split(',').map(Number);
const days = Number(values.days);
const profileSize = Number(values.profile);
const dropCaches = values['drop-caches'];

/** Writes the dirty pages out, then empties the page, dentry and inode caches (needs root), and reads `keep`
 * back into the page cache. */
function emptyKernelCaches(keep: string): void {
  execFileSync('sync');
  fs.writeFileSync('/proc/sys/vm/drop_caches', '3\n');
  const fd = fs.openSync(keep, 'r');
  try {
    const buffer = Buffer.allocUnsafe(8 << 20);
    while (fs.readSync(fd, buffer, 0, buffer.length, null) > 0);
  } finally {
    fs.closeSync(fd);
  }
}

function project(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-big-'));
  run(['keys', 'init'], dir);
  return dir;
}

const nextDay = (date: string) => new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

interface Row {
  size: number;
  day: number;
  seconds: number;
  cpu: number;
  system: number;
  load: number;
  rss: number;
  bytes: number;
  files: number;
  write: number;
  hash: number;
  rate: number;
}

/** Free bytes on the file system of `dir`. */
function freeBytes(dir: string): number {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
}

// The machine is shared: a day is not started when it could leave less than this free (its rows, its files and
// its sort's spill, at about 400 bytes a hash, on top of this floor).
const FREE_FLOOR = 15 * 2 ** 30;

const rows: Row[] = [];
for (const size of sizes) {
  const dir = project();
  let date = '2025-11-02';
  for (let d = 1; d <= days; d++) {
    if (freeBytes(dir) - 400 * size < FREE_FLOOR) {
      throw new Error(
        `day ${d} of ${size} hashes not started: ${mb(freeBytes(dir))} free in ${dir}, under ${mb(FREE_FLOOR + 400 * size)}`,
      );
    }
    const enqueueStarted = process.hrtime.bigint();
    enqueueRandom(dir, date, size);
    const enqueueSeconds = Number(process.hrtime.bigint() - enqueueStarted) / 1e9;
    if (dropCaches) emptyKernelCaches(path.join(dir, 'data/timeseal.db'));
    const m = timed(['ledger', 'build', '--json'], dir, { TIMESEAL_NOW: `${nextDay(date)}T00:01:00Z` });
    const out = JSON.parse(m.stdout) as {
      days: { filesWritten: number; bytesWritten: number }[];
      index: { filesWritten: number; bytesWritten: number };
    };
    const bytes = out.days[0]!.bytesWritten + out.index.bytesWritten;
    const files = out.days[0]!.filesWritten + out.index.filesWritten;
    const write = writeLimit(dir, bytes);
    const rate = hashRate();
    const hash = ((2 * size - 1) * 64) / rate;
    const load = os.loadavg()[0]!;
    rows.push({
      size,
      day: d,
      seconds: m.seconds,
      cpu: m.cpuSeconds,
      system: m.systemSeconds,
      load,
      rss: m.maxRssMb,
      bytes,
      files,
      write,
      hash,
      rate,
    });
    process.stderr.write(
      `${size} a day, day ${d} (enqueued in ${enqueueSeconds.toFixed(1)} s, ${mb(freeBytes(dir))} free after): ${m.seconds.toFixed(1)} s (CPU ${m.cpuSeconds.toFixed(1)} s of which system ${m.systemSeconds.toFixed(1)} s, load ${load.toFixed(1)}), RSS ${m.maxRssMb.toFixed(0)} MB, ${mb(bytes)} (${files} files); limit ${(write + hash).toFixed(1)} s (write+fsync ${write.toFixed(1)} s, SHA-256 ${hash.toFixed(1)} s at ${(rate / 1e6).toFixed(0)} MB/s)\n`,
    );
    date = nextDay(date);
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

const lines: string[] = [
  '## Big days against the machine’s limit (`timeseal ledger build`)',
  '',
  `Random hashes, one \`timeseal ledger build\` a day (\`node bench/tenmillion.bench.ts --hashes ${sizes.join(',')} --days ${days}${dropCaches ? ' --drop-caches' : ''}\`). "limit" is measured in the same run right after each build: write and fsync as many random bytes as the build wrote, in the archive's folder, plus SHA-256 of the tree's 2 N − 1 nodes as 64-byte blocks at OpenSSL's one-core rate for 64-byte blocks (\`openssl speed -bytes 64 sha256\`, best of three 1 s runs). "CPU" is the build's user + system time over its threads (the system part in brackets),${dropCaches ? " the kernel's caches emptied before each build and the database read back into them (--drop-caches)," : ''} "load" the 1-minute load average right after it. Bytes and files are the build's own count (the day and the index upkeep).`,
  '',
  `Load average when the section was written: ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(
      ', ',
    )} on ${os.cpus().length} cores (the machine is shared: a build waits for the CPU, the limit mostly does not).`,
  '',
  '| hashes a day | day | build wall time | CPU (system) | load | peak RSS | bytes written (files) | limit (write+fsync + SHA-256) | build ÷ limit |',
  '|---|---|---|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.size.toLocaleString('en-US')} | ${r.day} | ${r.seconds.toFixed(1)} s | ${r.cpu.toFixed(1)} s (${r.system.toFixed(1)} s) | ${r.load.toFixed(1)} | ${r.rss.toFixed(0)} MB | ${mb(r.bytes)} (${r.files.toLocaleString('en-US')}) | ${(r.write + r.hash).toFixed(1)} s (${r.write.toFixed(1)} + ${r.hash.toFixed(1)} at ${(r.rate / 1e6).toFixed(0)} MB/s) | ${(r.seconds / (r.write + r.hash)).toFixed(1)}× |`,
  ),
  '',
];
for (const size of sizes) {
  const first = rows.find((r) => r.size === size && r.day === 1);
  const last = rows.filter((r) => r.size === size).at(-1);
  if (first && last && last !== first) {
    lines.push(
      `- ${size.toLocaleString('en-US')} a day, day ${last.day} ÷ day 1: time ×${(last.seconds / first.seconds).toFixed(2)}, RSS ×${(last.rss / first.rss).toFixed(2)}, bytes ×${(last.bytes / first.bytes).toFixed(2)}.`,
    );
  }
}
lines.push('');

// Where the time goes: one build of `profileSize` hashes (the second day of an archive) under --cpu-prof, the
// functions with the most self time.
if (profileSize > 0) {
  const dir = project();
  enqueueRandom(dir, '2025-11-02', profileSize);
  run(['ledger', 'build'], dir, { TIMESEAL_NOW: '2025-11-03T00:01:00Z' });
  enqueueRandom(dir, '2025-11-03', profileSize);
  const profDir = path.join(dir, 'prof');
  run(['ledger', 'build'], dir, {
    TIMESEAL_NOW: '2025-11-04T00:01:00Z',
    NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir}`,
  });
  const { total, rows: top } = selfTimes(profDir);
  lines.push(
    `Where the time of a build goes (day 2 of ${profileSize.toLocaleString('en-US')} a day under \`--cpu-prof\`; self time summed over its profiles, the main thread's and its workers', ${(total / 1e6).toFixed(1)} s of CPU sampled: what the wall time has beyond that is waiting, for the disk or for a core):`,
    '',
    '| function | where | self time | share |',
    '|---|---|---|---|',
    ...top
      .slice(0, 12)
      .map(
        (f) =>
          `| ${f.name || '(anonymous)'} | ${f.where} | ${(f.us / 1e6).toFixed(2)} s | ${((100 * f.us) / total).toFixed(0)} % |`,
      ),
    '',
  );
  fs.rmSync(dir, { recursive: true, force: true });
}

process.stdout.write(lines.join('\n'));

/** Self time by function over every profile in `dir`, largest first. */
function selfTimes(dir: string): { total: number; rows: Array<{ name: string; where: string; us: number }> } {
  const by = new Map<string, { name: string; where: string; us: number }>();
  let total = 0;
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const prof = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as {
      nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
      samples: number[];
      timeDeltas: number[];
    };
    const nodes = new Map(prof.nodes.map((n) => [n.id, n]));
    prof.samples.forEach((id, i) => {
      const n = nodes.get(id)!;
      const us = prof.timeDeltas[i] ?? 0;
      total += us;
      const where = n.callFrame.url
        ? `${n.callFrame.url.replace(/^file:\/\/.*?\/(node_modules|core|pipeline|store|cli|runtime)\//, (_, f: string) => (f === 'node_modules' ? '' : `${f}/`))}:${n.callFrame.lineNumber + 1}`
        : '(native)';
      const key = `${n.callFrame.functionName}@${where}`;
      const e = by.get(key) ?? { name: n.callFrame.functionName, where, us: 0 };
      e.us += us;
      by.set(key, e);
    });
  }
  return { total, rows: [...by.values()].sort((a, b) => b.us - a.us) };
}
