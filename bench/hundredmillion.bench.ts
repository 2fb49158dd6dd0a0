// Benchmark of one day of 100,000,000 hashes end to end, in one fresh project, each step the real CLI under GNU
// time (`/usr/bin/time -v`: wall, user + system CPU, peak RSS):
//   1. `timeseal import -` of `--hashes` random hex lines piped from this process (a generator, never a file);
//   2. `timeseal ledger build` (bytes as the build counts them, and the bench's limit for them as
//      bench/tenmillion.bench.ts measures it: write + fsync of as many random bytes, here of at most
//      LIMIT_SAMPLE of them scaled to the whole, plus SHA-256 of the tree's 2 N − 1 nodes at OpenSSL's rate);
//   3. `timeseal anchor` against three loopback OpenTimestamps calendars (test/anchor/servers.ts, the CLI tests'
//      stand-in);
//   4. `timeseal proof <a hash of the day>` and `timeseal verify` of the whole archive;
//   5. `timeseal serve` on it: GET /api/status/<hash>, GET /api/proof/<hash>, the site's verified search (its
//      real verifiedSearch over HTTP, bytes and time), a byte range of the day's ledger file, and the whole file
//      through curl to /dev/null while the server's RSS is sampled from /proc.
// The free space of the project's file system is sampled through each step (the smallest is printed).
// Prints a Markdown section. Usage: node bench/hundredmillion.bench.ts [--hashes 100000000] [--dir DIR] [--keep]
//   (DIR: a new folder for the project, by default one under the system's temporary folder; removed at the end
//   unless --keep).
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { verifiedSearch } from '../site/src/lib/verified-search.ts';
import { LoopbackCalendar } from '../test/anchor/servers.ts';
import { benchProjectEnv, gitCommit, hashRate, keysInit, machine, mb, ROOT, TIMESEAL, writeLimit } from './common.ts';

const { values } = parseArgs({
  options: {
    hashes: { type: 'string', default: '100000000' },
    dir: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const HASHES = Number(values.hashes);
const DATE = '2025-11-02';
const IMPORT_AT = `${DATE}T12:00:00Z`;
const BUILD_AT = '2025-11-03T00:01:00Z';
const AFTER = '2025-11-03T00:05:00Z';
/** The limit's write and fsync is measured on at most this many bytes and scaled to the build's. */
const LIMIT_SAMPLE = 4 * 2 ** 30;

// The disk the run needs at its peak (SQLite's staging table, database and WAL during the import; the database,
// the day's files and the sort's spill during the build): 380 bytes a hash in the run of docs/BENCHMARKS.md,
// counted as 400, on top of a floor left free for the machine's other users.
const NEEDED = 400 * HASHES + 15 * 2 ** 30;
const parent = values.dir === undefined ? os.tmpdir() : path.dirname(path.resolve(values.dir));
const { bavail, bsize } = fs.statfsSync(parent);
if (bavail * bsize < NEEDED) {
  process.stdout.write(
    `## One day of ${HASHES.toLocaleString('en-US')} hashes end to end\n\nNot run: ${mb(bavail * bsize)} free in ${parent}, under the ${mb(NEEDED)} the run needs (400 bytes a hash at its peak and 15 GiB left free).\n`,
  );
  process.exit(0);
}
const dir = values.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-100m-'));
fs.mkdirSync(path.join(dir, 'tmp'), { recursive: true });
const calendars = [new LoopbackCalendar(), new LoopbackCalendar(), new LoopbackCalendar()];
for (const c of calendars) await c.start();
const env = benchProjectEnv(dir, {
  OTS_CALENDARS: calendars.map((c) => c.url).join(','),
  // SQLite's temporary files (the import's staging table) on the project's disk, counted in its free space.
  TMPDIR: path.join(dir, 'tmp'),
  NODE_COMPILE_CACHE: path.join(os.tmpdir(), 'node-compile-cache'),
});
keysInit(dir, { ...env, TIMESEAL_NOW: '2025-11-01T00:00:00Z' });

const freeBytes = (): number => {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
};
const log = (line: string): void => void process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

interface Step {
  name: string;
  seconds: number;
  user: number;
  system: number;
  rssMb: number;
  minFree: number;
  stdout: string;
}
const steps: Step[] = [];

/** `timeseal ARGS` under `/usr/bin/time -v`, asynchronously (the loopback calendars answer from this process);
 *  `feed` writes its stdin. Throws with its stderr on failure. */
async function measure(
  name: string,
  args: string[],
  extra: Record<string, string>,
  feed?: (stdin: NodeJS.WritableStream) => Promise<void>,
): Promise<Step> {
  let minFree = freeBytes();
  const sampler = setInterval(() => (minFree = Math.min(minFree, freeBytes())), 1000);
  const child = spawn('/usr/bin/time', ['-v', TIMESEAL, ...args], {
    cwd: dir,
    env: { ...env, ...extra },
    stdio: [feed ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (feed) {
    await feed(child.stdin!);
    child.stdin!.end();
  }
  const code = await exited;
  clearInterval(sampler);
  const field = (label: string): number => {
    const m = new RegExp(`${label}: (.*)`).exec(stderr)?.[1];
    if (m === undefined) throw new Error(`${name}: no "${label}" in the output of time -v:\n${stderr}`);
    if (!m.includes(':')) return Number(m);
    return m.split(':').reduce((a, p) => a * 60 + Number(p), 0);
  };
  if (code !== 0) throw new Error(`${name}: timeseal ${args.join(' ')} failed (${code}):\n${stderr.slice(-4000)}`);
  const step: Step = {
    name,
    seconds: field('Elapsed \\(wall clock\\) time \\(h:mm:ss or m:ss\\)'),
    user: field('User time \\(seconds\\)'),
    system: field('System time \\(seconds\\)'),
    rssMb: field('Maximum resident set size \\(kbytes\\)') / 1024,
    minFree,
    stdout,
  };
  steps.push(step);
  log(
    `${name}: ${step.seconds.toFixed(1)} s, CPU ${(step.user + step.system).toFixed(1)} s, RSS ${step.rssMb.toFixed(0)} MB, ${mb(minFree)} free at least`,
  );
  return step;
}

// 1. The import, piped: 65-byte lines written as the pipe drains, a few hashes of the day kept for the lookups.
const samples: string[] = [];
const LINES = 16_384;
const started = Date.now();
const imported = await measure('import', ['import', '-'], { TIMESEAL_NOW: IMPORT_AT }, async (stdin) => {
  const every = Math.max(1, Math.floor(HASHES / 10));
  for (let i = 0; i < HASHES; i += LINES) {
    const n = Math.min(LINES, HASHES - i);
    const hex = crypto.randomBytes(32 * n).toString('hex');
    const out = Buffer.allocUnsafe(65 * n);
    for (let k = 0; k < n; k++) {
      out.write(hex.slice(64 * k, 64 * k + 64), 65 * k, 'latin1');
      out[65 * k + 64] = 10;
      if ((i + k) % every === 0) samples.push(hex.slice(64 * k, 64 * k + 64));
    }
    if (!stdin.write(out)) await new Promise((resolve) => stdin.once('drain', resolve));
    if (i % (10 * 1_048_576) < LINES)
      log(`import: ${i.toLocaleString('en-US')} lines in ${(Date.now() - started) / 1000} s`);
  }
});
const afterImport = folderSize(dir);

// 2. The build.
const build = await measure('build', ['ledger', 'build', '--json'], { TIMESEAL_NOW: BUILD_AT });
const built = JSON.parse(build.stdout) as {
  days: { filesWritten: number; bytesWritten: number }[];
  index: { filesWritten: number; bytesWritten: number };
};
const bytes = built.days[0]!.bytesWritten + built.index.bytesWritten;
const files = built.days[0]!.filesWritten + built.index.filesWritten;
const sample = Math.min(bytes, LIMIT_SAMPLE);
const write = (writeLimit(dir, sample) * bytes) / sample;
const rate = hashRate();
const hash = ((2 * HASHES - 1) * 64) / rate;
const ledgerFile = path.join(dir, 'ledgers', `${DATE}.json`);
const ledgerBytes = fs.statSync(ledgerFile).size;
const afterBuild = folderSize(dir);
log(`limit ${(write + hash).toFixed(1)} s (write+fsync ${write.toFixed(1)} s, SHA-256 ${hash.toFixed(1)} s)`);

// 3. Anchoring: the day's commitment to the three loopback calendars.
const anchor = await measure('anchor', ['anchor', '--json'], { TIMESEAL_NOW: AFTER });
const stamped = (JSON.parse(anchor.stdout) as { days: { outcome: string; answered: string[] }[] }).days;
if (stamped.length !== 1 || stamped[0]!.outcome !== 'stamped') throw new Error(`anchor: ${anchor.stdout}`);

// 4. A proof and the whole archive verified.
const target = samples[Math.floor(samples.length / 2)]!;
const proof = await measure('proof', ['proof', target], { TIMESEAL_NOW: AFTER });
const bundle = JSON.parse(proof.stdout) as { hash?: string };
if (JSON.stringify(bundle).indexOf(target) < 0) throw new Error(`proof: the bundle does not name ${target}`);
await measure('verify', ['verify'], { TIMESEAL_NOW: AFTER });

// 5. The server.
const server = await startServer();
const base = server.url;
const timeGet = async (url: string, n: number): Promise<{ median: number; status: number; bytes: number }> => {
  const times: number[] = [];
  let status = 0;
  let bodyBytes = 0;
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    const res = await fetch(base + url);
    const body = await res.arrayBuffer();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
    status = res.status;
    bodyBytes = body.byteLength;
  }
  return { median: median(times), status, bytes: bodyBytes };
};
const status = await timeGet(`/api/status/${target}`, 21);
const proofGet = await timeGet(`/api/proof/${target}`, 21);
if (status.status !== 200 || proofGet.status !== 200)
  throw new Error(`serve: /api/status ${status.status}, /api/proof ${proofGet.status}`);
const searches: { ms: number; bytes: number; found: boolean }[] = [];
for (const h of [...samples.slice(0, 5), crypto.randomBytes(32).toString('hex')]) {
  let transferred = 0;
  const t = process.hrtime.bigint();
  const result = await verifiedSearch(h, async (url, init) => {
    const res = await fetch(base + url, init);
    const body = new Uint8Array(await res.arrayBuffer());
    transferred += body.length;
    return new Response(res.status === 304 ? null : body, { status: res.status, headers: res.headers });
  });
  searches.push({ ms: Number(process.hrtime.bigint() - t) / 1e6, bytes: transferred, found: result.found });
}
if (!searches.slice(0, 5).every((s) => s.found) || searches[5]!.found)
  throw new Error(`serve: verified search ${JSON.stringify(searches)}`);
const rangeOut = spawnSync(
  'curl',
  [
    '-sS',
    '-o',
    '/dev/null',
    '-r',
    `${ledgerBytes - 1_048_576}-${ledgerBytes - 1}`,
    '-w',
    '%{http_code} %{size_download} %{time_total}',
    `${base}/ledgers/${DATE}.json`,
  ],
  { encoding: 'utf8' },
).stdout.split(' ');
const rssBefore = server.rss();
let rssMax = rssBefore;
const sampler = setInterval(() => (rssMax = Math.max(rssMax, server.rss())), 200);
const whole = await new Promise<string>((resolve, reject) => {
  const c = spawn('curl', [
    '-sS',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code} %{size_download} %{time_total}',
    `${base}/ledgers/${DATE}.json`,
  ]);
  let out = '';
  c.stdout.on('data', (b: Buffer) => (out += b.toString()));
  c.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`curl exited ${code}`))));
}).then((s) => s.split(' '));
clearInterval(sampler);
const rssAfter = server.rss();
const serverHwm = server.hwm();
await server.stop();
for (const c of calendars) await c.stop();
if (rangeOut[0] !== '206' || Number(rangeOut[1]) !== 1_048_576) throw new Error(`ranged GET: ${rangeOut.join(' ')}`);
if (whole[0] !== '200' || Number(whole[1]) !== ledgerBytes) throw new Error(`whole GET: ${whole.join(' ')}`);

const lines = [
  `## One day of ${HASHES.toLocaleString('en-US')} hashes end to end`,
  '',
  `Main at ${gitCommit(ROOT)}, ${new Date(started).toISOString().slice(0, 16)}–${new Date().toISOString().slice(11, 16)} UTC, ${machine()}; load average at the end ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(
      ', ',
    )}. \`node bench/hundredmillion.bench.ts --hashes ${HASHES}\`: one fresh project, each step the real CLI under \`/usr/bin/time -v\`; "least free" is the file system's smallest free space sampled each second of the step.`,
  '',
  '| step | wall | CPU (user + system) | peak RSS | least free |',
  '|---|---|---|---|---|',
  ...steps.map(
    (s) =>
      `| ${s.name} | ${s.seconds.toFixed(1)} s | ${(s.user + s.system).toFixed(1)} s (${s.user.toFixed(1)} + ${s.system.toFixed(1)}) | ${s.rssMb.toFixed(0)} MB | ${mb(s.minFree)} |`,
  ),
  '',
  `- import: ${((imported.seconds / HASHES) * 1e6).toFixed(2)} µs a hash (${Math.round(HASHES / imported.seconds).toLocaleString('en-US')} a second), piped from the bench's generator; the project was then ${mb(afterImport)}.`,
  `- build: ${mb(bytes)} in ${files.toLocaleString('en-US')} files, the day's ledger file ${mb(ledgerBytes)}; the project then ${mb(afterBuild)}. Limit ${(write + hash).toFixed(1)} s (write + fsync ${write.toFixed(1)} s, measured on ${mb(sample)} and scaled; SHA-256 ${hash.toFixed(1)} s at ${(rate / 1e6).toFixed(0)} MB/s): build ÷ limit ${(build.seconds / (write + hash)).toFixed(1)}×.`,
  `- anchor: stamped by ${stamped[0]!.answered.length} loopback calendars.`,
  `- serve (medians of 21): GET /api/status/<hash> ${status.median.toFixed(1)} ms (${status.bytes} B), GET /api/proof/<hash> ${proofGet.median.toFixed(1)} ms (${proofGet.bytes} B).`,
  `- the site's verified search over HTTP: ${searches
    .map((s) => `${s.ms.toFixed(0)} ms ${(s.bytes / 1024).toFixed(1)} KB${s.found ? '' : ' (absent)'}`)
    .join(', ')}.`,
  `- the day's ledger file: the last MiB by Range: ${rangeOut[0]} in ${(Number(rangeOut[2]) * 1000).toFixed(1)} ms; the whole ${mb(ledgerBytes)} through curl: ${whole[0]} in ${Number(whole[2]).toFixed(1)} s; the server's RSS ${rssBefore.toFixed(0)} MB before, ${rssMax.toFixed(0)} MB at most during, ${rssAfter.toFixed(0)} MB after (its peak since start ${serverHwm.toFixed(0)} MB).`,
  '',
];
process.stdout.write(lines.join('\n'));
if (!values.keep) fs.rmSync(dir, { recursive: true, force: true });

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function folderSize(folder: string): number {
  return Number(spawnSync('du', ['-sb', folder], { encoding: 'utf8' }).stdout.split('\t')[0]);
}

async function startServer(): Promise<{ url: string; rss(): number; hwm(): number; stop(): Promise<void> }> {
  const child = spawn(TIMESEAL, ['serve'], {
    cwd: dir,
    env: { ...env, TIMESEAL_NOW: AFTER },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const t = Date.now();
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /Timeseal listening on (http:\/\/\S+)/.exec(output);
      if (m) resolve(m[1]!);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`timeseal serve exited (${code}):\n${output}`)));
  });
  log(`serve: listening after ${((Date.now() - t) / 1000).toFixed(1)} s`);
  const status = (field: string): number => {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    return Number(m?.[1] ?? 0) / 1024;
  };
  return {
    url,
    rss: () => status('VmRSS'),
    hwm: () => status('VmHWM'),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
