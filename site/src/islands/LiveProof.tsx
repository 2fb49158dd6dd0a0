// The live proof of the sealed disclosure document (the Quantum Shield page, Home "Live Proof"): its
// SHA-256 is computed at build time from docs/sealed-disclosure.md and passed in; every other value — time,
// ledger date, block, confirmations, badges — comes from the archive through the verified search, so the
// badges say what this browser checked. Nothing here is hard-coded.
import { useEffect, useState } from 'react';
import { confirmationLabel, confirmationsStrong, formatDateTime, formatLedgerDate } from '../lib/format.ts';
import { verifiedSearch, type SearchResult } from '../lib/verified-search.ts';
import CopyButton from './CopyButton.tsx';

type State = { kind: 'loading' } | { kind: 'done'; result: SearchResult } | { kind: 'error'; message: string };

function Badge({ ok, yes, no }: { ok: boolean; yes: string; no: string }) {
  return (
    <span className={ok ? 'badge-green' : 'badge-yellow'} data-ok={ok}>
      {ok ? '✓ ' : '… '}
      {ok ? yes : no}
    </span>
  );
}

export function certificateUrl(hash: string): string {
  return `/api/certificate.php?hash=${hash}`;
}

export default function LiveProof({ hash, compact = false }: { hash: string; compact?: boolean }) {
  const [state, setState] = useState<State>({ kind: 'loading' });
  const [generating, setGenerating] = useState(false);
  useEffect(() => {
    verifiedSearch(hash, undefined, { otherLines: false }).then(
      (result) => setState({ kind: 'done', result }),
      (err: unknown) => {
        console.error('live proof', err);
        setState({ kind: 'error', message: err instanceof Error ? err.message : String(err) });
      },
    );
  }, [hash]);

  const verifyHref = `/verify?hash=${hash}&search=true`;
  const result = state.kind === 'done' ? state.result : null;
  const found = result?.found === true;
  const generate = () => {
    setGenerating(true);
    window.open(certificateUrl(hash), '_blank', 'noopener');
    setTimeout(() => setGenerating(false), 1500);
  };

  return (
    <div data-testid="live-proof" data-state={state.kind} data-found={result ? String(found) : undefined}>
      <dl className="grid gap-4 sm:grid-cols-2">
        <div>
          <dt className="muted text-xs uppercase tracking-wide">Timestamped</dt>
          <dd className="mt-1 font-semibold" data-testid="proof-time">
            {state.kind === 'loading' ? 'Verifying…' : found ? formatDateTime(result!.timestamp!) : '—'}
          </dd>
        </div>
        <div>
          <dt className="muted text-xs uppercase tracking-wide">Ledger date</dt>
          <dd className="mt-1 font-semibold" data-testid="proof-date">
            {state.kind === 'loading' ? 'Verifying…' : found ? formatLedgerDate(result!.date!) : '—'}
          </dd>
        </div>
        <div>
          <dt className="muted text-xs uppercase tracking-wide">Bitcoin block</dt>
          <dd className="mt-1 font-semibold" data-testid="proof-block">
            {state.kind === 'loading' ? (
              'Verifying…'
            ) : found && result!.blockHeight !== null ? (
              <>
                #{result!.blockHeight.toLocaleString('en-US')}{' '}
                {result!.confirmations !== null && (
                  <span className={confirmationsStrong(result!.confirmations) ? 'badge-green' : 'badge-yellow'}>
                    {result!.confirmations >= 6 ? '6+' : result!.confirmations} confirmations (
                    {confirmationLabel(result!.confirmations)})
                  </span>
                )}
              </>
            ) : found ? (
              'Awaiting Bitcoin confirmation'
            ) : (
              '—'
            )}
          </dd>
        </div>
        <div className="sm:col-span-2">
          <dt className="muted text-xs uppercase tracking-wide">SHA-256 of the sealed document</dt>
          <dd className="mt-1 flex items-center gap-2">
            <code className="hash flex-1 rounded bg-slate-100 px-2 py-1 dark:bg-slate-800" data-testid="proof-hash">
              {hash}
            </code>
            <CopyButton value={hash} />
          </dd>
        </div>
      </dl>
      <div className="mt-4 flex flex-wrap gap-2" aria-live="polite">
        {state.kind === 'loading' && (
          <span className="badge-slate">Checking signatures and inclusion proof in your browser…</span>
        )}
        {result && found && (
          <>
            <Badge ok={result.ecdsaVerified} yes="ECDSA P-256 Verified" no="ECDSA P-256 not verified" />
            <Badge ok={result.quantumShield} yes="ML-DSA-65 Verified" no="ML-DSA-65 not verified" />
            <Badge ok={result.otsStatus === 'verified'} yes="Bitcoin Anchored" no="Bitcoin anchoring pending" />
          </>
        )}
        {result && !found && <span className="badge-yellow">Not yet in a published ledger of this archive</span>}
        {state.kind === 'error' && <span className="badge-red">Could not verify the proof: {state.message}</span>}
      </div>
      {!compact && (
        <div className="mt-6 flex flex-wrap gap-3">
          <a className="btn-primary" href={certificateUrl(hash)} target="_blank" rel="noopener">
            View Official Certificate
          </a>
          <button type="button" className="btn-secondary" onClick={generate} disabled={generating}>
            {generating ? 'Generating...' : 'Generate Verification Certificate'}
          </button>
          <a className="btn-secondary" href={verifyHref}>
            Verify Online
          </a>
          <a className="btn-secondary" href="/offline-verifier.html" target="_blank" rel="noopener">
            Download Offline Verifier
          </a>
        </div>
      )}
      {compact && (
        <div className="mt-6 flex flex-wrap gap-3">
          <a className="btn-primary" href="/quantum-shield">
            See the full proof
          </a>
          <a className="btn-secondary" href={verifyHref}>
            Verify it yourself
          </a>
        </div>
      )}
    </div>
  );
}
