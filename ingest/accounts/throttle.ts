// Failure throttling for login and password reset (issue 6): at most 10 failures per key in a sliding
// 15-minute window; then the key is refused (429) until old failures leave the window. Keys are
// `account:<name>` and `ip:<client key>`, so one account cannot be brute-forced from many addresses and one
// address cannot spray many accounts. Kept in memory: one `timeseal serve` process owns the accounts API,
// and a restart only forgets recent failures (documented in ingest/accounts/README.md).
export const MAX_FAILURES = 10;
export const WINDOW_MS = 15 * 60_000;
export const THROTTLED_ERROR = 'Too many failed attempts. Please wait 15 minutes and try again.';

export class Throttle {
  readonly #failures = new Map<string, number[]>();
  readonly #max: number;
  readonly #windowMs: number;

  constructor(max = MAX_FAILURES, windowMs = WINDOW_MS) {
    this.#max = max;
    this.#windowMs = windowMs;
  }

  #recent(key: string, now: number): number[] {
    const list = (this.#failures.get(key) ?? []).filter((t) => t > now - this.#windowMs && t <= now);
    if (list.length === 0) this.#failures.delete(key);
    else this.#failures.set(key, list);
    return list;
  }

  /** True when any of the keys has reached the limit. */
  blocked(keys: string[], now: Date): boolean {
    return keys.some((k) => this.#recent(k, now.getTime()).length >= this.#max);
  }

  fail(keys: string[], now: Date): void {
    for (const k of keys) this.#failures.set(k, [...this.#recent(k, now.getTime()), now.getTime()]);
    if (this.#failures.size > 100_000) this.#prune(now.getTime());
  }

  clear(key: string): void {
    this.#failures.delete(key);
  }

  #prune(now: number): void {
    for (const k of [...this.#failures.keys()]) this.#recent(k, now);
  }
}
