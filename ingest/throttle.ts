// Attempt throttling: at most `max` attempts per key in a sliding window (10 failed logins in 15 minutes by
// default); then the key is refused (429) until old attempts leave the window. Used for login, password reset
// and account e-mails (issue 6), sign-ups and contact messages.
//
// Logins go through `LoginThrottle` (issue 16, item 3), which counts each failure three ways so that nobody
// can lock an owner out of their account, or a shared address out of every account:
//   per (account, address)  10 in 15 minutes, then that address is refused for that account;
//   per address             100 in 15 minutes over all accounts (password spraying), then refused, except for
//                           accounts that logged in successfully from this address in the last 30 days;
//   per account             50 in 15 minutes from all addresses, then refused from addresses the account has
//                           not logged in from in the last 30 days (the owner's usual addresses still work).
// The account is the one the typed username or e-mail names (`account:<id>`), so both identifiers count
// alike; a name no account has is counted under its lower-cased text (`name:<text>`), the same way.
//
// Kept in SQLite (table auth_throttle), so a restart forgets nothing and every process sharing the database
// sees the same counts. `attempt` checks and records in one synchronous step: a login is counted before its
// password is checked (scrypt runs asynchronously), so guesses sent all at once cannot pass the check before
// the first of them is counted. A successful login then withdraws its attempt.
import type Database from 'better-sqlite3';
import type { DB } from '../store/db.ts';

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

  /** Counts an attempt for every key whatever the limit (the caller decided it may go ahead). */
  record(keys: readonly string[], now: Date): Attempt {
    return { rowids: this.#db.transaction(() => this.#record(keys, now.getTime()))() };
  }

  /** True when `key` has at least one attempt in the window. */
  seen(key: string, now: Date): boolean {
    return this.#count(key, now.getTime()) > 0;
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

/** The login limits (issue 16, item 3); ingest/accounts/README.md explains the choice. */
export const LOGIN_LIMITS = {
  windowMs: WINDOW_MS,
  /** Failures per (account, address): the owner mistyping, or one attacker's address. */
  perPair: MAX_FAILURES,
  /** Failures per address over all accounts: an office or campus NAT has many users; a sprayer has many names. */
  perAddress: 100,
  /** Failures per account from all addresses: the bound on guesses at one password from addresses it never used. */
  perAccount: 50,
  /** An address the account logged in from this recently is its owner's: the account and address limits spare it. */
  knownForMs: 30 * 86_400_000,
} as const;

export type LoginLimits = { readonly [K in keyof typeof LOGIN_LIMITS]: number };

/** A login attempt being checked, to take back if the password was right. */
export interface LoginAttempt {
  readonly account: string;
  readonly address: string;
  /** What was counted per (account, address), per address and per account, in that order. */
  readonly counted: readonly [Attempt, Attempt, Attempt];
}

/**
 * Login throttling by (account, address), address and account, described at the top of this file. `account` is
 * `account:<user id>` when the typed name belongs to an account, else `name:<lower-cased text>`; `address` is
 * the client's key (`clientKey` in limits.ts: IPv4 address or IPv6 /64).
 */
export class LoginThrottle {
  readonly #db: DB;
  readonly #pair: Throttle;
  readonly #address: Throttle;
  readonly #account: Throttle;
  readonly #known: Throttle;

  constructor(db: DB, limits: LoginLimits = LOGIN_LIMITS) {
    this.#db = db;
    this.#pair = new Throttle(db, 'login', limits.perPair, limits.windowMs);
    this.#address = new Throttle(db, 'login-address', limits.perAddress, limits.windowMs);
    this.#account = new Throttle(db, 'login-account', limits.perAccount, limits.windowMs);
    this.#known = new Throttle(db, 'login-known', 1, limits.knownForMs);
  }

  static #pairKey = (account: string, address: string) => `${account}|ip:${address}`;

  /** True when `account` logged in successfully from `address` within `knownForMs`. */
  known(account: string, address: string, now: Date): boolean {
    return this.#known.seen(LoginThrottle.#pairKey(account, address), now);
  }

  /** Counts an attempt before its password is checked; undefined (nothing counted) when it is refused. */
  attempt(account: string, address: string, now: Date): LoginAttempt | undefined {
    const pair = LoginThrottle.#pairKey(account, address);
    const ip = `ip:${address}`;
    return this.#db.transaction((): LoginAttempt | undefined => {
      if (this.#pair.blocked([pair], now)) return undefined;
      const owners = this.known(account, address, now);
      if (!owners && (this.#address.blocked([ip], now) || this.#account.blocked([account], now))) return undefined;
      return { account, address, counted: [this.#pair.record([pair], now), this.#address.record([ip], now), this.#account.record([account], now)] };
    })();
  }

  /**
   * The password was right: the attempt stops counting, the pair's earlier failures are forgotten (the owner
   * typed it right at last), and the address becomes one of the account's own. The account's failures from
   * elsewhere still count: an owner's login must not reset an attacker's budget.
   */
  succeeded(attempt: LoginAttempt, now: Date): void {
    this.#db.transaction(() => {
      const [pair, address, account] = attempt.counted;
      this.#pair.withdraw(pair);
      this.#address.withdraw(address);
      this.#account.withdraw(account);
      this.#pair.clear(LoginThrottle.#pairKey(attempt.account, attempt.address));
      this.remember(attempt.account, attempt.address, now);
    })();
  }

  /** Marks `address` as one the account's owner uses (a successful login, or the sign-up). */
  remember(account: string, address: string, now: Date): void {
    const key = LoginThrottle.#pairKey(account, address);
    this.#db.transaction(() => {
      this.#known.clear(key);
      this.#known.record([key], now);
    })();
  }
}
