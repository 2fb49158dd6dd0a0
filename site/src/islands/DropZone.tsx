// The "Try It Now" / Create drop zone (the home and /proof pages; each file item's states). Every dropped file is
// hashed in a Web Worker (lib/file-hasher.ts, loaded with the first file) with a progress bar and a Cancel
// button, then its hash — and its name, nothing else — is submitted once, automatically. The "Create Proof"
// button appears only on a file whose automatic submission failed (or was never made, e.g. hashing finished
// offline), and sends the hash alone (POST /api/submit without `fileName`: docs/API.md), so a file is never
// submitted twice. Each file shows its own outcome (the one toast at a time only shows the latest), with what
// the server says is left (`remainingToday` / `remainingThisMonth`), and its receipt at once: the answer's
// `receipt` (an RFC 3161 token), offered by ReceiptOffer.tsx, a chunk loaded with the first receipt. After a
// 429 (the plan's limit) no file is submitted and no retry is offered until the limit resets (the free tier's
// at 00:00 UTC by the server's clock, lib/server-clock.ts); the upgrade to Standard is offered only when the
// server can sell it (GET /api/stripe/config). A dropped PDF also offers "Timestamp this PDF" (PdfStamp.tsx, a
// chunk loaded with the first PDF). The session's state — rows kept across a reload, submissions in the order
// dropped, receipts downloaded or not, the archive of all of them — is lib/drop-session.ts's; leaving the page
// with a receipt not downloaded asks first (beforeunload).
import { lazy, Suspense, useCallback, useEffect, useRef, useState, type DragEvent } from 'react';
import { getJson, HttpError, postJson } from '../lib/api.ts';
import {
  loadRows,
  OrderedSubmitter,
  receiptName,
  receiptsArchive,
  saveRows,
  sessionKey,
  undownloaded,
  type Row,
} from '../lib/drop-session.ts';
import type { HashJob } from '../lib/file-hasher.ts';
import { formatDateTime } from '../lib/format.ts';
import { serverNow, syncServerClock } from '../lib/server-clock.ts';
import { toast } from '../lib/toast.ts';
import CopyButton from './CopyButton.tsx';

// A chunk that cannot be loaded shows no receipt rather than taking the file list down with it.
const ReceiptOffer = lazy(() => import('./ReceiptOffer.tsx').catch(() => ({ default: () => null })));
const PdfStamp = lazy(() => import('./PdfStamp.tsx').catch(() => ({ default: () => null })));

/** A file the drop zone offers to time-stamp as a PDF: by its type or its name. */
const isPdf = (file: File): boolean => file.type === 'application/pdf' || /\.pdf$/i.test(file.name);

type Item = Row;
type Limited = Extract<SubmitOutcome, { kind: 'limited' }>;

/** The free tier (docs/API.md) allows 2 timestamps per day per IP address; the day is UTC. */
const FREE_PER_DAY = 2;

interface SubmitAnswer {
  ok?: boolean;
  error?: string;
  submittedAt?: string;
  ledgerDate?: string;
  remainingToday?: number;
  remainingThisMonth?: number;
  receipt?: string;
}

export type SubmitOutcome =
  | { kind: 'submitted'; note?: string; receipt?: string; submittedAt?: string; ledgerDate?: string }
  | { kind: 'failed'; note: string }
  /** The plan's limit (429): nothing more is accepted until `until` (ms since the epoch) or, without it, on this page. */
  | { kind: 'limited'; daily: boolean; serverMessage: string; until: number | null };

const plural = (n: number, one: string, many: string) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

function leftNote(answer: SubmitAnswer): string | undefined {
  if (typeof answer.remainingToday === 'number')
    return `${plural(answer.remainingToday, 'free timestamp', 'free timestamps')} left today`;
  if (typeof answer.remainingThisMonth === 'number')
    return `${plural(answer.remainingThisMonth, 'timestamp', 'timestamps')} left this month`;
  return undefined;
}

/** The next 00:00 UTC after `now`. */
export function nextUtcMidnight(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
}

function untilText(until: number, now: number): string {
  const minutes = Math.max(1, Math.ceil((until - now) / 60_000));
  const h = Math.floor(minutes / 60);
  return h > 0 ? `${h} h ${minutes % 60} min` : `${minutes} min`;
}

let paymentsAvailable: Promise<boolean> | null = null;
/** Whether Standard can be bought on this server (GET /api/stripe/config); asked once, false on any failure. */
function canUpgrade(): Promise<boolean> {
  paymentsAvailable ??= getJson<{ paymentsAvailable?: boolean }>('/api/stripe/config').then(
    (c) => c.paymentsAvailable === true,
    () => false,
  );
  return paymentsAvailable;
}

/** The sentence for a reached limit: what the limit is and when it resets (the server's own text for a plan
 *  other than the free tier, whose renewal it knows). */
function limitText(outcome: Extract<SubmitOutcome, { kind: 'limited' }>, now: number): string {
  if (!outcome.daily || outcome.until === null) return outcome.serverMessage;
  return `Daily limit reached: the free tier allows ${FREE_PER_DAY} timestamps per day. It resets at 00:00 UTC (in ${untilText(outcome.until, now)}).`;
}

export async function submitHash(hash: string, fileName?: string): Promise<SubmitOutcome> {
  try {
    const answer = await postJson<SubmitAnswer>('/api/submit', fileName === undefined ? { hash } : { hash, fileName });
    if (answer.ok === false) {
      const note = answer.error || 'Please try again';
      toast({ title: 'Submission failed', description: note, variant: 'destructive' });
      return { kind: 'failed', note };
    }
    toast({ title: 'Hash queued!', description: 'Your timestamp has been submitted' });
    return {
      kind: 'submitted',
      note: leftNote(answer),
      receipt: answer.receipt,
      submittedAt: answer.submittedAt,
      ledgerDate: answer.ledgerDate,
    };
  } catch (err) {
    if (err instanceof HttpError && err.status === 429) {
      const serverMessage = err.serverMessage || 'Limit reached';
      const daily = /\bdaily\b|\bper day\b/i.test(serverMessage);
      const now = serverNow();
      // When it resets, by the server's clock: its answer's limit.resetsAt (docs/API.md), else the next 00:00 UTC.
      let resetsAt = Number.NaN;
      try {
        resetsAt = Date.parse((JSON.parse(err.body) as { limit?: { resetsAt?: string } }).limit?.resetsAt ?? '');
      } catch {
        // Not JSON: the next midnight.
      }
      const outcome: SubmitOutcome = {
        kind: 'limited',
        daily,
        serverMessage,
        until: daily ? (Number.isNaN(resetsAt) ? nextUtcMidnight(now) : resetsAt) : null,
      };
      toast({ title: 'Submission failed', description: limitText(outcome, now), variant: 'destructive' });
      return outcome;
    }
    const note =
      err instanceof HttpError ? err.serverMessage || 'Please try again' : 'Network error - please try again';
    toast({ title: 'Submission failed', description: note, variant: 'destructive' });
    return { kind: 'failed', note };
  }
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = bytes / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

/** The rows of this tab's session (lib/drop-session.ts): restored after hydration (the static HTML has none),
 *  saved on every change after that; while a receipt is not downloaded, leaving the page asks first. */
function useSessionRows(idPrefix: string) {
  const [items, setItems] = useState<Item[]>([]);
  const nextId = useRef(1);
  const update = useCallback((id: number, patch: Partial<Item>) => {
    setItems((all) => all.map((it) => (it.id === id ? { ...it, ...patch } : it)));
  }, []);
  // The saving effect comes first: on the first render it runs before the rows are restored, and skips.
  const key = sessionKey(idPrefix);
  const restored = useRef(false);
  useEffect(() => {
    if (restored.current) saveRows(window.sessionStorage, key, items);
  }, [items, key]);
  useEffect(() => {
    const rows = loadRows(window.sessionStorage, key);
    nextId.current = Math.max(0, ...rows.map((r) => r.id)) + 1;
    if (rows.length > 0) setItems((now) => [...rows, ...now]);
    restored.current = true;
    void syncServerClock();
  }, [key]);
  const waiting = undownloaded(items);
  useEffect(() => {
    if (waiting === 0) return;
    const ask = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = '';
    };
    window.addEventListener('beforeunload', ask);
    return () => window.removeEventListener('beforeunload', ask);
  }, [waiting]);
  return { items, setItems, update, nextId, waiting };
}

export default function DropZone({ idPrefix = 'dropzone' }: { idPrefix?: string }) {
  const { items, setItems, update, nextId, waiting } = useSessionRows(idPrefix);
  const [dragging, setDragging] = useState(false);
  const [limit, setLimit] = useState<Limited | null>(null);
  const [upgrade, setUpgrade] = useState(false);
  const limitRef = useRef<Limited | null>(null);
  const jobs = useRef(new Map<number, HashJob>());
  /** The dropped PDFs, by item id, for "Timestamp this PDF". */
  const pdfs = useRef(new Map<number, File>());
  const receipts = items.filter((it) => it.receipt !== undefined).length;

  useEffect(() => () => jobs.current.forEach((j) => j.cancel()), []);

  /** The limit still in force, if any (a daily one lapses at its 00:00 UTC). */
  const activeLimit = useCallback(() => {
    const l = limitRef.current;
    if (l && l.until !== null && serverNow() >= l.until) {
      limitRef.current = null;
      setLimit(null);
      return null;
    }
    return l;
  }, []);

  const submit = useCallback(
    async (id: number, hash: string, fileName?: string) => {
      if (activeLimit()) {
        update(id, { submit: 'limited', note: undefined });
        return;
      }
      update(id, { submit: 'submitting', note: undefined });
      const outcome = await submitHash(hash, fileName);
      if (outcome.kind === 'limited') {
        limitRef.current = outcome;
        setLimit(outcome);
        void canUpgrade().then(setUpgrade);
        // Files that were waiting to be submitted will not be accepted either.
        setItems((all) =>
          all.map((it) =>
            it.id === id || (it.hash && (it.submit === 'none' || it.submit === 'queued' || it.submit === 'failed'))
              ? { ...it, submit: 'limited', note: undefined }
              : it,
          ),
        );
        return;
      }
      update(id, {
        submit: outcome.kind,
        note: outcome.note,
        ...(outcome.kind === 'submitted'
          ? { receipt: outcome.receipt, submittedAt: outcome.submittedAt, ledgerDate: outcome.ledgerDate }
          : {}),
      });
    },
    [activeLimit, update, setItems],
  );
  // Dropped files are submitted in the order they were added, each once hashed.
  const submitRef = useRef(submit);
  submitRef.current = submit;
  const submitter = useRef(new OrderedSubmitter((id, hash, name) => submitRef.current(id, hash, name)));

  const downloadAll = () => {
    const archive = receiptsArchive(items, { origin: location.origin, now: new Date(serverNow()) });
    const url = URL.createObjectURL(new Blob([archive.bytes as BlobPart], { type: 'application/zip' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = archive.fileName;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    setItems((all) => all.map((it) => (it.receipt ? { ...it, downloaded: true } : it)));
  };

  const addFiles = useCallback(
    (files: FileList | File[]) => {
      for (const file of Array.from(files)) {
        const id = nextId.current++;
        if (isPdf(file)) pdfs.current.set(id, file);
        submitter.current.add(id);
        setItems((all) => [
          ...all,
          { id, name: file.name, size: file.size, status: 'hashing', loaded: 0, hash: null, submit: 'none' },
        ]);
        let lastPaint = 0;
        import('../lib/file-hasher.ts').then(
          ({ hashFile, HashCancelledError }) => {
            const job = hashFile(file, (loaded) => {
              const now = performance.now();
              if (now - lastPaint > 100 || loaded === file.size) {
                lastPaint = now;
                update(id, { loaded });
              }
            });
            jobs.current.set(id, job);
            return job.promise.then(
              (hash) => {
                jobs.current.delete(id);
                update(id, { status: 'complete', hash, loaded: file.size, submit: 'queued' });
                toast({ title: 'Hash computed', description: `${file.name} hashed successfully` });
                submitter.current.ready(id, hash, file.name);
              },
              (err: unknown) => {
                jobs.current.delete(id);
                submitter.current.skip(id);
                update(id, { status: err instanceof HashCancelledError ? 'cancelled' : 'error' });
              },
            );
          },
          () => {
            submitter.current.skip(id);
            update(id, { status: 'error' });
          },
        );
      }
    },
    [update, nextId, setItems],
  );

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    if (e.dataTransfer.files.length) addFiles(e.dataTransfer.files);
  };

  return (
    <div>
      <div
        className={`flex flex-col items-center justify-center rounded-xl border-2 border-dashed px-6 py-10 text-center transition-colors ${dragging ? 'border-emerald-500 bg-emerald-50 dark:bg-emerald-950/40' : 'border-slate-300 bg-slate-50 dark:border-slate-700 dark:bg-slate-950'}`}
        data-dragging={dragging || undefined}
        data-testid="dropzone"
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragEnter={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
      >
        <svg
          className="mb-3 h-10 w-10 text-emerald-600 dark:text-emerald-400"
          viewBox="0 0 24 24"
          fill="none"
          stroke="currentColor"
          strokeWidth="1.8"
          aria-hidden="true"
        >
          <path d="M12 16V4m0 0-4 4m4-4 4 4M4 16v2a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2v-2" />
        </svg>
        <p className="font-semibold">Drop files here to hash them</p>
        <p className="muted mt-1 text-sm">Any size. Files are hashed on your device; only the SHA-256 hash is sent.</p>
        <label className="btn-primary mt-4 cursor-pointer">
          Choose files
          <input
            id={`${idPrefix}-input`}
            type="file"
            multiple
            className="sr-only"
            onChange={(e) => {
              if (e.target.files) addFiles(e.target.files);
              e.target.value = '';
            }}
          />
        </label>
      </div>
      {limit && <LimitNotice limit={limit} upgrade={upgrade} />}
      {receipts > 0 && <ReceiptsHelp receipts={receipts} waiting={waiting} onDownloadAll={downloadAll} />}
      {items.length > 0 && (
        <ul className="mt-4 space-y-3" aria-label="Files">
          {items.map((it) => (
            <FileRow
              key={it.id}
              it={it}
              limit={limit}
              pdf={pdfs.current.get(it.id)}
              onCancel={() => jobs.current.get(it.id)?.cancel()}
              onCreateProof={() => void submit(it.id, it.hash!)}
              onDownloaded={() => update(it.id, { downloaded: true })}
            />
          ))}
        </ul>
      )}
    </div>
  );
}

/** The limit in force (the free tier's), and where to get more. */
function LimitNotice({ limit, upgrade }: { limit: Limited; upgrade: boolean }) {
  return (
    <div
      role="status"
      className="mt-4 rounded-lg border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900 dark:border-amber-700 dark:bg-amber-950/50 dark:text-amber-100"
      data-testid="limit-notice"
    >
      <p>{limitText(limit, serverNow())} Files added until then are hashed but not submitted.</p>
      {upgrade && limit.daily && (
        <p className="mt-1">
          <a className="link" href="/pricing/">
            Upgrade to Standard
          </a>{' '}
          for 500 timestamps a month.
        </p>
      )}
    </div>
  );
}

/** How many receipts this tab holds, how many are not downloaded, the archive of all, and what a receipt is. */
function ReceiptsHelp({
  receipts,
  waiting,
  onDownloadAll,
}: {
  receipts: number;
  waiting: number;
  onDownloadAll: () => void;
}) {
  return (
    <div
      className="mt-4 rounded-lg border border-slate-200 p-3 text-sm dark:border-slate-800"
      data-testid="receipt-help"
    >
      <div className="flex flex-wrap items-center justify-between gap-2">
        <p className="font-medium" data-testid="receipts-summary">
          {plural(receipts, 'receipt', 'receipts')}
          <span className="muted font-normal">
            {' '}
            · {waiting === 0 ? 'all downloaded' : `${waiting.toLocaleString('en-US')} not downloaded yet`}
          </span>
        </p>
        {receipts > 1 && (
          <button type="button" className="btn-primary px-3 py-1" onClick={onDownloadAll}>
            Download all receipts (.zip)
          </button>
        )}
      </div>
      <p className="muted mt-2 text-xs">
        Each receipt is an RFC 3161 time-stamp token, signed at submission by Timeseal's time-stamp authority; the hash
        is also published in today's public ledger. Check one with{' '}
        <a className="link" href="/keys/timeseal-tsa-root.pem" download>
          timeseal-tsa-root.pem
        </a>{' '}
        and{' '}
        <a className="link" href="/keys/timeseal-tsa.pem" download>
          timeseal-tsa.pem
        </a>{' '}
        (the OpenSSL command is under each file){receipts > 1 ? '; the archive of all adds a manifest.json' : ''}. This
        tab keeps them until it is closed.
      </p>
    </div>
  );
}

/** One dropped file: its hashing, its hash, its submission, its receipt, and "Timestamp this PDF" for a PDF. */
function FileRow({
  it,
  limit,
  pdf,
  onCancel,
  onCreateProof,
  onDownloaded,
}: {
  it: Item;
  limit: Limited | null;
  pdf: File | undefined;
  onCancel: () => void;
  onCreateProof: () => void;
  onDownloaded: () => void;
}) {
  return (
    <li
      className="rounded-lg border border-slate-200 p-3 dark:border-slate-800"
      data-status={it.status}
      data-submit={it.submit}
    >
      <div className="flex items-center justify-between gap-2">
        <p className="truncate text-sm font-medium" title={it.name}>
          {it.name}
        </p>
        <span className="muted shrink-0 text-xs">{formatSize(it.size)}</span>
      </div>
      {it.status === 'hashing' && (
        <div className="mt-2 flex items-center gap-3">
          <progress
            className="h-2 w-full accent-emerald-600"
            max={Math.max(it.size, 1)}
            value={it.loaded}
            aria-label={`Hashing ${it.name}`}
          />
          <span className="muted w-12 text-right text-xs tabular-nums">
            {it.size ? Math.floor((it.loaded / it.size) * 100) : 0}%
          </span>
          <button type="button" className="btn-ghost px-2 py-1 text-xs" onClick={onCancel}>
            Cancel
          </button>
        </div>
      )}
      {it.status === 'cancelled' && <p className="muted mt-2 text-sm">Hashing cancelled.</p>}
      {it.status === 'error' && <p className="field-error">This file could not be read.</p>}
      {it.hash && (
        <div className="mt-2 flex items-center gap-2">
          <code className="hash flex-1 rounded bg-slate-100 px-2 py-1 dark:bg-slate-800" data-testid="file-hash">
            {it.hash}
          </code>
          <CopyButton value={it.hash} />
        </div>
      )}
      {it.hash && (
        <div className="mt-2 flex flex-wrap items-center gap-2 text-sm">
          {it.submit === 'submitting' && <span className="badge-slate">Submitting...</span>}
          {it.submit === 'submitted' && <span className="badge-green">Queued for today's ledger</span>}
          {it.submit === 'submitted' && it.submittedAt && (
            <span className="muted text-xs" data-testid="file-time">
              Submitted {formatDateTime(it.submittedAt)}
            </span>
          )}
          {it.submit === 'submitted' && it.note && (
            <span className="muted text-xs" data-testid="file-note">
              {it.note}
            </span>
          )}
          {it.submit === 'queued' && (
            <span className="badge-slate" data-testid="file-queued">
              Waiting for the files before it
            </span>
          )}
          {it.submit === 'limited' && (
            <span className="badge-yellow" data-testid="file-limited">
              Not submitted: {limit?.daily === false ? 'limit reached' : 'daily limit reached'}
            </span>
          )}
          {(it.submit === 'failed' || it.submit === 'none') && (
            <button type="button" className="btn-primary px-3 py-1" onClick={onCreateProof}>
              Create Proof
            </button>
          )}
          {it.submit === 'submitted' && !it.receipt && (
            <a className="link" href={`/verify?hash=${it.hash}&search=true`}>
              Verify after the next ledger
            </a>
          )}
        </div>
      )}
      {it.receipt && (
        <Suspense>
          <ReceiptOffer
            receipt={it.receipt}
            name={receiptName(it)}
            hash={it.hash!}
            downloaded={it.downloaded === true}
            onDownload={onDownloaded}
          >
            <a className="link text-sm" href={`/verify?hash=${it.hash}&search=true`}>
              Verify after the next ledger
            </a>
          </ReceiptOffer>
        </Suspense>
      )}
      {pdf && (
        <Suspense>
          <PdfStamp file={pdf} />
        </Suspense>
      )}
      {it.submit === 'failed' && it.note && (
        <p className="field-error" data-testid="file-error">
          Not submitted: {it.note}
        </p>
      )}
    </li>
  );
}
