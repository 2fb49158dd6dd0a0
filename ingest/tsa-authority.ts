// The time-stamp authority's signing identity, loaded once per app from the TSA key and certificates
// (runtime/keys.ts loadTsaKeys): what POST /tsa (routes/tsa-authority.ts) and the receipts of the JSON submissions
// (routes/submit.ts, routes/beta.ts) sign with. A receipt's genTime is its submission's submittedAt
// (docs/FORMAT.md §3b), and it is sent only after the submission is stored: the beta API's single route signs
// while the row commits, its batch route after the commit; the site's route signs just before its
// transaction, which stores the receipt with the row.
//
// Signing is the largest part of a token's cost (~45 µs of CPU for the ECDSA P-256 signature, against ~15 µs
// for the rest of the token). POST /tsa and the beta API's receipts therefore sign on libuv's thread pool
// (`signOffThread`) while the event loop waits for the row's commit, and answer once both are done: the event
// loop, which serves every request, keeps ~7–12 µs of that work per token (docs/BENCHMARKS.md, "Time-stamp
// authority").
import crypto from 'node:crypto';
import {
  grantedResponse,
  randomSerial,
  receiptRequest,
  signedAttributes,
  signedResponse,
  tstInfo,
  type TsaIdentity,
} from '../core/tsa-authority.ts';
import { fromHex } from '../core/encoding.ts';
import { loadTsaKeys } from '../runtime/keys.ts';
import { nodeSha256 } from '../runtime/node-hash.ts';
import type { Services } from './services.ts';

export const NO_TSA_KEY = 'This server has no time-stamp key: run `timeseal keys add`, then restart it.';

export interface TsaAuthority {
  /** The signer, or undefined with `unavailable` saying why (no key; a damaged key). */
  identity:
    | (TsaIdentity & {
        chainPem: string;
        validFrom: Date;
        validTo: Date;
        signOffThread(data: Uint8Array): Promise<Uint8Array>;
      })
    | undefined;
  unavailable: string;
  /** Why no receipt can be made at `now` (no key, a damaged key, outside the certificate's validity), or null. */
  refusal(now: Date): string | null;
  /**
   * The receipt of a stored SHA-256 submission, a base64 DER TimeStampResp with genTime `submittedAt`; null
   * when the server has no usable key or the time lies outside the certificate's validity (the submission
   * stands; only the receipt is missing).
   */
  receipt(hashHex: string, submittedAt: Date): string | null;
  /**
   * The same receipt, signed on libuv's thread pool: call it before waiting for the submission's write and send
   * what it resolves to only once the write is done. null when `receipt` would be null.
   */
  receiptOffThread(hashHex: string, submittedAt: Date): Promise<string> | null;
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
        // The KeyObject itself, not { key, dsaEncoding: 'der' } (DER is the default): Node 24 takes about twice as
        // long to sign with the options object (~90 µs against ~45 µs here), most of it in preparing the key.
        sign: (data) => crypto.sign('sha256', data, keys.privateKey),
        signOffThread: (data) =>
          new Promise((resolve, reject) =>
            crypto.sign('sha256', data, keys.privateKey, (err, signature) => (err ? reject(err) : resolve(signature))),
          ),
        sha256: nodeSha256,
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
      return der === null ? null : base64(der);
    },
    receiptDer,
    receiptOffThread(hashHex, submittedAt) {
      if (identity === undefined || refusal(submittedAt) !== null) return null;
      const signer = identity;
      const request = receiptRequest(fromHex(hashHex));
      const info = tstInfo(request, signer, submittedAt, randomSerial());
      const attrs = signedAttributes(info, signer);
      return signer
        .signOffThread(attrs)
        .then((signature) => base64(signedResponse(info, request, signer, attrs, signature)));
    },
  };
  function receiptDer(hashHex: string, submittedAt: Date): Uint8Array | null {
    if (identity === undefined || refusal(submittedAt) !== null) return null;
    const request = receiptRequest(fromHex(hashHex));
    return grantedResponse(tstInfo(request, identity, submittedAt, randomSerial()), request, identity);
  }
}

const base64 = (der: Uint8Array): string => Buffer.from(der.buffer, der.byteOffset, der.byteLength).toString('base64');
