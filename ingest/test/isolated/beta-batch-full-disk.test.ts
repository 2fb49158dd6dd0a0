// POST /api/v1/beta/timestamps when the database's disk fills up in the middle of a batch (ingest/routes/beta-batch.ts):
// 503 with Retry-After, none of the batch stored, and the same batch stored once there is room. A batch is stored
// by the group-commit writer's own connection (store/sqlite/submission-writer.ts), so the limit on the database's
// size (max_page_count, a per-connection setting) is set on every connection opened, which this file records by
// wrapping openDatabase with vi.mock. A replaced module would reach the next file of a shared worker, so this file
// is not in the quick tier (test/support/tiers.ts): it runs in a process of its own.
import { afterAll, describe, expect, it, vi } from 'vitest';
import { EXAMPLE_HASH } from '../../errors.ts';
import {
  makeFixture,
  NOW,
  postBatch,
  randomHash,
  randomHashes,
  removeTempDirs,
  storedOf,
  type Fixture,
} from '../fixture.ts';
import type { DB } from '../../../store/sqlite/db.ts';

/** Every SQLite connection opened, by file: the group-commit writer's own among them, where a batch is stored. */
const connections = vi.hoisted(() => new Map<string, DB[]>());
vi.mock('../../../store/sqlite/db.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../store/sqlite/db.ts')>();
  return {
    ...original,
    openDatabase: (file: string) => {
      const db = original.openDatabase(file);
      connections.set(file, [...(connections.get(file) ?? []), db]);
      return db;
    },
  };
});

const fixtures: Fixture[] = [];
afterAll(async () => {
  for (const f of fixtures) await f.close();
  removeTempDirs();
});

async function fixture(options: { publish?: string[] } = {}) {
  const f = await makeFixture({ ...options, clock: () => new Date(NOW) });
  fixtures.push(f);
  return { f };
}

describe('one transaction: all stored or none', () => {
  it('a disk that fills up in the middle of the batch: 503 with Retry-After, none of it stored; the same batch goes through once there is room', async () => {
    const { f } = await fixture({ publish: [] });
    const list = randomHashes(1000);
    // A first batch opens the group-commit writer's connection, which stores the batches.
    expect((await postBatch(f, { hashes: [randomHash()] })).statusCode).toBe(200);
    const open = connections.get(f.config.db)!.filter((db) => db.open);
    expect(open.length).toBeGreaterThanOrEqual(2);
    const pages = f.db.pragma('page_count', { simple: true }) as number;
    // The database may grow by 4 pages (16 KB) on any connection: the first rows of the batch fit, the rest do not.
    for (const db of open) db.pragma(`max_page_count = ${pages + 4}`);
    const before = f.rowCounts();
    const res = await postBatch(f, { hashes: list });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('60');
    expect(res.json()).toMatchObject({
      success: false,
      error:
        'The server cannot store submissions right now (its disk is full); nothing was recorded. Please try again later.',
      example: { hashes: [EXAMPLE_HASH] },
    });
    expect(storedOf(f, list)).toBe(0);
    expect(f.rowCounts()).toEqual(before);
    expect((await f.app.inject('/api/queue-stats.php')).json()).toMatchObject({ status: 'submissions failing' });
    // A batch small enough to fit still fits (the limit is real, not a refusal of every write).
    const one = randomHash();
    expect((await postBatch(f, { hashes: [one] })).statusCode).toBe(200);
    expect(storedOf(f, [one])).toBe(1);
    for (const db of open) db.pragma('max_page_count = 1073741823');
    const retried = await postBatch(f, { hashes: list });
    expect(retried.statusCode).toBe(200);
    expect(storedOf(f, list)).toBe(1000);
    expect((await f.app.inject('/api/queue-stats.php')).json()).toMatchObject({ status: 'operational' });
  });
});
