// Submitting hashes. Each distinct hash is sent once, asking for its RFC 3161 receipt. Batches go to
// POST /api/v1/beta/timestamps ({"hashes": [...], "receipt": true}, at most 1000 a request; the answer's
// `results` has one entry per hash: accepted or already (stored, with its receipt), or invalid) when the server
// has it; a server without it (404 or 405) is asked one hash at a time at POST /api/v1/beta/timestamp
// ({"hash", "receipt": true}), a few requests in flight.
import { TimesealClientError, asClientError, throwIfAborted } from './errors.ts';
import { checkHash } from './hash.ts';
import { errorText, httpError, normalizeServer, request, retryAfterSeconds, type HttpOptions } from './http.ts';

export const SINGLE_ROUTE = '/api/v1/beta/timestamp';
export const BATCH_ROUTE = '/api/v1/beta/timestamps';
/** The most hashes one batch request may carry. */
export const MAX_BATCH = 1000;

export type StampResult =
  | { hash: string; ok: true; submittedAt: string; ledgerDate: string; receipt: string | null }
  | { hash: string; ok: false; error: TimesealClientError };

export interface StampOptions extends HttpOptions {
  /** The server's base URL, e.g. https://timeseal.example. */
  server: string;
  /** Ask for RFC 3161 receipts (default true). */
  receipt?: boolean;
  /** 'auto' (default): batches when the server has the batch route; 'never': one request per hash. */
  batch?: 'auto' | 'never';
  /** Hashes per batch request (default and most 1000). */
  batchSize?: number;
  /** Single requests in flight at once (default 8). */
  concurrency?: number;
  /** Called with each result as soon as it is known (to write its proof file at once). */
  onResult?: (result: StampResult) => void | Promise<void>;
}

export interface StampSummary {
  /** One result per distinct hash, in the order first given. */
  results: StampResult[];
  /** HTTP requests made (retries included). */
  requests: number;
  /** Whether the batch route was used. */
  batched: boolean;
}

interface Accepted {
  hash?: unknown;
  submittedAt?: unknown;
  ledgerDate?: unknown;
  receipt?: unknown;
}

/** Submits every distinct hash once and gives each one's answer. Throws only when aborted or misused. */
export async function stamp(hashes: readonly string[], options: StampOptions): Promise<StampSummary> {
  const server = normalizeServer(options.server);
  const unique = [...new Set(hashes.map((h) => checkHash(h)))];
  const wantReceipt = options.receipt ?? true;
  let requests = 0;
  const counted: HttpOptions = {
    ...options,
    fetch: (input, init) => {
      requests++;
      return options.fetch !== undefined ? options.fetch(input, init) : globalThis.fetch(input, init);
    },
  };
  const results = new Map<string, StampResult>();
  const deliver = async (r: StampResult) => {
    results.set(r.hash, r);
    await options.onResult?.(r);
  };

  let batched = false;
  let rest = unique;
  if ((options.batch ?? 'auto') === 'auto' && unique.length > 1) {
    const size = Math.min(Math.max(1, options.batchSize ?? MAX_BATCH), MAX_BATCH);
    const first = await batchRequest(server, unique.slice(0, size), wantReceipt, counted);
    if (first !== null) {
      batched = true;
      for (const r of first) await deliver(r);
      for (let at = size; at < unique.length; at += size) {
        const chunk = unique.slice(at, at + size);
        const answer = await batchRequest(server, chunk, wantReceipt, counted);
        if (answer === null) throw new TimesealClientError('http', `${server}${BATCH_ROUTE} stopped answering batches`);
        for (const r of answer) await deliver(r);
      }
      rest = [];
    }
  }

  let next = 0;
  const worker = async () => {
    while (next < rest.length) {
      const hash = rest[next++]!;
      await deliver(await single(server, hash, wantReceipt, counted));
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, options.concurrency ?? 8), rest.length) }, worker));
  return { results: unique.map((h) => results.get(h)!), requests, batched };
}

async function single(server: string, hash: string, wantReceipt: boolean, http: HttpOptions): Promise<StampResult> {
  const url = `${server}${SINGLE_ROUTE}`;
  try {
    const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(wantReceipt ? { hash, receipt: true } : { hash }) }, http);
    if (res.status !== 201 && res.status !== 200) throw await httpError(res, `POST ${url}`);
    return accepted(hash, (await res.json()) as Accepted, wantReceipt, `POST ${url}`);
  } catch (err) {
    throwIfAborted(http.signal);
    if (err instanceof TimesealClientError && err.code === 'aborted') throw err;
    return { hash, ok: false, error: asClientError(err, 'network') };
  }
}

/**
 * One batch request; null when the server has no batch route (404, 405) or answers in a shape this client does
 * not read, so the caller falls back to single requests. Per-hash refusals become failed results.
 */
async function batchRequest(server: string, hashes: string[], wantReceipt: boolean, http: HttpOptions): Promise<StampResult[] | null> {
  const url = `${server}${BATCH_ROUTE}`;
  const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(wantReceipt ? { hashes, receipt: true } : { hashes }) }, http);
  if (res.status === 404 || res.status === 405) {
    await res.body?.cancel().catch(() => {});
    return null;
  }
  if (res.status >= 400) {
    const retryAfter = retryAfterSeconds(res);
    const error = new TimesealClientError('http', `POST ${url}: HTTP ${res.status}: ${await errorText(res)}`, { status: res.status, ...(retryAfter === undefined ? {} : { retryAfter }) });
    return hashes.map((hash) => ({ hash, ok: false, error }));
  }
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null || !Array.isArray((body as { results?: unknown }).results)) return null;
  const top = body as { results: unknown[]; submittedAt?: unknown; ledgerDate?: unknown };
  const byHash = new Map<string, Record<string, unknown>>();
  for (const item of top.results) {
    if (typeof item === 'object' && item !== null && typeof (item as { hash?: unknown }).hash === 'string') byHash.set((item as { hash: string }).hash.toLowerCase(), item as Record<string, unknown>);
  }
  return hashes.map((hash) => {
    const item = byHash.get(hash);
    if (item === undefined) return { hash, ok: false, error: new TimesealClientError('http', `POST ${url}: the answer says nothing about ${hash}`) };
    // accepted and already: stored by this batch (with its receipt when asked); invalid: refused.
    if (item.status !== 'accepted' && item.status !== 'already') {
      return { hash, ok: false, error: new TimesealClientError('http', `POST ${url}: ${hash}: ${typeof item.error === 'string' ? item.error : `status ${String(item.status)}`}`) };
    }
    return accepted(hash, { hash: item.hash, submittedAt: item.submittedAt ?? top.submittedAt, ledgerDate: item.ledgerDate ?? top.ledgerDate, receipt: item.receipt }, wantReceipt, `POST ${url}`);
  });
}

function accepted(hash: string, body: Accepted, wantReceipt: boolean, what: string): StampResult {
  const answered = typeof body.hash === 'string' ? body.hash.toLowerCase() : hash;
  if (answered !== hash) return { hash, ok: false, error: new TimesealClientError('http', `${what}: answered for another hash (${answered})`) };
  if (typeof body.submittedAt !== 'string' || typeof body.ledgerDate !== 'string') {
    return { hash, ok: false, error: new TimesealClientError('http', `${what}: the answer lacks submittedAt or ledgerDate`) };
  }
  const receipt = typeof body.receipt === 'string' ? body.receipt : null;
  if (wantReceipt && receipt === null) return { hash, ok: false, error: new TimesealClientError('http', `${what}: no receipt in the answer although one was asked for`) };
  return { hash, ok: true, submittedAt: body.submittedAt, ledgerDate: body.ledgerDate, receipt };
}
