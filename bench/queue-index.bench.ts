// What the SQLite engine's in-memory index of the queue (store/sqlite/queue-index.ts) costs: on a day of
// BENCH_DAY_ROWS (1,000,000) random rows made in one statement, the first lookup's catch-up (every row read once,
// in slices), the longest the event loop waited meanwhile (perf_hooks' delay histogram, 1 ms resolution; and
// idle, before it, for comparison), the bytes its tables hold per row (and the process's ArrayBuffer memory
// before and after, which counts them), then lookups on the caught-up day: `queued` of a queued hash,
// `submittedOn` of 1 and of 200 hashes (medians of 201), and a catch-up of 19 new rows (a commit of the beta API
// at 32 connections) before a lookup. In one process, no server. Prints a Markdown section on stdout; progress
// on stderr.
//
// BENCH_MAX_SLOTS sets the index's budget of slots (default: the index's own); past it, tables are frozen into
// runs on disk (the runs made are counted, the process's peak RSS reported). BENCH_DB names a database file to
// keep: made on the first run, used as it is by the next (the same day measured with two budgets) and left
// for the caller to delete.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { openDatabase } from '../store/sqlite/db.ts';
import { QueueIndex } from '../store/sqlite/queue-index.ts';
import { submissionInserter } from '../store/sqlite/queue.ts';

const DAY_ROWS = Number(process.env.BENCH_DAY_ROWS ?? 1_000_000);
const MAX_SLOTS = process.env.BENCH_MAX_SLOTS === undefined ? undefined : Number(process.env.BENCH_MAX_SLOTS);
const KEPT_DB = process.env.BENCH_DB;
const log = (m: string) => process.stderr.write(`bench queue-index: ${m}\n`);
const fresh = (): string => crypto.randomBytes(32).toString('hex');
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const us = (ms: number): string => `${Math.round(ms * 1000).toLocaleString('en-US')} µs`;

async function timed(work: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await work();
  return performance.now() - t;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-queue-index-'));
try {
  const file = KEPT_DB ?? path.join(dir, 'timeseal.db');
  const made = fs.existsSync(file);
  const db = openDatabase(file);
  const now = new Date();
  const insert = submissionInserter(db);
  let day: string;
  let known: string;
  if (made) {
    // The kept day: its date and a hash it holds (the last row's).
    [day, known] = db.prepare('SELECT ledger_date, hash FROM submissions ORDER BY id DESC LIMIT 1').raw().get() as [
      string,
      string,
    ];
    log(`using ${file}: ${day}`);
  } else {
    day = now.toISOString().slice(0, 10);
    known = fresh();
    log(`queueing ${DAY_ROWS.toLocaleString('en-US')} rows for ${day}`);
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO submissions (hash, submitted_at, ledger_date, file_name, source)
       SELECT lower(hex(randomblob(32))), ?, ?, NULL, 'import' FROM n`,
    ).run(DAY_ROWS - 1, now.toISOString(), day);
    insert([{ hash: known, submittedAt: now, source: 'api_beta' }]);
  }
  const at = new Date(`${day}T12:00:00Z`);
  const dayRows = Number(db.prepare('SELECT COUNT(*) FROM submissions').pluck().get());

  // The event loop's waits with nothing to do, for comparison: on a shared machine the others' work shows here.
  const idle = monitorEventLoopDelay({ resolution: 1 });
  idle.enable();
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  idle.disable();

  const index = new QueueIndex(db, { maxSlots: MAX_SLOTS, runsDir: path.join(dir, 'runs') });
  global.gc?.();
  const buffersBefore = process.memoryUsage().arrayBuffers;
  const rssBefore = process.memoryUsage().rss;
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const cpu = process.cpuUsage();
  const catchUp = await timed(async () => {
    await index.queued(known, '');
    await index.frozen();
  });
  const cpuUs = process.cpuUsage(cpu);
  delay.disable();
  global.gc?.();
  const buffersAfter = process.memoryUsage().arrayBuffers;
  const rssAfter = process.memoryUsage().rss;
  const { entries, bytes, runs } = index.size;
  log(`caught up ${entries.toLocaleString('en-US')} entries in ${Math.round(catchUp)} ms`);

  const queued = [];
  const one = [];
  const many = [];
  const afterCommit = [];
  for (let i = 0; i < 201; i++) {
    queued.push(await timed(() => index.queued(known, '')));
    one.push(await timed(() => index.submittedOn(day, [fresh()])));
    many.push(await timed(() => index.submittedOn(day, [known, ...Array.from({ length: 199 }, fresh)])));
    insert(Array.from({ length: 19 }, () => ({ hash: fresh(), submittedAt: at, source: 'api_beta' as const })));
    afterCommit.push(await timed(() => index.queued(known, '')));
  }
  db.close();
  const peakRss = process.resourceUsage().maxRSS * 1024;
  const mb = (b: number): string => `${Math.round(b / 1e6).toLocaleString('en-US')} MB`;

  const perRow = ((cpuUs.user + cpuUs.system) / dayRows).toFixed(2);
  process.stdout.write(
    [
      '## The SQLite queue index in memory: catch-up, memory, lookups',
      '',
      `A day of ${dayRows.toLocaleString('en-US')} random rows in one SQLite file, one \`QueueIndex\` (store/sqlite/queue-index.ts) in the same process, budget ${MAX_SLOTS === undefined ? 'the default' : MAX_SLOTS.toLocaleString('en-US')} slots; the first lookup reads every row (in slices of 512, the event loop running between two) and its runs are written. Node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(', ')} at the end.`,
      '',
      '| what | figure |',
      '|---|---|',
      `| first lookup: catch-up of ${dayRows.toLocaleString('en-US')} rows | ${Math.round(catchUp).toLocaleString('en-US')} ms wall, ${Math.round((cpuUs.user + cpuUs.system) / 1000).toLocaleString('en-US')} ms CPU (${perRow} µs a row) |`,
      `| the event loop's longest wait during it | ${(delay.max / 1e6).toFixed(1)} ms (p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms; idle for 2 s before it: ${(idle.max / 1e6).toFixed(1)} ms, p99 ${(idle.percentile(99) / 1e6).toFixed(1)} ms) |`,
      `| the index in memory | ${entries.toLocaleString('en-US')} entries, ${runs} runs on disk, ${(bytes / 1e6).toFixed(1)} MB: ${(bytes / dayRows).toFixed(1)} bytes a queued row |`,
      `| the process's ArrayBuffer memory | ${(buffersBefore / 1e6).toFixed(1)} → ${(buffersAfter / 1e6).toFixed(1)} MB |`,
      `| the process's RSS | ${mb(rssBefore)} before the index → ${mb(rssAfter)} after the catch-up; peak ${mb(peakRss)} |`,
      `| \`queued\` of a queued hash (median of 201) | ${us(median(queued))} |`,
      `| \`submittedOn\` of 1 fresh hash | ${us(median(one))} |`,
      `| \`submittedOn\` of 200 hashes | ${us(median(many))} |`,
      `| \`queued\` after a commit of 19 rows (their catch-up included) | ${us(median(afterCommit))} |`,
      '',
      `_(queue-index.bench.ts: \`node --expose-gc bench/queue-index.bench.ts\`, ${new Date().toISOString().slice(0, 16)} UTC)_`,
      '',
    ].join('\n'),
  );
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
