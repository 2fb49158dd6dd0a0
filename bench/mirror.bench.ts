// Benchmark of `timeseal mirror pull`: an archive of 10 days of 1,000,000 hashes (10,000,000 entries) served by a
// real `timeseal serve` on loopback, pulled whole into an empty mirror (every file fetched over HTTP and checked
// against the signed log), then, after one more day of 1,000,000 hashes, pulled again: the incremental pull should
// cost about what the new day adds, not what the archive holds. Time, bytes and requests of both pulls.
// Prints a Markdown section. Usage: node bench/mirror.bench.ts [--hashes 1000000] [--days 10]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { enqueueRandom, mb, run, TIMESEAL, timed } from './common.ts';

const { values } = parseArgs({
  options: { hashes: { type: 'string', default: '1000000' }, days: { type: 'string', default: '10' } },
});
const perDay = Number(values.hashes);
const days = Number(values.days);
const date = (n: number): string =>
  new Date(Date.parse('2025-11-01T00:00:00Z') + n * 86_400_000).toISOString().slice(0, 10);

/** `timeseal serve` on the source, its clock at `now`, until stop(); resolved once its start-up run has ended. */
async function serve(dir: string, now: string): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(TIMESEAL, ['serve'], {
    cwd: dir,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_FORMAT: 'json',
      TIMESEAL_NOW: now,
      OTS_CALENDARS: 'http://127.0.0.1:9/',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const found = /Timeseal listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (found && /"step":"tsa stamp"/.test(out)) resolve(found);
    };
    child.stdout.setEncoding('utf8').on('data', (s: string) => ((out += s), check()));
    child.stderr.setEncoding('utf8').on('data', (s: string) => ((out += s), check()));
    void exited.then(() => reject(new Error(`serve exited:\n${out}`)));
  });
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

interface PullReport {
  ok: boolean;
  days: { fetched: string[] };
  files: number;
  bytes: number;
  requests: number;
}

function pull(work: string, url: string, mirror: string, keys: string): PullReport & { seconds: number; rss: number } {
  const m = timed(['mirror', 'pull', url, mirror, '--keys', keys, '--json'], work);
  const report = JSON.parse(m.stdout) as PullReport;
  if (!report.ok) throw new Error(`mirror pull failed: ${m.stdout}`);
  return { ...report, seconds: m.seconds, rss: m.maxRssMb };
}

/** Every file of the archive and its size. */
function archiveFiles(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const file = path.join(e.parentPath, e.name);
    if (e.isFile()) out.set(path.relative(dir, file), fs.statSync(file).size);
  }
  return out;
}

const source = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-mirror-source-'));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-mirror-'));
const mirror = path.join(work, 'mirror');
const keys = path.join(source, 'keys');
run(['keys', 'init'], source);
for (let d = 0; d < days; d++) enqueueRandom(source, date(d), perDay);
const built = timed(['ledger', 'build', '--json'], source, { TIMESEAL_NOW: `${date(days)}T00:01:00Z` });
const filesBefore = archiveFiles(path.join(source, 'ledgers'));

/** A pull while the source is served (stopped however the pull ends). */
async function pullServed(now: string): Promise<ReturnType<typeof pull>> {
  const server = await serve(source, now);
  try {
    return pull(work, `${server.url}/ledgers/`, mirror, keys);
  } finally {
    await server.stop();
  }
}

const first = await pullServed(`${date(days)}T00:05:00Z`);
enqueueRandom(source, date(days), perDay);
timed(['ledger', 'build', '--json'], source, { TIMESEAL_NOW: `${date(days + 1)}T00:01:00Z` });
// What the build added or rewrote: the new day's files, and an index segment merged from older ones with it.
let dayBytes = 0;
for (const [rel, size] of archiveFiles(path.join(source, 'ledgers')))
  if (filesBefore.get(rel) !== size || /(^|\/)(checkpoint|days\.json|segments\.json|[a-z_]+status\.json)$/.test(rel))
    dayBytes += size;
const second = await pullServed(`${date(days + 1)}T00:05:00Z`);
const verified = timed(['verify', '--archive', mirror, '--keys', path.join(mirror, 'keys'), '--json'], work);
fs.rmSync(source, { recursive: true, force: true });
fs.rmSync(work, { recursive: true, force: true });

const n = (x: number) => x.toLocaleString('en-US');
const lines = [
  '## Mirrors (`timeseal mirror pull`, bench/mirror.bench.ts)',
  '',
  `An archive of ${n(days)} days of ${n(perDay)} random hashes (${n(days * perDay)} entries; built in ${built.seconds.toFixed(0)} s) served by \`timeseal serve\` on loopback, pulled into an empty mirror; then one more day of ${n(perDay)} hashes, pulled again. Each pull checks the checkpoint under the pinned keys, the consistency proof from the mirror's last checkpoint, and every new file against what the signed log commits to, before anything of the mirror changes.`,
  '',
  '| pull | days fetched | files | bytes | requests | wall time | peak RSS |',
  '|---|---|---|---|---|---|---|',
  `| first (whole archive) | ${first.days.fetched.length} | ${n(first.files)} | ${mb(first.bytes)} | ${n(first.requests)} | ${first.seconds.toFixed(1)} s | ${first.rss.toFixed(0)} MB |`,
  `| next day (incremental) | ${second.days.fetched.length} | ${n(second.files)} | ${mb(second.bytes)} | ${n(second.requests)} | ${second.seconds.toFixed(1)} s | ${second.rss.toFixed(0)} MB |`,
  '',
  `The incremental pull moved ${(second.bytes / dayBytes).toFixed(2)}× the bytes of the files the new day's build added or rewrote (${mb(dayBytes)}: the day's files, an index segment merged with older ones, the latest checkpoint and lists) and ${(second.bytes / first.bytes).toFixed(3)}× the first pull's. \`timeseal verify\` of the mirror afterwards: ${verified.seconds.toFixed(1)} s, exit 0.`,
];
process.stdout.write(`${lines.join('\n')}\n`);
