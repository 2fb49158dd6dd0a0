// The order in which every submission route admits a hash, written once: POST /api/submit (routes/submit.ts),
// the beta API's single and batch routes (routes/beta.ts, routes/beta-batch.ts), and both time-stamp doors,
// POST /tsa and Sigstore's POST /api/v1/timestamp (tsa-admission.ts). Each route reads the clock once and says
// the outcome in its own words; what is refused, and when, is decided here only:
//
//   1. the submission gate (submission-gate.ts: the clock after the last published day) — 503, nothing counted;
//   2. a receipt that cannot be made (no usable time-stamp key) — 503, nothing counted;
//   3. the optional beta-API rate cap (BETA_API_RATE, limits.ts betaRateCap: the hashes the request stores,
//      per address) — 429 with Retry-After, nothing stored;
//   4. the route's durable write (the store's transaction, committed and synced);
//   5. a write refused by a full or failing disk or a closed day (errors.ts storageRefusal) — 503 with
//      Retry-After, nothing stored; a write that stored again tells the gate, which clears that condition.
//
// A step a route does not have is left out (POST /api/submit has no cap: its limits are checked in its own
// transaction, limits.ts submitWithinLimits), never put in another place.
import { storageRefusal } from './errors.ts';
import { betaRateCap } from './limits.ts';
import type { Services } from './services.ts';

/** Which step refused. */
export type AdmissionStep = 'gate' | 'receipt' | 'cap' | 'storage';

export interface AdmissionRefusal {
  step: AdmissionStep;
  status: 429 | 503;
  message: string;
  /** Seconds, when the refusal knows how long it lasts (the cap's window, the disk's retry). */
  retryAfter?: string;
}

export interface AdmissionRequest<T> {
  /** The clock's instant, read once by the route: the submission's time and the gate's and cap's date. */
  now: Date;
  /** The client's address, as the cap counts it. */
  ip: string;
  /** Why the receipt the request asks for cannot be made, or null (absent: it asks for none). */
  receiptRefusal?: () => string | null;
  /** How many hashes the write stores, counted against the beta-API cap (absent or 0: the cap is not asked). */
  capCount?: number;
  /** The route's write of its rows; it resolves once they are committed and durable. */
  write: () => Promise<T>;
  /** Whether the write's result stored a submission (absent: it did), so that the gate hears of it. */
  stored?: (written: T) => boolean;
}

export type Admitted<T> = { written: T } | { refused: AdmissionRefusal };

export type SubmissionAdmission = <T>(request: AdmissionRequest<T>) => Promise<Admitted<T>>;

const made = new WeakMap<Services, SubmissionAdmission>();

/** The app's admission order, made once per `s` (one rate cap for every route that counts against it). */
export function submissionAdmission(s: Services): SubmissionAdmission {
  let admit = made.get(s);
  if (admit === undefined) {
    admit = makeAdmission(s);
    made.set(s, admit);
  }
  return admit;
}

function makeAdmission(s: Services): SubmissionAdmission {
  const cap = s.ingest.betaApiRate === undefined ? undefined : betaRateCap(s.store, s.ingest.betaApiRate);
  return async <T>(request: AdmissionRequest<T>): Promise<Admitted<T>> => {
    const { now } = request;
    // A ledger on or before the last published day can never be built: nothing is written, nothing counted.
    const paused = s.gate.refusal(now.toISOString().slice(0, 10));
    if (paused !== null) return { refused: { step: 'gate', status: 503, message: paused } };
    const noReceipt = request.receiptRefusal?.() ?? null;
    if (noReceipt !== null) return { refused: { step: 'receipt', status: 503, message: noReceipt } };
    if (cap !== undefined && request.capCount !== undefined && request.capCount > 0) {
      const refused = await cap.check(request.ip, now, request.capCount);
      if (refused !== null)
        return {
          refused: { step: 'cap', status: 429, message: refused.error, retryAfter: String(refused.retryAfter) },
        };
    }
    let written: T;
    try {
      written = await request.write();
    } catch (err) {
      // A full or failing disk, or a closed day: counted and logged by the gate (never a stack trace each).
      const refusal = storageRefusal(err, s.gate, 'submission');
      if (refusal === undefined) throw err;
      return { refused: { step: 'storage', status: 503, message: refusal.message, retryAfter: refusal.retryAfter } };
    }
    if (request.stored?.(written) ?? true) s.gate.stored();
    return { written };
  };
}
