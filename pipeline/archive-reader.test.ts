// httpReader against a loopback server that fails on purpose: a connection reset (before the answer or half
// way through a body) and a 502/503/504 are asked again, up to three attempts in all; a 404 is no file, and a
// 500 or a third failure is reported, each after the number of requests the rule allows.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { httpReader } from './archive-reader.ts';

const BODY = Buffer.from('{"days":[]}\n'.repeat(1000));
/** Per path: what each request gets in turn ('ok' after the list). */
const plans = new Map<string, Array<'reset' | 'half' | 502 | 503 | 504 | 500>>();
const asked = new Map<string, number>();
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const rel = req.url!.slice(1);
    const n = asked.get(rel) ?? 0;
    asked.set(rel, n + 1);
    const step = plans.get(rel)?.[n];
    if (step === 'reset') return req.socket.destroy();
    if (step === 'half') {
      res.writeHead(200, { 'content-length': String(BODY.length) });
      res.write(BODY.subarray(0, BODY.length / 2));
      return setTimeout(() => req.socket.destroy(), 20);
    }
    if (typeof step === 'number') return res.writeHead(step).end('busy');
    if (rel === 'missing.json') return res.writeHead(404).end();
    res.writeHead(200, { 'content-length': String(BODY.length) }).end(BODY);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it.each([
  ['a reset connection', ['reset'] as const, 2],
  ['a body cut half way', ['half'] as const, 2],
  ['502, then 503', [502, 503] as const, 3],
  ['504, then a reset', [504, 'reset'] as const, 3],
])('reads the file after %s', async (label, plan, requests) => {
  const rel = `${label.replaceAll(' ', '-')}.json`;
  plans.set(rel, [...plan]);
  const data = await httpReader(base).read(rel);
  expect(Buffer.from(data!).equals(BODY)).toBe(true);
  expect(asked.get(rel)).toBe(requests);
});

it('gives up after three attempts, and asks only once on a 500 or a 404', async () => {
  plans.set('busy.json', [503, 503, 503, 503]);
  await expect(httpReader(base).read('busy.json')).rejects.toThrow(/busy\.json: HTTP 503/);
  expect(asked.get('busy.json')).toBe(3);
  plans.set('broken.json', [500]);
  await expect(httpReader(base).read('broken.json')).rejects.toThrow(/broken\.json: HTTP 500/);
  expect(asked.get('broken.json')).toBe(1);
  await expect(httpReader(base).read('missing.json')).resolves.toBeUndefined();
  expect(asked.get('missing.json')).toBe(1);
});

it('opens a streamed file again after a reset before its body', async () => {
  plans.set('segment.idx', ['reset']);
  const body = await httpReader(base).stream('segment.idx');
  const chunks: Uint8Array[] = [];
  for await (const chunk of body!) chunks.push(chunk);
  expect(Buffer.concat(chunks).equals(BODY)).toBe(true);
  expect(asked.get('segment.idx')).toBe(2);
});
