// The Store contract (contract.ts) on the PostgreSQL engine, against a real private PostgreSQL cluster
// (test/support/postgres.ts): each contract test gets a new database on it, and the stores of one test are two
// pools on that database, as two nodes would be. Then what is PostgreSQL's own: migrations under concurrent
// starts, the free tier exact across two pools, and a day read back exactly as the SQLite engine reads it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresForSuite } from '../../test/support/postgres.ts';
import { openStore } from '../index.ts';
import { MIGRATIONS } from '../postgres/migrations.ts';
import { StorageUnavailableError, type DayRow, type Store, type Submission } from '../store.ts';
import { storeContract } from './contract.ts';

const server = postgresForSuite();
let databases = 0;

/** A new, empty database on the suite's server; its URL. */
async function newDatabase(): Promise<string> {
  const name = `store_${++databases}_${crypto.randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  return url.toString();
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
  for await (const batch of store.submissions.readDay(date, { batchRows })) rows.push(...batch.rows);
  return rows;
}

describe('PostgreSQL engine', () => {
  const stores: Store[] = [];
  const open = async (url: string): Promise<Store> => {
    const store = await openStore({ db: '', databaseUrl: url });
    stores.push(store);
    return store;
  };
  afterAll(async () => {
    for (const s of stores) await s.close();
  });

  it('openStore selects PostgreSQL for a postgres:// URL', async () => {
    const store = await open(await newDatabase());
    expect(store.engine).toBe('postgres');
  });

  it('migrations run once when several stores open the same new database at the same time', async () => {
    const url = await newDatabase();
    await Promise.all(Array.from({ length: 4 }, () => open(url)));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const versions = (await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version);
      expect(versions).toEqual(MIGRATIONS.map((_, i) => i + 1));
      const tables = (await client.query<{ t: string }>(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`)).rows.map((r) => r.t);
      expect(tables).toEqual([
        'auth_throttle',
        'contact_messages',
        'ip_rate_limit',
        'professional_waitlist',
        'quota_usage',
        'schema_migrations',
        'sessions',
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

  it('a database newer than the program is refused', async () => {
    const url = await newDatabase();
    await open(url);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [MIGRATIONS.length + 1]);
    await client.end();
    await expect(open(url)).rejects.toThrow(`database schema version ${MIGRATIONS.length + 1} is newer than this program (${MIGRATIONS.length})`);
  });

  it('the free tier is exact with two pools racing 20 submissions from one address', async () => {
    const url = await newDatabase();
    const [a, b] = [await open(url), await open(url)];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).limits.submit({ submission: { hash: hex(), submittedAt: new Date(NOW.getTime() + i) }, clientKey: '203.0.113.7', caps: CAPS })),
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
        ...Array.from({ length: 300 }, (_, i) => ({ hash: hex(), submittedAt: new Date(NOW.getTime() - i * 997), source: 'import' as const, fileName: `f${i}` })),
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
    await store.submissions.enqueue(Array.from({ length: 30 }, (_, i) => ({ hash: hex(), submittedAt: new Date(NOW.getTime() + i), source: 'import' as const })));
    for (let round = 0; round < 15; round++) {
      for await (const batch of store.submissions.readDay('2026-03-10', { batchRows: 5 })) {
        expect(batch.rows).toHaveLength(5);
        break;
      }
    }
    // More early exits than the pool has connections: each went back to the pool, outside a transaction.
    await store.submissions.enqueue([{ hash: hex(), submittedAt: NOW, source: 'import' }]);
    expect((await drain(store, '2026-03-10', 100)).length).toBe(31);
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
    expect(err).toMatchObject({ kind: 'io', code: 'ECONNREFUSED' });
  });
});
