// The Store contract (contract.ts) on the PostgreSQL engine, against a real private PostgreSQL cluster
// (test/support/postgres.ts): each contract test gets a new database on it, and the stores of one test are two
// pools on that database, as two nodes would be. Then what is PostgreSQL's own: migrations under concurrent
// starts, the free tier exact across two pools, and a day read back exactly as the SQLite engine reads it.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BIN, ORIGIN, childEnv, projectEnv } from '../../ingest/test/fixture.ts';
import {
  makeHashes,
  removeTempProjects,
  run,
  tempProject,
  treeDiff,
  treeDigest,
  writeHashFile,
} from '../../test/cli/helpers.ts';
import { createDatabase, postgresForSuite, startPostgres } from '../../test/support/postgres.ts';
import { openStore } from '../index.ts';
import { MIGRATIONS } from '../postgres/migrations.ts';
import { dayRowCount, dayRows, StorageUnavailableError, type DayRow, type Store, type Submission } from '../store.ts';
import { storeContract } from './contract.ts';

const server = postgresForSuite();
/** The databases this file created on the suite's server, dropped after its tests (on a TIMESEAL_TEST_DATABASE_URL
 * server they would outlive the run). */
const databases: string[] = [];

/** A new, empty database on the suite's server; its URL. */
async function newDatabase(): Promise<string> {
  const name = `store_${databases.length + 1}_${crypto.randomBytes(3).toString('hex')}`;
  databases.push(name);
  return createDatabase(server.url, name);
}

let current = '';
storeContract(
  'PostgreSQL',
  async () => {
    const store = await openStore({ db: '', databaseUrl: current });
    return { store, close: () => store.close() };
  },
  { newDatabase: async () => void (current = await newDatabase()) },
);

const hex = (): string => crypto.randomBytes(32).toString('hex');
const NOW = new Date('2026-03-10T12:00:00.000Z');
const CAPS = { freePerDay: 2, standardPerMonth: 500 };

async function drain(store: Store, date: string, batchRows: number): Promise<DayRow[]> {
  const rows: DayRow[] = [];
  for await (const batch of store.submissions.readDay(date, { batchRows })) rows.push(...dayRows(batch));
  return rows;
}

const stores: Store[] = [];
/** A store on `url`, closed after the test (the test cluster allows 50 connections; each pool keeps up to 10). */
const open = async (url: string): Promise<Store> => {
  const store = await openStore({ db: '', databaseUrl: url });
  stores.push(store);
  return store;
};
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});
afterAll(async () => {
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    for (const name of databases) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
});

describe('PostgreSQL engine', () => {
  it('openStore selects PostgreSQL for a postgres:// URL', async () => {
    const store = await open(await newDatabase());
    expect(store.engine).toBe('postgres');
  });

  it('keeps at most TIMESEAL_DATABASE_POOL connections however many requests wait', async () => {
    const url = await newDatabase();
    const connections = async (): Promise<number> => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const sql =
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()';
        return (await client.query<{ n: number }>(sql)).rows[0]!.n;
      } finally {
        await client.end();
      }
    };
    // Reads, one statement each (writes share one statement: the group commit).
    const calls = (store: Store) =>
      Promise.all(Array.from({ length: 40 }, () => store.submissions.queueSize('2026-03-10')));
    const small = await openStore({ db: '', databaseUrl: url, poolSize: 2 });
    await calls(small);
    expect(await connections()).toBeLessThanOrEqual(2);
    await small.close();
    // The default pool opens more under the same load: the setting, not the load, kept the count at 2.
    await calls(await open(url));
    expect(await connections()).toBeGreaterThan(2);
  });

  it('group commit: 500 concurrent writes are each durable when resolved, in far fewer commits; a row that fails fails alone', async () => {
    const url = await newDatabase();
    const store = await open(url);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const commits = async (): Promise<number> =>
        Number(
          (
            await client.query<{ n: string }>(
              'SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()',
            )
          ).rows[0]!.n,
        );
      const hashes = Array.from({ length: 500 }, hex);
      const before = await commits();
      await Promise.all(hashes.map((hash) => store.submissions.write({ hash, submittedAt: NOW, source: 'api_beta' })));
      const stored = new Set(
        (await client.query<{ hash: string }>('SELECT hash FROM submissions')).rows.map((r) => r.hash),
      );
      expect(hashes.filter((h) => !stored.has(h))).toEqual([]);
      // Statistics are sent by the server's backends with a delay: wait for them, then compare.
      let used = 0;
      for (let i = 0; i < 50 && used < 2; i++, await new Promise((r) => setTimeout(r, 100)))
        used = (await commits()) - before;
      expect(used).toBeGreaterThan(0);
      expect(used).toBeLessThan(250);
      // A row the table refuses (its CHECK on the hash) fails alone; the rows sent with it are stored.
      const good = Array.from({ length: 5 }, hex);
      const results = await Promise.allSettled(
        [...good, 'not-a-hash'].map((hash) => store.submissions.write({ hash, submittedAt: NOW, source: 'web' })),
      );
      expect(results.map((r) => r.status)).toEqual([
        'fulfilled',
        'fulfilled',
        'fulfilled',
        'fulfilled',
        'fulfilled',
        'rejected',
      ]);
      const after = new Set(
        (await client.query<{ hash: string }>('SELECT hash FROM submissions')).rows.map((r) => r.hash),
      );
      expect(good.every((h) => after.has(h))).toBe(true);
      expect(after.has('not-a-hash')).toBe(false);
    } finally {
      await client.end();
    }
  });

  it('migrations run once when several stores open the same new database at the same time', async () => {
    const url = await newDatabase();
    await Promise.all(Array.from({ length: 4 }, () => open(url)));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const versions = (
        await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')
      ).rows.map((r) => r.version);
      expect(versions).toEqual(MIGRATIONS.map((_, i) => i + 1));
      const tables = (
        await client.query<{ t: string }>(
          `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`,
        )
      ).rows.map((r) => r.t);
      expect(tables).toEqual([
        'auth_throttle',
        'contact_messages',
        'ip_rate_limit',
        'ledger_close',
        'professional_waitlist',
        'quota_usage',
        'receipts',
        'schedule_lease',
        'schema_migrations',
        'sessions',
        'statements',
        'stripe_events',
        'submissions',
        'subscriptions',
        'timestamps',
        'users',
      ]);
      expect((await client.query('SHOW synchronous_commit')).rows[0].synchronous_commit).toBe('on');
    } finally {
      await client.end();
    }
    // Opening again applies nothing and keeps the rows.
    await open(url);
  });

  it('commits are synchronous even on a database whose default is synchronous_commit=off; a URL that turns it off is refused', async () => {
    const url = await newDatabase();
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${new URL(url).pathname.slice(1)} SET synchronous_commit = off`);
    } finally {
      await admin.end();
    }
    // The store checks what its connections run with and refuses 'off': opening proves it forced 'on'.
    const store = await open(url);
    await store.submissions.write({ hash: hex(), submittedAt: NOW, source: 'web' });
    const off = new URL(url);
    off.searchParams.set('options', '-c synchronous_commit=off');
    await expect(openStore({ db: '', databaseUrl: off.toString() })).rejects.toThrow(/synchronous_commit=off/);
  });

  it('a database newer than the program is refused', async () => {
    const url = await newDatabase();
    await open(url);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [MIGRATIONS.length + 1]);
    await client.end();
    await expect(open(url)).rejects.toThrow(
      `database schema version ${MIGRATIONS.length + 1} is newer than this program (${MIGRATIONS.length})`,
    );
  });

  it('the free tier is exact with two pools racing 20 submissions from one address', async () => {
    const url = await newDatabase();
    const [a, b] = [await open(url), await open(url)];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? a : b).limits.submit({
          submission: { hash: hex(), submittedAt: new Date(NOW.getTime() + i) },
          clientKey: '203.0.113.7',
          caps: CAPS,
        }),
      ),
    );
    expect(results.filter((r) => r.allowed)).toHaveLength(2);
    expect(await b.limits.dailyUsed('203.0.113.7', '2026-03-10')).toBe(2);
    expect(await b.submissions.queueSize('')).toBe(2);
    expect(await drain(a, '2026-03-10', 10)).toHaveLength(2);
  });

  it('a day reads back the same rows in the same order as on SQLite, given the same inserts', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-pg-vs-sqlite-'));
    const sqlite = await openStore({ db: path.join(dir, 'timeseal.db') });
    try {
      const postgres = await open(await newDatabase());
      const repeated = hex();
      const rows: Submission[] = [
        ...Array.from({ length: 300 }, (_, i) => ({
          hash: hex(),
          submittedAt: new Date(NOW.getTime() - i * 997),
          source: 'import' as const,
          fileName: `f${i}`,
        })),
        { hash: repeated, submittedAt: new Date('2026-03-10T00:00:00.000Z'), source: 'web' },
        { hash: repeated, submittedAt: new Date('2026-03-10T23:59:59.999Z'), source: 'api_beta' },
        { hash: hex(), submittedAt: new Date('2026-03-11T00:00:00.000Z'), source: 'web' },
        { hash: hex(), submittedAt: new Date('2026-03-09T23:59:59.999Z'), source: 'web' },
      ];
      for (const store of [sqlite, postgres]) {
        await store.submissions.enqueue(rows.slice(0, 150));
        for (const r of rows.slice(150, 160)) await store.submissions.write(r);
        await store.submissions.enqueue(rows.slice(160));
      }
      const fromSqlite = await drain(sqlite, '2026-03-10', 64);
      const fromPostgres = await drain(postgres, '2026-03-10', 64);
      expect(fromSqlite).toHaveLength(302);
      expect(fromPostgres).toEqual(fromSqlite);
      expect(await postgres.submissions.dates('', '9999')).toEqual(await sqlite.submissions.dates('', '9999'));
      expect(await postgres.submissions.queueSize('2026-03-09')).toBe(await sqlite.submissions.queueSize('2026-03-09'));
    } finally {
      await sqlite.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a reader that stops early releases its connection and transaction', async () => {
    const url = await newDatabase();
    const store = await open(url);
    await store.submissions.enqueue(
      Array.from({ length: 30 }, (_, i) => ({
        hash: hex(),
        submittedAt: new Date(NOW.getTime() + i),
        source: 'import' as const,
      })),
    );
    for (let round = 0; round < 15; round++) {
      for await (const batch of store.submissions.readDay('2026-03-10', { batchRows: 5 })) {
        expect(dayRowCount(batch)).toBe(5);
        break;
      }
    }
    // More early exits than the pool has connections: each went back to the pool, outside a transaction.
    await store.submissions.enqueue([{ hash: hex(), submittedAt: NOW, source: 'import' }]);
    expect((await drain(store, '2026-03-10', 100)).length).toBe(31);
  });

  it('a server that goes away mid-service makes every kind of call StorageUnavailableError, never a raw error', async () => {
    const own = await startPostgres();
    const store = await openStore({ db: '', databaseUrl: own.url });
    try {
      await store.submissions.write({ hash: hex(), submittedAt: NOW, source: 'web' });
      await own.stop();
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['write', () => store.submissions.write({ hash: hex(), submittedAt: NOW, source: 'web' })],
        [
          'submit',
          () =>
            store.limits.submit({ submission: { hash: hex(), submittedAt: NOW }, clientKey: '192.0.2.1', caps: CAPS }),
        ],
        ['queueSize', () => store.submissions.queueSize('')],
        ['enqueue', () => store.submissions.enqueue([{ hash: hex(), submittedAt: NOW, source: 'api_beta' }])],
        ['submittedOn', () => store.submissions.submittedOn('2026-03-10', [hex()])],
        [
          'countWindow',
          () => store.limits.countWindow('192.0.2.1', 'beta-api:w', 10, { from: 'beta-api:', before: 'beta-api:w' }, 3),
        ],
        ['receipts.forDay', () => store.receipts.forDay(hex(), '2026-03-10')],
        ['readDay', () => drain(store, '2026-03-10', 10)],
        ['throttle.count', () => store.throttle.count({ scope: 's', key: 'k' }, 1000, NOW.getTime())],
      ];
      for (const [name, call] of calls) {
        const err = await call().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err, name).toBeInstanceOf(StorageUnavailableError);
        expect(err, name).toMatchObject({ kind: 'unreachable' });
      }
    } finally {
      await store.close();
      await own.stop();
    }
  });

  it('an unreachable server is StorageUnavailableError', async () => {
    const url = new URL(server.url);
    const probe = await import('node:net').then(
      (net) =>
        new Promise<number>((resolve) => {
          const s = net.createServer().listen(0, '127.0.0.1', () => {
            const port = (s.address() as { port: number }).port;
            s.close(() => resolve(port));
          });
        }),
    );
    url.port = String(probe);
    const err = await openStore({ db: '', databaseUrl: url.toString() }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StorageUnavailableError);
    expect(err).toMatchObject({ kind: 'unreachable', code: 'ECONNREFUSED' });
  });
});

describe('timeseal db copy and db migrate', () => {
  afterAll(() => removeTempProjects());

  it('db migrate applies the schema once on each engine', async () => {
    const dir = tempProject('db-migrate');
    const url = await newDatabase();
    const first = run(dir, ['db', 'migrate', '--json'], { env: { TIMESEAL_DATABASE_URL: url } });
    expect(first.stderr).toBe('');
    expect(JSON.parse(first.stdout)).toEqual({
      ok: true,
      engine: 'postgres',
      applied: MIGRATIONS.map((_, i) => i + 1),
      version: MIGRATIONS.length,
    });
    const again = run(dir, ['db', 'migrate'], { env: { TIMESEAL_DATABASE_URL: url } });
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`The PostgreSQL database is at schema version ${MIGRATIONS.length}: nothing to apply.\n`);
    const sqlite = run(dir, ['db', 'migrate', '--json'], { env: { TIMESEAL_DB: path.join(dir, 'timeseal.db') } });
    expect(JSON.parse(sqlite.stdout)).toMatchObject({ ok: true, engine: 'sqlite' });
    expect(fs.statSync(path.join(dir, 'timeseal.db')).size).toBeGreaterThan(0);
  });

  it('db copy moves every row of a SQLite database into PostgreSQL, where the store reads the same answers', async () => {
    const dir = tempProject('db-copy');
    const file = path.join(dir, 'timeseal.db');
    const sqlite = await openStore({ db: file });
    const user = crypto.randomUUID();
    const session = hex();
    const reset = hex();
    let contact = 0;
    const receiptHash = hex();
    const statementEntry = hex();
    const statementBytes = new Uint8Array(crypto.randomBytes(700));
    try {
      await sqlite.users.create({
        id: user,
        username: 'Dana',
        email: 'dana@example.com',
        passwordHash: 'h1',
        newsletter: true,
        createdAt: NOW,
        verification: { tokenHash: hex(), expires: NOW },
      });
      await sqlite.users.setReset(user, reset, new Date(NOW.getTime() + 60_000));
      await sqlite.sessions.create(session, user, NOW, new Date(NOW.getTime() + 60_000));
      await sqlite.stripeEvents.apply(
        { id: 'evt_copy', type: 'customer.subscription.created', created: 7, receivedAt: NOW },
        {
          kind: 'subscription',
          userIdHint: user,
          fields: {
            customerId: 'cus_c',
            subscriptionId: 'sub_c',
            priceId: 'price_c',
            status: 'active',
            periodStart: null,
            periodEnd: '2026-04-10T12:00:00.000Z',
            cancelAtPeriodEnd: true,
          },
        },
      );
      for (let i = 0; i < 3; i++)
        await sqlite.limits.submit({
          submission: { hash: hex(), submittedAt: new Date(NOW.getTime() + i), fileName: `doc${i}.pdf` },
          clientKey: '192.0.2.5',
          userId: user,
          caps: CAPS,
        });
      await sqlite.limits.submit({
        submission: { hash: receiptHash, submittedAt: NOW },
        clientKey: '192.0.2.6',
        caps: CAPS,
        receipt: new Uint8Array(crypto.randomBytes(1500)),
      });
      await sqlite.statements.register({ entry: statementEntry, bytes: statementBytes, registeredAt: NOW });
      await sqlite.submissions.enqueue(
        Array.from({ length: 2500 }, (_, i) => ({
          hash: hex(),
          submittedAt: new Date(NOW.getTime() - i * 1000),
          source: 'import' as const,
        })),
      );
      await sqlite.throttle.record([{ scope: 'login', key: 'ip:1', windowMs: 60_000 }], NOW.getTime());
      await sqlite.forms.joinWaitlist({ name: 'W', email: 'w@example.com', message: 'm', createdAt: NOW });
      contact = await sqlite.forms.addContact({
        name: 'Name',
        email: 'c@example.com',
        subject: 'support',
        message: 'a message of some length',
        createdAt: NOW,
      });
    } finally {
      await sqlite.close();
    }

    const url = await newDatabase();
    const copied = run(dir, ['db', 'copy', '--to', url, '--json'], { env: { TIMESEAL_DB: file } });
    expect(copied.stderr).toBe('');
    expect(copied.code).toBe(0);
    expect(JSON.parse(copied.stdout).rows).toMatchObject({
      users: 1,
      sessions: 1,
      subscriptions: 1,
      submissions: 2505,
      timestamps: 3,
      quota_usage: 1,
      ip_rate_limit: 1,
      auth_throttle: 1,
      stripe_events: 1,
      professional_waitlist: 1,
      contact_messages: 1,
      receipts: 1,
      statements: 1,
    });

    const [before, after] = [await openStore({ db: file }), await open(url)];
    try {
      expect(await drain(after, '2026-03-10', 1000)).toEqual(await drain(before, '2026-03-10', 1000));
      expect(await after.users.get(user)).toEqual(await before.users.get(user));
      expect(await after.users.forLogin('dana')).toEqual({ id: user, passwordHash: 'h1' });
      expect(await after.users.forReset(reset, NOW)).toBe(user);
      expect(await after.sessions.user(session, NOW)).toEqual(await before.sessions.user(session, NOW));
      expect(await after.subscriptions.get(user)).toEqual(await before.subscriptions.get(user));
      expect(await after.history.list(user)).toEqual(await before.history.list(user));
      expect(await after.limits.monthlyUsed(user, '2026-03')).toBe(3);
      expect(await after.limits.dailyUsed('192.0.2.6', '2026-03-10')).toBe(1);
      expect(await after.receipts.forDay(receiptHash, '2026-03-10')).toEqual(
        await before.receipts.forDay(receiptHash, '2026-03-10'),
      );
      expect((await after.receipts.forDay(receiptHash, '2026-03-10'))[0]).toHaveLength(1500);
      expect(await after.statements.forDay('2026-03-10')).toEqual(await before.statements.forDay('2026-03-10'));
      expect(await after.statements.get(statementEntry)).toEqual(statementBytes);
      expect(await after.stripeEvents.seen('evt_copy')).toBe(true);
      expect(await after.throttle.count({ scope: 'login', key: 'ip:1' }, 60_000, NOW.getTime())).toBe(1);
      expect(await after.forms.joinWaitlist({ name: 'W', email: 'w@example.com', message: 'm', createdAt: NOW })).toBe(
        false,
      );
      // Identity sequences continue after the copied ids.
      expect(
        await after.forms.addContact({
          name: 'Name',
          email: 'c@example.com',
          subject: 'general',
          message: 'another message here',
          createdAt: NOW,
        }),
      ).toBe(contact + 1);
      await after.submissions.write({ hash: hex(), submittedAt: NOW, source: 'web' });
      expect((await drain(after, '2026-03-10', 5000)).length).toBe(
        (await drain(before, '2026-03-10', 5000)).length + 1,
      );
    } finally {
      await before.close();
    }

    // A database that already holds rows is never copied into.
    const refused = run(dir, ['db', 'copy', '--to', url], { env: { TIMESEAL_DB: file } });
    expect(refused.code).toBe(64);
    expect(refused.stderr).toMatch(/already holds rows \(table users\): copy only into a new, empty database/);
  });

  it('timeseal import and ledger build publish the same archive, byte for byte, on PostgreSQL as on SQLite', async () => {
    const onSqlite = tempProject('build-sqlite');
    expect(run(onSqlite, ['keys', 'init']).code).toBe(0);
    const onPostgres = tempProject('build-postgres');
    for (const folder of ['keys', 'data/private-keys'])
      fs.cpSync(path.join(onSqlite, folder), path.join(onPostgres, folder), { recursive: true });
    const url = await newDatabase();
    const hashes = makeHashes('same-day', 200);
    const imports: Array<[string, string[]]> = [
      ['2025-11-01T09:00:00.000Z', hashes.slice(0, 120)],
      ['2025-11-01T17:30:00.250Z', [...hashes.slice(100), hashes[7]!.toUpperCase()]],
    ];
    for (const [dir, env] of [
      [onSqlite, {}],
      [onPostgres, { TIMESEAL_DATABASE_URL: url }],
    ] as const) {
      for (const [i, [at, lines]] of imports.entries()) {
        const r = run(dir, ['import', writeHashFile(dir, `day-${i}.txt`, lines)], {
          env: { ...env, TIMESEAL_NOW: at },
        });
        expect(r.code, r.stderr).toBe(0);
      }
      const built = run(dir, ['ledger', 'build', '--json'], {
        env: { ...env, TIMESEAL_NOW: '2025-11-02T00:01:00.000Z' },
      });
      expect(built.code, built.stderr).toBe(0);
      expect(
        JSON.parse(built.stdout).days.map((d: { date: string; entryCount: number }) => [d.date, d.entryCount]),
      ).toEqual([['2025-11-01', 200]]);
    }
    // The PostgreSQL project's submissions really are in PostgreSQL.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      expect((await client.query<{ n: string }>('SELECT COUNT(*) AS n FROM submissions')).rows[0]!.n).toBe('221');
    } finally {
      await client.end();
    }
    const sqliteArchive = treeDigest(path.join(onSqlite, 'ledgers'));
    expect(sqliteArchive.size).toBeGreaterThan(3);
    expect(treeDiff(sqliteArchive, treeDigest(path.join(onPostgres, 'ledgers')))).toEqual([]);
  });

  it('two timeseal serve nodes on one PostgreSQL admit exactly 2 free submissions from one address between them', async () => {
    const dir = tempProject('two-nodes');
    const url = await newDatabase();
    const env = { ...projectEnv(dir), TIMESEAL_DATABASE_URL: url, TIMESEAL_NOW: '2026-03-10T12:00:00Z' };
    expect(run(dir, ['keys', 'init'], { env }).code).toBe(0);
    // Each node its own TIMESEAL_DB: cli/serve.ts (checkBeforeServing) still opens and quick-checks the SQLite
    // file at start on PostgreSQL too, and two processes creating one new SQLite file at once collide ('table
    // submissions already exists', or 'is empty (0 bytes)').
    const nodes = [0, 1].map((i) => {
      const child = spawn(BIN, ['serve'], {
        cwd: dir,
        env: childEnv({ ...env, PORT: '0', TIMESEAL_DB: path.join(dir, `data/node-${i}.db`) }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let log = '';
      child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
      const listening = new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /Timeseal listening on (http:\/\/\S+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.on('close', (code) => reject(new Error(`timeseal serve exited with ${code}:\n${log}${out}`)));
      });
      return { child, listening };
    });
    try {
      const bases = await Promise.all(nodes.map((n) => n.listening));
      const statuses = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          fetch(`${bases[i % 2]}/api/submit`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', origin: ORIGIN },
            body: JSON.stringify({ hash: hex() }),
          }).then((r) => r.status),
        ),
      );
      expect(statuses.filter((s) => s === 201)).toHaveLength(2);
      expect(statuses.filter((s) => s === 429)).toHaveLength(18);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        expect((await client.query('SELECT source, COUNT(*)::int AS n FROM submissions GROUP BY source')).rows).toEqual(
          [{ source: 'web', n: 2 }],
        );
        expect((await client.query('SELECT count FROM ip_rate_limit')).rows).toEqual([{ count: 2 }]);
      } finally {
        await client.end();
      }
    } finally {
      for (const n of nodes) {
        n.child.kill('SIGTERM');
        if (n.child.exitCode === null) await new Promise((resolve) => n.child.once('exit', resolve));
      }
    }
  });
});
