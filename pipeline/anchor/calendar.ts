// An OpenTimestamps calendar client speaking the protocol of opentimestamps-server (otsserver/rpc.py):
//   POST <calendar>/digest with the raw digest (≤ 64 bytes) → 200 and a bare timestamp rooted at the digest;
//   GET  <calendar>/timestamp/<hex of a pending commitment> → 200 and a bare timestamp rooted at it once
//        complete, 404 with a short text while pending (or unknown).
// Answers are parsed with core/ots under the reference's limits; the reference client reads at most 10,000
// bytes of an answer (opentimestamps/calendar.py), and so does this one.
import { toHex } from '../../core/encoding.ts';
import { TimesealError } from '../../core/errors.ts';
import { parseTimestamp, walkAttestations, type Timestamp } from '../../core/ots.ts';
import { bodyExcerpt, boundedFetch } from '../http.ts';

export const MAX_CALENDAR_ANSWER = 10_000;
/** otsserver/rpc.py: a submitted digest is at most 64 bytes. */
export const MAX_DIGEST_LENGTH = 64;
const HEADERS = { Accept: 'application/vnd.opentimestamps.v1', 'User-Agent': 'timeseal' };

/** A calendar answered, but not with a usable timestamp (HTTP error status or malformed bytes). */
export class CalendarError extends TimesealError {
  constructor(message: string, options?: ErrorOptions) {
    super('io', message, options);
    this.name = 'CalendarError';
  }
}

export type UpgradeAnswer = { kind: 'pending'; text: string } | { kind: 'upgraded'; timestamp: Timestamp };

/** Submits `digest`; returns the calendar's timestamp for it (holding at least one attestation). */
export async function submitDigest(calendar: string, digest: Uint8Array, timeoutMs: number): Promise<Timestamp> {
  if (digest.length < 1 || digest.length > MAX_DIGEST_LENGTH)
    throw new CalendarError(`digest must be 1..${MAX_DIGEST_LENGTH} bytes`);
  const res = await boundedFetch(`${calendar}/digest`, {
    method: 'POST',
    headers: { ...HEADERS, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: digest,
    timeoutMs,
    maxBytes: MAX_CALENDAR_ANSWER,
  });
  if (res.status !== 200) throw new CalendarError(`${calendar}: HTTP ${res.status} ${bodyExcerpt(res.body)}`.trim());
  return parseAnswer(calendar, res.body, digest);
}

/** Asks for the upgrade of the pending commitment `commitment` (the message at the pending attestation). */
export async function fetchUpgrade(
  calendar: string,
  commitment: Uint8Array,
  timeoutMs: number,
): Promise<UpgradeAnswer> {
  const res = await boundedFetch(`${calendar}/timestamp/${toHex(commitment)}`, {
    headers: HEADERS,
    timeoutMs,
    maxBytes: MAX_CALENDAR_ANSWER,
  });
  if (res.status === 404) return { kind: 'pending', text: bodyExcerpt(res.body) || 'pending' };
  if (res.status !== 200) throw new CalendarError(`${calendar}: HTTP ${res.status} ${bodyExcerpt(res.body)}`.trim());
  return { kind: 'upgraded', timestamp: parseAnswer(calendar, res.body, commitment) };
}

function parseAnswer(calendar: string, body: Uint8Array, message: Uint8Array): Timestamp {
  let t: Timestamp;
  try {
    t = parseTimestamp(body, message);
  } catch (err) {
    throw new CalendarError(`${calendar}: the answer is not a valid timestamp (${(err as Error).message})`, {
      cause: err,
    });
  }
  if (walkAttestations(t).length === 0) throw new CalendarError(`${calendar}: the answer holds no attestation`);
  return t;
}
