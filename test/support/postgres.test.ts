// The test PostgreSQL (test/support/postgres.ts) is a real server with the guarantees the PostgreSQL storage
// engine will rely on: a committed row is visible to another connection, row locks serialize two
// transactions, commits are flushed (fsync, synchronous_commit), and stop() really stops it.
import fs from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { postgresForSuite, startPostgres, type TestPostgres } from './postgres.ts';

const other = postgresForSuite();
let server: TestPostgres;
const clients: pg.Client[] = [];

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  clients.push(client);
  return client;
}

beforeAll(async () => {
  server = await startPostgres();
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  await server?.stop();
});

describe('startPostgres', () => {
  it('gives an empty database where a row one connection commits is read by another', async () => {
    expect(server.url).toMatch(/^postgres:\/\//);
    const writer = await connect();
    const reader = await connect();
    const tables = await reader.query(
      `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'`,
    );
    expect(tables.rows[0].n).toBe(0);
    await writer.query('CREATE TABLE note (id integer PRIMARY KEY, body text NOT NULL)');
    await writer.query('BEGIN');
    await writer.query(`INSERT INTO note VALUES (1, 'sealed')`);
    expect((await reader.query('SELECT body FROM note')).rows).toEqual([]);
    await writer.query('COMMIT');
    expect((await reader.query('SELECT body FROM note WHERE id = 1')).rows).toEqual([{ body: 'sealed' }]);
  });

  it('commits are durable: fsync and synchronous_commit are on', async () => {
    const client = await connect();
    expect((await client.query('SHOW fsync')).rows[0].fsync).toBe('on');
    expect((await client.query('SHOW synchronous_commit')).rows[0].synchronous_commit).toBe('on');
  });

  it('SELECT … FOR UPDATE makes a second transaction wait for the first and read its result', async () => {
    const first = await connect();
    const second = await connect();
    await first.query('CREATE TABLE counter (id integer PRIMARY KEY, n integer NOT NULL)');
    await first.query('INSERT INTO counter VALUES (1, 0)');
    const secondPid = (await second.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;

    await first.query('BEGIN');
    expect((await first.query('SELECT n FROM counter WHERE id = 1 FOR UPDATE')).rows[0].n).toBe(0);

    await second.query('BEGIN');
    const secondRead = second.query('SELECT n FROM counter WHERE id = 1 FOR UPDATE');
    // The server itself reports the second transaction as waiting for the first one's lock.
    const observer = await connect();
    const firstPid = (await first.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
    await vi.waitFor(
      async () => {
        const blockedBy = (await observer.query('SELECT pg_blocking_pids($1) AS pids', [secondPid])).rows[0].pids;
        expect(blockedBy).toEqual([firstPid]);
      },
      { timeout: 5000, interval: 25 },
    );

    await first.query('UPDATE counter SET n = n + 1 WHERE id = 1');
    await first.query('COMMIT');
    // The second read happens after the first commit, so it sees 1, not the 0 it would have read unlocked.
    expect((await secondRead).rows[0].n).toBe(1);
    await second.query('UPDATE counter SET n = n + 1 WHERE id = 1');
    await second.query('COMMIT');
    expect((await observer.query('SELECT n FROM counter WHERE id = 1')).rows[0].n).toBe(2);
  });

  it('each call gives its own database: what one suite writes another never sees', async () => {
    expect(other.url).not.toBe(server.url);
    const mine = await connect();
    await mine.query('CREATE TABLE only_here (x integer)');
    const theirs = new pg.Client({ connectionString: other.url });
    await theirs.connect();
    try {
      const found = await theirs.query(
        `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'only_here'`,
      );
      expect(found.rows[0].n).toBe(0);
    } finally {
      await theirs.end();
    }
  });

  it('stop() stops the server: new connections are refused, the process and its folder are gone', async () => {
    await Promise.all(clients.splice(0).map((c) => c.end()));
    await server.stop();
    const client = new pg.Client({ connectionString: server.url, connectionTimeoutMillis: 5000 });
    const refused = await client.connect().then(
      () => null,
      (err: NodeJS.ErrnoException) => err,
    );
    await client.end().catch(() => undefined);
    expect(refused).not.toBeNull();
    if (server.pid === undefined) {
      // TIMESEAL_TEST_DATABASE_URL: the server is someone else's; our database is dropped.
      expect(refused!.message).toMatch(/does not exist/);
    } else {
      expect(refused!.code).toBe('ECONNREFUSED');
      expect(() => process.kill(server.pid!, 0)).toThrow(/ESRCH/);
      expect(fs.existsSync(server.dir!)).toBe(false);
    }
  });
});
