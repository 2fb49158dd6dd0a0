// Timestamped PDFs with a Timeseal server (docs/FORMAT.md §3c): `stampPdf` appends a document time-stamp
// whose token comes from the server's POST /tsa — only the SHA-256 over the ByteRange is sent — checked
// against the TSA root pinned for the server before it goes into the file, with the authority's certificates
// in a DSS update after it; `checkPdf` checks, offline, every document time-stamp of a PDF against the TSA
// roots pinned in the trust store (core/pdf-check.ts), and each Timeseal time-stamp's promise (the ledger of its
// day holds its digest) against the proof file of that digest when one is given (`proofFor`: the one `stamp
// --pdf` writes beside the PDF, completed by `upgrade`): kept once the proof holds the day's signed ledger,
// pending before, broken when the ledger places the digest on another day or after the token's time.
// Browser-safe: FlateDecode is the platform's DecompressionStream('deflate') unless `inflate` is given.
import { toBase64, toHex } from '../../core/encoding.ts';
import { EXIT_CODES } from '../../core/exit-codes.ts';
import { checkPdfTimeStamps, type PdfCheck, type PdfTimeStampCheck } from '../../core/pdf-check.ts';
import { complete, PdfError, prepare, tokenCertificates } from '../../core/pdf-timestamp.ts';
import { checkReceipt } from '../../core/receipt.ts';
import { TimesealClientError } from './errors.ts';
import { httpError, LIMITS, request, type HttpOptions } from './http.ts';
import { loadKeys } from './keys.ts';
import type { LayerReport, ProofFile, ReadBeside, TrustData } from './types.ts';
import { outcomeOfState, verify } from './verify.ts';

/** Decompresses zlib data (PDF's FlateDecode). */
export type Inflate = (data: Uint8Array) => Promise<Uint8Array>;

/** FlateDecode with the platform's DecompressionStream (browsers, Node ≥ 18). */
export const platformInflate: Inflate = async (data) => {
  const stream = new Blob([data as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
};

/** RFC 3161 §2.4.1 TimeStampReq: version 1, SHA-256 imprint of `digest`, no policy, no nonce, certReq TRUE. */
export function timeStampRequest(digest: Uint8Array): Uint8Array {
  if (digest.length !== 32) throw new TimesealClientError('usage', 'a time-stamp request is made for a SHA-256');
  const sha256 = [0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00];
  const imprint = [0x30, sha256.length + 34, ...sha256, 0x04, 0x20, ...digest];
  const body = [0x02, 0x01, 0x01, ...imprint, 0x01, 0x01, 0xff];
  return Uint8Array.from([0x30, body.length, ...body]);
}

export interface StampPdfOptions extends HttpOptions {
  /** The server's base URL; its keys must be pinned in `trust` (pinServer), the TSA root among them. */
  server: string;
  trust: TrustData;
  inflate?: Inflate;
  /** Bytes reserved in /Contents for the token (core/pdf-timestamp.ts DEFAULT_RESERVE). */
  reserve?: number;
}

export interface StampedPdf {
  /** The timestamped PDF: the original bytes, then the time-stamp and the DSS updates. */
  bytes: Uint8Array;
  /** The SHA-256 over the ByteRange (hex): the one thing sent, and the ledger hash the receipt promises. */
  digest: string;
  field: string;
  genTime: string;
  tsa: string;
  serialNumber: string;
  /** The day whose ledger will hold `digest`. */
  ledgerDate: string;
  /** The server's answer, base64 DER TimeStampResp (a receipt, as `timeseal receipt check` reads it). */
  receipt: string;
}

/** A PdfError of core/ as the library's error ('pdf': why the PDF cannot be read or stamped, in a sentence). */
async function readingPdf<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    if (err instanceof PdfError) throw new TimesealClientError('pdf', err.message, { cause: err });
    throw err;
  }
}

/** Appends a document time-stamp from the server's TSA; a 'pdf' error says why a PDF cannot be stamped. */
export async function stampPdf(pdf: Uint8Array, options: StampPdfOptions): Promise<StampedPdf> {
  const pinned = options.trust.servers[options.server];
  if (pinned === undefined)
    throw new TimesealClientError('trust', `no keys are pinned for ${options.server}: pin them first (pinServer)`);
  const roots = loadKeys(pinned.keys).tsaRoots;
  if (roots.length === 0)
    throw new TimesealClientError('trust', `${options.server} has no TSA root (timeseal-tsa-root.pem) pinned`);
  const prepared = await readingPdf(() =>
    prepare(pdf, {
      inflate: options.inflate ?? platformInflate,
      ...(options.reserve === undefined ? {} : { reserve: options.reserve }),
    }),
  );
  const url = `${options.server}/tsa`;
  const res = await request(
    url,
    {
      method: 'POST',
      headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' },
      body: timeStampRequest(prepared.digest) as Uint8Array<ArrayBuffer>,
    },
    options,
    // A TimeStampResp with its certificates is about 1.5 KB (docs/FORMAT.md §3c), like a submission's answer.
    LIMITS.submission,
  );
  if (!res.ok) throw await httpError(res, `POST ${url}`);
  const answer = await res.bytes();
  let facts;
  try {
    facts = await checkReceipt(answer, roots, prepared.digest);
  } catch (err) {
    throw new TimesealClientError(
      'invalid',
      `POST ${url}: the answer is not a sound receipt: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  const carried = tokenCertificates(answer);
  const certificates = [...carried, ...roots.filter((r) => !carried.some((c) => toHex(c) === toHex(r)))];
  return {
    bytes: complete(prepared, answer, { certificates }),
    digest: toHex(prepared.digest),
    field: prepared.fieldName,
    genTime: facts.genTime.toISOString(),
    tsa: facts.tsaName,
    serialNumber: facts.serialNumber,
    ledgerDate: facts.date,
    receipt: toBase64(answer),
  };
}

export interface PdfTimeStampReport {
  /** 1-based, in file order among the document time-stamps. */
  index: number;
  field: string | null;
  byteRange: number[];
  /** The end of the revision it covers (b + c of its ByteRange). */
  revisionEnd: number;
  /** SHA-256 over the ByteRange, hex. */
  digest: string;
  /** 'valid': it covers its revision, and its token is sound, for that digest, and chains to `server`'s root. */
  state: 'valid' | 'invalid';
  reason: string | null;
  /** The pinned server whose TSA root the token chains to (null when none does). */
  server: string | null;
  token: { genTime: string; tsa: string; serialNumber: string; policy: string; chain: string[] } | null;
  /** For a Timeseal token: the ledger that must hold the digest (its promise). */
  ledger: { date: string; hash: string } | null;
  /** For a valid Timeseal token: its promise as far as the proof file of its digest shows it (null otherwise). */
  promise: PdfPromise | null;
  /** The token as a receipt (base64 DER TimeStampResp), for `timeseal receipt check`. */
  receipt: string;
}

/**
 * A Timeseal time-stamp's promise, judged offline from the proof file of its digest: 'kept' when the proof holds
 * the day's signed ledger with the digest in it (leaf, inclusion path, checkpoint: verify's layers) no later than
 * the token's time, 'pending' while there is no such proof or it is not upgraded yet, 'broken' when its ledger
 * places the digest on a later day or after the token's time, 'invalid' when the proof file does not check.
 */
export interface PdfPromise {
  state: 'kept' | 'pending' | 'broken' | 'invalid';
  date: string;
  hash: string;
  /** Whether a proof file of the digest was given. */
  proof: boolean;
  /** What was found, in a sentence. */
  checked: string;
  /** The proof file's layers as verify checked them for this token (none without a proof file). */
  layers: LayerReport[];
}

export interface PdfReport {
  /** 'broken' when every problem is a Timeseal promise broken (each time-stamp itself valid); 'invalid' when a
   * time-stamp does not check, its proof file does not check, or there is no time-stamp; else 'pending' while a Timeseal promise is to be shown (no proof file of its digest, or
   * one not upgraded yet), 'complete' when every Timeseal promise is kept (or every token is another's). */
  state: 'complete' | 'pending' | 'invalid' | 'broken';
  exitCode: 0 | 1 | 2;
  timeStamps: PdfTimeStampReport[];
  /** Signatures that are not document time-stamps (listed, not checked). */
  otherSignatures: number;
  /** What follows the last time-stamp: nothing, a DSS update (validation data), or changes it does not cover. */
  afterLastTimeStamp: {
    from: number;
    bytes: number;
    kind: 'none' | 'validation-data' | 'changes';
    text: string;
  } | null;
  problems: string[];
}

function reportOf(s: PdfTimeStampCheck, server: string | null): PdfTimeStampReport {
  return {
    index: s.index,
    field: s.field,
    byteRange: s.byteRange,
    revisionEnd: s.revisionEnd,
    digest: s.digest,
    state: s.state,
    reason: s.reason,
    server,
    token: s.token && {
      genTime: s.token.genTime.toISOString(),
      tsa: s.token.tsaName,
      serialNumber: s.token.serialNumber,
      policy: s.token.policy,
      chain: s.token.chain,
    },
    ledger: s.receipt && { date: s.receipt.date, hash: s.receipt.ledgerHash },
    promise: null,
    receipt: toBase64(s.response),
  };
}

/**
 * A valid Timeseal time-stamp's promise, from the proof file of its digest checked by verify with the PDF's own token
 * as its receipt: a failed layer other than the receipt's makes the proof invalid; then the receipt's layer says
 * whether the day's ledger in the proof keeps the promise (kept), is still to come (pending) or breaks it.
 */
async function promiseOf(
  s: PdfTimeStampReport,
  proof: ProofFile | undefined,
  trust: TrustData,
  readBeside: ReadBeside | undefined,
): Promise<PdfPromise> {
  const { date, hash } = s.ledger!;
  if (proof === undefined)
    return {
      state: 'pending',
      date,
      hash,
      proof: false,
      checked: `the ledger of ${date} must hold ${hash}: the PDF holds the receipt, not the ledger's proof, and no proof file of this digest is here (run timeseal-client upgrade on this PDF with --server ${s.server} once the day is published, 00:01 UTC the next day: it writes the proof file beside the PDF; timeseal receipt check --pdf, or /verify, checks the promise against the published ledger)`,
      layers: [],
    };
  // The proof checked for this token: its receipt is the one in the PDF, so the promise judged is this token's.
  const report = await verify(
    { ...proof, receipt: s.receipt },
    { trust, hash, remember: false, ...(readBeside === undefined ? {} : { readBeside }) },
  );
  const receipt = report.layers.find((l) => l.layer === 'receipt')!;
  const failed = report.layers.find((l) => l.status === 'failed' && l !== receipt);
  const base = { date, hash, proof: true, layers: report.layers };
  if (failed !== undefined)
    return { ...base, state: 'invalid', checked: `its proof file does not check: ${failed.layer}: ${failed.checked}` };
  if (receipt.status === 'pending')
    return {
      ...base,
      state: 'pending',
      checked: `the ledger of ${date} must hold ${hash}: its proof file does not hold the day's ledger yet (run timeseal-client upgrade once the day is published, 00:01 UTC the next day)`,
    };
  const ledger = report.layers.find((l) => l.layer === 'ledger' && l.status === 'ok');
  // Without a verified ledger the receipt's failure is the proof's (no TSA root pinned for its server, say).
  if (ledger === undefined)
    return { ...base, state: 'invalid', checked: `its proof file does not check: receipt: ${receipt.checked}` };
  if (receipt.status === 'failed') return { ...base, state: 'broken', checked: receipt.checked };
  return { ...base, state: 'kept', checked: `kept: the ledger of ${date} holds ${hash}: ${ledger.checked}` };
}

export interface CheckPdfOptions {
  trust: TrustData;
  inflate?: Inflate;
  /** The proof file of a Timeseal time-stamp's digest (its ledger hash, hex), when there is one. */
  proofFor?: (hash: string) => ProofFile | undefined;
  /** The files beside that proof file (its kept ledger, when it keeps one: a promise broken by omission). */
  readBesideFor?: (hash: string) => ReadBeside | undefined;
}

/**
 * Checks every document time-stamp of `pdf`, offline, against the TSA roots pinned in `trust`, and each Timeseal
 * time-stamp's promise against the proof file `proofFor` gives for its digest.
 */
export async function checkPdf(pdf: Uint8Array, options: CheckPdfOptions): Promise<PdfReport> {
  const inflate = options.inflate ?? platformInflate;
  const servers = Object.entries(options.trust.servers)
    .map(([url, s]) => ({ url, roots: loadKeys(s.keys).tsaRoots }))
    .filter((s) => s.roots.length > 0);
  // Unanchored first (every time-stamp read, chains unchecked), then per pinned root for those that check there.
  const base: PdfCheck = await readingPdf(() => checkPdfTimeStamps(pdf, { inflate, authority: [] }));
  const stamps = base.stamps.map((s) => reportOf(s, null));
  for (const { url, roots } of servers) {
    if (stamps.every((s) => s.server !== null || s.state === 'invalid')) break;
    const anchored = await checkPdfTimeStamps(pdf, { inflate, authority: roots });
    anchored.stamps.forEach((s, i) => {
      if (stamps[i]!.server === null && s.state === 'valid') stamps[i] = reportOf(s, url);
    });
  }
  const problems: string[] = [];
  for (const s of stamps) {
    if (s.state === 'invalid') problems.push(`time-stamp ${s.index}: ${s.reason}`);
    else if (s.server === null)
      problems.push(
        `time-stamp ${s.index}: its token (${s.token!.tsa}) does not chain to a TSA root pinned in the trust store`,
      );
    else if (s.ledger !== null) {
      s.promise = await promiseOf(
        s,
        options.proofFor?.(s.ledger.hash),
        options.trust,
        options.readBesideFor?.(s.ledger.hash),
      );
      if (s.promise.state === 'broken' || s.promise.state === 'invalid')
        problems.push(`promise ${s.index}: ${s.promise.checked}`);
    }
  }
  if (stamps.length === 0) problems.push('the PDF holds no document time-stamp');
  // Broken when every problem is a broken promise (each time-stamp itself valid).
  const broken = stamps.filter((s) => s.promise?.state === 'broken').length;
  const state =
    problems.length > 0
      ? broken === problems.length
        ? 'broken'
        : 'invalid'
      : stamps.some((s) => s.promise?.state === 'pending')
        ? 'pending'
        : 'complete';
  return {
    state,
    exitCode: EXIT_CODES[outcomeOfState(state)],
    timeStamps: stamps,
    otherSignatures: base.otherSignatures,
    afterLastTimeStamp: base.inspection.afterLastTimeStamp,
    problems,
  };
}
