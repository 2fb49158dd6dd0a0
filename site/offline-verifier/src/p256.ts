// The page's ECDSA P-256, with the browser's Web Crypto instead of @noble/curves (≈33 KB of the page's 160 KB):
// build.ts resolves core/sig.ts's `@noble/curves/nist.js` to this module, so every check of core/ that verifies
// an ECDSA signature (the ledger's .sig, the checkpoint's ECDSA line, in a bundle, a tlog-proof or a day) runs
// unchanged, and nothing else in core/ changes. The page only verifies; it never makes keys or signs.
//
// core/'s checks are synchronous and Web Crypto is not, so a report is made in passes (`settled`): a pass
// answers each signature from the answers Web Crypto already gave; one it has not seen yet is noted and taken
// as valid for that pass (so that the pass goes on to note the signatures after it); then Web Crypto checks
// every noted signature. When all of them are valid, the pass answered exactly what Web Crypto says, so its
// report stands (the checks are deterministic); when one is not, the report is thrown away and the next pass
// runs with the answers. A report is kept only from a pass whose every answer came from Web Crypto. Answers
// are kept by (SHA-256 of the message, public key, signature).
import { sha256 } from '@noble/hashes/sha2.js';
import { children, decode, expectTag, readInteger, TAG } from '../../../core/der.ts';
import { toHex } from '../../../core/encoding.ts';
import { FormatError } from '../../../core/errors.ts';

/** SEC 1 P-256: the field prime and the curve's b (a = -3). */
const P = 2n ** 256n - 2n ** 224n + 2n ** 192n + 2n ** 96n - 1n;
const B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn;

const big = (bytes: Uint8Array): bigint => BigInt(`0x${toHex(bytes)}`);

/** r || s of a DER ECDSA-Sig-Value (X9.62), or undefined unless it is strict DER (core/der.ts): two minimal
 *  positive INTEGERs of at most 32 bytes each. */
function rawSignature(sig: Uint8Array): Uint8Array | undefined {
  const field = 'an ECDSA signature';
  try {
    const parts = children(expectTag(decode(sig, field), TAG.SEQUENCE, field), field);
    if (parts.length !== 2) return;
    const out = new Uint8Array(64);
    for (const [i, part] of parts.entries()) {
      let v = readInteger(part, field);
      if (v[0]! & 0x80) return;
      if (v.length > 1 && v[0] === 0) v = v.subarray(1);
      if (v.length > 32) return;
      out.set(v, (i + 1) * 32 - v.length);
    }
    return out;
  } catch (err) {
    if (err instanceof FormatError) return;
    throw err;
  }
}

interface Asked {
  /** The message, or (for a digest signed as is) undefined: found among `settled`'s messages by its SHA-256. */
  message?: Uint8Array;
  digest: string;
  publicKey: Uint8Array;
  signature: Uint8Array;
}

const answers = new Map<string, boolean>();
const asked = new Map<string, Asked>();
const digests = new WeakMap<Uint8Array, string>();
let optimistic = false;

function digestOf(message: Uint8Array): string {
  let d = digests.get(message);
  if (d === undefined) digests.set(message, (d = toHex(sha256(message))));
  return d;
}

/** The part of @noble/curves' p256 that core/sig.ts uses to read keys and verify signatures. */
export const p256 = {
  lengths: { seed: 48 },
  utils: {
    /** An uncompressed point (0x04 || x || y) on the curve; P-256 has cofactor 1, so that is the whole check. */
    isValidPublicKey(publicKey: Uint8Array): boolean {
      if (publicKey.length !== 65 || publicKey[0] !== 4) return false;
      const x = big(publicKey.subarray(1, 33));
      const y = big(publicKey.subarray(33));
      return x < P && y < P && (y * y - x * x * x + 3n * x - B) % P === 0n;
    },
  },
  /** As @noble/curves' p256.verify, with `prehash` (SHA-256 of `data`, else `data` is that digest) and `format`. */
  verify(
    signature: Uint8Array,
    data: Uint8Array,
    publicKey: Uint8Array,
    options: { prehash: boolean; format: 'der' | 'compact' },
  ): boolean {
    const raw = options.format === 'der' ? rawSignature(signature) : signature.length === 64 ? signature : undefined;
    if (!raw || !p256.utils.isValidPublicKey(publicKey)) return false;
    const digest = options.prehash ? digestOf(data) : toHex(data);
    const key = `${digest}${toHex(publicKey)}${toHex(raw)}`;
    const known = answers.get(key);
    if (known !== undefined) return known;
    asked.set(key, { digest, publicKey, signature: raw, ...(options.prehash ? { message: data } : {}) });
    return optimistic;
  },
};

let queue: Promise<unknown> = Promise.resolve();

/**
 * Runs `run` (the page's checks) until a pass needed no new answer, and returns that pass's result. `messages`
 * are the files whose SHA-256 core/ may verify a signature over (the ledgers: core/day.ts signs the digest).
 * One run at a time: a pass must not be answered by another run's questions.
 */
export function settled<T>(run: () => Promise<T>, messages: Uint8Array[] = []): Promise<T> {
  const next = queue.then(async () => {
    for (let pass = 1; ; pass++) {
      asked.clear();
      // A pass that still finds new signatures after many is run as the last one, with unanswered ones invalid.
      optimistic = pass < 12;
      let result: T;
      try {
        result = await run();
      } finally {
        optimistic = false;
      }
      if (asked.size === 0 || pass >= 12) return result;
      await answer(messages);
      if ([...asked.keys()].every((key) => answers.get(key))) return result;
    }
  });
  queue = next.catch(() => undefined);
  return next;
}

async function answer(messages: Uint8Array[]): Promise<void> {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle)
    throw new Error(
      'this browser offers no Web Crypto here, which the page needs for ECDSA: open the file from disk or over HTTPS',
    );
  await Promise.all(
    [...asked].map(async ([key, a]) => {
      const message = a.message ?? messages.find((m) => digestOf(m) === a.digest);
      let good = false;
      if (message) {
        try {
          const k = await subtle.importKey(
            'raw',
            a.publicKey as Uint8Array<ArrayBuffer>,
            { name: 'ECDSA', namedCurve: 'P-256' },
            false,
            ['verify'],
          );
          good = await subtle.verify(
            { name: 'ECDSA', hash: 'SHA-256' },
            k,
            a.signature as Uint8Array<ArrayBuffer>,
            message as Uint8Array<ArrayBuffer>,
          );
        } catch {
          good = false;
        }
      }
      answers.set(key, good);
    }),
  );
}
