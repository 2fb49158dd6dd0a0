// A Timeseal receipt checked in the browser (the /verify page's receipt card, which loads this module only once a
// .tsr is given): an RFC 3161 TimeStampResp from Timeseal's time-stamp authority (docs/FORMAT.md §3b).
//   1. The token (core/receipt.ts checkReceipt): DER, signature, the signer certificate's time-stamping usage,
//      Timeseal's policy, and the chain up to the TSA root this site publishes (/keys/timeseal-tsa-root.pem).
//   2. Which file it is for: the person's digest — the file's SHA-256 hashed on this device, or a pasted hash —
//      against the token's imprint. A SHA-384 or SHA-512 imprint (a token from POST /tsa) takes the file's
//      digest with that algorithm, made here with Web Crypto.
//   3. Its promise, the hash in the public ledger of genTime's UTC day (core/receipt.ts judgePromise): the days
//      published are those of /ledgers/days.json; a published day's ledger file is read only once both of its
//      detached signatures (ECDSA P-256 and ML-DSA-65, docs/FORMAT.md §3) verify over its exact bytes with the
//      log's public keys. A day whose files do not check out gives no verdict ("unverified"), never "broken".
// It imports from core/ only what lib/verified-search.ts already loads, apart from the receipt check itself:
// modules both use land in a chunk the home page's live proof loads too (core/day.ts's full check of a day
// would bring the strict ledger parser there).
import { DAYS_PATH, ecdsaSignaturePath, ledgerPath, mldsaSignaturePath } from '../../../core/archive-paths.ts';
import { fromHex, toHex } from '../../../core/encoding.ts';
import type { LedgerEntry } from '../../../core/ledger.ts';
import {
  checkReceipt,
  digestLength,
  judgePromise,
  type LedgerDay,
  type PromiseVerdict,
  type ReceiptFacts,
} from '../../../core/receipt.ts';
import { pemCertificates } from '../../../core/rfc3161.ts';
import { ecdsaPublicKeyFromPem, ecdsaVerify, mldsaVerify } from '../../../core/sig.ts';
import { archiveUrl } from './archive-url.ts';
import { ECDSA_KEY_URL, MLDSA_KEY_URL } from './verified-search.ts';

export const TSA_ROOT_URL = '/keys/timeseal-tsa-root.pem';

/** What the person gave with the receipt: the file (and its SHA-256, already computed), a pasted hash, or neither. */
export interface ReceiptSubject {
  file?: Blob;
  fileSha256?: string;
  hash?: string;
}

export type PromiseResult =
  | (PromiseVerdict & { ledgerUrl: string | null; dueAt: string })
  /** The day is listed as published, but its files could not be read or do not check out: no verdict. */
  | { state: 'unverified'; date: string; reason: string; ledgerUrl: string; dueAt: string };

export type ReceiptReport =
  /** The token itself is not sound (or not Timeseal's). */
  | { kind: 'invalid'; reason: string }
  /** A sound token, for another digest than the one given. */
  | { kind: 'mismatch'; reason: string; facts: ReceiptFacts; imprintHex: string; comparedWith: 'file' | 'hash' }
  | {
      kind: 'valid';
      facts: ReceiptFacts;
      imprintHex: string;
      /** The chain was checked against the TSA root this site publishes (false: the site publishes none). */
      rootChecked: boolean;
      /** How the imprint was compared: with the file, with the hash given, or not at all. */
      comparedWith: 'file' | 'hash' | null;
      promise: PromiseResult;
    };

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The body of a same-origin file, or null for a 404; anything else throws. */
async function get(url: string, init: RequestInit = {}): Promise<Uint8Array | null> {
  const res = await fetch(url, { credentials: 'include', ...init });
  if (res.status === 404) return null;
  if (!res.ok) throw new Error(`${url}: ${res.status} ${res.statusText}`);
  return new Uint8Array(await res.arrayBuffer());
}

async function need(url: string): Promise<Uint8Array> {
  const body = await get(url);
  if (body === null) throw new Error(`${url} is not published`);
  return body;
}

/** 00:01 UTC the day after `date`: when the ledger of `date` is published. */
export function publicationTime(date: string): string {
  const d = new Date(`${date}T00:01:00.000Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

/** The digest the person gave, with the receipt's imprint algorithm; undefined when none was given. */
/** The digest of the subject with `algorithm`: the file's (its SHA-256 as computed already), or the hash given. */
export async function subjectDigest(subject: ReceiptSubject, algorithm: string): Promise<Uint8Array | undefined> {
  if (subject.file !== undefined) {
    if (algorithm === 'SHA-256' && subject.fileSha256 !== undefined) return fromHex(subject.fileSha256);
    return new Uint8Array(await crypto.subtle.digest(algorithm, await subject.file.arrayBuffer()));
  }
  if (subject.hash === undefined || subject.hash === '') return undefined;
  const hex = subject.hash.replace(/\s+/g, '').toLowerCase();
  const length = digestLength(algorithm) * 2;
  if (!/^[0-9a-f]*$/.test(hex) || hex.length !== length) {
    throw new Error(
      `the receipt's imprint is ${algorithm}: give the file, or its ${algorithm} hash (${length} hexadecimal characters)`,
    );
  }
  return fromHex(hex);
}

/** The published days (days.json, revalidated: it changes at 00:01 UTC), oldest first; none before the first. */
async function publishedDays(): Promise<string[]> {
  const body = await get(archiveUrl(DAYS_PATH), { cache: 'no-cache' });
  if (body === null) return [];
  const days = (JSON.parse(new TextDecoder().decode(body)) as { days?: { date?: unknown }[] }).days;
  if (!Array.isArray(days) || days.some((d) => typeof d?.date !== 'string'))
    throw new Error(`${DAYS_PATH} does not list days`);
  return days.map((d) => d.date as string);
}

/**
 * The ledger of `date` once both detached signatures verify over its bytes (the log's keys as this site serves
 * them), with the day's entries in leaf order. Throws with what does not check out.
 */
async function signedLedger(date: string): Promise<LedgerDay> {
  const [bytes, ecdsaSignature, mldsaSignature, pem, mldsaKey] = await Promise.all([
    need(archiveUrl(ledgerPath(date))),
    need(archiveUrl(ecdsaSignaturePath(date))),
    need(archiveUrl(mldsaSignaturePath(date))),
    need(ECDSA_KEY_URL),
    need(MLDSA_KEY_URL),
  ]);
  if (!ecdsaVerify(bytes, ecdsaSignature, ecdsaPublicKeyFromPem(new TextDecoder().decode(pem))))
    throw new Error(`${ecdsaSignaturePath(date)} does not verify`);
  if (!mldsaVerify(bytes, mldsaSignature, mldsaKey)) throw new Error(`${mldsaSignaturePath(date)} does not verify`);
  const ledger = JSON.parse(new TextDecoder().decode(bytes)) as {
    date?: unknown;
    first_index?: unknown;
    entries?: unknown;
  };
  if (ledger.date !== date || !Number.isSafeInteger(ledger.first_index) || !Array.isArray(ledger.entries))
    throw new Error(`${ledgerPath(date)} is not the ledger of ${date}`);
  const entries = (ledger.entries as [string, string][]).map(([hash, submittedAt]): LedgerEntry => ({
    hash,
    submittedAt,
  }));
  return { date, firstIndex: ledger.first_index as number, entries };
}

/** Whether the day's ledger holds the receipt's hash, from the day's files checked against the log's keys. */
export async function promiseOf(facts: ReceiptFacts): Promise<PromiseResult> {
  const { date } = facts;
  const dueAt = publicationTime(date);
  const ledgerUrl = archiveUrl(ledgerPath(date));
  const days = await publishedDays();
  const lastPublished = days.at(-1) ?? null;
  if (!days.includes(date)) return { ...judgePromise(facts, null, lastPublished), ledgerUrl: null, dueAt };
  let ledger: LedgerDay;
  try {
    ledger = await signedLedger(date);
  } catch (err) {
    return { state: 'unverified', date, reason: message(err), ledgerUrl, dueAt };
  }
  return { ...judgePromise(facts, ledger, lastPublished), ledgerUrl, dueAt };
}

/** Checks `receipt` (the .tsr's bytes) for `subject`, then its promise. Network failures reject. */
export async function checkReceiptOnline(receipt: Uint8Array, subject: ReceiptSubject): Promise<ReceiptReport> {
  const rootPem = await get(TSA_ROOT_URL);
  const authority = rootPem === null ? [] : pemCertificates(new TextDecoder().decode(rootPem));
  let facts: ReceiptFacts;
  try {
    facts = await checkReceipt(receipt, authority);
  } catch (err) {
    return { kind: 'invalid', reason: message(err) };
  }
  let digest: Uint8Array | undefined;
  try {
    digest = await subjectDigest(subject, facts.imprintAlgorithm);
    if (digest !== undefined) facts = await checkReceipt(receipt, authority, digest);
  } catch (err) {
    const comparedWith = subject.file !== undefined ? 'file' : 'hash';
    return { kind: 'mismatch', reason: message(err), facts, imprintHex: toHex(facts.imprint), comparedWith };
  }
  const comparedWith = digest === undefined ? null : subject.file !== undefined ? 'file' : 'hash';
  return {
    kind: 'valid',
    facts,
    imprintHex: toHex(facts.imprint),
    rootChecked: authority.length > 0,
    comparedWith,
    promise: await promiseOf(facts),
  };
}
