// A promise broken by omission: the day is published, and its signed ledger file does not hold the hash. The
// ledger file (docs/FORMAT.md §3) with its two detached signatures is the one statement that binds a day's contents,
// so it is what the client keeps as the proof (docs/DECISIONS.md): `upgrade` downloads it once per day and run,
// read in pieces and never held (a day of ten million hashes is about a gigabyte), checks it (its SHA-256 the one
// the server's days.json lists, both signatures with the pinned keys, its date, its log's origin, the hash absent:
// core/omission.ts) before anything is kept, and `verify` checks the kept files the same way, offline.
// Where the bytes go (a file on disk, for the command line) is the caller's: `LedgerSink`, `ReadBeside`.
import { DAYS_PATH, ecdsaSignaturePath, ledgerPath, mldsaSignaturePath } from '../../core/archive-paths.ts';
import { parseDays } from '../../core/archive.ts';
import { concatBytes } from '../../core/encoding.ts';
import type { MessageDigests } from '../../core/day.ts';
import { OmissionPass, type OmissionFacts } from '../../core/omission.ts';
import { MLDSA_SIGNATURE_SIZE } from '../../core/sig.ts';
import { TimesealClientError } from './errors.ts';
import { httpError, LIMITS, request, type HttpOptions } from './http.ts';
import type { LoadedKeys } from './keys.ts';
import type { Omission, ReadBeside } from './types.ts';

/** Where a downloaded day's ledger goes while it is read: kept only once it checked. */
export interface LedgerSink {
  /** The ledger file's next piece. */
  write(piece: Uint8Array): Promise<void>;
  /** Keeps the ledger and its two signatures (as `<ledger>.sig`, `<ledger>.dilithium.sig`). */
  keep(signatures: { ecdsa: Uint8Array; mldsa: Uint8Array }): Promise<void>;
  /** Throws away what was written. */
  discard(): Promise<void>;
}

/** The names of a kept ledger's two signatures, beside it. */
export const keptSignatures = (ledger: string): { ecdsa: string; mldsa: string } => ({
  ecdsa: `${ledger}.sig`,
  mldsa: `${ledger}.dilithium.sig`,
});

/** Signatures are small: an ECDSA P-256 DER signature is at most 72 bytes, an ML-DSA-65 one 3309. */
const SIGNATURE_LIMIT = 8 * 1024;

async function allOf(pieces: AsyncIterable<Uint8Array>, limit: number, what: string): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const p of pieces) {
    total += p.length;
    if (total > limit) throw new TimesealClientError('invalid', `${what} is larger than a signature (${limit} bytes)`);
    parts.push(p);
  }
  return concatBytes(...parts);
}

/** The most bytes a ledger of `entries` entries can have: its header (under 4 KiB) and 97 bytes an entry. */
const ledgerLimit = (entries: number): number => 4096 + entries * 128;

/**
 * The day's signed ledger from `server`, read in pieces into `sink` and checked as it passes: its SHA-256 is the one
 * days.json lists for the day, both signatures verify with the pinned keys, its date is the day, its origin the
 * pinned one (or, none pinned yet, days.json's), and which of `hashes` it holds. Kept (sink.keep) only when it checks
 * and one of `hashes` at least is absent; discarded otherwise. Throws a TimesealClientError: 'invalid' for bytes that
 * do not check, 'http', 'network' or 'aborted' for the server's answers (nothing kept).
 */
export async function fetchDayLedger(
  server: string,
  date: string,
  hashes: readonly string[],
  keys: LoadedKeys,
  origin: string | null,
  sink: LedgerSink,
  options: HttpOptions & { digests?: MessageDigests },
): Promise<OmissionFacts> {
  const daysUrl = `${server}/ledgers/${DAYS_PATH}`;
  const daysRes = await request(daysUrl, { method: 'GET' }, options, LIMITS.days);
  if (!daysRes.ok) throw await httpError(daysRes, `GET ${daysUrl}`);
  let listed: { sha256: string; entryCount: number; origin: string };
  try {
    const days = parseDays(await daysRes.text());
    const day = days.days.find((d) => d.date === date);
    if (day === undefined) throw new Error(`${date} is not listed`);
    listed = { sha256: day.sha256, entryCount: day.entryCount, origin: days.origin };
  } catch (err) {
    throw new TimesealClientError('invalid', `${daysUrl}: ${(err as Error).message}`, { cause: err });
  }
  const signature = async (path: string): Promise<Uint8Array> => {
    const url = `${server}/ledgers/${path}`;
    const res = await request(url, { method: 'GET' }, options, SIGNATURE_LIMIT);
    if (!res.ok) throw await httpError(res, `GET ${url}`);
    return res.bytes();
  };
  const [ecdsa, mldsa] = await Promise.all([signature(ecdsaSignaturePath(date)), signature(mldsaSignaturePath(date))]);
  const url = `${server}/ledgers/${ledgerPath(date)}`;
  const limit = ledgerLimit(listed.entryCount);
  // The deadline grows with the day: 30 s, and a second for each megabyte it may have.
  const timeoutMs = Math.max(options.timeoutMs ?? 30_000, 30_000 + Math.ceil(limit / 1_000_000) * 1000);
  const res = await request(url, { method: 'GET' }, { ...options, timeoutMs }, limit);
  if (!res.ok) throw await httpError(res, `GET ${url}`);
  const pass = new OmissionPass(keys.set, hashes, options.digests);
  let facts: OmissionFacts;
  try {
    for await (const piece of res.pieces()) {
      pass.push(piece);
      await sink.write(piece);
    }
    facts = pass.finish(ecdsa, mldsa, { date, origin: origin ?? listed.origin, sha256: listed.sha256 });
  } catch (err) {
    await sink.discard();
    if (err instanceof TimesealClientError) throw err;
    throw new TimesealClientError(
      'invalid',
      `${url}: the day's signed ledger does not check with the pinned keys: ${(err as Error).message}`,
      { cause: err },
    );
  }
  if (facts.absent.length === 0) await sink.discard();
  else await sink.keep({ ecdsa, mldsa });
  return facts;
}

/** What the kept ledger of a proof shows: `facts` when it checks, else the one sentence saying why not. */
export type KeptLedger = { facts: OmissionFacts } | { problem: string };

/**
 * The kept ledger a version 2 proof file names, checked offline as `upgrade` checked it before keeping it: its
 * length and SHA-256 the ones the proof names, both signatures with the pinned keys, its date the proof's day, its
 * origin the pinned one, and whether it holds `hash`.
 */
export async function checkKeptLedger(
  omission: Omission,
  hash: string,
  keys: LoadedKeys,
  origin: string | null,
  read: ReadBeside | undefined,
  digests?: MessageDigests,
): Promise<KeptLedger> {
  const again = 'run timeseal-client upgrade on this proof file again, online, to fetch and check it again';
  if (read === undefined)
    return {
      problem: `the day's signed ledger this proof file keeps (${omission.ledger}) is a file beside it, which this reader cannot open: check it with \`timeseal-client verify\``,
    };
  const names = keptSignatures(omission.ledger);
  const missing = [omission.ledger, names.ecdsa, names.mldsa].filter((f) => read(f) === null);
  if (missing.length > 0)
    return {
      problem: `${missing.join(' and ')}, the day's signed ledger this proof file keeps for its broken promise, ${missing.length === 1 ? 'is' : 'are'} missing: ${again}`,
    };
  let ecdsa: Uint8Array;
  let mldsa: Uint8Array;
  try {
    ecdsa = await allOf(read(names.ecdsa)!, SIGNATURE_LIMIT, names.ecdsa);
    mldsa = await allOf(read(names.mldsa)!, MLDSA_SIGNATURE_SIZE + 1, names.mldsa);
  } catch (err) {
    return { problem: `${(err as Error).message}: ${again}` };
  }
  const pass = new OmissionPass(keys.set, [hash], digests);
  try {
    for await (const piece of read(omission.ledger)!) {
      pass.push(piece);
      if (pass.size > omission.size) break;
    }
  } catch (err) {
    return { problem: `${omission.ledger} cannot be read (${(err as Error).message}): ${again}` };
  }
  if (pass.size !== omission.size)
    return {
      problem: `${omission.ledger} changed since upgrade kept it (${pass.size > omission.size ? 'more' : pass.size} bytes, the proof file names ${omission.size}): ${again}`,
    };
  try {
    return { facts: pass.finish(ecdsa, mldsa, { date: omission.date, origin, sha256: omission.sha256 }) };
  } catch (err) {
    return {
      problem: `${omission.ledger} changed since upgrade kept it, or is not the one this proof names: ${(err as Error).message}; ${again}`,
    };
  }
}
