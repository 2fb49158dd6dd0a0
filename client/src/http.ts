// HTTP for the library: the platform's fetch (or the caller's), a deadline per request, the caller's
// AbortSignal, and polite retries — a 429 or 503 is asked again only after the server's Retry-After (when that
// wait is short), a broken connection after a short pause. Everything else is the caller's to judge.
import { asClientError, throwIfAborted, TimesealClientError } from './errors.ts';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface HttpOptions {
  /** Cancels every request and wait. */
  signal?: AbortSignal;
  /** The fetch to use (default: globalThis.fetch). */
  fetch?: FetchLike;
  /** Deadline of one request, milliseconds (default 30 000). */
  timeoutMs?: number;
  /** The longest Retry-After honoured by waiting, seconds (default 60); a longer one is returned to the caller. */
  maxRetryWait?: number;
  /** Attempts per request, retries included (default 4). */
  attempts?: number;
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(res: Response, now: number = Date.now()): number | undefined {
  const value = res.headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** Waits `ms`, or rejects with an 'aborted' error when `signal` fires first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  throwIfAborted(signal);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new TimesealClientError('aborted', 'aborted while waiting', { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * One request with retries. Answers other than 429/503 (and those after the last attempt) are returned as they
 * are; network failures after the last attempt throw a 'network' error, a cancellation an 'aborted' one.
 */
export async function request(url: string, init: RequestInit, options: HttpOptions = {}): Promise<Response> {
  if (options.fetch === undefined && typeof globalThis.fetch !== 'function')
    throw new TimesealClientError('usage', 'this platform has no fetch: pass options.fetch');
  // The platform's fetch is called as a plain function of the global object, as browsers require.
  const doFetch: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const attempts = options.attempts ?? 4;
  const maxWait = options.maxRetryWait ?? 60;
  for (let attempt = 1; ; attempt++) {
    throwIfAborted(options.signal);
    const deadline = new AbortController();
    const timer = setTimeout(
      () =>
        deadline.abort(
          new TimesealClientError('aborted', `no answer from ${url} within ${options.timeoutMs ?? 30_000} ms`),
        ),
      options.timeoutMs ?? 30_000,
    );
    const onAbort = () => deadline.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let res: Response;
    try {
      res = await doFetch(url, { ...init, signal: deadline.signal });
    } catch (err) {
      if (options.signal?.aborted) throw asClientError(err, 'aborted', `${init.method ?? 'GET'} ${url}`);
      const timedOut = deadline.signal.aborted;
      if (attempt >= attempts || timedOut) {
        const reason = timedOut ? (deadline.signal.reason as Error).message : (err as Error).message + causeText(err);
        throw new TimesealClientError(timedOut ? 'aborted' : 'network', `${init.method ?? 'GET'} ${url}: ${reason}`, {
          cause: err,
        });
      }
      await sleep(500 * 2 ** (attempt - 1), options.signal);
      continue;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
    if ((res.status === 429 || res.status === 503) && attempt < attempts) {
      const wait = retryAfterSeconds(res);
      if (wait !== undefined && wait <= maxWait) {
        await res.body?.cancel().catch(() => {});
        await sleep(Math.max(wait, 1) * 1000, options.signal);
        continue;
      }
    }
    return res;
  }
}

function causeText(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } } | null)?.cause;
  return cause ? ` (${cause.code ?? cause.message ?? ''})` : '';
}

/** The text of an error answer: its JSON `message` or `error`, else the start of the body. */
export async function errorText(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: unknown };
    const said =
      typeof body.message === 'string' ? body.message : typeof body.error === 'string' ? body.error : undefined;
    if (said !== undefined) return said;
  } catch {
    // not JSON
  }
  return text.slice(0, 200) || res.statusText;
}

/** A typed error for an answer the caller did not expect. */
export async function httpError(res: Response, what: string): Promise<TimesealClientError> {
  const retryAfter = retryAfterSeconds(res);
  const code = res.status === 404 ? 'not-found' : 'http';
  return new TimesealClientError(code, `${what}: HTTP ${res.status}: ${await errorText(res)}`, {
    status: res.status,
    ...(retryAfter === undefined ? {} : { retryAfter }),
  });
}

/** A server base URL as the client keeps it: http(s), no trailing slash, no query. */
export function normalizeServer(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new TimesealClientError(
      'usage',
      `not a URL: ${JSON.stringify(url)} (expected e.g. https://timeseal.example)`,
    );
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new TimesealClientError('usage', `the server URL must be http or https: ${url}`);
  if (u.search || u.hash)
    throw new TimesealClientError('usage', `the server URL must have no query or fragment: ${url}`);
  return `${u.origin}${u.pathname}`.replace(/\/+$/, '');
}
