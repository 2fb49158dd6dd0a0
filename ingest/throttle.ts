// Attempt throttling: at most `max` attempts per key in a sliding window (10 failed logins in 15 minutes by
// default); then the key is refused (429) until old attempts leave the window. Used for login, password reset
// and account e-mails (issue 6), sign-ups and contact messages. Login keys are `account:<name>` and
// `ip:<client key>`, so one account cannot be brute-forced from many addresses and one address cannot spray
// many accounts.
//
// Kept in SQLite (table auth_throttle), so a restart forgets nothing and every process sharing the database
// sees the same counts. `attempt` checks and records in one synchronous step: a login is counted before its
// password is checked (scrypt runs asynchronously), so guesses sent all at once cannot pass the check before
// the first of them is counted. A successful login then withdraws its attempt.
import type Database from 'better-sqlite3';
import type { DB } from '../pipeline/db.ts';

export const MAX_FAILURES = 10;
export const WINDOW_MS = 15 * 60_000;
export const THROTTLED_ERROR = 'Too many failed attempts. Please wait 15 minutes and try again.';

/** Rows recorded by one `attempt`, to withdraw it if it succeeds. */
export interface Attempt {
  readonly rowids: readonly number[];
}

/** Expired rows are deleted at most once per this much clock time. */
const PRUNE_EVERY_MS = 60_000;

export class Throttle {
  readonly #db: DB;
  readonly #scope: string;
  readonly #max: number;
  readonly #windowMs: number;
  readonly #sql: Record<'count' | 'insert' | 'prune' | 'remove' | 'clear', Database.Statement>;
  #prunedAt = -Infinity;

  constructor(db: DB, scope: string, max = MAX_FAILURES, windowMs = WINDOW_MS) {
    this.#db = db;
    this.#scope = scope;
    this.#max = max;
    this.#windowMs = windowMs;
    this.#sql = {
      count: db.prepare('SELECT COUNT(*) AS n FROM auth_throttle WHERE scope = ? AND key = ? AND at_ms > ? AND at_ms <= ?'),
      insert: db.prepare('INSERT INTO auth_throttle (scope, key, at_ms) VALUES (?, ?, ?)'),
      prune: db.prepare('DELETE FROM auth_throttle WHERE scope = ? AND at_ms <= ?'),
      remove: db.prepare('DELETE FROM auth_throttle WHERE rowid = ?'),
      clear: db.prepare('DELETE FROM auth_throttle WHERE scope = ? AND key = ?'),
    };
  }

  /** Attempts recorded for `key` within the window that ends at `now`. */
  #count(key: string, now: number): number {
    return (this.#sql.count.get(this.#scope, key, now - this.#windowMs, now) as { n: number }).n;
  }

  #record(keys: readonly string[], now: number): number[] {
    const rowids = keys.map((k) => Number(this.#sql.insert.run(this.#scope, k, now).lastInsertRowid));
    if (now - this.#prunedAt >= PRUNE_EVERY_MS) {
      this.#sql.prune.run(this.#scope, now - this.#windowMs);
      this.#prunedAt = now;
    }
    return rowids;
  }

  /** True when any of the keys has reached the limit. */
  blocked(keys: readonly string[], now: Date): boolean {
    return keys.some((k) => this.#count(k, now.getTime()) >= this.#max);
  }

  /** Records a failure for every key. */
  fail(keys: readonly string[], now: Date): void {
    this.#db.transaction(() => this.#record(keys, now.getTime()))();
  }

  /**
   * Counts an attempt for every key unless one of them has reached the limit: undefined (and nothing recorded)
   * when blocked. Attempts still in progress count, so at most `max` run at once for a key.
   */
  attempt(keys: readonly string[], now: Date): Attempt | undefined {
    return this.#db.transaction(() => (this.blocked(keys, now) ? undefined : { rowids: this.#record(keys, now.getTime()) }))();
  }

  /** Takes back an attempt that turned out not to be a failure. */
  withdraw(attempt: Attempt): void {
    this.#db.transaction(() => {
      for (const id of attempt.rowids) this.#sql.remove.run(id);
    })();
  }

  /** Forgets every attempt of `key`. */
  clear(key: string): void {
    this.#sql.clear.run(this.#scope, key);
  }
}
