// The /verify page's PDF card (inside VerifyTools): a timestamped PDF — made by "Timestamp this PDF", the client
// or any RFC 3161 authority — checked on this device by lib/pdf-verify.ts (loaded once a PDF is given; the
// judgement is core/pdf-check.ts): each document time-stamp's coverage, digest, token to the published TSA root,
// its time and, for Timeseal's, its promise (kept, pending or broken); and bytes after the last time-stamp named
// as not covered.
import { useState } from 'react';
import { notCheckedHere, sniffEvidence } from '../../../core/evidence.ts';
import type { PdfStampResult, PdfVerifyReport } from '../lib/pdf-verify.ts';
import { syncServerClock } from '../lib/server-clock.ts';
import { PromiseLine, promiseTone, ResultBox, RootNote, TONES, utc, type Tone } from './CheckVerdict.tsx';
import { Row } from './SearchResultPanel.tsx';

function toneOf(s: PdfStampResult): Tone {
  return s.state === 'invalid' ? 'bad' : promiseTone(s.promise);
}

function StampResult({ stamp, rootChecked }: { stamp: PdfStampResult; rootChecked: boolean }) {
  const [a0, a, b, c] = stamp.byteRange;
  return (
    <li
      className={`rounded-lg border p-4 ${TONES[toneOf(stamp)]}`}
      data-testid="pdf-check-stamp"
      data-state={stamp.state === 'invalid' ? 'invalid' : (stamp.promise?.state ?? 'valid')}
    >
      <p className="font-semibold">
        {stamp.state === 'valid'
          ? `Time-stamp ${stamp.index}: valid.`
          : `Time-stamp ${stamp.index} is not valid: ${stamp.reason}.`}
      </p>
      {stamp.promise && (
        <div className="mt-2 text-sm">
          <PromiseLine promise={stamp.promise} />
        </div>
      )}
      <dl className="mt-2 divide-y divide-slate-200 text-sm dark:divide-slate-800">
        {stamp.genTime && (
          <Row label="Time (genTime)">
            <time dateTime={stamp.genTime} data-testid="pdf-check-time">
              {utc(stamp.genTime)}
            </time>
          </Row>
        )}
        {stamp.tsa && (
          <Row label="Time-stamp authority">
            <span className="break-normal">{stamp.tsa}</span>
            {stamp.state === 'valid' && (
              <span className="muted block text-xs break-normal">
                <RootNote rootChecked={rootChecked} chain={stamp.chain} />
              </span>
            )}
          </Row>
        )}
        <Row label="Covers">
          <span className="break-normal" data-testid="pdf-check-range">
            bytes 0 to {(stamp.revisionEnd - 1).toLocaleString('en-US')} except its own token (ByteRange [{a0} {a} {b}{' '}
            {c}])
          </span>
        </Row>
        <Row label="Digest (SHA-256)">
          <span className="font-mono text-xs break-all">{stamp.digest}</span>
        </Row>
      </dl>
    </li>
  );
}

function PdfResult({ report }: { report: PdfVerifyReport }) {
  if (report.kind === 'unreadable') {
    return (
      <ResultBox tone="bad" state="unreadable" testId="pdf-check-result">
        <p className="font-semibold">{report.reason}</p>
      </ResultBox>
    );
  }
  const none = report.stamps.length === 0;
  const after = report.after;
  return (
    <div role="status" className="mt-4" data-testid="pdf-check-result" data-state={report.state}>
      {none ? (
        <p className={`rounded-lg border p-4 font-semibold ${TONES.warn}`}>
          This PDF holds no document time-stamp.
          {report.otherSignatures > 0 &&
            ` It has ${report.otherSignatures} other signature${report.otherSignatures === 1 ? '' : 's'}, which this page does not check.`}
        </p>
      ) : (
        <ul className="space-y-3">
          {report.stamps.map((s) => (
            <StampResult key={s.index} stamp={s} rootChecked={report.rootChecked} />
          ))}
        </ul>
      )}
      {after && (
        <p
          className={`mt-3 rounded-lg border p-3 text-sm ${after.kind === 'changes' ? TONES.warn : 'border-slate-200 dark:border-slate-800'}`}
          data-testid="pdf-check-after"
          data-kind={after.kind}
        >
          {after.kind === 'changes' ? (
            <>
              <span className="font-semibold">Not covered:</span> {after.bytes.toLocaleString('en-US')} bytes after the
              last time-stamp (changes made after it was stamped).
            </>
          ) : after.kind === 'validation-data' ? (
            <>
              After the last time-stamp: only validation data (the authority's certificates,{' '}
              {after.bytes.toLocaleString('en-US')} bytes), which changes nothing it covers.
            </>
          ) : (
            <>Nothing follows the last time-stamp: it covers the whole file.</>
          )}
        </p>
      )}
      {!none && report.otherSignatures > 0 && (
        <p className="muted mt-2 text-xs">
          The PDF also has {report.otherSignatures} other signature{report.otherSignatures === 1 ? '' : 's'}, not
          checked here; a PDF reader checks {report.otherSignatures === 1 ? 'it' : 'them'}.
        </p>
      )}
    </div>
  );
}

export default function PdfCheck() {
  const [pdf, setPdf] = useState<File | null>(null);
  const [checking, setChecking] = useState(false);
  const [report, setReport] = useState<PdfVerifyReport | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  /** Another kind of evidence given here: which reader checks it (core/evidence.ts). */
  const [otherKind, setOtherKind] = useState<string | null>(null);

  const check = async (file: File) => {
    setPdf(file);
    setChecking(true);
    setReport(null);
    setFailure(null);
    setOtherKind(null);
    try {
      const bytes = new Uint8Array(await file.arrayBuffer());
      const kind = sniffEvidence(bytes, file.name);
      if (kind !== null && kind !== 'timestamped-pdf') {
        setOtherKind(notCheckedHere(kind, null));
        return;
      }
      const { checkPdfOnline } = await import('../lib/pdf-verify.ts');
      const [checked] = await Promise.all([checkPdfOnline(bytes), syncServerClock()]); // PromiseLine's clock
      setReport(checked);
    } catch (err) {
      console.error('pdf', err);
      setFailure(`The PDF could not be checked: ${(err as Error).message}. Please try again.`);
    } finally {
      setChecking(false);
    }
  };

  return (
    <section className="card" aria-labelledby="pdf-check-title" data-testid="pdf-check">
      <h2 id="pdf-check-title" className="card-title">
        Check a timestamped PDF
      </h2>
      <p className="muted mt-1 text-sm">
        A PDF with document time-stamps (from "Timestamp this PDF", timeseal-client stamp --pdf, or another RFC 3161
        authority). Your browser checks what each time-stamp covers, its token and certificates, and whether the day's
        public ledger holds its digest. Nothing is uploaded.
      </p>
      <label className="btn-secondary mt-4 cursor-pointer">
        {checking ? 'Checking...' : 'Choose a PDF'}
        <input
          id="pdf-check-file"
          type="file"
          accept=".pdf,application/pdf"
          className="sr-only"
          disabled={checking}
          onChange={(e) => {
            const chosen = e.target.files?.[0];
            e.target.value = '';
            if (chosen) void check(chosen);
          }}
        />
      </label>
      {pdf && (
        <p className="mt-2 truncate text-sm font-medium" title={pdf.name} data-testid="pdf-check-name">
          {pdf.name}
        </p>
      )}
      {failure && (
        <p role="alert" className="field-error">
          {failure}
        </p>
      )}
      {otherKind && (
        <p role="status" className="mt-4 rounded-lg border p-4 text-sm" data-testid="pdf-check-other-kind">
          {otherKind}
        </p>
      )}
      {report && <PdfResult report={report} />}
    </section>
  );
}
