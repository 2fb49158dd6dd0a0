// The Live status page (/live): queue, Bitcoin anchoring and next-ledger cards, reloaded every
// 30 seconds, each load followed by a 1-second highlight pulse; below them the last 90 days as two small charts
// (LiveCharts.tsx: submissions per day, anchoring delay), asked for again only when a new day is published.
// The pending count is people's submissions: the offline verifier's own release, which the server enqueues when
// it starts (pipeline/verifier-release.ts, listed in /ledgers/offline-verifier.json), is said apart.
import { useEffect, useRef, useState } from 'react';
import { VERIFIER_ARCHIVE_PATH } from '../../../core/archive-paths.ts';
import { archiveUrl } from '../lib/archive-url.ts';
import { formatDateTime, formatLedgerDate } from '../lib/format.ts';
import { fetchOtsStatus, PULSE_MS, REFRESH_MS, type OtsStatusFile } from '../lib/status.ts';
import Countdown from './Countdown.tsx';
import LiveCharts from './LiveCharts.tsx';
import { QueueBadge, QueueDays, QueueProblem, useQueueStats } from './SystemStatus.tsx';

export default function LiveStatus() {
  const [pulse, setPulse] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const highlight = () => {
    setPulse(true);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setPulse(false), PULSE_MS);
  };
  const queue = useQueueStats(highlight);
  const [ots, setOts] = useState<OtsStatusFile | null | 'loading'>('loading');
  useEffect(() => {
    const load = () =>
      fetchOtsStatus().then(setOts, (err: unknown) => {
        console.error('ots status', err);
        setOts(null);
      });
    void load();
    const id = setInterval(load, REFRESH_MS);
    return () => clearInterval(id);
  }, []);
  const [releases, setReleases] = useState<{ ledger_date?: unknown }[]>([]);
  useEffect(() => {
    fetch(archiveUrl(VERIFIER_ARCHIVE_PATH), { cache: 'no-cache' })
      .then((r) => (r.ok ? (r.json() as Promise<{ releases?: unknown }>) : { releases: [] }))
      .then((v) => setReleases(Array.isArray(v.releases) ? (v.releases as { ledger_date?: unknown }[]) : []))
      .catch(() => setReleases([]));
  }, []);
  const cardClass = `card ${pulse ? 'pulse-highlight' : ''}`;
  const releasesQueued =
    queue.kind === 'loaded'
      ? releases.filter(
          (r) => typeof r.ledger_date === 'string' && r.ledger_date > (queue.stats.lastPublishedDay ?? ''),
        ).length
      : 0;
  const pending = queue.kind === 'loaded' ? Math.max(0, queue.stats.queueSize - releasesQueued) : 0;
  return (
    <div>
      <div className="grid gap-6 md:grid-cols-3" data-pulse={pulse || undefined}>
        <section
          className={cardClass}
          aria-labelledby="live-queue-title"
          data-testid="live-queue"
          data-state={queue.kind}
        >
          <div className="flex items-center justify-between gap-2">
            <h2 id="live-queue-title" className="card-title">
              Queue status
            </h2>
            {queue.kind === 'loaded' && <QueueBadge stats={queue.stats} />}
            {queue.kind === 'error' && <span className="badge-red">Error</span>}
          </div>
          {queue.kind === 'loading' && <p className="muted mt-4">Loading stats...</p>}
          {queue.kind === 'error' && (
            <p className="mt-4 text-sm text-red-700 dark:text-red-400">
              Unable to load queue stats. Will retry in 30 seconds.
            </p>
          )}
          {queue.kind === 'loaded' && <QueueProblem stats={queue.stats} />}
          {queue.kind === 'loaded' && (
            <dl className="mt-4 space-y-3">
              <div>
                <dt className="muted text-xs">Last update</dt>
                <dd className="text-sm">{queue.stats.lastUpdate ? formatDateTime(queue.stats.lastUpdate) : '—'}</dd>
              </div>
              <div>
                <dt className="muted text-xs">Pending submissions (for the next ledger)</dt>
                <dd className="text-3xl font-bold tabular-nums" data-testid="pending-count">
                  {pending.toLocaleString('en-US')}
                </dd>
                <dd className="muted text-sm">{pending === 0 ? 'All caught up!' : 'Waiting for next ledger'}</dd>
                {releasesQueued > 0 && queue.stats.queueSize >= releasesQueued && (
                  <dd className="muted mt-1 text-xs" data-testid="release-queued">
                    Also queued: the offline verifier&apos;s own release, timestamped in the next ledger like every
                    release.
                  </dd>
                )}
              </div>
              <QueueDays stats={queue.stats} />
            </dl>
          )}
        </section>
        <section className={cardClass} aria-labelledby="live-btc-title" data-testid="live-bitcoin">
          <h2 id="live-btc-title" className="card-title">
            Bitcoin anchoring
          </h2>
          {ots === 'loading' ? (
            <p className="muted mt-4">Loading stats...</p>
          ) : ots && ots.latest_ots_ok ? (
            <div className="mt-4">
              <p className="text-2xl font-bold">{formatLedgerDate(ots.latest_ots_ok)}</p>
              <p className="mt-1">
                <span className="badge-green">Confirmed on blockchain</span>
              </p>
            </div>
          ) : (
            <div className="mt-4">
              <p className="text-2xl font-bold">No confirmations yet</p>
              <p className="muted mt-1 text-sm">Awaiting first confirmation</p>
            </div>
          )}
          {ots && ots !== 'loading' && ots.last_update && (
            <p className="muted mt-4 text-xs">Status updated {formatDateTime(ots.last_update)}</p>
          )}
        </section>
        <section className={cardClass} aria-labelledby="live-next-title">
          <h2 id="live-next-title" className="card-title">
            Next ledger generation
          </h2>
          <p className="mt-4 text-3xl font-bold">
            <Countdown />
          </p>
          <p className="muted mt-2 text-sm">Daily at 00:01 UTC</p>
        </section>
      </div>
      <section className="card mt-6" aria-labelledby="live-history-title" data-testid="live-history">
        <h2 id="live-history-title" className="card-title">
          The last 90 days
        </h2>
        <LiveCharts
          lastPublishedDay={queue.kind === 'loaded' ? queue.stats.lastPublishedDay : undefined}
          serverNow={queue.kind === 'loaded' ? queue.stats.lastUpdate : undefined}
        />
      </section>
      <p className="muted mt-6 flex items-center gap-2 text-sm" data-testid="auto-refresh">
        <span className="inline-block h-2 w-2 animate-pulse rounded-full bg-emerald-500" aria-hidden="true"></span>
        This page refreshes automatically every 30 seconds.
      </p>
    </div>
  );
}
