// The schedule lease (docs/OPERATIONS.md §1): N `timeseal serve` nodes on one PostgreSQL and one archive folder run the schedule one at a time
// (pipeline/schedule.ts, Store.lease). Two real nodes with a 3 s lease: exactly one builds the queued day; killed
// with SIGKILL (no release), its lease is taken over by the other within the ttl plus one renewal period, and
// the new holder runs the schedule (catch-up). The archive verifies.
import path from 'node:path';
import pg from 'pg';
import { afterAll, expect, test } from 'vitest';
import { postgresForSuite } from '../support/postgres.ts';
import { makeHashes, removeTempProjects, run, runJson, start, tempProject } from './helpers.ts';
import { until } from '../support/until.ts';

afterAll(removeTempProjects);
/** A fresh database on a private PostgreSQL server for this file. */
const server = postgresForSuite();
interface LogLine {
  msg: string;
  holder?: string;
  result?: { days?: Array<{ date: string }> };
}
const lines = (stderr: string): LogLine[] =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);

test(
  'two serve nodes: one runs the schedule; killed, the other takes the lease over within the ttl and runs it',
  { timeout: 120_000 },
  async () => {
    const TTL_S = 3;
    const dir = tempProject('schedule-lease');
    const url = server.url;
    expect(run(dir, ['keys', 'init']).code).toBe(0);
    const imported = run(dir, ['import', '-'], {
      env: { TIMESEAL_DATABASE_URL: url, TIMESEAL_NOW: '2025-11-02T10:00:00.000Z' },
      input: `${makeHashes('lease', 50).join('\n')}\n`,
    });
    expect(imported.code, imported.stderr).toBe(0);
    const env = (i: number) => ({
      TIMESEAL_DATABASE_URL: url,
      TIMESEAL_DB: path.join(dir, `data/node-${i}.db`),
      TIMESEAL_NOW: '2025-11-03T00:05:00.000Z',
      TIMESEAL_SCHEDULE_LEASE_SECONDS: String(TTL_S),
      PORT: '0',
      TIMESEAL_SITE: path.join(dir, 'no-site'),
      OTS_CALENDARS: 'http://127.0.0.1:9/',
    });
    // Collect each node's stderr as it comes (start's own buffer is only handed over at exit).
    const nodes = [0, 1].map((i) => {
      const node = { ...start(dir, ['serve'], { env: env(i) }), log: '' };
      node.child.stderr!.on('data', (s: string) => (node.log += s));
      return node;
    });
    try {
      const built = (n: { log: string }) => lines(n.log).find((l) => l.msg === 'scheduled ledger build done');
      const first = await until('a scheduled build', 30_000, () =>
        nodes.findIndex((n) => built(n) !== undefined) >= 0
          ? nodes.findIndex((n) => built(n) !== undefined)
          : undefined,
      );
      const holder = nodes[first]!;
      const other = nodes[1 - first]!;
      expect(built(holder)?.result?.days?.map((d) => d.date)).toEqual(['2025-11-02']);
      // The other node has run nothing and said so once.
      await until('the other node to see the lease held', 10_000, () =>
        lines(other.log).some((l) => l.msg.startsWith('schedule held by another node')) ? true : undefined,
      );
      expect(lines(other.log).filter((l) => l.msg.startsWith('scheduled '))).toEqual([]);
      expect(lines(other.log).filter((l) => l.msg.startsWith('schedule held by another node'))).toHaveLength(1);
      expect(lines(other.log).filter((l) => l.msg.startsWith('schedule lease taken'))).toEqual([]);
      const takenBy = lines(holder.log).find((l) => l.msg.startsWith('schedule lease taken'))?.holder;
      expect(takenBy).toMatch(new RegExp(`:${holder.child.pid}:`));

      // SIGKILL: no release; the lease must expire.
      holder.child.kill('SIGKILL');
      const killedAt = Date.now();
      await until('the takeover', 4 * TTL_S * 1000, () =>
        lines(other.log).some((l) => l.msg.startsWith('schedule lease taken')) ? true : undefined,
      );
      const takeoverMs = Date.now() - killedAt;
      // ttl after the last renewal, plus at most one renewal period (ttl/3), plus polling slack.
      expect(takeoverMs).toBeLessThan(2 * TTL_S * 1000);
      // No bound is promised here, only that it runs: the catch-up build is a child process, slow on a loaded machine.
      await until('the new holder to run the schedule', 60_000, () => built(other));
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const row = (
          await client.query<{ holder: string }>("SELECT holder FROM schedule_lease WHERE name = 'schedule'")
        ).rows[0];
        expect(row?.holder).toMatch(new RegExp(`:${other.child.pid}:`));
      } finally {
        await client.end();
      }
    } finally {
      for (const n of nodes) {
        if (n.child.exitCode === null && n.child.signalCode === null) {
          n.child.kill('SIGTERM');
          await n.exited;
        }
      }
    }
    const verified = runJson(dir, ['verify'], { env: { TIMESEAL_DATABASE_URL: url } });
    expect(verified.result.code, verified.result.stdout + verified.result.stderr).toBe(0);
    expect(verified.json).toMatchObject({ ok: true, days: 1 });
  },
);
