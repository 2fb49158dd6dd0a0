// The /verify page's receipt card (inside VerifyTools): a receipt (.tsr, the RFC 3161 token Timeseal gives for a
// submission; docs/FORMAT.md §3b) with its file — hashed on this device with SHA-256, like the other tools — or
// a pasted hash. The check itself is lib/receipt-check.ts, loaded only once a receipt is given: the token, its
// chain to the TSA root this site publishes, and its promise (kept, pending or broken) from the day's ledger.
// Whether the day's publication is still ahead is judged by the server's clock (lib/server-clock.ts), not the
// visitor's: a visitor's clock may be wrong, and a local server's may have been moved on purpose.
// A COSE receipt (.receipt.cose, RFC 9942; docs/FORMAT.md §11) given here is checked by lib/cose-receipt-check.ts
// with the receipt keys of /.well-known/scitt-keys, for the same file or hash.
import { useRef, useState } from 'react';
import { notCheckedHere, sniffEvidence } from '../../../core/evidence.ts';
import { hashFile, HashCancelledError, type HashJob } from '../lib/file-hasher.ts';
import type { CoseReceiptReport } from '../lib/cose-receipt-check.ts';
import { formatLedgerDate } from '../lib/format.ts';
import type { ReceiptReport } from '../lib/receipt-check.ts';
import { syncServerClock } from '../lib/server-clock.ts';
import { normalizeHashInput } from '../lib/validation.ts';
import { PromiseLine, promiseTone, ResultBox, RootNote, utc } from './CheckVerdict.tsx';

const SCITT_KEYS_URL = '/.well-known/scitt-keys';
import { Row } from './SearchResultPanel.tsx';

function ReceiptResult({ report }: { report: ReceiptReport }) {
  if (report.kind === 'invalid') {
    return (
      <ResultBox tone="bad" state="invalid" testId="receipt-result">
        <p className="font-semibold text-red-900 dark:text-red-200">This receipt is not valid: {report.reason}.</p>
        <p className="mt-1 text-sm text-red-900 dark:text-red-200">
          It proves nothing. A receipt is the .tsr file Timeseal gave when the hash was submitted, unchanged.
        </p>
      </ResultBox>
    );
  }
  const { facts } = report;
  const details = (
    <dl className="mt-2 divide-y divide-slate-200 dark:divide-slate-800">
      <Row label="Time (genTime)">
        <time dateTime={facts.genTime.toISOString()} data-testid="receipt-time">
          {utc(facts.genTime.toISOString())}
        </time>{' '}
        <span className="muted">(±1 s)</span>
      </Row>
      <Row label="Time-stamp authority">
        <span data-testid="receipt-tsa">{facts.tsaName}</span>
      </Row>
      <Row label={`Imprint (${facts.imprintAlgorithm})`}>
        <span className="font-mono text-xs">{report.imprintHex}</span>
      </Row>
      {report.kind === 'valid' && (
        <Row label="Certificate chain">
          <span data-testid="receipt-chain">{facts.chain.join(' → ')}</span>
          <span className="muted block text-xs">
            <RootNote rootChecked={report.rootChecked} />
          </span>
        </Row>
      )}
      {report.kind === 'valid' && facts.imprintAlgorithm !== 'SHA-256' && (
        <Row label="Ledger entry">
          <span className="font-mono text-xs">{facts.ledgerHash}</span>{' '}
          <span className="muted">(SHA-256 of the token's TSTInfo)</span>
        </Row>
      )}
    </dl>
  );
  if (report.kind === 'mismatch') {
    return (
      <ResultBox tone="bad" state="mismatch" testId="receipt-result">
        <p className="font-semibold text-red-900 dark:text-red-200">
          This receipt is not for this {report.comparedWith}: {report.reason}.
        </p>
        {details}
      </ResultBox>
    );
  }
  const { promise } = report;
  return (
    <ResultBox tone={promiseTone(promise)} state={promise.state} testId="receipt-result">
      <p className="font-semibold">
        {report.comparedWith === 'file'
          ? 'A valid receipt for this file.'
          : report.comparedWith === 'hash'
            ? 'A valid receipt for this hash.'
            : 'A valid receipt (not compared with a file: give the file or its hash to check that too).'}
      </p>
      <div className="mt-2 text-sm">
        <PromiseLine promise={promise} />
      </div>
      {details}
    </ResultBox>
  );
}

function CoseReceiptResult({ report }: { report: CoseReceiptReport }) {
  if (report.kind === 'needs-subject')
    return (
      <ResultBox tone="warn" state="needs-subject" testId="receipt-result">
        <p className="font-semibold">
          A COSE receipt proves that a hash is in the log, and names none: give its file or the file's hash to check it.
        </p>
      </ResultBox>
    );
  if (report.kind === 'invalid')
    return (
      <ResultBox tone="bad" state="invalid" testId="receipt-result">
        <p className="font-semibold wrap-anywhere text-red-900 dark:text-red-200">
          This COSE receipt is not valid for this {report.comparedWith}: {report.reason}.
        </p>
      </ResultBox>
    );
  const { facts } = report;
  return (
    <ResultBox tone="good" state="valid" testId="receipt-result">
      <p className="font-semibold">A valid COSE receipt for this {report.comparedWith}.</p>
      <p className="mt-2 text-sm">
        Its inclusion proof leads from the hash to the root of the log's tree of{' '}
        {facts.treeSize.toLocaleString('en-US')} leaves, and the receipt key's{' '}
        {facts.alg === -7 ? 'ES256' : 'ML-DSA-65'} signature over that root verifies (RFC 9942).
      </p>
      <dl className="mt-2 divide-y divide-slate-200 dark:divide-slate-800">
        <Row label="Log (iss)">{facts.iss}</Row>
        <Row label="Day (sub)">{formatLedgerDate(facts.sub)}</Row>
        <Row label="Leaf">
          #{facts.leafIndex.toLocaleString('en-US')} of {facts.treeSize.toLocaleString('en-US')}
        </Row>
        <Row label="Root">
          <span className="font-mono text-xs break-all">{facts.root}</span>
        </Row>
        <Row label="Receipt key (kid)">
          <span className="font-mono text-xs break-all">{facts.kid}</span>{' '}
          <span className="muted block text-xs">
            From the{' '}
            <a className="link" href={SCITT_KEYS_URL}>
              receipt keys
            </a>{' '}
            published by this site.
          </span>
        </Row>
      </dl>
    </ResultBox>
  );
}

export default function ReceiptCheck() {
  const [receipt, setReceipt] = useState<File | null>(null);
  const [file, setFile] = useState<File | null>(null);
  const [fileHash, setFileHash] = useState<string | null>(null);
  const [progress, setProgress] = useState<{ loaded: number; total: number } | null>(null);
  const [hash, setHash] = useState('');
  const [checking, setChecking] = useState(false);
  const [report, setReport] = useState<ReceiptReport | null>(null);
  const [coseReport, setCoseReport] = useState<CoseReceiptReport | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  /** Another kind of evidence given as the receipt: which reader checks it (core/evidence.ts). */
  const [otherKind, setOtherKind] = useState<string | null>(null);
  const job = useRef<HashJob | null>(null);

  const chooseFile = (chosen: File | undefined) => {
    if (!chosen) return;
    job.current?.cancel();
    setFile(chosen);
    setFileHash(null);
    setHash('');
    setReport(null);
    setCoseReport(null);
    setProgress({ loaded: 0, total: chosen.size });
    const current = hashFile(chosen, (loaded, total) => setProgress({ loaded, total }));
    job.current = current;
    current.promise.then(
      (h) => {
        if (job.current !== current) return;
        setFileHash(h);
        setProgress(null);
      },
      (err: unknown) => {
        if (job.current !== current) return;
        setProgress(null);
        setFile(null);
        if (!(err instanceof HashCancelledError)) setFailure(`${chosen.name} could not be read.`);
      },
    );
  };

  const check = async () => {
    if (!receipt) return;
    setChecking(true);
    setReport(null);
    setCoseReport(null);
    setFailure(null);
    setOtherKind(null);
    try {
      const bytes = new Uint8Array(await receipt.arrayBuffer());
      const kind = sniffEvidence(bytes, receipt.name);
      const subject = file ? { file, fileSha256: fileHash ?? undefined } : { hash };
      if (kind === 'cose-receipt') {
        const { checkCoseReceiptOnline } = await import('../lib/cose-receipt-check.ts');
        setCoseReport(await checkCoseReceiptOnline(bytes, subject));
        return;
      }
      if (kind !== null && kind !== 'receipt') {
        setOtherKind(notCheckedHere(kind, null));
        return;
      }
      const { checkReceiptOnline } = await import('../lib/receipt-check.ts');
      const [checked] = await Promise.all([checkReceiptOnline(bytes, subject), syncServerClock()]);
      setReport(checked);
    } catch (err) {
      console.error('receipt', err);
      setFailure(`The receipt could not be checked: ${(err as Error).message}. Please try again.`);
    } finally {
      setChecking(false);
    }
  };

  const hashing = progress !== null;
  return (
    <section className="card" aria-labelledby="receipt-title" data-testid="receipt-check">
      <h2 id="receipt-title" className="card-title">
        Check a receipt
      </h2>
      <p className="muted mt-1 text-sm">
        A receipt (.tsr) is the RFC 3161 time-stamp token Timeseal gives for each submission. Give it with its file or
        the file's hash: your browser checks the token and its certificates, then whether the day's public ledger holds
        the hash. A COSE receipt (.receipt.cose) is checked here too, with the receipt keys this site publishes. See the{' '}
        <a className="link" href="/tsa-policy">
          time-stamp authority's policy
        </a>
        .
      </p>
      <div className="mt-4 grid gap-6 md:grid-cols-2">
        <div>
          <p className="label">Receipt</p>
          <label className="btn-secondary cursor-pointer">
            Choose a receipt (.tsr)
            <input
              id="receipt-file"
              type="file"
              accept=".tsr,.cose,application/timestamp-reply,application/cose"
              className="sr-only"
              onChange={(e) => {
                setReceipt(e.target.files?.[0] ?? null);
                setReport(null);
                setCoseReport(null);
                e.target.value = '';
              }}
            />
          </label>
          {receipt && (
            <p className="mt-2 truncate text-sm font-medium" title={receipt.name} data-testid="receipt-name">
              {receipt.name}
            </p>
          )}
        </div>
        <div>
          <p className="label">Its file</p>
          <label className="btn-secondary cursor-pointer">
            Choose the file
            <input
              id="receipt-target"
              type="file"
              className="sr-only"
              onChange={(e) => {
                chooseFile(e.target.files?.[0]);
                e.target.value = '';
              }}
            />
          </label>
          {file && (
            <p className="mt-2 truncate text-sm font-medium" title={file.name}>
              {file.name}
            </p>
          )}
          {progress && (
            <progress
              className="mt-2 h-2 w-full accent-emerald-600"
              max={Math.max(progress.total, 1)}
              value={progress.loaded}
              aria-label="Hashing progress"
            />
          )}
          {file && fileHash && (
            <p className="hash mt-1" data-testid="receipt-target-hash">
              {fileHash}
            </p>
          )}
          <label htmlFor="receipt-hash" className="label mt-3">
            or its hash
          </label>
          <input
            id="receipt-hash"
            className="input font-mono"
            value={hash}
            onChange={(e) => {
              setHash(normalizeHashInput(e.target.value));
              setFile(null);
              setFileHash(null);
              job.current?.cancel();
              setReport(null);
              setCoseReport(null);
            }}
            placeholder="The file's hash, hexadecimal"
            spellCheck={false}
            autoComplete="off"
          />
        </div>
      </div>
      <button
        type="button"
        className="btn-primary mt-4"
        disabled={!receipt || hashing || checking}
        onClick={() => void check()}
      >
        {checking ? 'Checking...' : 'Check receipt'}
      </button>
      {failure && (
        <p role="alert" className="field-error">
          {failure}
        </p>
      )}
      {otherKind && (
        <p role="status" className="mt-4 rounded-lg border p-4 text-sm" data-testid="receipt-other-kind">
          {otherKind}
        </p>
      )}
      {report && <ReceiptResult report={report} />}
      {coseReport && <CoseReceiptResult report={coseReport} />}
    </section>
  );
}
