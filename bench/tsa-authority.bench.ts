// The RFC 3161 time-stamp authority (docs/API.md "POST /tsa"): tokens per second and p50/p99 latency at 32
// connections against one `timeseal serve` (SQLite, loopback), compared in the same run with beta-API
// submissions without a receipt, which wait for the same durable write but sign nothing. A token is answered
// only after its row is durable, like the beta API's 201. Also, when the server offers it, the beta API with
// `"receipt": true` (the 201 then carries a base64 DER TimeStampResp) against the same API without.
// autocannon, BENCH_SECONDS (8) per run, BENCH_ROUNDS (5) rounds in which the targets take turns (their order
// rotates each round; this machine's speed drifts by a third from minute to minute); ratios of the medians.
// Every request is a unique SHA-256 imprint, asking for the certificates (certReq, as `openssl ts -query -cert`);
// every answer's body is checked (a granted TimeStampResp; a 201 with its receipt), and afterwards the database
// must hold a row for every token and every 201. Goals: tokens/s ÷ beta/s ≥ 0.5, receipt ÷ plain ≥ 0.5, 0 errors.
// Prints a Markdown section on stdout; progress on stderr.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { timeStampRequest } from '../core/tsa-client.ts';
import { benchProjectEnv, keysInit, machine, TIMESEAL } from './common.ts';
import { load, loadRequests, median, stop, waitForUrl, type AutocannonResult } from './load.ts';

const CONNECTIONS = 32;
const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BETA = '/api/v1/beta/timestamp';
const log = (m: string) => process.stderr.write(`bench tsa: ${m}\n`);

/**
 * CPU seconds (user + system) the process `pid` has used so far, all its threads (/proc/PID/stat, clock ticks of
 * 1/100 s); with `thread`, those of that thread only (/proc/PID/task/TID/stat: the main thread's id is the pid).
 */
function cpuSeconds(pid: number, thread?: number): number {
  const file = thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`;
  const fields = fs.readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** A granted TimeStampResp starts SEQUENCE { PKIStatusInfo SEQUENCE { INTEGER 0 } ...: 30 03 02 01 00 after the
 * outer header (autocannon hands the body over as UTF-8 text; these bytes are ASCII and survive that). */
const GRANTED = '0\x03\x02\x01\x00';
const granted = (body: string): boolean => body.slice(2, 12).includes(GRANTED);

/**
 * TimeStampReqs (core/tsa-client.ts timeStampRequest: SHA-256 imprint, a nonce, certReq) for unique imprints: a random
 * 24-byte prefix, then a counter, written into one template request. `prefix`: the imprints' common start (hex).
 */
function tsaRequests(): { prefix: string; next: () => Buffer } {
  const prefix = crypto.randomBytes(24);
  const template = Buffer.from(timeStampRequest(Buffer.concat([prefix, Buffer.alloc(8)]), crypto.randomBytes(8)));
  const at = template.indexOf(prefix) + prefix.length;
  let n = 0n;
  return {
    prefix: prefix.toString('hex'),
    next: () => {
      const body = Buffer.from(template);
      body.writeBigUInt64BE(n++, at);
      return body;
    },
  };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-tsa-'));
try {
  const env = benchProjectEnv(dir);
  // The TSA certificate is valid from a minute before this clock (the real one, as the server's).
  keysInit(dir, env);
  const server = spawn(TIMESEAL, ['serve'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'ignore'] });
  const url = await waitForUrl(server);

  // Does this server answer a receipt? One submission asks (its row is counted below with the others).
  const probe = await fetch(`${url}${BETA}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ hash: crypto.randomBytes(32).toString('hex'), receipt: true }),
  });
  const probeBody = (await probe.json()) as { receipt?: unknown };
  const probed = probe.status === 201 ? 1 : 0;
  const receipts = probe.status === 201 && typeof probeBody.receipt === 'string';
  log(
    receipts
      ? 'the server answers receipts: the receipt case runs'
      : `the server answers no receipt (${probe.status}, ${JSON.stringify(probeBody).slice(0, 200)}): the receipt case is left out`,
  );

  const loadAverage = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]!;
  const loadBefore = loadAverage();
  const tsa = tsaRequests();
  interface Target {
    name: string;
    run: () => Promise<AutocannonResult>;
    runs: AutocannonResult[];
    /** The server's CPU seconds over all runs: all its threads, and its main thread (the event loop). */
    cpu: number;
    loop: number;
  }
  const targets: Target[] = [
    {
      name: 'beta',
      runs: [],
      cpu: 0,
      loop: 0,
      run: () => load(url, BETA, CONNECTIONS, DURATION, { verifyBody: (b) => b.startsWith('{"success":true') }),
    },
    {
      name: 'tsa',
      runs: [],
      cpu: 0,
      loop: 0,
      run: () =>
        loadRequests(
          url,
          CONNECTIONS,
          DURATION,
          {
            method: 'POST',
            path: '/tsa',
            headers: { 'content-type': 'application/timestamp-query' },
            setupRequest: (r) => ({ ...r, body: tsa.next() }),
          },
          granted,
        ),
    },
    ...(receipts
      ? [
          {
            name: 'receipt',
            runs: [] as AutocannonResult[],
            cpu: 0,
            loop: 0,
            run: () =>
              load(url, BETA, CONNECTIONS, DURATION, {
                fields: '"receipt":true',
                verifyBody: (b: string) => b.includes('"receipt":"'),
              }),
          },
        ]
      : []),
  ];
  for (let round = 0; round < ROUNDS; round++) {
    const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
    log(
      `round ${round + 1}/${ROUNDS}: ${order.map((t) => t.name).join(', ')}; ${CONNECTIONS} connections, ${DURATION} s each`,
    );
    for (const t of order) {
      const before = cpuSeconds(server.pid!);
      const loopBefore = cpuSeconds(server.pid!, server.pid!);
      t.runs.push(await t.run());
      t.cpu += cpuSeconds(server.pid!) - before;
      t.loop += cpuSeconds(server.pid!, server.pid!) - loopBefore;
    }
  }
  const loadAfter = loadAverage();
  await stop(server);

  const db = new Database(env.TIMESEAL_DB, { readonly: true });
  const count = (sql: string, ...args: string[]) => (db.prepare(sql).get(...args) as { n: number }).n;
  const allRows = count("SELECT COUNT(*) AS n FROM submissions WHERE source = 'api_beta'");
  const tsaRows = count(
    "SELECT COUNT(*) AS n FROM submissions WHERE source = 'api_beta' AND substr(hash, 1, 48) = ?",
    tsa.prefix,
  );
  db.close();

  const total = (runs: AutocannonResult[], f: (r: AutocannonResult) => number) => runs.reduce((n, r) => n + f(r), 0);
  const failures = (runs: AutocannonResult[]) => total(runs, (r) => r.errors + r.timeouts + r.non2xx + r.mismatches);
  const ok = (runs: AutocannonResult[]) => total(runs, (r) => r['2xx'] - r.mismatches);
  const [beta, token, receipt] = targets.map((t) => t.runs);
  /** The server's CPU time per answer over all runs of a target, in µs: all threads, or the event loop's only. */
  const cpuPer = (t: Target) => (t.cpu * 1e6) / total(t.runs, (r) => r['2xx']);
  const loopPer = (t: Target) => (t.loop * 1e6) / total(t.runs, (r) => r['2xx']);
  const med = (runs: AutocannonResult[]) => median(runs);
  const perSecond = (r: AutocannonResult) => Math.round(r.requests.average).toLocaleString('en-US');
  const row = (name: string, t: Target) => {
    const m = med(t.runs);
    return `| ${name} | ${perSecond(m)} | ${m.latency.p50} ms | ${m.latency.p99} ms | ${Math.round(cpuPer(t))} µs | ${Math.round(loopPer(t))} µs | ${failures(t.runs)} | ${ok(t.runs).toLocaleString('en-US')} |`;
  };
  const tokens = ok(token!);
  const betaAnswers = ok(beta!) + (receipt ? ok(receipt) : 0) + probed;
  // A row more than the answers is a request the end of a run cut after its write: at most one per connection and run.
  const cut = CONNECTIONS * ROUNDS;
  const within = (rows: number, answers: number, runs: number) => rows >= answers && rows <= answers + cut * runs;
  const stored = within(tsaRows, tokens, 1) && within(allRows - tsaRows, betaAnswers, receipt ? 2 : 1);
  const ratio = med(token!).requests.average / med(beta!).requests.average;
  const out = [
    '## Time-stamp authority (`POST /tsa`)',
    '',
    `\`node bench/run.ts --only tsa\` (part of \`make bench\`). Machine: ${machine()}. One \`timeseal serve\` (SQLite), autocannon ${CONNECTIONS} connections, ${DURATION} s per run, ${ROUNDS} rounds in which the targets take turns (the order rotates each round), loopback; the server and autocannon share the machine. Server CPU counts all the server's threads (the event loop, libuv's thread pool where tokens and receipts are signed, V8's helpers), the next column its main thread alone. Each row is the median run; errors counts connection errors, timeouts, non-2xx answers and answers whose body is not what it should be (a granted TimeStampResp; a 201 with its receipt) over all runs.`,
    '',
    '| target (median run) | req/s (mean) | p50 latency | p99 latency | server CPU per answer (all runs) | of which the event loop | errors (all runs) | good answers (all runs) |',
    '|---|---|---|---|---|---|---|---|',
    row('`POST /api/v1/beta/timestamp`, no receipt', targets[0]!),
    row('`POST /tsa`: SHA-256 imprint, nonce, certReq', targets[1]!),
    ...(receipt ? [row('`POST /api/v1/beta/timestamp` with `"receipt": true`', targets[2]!)] : []),
    '',
    `The machine's load average (1 min) at the start and the end: ${loadBefore}, ${loadAfter}. Every run, req/s: ${targets.map((t) => `${t.name} ${t.runs.map((r) => perSecond(r)).join(', ')}`).join('; ')}.`,
    '',
    `- Tokens ÷ beta submissions: **${ratio.toFixed(2)}** (goal ≥ 0.5); server CPU per token ÷ per submission: ${(cpuPer(targets[1]!) / cpuPer(targets[0]!)).toFixed(1)} (the event loop's: ${(loopPer(targets[1]!) / loopPer(targets[0]!)).toFixed(1)}).`,
    receipt
      ? `- Beta with a receipt ÷ without: **${(med(receipt).requests.average / med(beta!).requests.average).toFixed(2)}** (goal ≥ 0.5); server CPU per answer with ÷ without: ${(cpuPer(targets[2]!) / cpuPer(targets[0]!)).toFixed(1)} (the event loop's: ${(loopPer(targets[2]!) / loopPer(targets[0]!)).toFixed(1)}).`
      : `- Beta with a receipt ÷ without: not measured; this server answered \`"receipt": true\` with ${probe.status} and no \`receipt\`.`,
    `- Rows stored: ${tsaRows.toLocaleString('en-US')} for ${tokens.toLocaleString('en-US')} tokens granted; ${(allRows - tsaRows).toLocaleString('en-US')} for ${betaAnswers.toLocaleString('en-US')} beta 201s (${stored ? 'every token and every 201 is stored; the few rows more are requests cut by the end of a run, at most one a connection' : 'MISSING ROWS'}).`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  if (!stored) process.exitCode = 1;
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
