// Static serving: site pages with and without a trailing slash, the 404 page, the archive's cache classes,
// compression, and that nothing private is ever served, checked over a real socket so that no client
// normalizes `..` or percent-escapes before the server sees them.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tilePath } from '../../core/tiles.ts';
import { DAY, makeFixture, removeTempDirs, type Fixture } from './fixture.ts';

let f: Fixture;
let port: number;

function writeSite(site: string): void {
  const files: Record<string, string> = {
    'index.html': '<!doctype html><title>Home</title><h1>Timeseal home</h1>',
    'proof/index.html': '<!doctype html><title>Create</title><h1>Create a Quantum-Resistant Proof</h1>',
    'verify/index.html': '<!doctype html><title>Verify</title><h1>Verify</h1>',
    '404.html': '<!doctype html><title>Page Not Found</title><h1>Page Not Found</h1><p>site 404</p>',
    '_astro/app.abc123.js': 'console.log(1)',
    'offline-verifier.html': '<!doctype html><title>Offline verifier</title>',
    '.hidden': 'secret',
  };
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(site, rel)), { recursive: true });
    fs.writeFileSync(path.join(site, rel), text);
  }
}

beforeAll(async () => {
  f = await makeFixture();
  writeSite(f.ingest.site);
  fs.writeFileSync(path.join(f.dir, '.env'), 'SECRET=1\n');
  fs.mkdirSync(path.join(f.dir, 'keys/private'), { recursive: true });
  fs.writeFileSync(path.join(f.dir, 'keys/private/ecdsa_private.pem'), '-----BEGIN PRIVATE KEY-----\nplanted\n');
  fs.symlinkSync(path.join(f.config.privateKeys, 'ecdsa_private.pem'), path.join(f.config.archive, `2030-01-01.json`));
  await f.app.listen({ host: '127.0.0.1', port: 0 });
  port = (f.app.server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await f.close();
  removeTempDirs();
});

/** One HTTP/1.1 request with the path sent byte for byte. */
function raw(pathBytes: string): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (d) => (data += d.toString('latin1')));
    socket.on('end', () => {
      const [head = '', ...rest] = data.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0), head, body: rest.join('\r\n\r\n') });
    });
    socket.on('error', reject);
    socket.write(`GET ${pathBytes} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
  });
}

describe('site pages', () => {
  it('answers with and without a trailing slash', async () => {
    for (const url of ['/proof', '/proof/']) {
      const res = await f.app.inject(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.body).toContain('Create a Quantum-Resistant Proof');
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
    }
    expect((await f.app.inject('/')).body).toContain('Timeseal home');
    expect((await f.app.inject('/offline-verifier.html')).statusCode).toBe(200);
    const asset = await f.app.inject('/_astro/app.abc123.js');
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers['content-type']).toBe('text/javascript; charset=utf-8');
  });

  it('unknown paths get the site 404 page with status 404; dot-files are never served', async () => {
    for (const url of ['/no-such-page', '/proof/deeper', '/.hidden', '/ledgers/unknown-file.txt']) {
      const res = await f.app.inject(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.body).toContain('site 404');
    }
    expect((await f.app.inject({ method: 'POST', url: '/proof' })).statusCode).toBe(404);
  });

  it('without a built site, the built-in "Page Not Found" page', async () => {
    fs.renameSync(f.ingest.site, `${f.ingest.site}.off`);
    try {
      const res = await f.app.inject('/anything');
      expect(res.statusCode).toBe(404);
      expect(res.body).toContain('<title>Page Not Found</title>');
      expect(res.body).toContain('<h1>Page Not Found</h1>');
      expect((await f.app.inject('/api/queue-stats.php')).statusCode).toBe(200);
    } finally {
      fs.renameSync(`${f.ingest.site}.off`, f.ingest.site);
    }
  });
});

describe('archive and keys', () => {
  it('serves archive files with their cache class and CORS for verifiers', async () => {
    const cases: Array<[string, string]> = [
      [`/ledgers/${DAY}.json`, 'public, max-age=31536000, immutable'],
      [`/ledgers/${DAY}.json.sig`, 'public, max-age=31536000, immutable'],
      [`/ledgers/${DAY}.json.dilithium.sig`, 'public, max-age=31536000, immutable'],
      [`/ledgers/${DAY}.json.signatures.json`, 'public, max-age=31536000, immutable'],
      [`/ledgers/${DAY}.checkpoint`, 'public, max-age=31536000, immutable'],
      [`/ledgers/${tilePath(0, 0, 3)}`, 'public, max-age=31536000, immutable'],
      ['/ledgers/checkpoint', 'public, max-age=60'],
      ['/ledgers/days.json', 'public, max-age=60'],
      ['/ledgers/index-sha256.json', 'public, max-age=60'],
      ['/ledgers/index/segments.json', 'public, max-age=60'],
      ['/ledgers/ots_status.json', 'no-cache'],
    ];
    for (const [url, cache] of cases) {
      const res = await f.app.inject(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control'], url).toBe(cache);
      expect(res.headers['access-control-allow-origin']).toBe('*');
    }
    // An index segment file never changes: the long, immutable cache class; readers take byte ranges of it.
    const segment = fs.readdirSync(path.join(f.config.archive, 'index')).find((n) => /^\d+-\d+\.idx$/.test(n))!;
    const bytes = fs.readFileSync(path.join(f.config.archive, 'index', segment));
    const res = await f.app.inject({ url: `/ledgers/index/${segment}`, headers: { 'accept-encoding': 'gzip' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.rawPayload).toEqual(bytes);
    const part = await f.app.inject({
      url: `/ledgers/index/${segment}`,
      headers: { range: 'bytes=4-11', 'accept-encoding': 'gzip' },
    });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 4-11/${bytes.length}`);
    expect(part.rawPayload).toEqual(bytes.subarray(4, 12));
    // index-sha256.json is made by the server from the segments, in the spec's shape.
    const index = JSON.parse((await f.app.inject('/ledgers/index-sha256.json')).body) as {
      map: Record<string, string>;
      timestamps: Record<string, string>;
    };
    const ledger = JSON.parse(fs.readFileSync(path.join(f.config.archive, `${DAY}.json`), 'utf8')) as {
      entries: [string, string][];
    };
    expect(Object.keys(index.map).sort()).toEqual(ledger.entries.map((e) => e[0]).sort());
    for (const [hash, time] of ledger.entries) expect([index.map[hash], index.timestamps[hash]]).toEqual([DAY, time]);
    expect((await f.app.inject(`/ledgers/${DAY}.json`)).rawPayload).toEqual(
      fs.readFileSync(path.join(f.config.archive, `${DAY}.json`)),
    );
  });

  it("serves a day's RFC 3161 tokens (immutable) and witness cosignatures (short) with their types", async () => {
    const tokens = [`${DAY}.json.tsr`, `${DAY}.json.2.tsr`];
    for (const name of tokens) fs.writeFileSync(path.join(f.config.archive, name), Buffer.from('3003020100', 'hex'));
    fs.writeFileSync(path.join(f.config.archive, `${DAY}.cosignatures`), '');
    try {
      for (const name of tokens) {
        const res = await f.app.inject(`/ledgers/${name}`);
        expect([res.statusCode, res.headers['content-type'], res.headers['cache-control']], name).toEqual([
          200,
          'application/timestamp-reply',
          'public, max-age=31536000, immutable',
        ]);
      }
      const cos = await f.app.inject(`/ledgers/${DAY}.cosignatures`);
      expect([cos.statusCode, cos.headers['content-type'], cos.headers['cache-control']]).toEqual([
        200,
        'text/plain; charset=utf-8',
        'public, max-age=60',
      ]);
      expect((await f.app.inject(`/ledgers/${DAY}.json.1.tsr`)).statusCode).toBe(404);
    } finally {
      for (const name of [...tokens, `${DAY}.cosignatures`]) fs.rmSync(path.join(f.config.archive, name));
    }
  });

  it("serves the latest checkpoint with the witnesses' cosignature lines once they are in it, else the day's own", async () => {
    const own = fs.readFileSync(path.join(f.config.archive, `${DAY}.checkpoint`));
    const latest = path.join(f.config.archive, 'checkpoint');
    const saved = fs.readFileSync(latest);
    try {
      const witnessed = Buffer.concat([
        own,
        Buffer.from(`\u2014 w1.example ${Buffer.alloc(80, 1).toString('base64')}\n`),
      ]);
      fs.writeFileSync(latest, witnessed);
      expect((await f.app.inject('/ledgers/checkpoint')).rawPayload).toEqual(witnessed);
      // A `checkpoint` that is not this day's (a stopped build left an older one): the day's own is sent.
      fs.writeFileSync(latest, `x${witnessed.toString()}`);
      expect((await f.app.inject('/ledgers/checkpoint')).rawPayload).toEqual(own);
    } finally {
      fs.writeFileSync(latest, saved);
    }
  });

  it('answers 304 to a matching If-None-Match and compresses large answers', async () => {
    const first = await f.app.inject(`/ledgers/${DAY}.json.dilithium.sig`);
    const again = await f.app.inject({
      url: `/ledgers/${DAY}.json.dilithium.sig`,
      headers: { 'if-none-match': String(first.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
    const gz = await f.app.inject({ url: '/api/openapi.json', headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(zlib.gunzipSync(gz.rawPayload).toString()).openapi).toMatch(/^3\./);
  });

  it('serves exactly the three public keys', async () => {
    for (const name of ['public.pem', 'dilithium_public.key', 'dilithium_public.pem']) {
      const res = await f.app.inject(`/keys/${name}`);
      expect(res.statusCode, name).toBe(200);
      expect(res.rawPayload).toEqual(fs.readFileSync(path.join(f.config.keys, name)));
    }
    expect((await f.app.inject('/keys/dilithium_public.key')).rawPayload).toHaveLength(1952);
  });
});

describe('private files are never served', () => {
  const PRIVATE = /PRIVATE KEY|SQLite format|SECRET=|planted/;
  const paths = [
    '/keys/',
    '/keys',
    '/keys/private/ecdsa_private.pem',
    '/keys/../data/timeseal.db',
    '/keys/..%2fdata%2ftimeseal.db',
    '/keys/%2e%2e/data/timeseal.db',
    '/data/timeseal.db',
    '/data/private-keys/ecdsa_private.pem',
    '/ledgers/../keys/private/ecdsa_private.pem',
    '/ledgers/../data/timeseal.db',
    '/ledgers/..%2fdata%2ftimeseal.db',
    '/ledgers/%2e%2e/data/timeseal.db',
    '/ledgers/tile%2f0%2f000.p%2f3',
    `/ledgers/${DAY}.json%00`,
    '/ledgers/2030-01-01.json',
    '/../data/timeseal.db',
    '/%2e%2e/data/timeseal.db',
    '/..%2fdata/timeseal.db',
    '/site/../data/timeseal.db',
    '/proof/..%2f..%2fdata/timeseal.db',
    '/%00',
    '/.env',
    '/..%5c.env',
    '/..\\.env',
    '/ledgers/archive.lock',
    '/package.json',
  ];
  it.each(paths)('%s', async (p) => {
    const res = await raw(p);
    expect(res.status, `${p}\n${res.head}`).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.body).not.toMatch(PRIVATE);
  });

  it('path tricks under /ledgers/ get a 400 JSON error', async () => {
    for (const p of [
      '/ledgers/..%2fdata%2ftimeseal.db',
      '/ledgers/../keys/public.pem',
      `/ledgers/${DAY}.json%00`,
      '/ledgers/a//b',
    ]) {
      const res = await raw(p);
      expect(res.status, p).toBe(400);
      expect(JSON.parse(res.body).error).toMatch(/Archive paths/);
    }
  });
});
