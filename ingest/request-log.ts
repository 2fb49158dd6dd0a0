// Request logging. No client address and no URL (it may hold a hash): the route pattern, status and time.
// Client and server errors (status ≥ 400) get a record at info the first time each route and status occur
// in an interval; every answer gets one at debug (LOG_LEVEL=debug); and at info a summary per interval: how many answers each route gave with each status
// and the slowest. One record per submission cost about 5 µs of the beta API's budget (bench/NOTES.md),
// and a reverse proxy in front keeps its own access log anyway.
import type { FastifyInstance } from 'fastify';

export interface RequestLogOptions {
  /** How often the summary is written; default one minute. */
  intervalMs?: number;
}

interface Tally {
  method: string;
  route: string;
  status: number;
  count: number;
  slowestMs: number;
}

export function registerRequestLog(fastify: FastifyInstance, options: RequestLogOptions = {}): void {
  let tallies = new Map<string, Tally>();
  let since = Date.now();
  const flush = (): void => {
    if (tallies.size === 0) return;
    const requests = [...tallies.values()].map((t) => ({ ...t, slowestMs: Math.round(t.slowestMs) }));
    fastify.log.info({ seconds: Math.round((Date.now() - since) / 1000), requests }, 'requests answered');
    tallies = new Map();
    since = Date.now();
  };
  const debug = fastify.log.level === 'debug' || fastify.log.level === 'trace';
  const timer = setInterval(flush, options.intervalMs ?? 60_000).unref();

  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? '(none)';
    const status = reply.statusCode;
    const ms = reply.elapsedTime;
    const key = `${request.method} ${status} ${route}`;
    const tally = tallies.get(key);
    // A failed answer gets a record the first time its route and status occur in an interval; repeats (a
    // flood of 429s, every submission refused while the disk is full) are only counted in the summary, so
    // the log grows with the kinds of failure, not with the traffic. At debug, every answer.
    if (debug) request.log.debug({ method: request.method, route, status, ms: Math.round(ms) }, 'request');
    else if (status >= 400 && tally === undefined)
      request.log.info({ method: request.method, route, status, ms: Math.round(ms) }, 'request');
    if (tally === undefined) tallies.set(key, { method: request.method, route, status, count: 1, slowestMs: ms });
    else {
      tally.count++;
      if (ms > tally.slowestMs) tally.slowestMs = ms;
    }
    done();
  });
  fastify.addHook('onClose', (_instance, done) => {
    clearInterval(timer);
    flush();
    done();
  });
}
