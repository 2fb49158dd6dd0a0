// Display helpers shared by the islands: UTC dates and times, confirmations wording.
const DATE_TIME = new Intl.DateTimeFormat('en-US', {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
  second: '2-digit',
  timeZone: 'UTC',
  timeZoneName: 'short',
});
const LONG_DATE = new Intl.DateTimeFormat('en-US', { year: 'numeric', month: 'long', day: 'numeric', timeZone: 'UTC' });

/** "Nov 2, 2025, 9:14:03 AM UTC" */
export function formatDateTime(iso: string | number | Date): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : DATE_TIME.format(d);
}

/** "November 2, 2025" from "2025-11-02" */
export function formatLedgerDate(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  return Number.isNaN(d.getTime()) ? date : LONG_DATE.format(d);
}

/** Bitcoin confirmations in words: fewer than 6 shows "wait for 6+"; 6 to 99 secure; 100 or more deeply confirmed. */
export function confirmationLabel(confirmations: number): string {
  if (confirmations >= 100) return 'deeply confirmed';
  if (confirmations >= 6) return 'secure';
  return 'wait for 6+';
}

/** Shown green from 6 confirmations, yellow below. */
export const confirmationsStrong = (confirmations: number): boolean => confirmations >= 6;

/** Milliseconds until the next ledger generation, 00:01 UTC (docs/OPERATIONS.md §1). */
export function msUntilNextLedger(now: number): number {
  const d = new Date(now);
  let next = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), 0, 1, 0);
  if (next <= now) next += 86_400_000;
  return next - now;
}

/** "05:32:10" */
export function formatCountdown(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
}

export const HASH_PATTERN = /^[0-9a-fA-F]{64}$/;
