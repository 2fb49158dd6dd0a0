// Listening: the app is built elsewhere (app.ts); this starts it on HOST:PORT and prints the
// one line on stdout that scripts and tests read, the only one that says where it listens:
// `Timeseal listening on http://HOST:PORT`. It also makes the
// HTTP server itself, with the limits a public service needs (docs/OPERATIONS.md §5): without them a client that
// sends headers and never a body holds its connection for ever, and enough of them exhaust the process's file
// descriptors. Fastify's defaults switch Node's request timeout off and set no connection cap.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { UsageError } from '../runtime/config.ts';
import { setting } from '../runtime/settings.ts';

export interface HttpLimits {
  /** Time to receive a request's headers, from the connection's start or the request's first byte (Node `headersTimeout`). */
  headersTimeoutMs: number;
  /** Time to receive a whole request, headers and body (Node `requestTimeout`). */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this (Node `keepAliveTimeout`). */
  keepAliveTimeoutMs: number;
  /** A connection on which nothing is read or written for this long is closed, answer under way or not (socket timeout). */
  idleTimeoutMs: number;
  /** Open connections at most; further ones are closed at once, unanswered (Node `server.maxConnections`). */
  maxConnections: number;
}

/** File descriptors kept for everything but client connections (database, archive files, logs, SMTP). */
const RESERVED_DESCRIPTORS = 256;
const DEFAULT_MAX_CONNECTIONS = 4096;

/** The soft limit on open files (Linux /proc/self/limits), or undefined where it cannot be read. */
function openFilesLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
    return line ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The limits from the environment (ingest/README.md, "Limits"): HTTP_HEADERS_TIMEOUT (15 s),
 * HTTP_REQUEST_TIMEOUT (30 s), HTTP_KEEPALIVE_TIMEOUT (10 s), HTTP_IDLE_TIMEOUT (120 s), all in seconds, and
 * HTTP_MAX_CONNECTIONS (4096, or fewer when the open-files limit leaves less than that beside 256 reserved).
 */
export function httpLimits(env: NodeJS.ProcessEnv = process.env): HttpLimits {
  const headersTimeoutMs = setting(env, 'HTTP_HEADERS_TIMEOUT');
  const requestTimeoutMs = setting(env, 'HTTP_REQUEST_TIMEOUT');
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new UsageError(
      `HTTP_HEADERS_TIMEOUT (${headersTimeoutMs / 1000} s) must not be longer than HTTP_REQUEST_TIMEOUT (${requestTimeoutMs / 1000} s)`,
    );
  }
  const files = openFilesLimit();
  const maxConnections =
    setting(env, 'HTTP_MAX_CONNECTIONS') ??
    (files === undefined
      ? DEFAULT_MAX_CONNECTIONS
      : Math.max(64, Math.min(DEFAULT_MAX_CONNECTIONS, files - RESERVED_DESCRIPTORS)));
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: setting(env, 'HTTP_KEEPALIVE_TIMEOUT'),
    idleTimeoutMs: setting(env, 'HTTP_IDLE_TIMEOUT'),
    maxConnections,
  };
}

export interface LimitLog {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/**
 * A Fastify `serverFactory` making a Node HTTP server with `limits`. Node checks the header and request
 * timeouts every `connectionsCheckingInterval` (30 s by default, which would double a 30 s limit), so the check
 * runs at a fifth of the shorter one, at most once a second. When the connection cap is reached the log gets
 * one warning, then every `reportEveryMs` while connections are still being refused a line with their count,
 * and a last line with the total once none was refused for a whole interval: never a line per connection.
 */
export function httpServerFactory(
  limits: HttpLimits,
  log: LimitLog | undefined,
  reportEveryMs = 10_000,
): NonNullable<FastifyServerOptions['serverFactory']> {
  return (handler) => {
    const server = http.createServer(
      {
        headersTimeout: limits.headersTimeoutMs,
        requestTimeout: limits.requestTimeoutMs,
        keepAliveTimeout: limits.keepAliveTimeoutMs,
        connectionsCheckingInterval: Math.max(
          20,
          Math.min(1000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 5)),
        ),
      },
      handler,
    );
    server.setTimeout(limits.idleTimeoutMs);
    server.maxConnections = limits.maxConnections;

    let refused = 0;
    let refusedSinceReport = 0;
    let since = 0;
    let timer: NodeJS.Timeout | undefined;
    const report = (): void => {
      if (refusedSinceReport > 0) {
        log?.warn(
          { maxConnections: limits.maxConnections, refused: refusedSinceReport, refusedTotal: refused },
          `connection limit still reached: ${refusedSinceReport} more connections closed unanswered`,
        );
        refusedSinceReport = 0;
        return;
      }
      log?.info(
        {
          maxConnections: limits.maxConnections,
          refusedTotal: refused,
          seconds: Math.round((Date.now() - since) / 1000),
        },
        `connection limit no longer reached: ${refused} connections were closed unanswered`,
      );
      clearInterval(timer);
      timer = undefined;
      refused = 0;
    };
    server.on('drop', () => {
      refused++;
      if (timer !== undefined) {
        refusedSinceReport++;
        return;
      }
      since = Date.now();
      log?.warn(
        { maxConnections: limits.maxConnections },
        `connection limit reached (${limits.maxConnections} open): new connections are closed unanswered (HTTP_MAX_CONNECTIONS)`,
      );
      timer = setInterval(report, reportEveryMs).unref();
    });
    server.on('close', () => clearInterval(timer));
    return server;
  };
}

export async function listen(
  app: FastifyInstance,
  host: string,
  port: number,
  out: NodeJS.WritableStream = process.stdout,
): Promise<string> {
  // Fastify logs "Server listening at …" at info once per address (each interface for 0.0.0.0): the line a
  // person and a script read is this one, so Fastify's own logger (a child of the service's) stays quiet then.
  const level = app.log.level;
  app.log.level = 'warn';
  try {
    await app.listen({ host, port });
  } finally {
    app.log.level = level;
  }
  const address = app.server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${shown}:${address.port}`;
  out.write(`Timeseal listening on ${url}\n`);
  return url;
}
