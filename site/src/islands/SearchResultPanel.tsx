// The result of a verified search (spec §2 Verify: ledger date, timestamp, ledger download, OTS status, block
// height, confirmations, quantum shield and dual signature), every flag being what the browser checked.
import { confirmationLabel, confirmationsStrong, formatDateTime, formatLedgerDate } from '../lib/format.ts';
import type { SearchResult } from '../lib/verified-search.ts';

function Flag({ ok, label, detail }: { ok: boolean; label: string; detail: string }) {
  return (
    <div className="flex items-start gap-2" data-flag={label} data-ok={ok}>
      <span aria-hidden="true" className={`mt-0.5 inline-flex h-5 w-5 shrink-0 items-center justify-center rounded-full text-xs font-bold ${ok ? 'bg-emerald-600 text-white' : 'bg-red-600 text-white'}`}>{ok ? '✓' : '✕'}</span>
      <div>
        <p className="text-sm font-semibold">{label}: {ok ? 'Verified' : 'Not verified'}</p>
        <p className="muted text-xs">{detail}</p>
      </div>
    </div>
  );
}

export function Row({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div className="flex flex-col gap-0.5 py-2 sm:flex-row sm:gap-4">
      <dt className="muted w-40 shrink-0 text-sm">{label}</dt>
      <dd className="text-sm font-medium break-all">{children}</dd>
    </div>
  );
}

export default function SearchResultPanel({ result }: { result: SearchResult }) {
  if (!result.found) {
    return (
      <div role="status" className="mt-4 rounded-lg border border-amber-300 bg-amber-50 p-4 dark:border-amber-700 dark:bg-amber-950/50" data-testid="search-result" data-found="false">
        <p className="font-semibold text-amber-900 dark:text-amber-200">Not found in any ledger</p>
        <p className="mt-1 text-sm text-amber-900 dark:text-amber-200">Hashes submitted today appear after the next ledger is published at 00:01 UTC.</p>
      </div>
    );
  }
  const confirmations = result.confirmations;
  return (
    <div role="status" className="mt-4 rounded-lg border border-emerald-300 bg-emerald-50/60 p-4 dark:border-emerald-800 dark:bg-emerald-950/40" data-testid="search-result" data-found="true">
      <p className="font-semibold text-emerald-900 dark:text-emerald-200">Found in the ledger of {formatLedgerDate(result.date!)}</p>
      <dl className="mt-2 divide-y divide-emerald-200 dark:divide-emerald-900">
        <Row label="Ledger date"><span data-testid="result-date">{result.date}</span></Row>
        <Row label="Timestamp"><time dateTime={result.timestamp!}>{formatDateTime(result.timestamp!)}</time></Row>
        <Row label="Ledger"><a className="link" href={result.ledgerUrl!} download>Download Ledger ({result.date}.json)</a></Row>
        <Row label="OTS status">{result.otsStatus === 'verified' ? <span className="badge-green">Anchored (verified)</span> : <span className="badge-yellow">Pending</span>}</Row>
        <Row label="Bitcoin block">{result.blockHeight === null ? <span className="muted">Not yet known</span> : `#${result.blockHeight.toLocaleString('en-US')}`}</Row>
        <Row label="Confirmations">
          {confirmations === null ? <span className="muted">Not yet known</span> : (
            <span className={confirmationsStrong(confirmations) ? 'badge-green' : 'badge-yellow'}>{confirmations.toLocaleString('en-US')} ({confirmationLabel(confirmations)})</span>
          )}
        </Row>
      </dl>
      <div className="mt-3 grid gap-3 sm:grid-cols-2">
        <Flag ok={result.quantumShield} label="Quantum shield" detail="ML-DSA-65 signature of the checkpoint, checked in your browser" />
        <Flag ok={result.dualSignature} label="Dual signature" detail="ECDSA P-256 and ML-DSA-65 signatures, both checked in your browser" />
      </div>
      <p className="muted mt-3 text-xs">
        Inclusion proof rebuilt from the public tiles and checked against the signed checkpoint ({result.treeSize.toLocaleString('en-US')} hashes, leaf #{result.leafIndex}). {result.bytesFetched.toLocaleString('en-US')} bytes downloaded.
      </p>
    </div>
  );
}
