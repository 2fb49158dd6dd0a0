// GET /ledgers/index-sha256.json while the file for the current tree is being made (ingest/index-json.ts). A
// large archive takes minutes to index, longer than a client waits on a silent connection: the answer must
// never hang. The archive is real (a published day, then a second one built on top); only the speed of the
// index generation is held back, by a gate the test opens.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildLedgers } from '../../pipeline/build.ts';
import { loadSigningKeys } from '../../runtime/keys.ts';
import { enqueue } from '../../store/sqlite/queue.ts';
import { openSqliteStore } from '../../store/sqlite/engine.ts';
import { INDEX_JSON_PREPARING, TREE_SIZE_HEADER } from '../static.ts';
import type { ArchiveAccess } from '../services.ts';
import { DAY, makeFixture, randomHash, removeTempDirs, TODAY, type Fixture } from './fixture.ts';

afterEach(removeTempDirs);

/** An archive view whose index-sha256.json chunks wait for `open()`; counts the generations started. */
function gated(): { wrap: (real: ArchiveAccess) => ArchiveAccess; open(): void; close(): void; started: () => number } {
  let release!: () => void;
  let gate = Promise.resolve();
  let started = 0;
  return {
    wrap: (real) => ({
      ...real,
      async *indexJson(head) {
        started++;
        await gate;
        yield* real.indexJson(head);
      },
    }),
    open: () => release?.(),
    close: () => void (gate = new Promise((resolve) => (release = resolve))),
    started: () => started,
  };
}

const treeSize = (f: Fixture): number =>
  JSON.parse(fs.readFileSync(path.join(f.config.archive, 'checkpoint'), 'utf8').split('\n')[1]!);

/** Publishes a second day (TODAY) with `count` new hashes; returns them. */
async function publishAnotherDay(f: Fixture, count: number): Promise<string[]> {
  const hashes = Array.from({ length: count }, randomHash);
  enqueue(
    f.db,
    hashes.map((hash, i) => ({
      hash,
      submittedAt: new Date(Date.parse(`${TODAY}T08:00:00.000Z`) + i * 1000),
      source: 'import',
    })),
  );
  const keys = loadSigningKeys({ keys: f.config.keys, privateKeys: f.config.privateKeys });
  await buildLedgers({
    config: f.config,
    store: openSqliteStore(f.config.db, { db: f.db }),
    clock: () => new Date(Date.parse(`${TODAY}T00:01:00.000Z`) + 86_400_000),
    keys,
  });
  return hashes;
}

async function until(condition: () => boolean): Promise<void> {
  await vi.waitFor(() => expect(condition()).toBe(true), { timeout: 5000, interval: 10 });
}

describe('index-sha256.json while it is being made', () => {
  it('the first one: a 503 with Retry-After and a message after the wait, never a hang; then the file', async () => {
    const gate = gated();
    gate.close();
    const f = await makeFixture({ archiveAccess: gate.wrap, indexJsonWaitMs: 200 });
    try {
      const started = Date.now();
      const waiting = await f.app.inject('/ledgers/index-sha256.json');
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(waiting.statusCode).toBe(503);
      expect(waiting.headers['retry-after']).toBe('60');
      expect(waiting.json()).toMatchObject({ message: INDEX_JSON_PREPARING });
      // A second request does not start a second generation.
      expect((await f.app.inject('/ledgers/index-sha256.json')).statusCode).toBe(503);
      expect(gate.started()).toBe(1);
      gate.open();
      let ready = await f.app.inject('/ledgers/index-sha256.json');
      for (let i = 0; i < 100 && ready.statusCode !== 200; i++)
        ready = await f.app.inject('/ledgers/index-sha256.json');
      expect(ready.statusCode).toBe(200);
      expect(ready.headers[TREE_SIZE_HEADER.toLowerCase()]).toBe(String(treeSize(f)));
      expect(Object.keys((ready.json() as { map: Record<string, string> }).map).sort()).toEqual(
        [...f.published].sort(),
      );
    } finally {
      await f.close();
    }
  });

  it('after the archive grows: the earlier complete file at once, with its tree size, until the new one is made', async () => {
    const gate = gated();
    const f = await makeFixture({ archiveAccess: gate.wrap, indexJsonWaitMs: 60_000 });
    try {
      const first = await f.app.inject('/ledgers/index-sha256.json');
      expect(first.statusCode).toBe(200);
      const firstSize = treeSize(f);
      const added = await publishAnotherDay(f, 5);
      expect(treeSize(f)).toBe(firstSize + 5);

      gate.close();
      const started = Date.now();
      const stale = await f.app.inject('/ledgers/index-sha256.json');
      // Not the 60 s wait: the earlier file stands in, and says which tree it covers.
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(stale.statusCode).toBe(200);
      expect(stale.headers[TREE_SIZE_HEADER.toLowerCase()]).toBe(String(firstSize));
      expect(stale.body).toBe(first.body);
      // … and the new one is being made: its making starts beside that answer, not before it.
      await vi.waitFor(() => expect(gate.started()).toBe(2), { timeout: 5000, interval: 10 });

      gate.open();
      const fresh = await vi.waitFor(
        async () => {
          const fresh = await f.app.inject('/ledgers/index-sha256.json');
          expect(fresh.statusCode).toBe(200);
          expect(fresh.headers[TREE_SIZE_HEADER.toLowerCase()]).toBe(String(firstSize + 5));
          return fresh;
        },
        { timeout: 2000, interval: 20 },
      );
      const map = (fresh.json() as { map: Record<string, string> }).map;
      for (const hash of added) expect(map[hash]).toBe(TODAY);
      for (const hash of f.published) expect(map[hash]).toBe(DAY);
      // Only the newest complete file is kept.
      const cache = path.join(path.dirname(f.config.db), 'cache');
      await until(() => fs.readdirSync(cache).filter((n) => n.startsWith('index-sha256-')).length === 1);
      expect(fs.readdirSync(cache).filter((n) => n.startsWith('index-sha256-'))).toEqual([
        `index-sha256-${firstSize + 5}.json`,
      ]);
    } finally {
      gate.open();
      await f.close();
    }
  });
});
