// The throttle's counting on a real SQLite database: the sliding window and its boundary, attempts that are
// refused record nothing, withdrawn attempts stop counting, scopes are separate, expired rows are deleted.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type DB } from '../../pipeline/db.ts';
import { Throttle } from '../throttle.ts';

const T0 = Date.parse('2026-01-05T10:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms);
const WINDOW = 60_000;
let db: DB;
const rows = () => (db.prepare('SELECT COUNT(*) AS n FROM auth_throttle').get() as { n: number }).n;

beforeEach(() => {
  db = openDatabase(':memory:');
});
afterEach(() => db.close());

describe('Throttle', () => {
  it('blocks a key after max attempts in the window, and lets it go when the first attempt leaves the window', () => {
    const t = new Throttle(db, 'login', 3, WINDOW);
    expect([t.attempt(['ip:a'], at(0)), t.attempt(['ip:a'], at(10)), t.attempt(['ip:a'], at(20))].every(Boolean)).toBe(true);
    expect(t.blocked(['ip:a'], at(30))).toBe(true);
    expect(t.attempt(['ip:a'], at(30))).toBeUndefined();
    expect(t.blocked(['ip:b'], at(30))).toBe(false);
    // The window is (now - WINDOW, now]: at exactly WINDOW the attempt made at 0 no longer counts.
    expect(t.blocked(['ip:a'], at(WINDOW - 1))).toBe(true);
    expect(t.blocked(['ip:a'], at(WINDOW))).toBe(false);
  });

  it('a refused attempt records nothing, for any of its keys', () => {
    const t = new Throttle(db, 'login', 2, WINDOW);
    t.fail(['account:x'], at(0));
    t.fail(['account:x'], at(1));
    expect(t.attempt(['account:x', 'ip:a'], at(2))).toBeUndefined();
    expect(t.blocked(['ip:a'], at(3))).toBe(false);
    expect(rows()).toBe(2);
  });

  it('a withdrawn attempt stops counting; clear forgets a key', () => {
    const t = new Throttle(db, 'login', 2, WINDOW);
    const first = t.attempt(['account:x', 'ip:a'], at(0))!;
    t.attempt(['account:x', 'ip:a'], at(1));
    expect(t.blocked(['ip:a'], at(2))).toBe(true);
    t.withdraw(first);
    expect(t.blocked(['ip:a'], at(2))).toBe(false);
    expect(t.blocked(['account:x'], at(2))).toBe(false);
    t.fail(['account:x'], at(3));
    expect(t.blocked(['account:x'], at(4))).toBe(true);
    t.clear('account:x');
    expect(t.blocked(['account:x'], at(4))).toBe(false);
    expect(t.blocked(['ip:a'], at(4))).toBe(false);
    expect(rows()).toBe(1);
  });

  it('scopes count separately on one table', () => {
    const login = new Throttle(db, 'login', 1, WINDOW);
    const mail = new Throttle(db, 'mail', 1, WINDOW);
    login.fail(['account:x'], at(0));
    expect(login.blocked(['account:x'], at(1))).toBe(true);
    expect(mail.blocked(['account:x'], at(1))).toBe(false);
  });

  it('deletes expired attempts, so the table holds about one window of them', () => {
    const t = new Throttle(db, 'login', 10, WINDOW);
    for (let i = 0; i < 500; i++) t.fail([`ip:${i}`], at(i));
    expect(rows()).toBe(500);
    t.fail(['ip:late'], at(WINDOW + 1_000));
    expect(rows()).toBe(1);
  });
});
