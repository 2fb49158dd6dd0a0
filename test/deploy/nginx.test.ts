// deploy/nginx/timeseal.conf in front of two real `timeseal serve` nodes (real parts, not mocks: "Tests start real …
// nginx from Debian's packages on loopback; nothing is mocked"). One project folder (keys, a SQLite database and
// an archive with one published day) is shared by both nodes, run with TRUST_PROXY=1 as the config requires.
// Through nginx: the site, archive files and keys come from disk with the same bytes, types, Cache-Control
// classes and security headers as a node sends; /api/, index-sha256.json and /keys/sigstore-trusted-root.json
// reach the nodes, both of them, and still work with one node stopped; a forged X-Forwarded-For never becomes
// the client's address; bodies over the app's limit stop at nginx; with every node down the static files are
// still served.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DAY,
  makeFixture,
  NOW,
  randomHash,
  removeTempDirs,
  ROOT,
  startServer,
  type SpawnedServer,
} from '../../ingest/test/fixture.ts';
import { request, startNginx, submit } from '../support/nginx.ts';

const IMMUTABLE = 'public, max-age=31536000, immutable';
const SHORT = 'public, max-age=60';
/** The security headers ingest/security-headers.ts sets; nginx must send the same on the files it serves. */
const SECURITY_HEADERS = [
  'content-security-policy',
  'referrer-policy',
  'strict-transport-security',
  'x-content-type-options',
  'x-frame-options',
  'cross-origin-opener-policy',
  'origin-agent-cluster',
  'x-dns-prefetch-control',
  'x-download-options',
  'x-permitted-cross-domain-policies',
  'x-xss-protection',
];
/** Cross-origin reading (ingest/security-headers.ts PUBLIC_HEADERS): the archive and keys have them, pages not. */
const CROSS_ORIGIN_HEADERS = [
  'access-control-allow-origin',
  'access-control-expose-headers',
  'cross-origin-resource-policy',
];

/** A small site like the built one, for runs where dist/site has not been built. */
function writeSmallSite(site: string): void {
  const page = (title: string) =>
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1></body></html>\n`;
  const files: Record<string, string> = {
    'index.html': page('Timeseal'),
    '404.html': page('Page Not Found'),
    'about/index.html': page('About'),
    'pricing.html': page('Pricing'),
    'ledgers/index.html': page('Ledgers'),
    '_astro/app.Ab12Cd34.js': 'console.log("timeseal");\n',
    'favicon.svg': '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7"/></svg>\n',
    // serve records the verifier's release (pipeline/verifier-release.ts), which reads its version here.
    'offline-verifier.html': page('Offline verifier').replace(
      '<title>',
      '<meta name="generator" content="Timeseal offline verifier 0.0.1"><title>',
    ),
  };
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(site, name)), { recursive: true });
    fs.writeFileSync(path.join(site, name), text);
  }
}

function firstFile(dir: string, accept: (rel: string) => boolean): string {
  const rel = (fs.readdirSync(dir, { recursive: true }) as string[])
    .sort()
    .find((r) => fs.statSync(path.join(dir, r)).isFile() && accept(r));
  if (rel === undefined) throw new Error(`no matching file under ${dir}`);
  return rel.split(path.sep).join('/');
}

let dir: string;
/** Hashes in the published day's ledger. */
let published: string[];
let site: string;
let nodes: SpawnedServer[] = [];
let stopNginx: (() => Promise<void>) | undefined;
let proxy: string;
let accessLog: string;

/** The upstream field of every access-log line written so far ('-' for a file nginx served itself). */
const upstreams = (): string[] =>
  fs
    .readFileSync(accessLog, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => /upstream=(.*)$/.exec(l)![1]!);

/** The upstream fields of the `count` requests logged after the first `before` lines (nginx logs a request
 * once its answer is sent, so the line may come a moment after the answer). */
async function loggedAfter(before: number, count: number): Promise<string[]> {
  for (let i = 0; i < 100 && upstreams().length < before + count; i++) await new Promise((r) => setTimeout(r, 20));
  return upstreams().slice(before);
}

/** The number of access-log lines once the log has settled: a line for an earlier answer (a readiness probe, the
 * previous test's last request) may still be on its way, and must not be counted as one of the next requests. */
async function loggedSoFar(): Promise<number> {
  let count = upstreams().length;
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, 40));
    const now = upstreams().length;
    if (now === count) return count;
    count = now;
  }
  return count;
}

async function stopNode(node: SpawnedServer): Promise<void> {
  if (node.child.exitCode === null && node.child.signalCode === null) {
    process.kill(node.child.pid!, 'SIGTERM');
    await node.exited;
  }
}

beforeAll(async () => {
  // 300 hashes: a day file of tens of KB (compression matters), a full tile (256 leaves) and a partial one.
  const f = await makeFixture({ env: { TRUST_PROXY: '1' }, publish: Array.from({ length: 300 }, randomHash) });
  dir = f.dir;
  published = f.published;
  await f.close();
  site = path.join(dir, 'dist/site');
  const built = path.join(ROOT, 'dist/site');
  if (fs.existsSync(path.join(built, 'index.html'))) fs.cpSync(built, site, { recursive: true });
  else writeSmallSite(site);

  // One after the other: each node records the offline verifier release (if the site has one) before it listens.
  const env = { ...f.env, TIMESEAL_SITE: site, TRUST_PROXY: '1', TIMESEAL_NOW: NOW };
  nodes.push(await startServer(dir, env));
  nodes.push(await startServer(dir, env));

  const started = await startNginx(
    dir,
    nodes.map((n) => new URL(n.url).host),
  );
  ({ url: proxy, accessLog } = started);
  stopNginx = started.stop;
});

afterAll(async () => {
  await stopNginx?.();
  await Promise.all(nodes.map(stopNode));
  removeTempDirs();
});

describe('nginx in front of two timeseal serve nodes', () => {
  it('serves the site from disk with the same bytes, cache class and security headers as a node', async () => {
    const node = nodes[0]!.url;
    const before = await loggedSoFar();
    const cases = [
      ['/', 'index.html', 'no-cache'],
      ['/ledgers/', 'ledgers/index.html', 'no-cache'],
      ['/favicon.svg', 'favicon.svg', 'public, max-age=3600'],
      ['/offline-verifier.html', 'offline-verifier.html', 'no-cache'],
      [
        `/${firstFile(site, (r) => r.startsWith('_astro/'))}`,
        firstFile(site, (r) => r.startsWith('_astro/')),
        IMMUTABLE,
      ],
    ] as const;
    for (const [urlPath, file, cacheControl] of cases) {
      const viaNginx = await request(proxy, urlPath);
      const direct = await request(node, urlPath);
      expect([viaNginx.status, direct.status], urlPath).toEqual([200, 200]);
      expect(viaNginx.body.equals(fs.readFileSync(path.join(site, file))), urlPath).toBe(true);
      expect(viaNginx.body.equals(direct.body), urlPath).toBe(true);
      expect(viaNginx.headers['cache-control'], urlPath).toBe(cacheControl);
      expect(direct.headers['cache-control'], urlPath).toBe(cacheControl);
      expect(viaNginx.headers['content-type'], urlPath).toBe(direct.headers['content-type']);
      for (const name of [...SECURITY_HEADERS, ...CROSS_ORIGIN_HEADERS])
        expect(viaNginx.headers[name], `${urlPath} ${name}`).toBe(direct.headers[name]);
    }
    // Every one of them was a file nginx read itself: no upstream in its log.
    expect(await loggedAfter(before, cases.length)).toEqual(cases.map(() => '-'));
  });

  it('answers a missing page, a dot-file and an unknown archive name with the site 404 page', async () => {
    for (const urlPath of ['/no-such-page', '/.env', '/ledgers/secret.txt', '/keys/private.pem']) {
      const viaNginx = await request(proxy, urlPath);
      const direct = await request(nodes[0]!.url, urlPath);
      expect([viaNginx.status, direct.status], urlPath).toEqual([404, 404]);
      expect(viaNginx.body.toString(), urlPath).toContain('Page Not Found');
      expect(viaNginx.headers['cache-control'], urlPath).toBe('no-cache');
    }
  });

  it('serves archive files and keys from disk: same bytes, type and Cache-Control class as a node', async () => {
    const archive = path.join(dir, 'ledgers');
    const cases: Array<[string, string]> = [
      [`ledgers/${DAY}.json`, IMMUTABLE],
      [`ledgers/${DAY}.json.sig`, IMMUTABLE],
      [`ledgers/${DAY}.json.dilithium.sig`, IMMUTABLE],
      [`ledgers/${DAY}.checkpoint`, IMMUTABLE],
      [`ledgers/${firstFile(archive, (r) => /^tile[/\\]0[/\\]\d{3}$/.test(r))}`, IMMUTABLE],
      [`ledgers/${firstFile(archive, (r) => /^tile[/\\]0[/\\]\d{3}\.p[/\\]\d+$/.test(r))}`, IMMUTABLE],
      [`ledgers/${firstFile(archive, (r) => r.startsWith(`tile${path.sep}entries${path.sep}`))}`, IMMUTABLE],
      [`ledgers/${firstFile(archive, (r) => /^index[/\\]\d+-\d+\.idx$/.test(r))}`, IMMUTABLE],
      ['ledgers/checkpoint', SHORT],
      ['ledgers/days.json', SHORT],
      ['ledgers/index/segments.json', SHORT],
      ['ledgers/offline-verifier.json', SHORT],
      ['ledgers/ots_status.json', 'no-cache'],
      [`ledgers/block-info/${DAY.slice(0, 7)}.json`, 'no-cache'],
      ['keys/public.pem', 'public, max-age=300'],
      ['keys/timeseal-tsa.pem', 'public, max-age=300'],
      ['keys/timeseal-tsa-root.pem', 'public, max-age=300'],
      ['keys/ed25519.vkey', 'public, max-age=300'],
      ['keys/mldsa44.vkey', 'public, max-age=300'],
      ['keys/witnesses', 'public, max-age=300'],
      ['keys/witnesses.retired', 'public, max-age=300'],
      ['keys/dilithium_public.key', 'public, max-age=300'],
    ];
    // The witness policy and the retired witnesses (pipeline/witness.ts writes them when witnesses are configured).
    fs.writeFileSync(path.join(dir, 'keys/witnesses'), 'quorum none\n');
    fs.writeFileSync(path.join(dir, 'keys/witnesses.retired'), 'retired 2025-11-01 w.example+01020304+BAAA\n');
    const before = await loggedSoFar();
    for (const [rel, cacheControl] of cases) {
      const viaNginx = await request(proxy, `/${rel}`);
      const direct = await request(nodes[1]!.url, `/${rel}`);
      expect([viaNginx.status, direct.status], rel).toEqual([200, 200]);
      expect(viaNginx.body.equals(fs.readFileSync(path.join(dir, rel))), rel).toBe(true);
      expect(viaNginx.body.equals(direct.body), rel).toBe(true);
      expect([viaNginx.headers['cache-control'], direct.headers['cache-control']], rel).toEqual([
        cacheControl,
        cacheControl,
      ]);
      expect(viaNginx.headers['content-type'], rel).toBe(direct.headers['content-type']);
      expect(viaNginx.headers['access-control-allow-origin'], rel).toBe('*');
      for (const name of [...SECURITY_HEADERS, ...CROSS_ORIGIN_HEADERS])
        expect(viaNginx.headers[name], `${rel} ${name}`).toBe(direct.headers[name]);
    }
    expect(await loggedAfter(before, cases.length)).toEqual(cases.map(() => '-'));

    // An immutable file goes out as stored even to a client that accepts gzip, as a node sends it (the day's
    // ledger is well over nginx's gzip_min_length).
    expect(fs.statSync(path.join(archive, `${DAY}.json`)).size).toBeGreaterThan(4096);
    const gzipOk = { 'accept-encoding': 'gzip' };
    const storedViaNginx = await request(proxy, `/ledgers/${DAY}.json`, { headers: gzipOk });
    const storedDirect = await request(nodes[1]!.url, `/ledgers/${DAY}.json`, { headers: gzipOk });
    expect([storedViaNginx.headers['content-encoding'], storedDirect.headers['content-encoding']]).toEqual([
      undefined,
      undefined,
    ]);
    expect(storedViaNginx.body.equals(storedDirect.body)).toBe(true);

    // Readers take byte ranges of index segment files (docs/FORMAT.md §6): nginx answers them from disk as a node does.
    const segment = `/ledgers/${firstFile(archive, (r) => /^index[/\\]\d+-\d+\.idx$/.test(r))}`;
    const rangeViaNginx = await request(proxy, segment, { headers: { range: 'bytes=4-11', ...gzipOk } });
    const rangeDirect = await request(nodes[1]!.url, segment, { headers: { range: 'bytes=4-11', ...gzipOk } });
    expect([rangeViaNginx.status, rangeDirect.status]).toEqual([206, 206]);
    expect(rangeViaNginx.headers['content-range']).toBe(rangeDirect.headers['content-range']);
    expect(rangeViaNginx.body.length).toBe(8);
    expect(rangeViaNginx.body.equals(rangeDirect.body)).toBe(true);

    // A byte range, as a verifier resuming a large download asks it.
    const range = { range: 'bytes=10-41' };
    const partViaNginx = await request(proxy, `/ledgers/${DAY}.json`, { headers: range });
    const partDirect = await request(nodes[1]!.url, `/ledgers/${DAY}.json`, { headers: range });
    expect([partViaNginx.status, partDirect.status]).toEqual([206, 206]);
    expect(partViaNginx.headers['content-range']).toBe(partDirect.headers['content-range']);
    expect(partViaNginx.body.equals(fs.readFileSync(path.join(archive, `${DAY}.json`)).subarray(10, 42))).toBe(true);
    expect(partViaNginx.body.equals(partDirect.body)).toBe(true);
  });

  it('answers a cross-origin preflight for the archive and keys as a node does', async () => {
    const preflight = {
      origin: 'https://verifier.example',
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'if-none-match',
    };
    for (const urlPath of ['/ledgers/checkpoint', `/ledgers/${DAY}.json`, '/keys/public.pem']) {
      const viaNginx = await request(proxy, urlPath, { method: 'OPTIONS', headers: preflight });
      const direct = await request(nodes[0]!.url, urlPath, { method: 'OPTIONS', headers: preflight });
      expect([viaNginx.status, direct.status], urlPath).toEqual([204, 204]);
      for (const name of [
        'access-control-allow-methods',
        'access-control-allow-headers',
        'access-control-max-age',
        ...CROSS_ORIGIN_HEADERS,
      ]) {
        expect(viaNginx.headers[name], `${urlPath} ${name}`).toBe(direct.headers[name]);
      }
      expect(viaNginx.headers['access-control-allow-methods']).toBe('GET, HEAD, OPTIONS');
    }
  });

  it('proxies index-sha256.json, the Sigstore TrustedRoot, robots.txt, sitemap.xml, favicon.ico and /verify (its preview tags for a shared link), which no file on disk holds, and the API to the nodes', async () => {
    expect(fs.existsSync(path.join(dir, 'ledgers/index-sha256.json'))).toBe(false);
    const before = await loggedSoFar();
    const index = await request(proxy, '/ledgers/index-sha256.json');
    expect(index.status).toBe(200);
    expect(index.headers['cache-control']).toBe(SHORT);
    expect(index.body.equals((await request(nodes[0]!.url, '/ledgers/index-sha256.json')).body)).toBe(true);
    expect(await loggedAfter(before, 1)).toEqual([expect.stringMatching(/^127\.0\.0\.1:\d+$/)]);

    const root = await request(proxy, '/keys/sigstore-trusted-root.json');
    expect(root.status).toBe(200);
    expect(root.body.equals((await request(nodes[0]!.url, '/keys/sigstore-trusted-root.json')).body)).toBe(true);
    expect(JSON.parse(root.body.toString()).timestampAuthorities).toHaveLength(1);

    // A shared /verify link naming a hash: the node's page with that hash's preview tags.
    const shared = `/verify?hash=${'ab'.repeat(32)}&search=true`;
    for (const file of ['/robots.txt', '/sitemap.xml', '/favicon.ico', shared, '/verify']) {
      const [viaNginx, direct] = await Promise.all([request(proxy, file), request(nodes[0]!.url, file)]);
      // The favicon is a redirect to the site's SVG icon; the other two are made by the node.
      expect([viaNginx.status, direct.status], file).toEqual(file === '/favicon.ico' ? [301, 301] : [200, 200]);
      expect(viaNginx.headers['content-type'], file).toBe(direct.headers['content-type']);
      expect(viaNginx.headers['location'], file).toBe(direct.headers['location']);
      expect(viaNginx.body.equals(direct.body), file).toBe(true);
    }
    expect((await request(proxy, shared)).body.toString()).toContain(
      `<meta property="og:title" content="Verify the timestamp of SHA-256 ${'ab'.repeat(6)}…abab · Timeseal">`,
    );

    // SCITT's routes (docs/API.md) are the nodes': the configuration, the receipt keys, and a registration
    // refused with the node's RFC 9290 problem details.
    for (const file of ['/.well-known/transparency-configuration', '/.well-known/scitt-keys']) {
      const [viaNginx, direct] = await Promise.all([request(proxy, file), request(nodes[0]!.url, file)]);
      expect([viaNginx.status, direct.status], file).toEqual([200, 200]);
      expect(viaNginx.headers['content-type'], file).toBe('application/cbor');
      expect(viaNginx.body.equals(direct.body), file).toBe(true);
    }
    const notCbor = { method: 'POST', headers: { 'content-type': 'application/cose' }, body: '{"not":"cbor"}' };
    const [refusedViaNginx, refusedDirect] = [
      await request(proxy, '/entries', notCbor),
      await request(nodes[0]!.url, '/entries', notCbor),
    ];
    expect([refusedViaNginx.status, refusedDirect.status]).toEqual([400, 400]);
    expect(refusedViaNginx.headers['content-type']).toBe('application/concise-problem-details+cbor');
    expect(refusedViaNginx.body.equals(refusedDirect.body)).toBe(true);
    expect((await request(proxy, `/entries/${'0'.repeat(64)}`)).status).toBe(404);

    // The time-stamping authority is the nodes': a query gets a token, a refusal the node's message, the chain
    // and the redirect to the policy the node's bytes (before, POST /tsa fell through to the site folder: 405).
    const query = execFileSync('openssl', ['ts', '-query', '-digest', 'ab'.repeat(32), '-sha256', '-cert']);
    const tsaQuery = { method: 'POST', headers: { 'content-type': 'application/timestamp-query' }, body: query };
    const token = await request(proxy, '/tsa', tsaQuery);
    expect(token.status).toBe(200);
    expect(token.headers['content-type']).toBe('application/timestamp-reply');
    fs.writeFileSync(path.join(dir, 'via-nginx.tsr'), token.body);
    const reply = execFileSync('openssl', ['ts', '-reply', '-in', path.join(dir, 'via-nginx.tsr'), '-text']);
    expect(reply.toString()).toMatch(/Status: Granted\./);
    const notQuery = { ...tsaQuery, body: 'not a query' };
    const [tsaRefusedViaNginx, tsaRefusedDirect] = [
      await request(proxy, '/tsa', notQuery),
      await request(nodes[0]!.url, '/tsa', notQuery),
    ];
    // RFC 3161 refuses in the answer (a TimeStampResp with status rejection), as the node does.
    expect(tsaRefusedViaNginx.status).toBe(tsaRefusedDirect.status);
    expect(tsaRefusedViaNginx.headers['content-type']).toBe(tsaRefusedDirect.headers['content-type']);
    expect(tsaRefusedViaNginx.body.equals(tsaRefusedDirect.body)).toBe(true);
    for (const file of ['/tsa/certs', '/tsa']) {
      const [viaNginx, direct] = await Promise.all([request(proxy, file), request(nodes[0]!.url, file)]);
      expect([viaNginx.status, direct.status], file).toEqual(file === '/tsa' ? [302, 302] : [200, 200]);
      expect(viaNginx.headers['location'], file).toBe(direct.headers['location']);
      expect(viaNginx.body.equals(direct.body), file).toBe(true);
    }

    const stats = await request(proxy, '/api/queue-stats.php');
    expect(stats.status).toBe(200);
    expect(JSON.parse(stats.body.toString())).toMatchObject({ lastPublishedDay: DAY, submissionsOpen: true });
    expect((await request(proxy, '/api/no-such-endpoint')).status).toBe(404);
  });

  it('spreads requests over both nodes', async () => {
    const before = await loggedSoFar();
    for (let i = 0; i < 6; i++) expect((await request(proxy, '/api/queue-stats.php')).status).toBe(200);
    const used = new Set(await loggedAfter(before, 6));
    expect(used).toEqual(new Set(nodes.map((n) => new URL(n.url).host)));
  });

  it('a forged X-Forwarded-For buys nothing: the free tier counts the real client across both nodes', async () => {
    const before = await loggedSoFar();
    const statuses: number[] = [];
    for (const forged of ['1.2.3.4', '5.6.7.8', '9.10.11.12', '13.14.15.16'])
      statuses.push((await submit(proxy, forged)).status);
    expect(statuses).toEqual([201, 201, 429, 429]);
    expect(new Set(await loggedAfter(before, 4)).size).toBe(2);
    // Control: a node reached directly trusts the header (TRUST_PROXY=1), which is why only nginx may reach it.
    expect((await submit(nodes[0]!.url, '198.51.100.7')).status).toBe(201);
    const db = new Database(path.join(dir, 'data/timeseal.db'), { readonly: true });
    try {
      const counted = db.prepare('SELECT ip_address, count FROM ip_rate_limit ORDER BY ip_address').all();
      expect(counted).toEqual([
        { ip_address: '127.0.0.1', count: 2 },
        { ip_address: '198.51.100.7', count: 1 },
      ]);
    } finally {
      db.close();
    }
  });

  it('stops a body over the app limit (16 KiB) at nginx, with the answer a node gives', async () => {
    const before = await loggedSoFar();
    for (const [urlPath, body] of [
      ['/api/submit', JSON.stringify({ hash: randomHash(), fileName: 'x'.repeat(20 * 1024) })],
      ['/api/v1/beta/timestamp', JSON.stringify({ hash: randomHash(), note: 'x'.repeat(20 * 1024) })],
      ['/api/contact', JSON.stringify({ message: 'x'.repeat(20 * 1024) })],
    ] as const) {
      const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body };
      const viaNginx = await request(proxy, urlPath, post);
      const direct = await request(nodes[0]!.url, urlPath, post);
      expect([viaNginx.status, direct.status], urlPath).toEqual([413, 413]);
      expect(viaNginx.headers['content-type'], urlPath).toBe(direct.headers['content-type']);
      expect(JSON.parse(viaNginx.body.toString()), urlPath).toEqual(JSON.parse(direct.body.toString()));
    }
    // Only the three answers nginx gave itself were logged: no body reached a node.
    expect(await loggedAfter(before, 3)).toEqual(['-', '-', '-']);
    // Just under the limit still reaches a node (which refuses the file name, not the size).
    const under = JSON.stringify({ hash: randomHash(), fileName: 'x'.repeat(16 * 1024 - 100) });
    expect(
      (
        await request(proxy, '/api/submit', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: under,
        })
      ).status,
    ).toBe(400);
  });

  it("passes a node's own 503 on, without taking the nodes out of the upstream", async () => {
    // With the index head set aside the index covers none of the published leaves, so a proof look-up answers
    // 503 with Retry-After (ingest/errors.ts): a real answer, not a failing node.
    const head = path.join(dir, 'ledgers/index/segments.json');
    fs.renameSync(head, `${head}.aside`);
    try {
      for (let i = 0; i < 2; i++) {
        const viaNginx = await request(proxy, `/api/proof/${published[0]}`);
        expect(viaNginx.status).toBe(503);
        expect(viaNginx.headers['retry-after']).toBe('300');
      }
    } finally {
      fs.renameSync(`${head}.aside`, head);
    }
    for (let i = 0; i < 4; i++) expect((await request(proxy, '/api/queue-stats.php')).status).toBe(200);
    expect((await request(proxy, `/api/proof/${published[0]}`)).status).toBe(200);
  });

  it('keeps answering with one node stopped, and serves the site and archive with none', async () => {
    await stopNode(nodes[0]!);
    for (let i = 0; i < 4; i++) expect((await request(proxy, '/api/queue-stats.php')).status).toBe(200);
    await stopNode(nodes[1]!);
    expect((await request(proxy, '/api/queue-stats.php')).status).toBe(502);
    expect((await request(proxy, '/')).status).toBe(200);
    const ledger = await request(proxy, `/ledgers/${DAY}.json`);
    expect(ledger.status).toBe(200);
    expect(ledger.body.equals(fs.readFileSync(path.join(dir, `ledgers/${DAY}.json`)))).toBe(true);
  });
});
