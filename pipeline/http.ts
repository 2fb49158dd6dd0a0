// Every outgoing HTTP request of Timeseal goes through this client: the calendars and header sources of the
// anchoring step (pipeline/anchor/), the time-stamp authorities (pipeline/tsa-client.ts), the witnesses
// (pipeline/witness.ts) and `timeseal verify --archive URL` (pipeline/archive-reader.ts). Whoever answers, an
// answer costs at most the caller's cap in memory and the caller's deadline in time:
// - one deadline covers the whole exchange (connect, headers and every byte of the body): a peer that trickles
//   one byte at a time is cut off like one that never answers ("did not answer within N ms");
// - the body is read as a stream and counted: the exchange stops at the first byte beyond the cap (at once when
//   a content-length already says more), so an oversized or endless answer is never buffered;
// - no redirect is followed: a 3xx is refused with its status, before its body is read, and nothing is sent to
//   its Location (a 307 would send the POSTed checkpoint or query elsewhere, and that server's answer would be
//   taken for the one asked);
// - nothing is decompressed: the request says `accept-encoding: identity`, and an answer that carries another
//   content-encoding anyway is refused, not inflated (a small gzip inflates to gigabytes).
// It is built on node:http/https, not fetch: Node's fetch (undici) inflates any gzip/deflate/br answer whatever
// the request's accept-encoding said (checked on Node 24: a 1 KB gzip answer to `accept-encoding: identity` came
// out of fetch as 1 MiB), and follows or rejects redirects out of our sight; node:http hands over the raw bytes
// and never follows a redirect. Failures are NetworkErrors whose message names the URL and says what happened,
// in words an operator can act on (they end up in status files and logs).
// node:http and node:https are loaded by the first request (~100 ms of CPU together): a command that asks
// nobody (`timeseal verify` of a folder, a build without anchoring) does not pay for them.
import type http from 'node:http';
import { TimesealError } from '../core/errors.ts';

export type NetworkFailure = 'timeout' | 'too-large' | 'unreachable' | 'redirect' | 'encoded';

export class NetworkError extends TimesealError {
  readonly reason: NetworkFailure;
  readonly url: string;
  /** What happened, without the URL: for 'unreachable' the system's error code (ECONNREFUSED, …). */
  readonly detail: string;
  constructor(reason: NetworkFailure, url: string, detail: string, options?: ErrorOptions) {
    super('io', `${url}: ${reason === 'unreachable' ? `unreachable (${detail})` : detail}`, options);
    this.name = 'NetworkError';
    this.reason = reason;
    this.url = url;
    this.detail = detail;
  }
}

export interface BoundedRequest {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: Uint8Array | string;
  /** The deadline of the whole exchange, from the first byte sent to the last byte received. */
  timeoutMs: number;
  /** The most body bytes accepted. */
  maxBytes: number;
}

export interface BoundedResponse {
  status: number;
  statusText: string;
  body: Uint8Array;
}

export interface BoundedStream {
  status: number;
  statusText: string;
  /** The body in pieces, within the cap and the deadline; leaving the loop early ends the exchange. */
  body: AsyncIterable<Uint8Array>;
  /** Ends the exchange without reading the body. */
  cancel(): void;
}

/** A short, printable excerpt of peer-controlled text for error messages and status files. */
export function bodyExcerpt(body: Uint8Array, max = 200): string {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(body.subarray(0, max * 4));
  const clean = text.replace(/[^\x20-\x7e]+/g, ' ').trim();
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

/** Opens `url` and resolves once the headers are in; rejects with a NetworkError (see the file's head). */
export function boundedStream(url: string, req: BoundedRequest): Promise<BoundedStream> {
  return new Promise((resolve, reject) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return reject(new NetworkError('unreachable', url, 'not a URL'));
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:')
      return reject(new NetworkError('unreachable', url, `${target.protocol} is not http: or https:`));
    const payload =
      req.body === undefined
        ? undefined
        : typeof req.body === 'string'
          ? Buffer.from(req.body, 'utf8')
          : Buffer.from(req.body);
    const request = (
      target.protocol === 'https:' ? process.getBuiltinModule('node:https') : process.getBuiltinModule('node:http')
    ).request(target, {
      method: req.method ?? 'GET',
      headers: {
        ...req.headers,
        'accept-encoding': 'identity',
        ...(payload ? { 'content-length': String(payload.length) } : {}),
      },
    });
    // The first failure wins: the deadline or the cap ends the exchange, and whatever error the ending then
    // raises (on the request or in the body's loop) reports it. A response read to its end has handed its
    // connection back to the pool for the next request: that one is left alone.
    let failure: NetworkError | undefined;
    let response: http.IncomingMessage | undefined;
    const end = (): void => {
      if (!response?.readableEnded) request.destroy();
    };
    const fail = (err: NetworkError): NetworkError => {
      failure ??= err;
      end();
      return failure;
    };
    const transport = (err: unknown): NetworkError => {
      if (failure) return failure;
      if (err instanceof NetworkError) return err;
      const e = err as NodeJS.ErrnoException;
      return new NetworkError('unreachable', url, e.code ?? e.message, { cause: err });
    };
    const timer = setTimeout(
      () => fail(new NetworkError('timeout', url, `did not answer within ${req.timeoutMs} ms`)),
      req.timeoutMs,
    );
    request.on('error', (err) => {
      clearTimeout(timer);
      reject(transport(err));
    });
    request.on('response', (res) => {
      response = res;
      /** Refuses the answer on its headers: its body is never read. */
      const refuse = (reason: NetworkFailure, detail: string): void => {
        clearTimeout(timer);
        reject(fail(new NetworkError(reason, url, detail)));
      };
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        const location = bodyExcerpt(new TextEncoder().encode(res.headers.location ?? ''));
        return refuse('redirect', `HTTP ${status} redirect${location ? ` to ${location}` : ''}, not followed`);
      }
      const encoding = (res.headers['content-encoding'] ?? '').trim().toLowerCase();
      if (encoding !== '' && encoding !== 'identity') {
        return refuse(
          'encoded',
          `answer is ${bodyExcerpt(new TextEncoder().encode(encoding), 40)}-encoded although identity was asked for; not decompressed`,
        );
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > req.maxBytes)
        return refuse('too-large', `answer of ${declared} bytes exceeds the ${req.maxBytes}-byte limit`);
      const body = async function* (): AsyncGenerator<Uint8Array> {
        let total = 0;
        try {
          for await (const chunk of res as AsyncIterable<Buffer>) {
            total += chunk.length;
            if (total > req.maxBytes)
              throw fail(new NetworkError('too-large', url, `answer exceeds the ${req.maxBytes}-byte limit`));
            if (failure) throw failure;
            yield chunk;
          }
          if (failure) throw failure;
        } catch (err) {
          throw transport(err);
        } finally {
          clearTimeout(timer);
          // Left early (the caller's break, the cap): a connection with answer still to come is closed.
          end();
        }
      };
      resolve({
        status,
        statusText: res.statusMessage ?? '',
        body: body(),
        cancel: () => {
          clearTimeout(timer);
          end();
        },
      });
    });
    request.end(payload);
  });
}

/** Fetches `url`; resolves with any status other than 3xx and the whole body, rejects with a NetworkError. */
export async function boundedFetch(url: string, req: BoundedRequest): Promise<BoundedResponse> {
  const res = await boundedStream(url, req);
  return { status: res.status, statusText: res.statusText, body: await readBody(res.body) };
}

/** A streamed body in one buffer. */
export async function readBody(body: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}
