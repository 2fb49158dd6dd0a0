// Browse ledgers (the /ledgers page; docs/API.md "Status"), one month at a time, so that the page costs the same
// on an archive of ten years as on one of ten days:
//   - the month's cards: GET /api/ledgers.php?before=<first day of the next month>&limit=31 (the first view asks
//     for the newest 31 days, which hold the whole newest month), each card enriched by one
//     /api/verify-quantum.php of its date (only the cards shown) and by the month's block information
//     (/ledgers/block-info/YYYY-MM.json: block height, confirmations, and `pending`, why a day is not anchored
//     yet; the whole block_info.json only on an archive written before the month files);
//   - the year's heat map: GET /api/ledgers-calendar.php?year=YYYY (one square a day, shaded by entry count,
//     a dot while a day awaits anchoring), which also gives the archive's first and last day for the month and
//     year navigation and the "jump to date" field;
//   - ?month=YYYY-MM opens a month, ?date=YYYY-MM-DD opens its month and highlights the day (the page keeps the
//     address up to date as people navigate).
// A day's OTS Proof is a disabled "pending" control until its file exists; a delayed anchoring says why in the
// words of lib/anchoring.ts. When the API cannot be read, the static archive's own days.json, ots_status.json
// and block information are read instead, so the page works from any static copy of the archive.
import { useCallback, useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import {
  dayCheckpointPath,
  ecdsaSignaturePath,
  mldsaSignaturePath,
  signaturesMetaPath,
} from '../../../core/archive-paths.ts';
import { anchoringNote } from '../../../core/anchoring-note.ts';
import { AnchoringNoteView } from './AnchoringNote.tsx';
import { getJson } from '../lib/api.ts';
import { archiveUrl } from '../lib/archive-url.ts';
import { confirmationLabel, confirmationsStrong, formatLedgerDate } from '../lib/format.ts';
import {
  addMonths,
  DATE_RE,
  DAY_MS,
  heatMapOf,
  monthBlockInfo,
  monthOf,
  monthPage,
  MONTH_RE,
  otsFileExists,
  withBlockInfo,
  yearCalendar,
  type CalendarYear,
  type LedgerItem,
  type QuantumCheck,
} from '../lib/ledgers.ts';
import type { OtsStatusFile } from '../lib/status.ts';

const MONTH_TITLE = new Intl.DateTimeFormat('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' });
const MONTH_SHORT = new Intl.DateTimeFormat('en-US', { month: 'short', timeZone: 'UTC' });
const monthTitle = (month: string): string => MONTH_TITLE.format(new Date(`${month}-01T00:00:00Z`));

function LedgerCard({
  item,
  highlighted,
  statusWrittenAt,
}: {
  item: LedgerItem;
  highlighted: boolean;
  /** ots_status.json's last_update: when the anchoring status was last written. */
  statusWrittenAt: string | undefined;
}) {
  const anchored = item.otsStatus === 'verified';
  const delayed = anchored ? null : anchoringNote(item.date, item.anchoring, statusWrittenAt);
  return (
    <article
      className={`card flex flex-col ${highlighted ? 'ring-2 ring-sky-500 ring-offset-2 ring-offset-slate-50 dark:ring-offset-slate-950' : ''}`}
      data-testid="ledger-card"
      data-date={item.date}
      data-highlighted={highlighted || undefined}
      aria-current={highlighted ? 'date' : undefined}
    >
      <h3 className="card-title">{formatLedgerDate(item.date)}</h3>
      <p className="muted font-mono text-xs">{item.date}</p>
      <div className="mt-3 flex flex-wrap gap-1.5">
        {item.quantumShield && <span className="badge-violet">Quantum Shield</span>}
        {(item.signatureVerified || item.dualSignature) && <span className="badge-blue">Signed</span>}
        {anchored ? (
          <span className="badge-green">Anchored</span>
        ) : (
          <span className="badge-yellow">
            {delayed?.kind === 'delayed' ? 'Delayed' : delayed ? 'Not reached' : 'Pending'}
          </span>
        )}
        {item.rfc3161 && item.rfc3161.length > 0 && (
          <span className="badge-blue" title="RFC 3161 time-stamp tokens of the ledger file">
            RFC 3161
          </span>
        )}
      </div>
      <dl className="mt-4 space-y-1 text-sm">
        {item.entryCount !== undefined && (
          <div className="flex justify-between gap-2">
            <dt className="muted">Entries</dt>
            <dd className="font-medium tabular-nums" data-testid="entry-count">
              {item.entryCount.toLocaleString('en-US')}
            </dd>
          </div>
        )}
        <div className="flex justify-between gap-2">
          <dt className="muted">Bitcoin block</dt>
          <dd className="font-medium">
            {item.blockHeight !== undefined ? `#${item.blockHeight.toLocaleString('en-US')}` : '—'}
          </dd>
        </div>
        <div className="flex justify-between gap-2">
          <dt className="muted">Confirmations</dt>
          <dd>
            {item.confirmations !== undefined ? (
              <span className={confirmationsStrong(item.confirmations) ? 'badge-green' : 'badge-yellow'}>
                {item.confirmations.toLocaleString('en-US')} · {confirmationLabel(item.confirmations)}
              </span>
            ) : (
              '—'
            )}
          </dd>
        </div>
      </dl>
      <div className="mt-4 grid gap-2">
        <a className="btn-primary" href={item.jsonUrl} download>
          Download Ledger
        </a>
        <div className="grid grid-cols-2 gap-2">
          <a className="btn-secondary px-2 text-xs" href={archiveUrl(signaturesMetaPath(item.date))} download>
            Signature Metadata
          </a>
          <a className="btn-secondary px-2 text-xs" href={archiveUrl(ecdsaSignaturePath(item.date))} download>
            ECDSA P-256 Signature
          </a>
          <a className="btn-secondary px-2 text-xs" href={archiveUrl(mldsaSignaturePath(item.date))} download>
            ML-DSA-65 Signature
          </a>
          <a className="btn-secondary px-2 text-xs" href={archiveUrl(dayCheckpointPath(item.date))} download>
            Checkpoint
          </a>
          {otsFileExists(item) ? (
            <a className="btn-secondary px-2 text-xs" href={item.otsUrl} download>
              OTS Proof
            </a>
          ) : (
            <button
              type="button"
              className="btn-secondary col-span-2 px-2 text-xs"
              disabled
              aria-describedby={`ots-reason-${item.date}`}
            >
              {delayed ? 'OTS proof: not available yet' : 'OTS proof: pending, usually within 24 hours'}
            </button>
          )}
        </div>
        {item.rfc3161?.map((t) => (
          <p key={t.url} className="muted text-xs" data-testid="rfc3161">
            <a className="link" href={t.url} download>
              RFC 3161 time-stamp
            </a>
            : {t.genTime.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')} by {t.tsa}
          </p>
        ))}
        {delayed ? (
          <AnchoringNoteView note={delayed} id={`ots-reason-${item.date}`} />
        ) : (
          !otsFileExists(item) && (
            <p id={`ots-reason-${item.date}`} className="muted text-xs" data-testid="ots-reason">
              No OpenTimestamps file yet:{' '}
              {item.anchoring?.reason ?? 'the ledger is submitted for Bitcoin anchoring at 00:02 UTC'}.
            </p>
          )
        )}
      </div>
    </article>
  );
}

const LEVELS = [
  'border border-slate-300 dark:border-slate-700',
  'bg-emerald-200 dark:bg-emerald-900',
  'bg-emerald-400 dark:bg-emerald-700',
  'bg-emerald-600 dark:bg-emerald-500',
  'bg-emerald-800 dark:bg-emerald-300',
];
/** The ring of the highlighted day and of the shown month's days. */
const RINGS = { highlight: 'ring-2 ring-sky-500', month: 'ring-1 ring-slate-500 dark:ring-slate-400', none: '' };

/** One square a day of `calendar.year`: shade by entry count (log scale against the year's busiest day), a dot
 *  while a day awaits anchoring, empty without a ledger. One tab stop; the arrow keys move by day (up, down) and
 *  by week (left, right), Home and End to the year's ends; Enter opens the day's month. */
function HeatMap({
  calendar,
  month,
  highlight,
  onOpen,
}: {
  calendar: CalendarYear;
  month: string;
  highlight: string | null;
  onOpen: (month: string, date: string | null) => void;
}) {
  const {
    year,
    start,
    count,
    weeks,
    squares: days,
    monthColumns,
    total,
    pending,
  } = heatMapOf(calendar, month, highlight);
  const anchor = highlight !== null && highlight.startsWith(calendar.year) ? highlight : `${month}-01`;
  const [active, setActive] = useState(() =>
    Math.max(0, Math.round((Date.parse(`${anchor}T00:00:00Z`) - start) / DAY_MS)),
  );
  const squares = useRef<(HTMLButtonElement | null)[]>([]);
  const scroller = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const i = Math.min(count - 1, Math.max(0, Math.round((Date.parse(`${anchor}T00:00:00Z`) - start) / DAY_MS)));
    setActive(i);
    // On a narrow screen the map scrolls sideways: the shown month comes into view.
    const box = scroller.current;
    const square = squares.current[i];
    if (box && square && box.scrollWidth > box.clientWidth) box.scrollLeft = square.offsetLeft - box.clientWidth / 2;
  }, [anchor, start, count]);
  const move = (to: number) => {
    const i = Math.min(count - 1, Math.max(0, to));
    setActive(i);
    squares.current[i]?.focus();
  };
  const onKeyDown = (e: KeyboardEvent) => {
    const step = { ArrowRight: 7, ArrowLeft: -7, ArrowDown: 1, ArrowUp: -1 }[e.key];
    if (step !== undefined) move(active + step);
    else if (e.key === 'Home') move(0);
    else if (e.key === 'End') move(count - 1);
    else return;
    e.preventDefault();
  };
  return (
    <section className="card mb-8" aria-labelledby="heatmap-title" data-testid="heatmap" data-year={calendar.year}>
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h2 id="heatmap-title" className="card-title">
          {calendar.year} at a glance
        </h2>
        <p className="muted text-sm" data-testid="heatmap-summary">
          {calendar.days.length.toLocaleString('en-US')} {calendar.days.length === 1 ? 'ledger' : 'ledgers'},{' '}
          {total.toLocaleString('en-US')} {total === 1 ? 'entry' : 'entries'}
          {pending > 0 ? `, ${pending} awaiting anchoring` : ''}
        </p>
      </div>
      <div ref={scroller} className="relative mt-4 overflow-x-auto pb-2">
        <div
          role="group"
          aria-label={`Ledgers of ${calendar.year}, one square a day; arrow keys move, Enter opens the day's month`}
          className="inline-grid gap-[3px]"
          style={{
            gridTemplateColumns: `auto repeat(${weeks}, 12px)`,
            gridTemplateRows: 'auto repeat(7, 12px)',
          }}
          onKeyDown={onKeyDown}
        >
          {monthColumns.map((column, m) => (
            <span
              key={`m${m}`}
              aria-hidden="true"
              className="muted text-[10px] leading-3"
              style={{ gridRow: 1, gridColumn: `${column} / span 3` }}
            >
              {MONTH_SHORT.format(new Date(Date.UTC(year, m, 1)))}
            </span>
          ))}
          {['Mon', 'Wed', 'Fri'].map((d, i) => (
            <span
              key={d}
              aria-hidden="true"
              className="muted pr-1 text-[10px] leading-3"
              style={{ gridColumn: 1, gridRow: 3 + 2 * i }}
            >
              {d}
            </span>
          ))}
          {days.map(({ date, day, level, label, ring, column, row }, i) => {
            return (
              <button
                key={date}
                ref={(el) => {
                  squares.current[i] = el;
                }}
                type="button"
                tabIndex={i === active ? 0 : -1}
                aria-label={label}
                title={label}
                aria-current={date === highlight ? 'date' : undefined}
                data-testid="heat-day"
                data-date={date}
                data-level={level}
                data-anchored={day ? String(day.anchored) : undefined}
                className={`relative h-3 w-3 rounded-sm ${LEVELS[level]} ${RINGS[ring ?? 'none']}`}
                style={{ gridColumn: column, gridRow: row }}
                onFocus={() => setActive(i)}
                onClick={() => onOpen(monthOf(date), day ? date : null)}
              >
                {day && !day.anchored && (
                  <span aria-hidden="true" className="absolute inset-[3.5px] rounded-full bg-amber-500" />
                )}
              </button>
            );
          })}
        </div>
      </div>
      <div className="muted mt-3 flex flex-wrap items-center gap-x-4 gap-y-2 text-xs" aria-hidden="true">
        <span className="flex items-center gap-1">
          Fewer entries{' '}
          {LEVELS.slice(1).map((c) => (
            <span key={c} className={`inline-block h-3 w-3 rounded-sm ${c}`} />
          ))}{' '}
          More
        </span>
        <span className="flex items-center gap-1">
          <span className={`relative inline-block h-3 w-3 rounded-sm ${LEVELS[2]}`}>
            <span className="absolute inset-[3.5px] rounded-full bg-amber-500" />
          </span>{' '}
          awaiting Bitcoin anchoring
        </span>
        <span className="flex items-center gap-1">
          <span className={`inline-block h-3 w-3 rounded-sm ${LEVELS[0]}`} /> no ledger
        </span>
      </div>
    </section>
  );
}

interface View {
  month: string;
  highlight: string | null;
}

export default function LedgersBrowser() {
  const [view, setView] = useState<View | null>(null);
  /** The shown month's cards; null while they load. */
  const [cards, setCards] = useState<LedgerItem[] | null>(null);
  /** The cards carry their block information and signature checks (every request of the month answered). */
  const [complete, setComplete] = useState(false);
  const [ots, setOts] = useState<OtsStatusFile | null>(null);
  const [answered, setAnswered] = useState(false);
  const [calendar, setCalendar] = useState<CalendarYear | null>(null);
  const [jump, setJump] = useState('');
  const [note, setNote] = useState<string | null>(null);
  const request = useRef(0);
  const calendars = useRef(new Map<string, Promise<CalendarYear | null>>());
  const first = calendar?.first ?? null;
  const last = calendar?.last ?? null;

  const open = useCallback(async (month: string | null, highlight: string | null, moved = true) => {
    const n = ++request.current;
    setCards(null);
    setComplete(false);
    setNote(null);
    if (month !== null) setView({ month, highlight });
    try {
      const page = await monthPage(month);
      if (n !== request.current) return;
      setOts(page.otsStatus);
      setAnswered(true);
      const shown = month ?? (page.ledgers[0] ? monthOf(page.ledgers[0].date) : null);
      if (shown === null) {
        setCards([]);
        setComplete(true);
        return;
      }
      const items = page.ledgers.filter((l) => l.date.startsWith(`${shown}-`));
      setView({ month: shown, highlight });
      setCards(items);
      if (moved)
        history.replaceState(
          history.state,
          '',
          `${location.pathname}?${highlight ? `date=${highlight}` : `month=${shown}`}`,
        );
      if (highlight !== null && !items.some((l) => l.date === highlight))
        setNote(`No ledger was published for ${highlight}.`);
      const year = shown.slice(0, 4);
      let cal = calendars.current.get(year);
      if (!cal) {
        cal = yearCalendar(year).catch(() => null);
        calendars.current.set(year, cal);
      }
      const [yearDays, blocks, quantum] = await Promise.all([
        cal,
        monthBlockInfo(shown),
        Promise.all(
          items.map((l) =>
            getJson<NonNullable<QuantumCheck>>(`/api/verify-quantum.php?date=${l.date}`).catch(() => null),
          ),
        ),
      ]);
      if (n !== request.current) return;
      if (yearDays) setCalendar(yearDays);
      setCards(withBlockInfo(items, blocks, quantum));
      setComplete(true);
    } catch (err) {
      console.error('ledgers', err);
      if (n === request.current) {
        setAnswered(true);
        setCards([]);
        setComplete(true);
      }
    }
  }, []);

  useEffect(() => {
    const params = new URLSearchParams(location.search);
    const date = params.get('date');
    const month = params.get('month');
    if (date !== null && DATE_RE.test(date)) void open(monthOf(date), date, false);
    else if (month !== null && MONTH_RE.test(month)) void open(month, null, false);
    else void open(null, null, false);
  }, [open]);

  // The highlighted day's card comes into view once its month is shown.
  useEffect(() => {
    if (cards === null || !view?.highlight) return;
    document
      .querySelector(`[data-testid=ledger-card][data-date="${view.highlight}"]`)
      ?.scrollIntoView({ block: 'center' });
  }, [cards, view?.highlight]);

  const month = view?.month ?? null;
  const years: string[] = [];
  if (first && last) for (let y = Number(first.slice(0, 4)); y <= Number(last.slice(0, 4)); y++) years.push(String(y));
  const newestMonthOf = (year: string): string => (last && last.startsWith(year) ? monthOf(last) : `${year}-12`);
  const onJump = (e: FormEvent) => {
    e.preventDefault();
    if (!DATE_RE.test(jump) || Number.isNaN(Date.parse(`${jump}T00:00:00Z`))) {
      setNote('Enter a date as YYYY-MM-DD.');
      return;
    }
    if (first && last && (jump < first || jump > last)) {
      setNote(`The archive holds the ledgers from ${first} to ${last}.`);
      return;
    }
    void open(monthOf(jump), jump);
  };

  return (
    <div>
      {ots ? (
        <section className="card mb-8" aria-labelledby="ots-card-title" data-testid="ots-card">
          <h2 id="ots-card-title" className="card-title">
            Bitcoin anchoring (OpenTimestamps)
          </h2>
          <div className="mt-3 flex flex-wrap items-center gap-3">
            {ots.latest_ots_ok ? (
              <p>
                Latest anchored day: <strong>{formatLedgerDate(ots.latest_ots_ok)}</strong>
              </p>
            ) : (
              <p className="font-semibold">Verification pending</p>
            )}
            {ots.queue_size > 0 && (
              <span className="badge-yellow" data-testid="ots-pending">
                {ots.queue_size.toLocaleString('en-US')} {ots.queue_size === 1 ? 'ledger' : 'ledgers'} awaiting Bitcoin
                confirmation
              </span>
            )}
          </div>
        </section>
      ) : (
        answered && (
          <section className="card mb-8" data-testid="ots-card">
            <p className="muted">No OTS data available</p>
          </section>
        )
      )}
      {month !== null && (
        <nav
          className="mb-6 flex flex-wrap items-end gap-x-6 gap-y-4"
          aria-label="Ledger months"
          data-testid="ledgers-nav"
        >
          <div className="flex w-full flex-wrap items-center justify-between gap-2 sm:w-auto sm:flex-nowrap sm:justify-start">
            <h2
              className="w-full text-xl font-semibold sm:order-2 sm:w-44 sm:text-center"
              aria-live="polite"
              data-testid="ledgers-month"
            >
              {monthTitle(month)}
            </h2>
            <button
              type="button"
              className="btn-secondary sm:order-1"
              onClick={() => void open(addMonths(month, -1), null)}
              disabled={!first || month <= monthOf(first)}
            >
              ← Previous month
            </button>
            <button
              type="button"
              className="btn-secondary sm:order-3"
              onClick={() => void open(addMonths(month, 1), null)}
              disabled={!last || month >= monthOf(last)}
            >
              Next month →
            </button>
          </div>
          <div className="flex flex-wrap items-end gap-3">
            {years.length > 0 && (
              <div>
                <label htmlFor="ledgers-year" className="label">
                  Year
                </label>
                <select
                  id="ledgers-year"
                  className="input w-28"
                  value={month.slice(0, 4)}
                  onChange={(e) => void open(newestMonthOf(e.target.value), null)}
                >
                  {years.map((y) => (
                    <option key={y} value={y}>
                      {y}
                    </option>
                  ))}
                </select>
              </div>
            )}
            <form className="flex items-end gap-2" onSubmit={onJump}>
              <div>
                <label htmlFor="ledgers-jump" className="label">
                  Jump to date
                </label>
                <input
                  id="ledgers-jump"
                  type="date"
                  className="input"
                  value={jump}
                  min={first ?? undefined}
                  max={last ?? undefined}
                  onChange={(e) => setJump(e.target.value)}
                />
              </div>
              <button type="submit" className="btn-secondary" disabled={jump === ''}>
                Go
              </button>
            </form>
          </div>
        </nav>
      )}
      {note && (
        <p role="status" className="muted mb-4 text-sm" data-testid="ledgers-note">
          {note}
        </p>
      )}
      {calendar && month !== null && calendar.year === month.slice(0, 4) && (
        <HeatMap
          calendar={calendar}
          month={month}
          highlight={view?.highlight ?? null}
          onOpen={(m, d) => void open(m, d)}
        />
      )}
      {cards === null ? (
        <div className="flex items-center gap-3 py-12" role="status">
          <span
            className="h-5 w-5 animate-spin rounded-full border-2 border-emerald-500 border-t-transparent"
            aria-hidden="true"
          ></span>
          <span className="muted">Loading ledgers...</span>
        </div>
      ) : cards.length === 0 ? (
        <div className="card py-12 text-center" data-testid="ledgers-empty">
          {month === null ? (
            <>
              <h2 className="text-xl font-semibold">No Ledgers Found</h2>
              <p className="muted mt-2">
                Ledgers are generated daily at 00:01 UTC. Check back after the next generation.
              </p>
            </>
          ) : (
            <h2 className="text-xl font-semibold">No ledgers in {monthTitle(month)}</h2>
          )}
        </div>
      ) : (
        <div
          className="grid gap-6 sm:grid-cols-2 lg:grid-cols-3"
          data-testid="ledger-cards"
          data-month={month ?? undefined}
          data-complete={complete || undefined}
        >
          {cards.map((l) => (
            <LedgerCard
              key={l.date}
              item={l}
              highlighted={l.date === view?.highlight}
              statusWrittenAt={ots?.last_update}
            />
          ))}
        </div>
      )}
    </div>
  );
}
