// COSE receipts served (docs/FORMAT.md §11): `GET /api/proof/<hash>.receipt.cose` for random hashes of a
// published 10,000-hash day, beside the beta API's submissions (`POST /api/v1/beta/timestamp`) in the same run on
// the same server (`timeseal serve`, loopback). autocannon, 32 connections, 8 s runs, 5 rounds taking turns; each
// receipt answer's status is checked (a non-200 counts). A receipt is built on request: the hash looked up in the
// index, its inclusion proof read from the tiles, the day's signature file read and the proof put into it.
// Prints a Markdown section on stdout; progress on stderr.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { machine, TIMESEAL } from './common.ts';
import { load, loadRequests, median, stop, waitForUrl, type AutocannonResult } from './load.ts';

const CONNECTIONS = 32;
const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const HASHES = 10_000;
const DAY = '2025-11-02';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-cose-'));
try {
  const env = {
    ...process.env,
    TIMESEAL_DB: path.join(dir, 'data/timeseal.db'),
    TIMESEAL_ARCHIVE: path.join(dir, 'ledgers'),
    TIMESEAL_KEYS: path.join(dir, 'keys'),
    TIMESEAL_PRIVATE_KEYS: path.join(dir, 'data/private-keys'),
    TIMESEAL_SITE: path.join(dir, 'site'),
    OTS_CALENDARS: 'http://127.0.0.1:9/,http://127.0.0.1:7/',
    HOST: '127.0.0.1',
    PORT: '0',
  };
  const must = (args: string[], now: string, input?: string) => {
    const r = spawnSync(TIMESEAL, args, { cwd: dir, env: { ...env, TIMESEAL_NOW: now }, encoding: 'utf8', input });
    if (r.status !== 0) throw new Error(`timeseal ${args.join(' ')} failed: ${r.stderr}`);
  };
  const hashes = Array.from({ length: HASHES }, (_, i) =>
    crypto.createHash('sha256').update(`cose bench ${i}`).digest('hex'),
  );
  must(['keys', 'init'], `${DAY}T00:00:00Z`);
  must(['import', '-'], `${DAY}T10:00:00Z`, `${hashes.join('\n')}\n`);
  must(['ledger', 'build'], '2025-11-03T00:01:00Z');

  const server = spawn(TIMESEAL, ['serve'], {
    cwd: dir,
    env: { ...env, TIMESEAL_NOW: '2025-11-03T09:00:00Z' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const url = await waitForUrl(server);
  let n = 0;
  const receiptRuns: AutocannonResult[] = [];
  const betaRuns: AutocannonResult[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    process.stderr.write(
      `bench cose-receipt: round ${round}/${ROUNDS}: GET /api/proof/<hash>.receipt.cose, then POST /api/v1/beta/timestamp, ${CONNECTIONS} connections, ${DURATION} s each\n`,
    );
    receiptRuns.push(
      await loadRequests(url, CONNECTIONS, DURATION, {
        method: 'GET',
        setupRequest: (request) => ({
          ...request,
          path: `/api/proof/${hashes[(n++ * 7919) % HASHES]}.receipt.cose`,
        }),
      }),
    );
    betaRuns.push(await load(url, '/api/v1/beta/timestamp', CONNECTIONS, DURATION));
  }
  await stop(server);

  const receipt = median(receiptRuns);
  const beta = median(betaRuns);
  const size = fs.statSync(path.join(dir, 'ledgers', `${DAY}.receipt-es256.cose`)).size;
  const failures = (runs: AutocannonResult[]) => runs.reduce((s, r) => s + r.errors + r.timeouts + r.non2xx, 0);
  const line = (name: string, r: AutocannonResult) =>
    `| ${name} | ${Math.round(r.requests.average).toLocaleString('en-US')} | ${r.latency.p50} ms | ${r.latency.p99} ms | ${r.errors + r.timeouts + r.non2xx} |`;
  const out = [
    '## COSE receipts served, beside the beta API',
    '',
    `Machine: ${machine()}. One \`timeseal serve\` on loopback, a published day of ${HASHES.toLocaleString('en-US')} hashes; autocannon ${CONNECTIONS} connections, ${DURATION} s per run, ${ROUNDS} rounds taking turns (receipts, then submissions). Each row is the median run.`,
    '',
    '| target (median run) | req/s (mean) | p50 latency | p99 latency | errors + non-2xx |',
    '|---|---|---|---|---|',
    line('`GET /api/proof/<hash>.receipt.cose` (ES256, a random published hash)', receipt),
    line('`POST /api/v1/beta/timestamp` (the same server)', beta),
    '',
    `Every run, req/s: receipts ${receiptRuns.map((r) => Math.round(r.requests.average).toLocaleString('en-US')).join(', ')}; beta ${betaRuns.map((r) => Math.round(r.requests.average).toLocaleString('en-US')).join(', ')}. Errors, timeouts and non-2xx over all runs: receipts ${failures(receiptRuns)}, beta ${failures(betaRuns)}. The day's ES256 signature file is ${size} bytes; a receipt adds the 14-hash inclusion proof (about 500 bytes).`,
    '',
    'Registration of signed statements (SCRAPI `POST /entries`) is not implemented yet, so its throughput is not measured here.',
  ];
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
