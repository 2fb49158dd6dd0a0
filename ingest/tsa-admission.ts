// The one path by which a time-stamp request becomes a token, shared by both doors of Timeseal's time-stamp
// authority: POST /tsa (routes/tsa-authority.ts, RFC 3161 over HTTP) and Sigstore's POST /api/v1/timestamp
// (routes/sigstore-timestamp.ts). Each door reads its own body into a TimeStampRequest (core/tsa-authority.ts)
// and says its own words; what is admitted, and when, is decided here only (docs/FORMAT.md §3b):
//
//   1. the certificate must be valid at the clock's instant (else a rejection, timeNotAvailable);
//   2. the submission gate (submission-gate.ts: the clock after the last published day) — 503, Retry-After 60;
//   3. the optional beta-API rate cap (BETA_API_RATE, the same per-address count as the beta API) — 429;
//   4. the durable write of the ledger hash (the imprint if SHA-256, else the SHA-256 of the TSTInfo) at the
//      token's genTime — a full disk or a closed day is 503 with Retry-After;
//   5. the signature, made on libuv's thread pool while the row commits (tsa-authority.ts).
//
// Steps 2 to 4 are every submission route's (submission-admission.ts); step 1 comes first here because an
// invalid certificate is a rejection in the protocol's own terms, not a "try again".
// A token is handed back only after step 4 resolved: a granted answer always means its leaf is on disk.
import type { FastifyBaseLogger } from 'fastify';
import {
  ledgerHash,
  randomSerial,
  signedAttributes,
  signedResponse,
  tstInfo,
  type Rejection,
  type TimeStampRequest,
} from '../core/tsa-authority.ts';
import type { Services } from './services.ts';
import { submissionAdmission } from './submission-admission.ts';
import { tsaAuthority } from './tsa-authority.ts';

/** Seconds a client is asked to wait while the submission gate refuses (the clock is not after the last published day). */
const GATE_RETRY_AFTER = '60';

export type Admission =
  /** The DER TimeStampResp of a granted token, its ledger hash stored. */
  | { granted: Uint8Array }
  /** Not now: the gate, the rate cap, the disk or a closed day (HTTP 503 or 429, Retry-After when known). */
  | { refused: { status: 429 | 503; message: string; retryAfter?: string } }
  /** Not granted (nothing stored, except for a signature failure after the write: see its text). */
  | { rejected: Rejection };

export interface TsaAdmission {
  /** Why this server takes no time-stamp request at all (no key, a damaged key), or null. */
  unavailable(): string | null;
  /**
   * Admits `request` from the client address `ip` at the clock's instant, or at its whole second with
   * `wholeSeconds` (the genTime and the stored submittedAt alike: they are always the same instant).
   */
  admit(
    request: TimeStampRequest,
    ip: string,
    log: FastifyBaseLogger,
    options?: { wholeSeconds?: boolean },
  ): Promise<Admission>;
}

/** The token's content could not be made (before anything was stored). */
class TokenNotMade extends Error {
  constructor(cause: unknown) {
    super('the time-stamp token could not be made', { cause });
  }
}

const made = new WeakMap<Services, TsaAdmission>();

/** The app's admission path, made once per `s` (one rate cap for both doors). */
export function tsaAdmission(s: Services): TsaAdmission {
  let admission = made.get(s);
  if (admission === undefined) {
    admission = makeAdmission(s);
    made.set(s, admission);
  }
  return admission;
}

function makeAdmission(s: Services): TsaAdmission {
  const tsa = tsaAuthority(s);
  const admit = submissionAdmission(s);
  return {
    unavailable: () => (tsa.identity === undefined ? tsa.unavailable : null),
    async admit(request, ip, log, options) {
      const identity = tsa.identity;
      if (identity === undefined) return { refused: { status: 503, message: tsa.unavailable } };
      const clock = s.clock();
      const now = options?.wholeSeconds ? new Date(clock.getTime() - (clock.getTime() % 1000)) : clock;
      const invalid = tsa.refusal(now);
      // A token whose genTime lies outside its certificate's validity would not verify: none is given.
      if (invalid !== null)
        return { rejected: { failInfo: 'timeNotAvailable', text: `${invalid.slice(0, -1)}; nothing was stored.` } };
      let admitted;
      try {
        admitted = await admit({
          now,
          ip,
          capCount: 1,
          // Made only once the gate and the cap let the request through; the token's genTime is the row's time.
          write: async () => {
            let info: Uint8Array;
            let attrs: Uint8Array;
            try {
              info = tstInfo(request, identity, now, randomSerial());
              attrs = signedAttributes(info, identity);
            } catch (err) {
              throw new TokenNotMade(err);
            }
            // Its failure is handled where it is awaited (below), or ignored if the write fails first.
            const signature = identity.signOffThread(attrs);
            signature.catch(() => undefined);
            const ledger = ledgerHash(request, info);
            const hash = Buffer.from(ledger.buffer, ledger.byteOffset, ledger.byteLength).toString('hex');
            await s.store.submissions.write({ hash, submittedAt: now, source: 'api_beta' });
            return { info, attrs, signature };
          },
        });
      } catch (err) {
        if (!(err instanceof TokenNotMade)) throw err;
        log.error({ err: err.cause }, 'time-stamp token failed');
        return {
          rejected: {
            failInfo: 'systemFailure',
            text: 'The time-stamp authority failed to make the token; nothing was stored.',
          },
        };
      }
      if ('refused' in admitted) {
        const { step, status, message, retryAfter } = admitted.refused;
        const wait = step === 'gate' ? GATE_RETRY_AFTER : retryAfter;
        return { refused: { status, message, ...(wait === undefined ? {} : { retryAfter: wait }) } };
      }
      const { info, attrs, signature } = admitted.written;
      try {
        return { granted: signedResponse(info, request, identity, attrs, await signature) };
      } catch (err) {
        // The imprint is stored and will be published; only the token could not be signed.
        log.error({ err }, 'time-stamp token signature failed');
        return {
          rejected: { failInfo: 'systemFailure', text: 'The time-stamp authority failed to sign the token.' },
        };
      }
    },
  };
}
