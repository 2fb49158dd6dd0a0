// block-info/YYYY-MM.json (pipeline/anchor/status.ts): each month's share of block_info.json, written when its
// content changes or is missing, left alone otherwise (a run touches the recent months, not the archive's age);
// served under /ledgers/ with no-cache (ingest/published-archive.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { blockInfoMonthPath, type DayRecord } from '../core/archive.ts';
import { archiveCacheControl } from '../core/archive.ts';
import { archivePath } from '../ingest/published-archive.ts';
import { readBlockInfo, writeAnchorStatus } from './anchor/status.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-block-months-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const day = (date: string, i: number): DayRecord => ({
  date,
  firstIndex: i,
  entryCount: 1,
  treeSize: i + 1,
  root: '0'.repeat(64),
  sha256: '1'.repeat(64),
});
const days = ['2025-09-30', '2025-10-01', '2025-10-31', '2025-11-01', '2025-11-02'].map(day);
const month = (m: string) =>
  JSON.parse(fs.readFileSync(path.join(dir, blockInfoMonthPath(m)), 'utf8')) as {
    ledgers: Record<string, unknown>;
    pending: Record<string, unknown>;
  };
const inode = (m: string) => fs.statSync(path.join(dir, blockInfoMonthPath(m))).ino;

describe('block-info month files', () => {
  test("each month holds its days' entries of block_info.json, and nothing else", () => {
    writeAnchorStatus(dir, days, new Date('2025-11-03T00:02:00.000Z'), {
      confirmed: {
        '2025-09-30': { block_height: 900_000, confirmations: 10 },
        '2025-10-01': { block_height: 900_100, confirmations: 5 },
      },
    });
    expect(month('2025-09')).toEqual({
      ledgers: { '2025-09-30': { block_height: 900_000, confirmations: 10 } },
      pending: {},
    });
    expect(Object.keys(month('2025-10').ledgers)).toEqual(['2025-10-01']);
    expect(Object.keys(month('2025-10').pending)).toEqual(['2025-10-31']);
    expect(Object.keys(month('2025-11').pending)).toEqual(['2025-11-01', '2025-11-02']);
    const whole = readBlockInfo(dir);
    const merged = { ...month('2025-09').ledgers, ...month('2025-10').ledgers, ...month('2025-11').ledgers };
    expect(merged).toEqual(whole.ledgers);
  });

  test('a run that changes one month rewrites that month only; a missing file is written again', () => {
    const before = ['2025-09', '2025-10', '2025-11'].map(inode);
    writeAnchorStatus(dir, days, new Date('2025-11-03T01:00:00.000Z'), {
      confirmed: { '2025-11-01': { block_height: 901_000, confirmations: 1 } },
    });
    expect([inode('2025-09'), inode('2025-10')]).toEqual([before[0], before[1]]);
    expect(inode('2025-11')).not.toBe(before[2]);
    expect(month('2025-11').ledgers).toEqual({ '2025-11-01': { block_height: 901_000, confirmations: 1 } });
    fs.rmSync(path.join(dir, blockInfoMonthPath('2025-09')));
    writeAnchorStatus(dir, days, new Date('2025-11-03T02:00:00.000Z'));
    expect(Object.keys(month('2025-09').ledgers)).toEqual(['2025-09-30']);
    expect(inode('2025-10')).toBe(before[1]);
  });

  test('served under /ledgers/ with no-cache; other names under block-info/ are not archive files', () => {
    expect(archivePath('block-info/2025-11.json')).toBe('block-info/2025-11.json');
    expect(archiveCacheControl('block-info/2025-11.json')).toBe(archiveCacheControl('block_info.json'));
    for (const bad of ['block-info/2025-13.json', 'block-info/2025-11.txt', 'block-info/x.json'])
      expect(archivePath(bad)).toBeNull();
  });
});
