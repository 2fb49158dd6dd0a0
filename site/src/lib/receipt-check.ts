// A Timeseal receipt checked in the browser (the /verify page's receipt card, which loads this module only once a
// .tsr is given): an RFC 3161 TimeStampResp from Timeseal's time-stamp authority (docs/FORMAT.md §3b).
//   1. The token (core/receipt.ts checkReceipt): DER, signature, the signer certificate's time-stamping usage,
//      Timeseal's policy, and the chain up to the TSA root this site publishes (/keys/timeseal-tsa-root.pem).
//   2. Which file it is for: the person's digest — the file's SHA-256 hashed on this device, or a pasted hash —
//      against the token's imprint. A SHA-384 or SHA-512 imprint (a token from POST /tsa) takes the file's
//      digest with that algorithm, made here with Web Crypto.
//   3. Its promise, the hash in the public ledger of genTime's UTC day (core/receipt.ts judgePromise): the days
//      published are those of /ledgers/days.json; a published day's five files are checked as every reader
//      checks them (core/day.ts verifyDayFiles: both detached signatures over the ledger file, its canonical
//      encoding, the signature metadata and the day's signed checkpoint) before the ledger is read. A day
//      whose files do not check out gives no verdict ("unverified"), never "broken".
import { dayCheckpointPath, ecdsaSignaturePath, ledgerPath, mldsaSignaturePath, parseDays, signaturesMetaPath } from '../../../core/archive.ts';
import { verifyDayFiles } from '../../../core/day.ts';
import { fromHex, toHex } from '../../../core/encoding.ts';
import { checkReceipt, digestLength, judgePromise, type PromiseVerdict, type ReceiptFacts } from '../../../core/receipt.ts';
import { pemCertificates } from '../../../core/rfc3161.ts';
import { ecdsaPublicKeyFromPem } from '../../../core/sig.ts';

export const TSA_ROOT_URL = '/keys/timeseal-tsa-root.pem';
export const TSA_CHAIN_URL = '/keys/timeseal-tsa.pem';
const ARCHIVE_BASE = '/ledgers/';

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
async function subjectDigest(subject: ReceiptSubject, algorithm: string): Promise<Uint8Array | undefined> {
  if (subject.file !== undefined) {
    if (algorithm === 'SHA-256' && subject.fileSha256 !== undefined) return fromHex(subject.fileSha256);
    return new Uint8Array(await crypto.subtle.digest(algorithm, await subject.file.arrayBuffer()));
  }
  if (subject.hash === undefined || subject.hash === '') return undefined;
  const hex = subject.hash.replace(/\s+/g, '').toLowerCase();
  const length = digestLength(algorithm) * 2;
  if (!/^[0-9a-f]*$/.test(hex) || hex.length !== length) {
    throw new Error(`the receipt's imprint is ${algorithm}: give the file, or its ${algorithm} hash (${length} hexadecimal characters)`);
  }
  return fromHex(hex);
}

/** The published days (days.json, revalidated: it changes at 00:01 UTC), oldest first; none before the first. */
async function publishedDays(): Promise<string[]> {
  const body = await get(`${ARCHIVE_BASE}days.json`, { cache: 'no-cache' });
  return body === null ? [] : parseDays(new TextDecoder().decode(body)).days.map((d) => d.date);
}

/** Whether the day's ledger holds the receipt's hash, from the day's files checked against the log's keys. */
async function promiseOf(facts: ReceiptFacts): Promise<PromiseResult> {
  const { date } = facts;
  const dueAt = publicationTime(date);
  const ledgerUrl = `${ARCHIVE_BASE}${ledgerPath(date)}`;
  const days = await publishedDays();
  const lastPublished = days.at(-1) ?? null;
  if (!days.includes(date)) return { ...judgePromise(facts, null, lastPublished), ledgerUrl: null, dueAt };
  let verified;
  try {
    const [ledger, ecdsaSignature, mldsaSignature, signaturesMeta, checkpoint, pem, mldsa] = await Promise.all([
      need(ledgerUrl),
      need(`${ARCHIVE_BASE}${ecdsaSignaturePath(date)}`),
      need(`${ARCHIVE_BASE}${mldsaSignaturePath(date)}`),
      need(`${ARCHIVE_BASE}${signaturesMetaPath(date)}`),
      need(`${ARCHIVE_BASE}${dayCheckpointPath(date)}`),
      need('/keys/public.pem'),
      need('/keys/dilithium_public.key'),
    ]);
    const keys = { ecdsa: ecdsaPublicKeyFromPem(new TextDecoder().decode(pem)), mldsa };
    verified = verifyDayFiles(date, { ledger, ecdsaSignature, mldsaSignature, signaturesMeta, checkpoint }, keys);
  } catch (err) {
    return { state: 'unverified', date, reason: message(err), ledgerUrl, dueAt };
  }
  return { ...judgePromise(facts, verified.ledger, lastPublished), ledgerUrl, dueAt };
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
  return { kind: 'valid', facts, imprintHex: toHex(facts.imprint), rootChecked: authority.length > 0, comparedWith, promise: await promiseOf(facts) };
}
