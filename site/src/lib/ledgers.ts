// The data of the /ledgers page (site/src/islands/LedgersBrowser.tsx), apart from its drawing: the month's
// ledgers (GET /api/ledgers.php, or the static archive's days.json and ots_status.json when the API cannot be
// read), the year's calendar (GET /api/ledgers-calendar.php), the month's block information, the cards enriched
// with it and with each day's signature check, and the heat map's squares (a day's shade, label and place).
// Everything but the three readers is a pure function of its arguments (test/site/ledgers-data.test.ts).
import {
  BLOCK_INFO_PATH,
  blockInfoMonthPath,
  DAYS_PATH,
  ledgerOtsPath,
  ledgerPath,
  OTS_STATUS_PATH,
} from '../../../core/archive-paths.ts';
import type { PendingAnchor } from '../../../core/anchoring-note.ts';
import { getJson } from './api.ts';
import { archiveUrl } from './archive-url.ts';
import { formatLedgerDate } from './format.ts';
import type { OtsStatusFile } from './status.ts';

export interface LedgerItem {
  date: string;
  jsonUrl: string;
  otsUrl: string;
  otsStatus: 'verified' | 'pending';
  signatureVerified: boolean;
  entryCount?: number;
  blockHeight?: number;
  confirmations?: number;
  quantumShield?: boolean;
  dualSignature?: boolean;
  /** From the block information's `pending` (beyond the spec): why the day is not confirmed yet; state
   *  'not-stamped' means its `.json.ots` does not exist yet. */
  anchoring?: PendingAnchor;
  /** The ledger file's RFC 3161 tokens, checked by the server (GET /api/ledgers.php; beyond the spec). */
  rfc3161?: { url: string; genTime: string; tsa: string }[];
}
export interface LedgersPage {
  ledgers: LedgerItem[];
  otsStatus: OtsStatusFile | null;
}
export interface CalendarDay {
  date: string;
  entryCount: number;
  anchored: boolean;
}
export interface CalendarYear {
  year: string;
  days: CalendarDay[];
  first: string | null;
  last: string | null;
}
export type BlockInfo = {
  ledgers?: Record<string, { block_height?: number; confirmations?: number }>;
  pending?: Record<string, Partial<PendingAnchor>>;
};

/** Days a page asks for: a month at most. */
export const MONTH_DAYS = 31;
export const DAY_MS = 86_400_000;
export const MONTH_RE = /^\d{4}-(0[1-9]|1[0-2])$/;
export const DATE_RE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

export const monthOf = (date: string): string => date.slice(0, 7);
export function addMonths(month: string, n: number): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(y, m - 1 + n, 1)).toISOString().slice(0, 7);
}
export const isoDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

// The static archive, read only when the API cannot be (a mirror of /ledgers/ without the server).
let archive: Promise<{ days: { date: string; entryCount: number }[]; ots: OtsStatusFile | null }> | null = null;
function fromArchive() {
  archive ??= Promise.all([
    getJson<{ days: { date: string; entry_count?: number }[] }>(archiveUrl(DAYS_PATH)),
    getJson<OtsStatusFile>(archiveUrl(OTS_STATUS_PATH)).catch(() => null),
  ]).then(([days, ots]) => ({
    days: days.days.map((d) => ({ date: d.date, entryCount: Number(d.entry_count ?? 0) })),
    ots,
  }));
  archive.catch(() => (archive = null));
  return archive;
}
const anchoredBy = (ots: OtsStatusFile | null, date: string): boolean =>
  !!ots?.latest_ots_ok && ots.latest_ots_ok >= date;

/** The days of `month` (newest first), or the newest days when `month` is null. */
export async function monthPage(month: string | null): Promise<LedgersPage> {
  const before = month === null ? null : `${addMonths(month, 1)}-01`;
  try {
    return await getJson<LedgersPage>(`/api/ledgers.php?${before ? `before=${before}&` : ''}limit=${MONTH_DAYS}`);
  } catch (err) {
    console.warn('ledgers API unavailable, reading the archive', err);
    const { days, ots } = await fromArchive();
    return pageFromArchive(days, ots, before);
  }
}

/** The page the API would give, from the static archive's days (oldest first) and ots_status.json: the last
 *  MONTH_DAYS days before `before` (all when null), newest first, their signatures not checked here. */
export function pageFromArchive(
  days: { date: string; entryCount: number }[],
  ots: OtsStatusFile | null,
  before: string | null,
): LedgersPage {
  const older = before === null ? days : days.filter((d) => d.date < before);
  return {
    otsStatus: ots,
    ledgers: older
      .slice(-MONTH_DAYS)
      .reverse()
      .map((d): LedgerItem => ({
        date: d.date,
        jsonUrl: archiveUrl(ledgerPath(d.date)),
        otsUrl: archiveUrl(ledgerOtsPath(d.date)),
        otsStatus: anchoredBy(ots, d.date) ? 'verified' : 'pending',
        signatureVerified: false,
        entryCount: d.entryCount,
      })),
  };
}

export async function yearCalendar(year: string): Promise<CalendarYear> {
  try {
    return await getJson<CalendarYear>(`/api/ledgers-calendar.php?year=${year}`);
  } catch {
    const { days, ots } = await fromArchive();
    return calendarFromArchive(year, days, ots);
  }
}

/** The calendar the API would give for `year`, from the static archive's days (oldest first). */
export function calendarFromArchive(
  year: string,
  days: { date: string; entryCount: number }[],
  ots: OtsStatusFile | null,
): CalendarYear {
  return {
    year,
    days: days.filter((d) => d.date.startsWith(`${year}-`)).map((d) => ({ ...d, anchored: anchoredBy(ots, d.date) })),
    first: days[0]?.date ?? null,
    last: days.at(-1)?.date ?? null,
  };
}

/** The month's block information; the whole block_info.json only when the archive has no month files. */
export async function monthBlockInfo(month: string): Promise<BlockInfo> {
  try {
    const res = await fetch(archiveUrl(blockInfoMonthPath(month)), { credentials: 'include' });
    if (res.ok) return (await res.json()) as BlockInfo;
    if (res.status === 404) return await getJson<BlockInfo>(archiveUrl(BLOCK_INFO_PATH));
  } catch (err) {
    console.warn('block information', err);
  }
  return {};
}

/** The day's OTS file exists once it is anchored or the calendars hold it (state pending / unverified);
 *  before that (not stamped, or not known) there is nothing to download. */
export function otsFileExists(item: LedgerItem): boolean {
  return item.otsStatus === 'verified' || item.anchoring?.state === 'pending' || item.anchoring?.state === 'unverified';
}

/** Signature checks of one day (GET /api/verify-quantum.php), or null when it could not be asked. */
export type QuantumCheck = { quantum_shield?: boolean; dual_signature?: boolean } | null;

/** The month's cards with what the block information says of each day (block, confirmations, why it is not
 *  anchored yet) and each day's signature check (`quantum[i]` for `items[i]`). */
export function withBlockInfo(items: LedgerItem[], blocks: BlockInfo, quantum: QuantumCheck[]): LedgerItem[] {
  return items.map((l, i) => {
    const b = blocks.ledgers?.[l.date];
    const q = quantum[i];
    const p = blocks.pending?.[l.date];
    return {
      ...l,
      ...(typeof p?.reason === 'string'
        ? {
            anchoring: {
              reason: p.reason,
              ...(typeof p.state === 'string' ? { state: p.state } : {}),
              ...(typeof p.checked_at === 'string' ? { checked_at: p.checked_at } : {}),
            },
          }
        : {}),
      ...(typeof b?.block_height === 'number' ? { blockHeight: b.block_height } : {}),
      ...(typeof b?.confirmations === 'number' ? { confirmations: b.confirmations } : {}),
      ...(q ? { quantumShield: !!q.quantum_shield, dualSignature: !!q.dual_signature } : {}),
    };
  });
}

/** One square of the heat map: its day, shade (0 no ledger, 1 to 4 by entry count), label, place in the grid. */
export interface HeatSquare {
  date: string;
  day: CalendarDay | undefined;
  level: number;
  label: string;
  ring: 'highlight' | 'month' | null;
  column: number;
  row: number;
}

/** The heat map of `calendar.year`: a column a week (rows Sunday to Saturday), a square a day, shaded on a log
 *  scale against the year's busiest day; the shown month and the highlighted day ringed. */
export function heatMapOf(calendar: CalendarYear, month: string, highlight: string | null) {
  const year = Number(calendar.year);
  const start = Date.UTC(year, 0, 1);
  const count = Math.round((Date.UTC(year + 1, 0, 1) - start) / DAY_MS);
  const offset = new Date(start).getUTCDay();
  const byDate = new Map(calendar.days.map((d) => [d.date, d]));
  const busiest = Math.max(1, ...calendar.days.map((d) => d.entryCount));
  const squares = Array.from({ length: count }, (_, i): HeatSquare => {
    const date = isoDate(start + i * DAY_MS);
    const day = byDate.get(date);
    const level = day ? 1 + Math.min(3, Math.floor((3 * Math.log1p(day.entryCount)) / Math.log1p(busiest) + 1e-9)) : 0;
    const label = day
      ? `${formatLedgerDate(date)}: ${day.entryCount.toLocaleString('en-US')} ${day.entryCount === 1 ? 'entry' : 'entries'}, ${day.anchored ? 'anchored in Bitcoin' : 'awaiting Bitcoin anchoring'}`
      : `${formatLedgerDate(date)}: no ledger`;
    const ring = date === highlight ? 'highlight' : date.startsWith(month) ? 'month' : null;
    return { date, day, level, label, ring, column: Math.floor((i + offset) / 7) + 2, row: ((i + offset) % 7) + 2 };
  });
  /** The grid column of each month's first day, for its name above the squares. */
  const monthColumns = Array.from(
    { length: 12 },
    (_, m) => Math.floor((Math.round((Date.UTC(year, m, 1) - start) / DAY_MS) + offset) / 7) + 2,
  );
  return {
    year,
    start,
    count,
    weeks: Math.ceil((count + offset) / 7),
    squares,
    monthColumns,
    total: calendar.days.reduce((n, d) => n + d.entryCount, 0),
    pending: calendar.days.filter((d) => !d.anchored).length,
  };
}
