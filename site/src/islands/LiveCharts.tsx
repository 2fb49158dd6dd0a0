// The service's recent life as two small pictures on /live (inline SVG, no chart library): submissions per day
// and how long each day's ledger has waited for its Bitcoin anchor, over the last 90 days. One request, GET
// /api/ledgers.php?limit=90 (entryCount and otsStatus of the newest 90 published days): the same cost on an
// archive of ten years as on one of ten days. Asked again only when a new day is published (the queue card's
// lastPublishedDay), not on every 30-second refresh.
//
// The archive says whether a day is anchored, not when it became so: an anchored day is drawn as anchored, and
// a day still waiting as a bar of the hours since its ledger was published (00:01 UTC the next day), counted
// to the server's clock (the queue card's lastUpdate), so a browser with a wrong clock draws the same picture.
import { useEffect, useRef, useState } from 'react';
import { publicationTime } from '../../../core/anchoring-note.ts';
import { getJson } from '../lib/api.ts';

export const CHART_DAYS = 90;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

interface Day {
  date: string;
  entryCount: number;
  otsStatus: 'verified' | 'pending';
}

const W = 450;
const H = 120;
const BAR = W / CHART_DAYS;

function Frame({
  id,
  title,
  desc,
  children,
  from,
  to,
  top,
  testid,
}: {
  id: string;
  title: string;
  desc: string;
  children: React.ReactNode;
  from: string;
  to: string;
  top: string;
  testid: string;
}) {
  return (
    <figure className="mt-3" data-testid={testid}>
      <div className="flex items-start gap-2">
        <span className="muted w-10 shrink-0 text-right text-[10px] leading-none tabular-nums" aria-hidden="true">
          {top}
        </span>
        <svg
          viewBox={`0 0 ${W} ${H}`}
          className="h-32 w-full min-w-0 overflow-visible"
          preserveAspectRatio="none"
          role="img"
          aria-labelledby={`${id}-title ${id}-desc`}
        >
          <title id={`${id}-title`}>{title}</title>
          <desc id={`${id}-desc`}>{desc}</desc>
          <line
            x1="0"
            y1={H}
            x2={W}
            y2={H}
            className="stroke-slate-300 dark:stroke-slate-700"
            strokeWidth="1"
            vectorEffect="non-scaling-stroke"
          />
          {children}
        </svg>
      </div>
      <div className="muted ml-12 mt-1 flex justify-between text-[10px] tabular-nums" aria-hidden="true">
        <span>{from}</span>
        <span>{to}</span>
      </div>
    </figure>
  );
}

/** The window's dates, oldest first: the 90 days ending on the newest published day (days without a ledger
 *  stay empty). */
function windowDates(newest: string): string[] {
  const end = Date.parse(`${newest}T00:00:00Z`);
  return Array.from({ length: CHART_DAYS }, (_, i) =>
    new Date(end - (CHART_DAYS - 1 - i) * DAY_MS).toISOString().slice(0, 10),
  );
}

export default function LiveCharts({ lastPublishedDay, serverNow }: { lastPublishedDay?: string; serverNow?: string }) {
  const [days, setDays] = useState<Day[] | null | 'error'>(null);
  const newest = Array.isArray(days) ? (days[0]?.date ?? '') : undefined;
  /** The published day the last request was made for ('' for the first). */
  const asked = useRef<string | null>(null);
  useEffect(() => {
    // The first load, then once more whenever the queue card names a day the charts do not have yet.
    if (
      asked.current !== null &&
      ((newest === undefined && days !== 'error') ||
        lastPublishedDay === undefined ||
        lastPublishedDay === newest ||
        lastPublishedDay === asked.current)
    )
      return;
    asked.current = asked.current === null ? '' : lastPublishedDay!;
    getJson<{ ledgers: Day[] }>(`/api/ledgers.php?limit=${CHART_DAYS}`).then(
      (page) => setDays(page.ledgers),
      (err: unknown) => {
        console.error('ledger history', err);
        setDays((d) => (Array.isArray(d) ? d : 'error'));
      },
    );
  }, [lastPublishedDay, newest, days]);

  if (days === null)
    return (
      <p className="muted mt-4 text-sm" data-state="loading">
        Loading the last 90 days...
      </p>
    );
  if (days === 'error')
    return <p className="mt-4 text-sm text-red-700 dark:text-red-400">The ledger history could not be loaded.</p>;
  if (days.length === 0)
    return (
      <p className="muted mt-4 text-sm" data-testid="charts-empty">
        No ledger published yet: the pictures start with the first one.
      </p>
    );

  const dates = windowDates(days[0]!.date);
  const byDate = new Map(days.map((d) => [d.date, d]));
  const shown = days.filter((d) => d.date >= dates[0]!);
  const busiest = shown.reduce((a, d) => (d.entryCount > a.entryCount ? d : a), shown[0]!);
  const max = Math.max(1, busiest.entryCount);
  const total = shown.reduce((n, d) => n + d.entryCount, 0);
  const now = Date.parse(serverNow ?? '') || Date.now();
  const waits = shown
    .filter((d) => d.otsStatus !== 'verified')
    .map((d) => ({ date: d.date, hours: Math.max(0, (now - publicationTime(d.date)) / HOUR_MS) }));
  const longest = waits.reduce((a, w) => Math.max(a, w.hours), 0);
  const scale = Math.max(48, Math.ceil(longest / 24) * 24);
  const oldest = waits[waits.length - 1];
  const from = dates[0]!;
  const to = dates.at(-1)!;
  const plural = (n: number, one: string, many: string) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

  return (
    <div className="mt-2 grid gap-6 md:grid-cols-2" data-testid="live-charts">
      <section aria-labelledby="chart-submissions-title">
        <h3 id="chart-submissions-title" className="text-sm font-semibold">
          Submissions per day
        </h3>
        <p className="muted text-xs" data-testid="chart-submissions-summary">
          {plural(total, 'entry', 'entries')} in {plural(shown.length, 'ledger', 'ledgers')}; busiest day {busiest.date}{' '}
          ({busiest.entryCount.toLocaleString('en-US')})
        </p>
        <Frame
          id="chart-submissions"
          testid="chart-submissions"
          title={`Entries in each daily ledger, ${from} to ${to}`}
          desc={`${shown.length} published days; the busiest, ${busiest.date}, holds ${busiest.entryCount} entries.`}
          from={from}
          to={to}
          top={max.toLocaleString('en-US')}
        >
          {dates.map((date, i) => {
            const d = byDate.get(date);
            if (!d) return null;
            const h = Math.max(1.5, (d.entryCount / max) * H);
            return (
              <rect
                key={date}
                data-date={date}
                x={i * BAR + 0.5}
                y={H - h}
                width={BAR - 1}
                height={h}
                className="fill-emerald-600 dark:fill-emerald-400"
              >
                <title>{`${date}: ${plural(d.entryCount, 'entry', 'entries')}`}</title>
              </rect>
            );
          })}
        </Frame>
      </section>
      <section aria-labelledby="chart-anchoring-title">
        <h3 id="chart-anchoring-title" className="text-sm font-semibold">
          Anchoring delay
        </h3>
        <p className="muted text-xs" data-testid="chart-anchoring-summary">
          {shown.length - waits.length} of {plural(shown.length, 'day', 'days')} anchored in Bitcoin
          {oldest
            ? `; ${plural(waits.length, 'day', 'days')} waiting, the oldest (${oldest.date}) for ${Math.floor(oldest.hours)} h`
            : ''}
        </p>
        <Frame
          id="chart-anchoring"
          testid="chart-anchoring"
          title={`Hours each day's ledger has waited for its Bitcoin anchor, ${from} to ${to}`}
          desc={`${shown.length - waits.length} days anchored; ${waits.length} waiting${oldest ? `, the longest ${Math.floor(longest)} hours` : ''}. The dashed line marks 24 hours.`}
          from={from}
          to={to}
          top={`${scale} h`}
        >
          <line
            x1="0"
            x2={W}
            y1={H - (24 / scale) * H}
            y2={H - (24 / scale) * H}
            className="stroke-amber-500"
            strokeDasharray="4 3"
            strokeWidth="1"
            vectorEffect="non-scaling-stroke"
          />
          {dates.map((date, i) => {
            const d = byDate.get(date);
            if (!d) return null;
            if (d.otsStatus === 'verified') {
              return (
                <rect
                  key={date}
                  data-date={date}
                  data-anchored="true"
                  x={i * BAR + 0.5}
                  y={H - 3}
                  width={BAR - 1}
                  height={3}
                  className="fill-emerald-600 dark:fill-emerald-400"
                >
                  <title>{`${date}: anchored in Bitcoin`}</title>
                </rect>
              );
            }
            const hours = waits.find((w) => w.date === date)!.hours;
            const h = Math.max(3, Math.min(1, hours / scale) * H);
            return (
              <rect
                key={date}
                data-date={date}
                data-anchored="false"
                x={i * BAR + 0.5}
                y={H - h}
                width={BAR - 1}
                height={h}
                className="fill-amber-500"
              >
                <title>{`${date}: waiting for Bitcoin anchoring for ${Math.floor(hours)} h since its publication`}</title>
              </rect>
            );
          })}
        </Frame>
        <p className="muted mt-1 text-[10px]" aria-hidden="true">
          Green: anchored. Amber: hours waited so far. Dashed: 24 h.
        </p>
      </section>
    </div>
  );
}
