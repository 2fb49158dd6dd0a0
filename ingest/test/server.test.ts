// The real server, spawned as `timeseal serve`: kill -9 in the middle of concurrent submissions loses no
// acknowledged hash; SIGTERM finishes and exits 0; --demo on an empty archive publishes yesterday's ledger
// holding the sealed disclosure document.
import { timesealSync } from '../../test/support/cli-host.ts';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, projectEnv, randomHash, removeTempDirs, ROOT, sha256, startServer, tempDir } from './fixture.ts';
import type { LedgersPage } from '../routes/status.ts';

afterAll(removeTempDirs);

function timeseal(
  cwd: string,
  env: Record<string, string>,
  args: string[],
): { code: number | null; stdout: string; stderr: string } {
  const r = timesealSync(args, { cwd, env: childEnv(env) });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function project(label: string): { dir: string; env: Record<string, string> } {
  const dir = tempDir(label);
  const env = projectEnv(dir);
  expect(timeseal(dir, env, ['keys', 'init']).code).toBe(0);
  return { dir, env };
}

async function betaSubmit(url: string, hash: string): Promise<number> {
  try {
    const res = await fetch(`${url}/api/v1/beta/timestamp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hash }),
    });
    await res.text();
    return res.status;
  } catch {
    return 0;
  }
}

describe('durability', () => {
  it("every acknowledged submission survives kill -9 and is in the next day's ledger", async () => {
    const { dir, env } = project('durable');
    const day = '2025-11-05';
    const serverEnv = { ...env, TIMESEAL_NOW: `${day}T12:00:00.000Z` };
    const first = await startServer(dir, serverEnv);
    // 32 clients submit one hash after another until the server dies; it is killed after the 60th answer, so
    // requests are always in flight at that moment, whatever the machine's speed.
    const hashes: string[] = [];
    const acknowledged: string[] = [];
    let killed = false;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (;;) {
          const hash = randomHash();
          hashes.push(hash);
          const status = await betaSubmit(first.url, hash);
          if (status !== 201) return;
          acknowledged.push(hash);
          if (acknowledged.length >= 60 && !killed) {
            killed = true;
            first.child.kill('SIGKILL');
          }
        }
      }),
    );
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(acknowledged.length).toBeGreaterThanOrEqual(60);
    expect(acknowledged.length, 'some submissions were unanswered when the server died').toBeLessThan(hashes.length);

    const second = await startServer(dir, serverEnv);
    const late = randomHash();
    expect(await betaSubmit(second.url, late)).toBe(201);
    second.child.kill('SIGTERM');
    expect(await second.exited).toEqual({ code: 0, signal: null });

    const build = timeseal(dir, { ...env, TIMESEAL_NOW: '2025-11-06T00:01:00.000Z' }, ['ledger', 'build', '--json']);
    expect(build.code, build.stderr).toBe(0);
    const ledger = fs.readFileSync(path.join(env.TIMESEAL_ARCHIVE!, `${day}.json`), 'utf8');
    const entries = new Set([...ledger.matchAll(/\["([0-9a-f]{64})"/g)].map((m) => m[1]));
    const missing = [...acknowledged, late].filter((h) => !entries.has(h));
    expect(missing).toEqual([]);
    // Nothing that was never submitted appears.
    expect([...entries].every((h) => hashes.includes(h!) || h === late)).toBe(true);
  });
});

describe('shutdown', () => {
  it('SIGTERM while requests are in flight: they finish, then exit 0', async () => {
    const { dir, env } = project('term');
    const server = await startServer(dir, env);
    const inflight = Array.from({ length: 30 }, () => betaSubmit(server.url, randomHash()));
    await new Promise((r) => setTimeout(r, 5));
    server.child.kill('SIGTERM');
    const statuses = await Promise.all(inflight);
    const result = await server.exited;
    expect(result).toEqual({ code: 0, signal: null });
    // Every request got an answer or was refused at the door; none was cut off with a 5xx from us.
    expect(statuses.every((s) => s === 201 || s === 0 || s === 503)).toBe(true);
    expect(server.stderr()).toMatch(/shutting down/);
  });
});

describe('--demo', () => {
  it("publishes yesterday's ledger with the sealed disclosure document on an empty archive, once", async () => {
    const { dir, env } = project('demo');
    const demoEnv = { ...env, TIMESEAL_NOW: '2025-11-03T08:00:00.000Z' };
    const server = await startServer(dir, demoEnv, ['--demo']);
    try {
      const disclosure = sha256(fs.readFileSync(path.join(ROOT, 'docs/sealed-disclosure.md')));
      const ledgers = (await (await fetch(`${server.url}/api/ledgers.php`)).json()) as LedgersPage;
      expect(ledgers.ledgers.map((l) => [l.date, l.signatureVerified])).toEqual([['2025-11-02', true]]);
      const ledger = await (await fetch(`${server.url}/ledgers/2025-11-02.json`)).text();
      expect(ledger).toContain(disclosure);
      expect(ledger).toContain(sha256('Hello, Timeseal!'));
      const proof = await fetch(`${server.url}/api/proof/${disclosure}`);
      expect(proof.status).toBe(200);
    } finally {
      server.child.kill('SIGTERM');
      expect((await server.exited).code).toBe(0);
    }
    const again = await startServer(dir, { ...demoEnv, TIMESEAL_NOW: '2025-11-04T08:00:00.000Z' }, ['--demo']);
    try {
      const days = JSON.parse(fs.readFileSync(path.join(env.TIMESEAL_ARCHIVE!, 'days.json'), 'utf8')) as {
        days: Array<{ date: string }>;
      };
      expect(days.days.map((d) => d.date)).toEqual(['2025-11-02']);
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
  });

  it('without --demo an empty archive stays empty', async () => {
    const { dir, env } = project('prod');
    const server = await startServer(dir, env);
    const ledgers = (await (await fetch(`${server.url}/api/ledgers.php`)).json()) as LedgersPage;
    expect(ledgers.ledgers).toEqual([]);
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    expect(fs.existsSync(path.join(env.TIMESEAL_ARCHIVE!, 'days.json'))).toBe(false);
  });
});
