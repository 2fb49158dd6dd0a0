// Submitting hashes. Each distinct hash is sent once, asking for its RFC 3161 receipt. Batches go to
// POST /api/v1/beta/timestamps ({"hashes": [...], "receipt": true}, at most 1000 a request; the answer's
// `results` has one entry per hash: accepted or already (stored, with its receipt), or invalid) when the server
// has it; a server without it (404 or 405) is asked one hash at a time at POST /api/v1/beta/timestamp
// ({"hash", "receipt": true}), a few requests in flight.
// When the server cannot be reached, the connection breaks (after the request's retries), or the server answers
// 429 or 5xx, nothing more is sent: the hashes of that request and every later one fail with that error, which
// isTemporary() calls temporary, and the summary's `interrupted` says so. What was answered before is kept, so a
// caller that saves each result as it comes (onResult) can send only the rest next time.
import { TimesealClientError, asClientError, isTemporary, throwIfAborted } from './errors.ts';
import { checkHash } from './hash.ts';
import { errorText, httpError, LIMITS, normalizeServer, request, retryAfterSeconds, type HttpOptions } from './http.ts';

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
  /**
   * The temporary failure (isTemporary) that stopped the run, or null: the hashes of the request it broke and
   * those not sent after it failed with it; a later run may send them.
   */
  interrupted: TimesealClientError | null;
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
  let interrupted: TimesealClientError | null = null;
  const inFlight = new Set<string>();
  /** Stops the run at a temporary failure: every hash neither answered nor in flight fails with it, unsent. */
  const stop = async (error: TimesealClientError) => {
    if (interrupted !== null) return;
    interrupted = error;
    for (const hash of unique) {
      if (!results.has(hash) && !inFlight.has(hash))
        await deliver({
          hash,
          ok: false,
          error: new TimesealClientError(error.code, `not sent: ${error.message}`, {
            cause: error,
            ...(error.status === undefined ? {} : { status: error.status }),
          }),
        });
    }
  };
  let rest = unique;
  if ((options.batch ?? 'auto') === 'auto' && unique.length > 1) {
    const size = Math.min(Math.max(1, options.batchSize ?? MAX_BATCH), MAX_BATCH);
    for (let at = 0; at < unique.length && interrupted === null; at += size) {
      const chunk = unique.slice(at, at + size);
      let answer: StampResult[] | null;
      try {
        answer = await batchRequest(server, chunk, wantReceipt, counted);
      } catch (err) {
        throwIfAborted(options.signal);
        // A broken connection, or the request's own deadline (code 'aborted': the server's silence, not the
        // caller's cancel): nothing of this batch was acknowledged.
        const error = asClientError(err, 'network');
        if (!isTemporary(error)) throw error;
        for (const hash of chunk) await deliver({ hash, ok: false, error });
        await stop(error);
        break;
      }
      if (answer === null) {
        if (at === 0) break; // no batch route: single requests below
        throw new TimesealClientError('http', `${server}${BATCH_ROUTE} stopped answering batches`);
      }
      batched = true;
      for (const r of answer) await deliver(r);
      const failed = answer.find((r) => !r.ok && isTemporary(r.error));
      if (failed !== undefined && !failed.ok) await stop(failed.error);
    }
    if (batched || interrupted !== null) rest = [];
  }

  let next = 0;
  const worker = async () => {
    while (next < rest.length && interrupted === null) {
      const hash = rest[next++]!;
      inFlight.add(hash);
      const r = await single(server, hash, wantReceipt, counted);
      inFlight.delete(hash);
      await deliver(r);
      if (!r.ok && isTemporary(r.error)) await stop(r.error);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, options.concurrency ?? 8), rest.length) }, worker));
  return { results: unique.map((h) => results.get(h)!), requests, batched, interrupted };
}

async function single(server: string, hash: string, wantReceipt: boolean, http: HttpOptions): Promise<StampResult> {
  const url = `${server}${SINGLE_ROUTE}`;
  try {
    const res = await request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(wantReceipt ? { hash, receipt: true } : { hash }),
      },
      http,
      LIMITS.submission,
    );
    if (res.status !== 201 && res.status !== 200) throw await httpError(res, `POST ${url}`);
    const text = await res.text();
    let body: Accepted;
    try {
      body = JSON.parse(text) as Accepted;
    } catch {
      throw new TimesealClientError('http', `POST ${url}: the answer is not JSON`, { status: res.status });
    }
    return accepted(hash, body, wantReceipt, `POST ${url}`);
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
async function batchRequest(
  server: string,
  hashes: string[],
  wantReceipt: boolean,
  http: HttpOptions,
): Promise<StampResult[] | null> {
  const url = `${server}${BATCH_ROUTE}`;
  const res = await request(
    url,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(wantReceipt ? { hashes, receipt: true } : { hashes }),
    },
    http,
    LIMITS.batch(hashes.length),
  );
  if (res.status === 404 || res.status === 405) {
    await res.cancel();
    return null;
  }
  if (res.status >= 400) {
    const retryAfter = retryAfterSeconds(res);
    const error = new TimesealClientError('http', `POST ${url}: HTTP ${res.status}: ${await errorText(res)}`, {
      status: res.status,
      ...(retryAfter === undefined ? {} : { retryAfter }),
    });
    return hashes.map((hash) => ({ hash, ok: false, error }));
  }
  // A body cut short (the server killed while it answered) is a broken connection, thrown to the caller as one; a
  // whole body that is not a batch answer means the server does not answer batches.
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null || !Array.isArray((body as { results?: unknown }).results)) return null;
  const top = body as { results: unknown[]; submittedAt?: unknown; ledgerDate?: unknown };
  const byHash = new Map<string, Record<string, unknown>>();
  for (const item of top.results) {
    if (typeof item === 'object' && item !== null && typeof (item as { hash?: unknown }).hash === 'string')
      byHash.set((item as { hash: string }).hash.toLowerCase(), item as Record<string, unknown>);
  }
  return hashes.map((hash) => {
    const item = byHash.get(hash);
    if (item === undefined)
      return {
        hash,
        ok: false,
        error: new TimesealClientError('http', `POST ${url}: the answer says nothing about ${hash}`),
      };
    // accepted and already: stored by this batch (with its receipt when asked); invalid: refused.
    if (item.status !== 'accepted' && item.status !== 'already') {
      return {
        hash,
        ok: false,
        error: new TimesealClientError(
          'http',
          `POST ${url}: ${hash}: ${typeof item.error === 'string' ? item.error : `status ${String(item.status)}`}`,
        ),
      };
    }
    return accepted(
      hash,
      {
        hash: item.hash,
        submittedAt: item.submittedAt ?? top.submittedAt,
        ledgerDate: item.ledgerDate ?? top.ledgerDate,
        receipt: item.receipt,
      },
      wantReceipt,
      `POST ${url}`,
    );
  });
}

function accepted(hash: string, body: Accepted, wantReceipt: boolean, what: string): StampResult {
  const answered = typeof body.hash === 'string' ? body.hash.toLowerCase() : hash;
  if (answered !== hash)
    return {
      hash,
      ok: false,
      error: new TimesealClientError('http', `${what}: answered for another hash (${answered})`),
    };
  if (typeof body.submittedAt !== 'string' || typeof body.ledgerDate !== 'string') {
    return {
      hash,
      ok: false,
      error: new TimesealClientError('http', `${what}: the answer lacks submittedAt or ledgerDate`),
    };
  }
  const receipt = typeof body.receipt === 'string' ? body.receipt : null;
  if (wantReceipt && receipt === null)
    return {
      hash,
      ok: false,
      error: new TimesealClientError('http', `${what}: no receipt in the answer although one was asked for`),
    };
  return { hash, ok: true, submittedAt: body.submittedAt, ledgerDate: body.ledgerDate, receipt };
}
