// Attempt throttling: at most `max` attempts per key in a sliding window (10 failed logins in 15 minutes by
// default); then the key is refused (429) until old attempts leave the window. Used for login, password reset
// and account e-mails (ingest/accounts/), sign-ups and contact messages.
//
// Logins go through `LoginThrottle`, which counts each failure three ways so that nobody
// can lock an owner out of their account, or a shared address out of every account:
//   per (account, address)  10 in 15 minutes, then that address is refused for that account;
//   per address             100 in 15 minutes over all accounts (password spraying), then refused, except for
//                           accounts that logged in successfully from this address in the last 30 days;
//   per account             50 in 15 minutes from all addresses, then refused from addresses the account has
//                           not logged in from in the last 30 days (the owner's usual addresses still work).
// The account is the one the typed username or e-mail names (`account:<id>`), so both identifiers count
// alike; a name no account has is counted under its lower-cased text (`name:<text>`), the same way.
//
// Kept in the database (the store's `throttle`, store/store.ts), so a restart forgets nothing and every process
// sharing the database sees the same counts. `attempt` checks and records in one transaction of the store: a
// login is counted before its password is checked (scrypt runs asynchronously), so guesses sent all at once
// cannot pass the check before the first of them is counted. A successful login then withdraws its attempt.
import type { Store, ThrottleGuard, ThrottleMark } from '../store/store.ts';

export const MAX_FAILURES = 10;
export const WINDOW_MS = 15 * 60_000;
export const THROTTLED_ERROR = 'Too many failed attempts. Please wait 15 minutes and try again.';

/** What one `attempt` recorded, to withdraw it if it succeeds. */
export interface Attempt {
  readonly mark: ThrottleMark;
}

export class Throttle {
  readonly #store: Store;
  readonly scope: string;
  readonly max: number;
  readonly windowMs: number;

  constructor(store: Store, scope: string, max = MAX_FAILURES, windowMs = WINDOW_MS) {
    this.#store = store;
    this.scope = scope;
    this.max = max;
    this.windowMs = windowMs;
  }

  /** The guard of `key`: blocked at `max` attempts in the window. */
  guard(key: string): ThrottleGuard {
    return { scope: this.scope, key, max: this.max, windowMs: this.windowMs };
  }

  /** What to record for `key`. */
  entry(key: string) {
    return { scope: this.scope, key, windowMs: this.windowMs };
  }

  /** True when any of the keys has reached the limit. */
  async blocked(keys: readonly string[], now: Date): Promise<boolean> {
    for (const k of keys)
      if ((await this.#store.throttle.count({ scope: this.scope, key: k }, this.windowMs, now.getTime())) >= this.max)
        return true;
    return false;
  }

  /** Records a failure for every key. */
  async fail(keys: readonly string[], now: Date): Promise<void> {
    await this.#store.throttle.record(
      keys.map((k) => this.entry(k)),
      now.getTime(),
    );
  }

  /** Counts an attempt for every key whatever the limit (the caller decided it may go ahead). */
  async record(keys: readonly string[], now: Date): Promise<Attempt> {
    return {
      mark: await this.#store.throttle.record(
        keys.map((k) => this.entry(k)),
        now.getTime(),
      ),
    };
  }

  /** True when `key` has at least one attempt in the window. */
  async seen(key: string, now: Date): Promise<boolean> {
    return (await this.#store.throttle.count({ scope: this.scope, key }, this.windowMs, now.getTime())) > 0;
  }

  /**
   * Counts an attempt for every key unless one of them has reached the limit: undefined (and nothing recorded)
   * when blocked. Attempts still in progress count, so at most `max` run at once for a key.
   */
  async attempt(keys: readonly string[], now: Date): Promise<Attempt | undefined> {
    const mark = await this.#store.throttle.attempt(
      keys.map((k) => this.guard(k)),
      keys.map((k) => this.entry(k)),
      now.getTime(),
    );
    return mark && { mark };
  }

  /** Takes back an attempt that turned out not to be a failure. */
  async withdraw(attempt: Attempt): Promise<void> {
    await this.#store.throttle.change({ withdraw: [attempt.mark], nowMs: 0 });
  }

  /** Forgets every attempt of `key`. */
  async clear(key: string): Promise<void> {
    await this.#store.throttle.change({ clear: [{ scope: this.scope, key }], nowMs: 0 });
  }
}

/** The login limits; ingest/accounts/README.md explains the choice. */
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
  /** What was counted per (account, address), per address and per account. */
  readonly counted: Attempt;
}

/**
 * Login throttling by (account, address), address and account, described at the top of this file. `account` is
 * `account:<user id>` when the typed name belongs to an account, else `name:<lower-cased text>`; `address` is
 * the client's key (`clientKey` in limits.ts: IPv4 address or IPv6 /64).
 */
export class LoginThrottle {
  readonly #store: Store;
  readonly #pair: Throttle;
  readonly #address: Throttle;
  readonly #account: Throttle;
  readonly #known: Throttle;

  constructor(store: Store, limits: LoginLimits = LOGIN_LIMITS) {
    this.#store = store;
    this.#pair = new Throttle(store, 'login', limits.perPair, limits.windowMs);
    this.#address = new Throttle(store, 'login-address', limits.perAddress, limits.windowMs);
    this.#account = new Throttle(store, 'login-account', limits.perAccount, limits.windowMs);
    this.#known = new Throttle(store, 'login-known', 1, limits.knownForMs);
  }

  static #pairKey = (account: string, address: string) => `${account}|ip:${address}`;

  /** True when `account` logged in successfully from `address` within `knownForMs`. */
  known(account: string, address: string, now: Date): Promise<boolean> {
    return this.#known.seen(LoginThrottle.#pairKey(account, address), now);
  }

  /** Counts an attempt before its password is checked; undefined (nothing counted) when it is refused. One
   * transaction of the store: the pair's limit always, the address's and the account's unless the address is
   * one the account's owner logged in from. */
  async attempt(account: string, address: string, now: Date): Promise<LoginAttempt | undefined> {
    const pair = LoginThrottle.#pairKey(account, address);
    const ip = `ip:${address}`;
    const known = { scope: this.#known.scope, key: pair, windowMs: this.#known.windowMs };
    const mark = await this.#store.throttle.attempt(
      [
        this.#pair.guard(pair),
        { ...this.#address.guard(ip), unlessSeen: known },
        { ...this.#account.guard(account), unlessSeen: known },
      ],
      [this.#pair.entry(pair), this.#address.entry(ip), this.#account.entry(account)],
      now.getTime(),
    );
    if (mark === undefined) return undefined;
    return { account, address, counted: { mark } };
  }

  /**
   * The password was right: the attempt stops counting, the pair's earlier failures are forgotten (the owner
   * typed it right at last), and the address becomes one of the account's own. The account's failures from
   * elsewhere still count: an owner's login must not reset an attacker's budget. One transaction.
   */
  async succeeded(attempt: LoginAttempt, now: Date): Promise<void> {
    const pair = LoginThrottle.#pairKey(attempt.account, attempt.address);
    await this.#store.throttle.change({
      withdraw: [attempt.counted.mark],
      clear: [
        { scope: this.#pair.scope, key: pair },
        { scope: this.#known.scope, key: pair },
      ],
      record: [this.#known.entry(pair)],
      nowMs: now.getTime(),
    });
  }

  /** Marks `address` as one the account's owner uses (a successful login, or the sign-up). */
  async remember(account: string, address: string, now: Date): Promise<void> {
    const key = LoginThrottle.#pairKey(account, address);
    await this.#store.throttle.change({
      clear: [{ scope: this.#known.scope, key }],
      record: [this.#known.entry(key)],
      nowMs: now.getTime(),
    });
  }
}
