// The beta API's batch route (docs/API.md "POST /api/v1/beta/timestamps") against the single route, on one
// `timeseal serve` (SQLite, loopback): the wall time to have 1,000 hashes stored and acknowledged as
// - 1,000 single requests one after the other (what a simple client loop does),
// - 1,000 single requests with 32 in flight,
// - one batch of 1,000 hashes,
// - one batch of 1,000 hashes with "receipt": true (1,000 RFC 3161 tokens signed),
// each with fresh hashes, BENCH_ROUNDS (3) rounds with the cases taking turns (their order rotates each round;
// this machine's speed drifts from minute to minute), the median shown. Then the cost of the `already` check
// on a large day: one batch of 1,000 fresh hashes on an empty day, then again after
// BENCH_DAY_ROWS (1,000,000) rows of the same day are added (in one statement). Every answer is checked (201 or
// 200 with 1,000 stored results) and afterwards the database must hold every acknowledged hash. Last, on that
// day and in this process, the event loop's longest block (perf_hooks monitorEventLoopDelay) while the store
// checks one batch of 1,000 (Store.submissions.submittedOn) and while it stores it (enqueue): the server's own
// two calls for a batch, each synchronous on SQLite.
// Prints a Markdown section on stdout; progress on stderr.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { benchProjectEnv, keysInit, TIMESEAL } from './common.ts';
import { stop, waitForUrl } from './load.ts';
import { CHECK_PER_TURN } from '../ingest/routes/beta-batch.ts';
import { openStore } from '../store/index.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DAY_ROWS = Number(process.env.BENCH_DAY_ROWS ?? 1_000_000);
const N = 1_000;
const IN_FLIGHT = 32;
const log = (m: string) => process.stderr.write(`bench beta-batch: ${m}\n`);
const fresh = (n: number): string[] => Array.from({ length: n }, () => crypto.randomBytes(32).toString('hex'));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-batch-'));
try {
  const env = benchProjectEnv(dir);
  keysInit(dir, env);
  const serve = () => spawn(TIMESEAL, ['serve'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'ignore'] });
  let server = serve();
  process.on('exit', () => server.kill('SIGKILL'));
  let url = await waitForUrl(server);
  const acknowledged: string[] = [];

  const single = async (hash: string): Promise<void> => {
    const res = await fetch(`${url}/api/v1/beta/timestamp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hash }),
    });
    await res.arrayBuffer();
    if (res.status !== 201) throw new Error(`single: ${res.status}`);
    acknowledged.push(hash);
  };
  const batch = async (hashes: string[], receipt: boolean): Promise<{ bytes: number }> => {
    const res = await fetch(`${url}/api/v1/beta/timestamps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hashes, ...(receipt ? { receipt } : {}) }),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`batch: ${res.status} ${text.slice(0, 200)}`);
    const body = JSON.parse(text) as {
      counts: { accepted: number; already: number };
      results: Array<{ receipt?: string }>;
    };
    if (body.counts.accepted + body.counts.already !== hashes.length)
      throw new Error(`batch: ${JSON.stringify(body.counts)}`);
    if (receipt && !body.results.every((r) => typeof r.receipt === 'string'))
      throw new Error('batch: a receipt is missing');
    acknowledged.push(...hashes);
    return { bytes: text.length };
  };
  const timed = async (work: () => Promise<unknown>): Promise<number> => {
    const t = performance.now();
    await work();
    return performance.now() - t;
  };

  const cases: Array<{ name: string; run: () => Promise<number> }> = [
    {
      name: `${N.toLocaleString('en-US')} single requests, one at a time`,
      run: () =>
        timed(async () => {
          for (const h of fresh(N)) await single(h);
        }),
    },
    {
      name: `${N.toLocaleString('en-US')} single requests, ${IN_FLIGHT} in flight`,
      run: () =>
        timed(async () => {
          const queue = fresh(N);
          await Promise.all(
            Array.from({ length: IN_FLIGHT }, async () => {
              for (let h = queue.pop(); h !== undefined; h = queue.pop()) await single(h);
            }),
          );
        }),
    },
    { name: `one batch of ${N.toLocaleString('en-US')}`, run: () => timed(() => batch(fresh(N), false)) },
    {
      name: `one batch of ${N.toLocaleString('en-US')} with "receipt": true`,
      run: () => timed(() => batch(fresh(N), true)),
    },
  ];
  // Warm-up: the server's first requests compile its routes' code.
  for (let i = 0; i < 20; i++) await single(fresh(1)[0]!);
  await batch(fresh(N), true);
  const times = new Map(cases.map((c) => [c.name, [] as number[]]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < cases.length; k++) {
      const c = cases[(k + round) % cases.length]!;
      log(`round ${round + 1}/${ROUNDS}: ${c.name}`);
      times.get(c.name)!.push(await c.run());
    }
  }
  const receiptBytes = (await batch(fresh(N), true)).bytes;

  // The `already` check on today's rows so far, then with DAY_ROWS more.
  const smallDay: number[] = [];
  for (let i = 0; i < 3; i++) smallDay.push(await timed(() => batch(fresh(N), false)));
  const emptyDay = median(smallDay);
  // The rows go in while the server is stopped: one statement of a million rows holds SQLite's write lock for
  // longer than the server's busy timeout (5 s), and its schedule's lease check would fail meanwhile.
  await stop(server);
  log(`adding ${DAY_ROWS.toLocaleString('en-US')} rows to today`);
  const db = new Database(env.TIMESEAL_DB);
  db.pragma('busy_timeout = 5000');
  const today = new Date().toISOString();
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO submissions (hash, submitted_at, ledger_date, file_name, source)
     SELECT lower(hex(randomblob(32))), ?, ?, NULL, 'import' FROM n`,
  ).run(DAY_ROWS, today, today.slice(0, 10));
  const dayRows = (
    db.prepare('SELECT COUNT(*) AS n FROM submissions WHERE ledger_date = ?').get(today.slice(0, 10)) as { n: number }
  ).n;
  server = serve();
  url = await waitForUrl(server);
  for (let i = 0; i < 3; i++) await batch(fresh(N), false); // the new server's routes compiled
  const fullDay: number[] = [];
  for (let i = 0; i < 3; i++) fullDay.push(await timed(() => batch(fresh(N), false)));
  // And its effect on the others: single requests answered while a batch runs on that day.
  const during: number[] = [];
  await Promise.all([
    batch(fresh(N), false),
    (async () => {
      for (let i = 0; i < 20; i++) during.push(await timed(() => single(fresh(1)[0]!)));
    })(),
  ]);
  await stop(server);

  const stored = new Set(
    (
      db.prepare('SELECT DISTINCT hash FROM submissions WHERE source = ?').raw(true).all('api_beta') as Array<[string]>
    ).map(([h]) => h),
  );
  db.close();
  const missing = acknowledged.filter((h) => !stored.has(h)).length;
  if (missing > 0) throw new Error(`${missing} acknowledged hashes are not in the database`);

  // The event loop's longest block while the store checks and stores a batch of 1,000, on the full day.
  log('the event loop during a batch, in this process');
  const store = await openStore({ db: env.TIMESEAL_DB });
  const longestBlock = async (work: () => Promise<unknown>): Promise<number> => {
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    await new Promise((resolve) => setTimeout(resolve, 10));
    await work();
    await new Promise((resolve) => setTimeout(resolve, 10));
    h.disable();
    return h.max / 1e6;
  };
  const blocks = { check: [] as number[], slices: [] as number[], write: [] as number[] };
  try {
    for (let i = 0; i < 5; i++) {
      const hashes = fresh(N);
      const at = new Date();
      const day = at.toISOString().slice(0, 10);
      blocks.check.push(await longestBlock(() => store.submissions.submittedOn(day, hashes)));
      // As the route asks: CHECK_PER_TURN hashes a query, a turn of the event loop between two.
      blocks.slices.push(
        await longestBlock(async () => {
          for (let k = 0; k < N; k += CHECK_PER_TURN) {
            await new Promise((resolve) => setImmediate(resolve));
            await store.submissions.submittedOn(day, hashes.slice(k, k + CHECK_PER_TURN));
          }
        }),
      );
      blocks.write.push(
        await longestBlock(() =>
          store.submissions.enqueue(hashes.map((hash) => ({ hash, submittedAt: at, source: 'api_beta' as const }))),
        ),
      );
    }
  } finally {
    await store.close();
  }

  const ms = (x: number) => `${Math.round(x).toLocaleString('en-US')} ms`;
  const base = median(times.get(cases[0]!.name)!);
  const out = [
    '## Beta API: one batch of 1,000 hashes against 1,000 single requests',
    '',
    `\`timeseal serve\` (SQLite) on loopback, fetch from the same machine; the median of ${ROUNDS} rounds, fresh hashes each time. Every answer checked; all ${acknowledged.length.toLocaleString('en-US')} acknowledged hashes were in the database afterwards.`,
    '',
    '| 1,000 hashes stored as | wall time (median) | runs | vs one at a time |',
    '|---|---|---|---|',
    ...cases.map((c) => {
      const t = times.get(c.name)!;
      return `| ${c.name} | ${ms(median(t))} | ${t.map(ms).join(', ')} | ${(base / median(t)).toFixed(1)}× |`;
    }),
    '',
    `A batch with 1,000 receipts answers ${(receiptBytes / 1024 / 1024).toFixed(1)} MB of JSON (uncompressed).`,
    '',
    `The \`already\` check (each hash's own rows, by SQLite's queue index in memory, store/sqlite/queue-index.ts): one batch of 1,000 on a day of ${(dayRows - DAY_ROWS).toLocaleString('en-US')} rows ${ms(emptyDay)}; on a day of ${dayRows.toLocaleString('en-US')} rows ${ms(median(fullDay))} (${fullDay.map(ms).join(', ')}). Single requests sent while such a batch runs waited up to ${ms(Math.max(...during))} (median ${ms(median(during))}).`,
    '',
    `The event loop's longest block on that day (monitorEventLoopDelay, 1 ms resolution, this process, 5 batches of 1,000 fresh hashes): the "already" check in one query ${blocks.check.map(ms).join(', ')}, in queries of ${CHECK_PER_TURN} as the route asks ${blocks.slices.map(ms).join(', ')}; storing the batch (one transaction, synchronous=FULL) ${blocks.write.map(ms).join(', ')}. Load average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(', ')} on ${os.cpus().length} cores.`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
