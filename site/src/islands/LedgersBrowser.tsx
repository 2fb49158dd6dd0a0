// Browse ledgers (the /ledgers page; docs/API.md "Status"): GET /api/ledgers.php for the list and the
// OTS status, enriched with /api/ots-block-info.php and one /api/verify-quantum.php per date (silent on
// failure), and block_info.json's `pending` for why a day is not anchored yet: its OTS Proof is a
// disabled "pending" control until the file exists. When the API cannot list ledgers, the static archive's own days.json and status files
// are read instead, so the page works from any static copy of the archive.
import { useEffect, useState } from 'react';
import { confirmationLabel, confirmationsStrong, formatLedgerDate } from '../lib/format.ts';
import { getJson } from '../lib/api.ts';
import type { OtsStatusFile } from '../lib/status.ts';

export interface LedgerItem {
  date: string;
  jsonUrl: string;
  otsUrl: string;
  otsStatus: 'verified' | 'pending';
  signatureVerified: boolean;
  blockHeight?: number;
  confirmations?: number;
  quantumShield?: boolean;
  dualSignature?: boolean;
  /** From block_info.json `pending` (beyond the spec): why the day is not confirmed yet; 'not-stamped' means
   *  its `.json.ots` does not exist yet. */
  anchoring?: { state: string; reason: string };
  /** The ledger file's RFC 3161 tokens, checked by the server (GET /api/ledgers.php; beyond the spec). */
  rfc3161?: { url: string; genTime: string; tsa: string }[];
}
interface LedgersAnswer { ledgers: LedgerItem[]; otsStatus: OtsStatusFile | null }
type BlockInfo = {
  ledgers?: Record<string, { block_height?: number; confirmations?: number }>;
  pending?: Record<string, { state?: string; reason?: string }>;
};

async function fromArchive(): Promise<LedgersAnswer> {
  const days = await getJson<{ days: { date: string }[] }>('/ledgers/days.json');
  const ots = await getJson<OtsStatusFile>('/ledgers/ots_status.json').catch(() => null);
  const latest = ots?.latest_ots_ok ?? '';
  return {
    otsStatus: ots,
    ledgers: days.days.map((d): LedgerItem => ({
      date: d.date,
      jsonUrl: `/ledgers/${d.date}.json`,
      otsUrl: `/ledgers/${d.date}.json.ots`,
      otsStatus: latest !== '' && latest >= d.date ? 'verified' : 'pending',
      signatureVerified: false,
    })).reverse(),
  };
}

async function loadLedgers(): Promise<LedgersAnswer> {
  try {
    return await getJson<LedgersAnswer>('/api/ledgers.php');
  } catch (err) {
    console.warn('ledgers API unavailable, reading the archive', err);
    return fromArchive();
  }
}

async function loadBlockInfo(): Promise<BlockInfo> {
  try {
    return await getJson<BlockInfo>('/api/ots-block-info.php');
  } catch {
    return getJson<BlockInfo>('/ledgers/block_info.json');
  }
}

/** Why each unconfirmed day is not confirmed yet: the archive's block_info.json `pending` (the API answers
 *  only the confirmed days). */
async function loadPending(): Promise<NonNullable<BlockInfo['pending']>> {
  return getJson<BlockInfo>('/ledgers/block_info.json').then((b) => b.pending ?? {}, () => ({}));
}

/** The day's OTS file exists once it is anchored or the calendars hold it (state pending / unverified);
 *  before that (not stamped, or not known) there is nothing to download. */
function otsFileExists(item: LedgerItem): boolean {
  return item.otsStatus === 'verified' || item.anchoring?.state === 'pending' || item.anchoring?.state === 'unverified';
}

function LedgerCard({ item }: { item: LedgerItem }) {
  const anchored = item.otsStatus === 'verified';
  const base = `/ledgers/${item.date}.json`;
  return (
    <article className="card flex flex-col" data-testid="ledger-card" data-date={item.date}>
      <h3 className="card-title">{formatLedgerDate(item.date)}</h3>
      <p className="muted font-mono text-xs">{item.date}</p>
      <div className="mt-3 flex flex-wrap gap-1.5">
        {item.quantumShield && <span className="badge-violet">Quantum Shield</span>}
        {(item.signatureVerified || item.dualSignature) && <span className="badge-blue">Signed</span>}
        {anchored ? <span className="badge-green">Anchored</span> : <span className="badge-yellow">Pending</span>}
        {item.rfc3161 && item.rfc3161.length > 0 && <span className="badge-blue" title="RFC 3161 time-stamp tokens of the ledger file">RFC 3161</span>}
      </div>
      <dl className="mt-4 space-y-1 text-sm">
        <div className="flex justify-between gap-2">
          <dt className="muted">Bitcoin block</dt>
          <dd className="font-medium">{item.blockHeight !== undefined ? `#${item.blockHeight.toLocaleString('en-US')}` : '—'}</dd>
        </div>
        <div className="flex justify-between gap-2">
          <dt className="muted">Confirmations</dt>
          <dd>
            {item.confirmations !== undefined ? (
              <span className={confirmationsStrong(item.confirmations) ? 'badge-green' : 'badge-yellow'}>
                {item.confirmations.toLocaleString('en-US')} · {confirmationLabel(item.confirmations)}
              </span>
            ) : '—'}
          </dd>
        </div>
      </dl>
      <div className="mt-4 grid gap-2">
        <a className="btn-primary" href={item.jsonUrl} download>Download Ledger</a>
        <div className="grid grid-cols-2 gap-2">
          <a className="btn-secondary px-2 text-xs" href={`${base}.signatures.json`} download>Signature Metadata</a>
          <a className="btn-secondary px-2 text-xs" href={`${base}.sig`} download>ECDSA P-256 Signature</a>
          <a className="btn-secondary px-2 text-xs" href={`${base}.dilithium.sig`} download>ML-DSA-65 Signature</a>
          <a className="btn-secondary px-2 text-xs" href={`/ledgers/${item.date}.checkpoint`} download>Checkpoint</a>
          {otsFileExists(item) ? (
            <a className="btn-secondary px-2 text-xs" href={item.otsUrl} download>OTS Proof</a>
          ) : (
            <button type="button" className="btn-secondary col-span-2 px-2 text-xs" disabled aria-describedby={`ots-reason-${item.date}`}>OTS proof: pending, usually within 24 hours</button>
          )}
        </div>
        {item.rfc3161?.map((t) => (
          <p key={t.url} className="muted text-xs" data-testid="rfc3161">
            <a className="link" href={t.url} download>RFC 3161 time-stamp</a>: {t.genTime.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')} by {t.tsa}
          </p>
        ))}
        {!otsFileExists(item) && (
          <p id={`ots-reason-${item.date}`} className="muted text-xs" data-testid="ots-reason">
            No OpenTimestamps file yet: {item.anchoring?.reason ?? 'the ledger is submitted for Bitcoin anchoring at 00:02 UTC'}.
          </p>
        )}
      </div>
    </article>
  );
}

export default function LedgersBrowser() {
  const [loading, setLoading] = useState(true);
  const [ledgers, setLedgers] = useState<LedgerItem[]>([]);
  const [ots, setOts] = useState<OtsStatusFile | null>(null);

  useEffect(() => {
    let alive = true;
    loadLedgers()
      .then(async (answer) => {
        if (!alive) return;
        setLedgers(answer.ledgers);
        setOts(answer.otsStatus);
        setLoading(false);
        const [blocks, pending] = await Promise.all([loadBlockInfo().catch(() => ({}) as BlockInfo), loadPending()]);
        const quantum = await Promise.all(
          answer.ledgers.map((l) =>
            getJson<{ quantum_shield?: boolean; dual_signature?: boolean }>(`/api/verify-quantum.php?date=${l.date}`).catch(() => null),
          ),
        );
        if (!alive) return;
        setLedgers(answer.ledgers.map((l, i) => {
          const b = blocks.ledgers?.[l.date];
          const q = quantum[i];
          const p = pending[l.date];
          return {
            ...l,
            ...(typeof p?.state === 'string' && typeof p.reason === 'string' ? { anchoring: { state: p.state, reason: p.reason } } : {}),
            ...(typeof b?.block_height === 'number' ? { blockHeight: b.block_height } : {}),
            ...(typeof b?.confirmations === 'number' ? { confirmations: b.confirmations } : {}),
            ...(q ? { quantumShield: !!q.quantum_shield, dualSignature: !!q.dual_signature } : {}),
          };
        }));
      })
      .catch((err: unknown) => {
        console.error('ledgers', err);
        if (alive) setLoading(false);
      });
    return () => {
      alive = false;
    };
  }, []);

  return (
    <div>
      {ots ? (
        <section className="card mb-8" aria-labelledby="ots-card-title" data-testid="ots-card">
          <h2 id="ots-card-title" className="card-title">Bitcoin anchoring (OpenTimestamps)</h2>
          <div className="mt-3 flex flex-wrap items-center gap-3">
            {ots.latest_ots_ok ? (
              <p>Latest anchored day: <strong>{formatLedgerDate(ots.latest_ots_ok)}</strong></p>
            ) : (
              <p className="font-semibold">Verification pending</p>
            )}
            {ots.queue_size > 0 && (
              <span className="badge-yellow" data-testid="ots-pending">
                {ots.queue_size.toLocaleString('en-US')} {ots.queue_size === 1 ? 'ledger' : 'ledgers'} awaiting Bitcoin confirmation
              </span>
            )}
          </div>
        </section>
      ) : !loading && (
        <section className="card mb-8" data-testid="ots-card"><p className="muted">No OTS data available</p></section>
      )}
      {loading ? (
        <div className="flex items-center gap-3 py-12" role="status">
          <span className="h-5 w-5 animate-spin rounded-full border-2 border-emerald-500 border-t-transparent" aria-hidden="true"></span>
          <span className="muted">Loading ledgers...</span>
        </div>
      ) : ledgers.length === 0 ? (
        <div className="card py-12 text-center" data-testid="ledgers-empty">
          <h2 className="text-xl font-semibold">No Ledgers Found</h2>
          <p className="muted mt-2">Ledgers are generated daily at 00:01 UTC. Check back after the next generation.</p>
        </div>
      ) : (
        <div className="grid gap-6 sm:grid-cols-2 lg:grid-cols-3">
          {ledgers.map((l) => <LedgerCard key={l.date} item={l} />)}
        </div>
      )}
    </div>
  );
}
