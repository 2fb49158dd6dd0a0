// httpReader's streamed files (archive-reader.ts): one of known size (a day's ledger, read as verify checks it)
// gets time in proportion to that size, STREAM_MIN_RATE, on top of the request's deadline, so an honest peer
// sending steadily is read to its end; without a size, or from a peer slower than that rate, the deadline ends it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { httpReader, STREAM_MIN_RATE } from './archive-reader.ts';

const PIECE = 16 * 1024;
let server: http.Server;
let base: string;
/** Pieces the server sends for /steady.json, one every 50 ms. */
const PIECES = 8;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    let sent = 0;
    const timer = setInterval(() => {
      res.write(Buffer.alloc(PIECE, 0x20));
      if (++sent === PIECES || req.url !== '/steady.json') {
        if (req.url === '/steady.json') {
          clearInterval(timer);
          res.end();
        }
      }
    }, 50);
    res.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function drain(body: AsyncIterable<Uint8Array> | undefined): Promise<number> {
  let total = 0;
  for await (const piece of body!) total += piece.length;
  return total;
}

it('a file of known size is read to its end past the request deadline; without the size the deadline ends it', async () => {
  // 8 pieces over ~400 ms against a 150 ms deadline.
  const reader = httpReader(base, 150);
  await expect(drain(await reader.stream('steady.json'))).rejects.toThrow(/did not answer within 150 ms/);
  // Known to be at most 1 MiB: 150 ms + 1 s.
  expect(await drain(await reader.stream('steady.json', STREAM_MIN_RATE))).toBe(PIECES * PIECE);
});

it('a peer slower than the rate for the size is still cut off', async () => {
  // /endless.json never ends: the deadline for 16 KiB is 150 ms + ~16 ms.
  const reader = httpReader(base, 150);
  const started = performance.now();
  await expect(drain(await reader.stream('endless.json', PIECE))).rejects.toThrow(/did not answer within 166 ms/);
  expect(performance.now() - started).toBeLessThan(5_000);
});
