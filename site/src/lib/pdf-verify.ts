// A timestamped PDF checked in the browser (the /verify page's PDF card, islands/PdfCheck.tsx, which loads this
// module only once a PDF is given; docs/FORMAT.md §3c). The judgement is core/pdf-check.ts, as for
// `timeseal-client verify` and `timeseal receipt check --pdf`: each DocTimeStamp's ByteRange covers its whole
// revision but /Contents, the token's imprint is the digest over it, and the token chains to the TSA root this
// site publishes (/keys/timeseal-tsa-root.pem). A Timeseal token's promise — its digest in the ledger of its
// day — is judged as the receipt card judges it (lib/receipt-check.ts promiseOf: kept, pending or broken, from the
// day's signed files). Bytes after the last time-stamp are named as core/pdf-timestamp.ts inspect names them.
import { checkPdfTimeStamps } from '../../../core/pdf-check.ts';
import { PdfError, type PdfInspection } from '../../../core/pdf-timestamp.ts';
import { pemCertificates } from '../../../core/rfc3161.ts';
import { platformInflate } from './pdf-stamp.ts';
import { promiseOf, TSA_ROOT_URL, type PromiseResult } from './receipt-check.ts';

export interface PdfStampResult {
  index: number;
  field: string | null;
  byteRange: number[];
  revisionEnd: number;
  /** SHA-256 over the ByteRange, hex. */
  digest: string;
  state: 'valid' | 'invalid';
  reason: string | null;
  genTime: string | null;
  tsa: string | null;
  chain: string[];
  /** Whether the token is Timeseal's (its promise judged) or another authority's. */
  timeseal: boolean;
  promise: PromiseResult | null;
}

export type PdfVerifyReport =
  | { kind: 'unreadable'; reason: string }
  | {
      kind: 'checked';
      /** 'valid' when every time-stamp checks (and there is one); else 'invalid'. */
      state: 'valid' | 'invalid';
      stamps: PdfStampResult[];
      otherSignatures: number;
      after: PdfInspection['afterLastTimeStamp'];
      rootChecked: boolean;
    };

/** Checks every document time-stamp of `pdf`, then each Timeseal token's promise. Network failures reject. */
export async function checkPdfOnline(pdf: Uint8Array): Promise<PdfVerifyReport> {
  const res = await fetch(TSA_ROOT_URL);
  const authority = res.ok ? pemCertificates(await res.text()) : [];
  let check;
  try {
    check = await checkPdfTimeStamps(pdf, { inflate: platformInflate, authority });
  } catch (err) {
    if (err instanceof PdfError) return { kind: 'unreadable', reason: err.message };
    throw err;
  }
  const stamps: PdfStampResult[] = [];
  for (const s of check.stamps) {
    stamps.push({
      index: s.index,
      field: s.field,
      byteRange: s.byteRange,
      revisionEnd: s.revisionEnd,
      digest: s.digest,
      state: s.state,
      reason: s.reason,
      genTime: s.token ? s.token.genTime.toISOString() : null,
      tsa: s.token?.tsaName ?? null,
      chain: s.token?.chain ?? [],
      timeseal: s.receipt !== null,
      promise: s.state === 'valid' && s.receipt !== null ? await promiseOf(s.receipt) : null,
    });
  }
  const broken = stamps.some((s) => s.promise?.state === 'broken');
  return {
    kind: 'checked',
    state: stamps.length > 0 && stamps.every((s) => s.state === 'valid') && !broken ? 'valid' : 'invalid',
    stamps,
    otherSignatures: check.otherSignatures,
    after: check.inspection.afterLastTimeStamp,
    rootChecked: authority.length > 0,
  };
}
