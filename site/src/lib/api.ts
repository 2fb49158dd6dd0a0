// Calls to the Timeseal API (docs/API.md): cookies included, JSON bodies, and any non-OK answer becomes an Error
// whose message is "<status>: <body text>" or "<status>: <status text>" when the body is empty.
export class HttpError extends Error {
  readonly status: number;
  readonly body: string;
  constructor(status: number, statusText: string, body: string) {
    super(`${status}: ${body || statusText}`);
    this.name = 'HttpError';
    this.status = status;
    this.body = body;
  }
  /** The server's own message: `message` or `error` of a JSON body, else the body text. */
  get serverMessage(): string {
    try {
      const parsed = JSON.parse(this.body) as { message?: unknown; error?: unknown };
      if (typeof parsed.message === 'string' && parsed.message) return parsed.message;
      if (typeof parsed.error === 'string' && parsed.error) return parsed.error;
    } catch {
      // Not JSON: the text itself.
    }
    return this.body;
  }
}

export async function apiRequest<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, credentials: 'include', headers: { accept: 'application/json' } };
  if (body !== undefined) {
    init.headers = { accept: 'application/json', 'content-type': 'application/json' };
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (!res.ok) throw new HttpError(res.status, res.statusText, await res.text().catch(() => ''));
  return (await res.json()) as T;
}

export const getJson = <T>(path: string): Promise<T> => apiRequest<T>('GET', path);
export const postJson = <T>(path: string, body?: unknown): Promise<T> => apiRequest<T>('POST', path, body ?? {});

/** The message to show for a failed call: the server's own message when there is one, else `fallback`. */
export function errorMessage(err: unknown, fallback: string): string {
  if (err instanceof HttpError) return err.serverMessage || fallback;
  return fallback;
}
