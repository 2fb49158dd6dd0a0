// COSE receipts served (docs/FORMAT.md §11): `GET /api/proof/<hash>.receipt.cose` for random hashes of a
// published 10,000-hash day, beside the beta API's submissions (`POST /api/v1/beta/timestamp`) and SCITT
// registrations (`POST /entries`, docs/API.md) in the same run on the same server (`timeseal serve`, loopback).
// autocannon, 32 connections, 8 s runs, 5 rounds taking turns; each answer's status is checked (a receipt's must
// be 200, a registration's 303). A receipt is built on request: the hash looked up in the index, its inclusion
// proof read from the tiles, the day's signature file read and the proof put into it. A registration is a
// distinct ES256 Signed Statement each (signed beforehand with node:crypto under a key SCITT_ISSUER_KEYS names):
// the registration policy, its signature checked, the statement and its row in one durable transaction, and the
// RFC 3161 receipt signed.
// With BENCH_BASELINE=<a checkout of an earlier commit, with node_modules> the same is measured on its code in the
// same run (its own server and project folder): each phase runs on one server and the other in turn, so
// "before" and "after" share the machine's minute.
// Prints a Markdown section on stdout; progress on stderr.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CborTag, encodeCbor, type CborValue } from '../core/cbor.ts';
import { sigStructure } from '../core/cose-receipt.ts';
import { benchProjectEnv, gitCommit, machine, ROOT } from './common.ts';
import { load, loadRequests, median, stop, waitForUrl, type AutocannonResult } from './load.ts';

const CONNECTIONS = 32;
const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const HASHES = 10_000;
const DAY = '2025-11-02';
const STATEMENTS = 60_000;
const ISS = 'https://issuer.example';
const BASELINE = process.env.BENCH_BASELINE;

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

interface Code {
  label: string;
  root: string;
}
const codes: Code[] = [
  ...(BASELINE ? [{ label: `before (${gitCommit(BASELINE)})`, root: path.resolve(BASELINE) }] : []),
  { label: BASELINE ? `after (${gitCommit(ROOT)})` : gitCommit(ROOT), root: ROOT },
];

const issuer = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const statements = signedStatements(issuer.privateKey, STATEMENTS);
const hashes = Array.from({ length: HASHES }, (_, i) =>
  crypto.createHash('sha256').update(`cose bench ${i}`).digest('hex'),
);

/** A project of `code` with the published day, and its `timeseal serve`. */
async function serve(code: Code, dir: string) {
  const bin = path.join(code.root, 'cli/bin/timeseal');
  const env = benchProjectEnv(dir, { SCITT_ISSUER_KEYS: path.join(dir, 'issuers.json') });
  fs.writeFileSync(env.SCITT_ISSUER_KEYS, JSON.stringify({ [ISS]: [issuer.publicKey.export({ format: 'jwk' })] }));
  const must = (args: string[], now: string, input?: string) => {
    const r = spawnSync(bin, args, { cwd: dir, env: { ...env, TIMESEAL_NOW: now }, encoding: 'utf8', input });
    if (r.status !== 0) throw new Error(`timeseal ${args.join(' ')} failed: ${r.stderr}`);
  };
  must(['keys', 'init'], `${DAY}T00:00:00Z`);
  must(['import', '-'], `${DAY}T10:00:00Z`, `${hashes.join('\n')}\n`);
  must(['ledger', 'build'], '2025-11-03T00:01:00Z');
  const server = spawn(bin, ['serve'], {
    cwd: dir,
    env: { ...env, TIMESEAL_NOW: '2025-11-03T09:00:00Z' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return {
    code,
    server,
    url: await waitForUrl(server),
    receipts: [] as AutocannonResult[],
    beta: [] as AutocannonResult[],
    registrations: [] as AutocannonResult[],
  };
}

const top = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-cose-'));
try {
  const servers: Array<Awaited<ReturnType<typeof serve>>> = [];
  for (const [i, code] of codes.entries()) {
    const dir = path.join(top, String(i));
    fs.mkdirSync(dir);
    servers.push(await serve(code, dir));
  }
  let n = 0;
  let s = 0;
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      process.stderr.write(
        `bench cose-receipt: round ${round}/${ROUNDS}: GET /api/proof/<hash>.receipt.cose, POST /api/v1/beta/timestamp, then POST /entries, ${CONNECTIONS} connections, ${DURATION} s each${codes.length > 1 ? ', on each code in turn' : ''}\n`,
      );
      for (const t of servers)
        t.receipts.push(
          await loadRequests(t.url, CONNECTIONS, DURATION, {
            method: 'GET',
            setupRequest: (request) => ({
              ...request,
              path: `/api/proof/${hashes[(n++ * 7919) % HASHES]}.receipt.cose`,
            }),
          }),
        );
      for (const t of servers) t.beta.push(await load(t.url, '/api/v1/beta/timestamp', CONNECTIONS, DURATION));
      for (const t of servers)
        t.registrations.push(
          await loadRequests(t.url, CONNECTIONS, DURATION, {
            method: 'POST',
            path: '/entries',
            headers: { 'content-type': 'application/cose' },
            setupRequest: (request) => ({ ...request, body: statements[s++ % STATEMENTS]! }),
          }),
        );
    }
  } finally {
    for (const t of servers) await stop(t.server);
  }

  /** A registration's answer is 303 See Other: what is not a 303 failed. */
  const seeOther = (r: AutocannonResult) => (r as AutocannonResult & { '3xx': number })['3xx'];
  const registrationFailures = (r: AutocannonResult) => r.errors + r.timeouts + r.non2xx - seeOther(r);
  const size = fs.statSync(path.join(top, '0', 'ledgers', `${DAY}.receipt-es256.cose`)).size;
  const failures = (runs: AutocannonResult[], failed = (r: AutocannonResult) => r.errors + r.timeouts + r.non2xx) =>
    runs.reduce((sum, r) => sum + failed(r), 0);
  const rate = (r: AutocannonResult) => Math.round(r.requests.average).toLocaleString('en-US');
  const line = (name: string, r: AutocannonResult, failed = r.errors + r.timeouts + r.non2xx) =>
    `| ${name} | ${rate(r)} | ${r.latency.p50} ms | ${r.latency.p99} ms | ${failed} |`;
  const on = (t: (typeof servers)[number]) => (codes.length > 1 ? ` — ${t.code.label}` : '');
  const out = [
    '## COSE receipts served and SCITT registrations, beside the beta API',
    '',
    `Machine: ${machine()}. One \`timeseal serve\` ${codes.length > 1 ? 'of each code ' : ''}on loopback, a published day of ${HASHES.toLocaleString('en-US')} hashes; autocannon ${CONNECTIONS} connections, ${DURATION} s per run, ${ROUNDS} rounds taking turns (receipts, submissions, registrations${codes.length > 1 ? ', each on one server then the other' : ''}). Each row is the median run.`,
    '',
    '| target (median run) | req/s (mean) | p50 latency | p99 latency | errors + unexpected status |',
    '|---|---|---|---|---|',
    ...servers.flatMap((t) => [
      line(`\`GET /api/proof/<hash>.receipt.cose\` (ES256, a random published hash)${on(t)}`, median(t.receipts)),
      line(`\`POST /api/v1/beta/timestamp\` (the same server)${on(t)}`, median(t.beta)),
      line(
        `\`POST /entries\` (a distinct ES256 Signed Statement each, 303 expected)${on(t)}`,
        median(t.registrations),
        registrationFailures(median(t.registrations)),
      ),
    ]),
    '',
    ...servers.map(
      (t) =>
        `Every run${on(t)}, req/s: receipts ${t.receipts.map(rate).join(', ')}; beta ${t.beta.map(rate).join(', ')}; registrations ${t.registrations.map(rate).join(', ')}. Errors, timeouts and unexpected statuses over all runs: receipts ${failures(t.receipts)}, beta ${failures(t.beta)}, registrations ${failures(t.registrations, registrationFailures)}.`,
    ),
    '',
    `A statement is ${statements[0]!.length} bytes. The day's ES256 signature file is ${size} bytes; a receipt adds the 14-hash inclusion proof (about 500 bytes).`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  fs.rmSync(top, { recursive: true, force: true });
}
