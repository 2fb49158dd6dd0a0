// The /verify page's receipt card (inside VerifyTools): a receipt (.tsr, the RFC 3161 token Timeseal gives for a
// submission; docs/FORMAT.md §3b) with its file — hashed on this device with SHA-256, like the other tools — or
// a pasted hash. The check itself is lib/receipt-check.ts, loaded only once a receipt is given: the token, its
// chain to the TSA root this site publishes, and its promise (kept, pending or broken) from the day's ledger.
// Whether the day's publication is still ahead is judged by the server's clock (lib/server-clock.ts), not the
// visitor's: a visitor's clock may be wrong, and a local server's may have been moved on purpose.
import { useRef, useState } from 'react';
import { notCheckedHere, sniffEvidence } from '../../../core/evidence.ts';
import { hashFile, HashCancelledError, type HashJob } from '../lib/file-hasher.ts';
import { formatLedgerDate } from '../lib/format.ts';
import type { PromiseResult, ReceiptReport } from '../lib/receipt-check.ts';
import { serverNow, syncServerClock } from '../lib/server-clock.ts';
import { normalizeHashInput } from '../lib/validation.ts';
import { Row } from './SearchResultPanel.tsx';

const ROOT_URL = '/keys/timeseal-tsa-root.pem';

/** "2025-11-03 10:00:00.123 UTC" */
const utc = (iso: string) => iso.replace('T', ' ').replace('Z', ' UTC');

const TONES = {
  good: 'border-emerald-300 bg-emerald-50/60 dark:border-emerald-800 dark:bg-emerald-950/40',
  wait: 'border-sky-300 bg-sky-50 dark:border-sky-800 dark:bg-sky-950/40',
  bad: 'border-red-300 bg-red-50 dark:border-red-800 dark:bg-red-950/40',
  warn: 'border-amber-300 bg-amber-50 dark:border-amber-700 dark:bg-amber-950/50',
};

function Box({ tone, state, children }: { tone: keyof typeof TONES; state: string; children: React.ReactNode }) {
  return (
    <div
      role="status"
      className={`mt-4 rounded-lg border p-4 ${TONES[tone]}`}
      data-testid="receipt-result"
      data-state={state}
    >
      {children}
    </div>
  );
}

/** The promise of a sound receipt, in one sentence (once the server's clock is known: syncServerClock). */
export function PromiseLine({ promise }: { promise: PromiseResult }) {
  const day = formatLedgerDate(promise.date);
  switch (promise.state) {
    case 'kept':
      return (
        <p data-testid="receipt-promise">
          <span className="font-semibold">Promise kept:</span> the hash is leaf #
          {promise.leafIndex.toLocaleString('en-US')} of the{' '}
          <a className="link" href={promise.ledgerUrl!} download>
            ledger of {day}
          </a>
          , recorded at {utc(promise.recordedAt)}. Your browser checked both of the ledger's signatures, ECDSA P-256 and
          ML-DSA-65.
        </p>
      );
    case 'pending': {
      const due = Date.parse(promise.dueAt) > serverNow();
      return (
        <p data-testid="receipt-promise">
          <span className="font-semibold">Pending:</span> the ledger of {day} {due ? 'will be' : 'was to be'} published
          at 00:01 UTC on {formatLedgerDate(promise.dueAt.slice(0, 10))}
          {due ? '; check again after that.' : ' and is not published yet; check again later.'}
        </p>
      );
    }
    case 'broken':
      return (
        <p data-testid="receipt-promise">
          <span className="font-semibold">This receipt is evidence of a broken promise:</span>{' '}
          {promise.reason.replace(/: the receipt is evidence of a broken promise$/, '')}.
        </p>
      );
    case 'unverified':
      return (
        <p data-testid="receipt-promise">
          <span className="font-semibold">No verdict yet:</span> the ledger of {day} is listed as published, but it
          could not be verified: {promise.reason}.
        </p>
      );
  }
}

function ReceiptResult({ report }: { report: ReceiptReport }) {
  if (report.kind === 'invalid') {
    return (
      <Box tone="bad" state="invalid">
        <p className="font-semibold text-red-900 dark:text-red-200">This receipt is not valid: {report.reason}.</p>
        <p className="mt-1 text-sm text-red-900 dark:text-red-200">
          It proves nothing. A receipt is the .tsr file Timeseal gave when the hash was submitted, unchanged.
        </p>
      </Box>
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
            {report.rootChecked ? (
              <>
                Signature and chain verified up to the{' '}
                <a className="link" href={ROOT_URL} download>
                  Timeseal TSA root
                </a>{' '}
                published by this site.
              </>
            ) : (
              <>Not checked against a root: this site publishes no TSA root ({ROOT_URL}).</>
            )}
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
      <Box tone="bad" state="mismatch">
        <p className="font-semibold text-red-900 dark:text-red-200">
          This receipt is not for this {report.comparedWith}: {report.reason}.
        </p>
        {details}
      </Box>
    );
  }
  const { promise } = report;
  const tone =
    promise.state === 'kept'
      ? 'good'
      : promise.state === 'pending'
        ? 'wait'
        : promise.state === 'broken'
          ? 'bad'
          : 'warn';
  return (
    <Box tone={tone} state={promise.state}>
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
    </Box>
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
    setFailure(null);
    setOtherKind(null);
    try {
      const bytes = new Uint8Array(await receipt.arrayBuffer());
      const kind = sniffEvidence(bytes, receipt.name);
      if (kind !== null && kind !== 'receipt') {
        setOtherKind(notCheckedHere(kind, null));
        return;
      }
      const { checkReceiptOnline } = await import('../lib/receipt-check.ts');
      const subject = file ? { file, fileSha256: fileHash ?? undefined } : { hash };
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
        the hash. See the{' '}
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
              accept=".tsr,application/timestamp-reply"
              className="sr-only"
              onChange={(e) => {
                setReceipt(e.target.files?.[0] ?? null);
                setReport(null);
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
    </section>
  );
}
