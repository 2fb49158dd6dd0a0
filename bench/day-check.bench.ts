// The server's check of a large published day (ingest/archive-view.ts verifyDay, behind
// /api/verify-quantum.php, /api/ledgers.php and the certificates) beside other requests: the app of the ingest
// tests' fixture (ingest/test/fixture.ts) on loopback, its day's ledger replaced by its header and then
// BENCH_LEDGER_GIB (default 4) GiB of zeros, a sparse file the check reads and hashes whole (the ledger of a
// 100,000,000-hash day is 9.25 GB). One GET /api/verify-quantum.php for the day, and meanwhile GET /robots.txt
// one after another until it is answered: the check's time, how many robots.txt were answered during it and
// their latency (median, 99th percentile, most), then a second request for the day (its cached result).
// Prints a Markdown section on stdout; progress on stderr.
import fs from 'node:fs';
import path from 'node:path';
import { ledgerPath } from '../core/archive.ts';
import { DAY, makeFixture, removeTempDirs } from '../ingest/test/fixture.ts';
import { gitCommit, ROOT } from './common.ts';

const GIB = Number(process.env.BENCH_LEDGER_GIB ?? 4);
const log = (m: string) => process.stderr.write(`bench day-check: ${m}\n`);
const at = (xs: number[], q: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;

const f = await makeFixture();
try {
  const ledger = path.join(f.config.archive, ledgerPath(DAY));
  const original = fs.readFileSync(ledger);
  const open = '"entries":[\n';
  fs.rmSync(ledger);
  fs.writeFileSync(ledger, original.subarray(0, original.indexOf(open) + open.length));
  fs.truncateSync(ledger, Math.round(GIB * 2 ** 30));
  const url = await f.app.listen({ port: 0, host: '127.0.0.1' });
  log(`${GIB} GiB ledger, server at ${url}`);
  const verify = async (): Promise<number> => {
    const started = performance.now();
    const res = await fetch(`${url}/api/verify-quantum.php?date=${DAY}`);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`verify-quantum: HTTP ${res.status}`);
    return performance.now() - started;
  };
  const cpu = process.cpuUsage();
  let checkMs: number | undefined;
  const checking = verify().then((ms) => (checkMs = ms));
  const latencies: number[] = [];
  while (checkMs === undefined) {
    const started = performance.now();
    const res = await fetch(`${url}/robots.txt`);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`robots.txt: HTTP ${res.status}`);
    latencies.push(performance.now() - started);
  }
  await checking;
  const used = process.cpuUsage(cpu);
  const cachedMs = await verify();
  const ms = (x: number) => `${x.toFixed(1)} ms`;
  process.stdout.write(
    [
      `## The server's check of a ${GIB} GiB day beside other requests`,
      '',
      `${gitCommit(ROOT)}; \`BENCH_LEDGER_GIB=${GIB} node bench/day-check.bench.ts\`.`,
      '',
      '| check of the day | its CPU (with the robots.txt answers) | robots.txt answered during it | latency: median | p99 | most | the day again |',
      '|---|---|---|---|---|---|---|',
      `| ${(checkMs / 1000).toFixed(1)} s | ${((used.user + used.system) / 1e6).toFixed(1)} s | ${latencies.length} | ${ms(at(latencies, 0.5))} | ${ms(at(latencies, 0.99))} | ${ms(Math.max(...latencies))} | ${ms(cachedMs)} |`,
      '',
    ].join('\n'),
  );
} finally {
  await f.close();
  removeTempDirs();
}
