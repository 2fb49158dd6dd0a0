// COSE receipts served (docs/FORMAT.md §11): `GET /api/proof/<hash>.receipt.cose` for random hashes of a
// published 10,000-hash day, beside the beta API's submissions (`POST /api/v1/beta/timestamp`) and SCITT
// registrations (`POST /entries`, docs/API.md) in the same run on the same server (`timeseal serve`, loopback).
// autocannon, 32 connections, 8 s runs, 5 rounds taking turns; each answer's status is checked (a receipt's must
// be 200, a registration's 303). A receipt is built on request: the hash looked up in the index, its inclusion
// proof read from the tiles, the day's signature file read and the proof put into it. A registration is a
// distinct ES256 Signed Statement each (signed beforehand with node:crypto under a key SCITT_ISSUER_KEYS names):
// the registration policy, its signature checked, the statement and its row in one durable transaction, and the
// RFC 3161 receipt signed.
// Prints a Markdown section on stdout; progress on stderr.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CborTag, encodeCbor, type CborValue } from '../core/cbor.ts';
import { sigStructure } from '../core/cose-receipt.ts';
import { benchProjectEnv, machine, TIMESEAL } from './common.ts';
import { load, loadRequests, median, stop, waitForUrl, type AutocannonResult } from './load.ts';

const CONNECTIONS = 32;
const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const HASHES = 10_000;
const DAY = '2025-11-02';
const STATEMENTS = 60_000;
const ISS = 'https://issuer.example';

/** `count` distinct Signed Statements (ES256, JSON payloads) under `key`, each a tagged COSE_Sign1. */
function signedStatements(key: crypto.KeyObject, count: number): Buffer[] {
  return Array.from({ length: count }, (_, i) => {
    const protectedBytes = encodeCbor(
      new Map<number, CborValue>([
        [1, -7],
        [3, 'application/json'],
        [
          15,
          new Map<number, CborValue>([
            [1, ISS],
            [2, `urn:bench:artifact:${i}`],
          ]),
        ],
      ]),
    );
    const payload = new TextEncoder().encode(`{"build":${i}}`);
    const signature = crypto.sign('sha256', sigStructure(protectedBytes, payload), { key, dsaEncoding: 'ieee-p1363' });
    return Buffer.from(encodeCbor(new CborTag(18, [protectedBytes, new Map(), payload, new Uint8Array(signature)])));
  });
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-cose-'));
try {
  const env = benchProjectEnv(dir, { SCITT_ISSUER_KEYS: path.join(dir, 'issuers.json') });
  const issuer = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  fs.writeFileSync(env.SCITT_ISSUER_KEYS, JSON.stringify({ [ISS]: [issuer.publicKey.export({ format: 'jwk' })] }));
  const statements = signedStatements(issuer.privateKey, STATEMENTS);
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
  const registrationRuns: AutocannonResult[] = [];
  let s = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    process.stderr.write(
      `bench cose-receipt: round ${round}/${ROUNDS}: GET /api/proof/<hash>.receipt.cose, POST /api/v1/beta/timestamp, then POST /entries, ${CONNECTIONS} connections, ${DURATION} s each\n`,
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
    registrationRuns.push(
      await loadRequests(url, CONNECTIONS, DURATION, {
        method: 'POST',
        path: '/entries',
        headers: { 'content-type': 'application/cose' },
        setupRequest: (request) => ({ ...request, body: statements[s++ % STATEMENTS]! }),
      }),
    );
  }
  await stop(server);

  const receipt = median(receiptRuns);
  const beta = median(betaRuns);
  const registration = median(registrationRuns);
  /** A registration's answer is 303 See Other: what is not a 303 failed. */
  const seeOther = (r: AutocannonResult) => (r as AutocannonResult & { '3xx': number })['3xx'];
  const registrationFailures = (r: AutocannonResult) => r.errors + r.timeouts + r.non2xx - seeOther(r);
  const size = fs.statSync(path.join(dir, 'ledgers', `${DAY}.receipt-es256.cose`)).size;
  const failures = (runs: AutocannonResult[]) => runs.reduce((s, r) => s + r.errors + r.timeouts + r.non2xx, 0);
  const line = (name: string, r: AutocannonResult, failed = r.errors + r.timeouts + r.non2xx) =>
    `| ${name} | ${Math.round(r.requests.average).toLocaleString('en-US')} | ${r.latency.p50} ms | ${r.latency.p99} ms | ${failed} |`;
  const out = [
    '## COSE receipts served and SCITT registrations, beside the beta API',
    '',
    `Machine: ${machine()}. One \`timeseal serve\` on loopback, a published day of ${HASHES.toLocaleString('en-US')} hashes; autocannon ${CONNECTIONS} connections, ${DURATION} s per run, ${ROUNDS} rounds taking turns (receipts, submissions, registrations). Each row is the median run.`,
    '',
    '| target (median run) | req/s (mean) | p50 latency | p99 latency | errors + unexpected status |',
    '|---|---|---|---|---|',
    line('`GET /api/proof/<hash>.receipt.cose` (ES256, a random published hash)', receipt),
    line('`POST /api/v1/beta/timestamp` (the same server)', beta),
    line(
      '`POST /entries` (a distinct ES256 Signed Statement each, 303 expected)',
      registration,
      registrationFailures(registration),
    ),
    '',
    `Every run, req/s: receipts ${receiptRuns.map((r) => Math.round(r.requests.average).toLocaleString('en-US')).join(', ')}; beta ${betaRuns.map((r) => Math.round(r.requests.average).toLocaleString('en-US')).join(', ')}; registrations ${registrationRuns.map((r) => Math.round(r.requests.average).toLocaleString('en-US')).join(', ')}. Errors, timeouts and unexpected statuses over all runs: receipts ${failures(receiptRuns)}, beta ${failures(betaRuns)}, registrations ${registrationRuns.reduce((n, r) => n + registrationFailures(r), 0)}. A statement is ${statements[0]!.length} bytes. The day's ES256 signature file is ${size} bytes; a receipt adds the 14-hash inclusion proof (about 500 bytes).`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
