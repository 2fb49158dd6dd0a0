// The client against a hostile server (client/src/http.ts: one bounded reader of every answer). The command
// `timeseal-client`, bundled from client/src with esbuild as its package bundles it, runs under the system's Node
// 20 (the oldest the package supports) and stamps two files against a loopback server that serves a real
// Timeseal's keys (`timeseal keys init`) and answers the submissions in one of these ways:
//   honest     the batch answer with a receipt for each hash, signed by the keys' TSA (core/tsa-authority.ts);
//   endless    200 and bytes for as long as the client reads (stopped by the server at 512 MiB);
//   slow       200 and one byte every 200 ms (past the client's --timeout);
//   gzip-bomb  200, content-encoding: gzip, 1 MB that inflates to 1 GiB;
//   oversize   200 with a content-length of 64 MiB;
//   other-hash the honest answer, each receipt made for another hash.
// Each must end with a one-line message, exit 75 (try again: the deadline) or 1 (refused), no proof file beside a
// file whose receipt did not come or does not check, and the client's peak RSS (GNU time's maximum resident set
// size) bounded where the answer is large. The honest server shows the same command writing both proofs. Then
// `upgrade` of such a proof (its day said to be yesterday's, so published) meets the same answers to its
// GET /api/proof/<hash>, a bundle's cap (4 MiB) in place of a batch's.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fromHex, toBase64 } from '../../core/encoding.ts';
import { grantedResponse, randomSerial, receiptRequest, tstInfo, type TsaIdentity } from '../../core/tsa-authority.ts';
import { loadTsaKeys } from '../../runtime/keys.ts';
import { removeTempProjects, run, tempProject } from '../cli/helpers.ts';
import { measurePeakRss, type MeasuredRun } from '../support/peak-rss.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const NODE20 = '/usr/bin/node';
const MiB = 1024 * 1024;
/** The client's deadline in these runs (--timeout), short for the slow server. */
const TIMEOUT_MS = 1500;
/** The peak RSS a bounded client stays under (about 90 MB under Node 20 here, honest server or not). */
const PEAK_RSS_LIMIT_MB = 150;

type Mode = 'honest' | 'endless' | 'slow' | 'gzip-bomb' | 'oversize' | 'other-hash';

let project: string;
let work: string;
let cli: string;
let identity: TsaIdentity;
let server: http.Server;
let base: string;
let mode: Mode = 'honest';
/** Body bytes the server wrote in a hostile mode. */
let sent = 0;
/** Every Accept-Encoding the server was sent (a request without one counts as `(none)`). */
const encodingsAsked = new Set<string>();
const figures: string[] = [];

/** A receipt for `hashHex` at `at`, base64 DER, as the server's TSA signs it. */
function receipt(hashHex: string, at: Date): string {
  const request = receiptRequest(fromHex(hashHex));
  return toBase64(grantedResponse(tstInfo(request, identity, at, randomSerial()), request, identity));
}

/** 1 GiB of zeros as 1,024 gzip members of 1 MiB each (RFC 1952 §2.2: one valid stream), about 1 MB. */
let bomb: Buffer;

/** Writes `piece` until `limit` bytes are written or the client is gone, waiting for the socket to drain. */
function pour(res: http.ServerResponse, piece: Buffer, limit: number): void {
  let open = true;
  res.on('close', () => (open = false));
  let written = 0;
  const more = (): void => {
    while (open && written < limit) {
      written += piece.length;
      sent += piece.length;
      if (!res.write(piece)) return void res.once('drain', more);
    }
    if (open) res.end();
  };
  more();
}

function answer(req: http.IncomingMessage, res: http.ServerResponse, body: string): void {
  const now = new Date();
  const submittedAt = now.toISOString();
  // Yesterday's day, published at 00:01 today: `upgrade` asks for its bundle.
  const ledgerDate = new Date(now.getTime() - 86_400_000).toISOString().slice(0, 10);
  const other = () => crypto.randomBytes(32).toString('hex');
  const receiptFor = (hash: string) => receipt(mode === 'other-hash' ? other() : hash, now);
  switch (mode) {
    case 'honest':
    case 'other-hash': {
      const asked = JSON.parse(body) as { hash?: string; hashes?: string[] };
      const json =
        asked.hashes === undefined
          ? { hash: asked.hash, submittedAt, ledgerDate, receipt: receiptFor(asked.hash!) }
          : {
              success: true,
              submittedAt,
              ledgerDate,
              results: asked.hashes.map((hash) => ({ hash, status: 'accepted', receipt: receiptFor(hash) })),
            };
      return void res.writeHead(req.url === '/api/v1/beta/timestamps' ? 200 : 201).end(JSON.stringify(json));
    }
    case 'endless':
      res.writeHead(200, { 'content-type': 'application/json' });
      return pour(res, Buffer.alloc(64 * 1024, 0x20), 512 * MiB);
    case 'slow': {
      res.writeHead(200, { 'content-type': 'application/json' });
      let open = true;
      res.on('close', () => (open = false));
      // One byte every 200 ms, ended by the server after 30 s for a client that would wait for ever.
      const started = Date.now();
      const timer = setInterval(() => {
        if (!open) return clearInterval(timer);
        if (Date.now() - started > 30_000) {
          clearInterval(timer);
          return void res.end();
        }
        sent++;
        res.write(' ');
      }, 200);
      return;
    }
    case 'gzip-bomb':
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      sent += bomb.length;
      return void res.end(bomb);
    case 'oversize':
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(64 * MiB) });
      return pour(res, Buffer.alloc(64 * 1024, 0x20), 64 * MiB);
  }
}

beforeAll(async () => {
  project = tempProject('client-hostile');
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-client-hostile-'));
  const keys = run(project, ['keys', 'init']);
  expect(keys.code, keys.stderr).toBe(0);
  const tsa = loadTsaKeys({ keys: path.join(project, 'keys'), privateKeys: path.join(project, 'data/private-keys') });
  if (tsa === undefined) throw new Error('keys init made no TSA key');
  identity = { certificates: tsa.certificates, sign: (data) => crypto.sign('sha256', data, tsa.privateKey) };
  const member = zlib.gzipSync(Buffer.alloc(MiB), { level: 9 });
  bomb = Buffer.concat(Array.from({ length: 1024 }, () => member));

  // The command as its package bundles it (client/build.mjs): src/ and core/ in one file, for Node 20.
  const esbuild = await import('esbuild');
  cli = path.join(work, 'timeseal-client.mjs');
  await esbuild.build({
    entryPoints: [path.join(ROOT, 'client/src/cli/bin.ts')],
    outfile: cli,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    define: { CLIENT_VERSION: '"0.0.0-test"' },
    logLevel: 'error',
  });

  server = http.createServer((req, res) => {
    encodingsAsked.add(req.headers['accept-encoding'] ?? '(none)');
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'GET' && pathname.startsWith('/keys/')) {
      const file = path.join(project, 'keys', path.basename(pathname));
      if (!fs.existsSync(file)) return void res.writeHead(404).end();
      return void res.writeHead(200).end(fs.readFileSync(file));
    }
    if (req.method === 'GET' && pathname.startsWith('/api/proof/')) {
      // The bundle: hostile in every mode but the honest one (which has none to give: the day is not built).
      if (mode === 'honest' || mode === 'other-hash') return void res.writeHead(404).end('{"error":"not published"}');
      return answer(req, res, '');
    }
    if (req.method !== 'POST' || !pathname.startsWith('/api/v1/beta/timestamp')) return void res.writeHead(404).end();
    let body = '';
    req.setEncoding('utf8').on('data', (s: string) => (body += s));
    req.on('end', () => answer(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  if (server) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  removeTempProjects();
  fs.rmSync(work, { recursive: true, force: true });
  if (figures.length > 0) console.log(`timeseal-client stamp against a hostile server:\n${figures.join('\n')}`);
});

/** `timeseal-client stamp a.txt b.txt --json` under Node 20 and GNU time, in a folder of its own. */
async function stampTwo(label: string): Promise<MeasuredRun & { dir: string }> {
  const dir = path.join(work, label);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'a.txt'), `first file of ${label}\n`);
  fs.writeFileSync(path.join(dir, 'b.txt'), `second file of ${label}\n`);
  const r = await measurePeakRss(NODE20, [cli, 'stamp', 'a.txt', 'b.txt', '--json', '--timeout', String(TIMEOUT_MS)], {
    cwd: dir,
    env: {
      PATH: '/usr/bin:/bin',
      HOME: work,
      TIMESEAL_SERVER: base,
      TIMESEAL_TRUST: path.join(work, `${label}.trust.json`),
    },
  });
  return { ...r, dir };
}

const proofs = (dir: string) => fs.readdirSync(dir).filter((f) => f.endsWith('.timeseal.json'));
/** The lines the client wrote on stderr, its notes and its final message. */
const errorLines = (r: MeasuredRun) => r.stderr.trim().split('\n');

describe('timeseal-client stamp against a hostile server', () => {
  test('the honest server: both files stamped, their proofs written, exit 0; every request says Accept-Encoding: identity', async () => {
    mode = 'honest';
    const r = await stampTwo('honest');
    figures.push(`  honest: exit ${r.code}, ${r.peakMb} MB`);
    expect(r.code, r.stderr).toBe(0);
    expect(proofs(r.dir).sort()).toEqual(['a.txt.timeseal.json', 'b.txt.timeseal.json']);
    // The keys, the batch: each request asked for the answer as it is.
    expect([...encodingsAsked]).toEqual(['identity']);
  });

  // Refused (exit 1), one line naming the request and what was wrong with its answer; no proof file.
  test.each([
    ['endless', /the answer exceeds the 81920-byte limit of its kind; refused$/],
    ['gzip-bomb', /the answer is gzip-encoded although identity was asked for; not decompressed$/],
    ['oversize', /the answer of 67108864 bytes exceeds the 81920-byte limit of its kind; refused$/],
  ] as const)(
    `%s answer: exit 1 with one line saying why, no proof file, peak RSS < ${PEAK_RSS_LIMIT_MB} MB`,
    async (hostile, reason) => {
      mode = hostile;
      const before = sent;
      const r = await stampTwo(hostile);
      figures.push(`  ${hostile}: exit ${r.code}, ${r.peakMb} MB, the server wrote ${sent - before} bytes`);
      expect(r.code, r.stderr).toBe(1);
      const last = errorLines(r).at(-1)!;
      expect(last).toMatch(/^timeseal-client: http: POST http:\/\/127\.0\.0\.1:\d+\/api\/v1\/beta\/timestamps: /);
      expect(last).toMatch(reason);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stdout).toBe('');
      expect(proofs(r.dir)).toEqual([]);
      expect(r.peakMb, `peak RSS of timeseal-client against the ${hostile} server`).toBeLessThan(PEAK_RSS_LIMIT_MB);
    },
  );

  test('slow answer: cut off at the deadline over the whole body, exit 75 (try again), no proof file', async () => {
    mode = 'slow';
    const started = Date.now();
    const r = await stampTwo('slow');
    const took = Date.now() - started;
    figures.push(`  slow: exit ${r.code}, ${r.peakMb} MB, ${took} ms`);
    expect(r.code, r.stderr).toBe(75);
    const records = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { file: string; action: string; temporary?: boolean; error: string });
    expect(records.map((x) => [x.file, x.action, x.temporary])).toEqual([
      ['a.txt', 'failed', true],
      ['b.txt', 'failed', true],
    ]);
    for (const x of records)
      expect(x.error).toMatch(
        new RegExp(`^not stamped: POST ${base}/api/v1/beta/timestamps: no complete answer within ${TIMEOUT_MS} ms$`),
      );
    expect(errorLines(r).at(-1)).toMatch(/^timeseal-client: stopped: .*Run the same command again/);
    expect(proofs(r.dir)).toEqual([]);
    expect(took).toBeLessThan(15_000);
  });

  test('receipts for another hash: exit 1, each file saying its receipt does not check, no proof file', async () => {
    mode = 'other-hash';
    const r = await stampTwo('other-hash');
    figures.push(`  other-hash: exit ${r.code}, ${r.peakMb} MB`);
    expect(r.code, r.stderr).toBe(1);
    const records = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { file: string; action: string; error: string });
    expect(records.map((x) => [x.file, x.action])).toEqual([
      ['a.txt', 'failed'],
      ['b.txt', 'failed'],
    ]);
    for (const x of records)
      expect(x.error).toMatch(/^stamped, but its receipt does not check: .*; no proof file written$/);
    expect(proofs(r.dir)).toEqual([]);
  });
});

describe('timeseal-client upgrade against a hostile server (the bundle)', () => {
  /** `timeseal-client upgrade a.txt.timeseal.json --json` of the honest run's proof, its trust store. */
  async function upgradeHonest(label: string): Promise<MeasuredRun & { record: Record<string, unknown> }> {
    const dir = path.join(work, 'honest');
    const r = await measurePeakRss(
      NODE20,
      [cli, 'upgrade', 'a.txt.timeseal.json', '--json', '--timeout', String(TIMEOUT_MS)],
      {
        cwd: dir,
        env: { PATH: '/usr/bin:/bin', HOME: work, TIMESEAL_TRUST: path.join(work, 'honest.trust.json') },
      },
    );
    const record = JSON.parse(r.stdout.trim() || '{}') as Record<string, unknown>;
    return { ...r, record };
  }

  test.each([
    ['endless', 1, /the answer exceeds the 4194304-byte limit of its kind; refused$/],
    ['gzip-bomb', 1, /the answer is gzip-encoded although identity was asked for; not decompressed$/],
    ['oversize', 1, /the answer of 67108864 bytes exceeds the 4194304-byte limit of its kind; refused$/],
    ['slow', 75, new RegExp(`no complete answer within ${TIMEOUT_MS} ms$`)],
  ] as const)(
    `%s bundle: exit %i naming GET /api/proof/<hash> and why, the proof file unchanged, peak RSS < ${PEAK_RSS_LIMIT_MB} MB`,
    async (hostile, exit, reason) => {
      const proofFile = path.join(work, 'honest', 'a.txt.timeseal.json');
      expect(fs.existsSync(proofFile), 'the honest stamp wrote it').toBe(true);
      const before = fs.readFileSync(proofFile, 'utf8');
      mode = hostile;
      const r = await upgradeHonest(hostile);
      figures.push(`  upgrade, ${hostile} bundle: exit ${r.code}, ${r.peakMb} MB`);
      expect(r.code, r.stderr).toBe(exit);
      expect(r.record).toMatchObject({ proof: 'a.txt.timeseal.json', state: 'error' });
      const error = String(r.record.error);
      expect(error).toMatch(new RegExp(`^GET ${base}/api/proof/[0-9a-f]{64}: `));
      expect(error).toMatch(reason);
      expect(fs.readFileSync(proofFile, 'utf8')).toBe(before);
      expect(r.peakMb, `peak RSS of upgrade against the ${hostile} bundle`).toBeLessThan(PEAK_RSS_LIMIT_MB);
    },
  );
});
