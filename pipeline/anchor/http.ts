// Every network call of the anchoring step goes through `boundedFetch`: a deadline for the whole exchange
// (connect, headers and body) and a cap on the body size, read as a stream so an oversized or endless answer
// is cut off without buffering it. Failures are NetworkErrors whose message says what happened, in words an
// operator can act on (they end up in the status files).
import { TimesealError } from '../../core/errors.ts';

export class NetworkError extends TimesealError {
  readonly reason: 'timeout' | 'too-large' | 'unreachable';
  constructor(reason: NetworkError['reason'], message: string, options?: ErrorOptions) {
    super('io', message, options);
    this.name = 'NetworkError';
    this.reason = reason;
  }
}

export interface BoundedResponse {
  status: number;
  body: Uint8Array;
}

export interface BoundedRequest {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: Uint8Array | string;
  timeoutMs: number;
  maxBytes: number;
}

/** Fetches `url`; resolves with any HTTP status, rejects with a NetworkError on timeout, size or transport failure. */
export async function boundedFetch(url: string, req: BoundedRequest): Promise<BoundedResponse> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, req.timeoutMs);
  try {
    const res = await fetch(url, {
      method: req.method ?? 'GET',
      headers: req.headers,
      body: typeof req.body === 'string' || req.body === undefined ? req.body : Buffer.from(req.body),
      signal: controller.signal,
      redirect: 'error',
    });
    const declared = Number(res.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > req.maxBytes) {
      controller.abort();
      throw new NetworkError('too-large', `${url}: answer of ${declared} bytes exceeds the ${req.maxBytes}-byte limit`);
    }
    const chunks: Uint8Array[] = [];
    let total = 0;
    if (res.body) {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value: chunk } = await reader.read();
        if (done) break;
        total += chunk.length;
        if (total > req.maxBytes) {
          controller.abort();
          throw new NetworkError('too-large', `${url}: answer exceeds the ${req.maxBytes}-byte limit`);
        }
        chunks.push(chunk);
      }
    }
    const body = new Uint8Array(total);
    let offset = 0;
    for (const c of chunks) {
      body.set(c, offset);
      offset += c.length;
    }
    return { status: res.status, body };
  } catch (err) {
    if (err instanceof NetworkError) throw err;
    if (timedOut) throw new NetworkError('timeout', `${url}: no complete answer within ${req.timeoutMs} ms`, { cause: err });
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const detail = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new NetworkError('unreachable', `${url}: unreachable (${detail})`, { cause: err });
  } finally {
    clearTimeout(timer);
  }
}

/** A short, printable excerpt of an answer body for error messages and status files. */
export function bodyExcerpt(body: Uint8Array, max = 200): string {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(body.subarray(0, max * 4));
  const clean = text.replace(/[^\x20-\x7e]+/g, ' ').trim();
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}
