// The log-structured index (docs/FORMAT.md §6) on real archives written by the real build:
// - archives built day by day with random sizes (empty days, hashes on several days, shard-size boundaries)
//   answer every lookup exactly like a brute-force map, after every day's publication and after every merge;
// - published index files are never modified (bytes and inodes), and a head's segments outlive it by a run;
// - a reader holding any earlier checkpoint (and even the head it read then) never gets a false "not found".
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { INDEX_HEAD_PATH, parseIndexHead, segmentPath, SEGMENT_SHARD_TARGET } from '../../core/index-segments.ts';
import { diskFetcher } from '../support/disk-fetcher.ts';
import { publishLedgers, upkeepArchiveIndex, type BuildContext } from '../../pipeline/build.ts';
import { loadConfig } from '../../runtime/config.ts';
import { openDatabase, type DB } from '../../store/sqlite/db.ts';
import { initKeys, loadSigningKeys } from '../../runtime/keys.ts';
import { findHash } from '../../pipeline/proof.ts';
import { enqueue } from '../../store/sqlite/queue.ts';
import { SearchUnavailableError, verifiedSearch } from '../../site/src/lib/verified-search.ts';
import { openSqliteStore } from '../../store/sqlite/engine.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const DAY_MS = 86_400_000;
const FIRST_DAY = Date.parse('2025-11-02T00:00:00.000Z');
const dateOf = (day: number) => new Date(FIRST_DAY + day * DAY_MS).toISOString().slice(0, 10);

/** A project folder with keys and a database, built in this process. */
function project(): { ctx: (day: number) => BuildContext; db: DB; archive: string; keysDir: string; close(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-index-growth-'));
  dirs.push(dir);
  const config = loadConfig({
    TIMESEAL_DB: path.join(dir, 'data/timeseal.db'),
    TIMESEAL_ARCHIVE: path.join(dir, 'ledgers'),
    TIMESEAL_KEYS: path.join(dir, 'keys'),
    TIMESEAL_PRIVATE_KEYS: path.join(dir, 'data/private-keys'),
    TIMESEAL_ORIGIN: 'https://timeseal.test',
  });
  initKeys({ keys: config.keys, privateKeys: config.privateKeys });
  const db = openDatabase(config.db);
  const keys = loadSigningKeys({ keys: config.keys, privateKeys: config.privateKeys });
  const store = openSqliteStore(config.db, { db });
  return {
    db,
    // The clock just after midnight following `day`, so that day is finished.
    ctx: (day) => ({ config, store, keys, clock: () => new Date(FIRST_DAY + (day + 1) * DAY_MS + 60_000) }),
    archive: config.archive,
    keysDir: config.keys,
    close: () => db.close(),
  };
}

/** The brute-force model: every (hash, day) published, with the earliest time of that day, and leaf numbers. */
class Model {
  private readonly byHash = new Map<string, { date: string; leafIndex: number; submittedAt: string }[]>();
  size = 0;
  publishDay(day: number, submissions: { hash: string; ms: number }[]): void {
    const earliest = new Map<string, number>();
    for (const s of submissions) earliest.set(s.hash, Math.min(earliest.get(s.hash) ?? Infinity, s.ms));
    const sorted = [...earliest.keys()].sort();
    sorted.forEach((hash, i) => {
      const list = this.byHash.get(hash) ?? [];
      list.push({
        date: dateOf(day),
        leafIndex: this.size + i,
        submittedAt: new Date(earliest.get(hash)!).toISOString(),
      });
      this.byHash.set(hash, list);
    });
    this.size += sorted.length;
  }
  lookup(hash: string, size = this.size) {
    return (this.byHash.get(hash) ?? []).filter((o) => o.leafIndex < size);
  }
  hashes(): string[] {
    return [...this.byHash.keys()];
  }
}

const randomHash = () => crypto.randomBytes(32).toString('hex');

function expectLookupsMatch(archive: string, model: Model, absent: string[], when: string): void {
  for (const hash of [...model.hashes(), ...absent]) {
    const found = findHash(archive, 'timeseal.test', hash).map((o) => ({
      date: o.date,
      leafIndex: o.leafIndex,
      submittedAt: o.submittedAt,
    }));
    expect(found, `${when}: ${hash}`).toEqual(model.lookup(hash));
  }
}

describe('the log-structured index', () => {
  it('answers every lookup like a brute-force map, after every day and after every merge (property)', async () => {
    // Day sizes around the shard-size boundaries (a segment gains a prefix bit past 64 · 2^b leaves) and empty days.
    const boundary = fc.constantFrom(
      0,
      1,
      SEGMENT_SHARD_TARGET,
      SEGMENT_SHARD_TARGET + 1,
      2 * SEGMENT_SHARD_TARGET,
      2 * SEGMENT_SHARD_TARGET + 1,
    );
    const daySize = fc.oneof(boundary, fc.integer({ min: 0, max: 300 }));
    await fc.assert(
      fc.asyncProperty(
        fc.array(daySize, { minLength: 3, maxLength: 8 }),
        fc.integer({ min: 0, max: 20 }),
        async (sizes, repeatPercent) => {
          const p = project();
          const model = new Model();
          const pool: string[] = [];
          try {
            for (const [day, n] of sizes.entries()) {
              const submissions: { hash: string; ms: number }[] = [];
              for (let i = 0; i < n; i++) {
                // Some hashes were published on earlier days, some are sent twice in a day.
                const reuse = pool.length > 0 && Math.random() * 100 < repeatPercent;
                const hash = reuse ? pool[Math.floor(Math.random() * pool.length)]! : randomHash();
                submissions.push({ hash, ms: FIRST_DAY + day * DAY_MS + Math.floor(Math.random() * DAY_MS) });
                pool.push(hash);
              }
              const ctx = p.ctx(day);
              if (submissions.length > 0)
                enqueue(
                  p.db,
                  submissions.map((s) => ({ hash: s.hash, submittedAt: new Date(s.ms), source: 'import' })),
                );
              const report = await publishLedgers(ctx, { upkeep: false });
              expect(report.days.length).toBe(submissions.length > 0 ? 1 : 0);
              model.publishDay(day, submissions);
              const absent = [randomHash(), randomHash()];
              expectLookupsMatch(p.archive, model, absent, `after publishing day ${day}`);
              const upkeep = upkeepArchiveIndex(ctx);
              expectLookupsMatch(
                p.archive,
                model,
                absent,
                `after the upkeep of day ${day} (${upkeep.merged.length} merges)`,
              );
              // Sizes at least double from the newest segment to the oldest. (Nothing published: no head yet.)
              if (model.size === 0) {
                expect(fs.existsSync(path.join(p.archive, INDEX_HEAD_PATH))).toBe(false);
                continue;
              }
              const head = parseIndexHead(fs.readFileSync(path.join(p.archive, INDEX_HEAD_PATH), 'utf8'));
              const lengths = head.segments.map((s) => s.to - s.from);
              for (let i = 1; i < lengths.length; i++) expect(lengths[i - 1]!).toBeGreaterThanOrEqual(2 * lengths[i]!);
              expect(head.treeSize).toBe(model.size);
            }
          } finally {
            p.close();
          }
        },
      ),
      { numRuns: 6 },
    );
  });

  it("never modifies a published index file, keeps a head's segments for a run after it, and never misleads an older reader", async () => {
    const p = project();
    const model = new Model();
    // file -> [inode, sha256] when first seen
    const seen = new Map<string, [number, string]>();
    const checkpoints: { size: number; text: Buffer; head: Buffer }[] = [];
    let previousHeadDirs: string[] = [];
    try {
      for (let day = 0; day < 12; day++) {
        const n = day === 5 ? 0 : 40 + ((day * 37) % 90);
        const submissions = Array.from({ length: n }, (_, i) => ({
          hash: day > 0 && i === 0 ? model.hashes()[0]! : randomHash(),
          ms: FIRST_DAY + day * DAY_MS + i * 1000,
        }));
        const ctx = p.ctx(day);
        if (n > 0)
          enqueue(
            p.db,
            submissions.map((s) => ({ hash: s.hash, submittedAt: new Date(s.ms), source: 'import' })),
          );
        await publishLedgers(ctx);
        model.publishDay(day, submissions);
        // Every segment named by the previous run's head is still on disk (removed at the earliest a run later).
        for (const dir of previousHeadDirs)
          expect(fs.existsSync(path.join(p.archive, dir)), `${dir} removed one run after its head`).toBe(true);
        const headBytes = fs.readFileSync(path.join(p.archive, INDEX_HEAD_PATH));
        previousHeadDirs = parseIndexHead(headBytes.toString()).segments.map(segmentPath);
        for (const e of fs.readdirSync(path.join(p.archive, 'index'), { recursive: true, withFileTypes: true })) {
          const file = path.join(e.parentPath, e.name);
          if (!e.isFile() || file === path.join(p.archive, INDEX_HEAD_PATH)) continue;
          const now: [number, string] = [fs.statSync(file).ino, crypto.hash('sha256', fs.readFileSync(file), 'hex')];
          const before = seen.get(file);
          if (before) expect(now, `${file} changed`).toEqual(before);
          else seen.set(file, now);
        }
        if (n > 0)
          checkpoints.push({
            size: model.size,
            text: fs.readFileSync(path.join(p.archive, 'checkpoint')),
            head: headBytes,
          });
      }
      // Files that still exist are the same files with the same bytes; several segments were retired and removed.
      for (const [file, before] of seen) {
        if (fs.existsSync(file))
          expect([fs.statSync(file).ino, crypto.hash('sha256', fs.readFileSync(file), 'hex')], file).toEqual(before);
      }
      expect([...seen.keys()].some((f) => !fs.existsSync(f))).toBe(true);

      // A reader that verified an older checkpoint: every hash published by then is found, at its first day.
      for (const old of checkpoints) {
        const fetcher = diskFetcher(p.archive, p.keysDir, { overrides: { '/ledgers/checkpoint': old.text } });
        const sample = model
          .hashes()
          .filter((h) => model.lookup(h, old.size).length > 0)
          .slice(0, 25);
        for (const hash of sample) {
          const result = await verifiedSearch(hash, fetcher);
          expect(result, `checkpoint ${old.size}: ${hash}`).toMatchObject({
            found: true,
            date: model.lookup(hash, old.size)[0]!.date,
            treeSize: old.size,
            inclusionVerified: true,
          });
        }
        // Hashes published after that checkpoint are not in it.
        const later = model.hashes().find((h) => model.lookup(h, old.size).length === 0);
        if (later) expect((await verifiedSearch(later, fetcher)).found).toBe(false);
        // Holding the head of that time too (a cache that never refreshes): a correct answer or "unavailable",
        // never a false "not found".
        const stale = diskFetcher(p.archive, p.keysDir, {
          overrides: { '/ledgers/checkpoint': old.text, [`/ledgers/${INDEX_HEAD_PATH}`]: old.head },
        });
        for (const hash of sample.slice(0, 5)) {
          const outcome = await verifiedSearch(hash, stale).catch((err: unknown) => err);
          if (outcome instanceof SearchUnavailableError) continue;
          expect(outcome, `stale head at ${old.size}: ${hash}`).toMatchObject({
            found: true,
            date: model.lookup(hash, old.size)[0]!.date,
          });
        }
      }
    } finally {
      p.close();
    }
  });
});
