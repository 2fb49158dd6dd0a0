// `timeseal verify`, `timeseal mirror pull` and `timeseal receipt check` stream: what they hold does not grow
// with the day. Two archives, one day each, built by the real CLI: 2,000 hashes and 400,000, with a receipt of
// one of them signed by the project's TSA key. Each is verified from its folder and from a loopback S3 stand-in
// serving its files (`--archive s3://…`, the S3 engine's GetObject), pulled into an empty mirror from a
// loopback host serving its files, and its receipt checked against the folder, the host and the S3 stand-in (a
// receipt check that took s3:// for a folder found no day there: pending), every command under
// GNU time with a small JavaScript heap (V8 lets its heap grow lazily over garbage; under a small one, what
// remains is what is held); the big day's peak RSS must stay within GROWTH_LIMIT_MB of the small day's. Code that
// holds the day grows far more than that here: the ledger read whole (97 bytes an entry, 39 MB), its entries,
// leaves and tiles in columns (~100 bytes an entry), every record of the archive for the index (40 bytes an
// entry, doubled as it grows), and, in a pull, every tile and entry bundle fetched (~70 bytes an entry).
// Measured on this machine: the code before grew by 81 MB (verify) and 87 MB (pull); streamed, by 22 and 23 MB
// (what a longer run of Node takes whatever the day: its heap up to the limit, compiled code). A verify of the S3
// archive that read each object whole (the ledger and index-sha256.json collected, then joined) grew by 106 MB
// (117 -> 223); streamed, by 18 MB (95 -> 113). A receipt check
// that read the ledger whole and parsed it ran out of its 32 MB heap on the big day; streamed, it grew by 0 and
// 4 MB (folder, host).
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fromHex } from '../../core/encoding.ts';
import { grantedResponse, randomSerial, receiptRequest, tstInfo } from '../../core/tsa-authority.ts';
import { loadTsaKeys } from '../../runtime/keys.ts';
import { measurePeakRss, type MeasuredRun } from '../support/peak-rss.ts';
import { BIN, makeHashes, removeTempProjects, run, tempProject } from './helpers.ts';

const DAY = '2025-11-02';
const SMALL = 2_000;
const BIG = 400_000;
const GROWTH_LIMIT_MB = 50;
/** The JavaScript heap of every command: old space (MB); new space 1 MB. */
const HEAP_MB = 32;

/** The bucket of the loopback host's S3 stand-in: GET /<BUCKET>/<path> answers the archive file (path-style, as
 * the S3 engine asks with an endpoint; no signature is checked). */
const BUCKET = 'verify-memory';

/** `timeseal <args>` under GNU time (test/support/peak-rss.ts), with the small heap; an s3:// archive is the
 * stand-in at `url`. */
function measured(cwd: string, args: string[], url: string): Promise<MeasuredRun> {
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('TIMESEAL_') && k !== 'NODE_OPTIONS'),
  );
  env.PATH = `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`;
  env.NODE_OPTIONS = `--max-old-space-size=${HEAP_MB} --max-semi-space-size=1`;
  Object.assign(env, {
    AWS_ENDPOINT_URL: url,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
  });
  return measurePeakRss(BIN, args, { cwd, env });
}

/** A project with one built day of `count` hashes, the receipt of one of them (receipt.tsr, signed by the
 * project's TSA key a second after the import), and a loopback host serving its ledgers/ folder. */
async function archive(label: string, count: number) {
  const dir = tempProject(label);
  expect(run(dir, ['keys', 'init'], { env: { TIMESEAL_NOW: `${DAY}T09:00:00.000Z` } }).code).toBe(0);
  const hashes = makeHashes(label, count);
  const receiptHash = hashes[count >> 1]!;
  const tsa = loadTsaKeys({ keys: path.join(dir, 'keys'), privateKeys: path.join(dir, 'data/private-keys') });
  if (tsa === undefined) throw new Error('keys init made no TSA key');
  const identity = {
    certificates: tsa.certificates,
    sign: (data: Uint8Array) => crypto.sign('sha256', data, tsa.privateKey),
  };
  const request = receiptRequest(fromHex(receiptHash));
  const token = tstInfo(request, identity, new Date(`${DAY}T10:00:01.000Z`), randomSerial());
  fs.writeFileSync(path.join(dir, 'receipt.tsr'), grantedResponse(token, request, identity));
  const imported = run(dir, ['import', '-'], {
    env: { TIMESEAL_NOW: `${DAY}T10:00:00.000Z` },
    input: `${hashes.join('\n')}\n`,
  });
  expect(imported.code, imported.stderr).toBe(0);
  const built = run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: '2025-11-03T00:01:00.000Z' } });
  expect(built.code, built.stderr).toBe(0);
  const root = path.join(dir, 'ledgers');
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    const rel = (pathname.startsWith(`/${BUCKET}/`) ? pathname.slice(BUCKET.length + 2) : pathname.slice(1)).split('/');
    const file = path.join(root, ...rel);
    if (rel.includes('..') || !fs.existsSync(file) || !fs.statSync(file).isFile()) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-length': fs.statSync(file).size });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { dir, url, stop, receiptHash };
}

describe('verify, mirror pull and receipt check: peak RSS flat in the size of the day', () => {
  const archives: Awaited<ReturnType<typeof archive>>[] = [];
  const figures: string[] = [];

  beforeAll(async () => {
    archives.push(await archive('verify-memory-small', SMALL), await archive('verify-memory-big', BIG));
  }, 240_000);
  afterAll(async () => {
    for (const a of archives) await a.stop();
    if (figures.length > 0) console.log(`peak RSS:\n${figures.join('\n')}`);
    removeTempProjects();
  });

  type Archive = (typeof archives)[number];
  const receiptCheck = (a: Archive, archive: string) => [
    'receipt',
    'check',
    'receipt.tsr',
    '--digest',
    a.receiptHash,
    '--archive',
    archive,
    '--keys',
    'keys',
    '--json',
  ];
  test.each([
    ['verify', (a: Archive) => ['verify', '--archive', 'ledgers', '--keys', 'keys', '--json'], { ok: true }],
    [
      'verify --archive s3://',
      () => ['verify', '--archive', `s3://${BUCKET}`, '--keys', 'keys', '--json'],
      { ok: true },
    ],
    ['mirror pull', (a: Archive) => ['mirror', 'pull', a.url, 'mirror', '--keys', 'keys', '--json'], { ok: true }],
    ['receipt check', (a: Archive) => receiptCheck(a, 'ledgers'), { state: 'kept', promise: { state: 'kept' } }],
    ['receipt check --archive URL', (a: Archive) => receiptCheck(a, a.url), { promise: { state: 'kept' } }],
    [
      'receipt check --archive s3://',
      (a: Archive) => receiptCheck(a, `s3://${BUCKET}`),
      { state: 'kept', promise: { state: 'kept' } },
    ],
  ])(
    `%s: the day of ${BIG.toLocaleString('en-US')} hashes within ${GROWTH_LIMIT_MB} MB of the day of ${SMALL.toLocaleString('en-US')}`,
    async (name, args, answer) => {
      const peaks: number[] = [];
      for (const a of archives) {
        const r = await measured(a.dir, args(a), a.url);
        expect(r.code, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout)).toMatchObject(answer);
        peaks.push(r.peakMb);
      }
      const [small, big] = peaks;
      figures.push(`${name}: ${SMALL} hashes ${small} MB, ${BIG} hashes ${big} MB`);
      expect(small).toBeGreaterThan(0);
      expect(big! - small!, `peak RSS of ${name}: ${big} MB for ${BIG} hashes, ${small} MB for ${SMALL}`).toBeLessThan(
        GROWTH_LIMIT_MB,
      );
    },
    120_000,
  );
});
