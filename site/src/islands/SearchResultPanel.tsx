// The result of a verified search (the /verify page: ledger date, timestamp, ledger download, OTS status, block
// height, confirmations, quantum shield and dual signature), every flag being what the browser checked; and
// what a person needs to verify it offline: the proof bundle (GET /api/proof/<hash>, saved as
// timeseal-proof-<first 12 hex>.json), the same proof as a c2sp.org/tlog-proof@v1 file (GET
// /api/proof/<hash>.tlog-proof, docs/FORMAT.md §8a), the per-hash .ots once the day is anchored, the day's RFC
// 3161 tokens, the certificate and the offline verifier. A hash no published ledger holds but the server has
// queued is said so once, with the ledger's publication time; a day whose anchoring is delayed says why
// (lib/anchoring.ts, the same words as the /ledgers cards).
import { useEffect, useState } from 'react';
import { confirmationLabel, confirmationsStrong, formatDateTime, formatLedgerDate } from '../lib/format.ts';
import { anchoringNote } from '../../../core/anchoring-note.ts';
import { AnchoringNoteView } from './AnchoringNote.tsx';
import { getJson } from '../lib/api.ts';
import { toast } from '../lib/toast.ts';
import type { SearchResult } from '../lib/verified-search.ts';

/** Saves GET /api/proof/<hash> under `name` (the server's Content-Disposition names it after the whole hash,
 *  and a download attribute cannot override that; a blob URL can). Without JavaScript the link still works. */
async function saveProofBundle(hash: string, name: string): Promise<void> {
  try {
    const res = await fetch(`/api/proof/${hash}`, { credentials: 'include' });
    if (!res.ok) throw new Error(`${res.status}: ${res.statusText}`);
    const url = URL.createObjectURL(await res.blob());
    const a = document.createElement('a');
    a.href = url;
    a.download = name;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  } catch (err) {
    console.error('proof bundle', err);
    toast({
      title: 'Download failed',
      description: 'The proof bundle could not be downloaded. Please try again.',
      variant: 'destructive',
    });
  }
}

/** A verdict: its plain label, and the technical term (the algorithms) as the label's tooltip when given. */
function Flag({ ok, label, detail, term }: { ok: boolean; label: string; detail: string; term?: string }) {
  return (
    <div className="flex items-start gap-2" data-flag={label} data-ok={ok}>
      <span
        aria-hidden="true"
        className={`mt-0.5 inline-flex h-5 w-5 shrink-0 items-center justify-center rounded-full text-xs font-bold ${ok ? 'bg-emerald-600 text-white' : 'bg-red-600 text-white'}`}
      >
        {ok ? '✓' : '✕'}
      </span>
      <div>
        <p className="text-sm font-semibold">
          {term ? (
            <abbr title={term} className="cursor-help no-underline decoration-dotted hover:underline">
              {label}
            </abbr>
          ) : (
            label
          )}
          : {ok ? 'Verified' : 'Not verified'}
        </p>
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

/** The day's RFC 3161 tokens of its ledger file, as the server checked them: the one-day page of
 *  /api/ledgers.php (`rfc3161`: [] without any). Asking the ledger list instead of the files themselves means no
 *  request for a token a default install does not have; a static copy of the archive without the API shows none. */
function useTimeStampTokens(date: string | null): { url: string }[] {
  const [tokens, setTokens] = useState<{ url: string }[]>([]);
  useEffect(() => {
    if (date === null) return;
    let live = true;
    const after = new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    getJson<{ ledgers: { date: string; rfc3161?: { url: string }[] }[] }>(
      `/api/ledgers.php?before=${after}&limit=1`,
    ).then(
      (page) => live && setTokens(page.ledgers.find((l) => l.date === date)?.rfc3161 ?? []),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [date]);
  return tokens;
}

/** A hash the server holds for a ledger not published yet (GET /api/status/<hash>, `queued`). */
export interface QueuedHash {
  ledgerDate: string;
  submittedAt: string;
  publishedAt: string;
}

/** "Queued for the ledger of D, published at 00:01 UTC on D+1": the time as the server gave it. */
export function queuedSentence(q: QueuedHash): string {
  const at = q.publishedAt.slice(11, 16);
  return `Queued for the ledger of ${q.ledgerDate}, published at ${/^\d\d:\d\d$/.test(at) ? `${at} UTC on ${q.publishedAt.slice(0, 10)}` : q.publishedAt}`;
}

export default function SearchResultPanel({
  result,
  queued = null,
}: {
  result: SearchResult;
  queued?: QueuedHash | null;
}) {
  const tokens = useTimeStampTokens(result.found ? result.date : null);
  if (!result.found && queued) {
    return (
      <div
        role="status"
        className="mt-4 rounded-lg border border-sky-300 bg-sky-50 p-4 dark:border-sky-700 dark:bg-sky-950/50"
        data-testid="search-result"
        data-found="false"
        data-queued="true"
      >
        <p className="font-semibold text-sky-900 dark:text-sky-200" data-testid="queued">
          {queuedSentence(queued)}
        </p>
        <p className="mt-1 text-sm text-sky-900 dark:text-sky-200">
          Submitted <time dateTime={queued.submittedAt}>{formatDateTime(queued.submittedAt)}</time>. Search again once
          the ledger is published: your browser then checks its signatures and the inclusion proof.
        </p>
      </div>
    );
  }
  if (!result.found) {
    return (
      <div
        role="status"
        className="mt-4 rounded-lg border border-amber-300 bg-amber-50 p-4 dark:border-amber-700 dark:bg-amber-950/50"
        data-testid="search-result"
        data-found="false"
      >
        <p className="font-semibold text-amber-900 dark:text-amber-200">Not found in any ledger</p>
        <p className="mt-1 text-sm text-amber-900 dark:text-amber-200">
          Hashes submitted today appear after the next ledger is published at 00:01 UTC.
        </p>
      </div>
    );
  }
  const delayed =
    result.otsStatus === 'verified' ? null : anchoringNote(result.date!, result.anchoring, result.statusWrittenAt);
  const confirmations = result.confirmations;
  const bundleName = `timeseal-proof-${result.hash.slice(0, 12)}.json`;
  return (
    <div
      role="status"
      className="mt-4 rounded-lg border border-emerald-300 bg-emerald-50/60 p-4 dark:border-emerald-800 dark:bg-emerald-950/40"
      data-testid="search-result"
      data-found="true"
    >
      <p className="font-semibold text-emerald-900 dark:text-emerald-200">
        Found in the ledger of {formatLedgerDate(result.date!)}
      </p>
      <dl className="mt-2 divide-y divide-emerald-200 dark:divide-emerald-900">
        <Row label="Ledger date">
          <span data-testid="result-date">{result.date}</span>
        </Row>
        <Row label="Timestamp">
          <time dateTime={result.timestamp!}>{formatDateTime(result.timestamp!)}</time>
        </Row>
        <Row label="Ledger">
          <a className="link" href={result.ledgerUrl!} download>
            Download Ledger ({result.date}.json)
          </a>
        </Row>
        <Row label="OTS status">
          {result.otsStatus === 'verified' ? (
            <span className="badge-green">Anchored (verified)</span>
          ) : delayed ? (
            <AnchoringNoteView note={delayed} />
          ) : (
            <span className="badge-yellow">Pending</span>
          )}
        </Row>
        <Row label="Bitcoin block">
          {result.blockHeight === null ? (
            <span className="muted">Not yet known</span>
          ) : (
            `#${result.blockHeight.toLocaleString('en-US')}`
          )}
        </Row>
        <Row label="Confirmations">
          {confirmations === null ? (
            <span className="muted">Not yet known</span>
          ) : (
            <span className={confirmationsStrong(confirmations) ? 'badge-green' : 'badge-yellow'}>
              {confirmations.toLocaleString('en-US')} ({confirmationLabel(confirmations)})
            </span>
          )}
        </Row>
      </dl>
      <div className="mt-3 grid gap-3 sm:grid-cols-2">
        <Flag
          ok={result.quantumShield}
          label="Quantum shield"
          detail="ML-DSA-65 signature of the checkpoint, checked in your browser"
        />
        <Flag
          ok={result.dualSignature}
          label="Dual signature"
          detail="ECDSA P-256 and ML-DSA-65 signatures, both checked in your browser"
        />
        {result.signers?.includes('Ed25519') && result.signers.includes('ML-DSA-44') && (
          <Flag
            ok
            label="Signatures independent witnesses can check"
            term="Ed25519 and ML-DSA-44 signatures of the checkpoint (C2SP signed note)"
            detail="Two more signatures of this checkpoint, of the kinds independent witnesses check, checked in your browser"
          />
        )}
        {/* The verdict is the witness policy's (core/witness-policy.ts), whatever its groups; a count is shown
            beside it only where counting is the whole rule. */}
        {result.witnesses !== undefined && result.witnessQuorumMet !== undefined && (
          <Flag
            ok={result.witnessQuorumMet}
            label="Witnessed"
            detail={`${result.witnesses.filter((w) => w.cosigned).length} of ${result.witnesses.length} independent witnesses cosigned this checkpoint (${result.witnessQuorum !== undefined ? `${result.witnessQuorum} required` : `the witness policy's quorum is ${result.witnessQuorumMet ? 'met' : 'not met'}`}): ${result.witnesses.map((w) => `${w.name} ${w.cosigned ? '✓' : '✕'}`).join(', ')}`}
          />
        )}
      </div>
      <section
        className="mt-4 border-t border-emerald-200 pt-3 dark:border-emerald-900"
        aria-labelledby="proof-downloads-title"
        data-testid="proof-downloads"
      >
        <h3 id="proof-downloads-title" className="text-sm font-semibold">
          Keep the proof
        </h3>
        <p className="muted mt-1 text-xs">
          The proof bundle holds the signed checkpoint and the inclusion path of this hash: with your file it verifies
          in the{' '}
          <a className="link" href="/offline-verifier.html">
            offline verifier
          </a>
          , with no network and without us. The proof for log tools is the same proof in the standard format that other
          transparency-log tools read.
        </p>
        <div className="mt-2 flex flex-wrap items-center gap-2">
          <a
            className="btn-primary px-3 py-1.5"
            href={`/api/proof/${result.hash}`}
            download={bundleName}
            onClick={(e) => {
              e.preventDefault();
              void saveProofBundle(result.hash, bundleName);
            }}
          >
            Download proof bundle
          </a>
          <a
            className="btn-secondary px-3 py-1.5"
            href={`/api/proof/${result.hash}.tlog-proof`}
            download={`${result.hash}.tlog-proof`}
            data-testid="tlog-proof-download"
            title="c2sp.org/tlog-proof@v1 (.tlog-proof file)"
          >
            Download the proof for log tools
          </a>
          {result.otsStatus === 'verified' ? (
            <a className="btn-secondary px-3 py-1.5" href={`/api/proof/${result.hash}.ots`} download>
              Download OTS proof (.ots)
            </a>
          ) : (
            <span className="badge-yellow" data-testid="ots-pending">
              {delayed
                ? `OTS proof: not available yet (${delayed.kind === 'delayed' ? 'anchoring delayed' : 'not anchored yet'})`
                : 'OTS proof: pending, usually within 24 hours'}
            </span>
          )}
          {tokens.map((t, i) => (
            <a key={t.url} className="btn-secondary px-3 py-1.5" href={t.url} download data-testid="rfc3161-download">
              Download RFC 3161 time-stamp{tokens.length > 1 ? ` ${i + 1}` : ''} (.tsr)
            </a>
          ))}
          <a
            className="btn-secondary px-3 py-1.5"
            href={`/api/certificate.php?hash=${result.hash}&format=pdf`}
            download
          >
            Download certificate (PDF)
          </a>
          <a
            className="btn-secondary px-3 py-1.5"
            href={`/api/certificate.php?hash=${result.hash}`}
            target="_blank"
            rel="noopener"
          >
            View certificate
          </a>
        </div>
        <p className="muted mt-2 text-xs">
          Public keys, if your copy of the verifier asks for them:{' '}
          <a className="link" href="/keys/public.pem" download>
            ECDSA P-256
          </a>{' '}
          ·{' '}
          <a className="link" href="/keys/dilithium_public.key" download>
            ML-DSA-65
          </a>
          {result.signers?.includes('Ed25519') && (
            <>
              {' '}
              ·{' '}
              <a className="link" href="/keys/ed25519.vkey" download>
                Ed25519 (vkey)
              </a>{' '}
              ·{' '}
              <a className="link" href="/keys/mldsa44.vkey" download>
                ML-DSA-44 (vkey)
              </a>
            </>
          )}
          {result.witnesses !== undefined && (
            <>
              {' '}
              ·{' '}
              <a className="link" href="/keys/witnesses" download>
                witnesses
              </a>
            </>
          )}
        </p>
      </section>
      <p className="muted mt-3 text-xs">
        Inclusion proof rebuilt from the public tiles and checked against the signed checkpoint (
        {result.treeSize.toLocaleString('en-US')} hashes, leaf #{result.leafIndex}).{' '}
        {result.bytesFetched.toLocaleString('en-US')} bytes downloaded.
      </p>
    </div>
  );
}
