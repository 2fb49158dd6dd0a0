// Load generation for the benchmarks: autocannon against a real server on loopback (it stops by itself after
// `duration` seconds), and starting/stopping the servers it measures.
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';

export interface Histogram {
  average: number;
  p50: number;
  p99: number;
}
export interface AutocannonResult {
  requests: Histogram & { total: number };
  latency: Histogram;
  errors: number;
  timeouts: number;
  /** Answers verifyBody refused (0 when none was given). */
  mismatches: number;
  non2xx: number;
  '2xx': number;
}
interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  setupRequest?: (request: AutocannonRequest) => AutocannonRequest;
}
export type { AutocannonRequest };
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  requests?: AutocannonRequest[];
  verifyBody?: (body: string) => boolean;
}) => Promise<AutocannonResult>;
// autocannon ships no types; its documented programmatic API is typed above.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export function waitForUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`server exited (${code}) before listening: ${out}`)));
  });
}

export async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/**
 * Fresh hashes spread as real SHA-256 values are (unique with overwhelming probability), cut from a pool of
 * random bytes so that no request pays for a digest. Not a shared prefix and a counter: those rows all landed
 * in one leaf of the hash's index (store/sqlite/db.ts migration 10), which hid what an index of random keys
 * costs each insert.
 */
function uniqueHashes(): () => string {
  let pool = Buffer.alloc(0);
  let at = 0;
  return () => {
    if (at + 32 > pool.length) {
      pool = crypto.randomBytes(32 * 4096);
      at = 0;
    }
    at += 32;
    return pool.toString('hex', at - 32, at);
  };
}

/**
 * POST {"hash": <unique>} to `requestPath` from `connections` connections for `duration` seconds. `fields`: more
 * JSON members after the hash (`"receipt":true`); `verifyBody`: a check of each answer's body (as text), whose
 * refusals are counted in `mismatches`.
 */
export async function load(
  url: string,
  requestPath: string,
  connections: number,
  duration: number,
  options: { fields?: string; verifyBody?: (body: string) => boolean } = {},
): Promise<AutocannonResult> {
  const next = uniqueHashes();
  const more = options.fields ? `,${options.fields}` : '';
  return autocannon({
    url,
    connections,
    duration,
    ...(options.verifyBody ? { verifyBody: options.verifyBody } : {}),
    requests: [
      {
        method: 'POST',
        path: requestPath,
        headers: { 'content-type': 'application/json' },
        setupRequest: (request) => ({ ...request, body: `{"hash":"${next()}"${more}}` }),
      },
    ],
  });
}

/** `request` (its setupRequest makes each body) from `connections` connections for `duration` seconds. */
export async function loadRequests(
  url: string,
  connections: number,
  duration: number,
  request: AutocannonRequest,
  verifyBody?: (body: string) => boolean,
): Promise<AutocannonResult> {
  return autocannon({ url, connections, duration, requests: [request], ...(verifyBody ? { verifyBody } : {}) });
}

/** The median run by mean req/s. */
export const median = (runs: AutocannonResult[]): AutocannonResult =>
  [...runs].sort((x, y) => x.requests.average - y.requests.average)[Math.floor(runs.length / 2)]!;
