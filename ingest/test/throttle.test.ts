// The throttle's counting on a real SQLite database: the sliding window and its boundary, attempts that are
// refused record nothing, withdrawn attempts stop counting, scopes are separate, expired rows are deleted; and
// the login throttle's three counts (per account and address, per address, per account) and its known addresses.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type DB } from '../../store/sqlite/db.ts';
import { openSqliteStore } from '../../store/sqlite/engine.ts';
import type { Store } from '../../store/store.ts';
import { LoginThrottle, Throttle } from '../throttle.ts';

const T0 = Date.parse('2026-01-05T10:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms);
const WINDOW = 60_000;
let db: DB;
let store: Store;
const rows = () => (db.prepare('SELECT COUNT(*) AS n FROM auth_throttle').get() as { n: number }).n;

beforeEach(() => {
  db = openDatabase(':memory:');
  store = openSqliteStore(':memory:', { db });
});
afterEach(async () => {
  await store.close();
  db.close();
});

describe('Throttle', async () => {
  it('blocks a key after max attempts in the window, and lets it go when the first attempt leaves the window', async () => {
    const t = new Throttle(store, 'login', 3, WINDOW);
    expect(
      [await t.attempt(['ip:a'], at(0)), await t.attempt(['ip:a'], at(10)), await t.attempt(['ip:a'], at(20))].every(
        Boolean,
      ),
    ).toBe(true);
    expect(await t.blocked(['ip:a'], at(30))).toBe(true);
    expect(await t.attempt(['ip:a'], at(30))).toBeUndefined();
    expect(await t.blocked(['ip:b'], at(30))).toBe(false);
    // The window is (now - WINDOW, now]: at exactly WINDOW the attempt made at 0 no longer counts.
    expect(await t.blocked(['ip:a'], at(WINDOW - 1))).toBe(true);
    expect(await t.blocked(['ip:a'], at(WINDOW))).toBe(false);
  });

  it('a refused attempt records nothing, for any of its keys', async () => {
    const t = new Throttle(store, 'login', 2, WINDOW);
    await t.fail(['account:x'], at(0));
    await t.fail(['account:x'], at(1));
    expect(await t.attempt(['account:x', 'ip:a'], at(2))).toBeUndefined();
    expect(await t.blocked(['ip:a'], at(3))).toBe(false);
    expect(rows()).toBe(2);
  });

  it('a withdrawn attempt stops counting; clear forgets a key', async () => {
    const t = new Throttle(store, 'login', 2, WINDOW);
    const first = (await t.attempt(['account:x', 'ip:a'], at(0)))!;
    await t.attempt(['account:x', 'ip:a'], at(1));
    expect(await t.blocked(['ip:a'], at(2))).toBe(true);
    await t.withdraw(first);
    expect(await t.blocked(['ip:a'], at(2))).toBe(false);
    expect(await t.blocked(['account:x'], at(2))).toBe(false);
    await t.fail(['account:x'], at(3));
    expect(await t.blocked(['account:x'], at(4))).toBe(true);
    await t.clear('account:x');
    expect(await t.blocked(['account:x'], at(4))).toBe(false);
    expect(await t.blocked(['ip:a'], at(4))).toBe(false);
    expect(rows()).toBe(1);
  });

  it('scopes count separately on one table', async () => {
    const login = new Throttle(store, 'login', 1, WINDOW);
    const mail = new Throttle(store, 'mail', 1, WINDOW);
    await login.fail(['account:x'], at(0));
    expect(await login.blocked(['account:x'], at(1))).toBe(true);
    expect(await mail.blocked(['account:x'], at(1))).toBe(false);
  });

  it('deletes expired attempts, so the table holds about one window of them', async () => {
    const t = new Throttle(store, 'login', 10, WINDOW);
    for (let i = 0; i < 500; i++) await t.fail([`ip:${i}`], at(i));
    expect(rows()).toBe(500);
    await t.fail(['ip:late'], at(WINDOW + 1_000));
    expect(rows()).toBe(1);
  });
});

describe('LoginThrottle', async () => {
  const limits = { windowMs: WINDOW, perPair: 3, perAddress: 6, perAccount: 5, knownForMs: 10 * WINDOW };
  /** Attempts that fail (counted and never withdrawn), one per address; how many were let through. */
  const failFrom = async (t: LoginThrottle, account: string, addresses: string[], when: number) => {
    let n = 0;
    for (const a of addresses) if ((await t.attempt(account, a, at(when))) !== undefined) n++;
    return n;
  };
  const many = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}.${i}`);

  it('refuses an address for one account after perPair failures; the owner elsewhere and other accounts there are let through', async () => {
    const t = new LoginThrottle(store, limits);
    expect(await failFrom(t, 'account:a', Array(5).fill('evil'), 0)).toBe(limits.perPair);
    expect(await t.attempt('account:a', 'home', at(1))).toBeDefined();
    expect(await t.attempt('account:b', 'evil', at(1))).toBeDefined();
    expect(await t.attempt('account:a', 'evil', at(WINDOW))).toBeDefined();
  });

  it('lets at most perAccount failures through from addresses the account never logged in from; its known addresses still get in', async () => {
    const t = new LoginThrottle(store, limits);
    await t.remember('account:a', 'home', at(0));
    expect(await failFrom(t, 'account:a', many('bot', 20), 1)).toBe(limits.perAccount);
    expect(await t.attempt('account:a', 'new-place', at(2))).toBeUndefined();
    const owner = (await t.attempt('account:a', 'home', at(2)))!;
    expect(owner).toBeDefined();
    await t.succeeded(owner, at(3));
    // The owner's success does not give the attacker a new budget.
    expect(await t.attempt('account:a', 'bot.99', at(4))).toBeUndefined();
    // Known addresses are forgotten after knownForMs.
    expect(await t.known('account:a', 'home', at(3 + limits.knownForMs - 1))).toBe(true);
    expect(await t.known('account:a', 'home', at(3 + limits.knownForMs))).toBe(false);
  });

  it('refuses an address after perAddress failures over many accounts, except for accounts known there', async () => {
    const t = new LoginThrottle(store, limits);
    await t.remember('account:colleague', 'office', at(0));
    const accounts = many('name:sprayed', 10);
    let letThrough = 0;
    for (const a of accounts) if ((await t.attempt(a, 'office', at(1))) !== undefined) letThrough++;
    expect(letThrough).toBe(limits.perAddress);
    expect(await t.attempt('name:one-more', 'office', at(2))).toBeUndefined();
    expect(await t.attempt('account:colleague', 'office', at(2))).toBeDefined();
    expect(await t.attempt('name:one-more', 'elsewhere', at(2))).toBeDefined();
  });

  it('a successful login withdraws its attempt and forgets the failures of its (account, address) pair only', async () => {
    const t = new LoginThrottle(store, limits);
    expect(await failFrom(t, 'account:a', ['home', 'home'], 0)).toBe(2);
    const ok = (await t.attempt('account:a', 'home', at(1)))!;
    await t.succeeded(ok, at(1));
    expect(await failFrom(t, 'account:a', Array(5).fill('home'), 2)).toBe(limits.perPair);
    // Two failures from home before the success, and three after it: the account's count holds all five.
    expect(await t.attempt('account:a', 'stranger', at(3))).toBeUndefined();
  });
});
