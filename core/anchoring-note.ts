// Where a day's Bitcoin anchoring stands, worded once for every surface that shows it (the site's /ledgers cards
// and /verify result; the server's certificates through ingest/archive-view.ts). The block information's `pending` entry of a day (block_info.json or block-info/YYYY-MM.json:
// {state, reason, checked_at}) says why the day is not anchored yet; this module decides whether that is the
// normal wait, a delay, or a day the anchoring run has not reached:
//   - failed: the calendars refused the day ("stamp failed: …", state not-stamped), a retry was scheduled
//     ("…; next attempt at <time>"), or a Bitcoin attestation could not be checked (state unverified);
//   - late: the last check found the day still waiting more than 24 hours after its ledger was published
//     (00:01 UTC the next day);
//   - not reached: the day was never submitted to the calendars ("not yet submitted …") and the anchoring status
//     was written more than 24 hours after its publication (after downtime the run stamps the newest days first,
//     a bounded number a run).
// The check's own times are used (checked_at, ots_status.json's last_update), never this browser's clock.
// A person reads one plain sentence ("Bitcoin anchoring is delayed; next try 12:02 UTC"); the pipeline's own
// words (which calendars, which error) are the details, shown behind a disclosure. Never "anchored" or "done"
// before the block information says so.

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
/** block_info.json's reason for a day never submitted to the calendars (pipeline/anchor/status.ts). */
const NOT_YET_SUBMITTED = /^not yet submitted to the OpenTimestamps calendars/;

/** "12:02 UTC" on the day of `reference` (ISO), else "2025-11-04 13:00 UTC". */
function utcTime(iso: string, reference: string | undefined): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const text = new Date(t).toISOString();
  const sameDay = reference !== undefined && reference.slice(0, 10) === text.slice(0, 10);
  return `${sameDay ? text.slice(11, 16) : text.slice(0, 16).replace('T', ' ')} UTC`;
}

/** Why a day never submitted to the calendars a day after its publication is not anchored, and the sentence. */
export const NOT_REACHED_REASON = 'the anchoring run has not reached this day (it stamps the newest days first)';
export const NOT_REACHED_SENTENCE = `Not anchored yet: ${NOT_REACHED_REASON}`;

/** What a person reads about a day that is not anchored when it should be: one sentence, and the details. */
export interface AnchoringNote {
  kind: 'delayed' | 'not-reached';
  /** One plain sentence, without a final full stop. */
  sentence: string;
  /** The pipeline's own words (calendars, errors), for a disclosure. */
  details: string;
}

/** The note for day `date`, or null when its `pending` entry describes the normal wait (or there is none).
 *  `statusWrittenAt` is ots_status.json's last_update: when the anchoring status was last written. */
export function anchoringNote(
  date: string,
  pending: PendingAnchor | undefined | null,
  statusWrittenAt?: string | null,
): AnchoringNote | null {
  if (!pending || typeof pending.reason !== 'string' || pending.reason.trim() === '') return null;
  const next = NEXT_ATTEMPT.exec(pending.reason);
  const reason = (next ? pending.reason.slice(0, next.index) : pending.reason).trim().replace(/[.;,]+$/, '');
  const checked = Date.parse(pending.checked_at ?? '');
  const written = Date.parse(statusWrittenAt ?? '');
  const lateAt = (t: number) => !Number.isNaN(t) && t - publicationTime(date) > LATE_AFTER_MS;
  if (pending.state === 'not-stamped' && NOT_YET_SUBMITTED.test(reason) && next === null) {
    if (!lateAt(checked) && !lateAt(written)) return null;
    return { kind: 'not-reached', sentence: NOT_REACHED_SENTENCE, details: reason };
  }
  const failed = pending.state === 'unverified' || /^stamp failed\b/.test(reason) || next !== null;
  if (!failed && !lateAt(checked)) return null;
  const when = next ? `next try ${utcTime(next[1]!, pending.checked_at)}` : 'it is retried every hour';
  return { kind: 'delayed', sentence: `Bitcoin anchoring is delayed; ${when}`, details: reason };
}
