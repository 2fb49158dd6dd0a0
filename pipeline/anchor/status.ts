// The anchoring status files of the archive (docs/OPERATIONS.md "Status files"), both mutable and replaced
// atomically:
//   ots_status.json  {latest_ots_ok, last_update, queue_size} (the spec's shape; docs/FORMAT.md §7):
//                    latest_ots_ok is the last day of the longest run of published days, from the first, that
//                    are all confirmed in Bitcoin (so "latest_ots_ok >= D" means day D is confirmed);
//                    queue_size counts published days not yet confirmed.
//   block_info.json  {"ledgers": {date: {block_height, confirmations}}, "pending": {date: {state, reason,
//                    checked_at}}, "tip_height", "last_update"}: `ledgers` in the spec's shape for the
//                    confirmed days; `pending` says for every other published day why it is not confirmed yet.
//   block-info/YYYY-MM.json  {"ledgers", "pending"} of block_info.json restricted to one month: a reader of one
//                    day (the site's search) reads its month, not the whole archive's. A month's file is
//                    rewritten only when its content changes (or is missing), so a run touches the recent months.
// Only the pipeline writes them; the build (a new day is "not stamped") and the anchoring steps update them.
import fs from 'node:fs';
import path from 'node:path';
import {
  BLOCK_INFO_PATH,
  blockInfoMonthPath,
  encodeOtsStatus,
  OTS_STATUS_PATH,
  type DayRecord,
} from '../../core/archive.ts';
import { fromUtf8 } from '../../core/encoding.ts';
import { isDate } from '../../core/ledger.ts';
import { readOptional, writeMutable } from '../files.ts';

export interface LedgerBlock {
  block_height: number;
  confirmations: number;
}

export type PendingState = 'not-stamped' | 'pending' | 'unverified';

export interface PendingInfo {
  /** not-stamped: no calendar proof yet; pending: calendars have it, Bitcoin does not yet; unverified: a
   * Bitcoin attestation is there but could not be checked against a block header (or failed the check). */
  state: PendingState;
  reason: string;
  checked_at: string;
}

export interface BlockInfo {
  ledgers: Record<string, LedgerBlock>;
  pending: Record<string, PendingInfo>;
  tip_height: number | null;
  last_update: string;
}

export interface StatusUpdate {
  confirmed?: Record<string, LedgerBlock>;
  pending?: Record<string, PendingInfo>;
  tipHeight?: number;
}

export const NOT_YET_SUBMITTED = 'not yet submitted to the OpenTimestamps calendars (anchoring runs at 00:02 UTC)';

/** Reads block_info.json; a missing or unreadable file is an empty one (the next run rewrites it). */
export function readBlockInfo(archive: string): BlockInfo {
  const empty: BlockInfo = { ledgers: {}, pending: {}, tip_height: null, last_update: '' };
  const raw = readOptional(archive, BLOCK_INFO_PATH);
  if (raw === undefined) return empty;
  let parsed: Partial<BlockInfo>;
  try {
    parsed = JSON.parse(fromUtf8(raw, BLOCK_INFO_PATH)) as Partial<BlockInfo>;
  } catch {
    return empty;
  }
  const ledgers: Record<string, LedgerBlock> = {};
  for (const [date, v] of Object.entries(parsed.ledgers ?? {})) {
    if (isDate(date) && Number.isSafeInteger(v?.block_height) && Number.isSafeInteger(v?.confirmations)) {
      ledgers[date] = { block_height: v.block_height, confirmations: v.confirmations };
    }
  }
  const pending: Record<string, PendingInfo> = {};
  for (const [date, v] of Object.entries(parsed.pending ?? {})) {
    if (isDate(date) && typeof v?.reason === 'string' && ['not-stamped', 'pending', 'unverified'].includes(v.state)) {
      pending[date] = { state: v.state, reason: v.reason, checked_at: String(v.checked_at ?? '') };
    }
  }
  const tip = Number.isSafeInteger(parsed.tip_height) ? (parsed.tip_height as number) : null;
  return { ledgers, pending, tip_height: tip, last_update: String(parsed.last_update ?? '') };
}

export function encodeBlockInfo(info: BlockInfo): string {
  const sorted = <T>(o: Record<string, T>): Record<string, T> =>
    Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
  return `${JSON.stringify({ ledgers: sorted(info.ledgers), pending: sorted(info.pending), tip_height: info.tip_height, last_update: info.last_update }, null, 2)}\n`;
}

/**
 * Applies `update` to the stored status and rewrites both files for the published `days`. Call it while
 * holding the archive lock. Returns the new block information.
 */
export function writeAnchorStatus(
  archive: string,
  days: readonly DayRecord[],
  now: Date,
  update: StatusUpdate = {},
): BlockInfo {
  const stored = readBlockInfo(archive);
  const time = now.toISOString();
  const ledgers: Record<string, LedgerBlock> = {};
  const pending: Record<string, PendingInfo> = {};
  for (const { date } of days) {
    if (update.pending?.[date]) pending[date] = update.pending[date]!;
    else if (update.confirmed?.[date]) ledgers[date] = update.confirmed[date]!;
    else if (stored.ledgers[date]) ledgers[date] = stored.ledgers[date]!;
    else pending[date] = stored.pending[date] ?? { state: 'not-stamped', reason: NOT_YET_SUBMITTED, checked_at: time };
  }
  const info: BlockInfo = { ledgers, pending, tip_height: update.tipHeight ?? stored.tip_height, last_update: time };
  let latest = '';
  for (const { date } of days) {
    if (!ledgers[date]) break;
    latest = date;
  }
  const queue = days.filter((d) => !ledgers[d.date]).length;
  writeMutable(archive, BLOCK_INFO_PATH, encodeBlockInfo(info));
  writeMonths(archive, days, stored, info);
  writeMutable(
    archive,
    OTS_STATUS_PATH,
    encodeOtsStatus({ latest_ots_ok: latest, last_update: time, queue_size: queue }),
  );
  return info;
}

/** One month of block information, as block-info/YYYY-MM.json holds it. */
export function encodeBlockInfoMonth(info: Pick<BlockInfo, 'ledgers' | 'pending'>, month: string): string {
  const of = <T>(o: Record<string, T>): Record<string, T> =>
    Object.fromEntries(
      Object.entries(o)
        .filter(([d]) => d.startsWith(`${month}-`))
        .sort(([a], [b]) => (a < b ? -1 : 1)),
    );
  return `${JSON.stringify({ ledgers: of(info.ledgers), pending: of(info.pending) }, null, 2)}\n`;
}

/** Rewrites the month files whose content changed from `before` to `after`, and any that is missing. */
function writeMonths(archive: string, days: readonly DayRecord[], before: BlockInfo, after: BlockInfo): void {
  const months = [...new Set(days.map((d) => d.date.slice(0, 7)))];
  for (const month of months) {
    const text = encodeBlockInfoMonth(after, month);
    const rel = blockInfoMonthPath(month);
    if (text === encodeBlockInfoMonth(before, month) && fs.existsSync(path.join(archive, rel))) continue;
    writeMutable(archive, rel, text);
  }
}
