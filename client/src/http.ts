// HTTP for the library: the platform's fetch (or the caller's), and one bounded reader of every answer, as the
// server's own client has (pipeline/http.ts), so that whatever a server sends costs at most a cap in memory and a
// deadline in time:
// - one deadline covers the whole exchange, headers and every byte of the body: a server that trickles its answer
//   is cut off like one that never answers ("no complete answer within N ms");
// - each kind of answer has its cap (LIMITS: a batch of 1,000 receipts is under 3 MB; keys, bundles, tiles are
//   small), and the body is read as a stream and counted: it stops at the first byte beyond the cap (at once when
//   a content-length already says more), so an oversized or endless answer is never held;
// - nothing is decompressed: every request says `accept-encoding: identity`, and an answer that carries another
//   content-encoding anyway is refused before its body is read (a 1 MB gzip inflates to 1 GiB). Node's fetch
//   sends the header as written and would inflate such an answer; a browser forbids the header, negotiates
//   compression itself and hands over the inflated bytes, which the cap counts all the same.
// Retries are polite: a 429 or 503 is asked again only after the server's Retry-After (when that wait is short),
// a broken connection after a short pause. Everything else is the caller's to judge.
import { asClientError, throwIfAborted, TimesealClientError } from './errors.ts';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface HttpOptions {
  /** Cancels every request and wait. */
  signal?: AbortSignal;
  /** The fetch to use (default: globalThis.fetch). */
  fetch?: FetchLike;
  /** Deadline of one request and its whole answer, milliseconds (default 30 000). */
  timeoutMs?: number;
  /** The longest Retry-After honoured by waiting, seconds (default 60); a longer one is returned to the caller. */
  maxRetryWait?: number;
  /** Attempts per request, retries included (default 4). */
  attempts?: number;
}

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * The most bytes of each kind of answer. A receipt (an RFC 3161 TimeStampResp with its certificates, base64 in
 * JSON) is about 2 KB: 1,000 of them are under 3 MB, and 8 KiB each leaves room for a longer chain.
 */
export interface AnswerLimits {
  /** A key file (/keys/…: PEM, the raw ML-DSA-65 key, vkeys, the witness policy). */
  readonly key: number;
  /** The answer to one submission (a hash and its receipt). */
  readonly submission: number;
  /** The answer to a batch of `n` hashes. */
  batch(n: number): number;
  /** A proof bundle (timeseal-proof/3: a checkpoint with up to 100 cosignatures, receipts and tokens, an .ots). */
  readonly bundle: number;
  /** The log's latest checkpoint with its cosignature lines (about 340 KB at 100 ML-DSA-44 cosignatures). */
  readonly checkpoint: number;
  /** A tile of the log (at most 256 hashes of 32 bytes). */
  readonly tile: number;
  /** An Esplora answer: a block hash or an 80-byte header, in hex. */
  readonly esplora: number;
  /** The published days (/ledgers/days.json: about 200 bytes a day, some 730 KB after ten years). */
  readonly days: number;
  /** The text of an error answer (its first 200 characters are shown). */
  readonly error: number;
}

export const LIMITS: AnswerLimits = {
  key: 64 * KiB,
  submission: 64 * KiB,
  batch: (n) => 64 * KiB + n * 8 * KiB,
  bundle: 4 * MiB,
  checkpoint: MiB,
  tile: 64 * KiB,
  esplora: 4 * KiB,
  days: 8 * MiB,
  error: 16 * KiB,
};

/** What `request` resolves to: the status and headers, and the body, read within the cap and the deadline. */
export interface Answer {
  readonly status: number;
  readonly ok: boolean;
  readonly statusText: string;
  readonly headers: Headers;
  /** The whole body; rejects with an 'http' error past the cap (the request's, or a smaller `maxBytes`), an
   * 'aborted' one past the deadline, a 'network' one when the connection breaks. */
  bytes(maxBytes?: number): Promise<Uint8Array>;
  /** The whole body as UTF-8. */
  text(maxBytes?: number): Promise<string>;
  /** The body in pieces as they arrive, never held: within the cap and the deadline, as `bytes`. */
  pieces(): AsyncIterable<Uint8Array>;
  /** Ends the exchange without reading the body. */
  cancel(): Promise<void>;
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(res: { headers: Headers }, now: number = Date.now()): number | undefined {
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
 * One request with retries, its answer's body at most `maxBytes` (one of LIMITS) and read within the deadline
 * that began with the request. Answers other than 429/503 (and those after the last attempt) are returned with
 * their body still to read (or cancel); an encoded answer is refused with an 'http' error; a network failure after
 * the last attempt throws a 'network' error, the deadline or a cancellation an 'aborted' one.
 */
export async function request(url: string, init: RequestInit, options: HttpOptions, maxBytes: number): Promise<Answer> {
  if (options.fetch === undefined && typeof globalThis.fetch !== 'function')
    throw new TimesealClientError('usage', 'this platform has no fetch: pass options.fetch');
  // The platform's fetch is called as a plain function of the global object, as browsers require.
  const doFetch: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const attempts = options.attempts ?? 4;
  const maxWait = options.maxRetryWait ?? 60;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const what = `${init.method ?? 'GET'} ${url}`;
  const headers = new Headers(init.headers);
  headers.set('accept-encoding', 'identity');
  for (let attempt = 1; ; attempt++) {
    throwIfAborted(options.signal);
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(new TimesealClientError('aborted', `${what}: no complete answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onAbort = () => deadline.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    /** The exchange is over: its deadline and the caller's signal no longer concern it. */
    const over = () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    };
    let res: Response;
    try {
      res = await doFetch(url, { ...init, headers, signal: deadline.signal });
    } catch (err) {
      over();
      if (options.signal?.aborted) throw asClientError(err, 'aborted', what);
      const timedOut = deadline.signal.aborted;
      if (attempt >= attempts || timedOut) {
        const reason = timedOut
          ? (deadline.signal.reason as Error).message
          : `${what}: ${(err as Error).message}${causeText(err)}`;
        throw new TimesealClientError(timedOut ? 'aborted' : 'network', reason, { cause: err });
      }
      await sleep(500 * 2 ** (attempt - 1), options.signal);
      continue;
    }
    const answered = res;
    const cancel = async (): Promise<void> => {
      over();
      await answered.body?.cancel().catch(() => {});
    };
    const encoding = (res.headers.get('content-encoding') ?? '').trim().toLowerCase();
    if (encoding !== '' && encoding !== 'identity' && !inBrowser()) {
      await cancel();
      throw new TimesealClientError(
        'http',
        `${what}: the answer is ${oneLine(encoding, 40)}-encoded although identity was asked for; not decompressed`,
        { status: res.status },
      );
    }
    if ((res.status === 429 || res.status === 503) && attempt < attempts) {
      const wait = retryAfterSeconds(res);
      if (wait !== undefined && wait <= maxWait) {
        await cancel();
        await sleep(Math.max(wait, 1) * 1000, options.signal);
        continue;
      }
    }
    /** A failure while the body was read: the caller's cancel, the deadline, the cap or the connection. */
    const failure = (err: unknown): TimesealClientError => {
      if (options.signal?.aborted) return asClientError(err, 'aborted', what);
      if (err instanceof TimesealClientError) return err;
      if (deadline.signal.aborted && deadline.signal.reason instanceof TimesealClientError)
        return deadline.signal.reason;
      return new TimesealClientError(
        'network',
        `${what}: the answer broke off: ${(err as Error).message}${causeText(err)}`,
        { cause: err },
      );
    };
    let body: Promise<Uint8Array> | undefined;
    const bytes = (limit = maxBytes): Promise<Uint8Array> =>
      (body ??= readBounded(answered, Math.min(limit, maxBytes), what).then(
        (b) => {
          over();
          return b;
        },
        (err: unknown) => {
          over();
          throw failure(err);
        },
      ));
    return {
      status: res.status,
      ok: res.ok,
      statusText: res.statusText,
      headers: res.headers,
      bytes,
      text: async (limit) => new TextDecoder().decode(await bytes(limit)),
      pieces: () => ({
        [Symbol.asyncIterator]: async function* () {
          try {
            yield* readPieces(answered, maxBytes, what);
          } catch (err) {
            throw failure(err);
          } finally {
            over();
          }
        },
      }),
      cancel,
    };
  }
}

/** Whether this runs in a browser (a page or a worker), which sends its own Accept-Encoding and decompresses what
 * it asked for. */
function inBrowser(): boolean {
  const g = globalThis as { document?: unknown; WorkerGlobalScope?: unknown };
  return g.document !== undefined || g.WorkerGlobalScope !== undefined;
}

/** The body of `res` in pieces, at most `maxBytes`: refused at once when its content-length says more, else at the
 * first byte beyond (the rest is never read). */
async function* readPieces(res: Response, maxBytes: number, what: string): AsyncGenerator<Uint8Array> {
  const tooLarge = (declared?: number) =>
    new TimesealClientError(
      'http',
      `${what}: the answer${declared === undefined ? '' : ` of ${declared} bytes`} exceeds the ${maxBytes}-byte limit of its kind; refused`,
      { status: res.status },
    );
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw tooLarge(declared);
  }
  if (res.body === null) return;
  const reader = res.body.getReader();
  let total = 0;
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      total += value.length;
      if (total > maxBytes) throw tooLarge();
      yield value;
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
  }
}

/** The body of `res`, at most `maxBytes` (readPieces), whole. */
async function readBounded(res: Response, maxBytes: number, what: string): Promise<Uint8Array> {
  const pieces: Uint8Array[] = [];
  let total = 0;
  for await (const piece of readPieces(res, maxBytes, what)) {
    pieces.push(piece);
    total += piece.length;
  }
  if (pieces.length === 1) return pieces[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

/** Text a server chose, on one line and short, for a message. */
function oneLine(text: string, max: number): string {
  return text
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .trim()
    .slice(0, max);
}

function causeText(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } } | null)?.cause;
  return cause ? ` (${cause.code ?? cause.message ?? ''})` : '';
}

/** The text of an error answer: its JSON `message` or `error`, else the start of the body. */
export async function errorText(res: Answer): Promise<string> {
  const text = await res.text(LIMITS.error).catch((err: unknown) => `(${(err as Error).message})`);
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: unknown };
    const said =
      typeof body.message === 'string' ? body.message : typeof body.error === 'string' ? body.error : undefined;
    if (said !== undefined) return oneLine(said, 200);
  } catch {
    // not JSON
  }
  return oneLine(text, 200) || res.statusText;
}

/** A typed error for an answer the caller did not expect. */
export async function httpError(res: Answer, what: string): Promise<TimesealClientError> {
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
