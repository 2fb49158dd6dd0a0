// Downloads of archive files (ingest/README.md, "Downloads"): immutable archive files are sent as stored — never
// compressed again per request, whatever Accept-Encoding says — and every static file answers byte ranges
// (206, Content-Range, 416, If-Range with ETag or date), keeping its cache class. A day's ledger of 512 MiB (a
// sparse file) answers ranges with exactly its bytes and is sent whole as a stream, never held: the process grows
// by far less than the file while sending it (a server that read it whole grew by 536 MB here).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { acceptsGzip, byteRange } from '../http-file.ts';
import { makeFixture, removeTempDirs, type Fixture } from './fixture.ts';

let f: Fixture;
/** A large day file (~3 MB of ledger-like JSON: compressible, so a compressor would take it). */
const LARGE = '2025-10-01.json';
/** A day file small enough to be read whole rather than streamed. */
const SMALL = '2025-10-02.json';
let large: Buffer;
let small: Buffer;
/** A day's ledger of 512 MiB, sparse (a hole between bytes written at its start, middle and end): served streamed,
 * never held. */
const HUGE = '2025-10-03.json';
const HUGE_SIZE = 512 * 1024 * 1024;
/** A site file above the compression threshold and below the as-stored size: still compressed per request. */
let asset: Buffer;

function ledgerLike(entries: number): Buffer {
  const rows = Array.from(
    { length: entries },
    (_, i) =>
      `["${crypto.randomBytes(32).toString('hex')}","2025-10-01T00:00:${String(i % 60).padStart(2, '0')}.000Z"]`,
  );
  return Buffer.from(`{"date":"2025-10-01","entries":[${rows.join(',')}]}\n`);
}

beforeAll(async () => {
  f = await makeFixture();
  large = ledgerLike(30_000);
  small = ledgerLike(50);
  fs.writeFileSync(path.join(f.config.archive, LARGE), large);
  fs.writeFileSync(path.join(f.config.archive, SMALL), small);
  // A day file is served only for a day days.json names (ingest/published-archive.ts): name the two planted ones, as
  // empty days before the fixture's published day.
  const daysFile = path.join(f.config.archive, 'days.json');
  const days = JSON.parse(fs.readFileSync(daysFile, 'utf8')) as { days: unknown[] };
  const planted = (date: string) => ({
    date,
    first_index: 0,
    entry_count: 0,
    tree_size: 0,
    root: '0'.repeat(64),
    sha256: '0'.repeat(64),
  });
  days.days.unshift(planted('2025-10-01'), planted('2025-10-02'), planted('2025-10-03'));
  const huge = fs.openSync(path.join(f.config.archive, HUGE), 'w');
  fs.ftruncateSync(huge, HUGE_SIZE);
  for (const at of [0, HUGE_SIZE / 2 - 5, HUGE_SIZE - 4096]) fs.writeSync(huge, crypto.randomBytes(4096), 0, 4096, at);
  fs.closeSync(huge);
  fs.writeFileSync(daysFile, JSON.stringify(days));
  asset = Buffer.from(`console.log(${JSON.stringify('x'.repeat(200_000))});\n`);
  fs.mkdirSync(path.join(f.ingest.site, '_astro'), { recursive: true });
  fs.writeFileSync(path.join(f.ingest.site, '_astro/big.abc.js'), asset);
});
afterAll(async () => {
  await f.close();
  removeTempDirs();
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** Counts every compressor stream made while it is installed (@fastify/compress makes one per compressed stream). */
function watchCompressors(): () => number {
  const names = ['createGzip', 'createBrotliCompress', 'createDeflate', 'createZstdCompress'] as const;
  const spies = names.filter((n) => typeof zlib[n] === 'function').map((n) => vi.spyOn(zlib, n));
  return () => spies.reduce((sum, s) => sum + s.mock.calls.length, 0);
}

describe('immutable archive files are not compressed per request', () => {
  it('a large ledger asked for with Accept-Encoding gzip is compressed once, into a copy sent from then on; its bytes equal the file', async () => {
    const compressors = watchCompressors();
    const get = () =>
      f.app.inject({ url: `/ledgers/${LARGE}`, headers: { 'accept-encoding': 'gzip, deflate, br, zstd' } });
    // Until the copy is made the file goes out as stored.
    const first = await get();
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-encoding']).toBeUndefined();
    expect(Number(first.headers['content-length'])).toBe(large.length);
    expect(first.headers.vary).toBe('Accept-Encoding');
    expect(first.rawPayload.equals(large)).toBe(true);
    let res = await vi.waitFor(
      async () => {
        const res = await get();
        expect(res.headers['content-encoding'], 'the gzip copy was never served').toBe('gzip');
        return res;
      },
      { timeout: 10_000, interval: 50 },
    );
    for (let i = 0; i < 5; i++) {
      res = await get();
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-encoding']).toBe('gzip');
      expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.headers.vary).toBe('Accept-Encoding');
      expect(String(res.headers.etag)).not.toBe(String(first.headers.etag));
      expect(zlib.gunzipSync(res.rawPayload).equals(large)).toBe(true);
    }
    // One compressor in all: the copy's.
    expect(compressors()).toBe(1);
    // A client that does not take gzip gets the file as stored, and its ETag.
    for (const encoding of [undefined, 'identity', 'gzip;q=0, br', 'br']) {
      const plain = await f.app.inject({
        url: `/ledgers/${LARGE}`,
        headers: encoding === undefined ? {} : { 'accept-encoding': encoding },
      });
      expect(plain.headers['content-encoding'], encoding).toBeUndefined();
      expect(plain.headers.etag).toBe(first.headers.etag);
      expect(plain.rawPayload.equals(large)).toBe(true);
    }
    expect(compressors()).toBe(1);
  });

  it('a small immutable file is sent as stored', async () => {
    const compressors = watchCompressors();
    const res = await f.app.inject({ url: `/ledgers/${SMALL}`, headers: { 'accept-encoding': 'gzip' } });
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.rawPayload.equals(small)).toBe(true);
    expect(compressors()).toBe(0);
  });

  it('while a compressible site file of the same kind of size still is compressed per request (so the watch above can see compression)', async () => {
    const compressors = watchCompressors();
    const res = await f.app.inject({ url: '/_astro/big.abc.js', headers: { 'accept-encoding': 'gzip' } });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(res.rawPayload).equals(asset)).toBe(true);
    expect(compressors()).toBe(1);
  });
});

describe('byte ranges', () => {
  const cases: Array<[string, string, number, number]> = [
    // file, Range, first byte, last byte
    [LARGE, 'bytes=0-0', 0, 0],
    [LARGE, 'bytes=100-199', 100, 199],
    [LARGE, 'bytes=1000000-', 1_000_000, -1],
    [LARGE, 'bytes=-500', -500, -1],
    [LARGE, 'bytes=2000-99999999', 2000, -1],
    [SMALL, 'bytes=10-20', 10, 20],
    [SMALL, 'bytes=-1', -1, -1],
  ];
  it.each(cases)('%s %s', async (name, range, first, last) => {
    const file = name === LARGE ? large : small;
    const start = first < 0 ? file.length + first : first;
    const end = last < 0 ? file.length + last : last;
    const res = await f.app.inject({ url: `/ledgers/${name}`, headers: { range, 'accept-encoding': 'gzip' } });
    expect(res.statusCode).toBe(206);
    expect(res.headers['content-range']).toBe(`bytes ${start}-${end}/${file.length}`);
    expect(Number(res.headers['content-length'])).toBe(end - start + 1);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.rawPayload.equals(file.subarray(start, end + 1))).toBe(true);
  });

  it('a range beyond the end is 416 with the length', async () => {
    for (const range of [`bytes=${large.length}-`, `bytes=${large.length + 5}-${large.length + 10}`, 'bytes=-0']) {
      const res = await f.app.inject({ url: `/ledgers/${LARGE}`, headers: { range } });
      expect(res.statusCode, range).toBe(416);
      expect(res.headers['content-range']).toBe(`bytes */${large.length}`);
      expect(res.rawPayload).toHaveLength(0);
    }
  });

  it('several ranges, another unit or a malformed header get the whole file', async () => {
    for (const range of ['bytes=0-1,5-6', 'items=0-1', 'bytes=9-3', 'bytes=abc']) {
      const res = await f.app.inject({ url: `/ledgers/${SMALL}`, headers: { range } });
      expect(res.statusCode, range).toBe(200);
      expect(res.rawPayload.equals(small)).toBe(true);
    }
  });

  it('If-Range: the range only while the ETag (strong) or Last-Modified still matches', async () => {
    const full = await f.app.inject(`/ledgers/${LARGE}`);
    const etag = String(full.headers.etag);
    expect(etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    const lastModified = String(full.headers['last-modified']);
    const ask = (ifRange: string) =>
      f.app.inject({ url: `/ledgers/${LARGE}`, headers: { range: 'bytes=10-19', 'if-range': ifRange } });
    expect((await ask(etag)).statusCode).toBe(206);
    expect((await ask(lastModified)).statusCode).toBe(206);
    const stale = await ask('"0-0"');
    expect(stale.statusCode).toBe(200);
    expect(stale.rawPayload.equals(large)).toBe(true);
    expect((await ask(`W/${etag}`)).statusCode).toBe(200);
    expect((await ask(new Date(Date.parse(lastModified) - 86_400_000).toUTCString())).statusCode).toBe(200);
  });

  it('If-None-Match wins over Range; HEAD tells the length and that ranges are accepted', async () => {
    const etag = String((await f.app.inject({ method: 'HEAD', url: `/ledgers/${LARGE}` })).headers.etag);
    const res = await f.app.inject({
      url: `/ledgers/${LARGE}`,
      headers: { range: 'bytes=0-9', 'if-none-match': etag },
    });
    expect(res.statusCode).toBe(304);
    const head = await f.app.inject({ method: 'HEAD', url: `/ledgers/${LARGE}` });
    expect(head.statusCode).toBe(200);
    expect(head.headers['accept-ranges']).toBe('bytes');
    expect(Number(head.headers['content-length'])).toBe(large.length);
  });

  it('a compressible file answers a range uncompressed, and a weak ETag never satisfies If-Range', async () => {
    const full = await f.app.inject('/_astro/big.abc.js');
    const etag = String(full.headers.etag);
    expect(etag.startsWith('W/')).toBe(true);
    const res = await f.app.inject({
      url: '/_astro/big.abc.js',
      headers: { range: 'bytes=5-14', 'accept-encoding': 'gzip' },
    });
    expect(res.statusCode).toBe(206);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.rawPayload.equals(asset.subarray(5, 15))).toBe(true);
    expect(
      (await f.app.inject({ url: '/_astro/big.abc.js', headers: { range: 'bytes=5-14', 'if-range': etag } }))
        .statusCode,
    ).toBe(200);
  });
});

describe('over a real socket', () => {
  it('a range and a HEAD of the large ledger', async () => {
    const url = await f.app.listen({ host: '127.0.0.1', port: 0 });
    const res = await fetch(`${url}/ledgers/${LARGE}`, {
      headers: { range: 'bytes=100-199', 'accept-encoding': 'gzip' },
    });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 100-199/${large.length}`);
    expect(Buffer.from(await res.arrayBuffer()).equals(large.subarray(100, 200))).toBe(true);
    const head = await fetch(`${url}/ledgers/${LARGE}`, { method: 'HEAD', headers: { 'accept-encoding': 'identity' } });
    expect(head.headers.get('content-length')).toBe(String(large.length));
    // As stored or the gzip copy (fetch decodes it): the file's bytes either way.
    const whole = await fetch(`${url}/ledgers/${LARGE}`, { headers: { 'accept-encoding': 'gzip' } });
    expect([null, 'gzip']).toContain(whole.headers.get('content-encoding'));
    expect(Buffer.from(await whole.arrayBuffer()).equals(large)).toBe(true);
  });
});

describe('a ledger of 512 MiB', () => {
  const file = () => path.join(f.config.archive, HUGE);
  const bytesAt = (start: number, length: number) => {
    const out = Buffer.alloc(length);
    const fd = fs.openSync(file(), 'r');
    fs.readSync(fd, out, 0, length, start);
    fs.closeSync(fd);
    return out;
  };

  it('answers ranges at its start, across its middle and at its end with exactly those bytes', async () => {
    for (const [start, end] of [
      [0, 4095],
      [HUGE_SIZE / 2 - 1000, HUGE_SIZE / 2 + (1 << 20)],
      [HUGE_SIZE - 8192, HUGE_SIZE - 1],
    ] as const) {
      const res = await f.app.inject({ url: `/ledgers/${HUGE}`, headers: { range: `bytes=${start}-${end}` } });
      expect(res.statusCode).toBe(206);
      expect(res.headers['content-range']).toBe(`bytes ${start}-${end}/${HUGE_SIZE}`);
      expect(res.rawPayload.equals(bytesAt(start, end - start + 1)), `bytes ${start}-${end}`).toBe(true);
    }
  });

  it("is sent whole as a stream: its SHA-256 the file's, the process never holding it (RSS within 256 MB)", async () => {
    // Listening already when the file's socket tests ran before.
    const bound = f.app.addresses()[0];
    const url =
      typeof bound === 'object' ? `http://127.0.0.1:${bound.port}` : await f.app.listen({ host: '127.0.0.1', port: 0 });
    const want = crypto.createHash('sha256');
    for await (const piece of fs.createReadStream(file())) want.update(piece as Buffer);
    const before = process.memoryUsage.rss();
    let peak = before;
    const res = await fetch(`${url}/ledgers/${HUGE}`, { headers: { 'accept-encoding': 'identity' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(HUGE_SIZE));
    const got = crypto.createHash('sha256');
    let size = 0;
    const body = res.body!.getReader();
    for (let next = await body.read(); !next.done; next = await body.read()) {
      const piece = next.value;
      got.update(piece);
      size += piece.length;
      peak = Math.max(peak, process.memoryUsage.rss());
    }
    expect(size).toBe(HUGE_SIZE);
    expect(got.digest('hex')).toBe(want.digest('hex'));
    expect((peak - before) / 2 ** 20, 'MB the process grew by while sending it').toBeLessThan(256);
  });
});

describe('byteRange', () => {
  it.each([
    [undefined, 10, null],
    ['bytes=0-4', 10, { start: 0, end: 4 }],
    ['bytes=5-', 10, { start: 5, end: 9 }],
    ['bytes=-3', 10, { start: 7, end: 9 }],
    ['bytes=-30', 10, { start: 0, end: 9 }],
    ['bytes=8-100', 10, { start: 8, end: 9 }],
    ['bytes=10-', 10, 'unsatisfiable'],
    ['bytes=-0', 10, 'unsatisfiable'],
    ['bytes=0-0', 0, 'unsatisfiable'],
    ['bytes=4-2', 10, null],
    ['bytes=-', 10, null],
    ['bytes=0-1, 3-4', 10, null],
    ['pages=0-1', 10, null],
  ] as const)('%s of %d bytes', (header, size, expected) => {
    expect(byteRange(header, size)).toEqual(expected);
  });
});

describe('acceptsGzip', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['gzip', true],
    ['deflate, gzip;q=0.5', true],
    ['GZIP', true],
    ['x-gzip', true],
    ['br', false],
    ['gzip;q=0', false],
    ['*', true],
    ['*;q=0', false],
    ['gzip;q=0, *', false],
    ['identity', false],
  ] as const)('%s', (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });
});
