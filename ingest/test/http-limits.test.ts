// The HTTP server's timeouts and connection cap (docs/OPERATIONS.md §5), over real sockets against a listening
// server built with serverOptions() as in production, with the limits shortened: silent connections are
// closed within their limit while other connections keep being answered, and refused connections are logged
// once with a count, not once each.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { app, serverOptions } from '../app.ts';
import { httpLimits, httpServerFactory, type HttpLimits, type LimitLog } from '../server.ts';
import { fixtureAppOptions, makeFixture, removeTempDirs, type Fixture } from './fixture.ts';

let f: Fixture;

beforeAll(async () => {
  f = await makeFixture();
});
afterAll(async () => {
  await f.close();
  removeTempDirs();
});

const SHORT: HttpLimits = {
  headersTimeoutMs: 400,
  requestTimeoutMs: 800,
  keepAliveTimeoutMs: 300,
  idleTimeoutMs: 1500,
  maxConnections: 1000,
};

async function start(
  limits: HttpLimits,
  log?: { lines: Array<[string, object, string]>; everyMs: number },
): Promise<{ server: FastifyInstance; port: number }> {
  const options = serverOptions(f.ingest, undefined, limits);
  if (log) {
    const sink: LimitLog = {
      warn: (fields, message) => log.lines.push(['warn', fields, message]),
      info: (fields, message) => log.lines.push(['info', fields, message]),
    };
    options.serverFactory = httpServerFactory(limits, sink, log.everyMs);
  }
  const server = Fastify(options);
  await server.register(app, fixtureAppOptions(f));
  await server.listen({ host: '127.0.0.1', port: 0 });
  return { server, port: (server.server.address() as net.AddressInfo).port };
}

interface Silent {
  /** Milliseconds from connecting to the server closing the connection. */
  closed: Promise<number>;
  received: () => string;
  socket: net.Socket;
}

const sockets: net.Socket[] = [];

/** A connection that sends `bytes` (maybe nothing) and then stays silent. */
function silent(port: number, bytes: string): Silent {
  const socket = net.connect(port, '127.0.0.1');
  sockets.push(socket);
  const started = Date.now();
  let data = '';
  socket.on('data', (d) => (data += d.toString('latin1')));
  socket.on('connect', () => {
    if (bytes !== '') socket.write(bytes);
  });
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - started)));
  socket.on('error', () => {});
  return { closed, received: () => data, socket };
}

/** One GET on a connection of its own; the status, or 0 when the connection failed. */
function get(port: number, path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
  });
}

describe('timeouts', () => {
  it('closes a connection that sends nothing, one that stops in its headers and one that sends headers but no body, while others are answered', async () => {
    const { server, port } = await start(SHORT);
    try {
      const nothing = silent(port, '');
      const halfHeaders = silent(port, 'GET /api/queue-stats.php HTTP/1.1\r\nHost: localhost\r\n');
      const noBody = silent(
        port,
        'POST /api/v1/beta/timestamp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 80\r\n\r\n',
      );
      const statuses: number[] = [];
      let open = true;
      void Promise.all([nothing.closed, halfHeaders.closed, noBody.closed]).then(() => (open = false));
      const deadline = Date.now() + 5000;
      while (open && Date.now() < deadline) {
        statuses.push(await get(port, '/api/queue-stats.php'));
        await new Promise((r) => setTimeout(r, 50));
      }
      const times = await Promise.race([
        Promise.all([nothing.closed, halfHeaders.closed, noBody.closed]),
        new Promise<null>((r) => setTimeout(() => r(null), 500)),
      ]);
      expect(times, 'the silent connections were still open after 5 s').not.toBeNull();
      const [tNothing, tHalf, tNoBody] = times!;
      // Closed by their limits (headers 0.4 s, whole request 0.8 s, checked every 80 ms), not at once.
      expect(tNothing).toBeGreaterThanOrEqual(350);
      expect(tHalf).toBeGreaterThanOrEqual(350);
      expect(tNoBody).toBeGreaterThanOrEqual(750);
      for (const t of times!) expect(t).toBeLessThan(2500);
      expect(nothing.received()).toMatch(/^HTTP\/1\.1 408 /);
      expect(halfHeaders.received()).toMatch(/^HTTP\/1\.1 408 /);
      expect(noBody.received()).toMatch(/^HTTP\/1\.1 408 /);
      // Meanwhile every other request was answered (one after the other for 0.8 s: a few on a loaded machine).
      expect(statuses.length).toBeGreaterThanOrEqual(2);
      expect(
        statuses.every((s) => s === 200),
        statuses.join(' '),
      ).toBe(true);
    } finally {
      for (const s of sockets.splice(0)) s.destroy();
      await server.close();
    }
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const { server, port } = await start(SHORT);
    try {
      const conn = silent(port, 'GET /api/queue-stats.php HTTP/1.1\r\nHost: localhost\r\n\r\n');
      const t = await Promise.race([conn.closed, new Promise<number>((r) => setTimeout(() => r(-1), 4000))]);
      expect(conn.received()).toMatch(/^HTTP\/1\.1 200 /);
      expect(conn.received()).toMatch(/keep-alive/i);
      expect(t).toBeGreaterThanOrEqual(250);
      // Node 24 keeps the socket 1 s beyond keepAliveTimeout (keepAliveTimeoutBuffer).
      expect(t).toBeLessThan(2500);
    } finally {
      for (const s of sockets.splice(0)) s.destroy();
      await server.close();
    }
  });
});

describe('downloads', () => {
  it('a download that outlasts the request timeout is not cut while the client keeps reading', async () => {
    const file = Buffer.alloc(64 << 20, 'x'); // large enough that five short reading windows cannot take it all (24 MB once arrived within the first second)
    fs.writeFileSync(path.join(f.config.archive, '2025-09-30.json'), file);
    // Served only for a day days.json names (ingest/published-archive.ts): name it, as an empty day before the fixture's.
    const daysFile = path.join(f.config.archive, 'days.json');
    const days = JSON.parse(fs.readFileSync(daysFile, 'utf8')) as { days: unknown[] };
    days.days.unshift({
      date: '2025-09-30',
      first_index: 0,
      entry_count: 0,
      tree_size: 0,
      root: '0'.repeat(64),
      sha256: '0'.repeat(64),
    });
    fs.writeFileSync(daysFile, JSON.stringify(days));
    const { server, port } = await start(SHORT);
    try {
      const conn = silent(
        port,
        'GET /ledgers/2025-09-30.json HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
      );
      // Read in short bursts with pauses, for twice the whole-request limit (0.8 s) but never idle for the idle limit.
      const started = Date.now();
      let receivedAtOneSecond = -1;
      while (Date.now() - started < 1600) {
        conn.socket.pause();
        await new Promise((r) => setTimeout(r, 200));
        if (receivedAtOneSecond < 0 && Date.now() - started >= 1000) receivedAtOneSecond = conn.received().length;
        conn.socket.resume();
        await new Promise((r) => setTimeout(r, 5));
      }
      // Still under way after the request limit.
      expect(receivedAtOneSecond).toBeGreaterThan(0);
      expect(receivedAtOneSecond).toBeLessThan(file.length);
      conn.socket.resume();
      await conn.closed;
      const [head = '', body = ''] = conn.received().split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 200 /);
      expect(body.length).toBe(file.length);
    } finally {
      for (const s of sockets.splice(0)) s.destroy();
      await server.close();
    }
  });
});

describe('connection cap', () => {
  it('refuses connections above the cap, keeps serving once below it, and logs a count rather than a line each', async () => {
    const lines: Array<[string, object, string]> = [];
    const limits: HttpLimits = {
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 10_000,
      keepAliveTimeoutMs: 10_000,
      idleTimeoutMs: 10_000,
      maxConnections: 4,
    };
    const { server, port } = await start(limits, { lines, everyMs: 300 });
    try {
      const held = Array.from({ length: 4 }, () => silent(port, ''));
      await new Promise((r) => setTimeout(r, 200));
      const refused = await Promise.all(Array.from({ length: 7 }, () => get(port, '/api/queue-stats.php')));
      expect(refused).toEqual(Array(7).fill(0));
      expect(lines.filter(([, , m]) => /limit reached/.test(m))).toHaveLength(1);
      for (const h of held) h.socket.destroy();
      await new Promise((r) => setTimeout(r, 100));
      expect(await get(port, '/api/queue-stats.php')).toBe(200);
      await new Promise((r) => setTimeout(r, 800));
      // One warning when the cap was reached, at most one count while it still was (the 7 may straddle a
      // report) and one line with the total once it no longer was: never a line per connection.
      expect(lines.length).toBeGreaterThanOrEqual(2);
      expect(lines.length).toBeLessThanOrEqual(3);
      expect(lines[0]![0]).toBe('warn');
      expect(lines[0]![1]).toMatchObject({ maxConnections: 4 });
      expect(lines.at(-1)![2]).toMatch(/no longer reached: 7 connections/);
      expect(lines.at(-1)![1]).toMatchObject({ refusedTotal: 7 });
    } finally {
      for (const s of sockets.splice(0)) s.destroy();
      await server.close();
    }
  });
});

describe('httpLimits', () => {
  it('reads the environment, defaults to public-service values and refuses nonsense', () => {
    const d = httpLimits({});
    expect([d.headersTimeoutMs, d.requestTimeoutMs, d.keepAliveTimeoutMs, d.idleTimeoutMs]).toEqual([
      15_000, 30_000, 10_000, 120_000,
    ]);
    expect(d.maxConnections).toBeGreaterThanOrEqual(64);
    expect(d.maxConnections).toBeLessThanOrEqual(4096);
    const e = httpLimits({
      HTTP_HEADERS_TIMEOUT: '0.5',
      HTTP_REQUEST_TIMEOUT: '2',
      HTTP_KEEPALIVE_TIMEOUT: '65',
      HTTP_IDLE_TIMEOUT: '300',
      HTTP_MAX_CONNECTIONS: '100',
    });
    expect(e).toEqual({
      headersTimeoutMs: 500,
      requestTimeoutMs: 2000,
      keepAliveTimeoutMs: 65_000,
      idleTimeoutMs: 300_000,
      maxConnections: 100,
    });
    expect(() => httpLimits({ HTTP_REQUEST_TIMEOUT: '0' })).toThrow(/HTTP_REQUEST_TIMEOUT/);
    expect(() => httpLimits({ HTTP_HEADERS_TIMEOUT: '40', HTTP_REQUEST_TIMEOUT: '30' })).toThrow(/must not be longer/);
    expect(() => httpLimits({ HTTP_MAX_CONNECTIONS: 'many' })).toThrow(/HTTP_MAX_CONNECTIONS/);
  });
});
