// verifyArchive from a verified base (VerifyOptions.from, what a mirror's pull passes): an archive of six days
// whose sizes cross tile and bundle boundaries and whose index segments are merged across the base, checked
// whole and from the state after its third day. From the base the answer is the same and fewer files are read;
// a changed tile of a new day, or a changed merged segment that covers days of the base, is still caught and
// named; a base that is not what days.json begins with is refused.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAYS_PATH, parseDays, type DayRecord } from '../core/archive.ts';
import { INDEX_HEAD_PATH, parseIndexHead, segmentPath } from '../core/index-segments.ts';
import { tilePath } from '../core/tiles.ts';
import { loadConfig, type Config } from '../runtime/config.ts';
import { initKeys, loadPublicKeys, loadSigningKeys } from '../runtime/keys.ts';
import { openDatabase } from '../store/sqlite/db.ts';
import { enqueue } from '../store/sqlite/queue.ts';
import { openSqliteStore } from '../store/sqlite/engine.ts';
import { folderReader } from './archive-reader.ts';
import { publishLedgers } from './build.ts';
import { verifyArchive, type VerifiedBase } from './verify.ts';

const DAY_MS = 86_400_000;
const FIRST_DAY = Date.parse('2025-11-02T00:00:00.000Z');
/** Entries per day: the base (3 days) ends inside the second tile (width 60 of 256), the archive in the fourth. */
const SIZES = [300, 40, 36, 200, 90, 120];
const BASE_DAYS = 3;

let dir: string;
let config: Config;
let base: VerifiedBase;

const date = (day: number) => new Date(FIRST_DAY + day * DAY_MS).toISOString().slice(0, 10);
const keys = () => loadPublicKeys(config.keys);
const read = (archive: string, rel: string) => fs.readFileSync(path.join(archive, rel), 'utf8');

/** A copy of the archive with one byte of `rel` changed. */
function tampered(rel: string): string {
  const copy = path.join(dir, `copy-${crypto.randomUUID()}`);
  fs.cpSync(config.archive, copy, { recursive: true });
  const file = path.join(copy, rel);
  const bytes = fs.readFileSync(file);
  bytes[bytes.length >> 1]! ^= 0x01;
  fs.writeFileSync(file, bytes);
  return copy;
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-verify-from-'));
  config = loadConfig({
    TIMESEAL_DB: path.join(dir, 'data/timeseal.db'),
    TIMESEAL_ARCHIVE: path.join(dir, 'ledgers'),
    TIMESEAL_KEYS: path.join(dir, 'keys'),
    TIMESEAL_PRIVATE_KEYS: path.join(dir, 'data/private-keys'),
    TIMESEAL_ORIGIN: 'https://timeseal.test',
  });
  initKeys({ keys: config.keys, privateKeys: config.privateKeys });
  const db = openDatabase(config.db);
  try {
    const store = openSqliteStore(config.db, { db });
    const signing = loadSigningKeys({ keys: config.keys, privateKeys: config.privateKeys });
    for (const [day, size] of SIZES.entries()) {
      const hashes = Array.from({ length: size }, (_, i) =>
        crypto.createHash('sha256').update(`${day}-${i}`).digest('hex'),
      );
      enqueue(
        db,
        hashes.map((hash, i) => ({
          hash,
          submittedAt: new Date(FIRST_DAY + day * DAY_MS + i * 1000),
          source: 'import' as const,
        })),
      );
      await publishLedgers(
        { config, store, keys: signing, clock: () => new Date(FIRST_DAY + (day + 1) * DAY_MS + 60_000) },
        { date: date(day) },
      );
      if (day === BASE_DAYS - 1) {
        base = {
          days: parseDays(read(config.archive, DAYS_PATH)).days,
          segments: new Set(parseIndexHead(read(config.archive, INDEX_HEAD_PATH)).segments.map(segmentPath)),
          recheckOts: new Set(),
        };
      }
    }
  } finally {
    db.close();
  }
}, 120_000);

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('verifyArchive from a verified base', () => {
  it('gives the whole check’s answer, reading only what came after the base', async () => {
    const whole = await verifyArchive(folderReader(config.archive), keys());
    const from = await verifyArchive(folderReader(config.archive), keys(), { from: base });
    expect(whole.problems).toEqual([]);
    expect(from.problems).toEqual([]);
    expect(from).toMatchObject({ ok: true, days: SIZES.length, treeSize: whole.treeSize, root: whole.root });
    expect(whole.treeSize).toBe(SIZES.reduce((a, b) => a + b));
    expect(from.filesChecked).toBeLessThan(whole.filesChecked);
    // A merged segment covers days of the base: its records were read again, and it was checked.
    const head = parseIndexHead(read(config.archive, INDEX_HEAD_PATH));
    expect(head.segments.some((s) => !base.segments.has(segmentPath(s)) && s.from < base.days.at(-1)!.treeSize)).toBe(
      true,
    );
  });

  it('names a changed tile of a new day, and a changed merged segment that covers days of the base', async () => {
    const size = SIZES.reduce((a, b) => a + b);
    const tile = tilePath(0, 3, size % 256);
    const tileCopy = tampered(tile);
    const tileReport = await verifyArchive(folderReader(tileCopy), keys(), { from: base });
    expect(tileReport.problems).toContain(`${tile}: differs from the tile recomputed from the ledgers`);

    const head = parseIndexHead(read(config.archive, INDEX_HEAD_PATH));
    const merged = segmentPath(
      head.segments.find((s) => !base.segments.has(segmentPath(s)) && s.from < base.days.at(-1)!.treeSize)!,
    );
    const segmentReport = await verifyArchive(folderReader(tampered(merged)), keys(), { from: base });
    expect(segmentReport.problems).toEqual([`${merged}: index segment differs from the ledgers`]);
  });

  it('refuses a base that is not what days.json begins with', async () => {
    const days: DayRecord[] = base.days.map((d) => ({ ...d }));
    days[1]!.sha256 = '0'.repeat(64);
    const report = await verifyArchive(folderReader(config.archive), keys(), { from: { ...base, days } });
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([`${DAYS_PATH}: day ${date(1)} is not the one verified before`]);
  });
});
