// Home "Live System Status" (the status card's states; docs/API.md "Status"): the queue-stats card refreshed every
// 30 s, and the collapsible countdown card (Show/Hide) to the next ledger at 00:01 UTC.
import { useEffect, useState } from 'react';
import { formatDateTime, formatLedgerDate } from '../lib/format.ts';
import { fetchQueueStats, REFRESH_MS, type QueueStats } from '../lib/status.ts';
import Countdown from './Countdown.tsx';

type State = { kind: 'loading' } | { kind: 'error' } | { kind: 'loaded'; stats: QueueStats };

export function useQueueStats(onLoad?: () => void): State {
  const [state, setState] = useState<State>({ kind: 'loading' });
  useEffect(() => {
    let alive = true;
    const load = () =>
      fetchQueueStats().then(
        (stats) => {
          if (!alive) return;
          setState({ kind: 'loaded', stats });
          onLoad?.();
        },
        (err: unknown) => {
          console.error('queue stats', err);
          if (alive) setState({ kind: 'error' });
        },
      );
    void load();
    const id = setInterval(load, REFRESH_MS);
    return () => {
      alive = false;
      clearInterval(id);
    };
  }, []);
  return state;
}

/** The status badge: green, or red while submissions are paused. */
export function QueueBadge({ stats }: { stats: QueueStats }) {
  return <span className={stats.submissionsOpen === false ? 'badge-red' : 'badge-green'}>{stats.status}</span>;
}

/** The two days the queue stats name, each under what it is: the last ledger published (signed) and the last
 *  day confirmed in Bitcoin. A published ledger is not anchored until a block confirms it, hours later. */
export function QueueDays({ stats }: { stats: QueueStats }) {
  const day = (d: string | undefined) => (d ? formatLedgerDate(d) : 'None yet');
  return (
    <>
      {stats.lastPublishedDay !== undefined && (
        <div data-testid="latest-published">
          <dt className="muted text-xs">Latest published ledger</dt>
          <dd className="font-semibold">{day(stats.lastPublishedDay)}</dd>
        </div>
      )}
      <div data-testid="latest-anchored">
        <dt className="muted text-xs">Latest anchored day</dt>
        <dd className="font-semibold">{day(stats.latestAnchoredDay)}</dd>
      </div>
    </>
  );
}

/** Why submissions are paused, when they are. */
export function QueueProblem({ stats }: { stats: QueueStats }) {
  if (stats.submissionsOpen !== false || !stats.problem) return null;
  return (
    <p className="mt-4 text-sm text-red-700 dark:text-red-400" role="alert" data-testid="queue-problem">
      {stats.problem}
    </p>
  );
}

export default function SystemStatus() {
  const state = useQueueStats();
  const [showCountdown, setShowCountdown] = useState(true);
  return (
    <div className="grid gap-6 md:grid-cols-2">
      <section className="card" aria-labelledby="queue-card-title" data-testid="queue-card" data-state={state.kind}>
        <div className="flex items-center justify-between gap-2">
          <h3 id="queue-card-title" className="card-title">
            Submission queue
          </h3>
          {state.kind === 'loaded' && <QueueBadge stats={state.stats} />}
          {state.kind === 'error' && <span className="badge-red">Error</span>}
        </div>
        {state.kind === 'loading' && <p className="muted mt-4">Loading stats...</p>}
        {state.kind === 'error' && (
          <p className="mt-4 text-sm text-red-700 dark:text-red-400">
            Unable to load queue stats. Will retry in 30 seconds.
          </p>
        )}
        {state.kind === 'loaded' && <QueueProblem stats={state.stats} />}
        {state.kind === 'loaded' && (
          <dl className="mt-4 grid grid-cols-2 gap-4">
            <div className="col-span-2">
              <dt className="muted text-xs">Hashes waiting for the next ledger</dt>
              <dd className="text-2xl font-bold tabular-nums">{state.stats.queueSize.toLocaleString('en-US')}</dd>
            </div>
            <QueueDays stats={state.stats} />
            <div className="col-span-2">
              <dt className="muted text-xs">Last update</dt>
              <dd className="text-sm">{state.stats.lastUpdate ? formatDateTime(state.stats.lastUpdate) : '—'}</dd>
            </div>
          </dl>
        )}
      </section>
      <section className="card" aria-labelledby="countdown-card-title">
        <div className="flex items-center justify-between gap-2">
          <h3 id="countdown-card-title" className="card-title">
            Next ledger
          </h3>
          <button
            type="button"
            className="link text-sm"
            onClick={() => setShowCountdown((s) => !s)}
            aria-expanded={showCountdown}
            aria-controls="home-countdown"
          >
            {showCountdown ? 'Hide' : 'Show'}
          </button>
        </div>
        <div id="home-countdown" hidden={!showCountdown}>
          <p className="mt-4 text-4xl font-bold">
            <Countdown />
          </p>
          <p className="muted mt-2 text-sm">
            Generated and dual-signed daily at 00:01 UTC, submitted to Bitcoin anchoring at 00:02 UTC.
          </p>
        </div>
      </section>
    </div>
  );
}
