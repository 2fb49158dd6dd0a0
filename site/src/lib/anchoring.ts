// Where a day's Bitcoin anchoring stands, worded once for every surface that shows it (the /ledgers cards, the
// /verify result). The block information's `pending` entry of a day (block_info.json or block-info/YYYY-MM.json:
// {state, reason, checked_at}) says why the day is not anchored yet; this module decides whether that is the
// normal wait or a delay:
//   - failed: the calendars refused the day ("stamp failed: …", state not-stamped), a retry was scheduled
//     ("…; next attempt at <time>"), or a Bitcoin attestation could not be checked (state unverified);
//   - late: the last check found the day still waiting more than 24 hours after its ledger was published
//     (00:01 UTC the next day). The check's own time is used, never this browser's clock.
// A delayed day reads "Anchoring delayed: <reason>, retrying hourly" (the schedule looks at every unanchored day
// each hour), or "…, retrying at <time>" when the pipeline named its next attempt (a day that failed again waits
// longer: 1 h, 2 h, 4 h … up to 24 h). Never "anchored" or "done" before the block information says so.

export interface PendingAnchor {
  state?: string;
  reason: string;
  checked_at?: string;
}

const DAY_MS = 86_400_000;
/** The wait after publication past which a day still not anchored is "delayed". */
export const LATE_AFTER_MS = DAY_MS;

/** 00:01 UTC the day after `date`: when its ledger is published. */
export function publicationTime(date: string): number {
  return Date.parse(`${date}T00:01:00.000Z`) + DAY_MS;
}

const NEXT_ATTEMPT = /;\s*next attempt at (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}[^\s;]*)\s*$/;

/** "2025-11-04 13:00 UTC" */
function utcMinute(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : `${new Date(t).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** The "Anchoring delayed: …" sentence for day `date`, or null when its `pending` entry describes the normal
 *  wait (or there is none). */
export function anchoringDelay(date: string, pending: PendingAnchor | undefined | null): string | null {
  if (!pending || typeof pending.reason !== 'string' || pending.reason.trim() === '') return null;
  const next = NEXT_ATTEMPT.exec(pending.reason);
  const reason = (next ? pending.reason.slice(0, next.index) : pending.reason).trim().replace(/[.;,]+$/, '');
  const checked = Date.parse(pending.checked_at ?? '');
  const failed = pending.state === 'unverified' || /^stamp failed\b/.test(reason) || next !== null;
  const late = !Number.isNaN(checked) && checked - publicationTime(date) > LATE_AFTER_MS;
  if (!failed && !late) return null;
  return `Anchoring delayed: ${reason}, retrying ${next ? `at ${utcMinute(next[1]!)}` : 'hourly'}`;
}
