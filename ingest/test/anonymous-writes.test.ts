// Anonymous writes are bounded. The beta API has no rate limit by default (docs/OPERATIONS.md §5),
// but an operator may cap it per client address with BETA_API_RATE (counted like the free tier: IPv6 per /64,
// TRUST_PROXY respected, in the database so processes sharing it share the cap); and the waitlist form is
// throttled per address like the contact form.
import { spawnSync } from 'node:child_process';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../runtime/config.ts';
import { setting } from '../../runtime/settings.ts';
import { betaRateCap } from '../limits.ts';
import { WAITLIST_PER_HOUR } from '../routes/forms.ts';
import {
  BIN,
  childEnv,
  makeFixture,
  NOW,
  projectEnv,
  randomHash,
  removeTempDirs,
  tempDir,
  type Fixture,
} from './fixture.ts';
import { openSqliteStore } from '../../store/sqlite/engine.ts';

const open: Fixture[] = [];
afterEach(async () => {
  for (const f of open.splice(0)) await f.close();
});
afterAll(removeTempDirs);

async function fixture(env: Record<string, string> = {}, clock?: () => Date): Promise<Fixture> {
  const f = await makeFixture({ env, publish: [], ...(clock ? { clock } : {}) });
  open.push(f);
  return f;
}

const beta = (f: Fixture, remoteAddress: string, headers: Record<string, string> = {}) =>
  f.app.inject({
    method: 'POST',
    url: '/api/v1/beta/timestamp',
    payload: { hash: randomHash() },
    remoteAddress,
    headers,
  });

const betaRows = (f: Fixture): number =>
  (f.db.prepare("SELECT COUNT(*) AS n FROM submissions WHERE source = 'api_beta'").get() as { n: number }).n;

const betaApiRate = (text: string | undefined) => setting({ BETA_API_RATE: text }, 'BETA_API_RATE');

describe('BETA_API_RATE', () => {
  it('parses COUNT/UNIT, is off when unset or empty, and refuses anything else with the usage', () => {
    expect(betaApiRate(undefined)).toBeUndefined();
    expect(betaApiRate(' ')).toBeUndefined();
    expect(betaApiRate('600/hour')).toEqual({ count: 600, unit: 'hour', windowMs: 3_600_000 });
    expect(betaApiRate('10 / minute')).toEqual({ count: 10, unit: 'minute', windowMs: 60_000 });
    expect(betaApiRate('5/second')).toEqual({ count: 5, unit: 'second', windowMs: 1000 });
    expect(betaApiRate('100000/day')).toEqual({ count: 100000, unit: 'day', windowMs: 86_400_000 });
    for (const bad of [
      '600',
      '600/h',
      '0/minute',
      '-1/minute',
      '1.5/hour',
      'ten/minute',
      '600 per hour',
      '10/minutes',
    ]) {
      expect(() => betaApiRate(bad), bad).toThrow(UsageError);
      expect(() => betaApiRate(bad), bad).toThrow(
        /^BETA_API_RATE must be a count per second, minute, hour or day, like BETA_API_RATE=600\/hour or BETA_API_RATE=10\/minute \(leave it unset for no limit\)/,
      );
    }
  });

  it('a bad value keeps `timeseal serve` from starting: exit 64 (usage) and the usage on one line', () => {
    const dir = tempDir('beta-rate-bad');
    const env = projectEnv(dir, { BETA_API_RATE: '600 an hour' });
    const r = spawnSync(BIN, ['serve'], {
      cwd: dir,
      env: childEnv({ PORT: '0', ...env }),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.stdout).not.toMatch(/listening/);
    expect(r.status).toBe(64);
    expect(r.stderr).toBe(
      'timeseal: BETA_API_RATE must be a count per second, minute, hour or day, like BETA_API_RATE=600/hour or BETA_API_RATE=10/minute (leave it unset for no limit), not "600 an hour"\n',
    );
  });

  it('unset: many submissions from one address are all accepted, and nothing is counted', async () => {
    const f = await fixture();
    for (let i = 0; i < 300; i++) expect((await beta(f, '203.0.113.7')).statusCode).toBe(201);
    expect(betaRows(f)).toBe(300);
    expect(f.rowCounts().ip_rate_limit).toBe(0);
  });

  it('set: refuses past the cap with 429 and Retry-After, per address (IPv6 per /64), until the next window', async () => {
    let now = new Date(NOW); // 12:00:00.000 UTC: a minute's window ends in 60 s
    const f = await fixture({ BETA_API_RATE: '3/minute' }, () => now);
    for (let i = 0; i < 3; i++) expect((await beta(f, '203.0.113.7')).statusCode).toBe(201);
    const refused = await beta(f, '203.0.113.7');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.headers['content-type']).toMatch(/^application\/json/);
    expect(refused.json()).toEqual({
      success: false,
      error:
        'Rate limit reached: this server accepts at most 3 beta API submissions per minute from one address. Try again in 60 seconds.',
      message:
        'Rate limit reached: this server accepts at most 3 beta API submissions per minute from one address. Try again in 60 seconds.',
      example: { hash: 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9' },
    });
    // The same address as IPv4-mapped IPv6 is the same client.
    expect((await beta(f, '::ffff:203.0.113.7')).statusCode).toBe(429);
    expect(betaRows(f)).toBe(3);
    // Another address still gets its own 3.
    for (let i = 0; i < 3; i++) expect((await beta(f, '198.51.100.1')).statusCode).toBe(201);
    expect((await beta(f, '198.51.100.1')).statusCode).toBe(429);
    // IPv6: one /64 is one client; another /64 is another.
    for (let i = 0; i < 3; i++) expect((await beta(f, `2001:db8:1:2::${i + 1}`)).statusCode).toBe(201);
    expect((await beta(f, '2001:db8:1:2:ffff:ffff:ffff:ffff')).statusCode).toBe(429);
    expect((await beta(f, '2001:db8:1:3::1')).statusCode).toBe(201);
    // Later in the window the wait is shorter; in the next window the address is accepted again.
    now = new Date(Date.parse(NOW) + 45_500);
    const later = await beta(f, '203.0.113.7');
    expect(later.statusCode).toBe(429);
    expect(later.headers['retry-after']).toBe('15');
    now = new Date(Date.parse(NOW) + 60_000);
    expect((await beta(f, '203.0.113.7')).statusCode).toBe(201);
    expect(betaRows(f)).toBe(3 + 3 + 3 + 1 + 1);
    // Earlier windows' rows of an address are deleted when it starts a new one; free-tier rows are untouched.
    const rows = f.db.prepare("SELECT date FROM ip_rate_limit WHERE ip_address = '203.0.113.7'").all();
    expect(rows).toEqual([{ date: 'beta-api:2025-11-03T12:01:00.000Z/minute' }]);
  });

  it('counts the address TRUST_PROXY names, not the proxy', async () => {
    const f = await fixture({ BETA_API_RATE: '2/hour', TRUST_PROXY: '1' });
    const via = (client: string) => beta(f, '10.0.0.5', { 'x-forwarded-for': client });
    expect((await via('203.0.113.7')).statusCode).toBe(201);
    expect((await via('203.0.113.7')).statusCode).toBe(201);
    const refused = await via('203.0.113.7');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('3600'); // the window is the UTC hour 12:00 to 13:00
    // Another client behind the same proxy has its own count.
    expect((await via('198.51.100.1')).statusCode).toBe(201);
  });

  it('is shared by every connection (process) on the database: one statement decides and counts', async () => {
    const f = await fixture({ BETA_API_RATE: '5/hour' });
    const other = openSqliteStore(f.config.db);
    try {
      const cap = betaRateCap(other, { count: 5, unit: 'hour', windowMs: 3_600_000 });
      const now = new Date(NOW);
      for (let i = 0; i < 3; i++) expect(await cap.check('203.0.113.7', now)).toBeNull();
      expect((await beta(f, '203.0.113.7')).statusCode).toBe(201);
      expect((await beta(f, '203.0.113.7')).statusCode).toBe(201);
      expect((await beta(f, '203.0.113.7')).statusCode).toBe(429);
      expect(await cap.check('203.0.113.7', now)).toMatchObject({ retryAfter: 3600 });
    } finally {
      await other.close();
    }
  });
});

describe('POST /api/professional-waitlist.php', () => {
  const join = (f: Fixture, remoteAddress: string, i: number) =>
    f.app.inject({
      method: 'POST',
      url: '/api/professional-waitlist.php',
      remoteAddress,
      payload: { name: `Flood ${i}`, email: `flood${i}@example.com`, message: 'x'.repeat(4999) },
    });
  const rows = (f: Fixture): number => f.rowCounts().professional_waitlist!;

  it(`accepts ${WAITLIST_PER_HOUR} requests an hour from one address, then 429 with Retry-After and nothing written; another address is unaffected`, async () => {
    let now = new Date(NOW);
    const f = await fixture({}, () => now);
    const statuses: number[] = [];
    for (let i = 0; i < 300; i++) statuses.push((await join(f, '203.0.113.7', i)).statusCode);
    expect(statuses.slice(0, WAITLIST_PER_HOUR)).toEqual(Array(WAITLIST_PER_HOUR).fill(201));
    expect(new Set(statuses.slice(WAITLIST_PER_HOUR))).toEqual(new Set([429]));
    expect(rows(f)).toBe(WAITLIST_PER_HOUR);
    const refused = await join(f, '203.0.113.7', 1000);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('3600');
    expect(refused.json()).toEqual({
      error: 'Too many waitlist requests from this address. Please try again in an hour.',
      message: 'Too many waitlist requests from this address. Please try again in an hour.',
    });
    // An already-listed address counts too: the same e-mail sent again is no way around the bound.
    expect((await join(f, '203.0.113.7', 0)).statusCode).toBe(429);
    // Another address.
    const other = await join(f, '198.51.100.1', 2000);
    expect(other.statusCode).toBe(201);
    expect(other.json()).toEqual({
      success: true,
      alreadyExists: false,
      message: "We'll notify you when Professional tier launches.",
    });
    expect(rows(f)).toBe(WAITLIST_PER_HOUR + 1);
    // An hour later the first address may join again.
    now = new Date(Date.parse(NOW) + 3_600_000);
    expect((await join(f, '203.0.113.7', 3000)).statusCode).toBe(201);
  });

  it('still refuses a name over 255 characters and a message over 5,000 (field limits)', async () => {
    const f = await fixture();
    const post = (payload: object) => f.app.inject({ method: 'POST', url: '/api/professional-waitlist.php', payload });
    const long = await post({ name: 'n'.repeat(256), email: 'a@example.com', message: 'hi' });
    expect(long.statusCode).toBe(400);
    expect(long.json()).toEqual({
      error: 'Name must be at most 255 characters',
      message: 'Name must be at most 255 characters',
    });
    expect((await post({ name: 'n', email: 'a@example.com', message: 'm'.repeat(5001) })).statusCode).toBe(400);
    expect(rows(f)).toBe(0);
  });
});
