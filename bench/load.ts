// Load generation for the benchmarks: autocannon against a real server on loopback (it stops by itself after
// `duration` seconds), and starting/stopping the servers it measures.
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';

export interface Histogram {
  average: number;
  p99: number;
}
export interface AutocannonResult {
  requests: Histogram & { total: number };
  latency: Histogram;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
}
interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: AutocannonRequest) => AutocannonRequest;
}
type Autocannon = (options: { url: string; connections: number; duration: number; requests?: AutocannonRequest[] }) => Promise<AutocannonResult>;
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

/** Unique hashes without paying for a digest per request: a random prefix and a counter. */
function uniqueHashes(): () => string {
  const prefix = crypto.randomBytes(24).toString('hex');
  let n = 0;
  return () => prefix + (n++).toString(16).padStart(16, '0');
}

/** POST {"hash": <unique>} to `requestPath` from `connections` connections for `duration` seconds. */
export async function load(url: string, requestPath: string, connections: number, duration: number): Promise<AutocannonResult> {
  const next = uniqueHashes();
  return autocannon({
    url,
    connections,
    duration,
    requests: [
      {
        method: 'POST',
        path: requestPath,
        headers: { 'content-type': 'application/json' },
        setupRequest: (request) => ({ ...request, body: `{"hash":"${next()}"}` }),
      },
    ],
  });
}

/** The median run by mean req/s. */
export const median = (runs: AutocannonResult[]): AutocannonResult => [...runs].sort((x, y) => x.requests.average - y.requests.average)[Math.floor(runs.length / 2)]!;
