// Debian's nginx with deploy/nginx/timeseal.conf, for tests on loopback (real nginx, nothing
// mocked): the template rendered with a project folder (its dist/site, ledgers/, keys/), a free port and the
// nodes given, started in the foreground and stopped with the test process however it ends.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { expect, vi } from 'vitest';
import { randomHash, ROOT } from '../../ingest/test/fixture.ts';
import { freePort, parentDeathSignal } from './servers.ts';

export const NGINX = '/usr/sbin/nginx';
const TEMPLATE = path.join(ROOT, 'deploy/nginx/timeseal.conf');
const SNIPPETS = path.join(ROOT, 'deploy/nginx/snippets');

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One HTTP request without compression or connection reuse, so every byte and header is what was sent. */
export function request(
  base: string,
  urlPath: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(urlPath, base),
      { method: options.method ?? 'GET', agent: false, headers: { 'accept-encoding': 'identity', ...options.headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export const submit = (base: string, forwardedFor?: string): Promise<Answer> =>
  request(base, '/api/submit', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
    body: JSON.stringify({ hash: randomHash() }),
  });

/** The template with the test's folder, port and nodes; fails if the template no longer has a placeholder. */
export function renderConfig(root: string, listen: number, logs: string, nodes: string[]): string {
  let text = fs.readFileSync(TEMPLATE, 'utf8');
  for (const [placeholder, value] of [
    ['@ROOT@', root],
    ['@LISTEN@', `127.0.0.1:${listen}`],
    ['@LOGS@', logs],
  ] as const) {
    expect(text, `template has ${placeholder}`).toContain(placeholder);
    text = text.replaceAll(placeholder, value);
  }
  const servers = [...text.matchAll(/^\s*server 127\.0\.0\.1:\d+ .*;$/gm)];
  expect(servers, 'template lists two example nodes').toHaveLength(2);
  return text
    .replace(servers[0]![0], `    server ${nodes[0]} max_fails=1 fail_timeout=5s;`)
    .replace(servers[1]![0], `    server ${nodes[1]} max_fails=1 fail_timeout=5s;`);
}

export interface RunningNginx {
  /** http://127.0.0.1:port */
  url: string;
  /** Its access log (the template's format: the upstream field last, '-' for a file nginx served itself). */
  accessLog: string;
  /** The upstream field of every access-log line written so far. */
  upstreams(): string[];
  stop(): Promise<void>;
}

/** Where deploy/nginx/snippets/timeseal-ledgers-s3.conf sends /ledgers/: the store and /BUCKET/PREFIX. */
export interface LedgersFromS3 {
  endpoint: string;
  path: string;
}

/** The config with its `location ^~ /ledgers/` block replaced by the S3 snippet's include, as deploy/README.md says. */
function withLedgersFromS3(text: string): string {
  const start = text.indexOf('    location ^~ /ledgers/ {');
  expect(start, 'template has the /ledgers/ block').toBeGreaterThan(0);
  const end = text.indexOf('\n    }\n', start);
  return `${text.slice(0, start)}    include snippets/timeseal-ledgers-s3.conf;${text.slice(end + '\n    }'.length)}`;
}

/** nginx in front of `nodes` (host:port, two of them), serving `dir`'s dist/site, ledgers/ and keys/ — or
 * ledgers/ from an S3 bucket (`ledgersFromS3`). */
export async function startNginx(
  dir: string,
  nodes: string[],
  options: { ledgersFromS3?: LedgersFromS3 } = {},
): Promise<RunningNginx> {
  expect(fs.existsSync(NGINX), `${NGINX} (Debian's nginx: bash scripts/ensure-test-tools.sh)`).toBe(true);
  const conf = path.join(dir, 'nginx/conf');
  const logs = path.join(dir, 'nginx/logs');
  const temp = path.join(dir, 'nginx/temp');
  for (const d of [path.join(conf, 'snippets'), logs, temp]) fs.mkdirSync(d, { recursive: true });
  const port = await freePort();
  const rendered = renderConfig(dir, port, logs, nodes);
  const s3 = options.ledgersFromS3;
  fs.writeFileSync(path.join(conf, 'timeseal.conf'), s3 === undefined ? rendered : withLedgersFromS3(rendered));
  fs.cpSync(SNIPPETS, path.join(conf, 'snippets'), { recursive: true });
  if (s3 !== undefined) {
    const snippet = path.join(conf, 'snippets/timeseal-ledgers-s3.conf');
    const text = fs.readFileSync(snippet, 'utf8');
    for (const placeholder of ['@S3_ENDPOINT@', '@S3_PATH@']) expect(text).toContain(placeholder);
    fs.writeFileSync(snippet, text.replaceAll('@S3_ENDPOINT@', s3.endpoint).replaceAll('@S3_PATH@', s3.path));
  }
  // The main file Debian's nginx.conf would be, reduced to what the site file needs; as root the workers stay
  // root, since the project folder is private to this user (mode 0700).
  fs.writeFileSync(
    path.join(conf, 'nginx.conf'),
    `${process.getuid?.() === 0 ? 'user root;\n' : ''}worker_processes 1;
events { worker_connections 128; }
http {
  client_body_temp_path ${temp}/body;
  proxy_temp_path ${temp}/proxy;
  fastcgi_temp_path ${temp}/fastcgi;
  uwsgi_temp_path ${temp}/uwsgi;
  scgi_temp_path ${temp}/scgi;
  include timeseal.conf;
}
`,
  );
  const accessLog = path.join(logs, 'timeseal.access.log');
  const args = [
    '-p',
    path.join(dir, 'nginx'),
    '-e',
    path.join(logs, 'startup.log'),
    '-c',
    path.join(conf, 'nginx.conf'),
  ];
  const check = spawnSync(NGINX, [...args, '-t'], { encoding: 'utf8' });
  expect(check.status, `nginx -t:\n${check.stderr}`).toBe(0);
  // nginx stops (SIGTERM) with this test process, however it ends; afterAll stops it first in the normal case.
  const [command, ...prefix] = [...parentDeathSignal('TERM'), NGINX];
  const nginx = spawn(command!, [...prefix, ...args, '-g', `daemon off; pid ${path.join(dir, 'nginx/nginx.pid')};`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  nginx.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => nginx.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const ok = await request(url, '/').then(
      () => true,
      () => false,
    );
    if (ok) break;
    if (nginx.exitCode !== null || i > 100) throw new Error(`nginx did not start:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const upstreams = (): string[] =>
    (fs.existsSync(accessLog) ? fs.readFileSync(accessLog, 'utf8') : '')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => /upstream=(.*)$/.exec(l)![1]!);
  // nginx logs a request after it has sent the answer, so the probe's line can come after the caller has counted
  // the log's lines (and then reads as a request of its own, served from disk): wait for it first.
  await vi.waitFor(() => expect(upstreams().length).toBeGreaterThanOrEqual(1), { timeout: 10_000, interval: 10 });
  return {
    url,
    accessLog,
    upstreams,
    async stop() {
      if (nginx.exitCode === null && nginx.signalCode === null) {
        process.kill(nginx.pid!, 'SIGTERM');
        await exited;
      }
    },
  };
}
