// Which archive files are published. Archive paths must be names the archive format defines (core/archive.ts,
// core/tiles.ts, core/index-segments.ts); nothing else under the archive folder is reachable.
//
// Nothing of the archive is served before its commit point (docs/FORMAT.md §10): a build writes a day's files
// before days.json names the day, so a day file is served only for a day days.json names, a tile or entry
// bundle only when it lies within days.json's tree size, and an index segment file only when its leaves are; and
// `checkpoint` is the last published day's checkpoint (`<date>.checkpoint`, the same bytes once a build has
// finished), so a build killed between days.json and the latest checkpoint never leaves it missing or behind.
import fs from 'node:fs';
import path from 'node:path';
import {
  BLOCK_INFO_PATH,
  monthOfBlockInfo,
  CHECKPOINT_PATH,
  dateOfDayFile,
  dayCheckpointPath,
  DAYS_PATH,
  OTS_STATUS_PATH,
  parseDays,
  VERIFIER_ARCHIVE_PATH,
} from '../core/archive.ts';
import { isDate } from '../core/ledger.ts';
import { INDEX_HEAD_PATH, parseSegmentPath } from '../core/index-segments.ts';
import { parseTilePath, TILE_WIDTH } from '../core/tiles.ts';
import { ClientError } from './errors.ts';

const NAMED_ARCHIVE_FILES = new Set([
  CHECKPOINT_PATH,
  DAYS_PATH,
  INDEX_HEAD_PATH,
  OTS_STATUS_PATH,
  BLOCK_INFO_PATH,
  VERIFIER_ARCHIVE_PATH,
]);

/** The archive-relative path of a `/ledgers/…` request, or a ClientError for a path trick; null = no such file name. */
export function archivePath(raw: string): string | null {
  if (!/^[A-Za-z0-9._\/-]*$/.test(raw))
    throw new ClientError(
      400,
      'Archive paths contain only letters, digits, ".", "_", "-" and "/" (no percent-encoding)',
    );
  const segments = raw.split('/');
  if (segments.some((s) => s === '..' || s === '.' || s === ''))
    throw new ClientError(400, 'Archive paths must not contain ".", ".." or empty segments');
  if (NAMED_ARCHIVE_FILES.has(raw)) return raw;
  if (dateOfDayFile(raw) !== null) return raw;
  if (monthOfBlockInfo(raw) !== null) return raw;
  const ots = /^(\d{4}-\d{2}-\d{2})\.json\.ots$/.exec(raw);
  if (ots && isDate(ots[1]!)) return raw;
  if (parseSegmentPath(raw) !== null) return raw;
  if (raw.startsWith('tile/')) {
    try {
      parseTilePath(raw);
      return raw;
    } catch {
      return null;
    }
  }
  return null;
}

/** What days.json commits to: the published days and the tree size after the last one. */
export interface Committed {
  dates: ReadonlySet<string>;
  last: string | null;
  treeSize: number;
}

const NOTHING_COMMITTED: Committed = { dates: new Set(), last: null, treeSize: 0 };

/**
 * Whether the archive file `rel` (a name archivePath accepted) is published by `committed`: day files of
 * published days, tiles and entry bundles within its tree size, index segments within it, and the named
 * files (whose own writers replace them only after the commit point).
 */
export function isCommitted(rel: string, committed: Committed): boolean {
  const date = dateOfDayFile(rel) ?? /^(\d{4}-\d{2}-\d{2})\.json\.ots$/.exec(rel)?.[1];
  if (date !== undefined) return committed.dates.has(date);
  const segment = parseSegmentPath(rel);
  if (segment !== null) return segment.to <= committed.treeSize;
  if (rel.startsWith('tile/')) {
    const tile = parseTilePath(rel);
    const level = tile.kind === 'entries' ? 0 : tile.level;
    // The leaves a tile covers end at (index · 256 + width) · 256^level.
    return (tile.index * TILE_WIDTH + tile.width) * TILE_WIDTH ** level <= committed.treeSize;
  }
  return true;
}

/** The last answer of latestCheckpointFile, by the date and `checkpoint`'s inode, size and time. */
let latestCheckpointSeen = { key: '', file: '' };

/**
 * `checkpoint` when it is the day's checkpoint with witness lines after it, else `<date>.checkpoint`. The two
 * files are compared only when `checkpoint` changed (it is replaced by rename) and is the longer one.
 */
export async function latestCheckpointFile(archive: string, date: string): Promise<string> {
  const day = dayCheckpointPath(date);
  const [latestStat, ownStat] = await Promise.all([
    fs.promises.stat(path.join(archive, CHECKPOINT_PATH)).catch(() => null),
    fs.promises.stat(path.join(archive, day)).catch(() => null),
  ]);
  if (latestStat === null || ownStat === null || latestStat.size <= ownStat.size) return day;
  const key = `${archive}:${date}:${latestStat.ino}:${latestStat.size}:${latestStat.mtimeMs}`;
  if (latestCheckpointSeen.key === key) return latestCheckpointSeen.file;
  const [latest, own] = await Promise.all([
    fs.promises.readFile(path.join(archive, CHECKPOINT_PATH)),
    fs.promises.readFile(path.join(archive, day)),
  ]);
  const file = latest.subarray(0, own.length).equals(own) ? CHECKPOINT_PATH : day;
  latestCheckpointSeen = { key, file };
  return file;
}

/** days.json read again only when it changed (it is replaced by rename: a new inode each time). */
export class CommittedView {
  private key = '';
  private value: Committed = NOTHING_COMMITTED;
  private readonly archive: string;

  constructor(archive: string) {
    this.archive = archive;
  }

  async get(): Promise<Committed> {
    const file = path.join(this.archive, DAYS_PATH);
    const stat = await fs.promises.stat(file).catch(() => null);
    const key = stat === null ? '-' : `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    if (key === this.key) return this.value;
    let value = NOTHING_COMMITTED;
    if (stat !== null) {
      try {
        const { days } = parseDays(await fs.promises.readFile(file, 'utf8'));
        const last = days.at(-1);
        value = { dates: new Set(days.map((d) => d.date)), last: last?.date ?? null, treeSize: last?.treeSize ?? 0 };
      } catch {
        value = NOTHING_COMMITTED; // unreadable: nothing is served as published
      }
    }
    this.key = key;
    this.value = value;
    return value;
  }
}
