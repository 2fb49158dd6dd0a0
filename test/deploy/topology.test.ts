// The several-node topology (docs/OPERATIONS.md §1), all real: Debian's nginx (deploy/nginx/timeseal.conf) in front of two `timeseal serve`
// nodes on one PostgreSQL (a private cluster, test/support/postgres.ts) and one project folder (archive, keys,
// built site). Through nginx: 20 concurrent free-tier submissions from one client, spread over both nodes, are
// admitted exactly twice, forged X-Forwarded-For headers or not; the node holding the schedule lease is killed
// with SIGKILL in the middle of concurrent submissions, nginx goes on answering through the other node, the
// lease moves to the survivor, and the next ledger holds every acknowledged hash; the site's verified search
// finds one of them in Chromium, through nginx.
import { timesealSync } from '../support/cli-host.ts';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  childEnv,
  projectEnv,
  randomHash,
  removeTempDirs,
  startServer,
  tempDir,
  type SpawnedServer,
} from '../../ingest/test/fixture.ts';
import { ensureBuilt, launchBrowser, SITE_DIR } from '../site/helpers.ts';
import { request, startNginx, type RunningNginx } from '../support/nginx.ts';
import { postgresForSuite } from '../support/postgres.ts';
import { until } from '../support/until.ts';

const DAY = '2025-11-02';
const NOW = `${DAY}T12:00:00.000Z`;
const NEXT_BUILD = '2025-11-03T00:05:00.000Z';
const LEASE_SECONDS = 3;

const database = postgresForSuite();
let dir: string;
let env: (node: number) => Record<string, string>;
const nodes: SpawnedServer[] = [];
let nginx: RunningNginx;

function timeseal(
  args: string[],
  extra: Record<string, string> = {},
): { code: number | null; stdout: string; stderr: string } {
  const r = timesealSync(args, { cwd: dir, env: childEnv({ ...env(0), ...extra }) });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const logged = (node: SpawnedServer, message: string): boolean =>
  node
    .stderr()
    .split('\n')
    .some((l) => l.startsWith('{') && (JSON.parse(l) as { msg: string }).msg.startsWith(message));

async function leaseHolder(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query<{ holder: string }>("SELECT holder FROM schedule_lease WHERE name = 'schedule'")).rows[0]
      ?.holder;
  } finally {
    await client.end();
  }
}

const post = (urlPath: string, body: unknown, headers: Record<string, string> = {}) =>
  request(nginx.url, urlPath, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

beforeAll(async () => {
  ensureBuilt();
  dir = tempDir('topology');
  fs.mkdirSync(path.join(dir, 'dist'), { recursive: true });
  fs.symlinkSync(SITE_DIR, path.join(dir, 'dist/site'));
  env = (node) =>
    projectEnv(dir, {
      TIMESEAL_DATABASE_URL: database.url,
      // Each node's own SQLite path names only where its lock and cache files go (data/); the rows are in PostgreSQL.
      TIMESEAL_DB: path.join(dir, `data/node-${node}.db`),
      TIMESEAL_SITE: path.join(dir, 'dist/site'),
      TIMESEAL_NOW: NOW,
      TIMESEAL_SCHEDULE_LEASE_SECONDS: String(LEASE_SECONDS),
      TRUST_PROXY: '1',
      LOG_FORMAT: 'json',
    });
  const keys = timeseal(['keys', 'init']);
  expect(keys.code, keys.stderr).toBe(0);
  // Node 0 first, so that it holds the schedule lease: the node the test kills.
  nodes.push(await startServer(dir, env(0)));
  await until('node 0 to take the schedule lease', 20_000, () => logged(nodes[0]!, 'schedule lease taken'));
  nodes.push(await startServer(dir, env(1)));
  await until('node 1 to see the lease held', 20_000, () => logged(nodes[1]!, 'schedule held by another node'));
  nginx = await startNginx(
    dir,
    nodes.map((n) => new URL(n.url).host),
  );
}, 120_000);

afterAll(async () => {
  await nginx?.stop();
  for (const node of nodes) {
    if (node.child.exitCode === null && node.child.signalCode === null) {
      node.child.kill('SIGTERM');
      await node.exited;
    }
  }
  removeTempDirs();
});

/** Hashes acknowledged (2xx) through nginx, across the tests. */
const acknowledged: string[] = [];

describe('nginx, two nodes, one PostgreSQL', () => {
  it('20 concurrent free-tier submissions from one client over both nodes: exactly 2 admitted; forged X-Forwarded-For buys nothing', async () => {
    const before = nginx.upstreams().length;
    const hashes = Array.from({ length: 20 }, randomHash);
    const answers = await Promise.all(
      hashes.map((hash, i) =>
        post('/api/submit', { hash }, i % 2 === 0 ? { 'x-forwarded-for': `203.0.113.${i}` } : {}),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s >= 200 && s < 300)).toHaveLength(2);
    expect(statuses.filter((s) => s === 429)).toHaveLength(18);
    acknowledged.push(...hashes.filter((_, i) => answers[i]!.status < 300));
    // Both nodes answered some of them (nginx logs a request once answered: wait for all 20 lines).
    await until('20 access-log lines', 5_000, () => nginx.upstreams().length >= before + 20);
    expect(new Set(nginx.upstreams().slice(before)).size).toBe(2);
  });

  it('kill -9 of the lease holder during concurrent submissions: nginx answers on, the lease moves, the next ledger has every acknowledged hash', async () => {
    const holderBefore = await leaseHolder();
    expect(holderBefore).toMatch(new RegExp(`:${nodes[0]!.child.pid}:`));
    let killedAt = 0;
    let afterKill = 0;
    const failed: number[] = [];
    const worker = async (): Promise<void> => {
      for (const end = Date.now() + 4_000; Date.now() < end;) {
        const hash = randomHash();
        const answer = await post('/api/v1/beta/timestamp', { hash }).catch(() => undefined);
        if (answer !== undefined && answer.status >= 200 && answer.status < 300) {
          acknowledged.push(hash);
          if (killedAt > 0) afterKill++;
        } else failed.push(answer?.status ?? 0);
      }
    };
    const load = Promise.all(Array.from({ length: 8 }, worker));
    await new Promise((r) => setTimeout(r, 1_000));
    nodes[0]!.child.kill('SIGKILL');
    killedAt = Date.now();
    await load;
    // nginx went on answering through the surviving node. The requests in flight on the killed one fail (502:
    // never acknowledged; at most one per worker, 8); later ones that meet the dead node's closed port are
    // passed to the other node by nginx. Twice that bound, for a request cut mid-connection on a slow machine.
    expect(afterKill).toBeGreaterThan(20);
    expect(failed.length, `failed answers: ${failed.join(', ')}`).toBeLessThanOrEqual(16);
    expect(acknowledged.length).toBeGreaterThan(50);
    process.stderr.write(
      `topology: ${acknowledged.length} acknowledged, ${afterKill} after the kill, ${failed.length} failed (${failed.join(', ')})\n`,
    );

    // The lease expires and the survivor takes it (within the ttl and one renewal period, plus slack).
    await until('the survivor to take the lease', 4 * LEASE_SECONDS * 1000, () =>
      logged(nodes[1]!, 'schedule lease taken'),
    );
    expect(await leaseHolder()).toMatch(new RegExp(`:${nodes[1]!.child.pid}:`));

    // The next day's build (from the command, on the same PostgreSQL) publishes every acknowledged hash. The
    // survivor's scheduler runs its catch-up once it holds the lease and may hold the archive's lock meanwhile
    // (on a loaded machine it still did when the build started): the command then says "try again when it
    // ends", and the test does, as an operator would.
    const build = () =>
      timeseal(['ledger', 'build'], { TIMESEAL_NOW: NEXT_BUILD, TIMESEAL_DB: path.join(dir, 'data/node-1.db') });
    const built = await until(
      'the archive lock to be free for the build',
      30_000,
      () => {
        const r = build();
        return r.code !== 0 && r.stderr.includes('try again when it ends') ? undefined : r;
      },
      250,
    );
    expect(built.code, built.stderr).toBe(0);
    const ledger = JSON.parse(fs.readFileSync(path.join(dir, 'ledgers', `${DAY}.json`), 'utf8')) as {
      entries: [string, string][];
    };
    const inLedger = new Set(ledger.entries.map((e) => e[0]));
    expect(acknowledged.filter((h) => !inLedger.has(h))).toEqual([]);
    const verified = timeseal(['verify', '--json'], { TIMESEAL_NOW: NEXT_BUILD });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    // Through nginx: the day's file from disk, the proof from the surviving node.
    expect((await request(nginx.url, `/ledgers/${DAY}.json`)).status).toBe(200);
    expect((await request(nginx.url, `/api/proof/${acknowledged.at(-1)}`)).status).toBe(200);
  }, 60_000);

  it("the site's verified search finds an acknowledged hash through nginx", async () => {
    const hash = acknowledged[0]!;
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(`${nginx.url}/verify?hash=${hash}&search=true`);
      const result = page.locator('[data-testid=search-result]');
      await result.waitFor({ timeout: 30_000 });
      await expect(result.getAttribute('data-found')).resolves.toBe('true');
      await expect(page.locator('[data-testid=result-date]').textContent()).resolves.toBe(DAY);
      await expect(result.locator('[data-flag="Dual signature"]').getAttribute('data-ok')).resolves.toBe('true');
    } finally {
      await browser.close();
    }
  }, 60_000);
});
