// A disk that filled up while the index segments were merged, after a day had been published, ended
// `timeseal ledger build` with the bare "ENOSPC: no space left on device, write", as if the day had failed. The
// day was published (days.json names it); only the index upkeep after it failed, and the archive is whole: the
// message says so, lookups find the day's hashes in the unmerged segments, and the next run merges them.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { DAYS_PATH } from '../core/archive.ts';
import { TimesealError } from '../core/errors.ts';
import { encodeIndexHead, INDEX_HEAD_PATH, parseIndexHead } from '../core/index-segments.ts';
import { loadConfig } from '../runtime/config.ts';
import { initKeys, loadSigningKeys } from '../runtime/keys.ts';
import { openDatabase } from '../store/sqlite/db.ts';
import { enqueue } from '../store/sqlite/queue.ts';
import { openSqliteStore } from '../store/sqlite/engine.ts';
import { publishLedgers, type BuildContext } from './build.ts';
import { TEMP_DIR } from './files.ts';
import { findHash } from './proof.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-upkeep-enospc-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const DAY_MS = 86_400_000;
const FIRST_DAY = Date.parse('2025-11-02T00:00:00.000Z');
const ORIGIN = 'https://timeseal.test';

/** What Node throws for a write to a full file system. */
const enospc = () =>
  Object.assign(new Error('ENOSPC: no space left on device, write'), { errno: -28, code: 'ENOSPC', syscall: 'write' });

describe('the index upkeep fails after a day was published', () => {
  it('says the day was published and only the upkeep failed; the archive is whole and the next run merges', async () => {
    const config = loadConfig({
      TIMESEAL_DB: path.join(dir, 'data/timeseal.db'),
      TIMESEAL_ARCHIVE: path.join(dir, 'ledgers'),
      TIMESEAL_KEYS: path.join(dir, 'keys'),
      TIMESEAL_PRIVATE_KEYS: path.join(dir, 'data/private-keys'),
      TIMESEAL_ORIGIN: ORIGIN,
    });
    initKeys({ keys: config.keys, privateKeys: config.privateKeys });
    const db = openDatabase(config.db);
    try {
      const store = openSqliteStore(config.db, { db });
      const keys = loadSigningKeys({ keys: config.keys, privateKeys: config.privateKeys });
      const progress: string[] = [];
      const ctx = (day: number): BuildContext => ({
        config,
        store,
        keys,
        clock: () => new Date(FIRST_DAY + (day + 1) * DAY_MS + 60_000),
        progress: (m) => progress.push(m),
      });
      const hashes = (day: number) =>
        Array.from({ length: 40 }, (_, i) => crypto.createHash('sha256').update(`${day}-${i}`).digest('hex'));
      for (const day of [0, 1])
        enqueue(
          db,
          hashes(day).map((hash, i) => ({
            hash,
            submittedAt: new Date(FIRST_DAY + day * DAY_MS + i * 1000),
            source: 'import' as const,
          })),
        );

      expect((await publishLedgers(ctx(0), { date: '2025-11-02' })).index.merged).toEqual([]);
      const archive = config.archive;
      const head = () => parseIndexHead(fs.readFileSync(path.join(archive, INDEX_HEAD_PATH), 'utf8'));
      const dates = () =>
        JSON.parse(fs.readFileSync(path.join(archive, DAYS_PATH), 'utf8')).days.map((d: { date: string }) => d.date);
      const diskFull = () => {
        vi.spyOn(fs, 'writevSync').mockImplementation(() => {
          throw enospc();
        });
        vi.spyOn(fs, 'writeSync').mockImplementation(() => {
          throw enospc();
        });
      };

      // Day 2 is as large as day 1, so its segment is merged with day 1's at once, before the commit point: a
      // full disk there fails the day, which is not published, and the archive stays as it was.
      const ctx1 = ctx(1);
      ctx1.progress = (m) => {
        progress.push(m);
        if (m.startsWith('2025-11-03: its index segment merged')) diskFull();
      };
      const unpublished = await publishLedgers(ctx1).then(
        () => undefined,
        (err: unknown) => err,
      );
      vi.restoreAllMocks();
      expect(progress).toContain('2025-11-03: its index segment merged with 1 older ones (leaves 0–79)');
      expect((unpublished as Error).message).toContain('ENOSPC');
      expect((unpublished as Error).message).not.toContain('published and served');
      expect(dates()).toEqual(['2025-11-02']);
      expect(head().segments).toEqual([{ from: 0, to: 40 }]);

      // With space again: the day is published with the merged segment written directly; its own segment
      // file is never written, and nothing is left to merge after it.
      const built = await publishLedgers(ctx(1));
      expect(built.days.map((d) => d.date)).toEqual(['2025-11-03']);
      expect(built.index.merged).toEqual([]);
      expect(head().segments).toEqual([{ from: 0, to: 80 }]);
      expect(fs.existsSync(path.join(archive, 'index/40-80.idx'))).toBe(false);
      expect(findHash(archive, config.logOrigin, hashes(1)[7]!).map((o) => o.date)).toEqual(['2025-11-03']);
      expect(findHash(archive, config.logOrigin, hashes(0)[3]!).map((o) => o.date)).toEqual(['2025-11-02']);

      // A run killed after days.json and before the head leaves the head at day 1: the next run writes day 2's
      // own segment from its ledger, and the upkeep merges. A full disk in that merge: the message says the
      // day is published, the head names the unmerged segments, and lookups use them.
      fs.writeFileSync(
        path.join(archive, INDEX_HEAD_PATH),
        encodeIndexHead({ treeSize: 40, segments: [{ from: 0, to: 40 }] }),
      );
      fs.rmSync(path.join(archive, 'index/0-80.idx'));
      const ctx2 = ctx(1);
      ctx2.progress = (m) => {
        progress.push(m);
        if (m.startsWith('merging')) diskFull();
      };
      const failed = await publishLedgers(ctx2).then(
        () => undefined,
        (err: unknown) => err,
      );
      vi.restoreAllMocks();
      expect(progress).toContain('merging 2 index segments (leaves 0–79)');
      expect(failed).toBeInstanceOf(TimesealError);
      expect((failed as Error).message).toBe(
        'Every published day is served; only the index upkeep after the publication failed (lookups use the unmerged index segments until a later `timeseal ledger build` merges them): ENOSPC: no space left on device, write',
      );
      expect(dates()).toEqual(['2025-11-02', '2025-11-03']);
      expect(head().segments).toEqual([
        { from: 0, to: 40 },
        { from: 40, to: 80 },
      ]);
      expect(findHash(archive, config.logOrigin, hashes(1)[7]!).map((o) => o.date)).toEqual(['2025-11-03']);
      expect(fs.readdirSync(path.join(archive, TEMP_DIR))).toEqual([]);
      expect(fs.existsSync(path.join(archive, 'index/0-80.idx'))).toBe(false);

      // With space again, the next run merges.
      const next = await publishLedgers(ctx(1));
      expect(next.days).toEqual([]);
      expect(next.index.merged).toEqual([{ from: 0, to: 80 }]);
      expect(findHash(archive, config.logOrigin, hashes(0)[3]!).map((o) => o.date)).toEqual(['2025-11-02']);
    } finally {
      db.close();
    }
  });
});
