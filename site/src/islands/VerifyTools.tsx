// The Verify page's interactive cards: hash one file (only the first dropped file is
// used), hash a text, search the ledgers with a search the browser verifies (lib/verified-search.ts), and check
// a receipt (.tsr) with its file or hash (ReceiptCheck.tsx), and a timestamped PDF (PdfCheck.tsx). A hash the search does not find is looked up once in
// GET /api/status/<hash>: one queued for a ledger not published yet is said so, with the publication time.
// `?hash=…&search=true` pre-fills the field and searches when the hash has exactly 64 characters. The field
// and the parameter drop whitespace and take upper case (lib/validation.ts normalizeHashInput).
import { useEffect, useRef, useState, type DragEvent, type FormEvent } from 'react';
import { hashFile, hashText, HashCancelledError, type HashJob } from '../lib/file-hasher.ts';
import { getJson } from '../lib/api.ts';
import { toast } from '../lib/toast.ts';
import { normalizeHashInput } from '../lib/validation.ts';
import { notFoundResult, SearchUnavailableError, verifiedSearch, type SearchResult } from '../lib/verified-search.ts';
import CopyButton from './CopyButton.tsx';
import PdfCheck from './PdfCheck.tsx';
import ReceiptCheck from './ReceiptCheck.tsx';
import SearchResultPanel, { type QueuedHash } from './SearchResultPanel.tsx';

const HEX64 = /^[0-9a-f]{64}$/;

/** The first unpublished ledger the server holds `hash` for (GET /api/status/<hash>), or null: unknown, or the
 *  server could not be asked (a static copy of the archive has no API). */
async function queuedFor(hash: string): Promise<QueuedHash | null> {
  try {
    const status = await getJson<{ state: string; queued?: QueuedHash[] }>(`/api/status/${hash}`);
    return status.state === 'queued' ? (status.queued?.[0] ?? null) : null;
  } catch (err) {
    console.warn('hash status', err);
    return null;
  }
}

function HashOutput({ hash, onSearch }: { hash: string; onSearch: (hash: string) => void }) {
  return (
    <div className="mt-3">
      <div className="flex items-center gap-2">
        <code className="hash flex-1 rounded bg-slate-100 px-2 py-1 dark:bg-slate-800" data-testid="computed-hash">
          {hash}
        </code>
        <CopyButton value={hash} />
      </div>
      <button type="button" className="link mt-2 text-sm" onClick={() => onSearch(hash)}>
        Search the ledgers for this hash
      </button>
    </div>
  );
}

function FileHashCard({ onSearch }: { onSearch: (hash: string) => void }) {
  const [dragging, setDragging] = useState(false);
  const [name, setName] = useState<string | null>(null);
  const [progress, setProgress] = useState<{ loaded: number; total: number } | null>(null);
  const [hash, setHash] = useState<string | null>(null);
  const job = useRef<HashJob | null>(null);
  const start = (files: FileList | null) => {
    const file = files?.[0];
    if (!file) return;
    job.current?.cancel();
    setName(file.name);
    setHash(null);
    setProgress({ loaded: 0, total: file.size });
    const current = hashFile(file, (loaded, total) => setProgress({ loaded, total }));
    job.current = current;
    current.promise.then(
      (h) => {
        if (job.current !== current) return;
        setHash(h);
        setProgress(null);
        toast({ title: 'Hash computed', description: `${file.name} hashed successfully` });
      },
      (err: unknown) => {
        if (job.current !== current) return;
        setProgress(null);
        if (!(err instanceof HashCancelledError))
          toast({ title: 'Hashing failed', description: `${file.name} could not be read`, variant: 'destructive' });
      },
    );
  };
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    start(e.dataTransfer.files);
  };
  return (
    <section className="card" aria-labelledby="file-hash-title">
      <h2 id="file-hash-title" className="card-title">
        Hash a file
      </h2>
      <p className="muted mt-1 text-sm">Drop or choose one file. It is hashed on your device and never uploaded.</p>
      <div
        className={`mt-4 flex flex-col items-center rounded-xl border-2 border-dashed px-4 py-8 text-center ${dragging ? 'border-emerald-500 bg-emerald-50 dark:bg-emerald-950/40' : 'border-slate-300 dark:border-slate-700'}`}
        data-testid="verify-dropzone"
        data-dragging={dragging || undefined}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
      >
        <p className="text-sm font-medium">Drop a file here</p>
        <label className="btn-secondary mt-3 cursor-pointer">
          Choose a file
          <input
            id="verify-file"
            type="file"
            className="sr-only"
            onChange={(e) => {
              start(e.target.files);
              e.target.value = '';
            }}
          />
        </label>
      </div>
      {name && (
        <p className="mt-3 truncate text-sm font-medium" title={name}>
          {name}
        </p>
      )}
      {progress && (
        <div className="mt-2 flex items-center gap-3">
          <progress
            className="h-2 w-full accent-emerald-600"
            max={Math.max(progress.total, 1)}
            value={progress.loaded}
            aria-label="Hashing progress"
          />
          <button type="button" className="btn-ghost px-2 py-1 text-xs" onClick={() => job.current?.cancel()}>
            Cancel
          </button>
        </div>
      )}
      {hash && <HashOutput hash={hash} onSearch={onSearch} />}
    </section>
  );
}

function TextHashCard({ onSearch }: { onSearch: (hash: string) => void }) {
  const [text, setText] = useState('');
  const [hash, setHash] = useState<string | null>(null);
  const compute = async (e: FormEvent) => {
    e.preventDefault();
    if (!text.trim()) return;
    setHash(await hashText(text));
    toast({ title: 'Hash computed', description: 'Text hashed successfully' });
  };
  return (
    <section className="card" aria-labelledby="text-hash-title">
      <h2 id="text-hash-title" className="card-title">
        Hash a text
      </h2>
      <form onSubmit={compute} className="mt-3">
        <label htmlFor="text-input" className="label">
          Text
        </label>
        <textarea
          id="text-input"
          className="input min-h-28 font-mono"
          value={text}
          onChange={(e) => setText(e.target.value)}
          placeholder="Type or paste text to hash (UTF-8, exactly as typed)"
        />
        <button type="submit" className="btn-primary mt-3" disabled={!text.trim()}>
          Compute Hash
        </button>
      </form>
      {hash && <HashOutput hash={hash} onSearch={onSearch} />}
    </section>
  );
}

export default function VerifyTools() {
  const [query, setQuery] = useState('');
  const [searching, setSearching] = useState(false);
  const [result, setResult] = useState<SearchResult | null>(null);
  const [queued, setQueued] = useState<QueuedHash | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const searchRef = useRef<HTMLElement>(null);

  const search = async (value: string) => {
    const hash = normalizeHashInput(value);
    if (hash.length !== 64) return;
    setSearching(true);
    setResult(null);
    setQueued(null);
    setFailure(null);
    try {
      const found: SearchResult = HEX64.test(hash) ? await verifiedSearch(hash) : notFoundResult(hash, 0, 0);
      // Not in a published ledger: the server may hold it for the next one (asked only then).
      const waiting = !found.found && HEX64.test(hash) ? await queuedFor(hash) : null;
      setQueued(waiting);
      setResult(found);
      if (found.found) toast({ title: 'Proof found! ✓', description: `Hash recorded in ledger ${found.date}` });
      else if (waiting) toast({ title: 'Queued', description: 'Not in a published ledger yet' });
      else toast({ title: 'Not found', description: 'This hash is not in any published ledger' });
    } catch (err) {
      console.error('search', err);
      if (err instanceof SearchUnavailableError) {
        toast({ title: 'Search unavailable', description: 'Could not access ledger index', variant: 'destructive' });
        setFailure('The ledger archive could not be reached. Please try again later.');
      } else {
        toast({ title: 'Search failed', description: 'Could not search ledgers', variant: 'destructive' });
        setFailure(`The archive's answer could not be verified: ${(err as Error).message}`);
      }
    } finally {
      setSearching(false);
    }
  };

  useEffect(() => {
    const params = new URLSearchParams(location.search);
    const hash = params.get('hash');
    if (hash === null) return;
    const normalized = normalizeHashInput(hash);
    setQuery(normalized);
    if (params.get('search') === 'true' && normalized.length === 64) void search(normalized);
  }, []);

  const searchFor = (hash: string) => {
    setQuery(hash);
    searchRef.current?.scrollIntoView({ behavior: 'smooth', block: 'start' });
    void search(hash);
  };

  return (
    <div className="grid gap-6">
      <div className="grid gap-6 lg:grid-cols-2">
        <FileHashCard onSearch={searchFor} />
        <TextHashCard onSearch={searchFor} />
      </div>
      <section ref={searchRef} className="card" aria-labelledby="search-title">
        <h2 id="search-title" className="card-title">
          Search Ledgers
        </h2>
        <p className="muted mt-1 text-sm">
          Your browser checks the answer itself: both checkpoint signatures and the Merkle inclusion proof.
        </p>
        <form
          className="mt-3 flex flex-col gap-3 sm:flex-row"
          onSubmit={(e) => {
            e.preventDefault();
            void search(query);
          }}
        >
          <label htmlFor="search-hash" className="sr-only">
            SHA-256 hash
          </label>
          <input
            id="search-hash"
            className="input flex-1 font-mono"
            value={query}
            onChange={(e) => setQuery(normalizeHashInput(e.target.value))}
            placeholder="Enter a 64-character SHA-256 hash"
            spellCheck={false}
            autoComplete="off"
          />
          <button type="submit" className="btn-primary sm:w-40" disabled={query.length !== 64 || searching}>
            {searching ? 'Searching...' : 'Search'}
          </button>
        </form>
        {query.length > 0 && query.length !== 64 && (
          <p className="muted mt-2 text-xs" data-testid="length-hint">
            {query.length} of 64 characters
          </p>
        )}
        {failure && (
          <p role="alert" className="field-error">
            {failure}
          </p>
        )}
        {result && <SearchResultPanel result={result} queued={queued} />}
      </section>
      <ReceiptCheck />
      <PdfCheck />
    </div>
  );
}
