// GET /metrics (ingest/metrics.ts) of a real `timeseal serve` with METRICS_LISTEN, read by the Prometheus
// project's own Python parser (Debian's python3-prometheus-client): answers counted by route and status, the
// queue, the archive's figures, Node's process metrics. Served on its own address only; a bad METRICS_LISTEN
// refuses the start.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { projectEnv, startServer, type SpawnedServer } from '../../ingest/test/fixture.ts';
import { removeTempProjects, run, tempProject } from './helpers.ts';
import { until } from '../support/until.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  /** null for NaN (a gauge Node has not measured yet). */
  value: number | null;
}

/** The exposition text parsed by prometheus_client.parser (not ours). */
const parse = (text: string): Sample[] =>
  JSON.parse(
    execFileSync(
      '/usr/bin/python3',
      [
        '-c',
        `import sys, json, math
from prometheus_client.parser import text_string_to_metric_families
print(json.dumps([{'name': s.name, 'labels': s.labels, 'value': None if math.isnan(s.value) else s.value} for f in text_string_to_metric_families(sys.stdin.read()) for s in f.samples]))`,
      ],
      { input: text, encoding: 'utf8' },
    ),
  ) as Sample[];

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

let dir: string;
let env: Record<string, string>;
let server: SpawnedServer;
let metricsUrl: string;

beforeAll(async () => {
  dir = tempProject('metrics');
  env = projectEnv(dir, { LOG_FORMAT: 'json' });
  expect(run(dir, ['keys', 'init'], { env: { ...env, TIMESEAL_NOW: '2025-11-02T00:00:00.000Z' } }).code).toBe(0);
  const port = await freePort();
  metricsUrl = `http://127.0.0.1:${port}/metrics`;
  server = await startServer(dir, {
    ...env,
    TIMESEAL_NOW: '2025-11-02T12:00:00.000Z',
    METRICS_LISTEN: `127.0.0.1:${port}`,
  });
}, 60_000);
afterAll(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
  removeTempProjects();
});

const value = (samples: Sample[], name: string, labels: Record<string, string> = {}): number | null | undefined =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

describe('GET /metrics', () => {
  test('counts answers by route and status, and reports the queue and the archive', async () => {
    const post = (body: object) =>
      fetch(`${server.url}/api/v1/beta/timestamp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    for (let i = 0; i < 3; i++) expect((await post({ hash: crypto.randomBytes(32).toString('hex') })).status).toBe(201);
    expect((await post({ hash: 'nope' })).status).toBe(400);
    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = parse(await res.text());
    expect(
      value(samples, 'timeseal_http_requests_total', {
        method: 'POST',
        route: '/api/v1/beta/timestamp',
        status: '201',
      }),
    ).toBe(3);
    expect(
      value(samples, 'timeseal_http_requests_total', {
        method: 'POST',
        route: '/api/v1/beta/timestamp',
        status: '400',
      }),
    ).toBe(1);
    expect(value(samples, 'timeseal_http_request_duration_seconds_count', { route: '/api/v1/beta/timestamp' })).toBe(4);
    expect(value(samples, 'timeseal_queue_size')).toBe(3);
    expect(value(samples, 'timeseal_published_days')).toBe(0);
    expect(value(samples, 'timeseal_anchoring_lag_seconds')).toBe(0);
    expect(value(samples, 'timeseal_process_resident_memory_bytes')).toBeGreaterThan(10 * 2 ** 20);
  });

  test('is served on its own address only', async () => {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    expect((await fetch(metricsUrl.replace('/metrics', '/'))).status).toBe(404);
  });

  test("the schedule's steps and the last build, on the next day's start (catch-up)", async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    server = await startServer(dir, { ...env, TIMESEAL_NOW: '2025-11-03T00:05:00.000Z', METRICS_LISTEN: String(port) });
    // The catch-up runs every step once at start: poll until the build's outcome is counted (a deadline, not a sleep).
    const samples = await until(
      'the ledger build and tsa stamp steps in /metrics',
      60_000,
      async () => {
        const samples = parse(await (await fetch(metricsUrl)).text());
        return value(samples, 'timeseal_schedule_steps_total', { step: 'ledger build' }) !== undefined &&
          value(samples, 'timeseal_schedule_steps_total', { step: 'tsa stamp' }) !== undefined
          ? samples
          : undefined;
      },
      200,
    );
    expect(value(samples, 'timeseal_schedule_steps_total', { step: 'ledger build', outcome: 'ok' })).toBe(1);
    expect(value(samples, 'timeseal_last_build', { field: 'days' })).toBe(1);
    expect(value(samples, 'timeseal_last_build', { field: 'entries' })).toBe(3);
    expect(value(samples, 'timeseal_schedule_step_seconds', { step: 'ledger build' })).toBeGreaterThan(0);
    expect(value(samples, 'timeseal_published_days')).toBe(1);
    expect(value(samples, 'timeseal_tree_size')).toBe(3);
    expect(value(samples, 'timeseal_queue_size')).toBe(0);
    expect(value(samples, 'timeseal_last_published_day_timestamp_seconds')).toBe(
      Date.parse('2025-11-03T00:01:00.000Z') / 1000,
    );
    // Published and not anchored (no calendar here): lagging since its publication.
    expect(value(samples, 'timeseal_unanchored_days')).toBe(1);
    expect(value(samples, 'timeseal_anchoring_lag_seconds')).toBe(240);
  }, 90_000);

  test('a METRICS_LISTEN that is not an address refuses the start (exit 64)', () => {
    const bad = run(dir, ['serve'], { env: { ...env, PORT: '0', METRICS_LISTEN: 'everywhere' } });
    expect(bad.code).toBe(64);
    expect(bad.stderr).toMatch(/METRICS_LISTEN must be a port \(on 127\.0\.0\.1\) or HOST:PORT/);
  });
});
