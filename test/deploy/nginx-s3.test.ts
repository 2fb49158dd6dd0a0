// deploy/nginx/snippets/timeseal-ledgers-s3.conf: nginx (Debian's) in front of an archive kept in an S3 bucket, on
// a real Ceph RADOS Gateway (test/support/ceph-rgw.ts). A writer publishes a day to s3://BUCKET/archive with
// `timeseal ledger build`; a `timeseal serve` node answers from its working copy. Through nginx, every published
// object comes from the bucket (the access log names the gateway, not the node) with the bytes, Content-Type,
// Cache-Control class, security and CORS headers the node sends for the same path; a name the format does not
// define never reaches the bucket; an object the bucket lacks is the site's 404 page, as on the node; a
// preflight is answered by nginx like the node answers it, and a POST is refused. A large object (a day's ledger
// is 9.7 GB at 100,000,000 hashes) is served by ranges: bytes far into it, and its last bytes, come from the
// bucket as a 206 with those bytes.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openArchiveStore } from '../../pipeline/storage/open.ts';
import { startServer, type SpawnedServer } from '../../ingest/test/fixture.ts';
import { makeHashes, removeTempProjects, ROOT, run, tempProject, writeHashFile } from '../cli/helpers.ts';
import { cephForSuite, publicArchiveUrl } from '../support/ceph-rgw.ts';
import { request, startNginx, type RunningNginx } from '../support/nginx.ts';

const DAY = '2025-11-01';
/** Headers a node sets on an archive file (ingest/security-headers.ts) that nginx must send the same. */
const SAME_HEADERS = [
  'content-type',
  'cache-control',
  'x-content-type-options',
  'strict-transport-security',
  'referrer-policy',
  'access-control-allow-origin',
  'access-control-expose-headers',
  'cross-origin-resource-policy',
];

const ceph = cephForSuite();
let dir: string;
let node: SpawnedServer;
let nginx: RunningNginx;
let objects: string[];

beforeAll(async () => {
  dir = tempProject('nginx-s3');
  const env = {
    ...ceph.current.env,
    TIMESEAL_ARCHIVE: `s3://${ceph.current.bucket}/archive`,
    TIMESEAL_SITE: path.join(dir, 'dist/site'),
    TRUST_PROXY: '1',
  };
  fs.cpSync(path.join(ROOT, 'dist/site'), path.join(dir, 'dist/site'), { recursive: true });
  for (const [args, now] of [
    [['keys', 'init'], '2025-11-01T00:00:00Z'],
    [['import', writeHashFile(dir, 'day.txt', makeHashes(DAY, 300))], `${DAY}T12:00:00Z`],
    [['ledger', 'build'], '2025-11-02T00:01:00Z'],
  ] as const) {
    const r = run(dir, [...args], { env: { ...env, TIMESEAL_NOW: now } });
    expect(r.code, `timeseal ${args.join(' ')}: ${r.stderr}`).toBe(0);
  }
  await publicArchiveUrl(ceph.current, 'archive');
  objects = await (await openArchiveStore(env.TIMESEAL_ARCHIVE, ceph.current.env)).list('');
  node = await startServer(dir, { ...env, TIMESEAL_NOW: '2025-11-02T00:05:00Z' });
  const host = new URL(node.url).host;
  nginx = await startNginx(dir, [host, host], {
    ledgersFromS3: { endpoint: ceph.current.endpoint, path: `/${ceph.current.bucket}/archive` },
  });
}, 180_000);

afterAll(async () => {
  await nginx?.stop();
  if (node && node.child.exitCode === null) {
    node.child.kill('SIGTERM');
    await node.exited;
  }
  removeTempProjects();
});

/** The upstream fields of the requests logged after the first `before` lines, once `count` more are there. */
async function loggedAfter(before: number, count: number): Promise<string[]> {
  await vi.waitFor(() => expect(nginx.upstreams().length).toBeGreaterThanOrEqual(before + count), {
    timeout: 10_000,
    interval: 20,
  });
  return nginx.upstreams().slice(before);
}

describe('nginx in front of the archive in an S3 bucket', () => {
  it('serves every published object from the bucket, as the node serves it from its working copy', async () => {
    expect(objects).toContain(`${DAY}.json`);
    expect(objects).toContain('days.json');
    expect(objects.some((o) => o.startsWith('tile/'))).toBe(true);
    const before = nginx.upstreams().length;
    // A mutable file (block_info.json, ots_status.json) may be rewritten meanwhile: the node's schedule runs the
    // day's anchoring (due 00:02) when it starts, writing its working copy and then the bucket, so such a file is
    // asked again until both sides have the new bytes.
    let asked = 0;
    for (const object of objects) {
      const urlPath = `/ledgers/${object}`;
      await vi.waitFor(
        async () => {
          asked++;
          const [viaNginx, direct] = await Promise.all([request(nginx.url, urlPath), request(node.url, urlPath)]);
          expect([viaNginx.status, direct.status], urlPath).toEqual([200, 200]);
          expect(viaNginx.body.equals(direct.body), urlPath).toBe(true);
          for (const name of SAME_HEADERS)
            expect(viaNginx.headers[name], `${urlPath} ${name}`).toBe(direct.headers[name]);
          expect(viaNginx.headers['x-amz-request-id'], urlPath).toBeUndefined();
        },
        { timeout: 20_000, interval: 250 },
      );
    }
    // Each came from the gateway, none from the node or from disk.
    const gateway = new URL(ceph.current.endpoint).host;
    expect(await loggedAfter(before, asked)).toEqual(Array.from({ length: asked }, () => gateway));
  });

  it('answers a name outside the archive format without the bucket, and a missing object with the 404 page', async () => {
    const before = nginx.upstreams().length;
    for (const urlPath of ['/ledgers/secret.txt', '/ledgers/2099-01-01.json']) {
      const [viaNginx, direct] = await Promise.all([request(nginx.url, urlPath), request(node.url, urlPath)]);
      expect([viaNginx.status, direct.status], urlPath).toEqual([404, 404]);
      expect(viaNginx.body.toString(), urlPath).toContain('Page Not Found');
    }
    const gateway = new URL(ceph.current.endpoint).host;
    const logged = await loggedAfter(before, 2);
    expect(logged[0]).toBe('-');
    expect(logged[1]).toBe(gateway);
  });

  it('answers a Range request far into a large object with 206 and those bytes, from the bucket', async () => {
    // 64 MiB of random bytes under a ledger's name, put in the bucket as a writer would.
    const big = crypto.randomBytes(64 << 20);
    const name = '2000-01-01.json';
    await new S3Client({
      endpoint: ceph.current.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: ceph.current.accessKeyId, secretAccessKey: ceph.current.secretAccessKey },
    }).send(new PutObjectCommand({ Bucket: ceph.current.bucket, Key: `archive/${name}`, Body: big }));
    const before = nginx.upstreams().length;
    const from = 60_000_000;
    const ranged = await request(nginx.url, `/ledgers/${name}`, { headers: { Range: `bytes=${from}-${from + 4095}` } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers['content-range']).toBe(`bytes ${from}-${from + 4095}/${big.length}`);
    expect(ranged.body.equals(big.subarray(from, from + 4096))).toBe(true);
    // The last bytes, asked as a suffix.
    const tail = await request(nginx.url, `/ledgers/${name}`, { headers: { Range: 'bytes=-100' } });
    expect(tail.status).toBe(206);
    expect(tail.body.equals(big.subarray(big.length - 100))).toBe(true);
    const gateway = new URL(ceph.current.endpoint).host;
    expect(await loggedAfter(before, 2)).toEqual([gateway, gateway]);
  });

  it('answers a preflight itself, with the headers the node sends', async () => {
    const urlPath = `/ledgers/${DAY}.json`;
    const headers = { Origin: 'https://elsewhere.example', 'Access-Control-Request-Method': 'GET' };
    const [viaNginx, direct] = await Promise.all([
      request(nginx.url, urlPath, { method: 'OPTIONS', headers }),
      request(node.url, urlPath, { method: 'OPTIONS', headers }),
    ]);
    expect([viaNginx.status, direct.status]).toEqual([204, 204]);
    for (const name of ['access-control-allow-origin', 'access-control-allow-methods'])
      expect(viaNginx.headers[name], name).toBe(direct.headers[name]);
    // Nothing but reading reaches the bucket.
    const post = await request(nginx.url, urlPath, { method: 'POST', body: 'x' });
    expect(post.status).toBe(404);
  });
});
