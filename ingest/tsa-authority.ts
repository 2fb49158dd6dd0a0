// The time-stamp authority's signing identity, loaded once per app from the TSA key and certificates
// (runtime/keys.ts loadTsaKeys): what POST /tsa (routes/tsa.ts) and the receipts of the JSON submissions
// (routes/submit.ts, routes/beta.ts) sign with. A receipt's genTime is its submission's submittedAt
// (docs/FORMAT.md §3b), and it is sent only after the submission is stored: the beta API signs after the
// commit; the site's route signs just before its transaction, which stores the receipt with the row.
import crypto from 'node:crypto';
import { grantedResponse, randomSerial, receiptRequest, tstInfo, type TsaIdentity } from '../core/tsa-token.ts';
import { fromHex, toBase64 } from '../core/encoding.ts';
import { loadTsaKeys } from '../runtime/keys.ts';
import type { Services } from './services.ts';

export const NO_TSA_KEY = 'This server has no time-stamp key: run `timeseal keys add`, then restart it.';

export interface TsaAuthority {
  /** The signer, or undefined with `unavailable` saying why (no key; a damaged key). */
  identity: (TsaIdentity & { chainPem: string; validFrom: Date; validTo: Date }) | undefined;
  unavailable: string;
  /** Why no receipt can be made at `now` (no key, a damaged key, outside the certificate's validity), or null. */
  refusal(now: Date): string | null;
  /**
   * The receipt of a stored SHA-256 submission, a base64 DER TimeStampResp with genTime `submittedAt`; null
   * when the server has no usable key or the time lies outside the certificate's validity (the submission
   * stands; only the receipt is missing).
   */
  receipt(hashHex: string, submittedAt: Date): string | null;
  /** The same receipt as DER bytes (the site's submissions store it with their row, then answer its base64). */
  receiptDer(hashHex: string, submittedAt: Date): Uint8Array | null;
}

const loaded = new WeakMap<Services, TsaAuthority>();

/** The app's TSA, loaded on first use and kept for the life of `s`. */
export function tsaAuthority(s: Services): TsaAuthority {
  let tsa = loaded.get(s);
  if (tsa === undefined) {
    tsa = loadAuthority(s);
    loaded.set(s, tsa);
  }
  return tsa;
}

function loadAuthority(s: Services): TsaAuthority {
  let identity: TsaAuthority['identity'];
  let unavailable = NO_TSA_KEY;
  try {
    // The configured key and chain (TIMESEAL_TSA_KEY_FILE, TIMESEAL_TSA_CHAIN_FILE) when set, else the default files.
    const keys = loadTsaKeys(s.config);
    if (keys !== undefined) {
      identity = {
        certificates: keys.certificates,
        chainPem: keys.chainPem,
        validFrom: keys.validFrom,
        validTo: keys.validTo,
        sign: (data) => new Uint8Array(crypto.sign('sha256', data, { key: keys.privateKey, dsaEncoding: 'der' })),
        sha256: (data) => new Uint8Array(crypto.createHash('sha256').update(data).digest()),
      };
    }
  } catch (err) {
    // A damaged TSA key leaves the rest of the server serving; POST /tsa says what is wrong.
    unavailable = `This server's time-stamp key cannot be used (${(err as Error).message}).`;
  }
  const refusal = (now: Date): string | null => {
    if (identity === undefined) return unavailable;
    if (now < identity.validFrom || now > identity.validTo) {
      return `This server's time-stamp certificate is not valid at ${now.toISOString()} (valid ${identity.validFrom.toISOString()} to ${identity.validTo.toISOString()}).`;
    }
    return null;
  };
  return {
    identity,
    unavailable,
    refusal,
    receipt(hashHex, submittedAt) {
      const der = receiptDer(hashHex, submittedAt);
      return der === null ? null : toBase64(der);
    },
    receiptDer,
  };
  function receiptDer(hashHex: string, submittedAt: Date): Uint8Array | null {
    if (identity === undefined || refusal(submittedAt) !== null) return null;
    const request = receiptRequest(fromHex(hashHex));
    return grantedResponse(tstInfo(request, identity, submittedAt, randomSerial()), request, identity);
  }
}
