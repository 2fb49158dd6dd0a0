// The bounded HTTP client (pipeline/http.ts) against a hostile loopback peer (test/support/hostile-peer.ts):
// every way an answer can be too much — too large, endless, a gzip bomb, a redirect, a trickle, nobody
// listening — ends in a NetworkError with its reason, quickly, without the body held in memory; an honest answer
// comes through byte for byte, whatever its status.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startHostilePeer, type HostilePeer } from '../test/support/hostile-peer.ts';
import { boundedFetch, boundedStream, NetworkError } from './http.ts';

const MiB = 1 << 20;
const failure = (p: Promise<unknown>): Promise<NetworkError> =>
  p.then(
    () => {
      throw new Error('resolved, expected a NetworkError');
    },
    (err: unknown) => {
      expect(err).toBeInstanceOf(NetworkError);
      return err as NetworkError;
    },
  );

describe('boundedFetch', () => {
  let peer: HostilePeer;
  let files: string;
  let echo: http.Server;
  let echoUrl: string;
  const seen: Array<{ method?: string; headers: http.IncomingHttpHeaders; body: string }> = [];

  beforeAll(async () => {
    peer = await startHostilePeer();
    files = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-http-'));
    fs.writeFileSync(path.join(files, 'small.txt'), 'hello\n');
    fs.writeFileSync(path.join(files, 'large.bin'), Buffer.alloc(100_000, 1));
    peer.files.set('/files/', files);
    // An honest server that answers what it was sent, with the status the path names.
    echo = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method, headers: req.headers, body: Buffer.concat(chunks).toString() });
        res.writeHead(Number(req.url!.slice(1)) || 200, 'Custom Text').end(`got ${Buffer.concat(chunks).length} bytes`);
      });
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    echoUrl = `http://127.0.0.1:${(echo.address() as net.AddressInfo).port}`;
  });
  afterAll(async () => {
    await peer.stop();
    await new Promise<void>((resolve) => echo.close(() => resolve()));
    fs.rmSync(files, { recursive: true, force: true });
  });

  test('an honest answer comes through byte for byte with any status; the request asks for identity and says its length', async () => {
    const ok = await boundedFetch(`${echoUrl}/200`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'abc',
      timeoutMs: 2000,
      maxBytes: 100,
    });
    expect(ok).toMatchObject({ status: 200, statusText: 'Custom Text' });
    expect(new TextDecoder().decode(ok.body)).toBe('got 3 bytes');
    expect(seen.at(-1)).toMatchObject({
      method: 'POST',
      body: 'abc',
      headers: { 'accept-encoding': 'identity', 'content-length': '3', 'content-type': 'text/plain' },
    });
    const missing = await boundedFetch(`${echoUrl}/404`, { timeoutMs: 2000, maxBytes: 100 });
    expect(missing.status).toBe(404);
    expect(new TextDecoder().decode(missing.body)).toBe('got 0 bytes');
    const file = await boundedFetch(`${peer.url}/files/large.bin`, { timeoutMs: 2000, maxBytes: 100_000 });
    expect(Buffer.from(file.body).equals(Buffer.alloc(100_000, 1))).toBe(true);
  });

  test('a declared length over the cap is refused before the body', async () => {
    const err = await failure(boundedFetch(`${peer.url}/files/large.bin`, { timeoutMs: 2000, maxBytes: 99_999 }));
    expect(err.reason).toBe('too-large');
    expect(err.message).toBe(`${peer.url}/files/large.bin: answer of 100000 bytes exceeds the 99999-byte limit`);
  });

  test.each(['huge', 'endless'] as const)(
    'an answer of the %s peer stops at the cap, at once, without being held',
    async (mode) => {
      peer.mode = mode;
      const sent = peer.sent;
      const rss = process.memoryUsage().rss;
      const started = Date.now();
      const err = await failure(
        boundedFetch(`${peer.url}/x`, { method: 'POST', body: 'q', timeoutMs: 10_000, maxBytes: MiB }),
      );
      expect(err.reason).toBe('too-large');
      expect(err.message).toBe(`${peer.url}/x: answer exceeds the 1048576-byte limit`);
      expect(Date.now() - started).toBeLessThan(2000);
      await new Promise((resolve) => setTimeout(resolve, 200));
      // What the peer got into the socket before it closed: the cap and the kernel's buffers, not 512 MiB.
      expect(peer.sent - sent).toBeLessThan(64 * MiB);
      expect(process.memoryUsage().rss - rss).toBeLessThan(100 * MiB);
    },
  );

  test('a gzip bomb is refused, not inflated', async () => {
    peer.mode = 'gzip-bomb';
    const rss = process.memoryUsage().rss;
    const err = await failure(boundedFetch(`${peer.url}/x`, { timeoutMs: 5000, maxBytes: 4 * MiB }));
    expect(err.reason).toBe('encoded');
    expect(err.message).toBe(`${peer.url}/x: answer is gzip-encoded although identity was asked for; not decompressed`);
    expect(process.memoryUsage().rss - rss).toBeLessThan(100 * MiB);
  });

  test('a redirect is refused with its status; nothing goes to its Location, for GET or POST', async () => {
    peer.mode = 'redirect';
    for (const method of ['GET', 'POST'] as const) {
      const err = await failure(
        boundedFetch(`${peer.url}/tsa`, {
          method,
          body: method === 'POST' ? 'secret query' : undefined,
          timeoutMs: 2000,
          maxBytes: MiB,
        }),
      );
      expect(err.reason).toBe('redirect');
      expect(err.message).toBe(`${peer.url}/tsa: HTTP 307 redirect to ${peer.canary.url}/stolen/tsa, not followed`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(peer.canary.requests).toEqual([]);
  });

  test('a trickle is cut off by the deadline, which covers the whole body', async () => {
    peer.mode = 'trickle';
    const started = Date.now();
    const err = await failure(boundedFetch(`${peer.url}/x`, { timeoutMs: 700, maxBytes: MiB }));
    expect(err.reason).toBe('timeout');
    expect(err.message).toBe(`${peer.url}/x: did not answer within 700 ms`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(690);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  test('nobody listening is "unreachable" with the system error; only http: and https: are asked', async () => {
    const s = net.createServer();
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    const port = (s.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => s.close(() => resolve()));
    const err = await failure(boundedFetch(`http://127.0.0.1:${port}/`, { timeoutMs: 2000, maxBytes: MiB }));
    expect(err.reason).toBe('unreachable');
    expect(err.message).toBe(`http://127.0.0.1:${port}/: unreachable (ECONNREFUSED)`);
    expect((await failure(boundedFetch('file:///etc/passwd', { timeoutMs: 2000, maxBytes: MiB }))).reason).toBe(
      'unreachable',
    );
  });

  test('a stream left early, or cancelled, ends the exchange', async () => {
    peer.mode = 'endless';
    const res = await boundedStream(`${peer.url}/x`, { timeoutMs: 10_000, maxBytes: 1024 * MiB });
    for await (const chunk of res.body) {
      expect(chunk.length).toBeGreaterThan(0);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    const after = peer.sent;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(peer.sent).toBe(after);
    const unread = await boundedStream(`${peer.url}/x`, { timeoutMs: 10_000, maxBytes: 1024 * MiB });
    unread.cancel();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const cancelled = peer.sent;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(peer.sent).toBe(cancelled);
  });
});
