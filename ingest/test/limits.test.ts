// The free tier's limit (ingest/limits.ts): the counting key, atomicity across database connections, the
// client address behind a trusted proxy, and verification of tampered days in verify-quantum.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { trustProxyWarning } from '../config.ts';
import { setting } from '../../runtime/settings.ts';
import { clientKey, FREE_PER_DAY, submitWithinLimits } from '../limits.ts';
import { openSqliteStore } from '../../store/sqlite/engine.ts';
import type { Store } from '../../store/store.ts';
import { DAY, makeFixture, randomHash, removeTempDirs, tempDir } from './fixture.ts';

afterAll(removeTempDirs);

describe('clientKey', () => {
  it.each([
    ['203.0.113.9', '203.0.113.9'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff::', '2001:db8:1:2::/64'],
    ['::1', '0:0:0:0::/64'],
  ])('%s counts as %s', (ip, key) => expect(clientKey(ip)).toBe(key));
});

describe('submitWithinLimits', () => {
  it('two connections to one database file never admit more than the limit', async () => {
    const file = path.join(tempDir('limits'), 'db.sqlite');
    const a = openSqliteStore(file);
    const b = openSqliteStore(file);
    const now = new Date('2025-11-03T10:00:00Z');
    const submit = (store: Store, ip: string, at: Date) =>
      submitWithinLimits(store, { ip, now: at, hash: randomHash(), fileName: null });
    const decisions = await Promise.all([a, b, a, b, a, b].map((store) => submit(store, '192.0.2.1', now)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(FREE_PER_DAY);
    expect((await submit(a, '192.0.2.1', new Date('2025-11-04T00:00:00Z'))).allowed).toBe(true);
    expect((await submit(b, '192.0.2.2', now)).allowed).toBe(true);
    await a.close();
    await b.close();
  });
});

const trustProxy = (text: string | undefined) => setting({ TRUST_PROXY: text }, 'TRUST_PROXY');

describe('TRUST_PROXY', () => {
  it('parses its forms', () => {
    expect(trustProxy(undefined)).toBeUndefined();
    expect(trustProxy('false')).toBeUndefined();
    expect(trustProxy('1')).toBe(1);
    expect(() => trustProxy('true')).toThrow(/TRUST_PROXY=true would let every client choose its own address/);
    expect(() => trustProxy(' TRUE ')).toThrow(/TRUST_PROXY=1 behind one nginx/);
    expect(trustProxy('10.0.0.1, 10.0.0.0/8')).toBe('10.0.0.1, 10.0.0.0/8');
    expect(() => trustProxy('anything; rm')).toThrow(/TRUST_PROXY/);
    // Settings that trust what clients write, as `true` would (found by the re-probe): refused.
    expect(trustProxy('5')).toBe(5);
    expect(() => trustProxy('99')).toThrow(/at most 5 proxies/);
    expect(() => trustProxy('0.0.0.0/1,128.0.0.0/1')).toThrow(/"0\.0\.0\.0\/1" trusts far more than your proxies/);
    expect(() => trustProxy('0.0.0.0/0')).toThrow(/trusts far more/);
    expect(() => trustProxy('::/0')).toThrow(/trusts far more/);
    expect(() => trustProxy('10.0.0.300')).toThrow(/is not an IP address or CIDR range/);
    expect(() => trustProxy('10.0.0.0/33')).toThrow(/is not an IP address or CIDR range/);
    expect(trustProxy('10.0.0.0/8, fd00::/16, 192.168.1.7')).toBe('10.0.0.0/8, fd00::/16, 192.168.1.7');
  });

  it('with TRUST_PROXY=1 the address the proxy forwarded is the client; forging earlier hops buys nothing', async () => {
    const f = await makeFixture({ env: { TRUST_PROXY: '1' }, publish: [] });
    try {
      const submit = (xff: string) =>
        f.app.inject({
          method: 'POST',
          url: '/api/submit',
          payload: { hash: randomHash() },
          remoteAddress: '10.0.0.1',
          headers: { 'x-forwarded-for': xff },
        });
      const alice = [];
      for (const forged of ['1.1.1.1', '2.2.2.2', '3.3.3.3'])
        alice.push((await submit(`${forged}, 203.0.113.5`)).statusCode);
      expect(alice).toEqual([201, 201, 429]);
      expect((await submit('203.0.113.6')).statusCode).toBe(201);
      expect((await submit('203.0.113.6')).statusCode).toBe(201);
      expect((await submit('203.0.113.6')).statusCode).toBe(429);
      const keys = (
        f.db.prepare('SELECT ip_address FROM ip_rate_limit ORDER BY ip_address').all() as Array<{ ip_address: string }>
      ).map((r) => r.ip_address);
      expect(keys).toEqual(['203.0.113.5', '203.0.113.6']);
    } finally {
      await f.close();
    }
  });
});

describe('verify-quantum on a tampered archive', () => {
  it('a corrupted .dilithium.sig turns quantum_shield false; a corrupted .sig only dual_signature', async () => {
    const f = await makeFixture();
    try {
      const url = `/api/verify-quantum.php?date=${DAY}`;
      expect((await f.app.inject(url)).json()).toMatchObject({ quantum_shield: true, dual_signature: true });
      const mldsa = path.join(f.config.archive, `${DAY}.json.dilithium.sig`);
      const good = fs.readFileSync(mldsa);
      const bad = Buffer.from(good);
      bad[100]! ^= 0x01;
      fs.writeFileSync(mldsa, bad);
      expect((await f.app.inject(url)).json()).toEqual({
        date: DAY,
        quantum_shield: false,
        dual_signature: false,
        ecdsa_p256: true,
        ml_dsa_65: false,
      });
      expect((await f.app.inject('/api/ledgers.php')).json().ledgers[0].signatureVerified).toBe(false);
      fs.writeFileSync(mldsa, good);
      const ecdsa = path.join(f.config.archive, `${DAY}.json.sig`);
      const sig = fs.readFileSync(ecdsa);
      sig[sig.length - 1]! ^= 0x01;
      fs.writeFileSync(ecdsa, sig);
      fs.utimesSync(mldsa, new Date(), new Date(Date.now() + 5000));
      expect((await f.app.inject(url)).json()).toEqual({
        date: DAY,
        quantum_shield: true,
        dual_signature: false,
        ecdsa_p256: false,
        ml_dsa_65: true,
      });
    } finally {
      await f.close();
    }
  });
});

describe('trustProxyWarning', () => {
  it('a hop count on an address that is not loopback is warned about; proxy addresses and loopback are not', () => {
    expect(trustProxyWarning('0.0.0.0', 1)).toMatch(
      /^TRUST_PROXY=1 is a hop count and HOST=0\.0\.0\.0 is not a loopback address/,
    );
    expect(trustProxyWarning('10.0.0.7', 2)).toMatch(/TRUST_PROXY=2 is a hop count/);
    expect(trustProxyWarning('::', 1)).toMatch(/HOST=:: is not a loopback address/);
    for (const host of ['127.0.0.1', '127.0.1.1', 'localhost', '::1', '[::1]'])
      expect(trustProxyWarning(host, 1), host).toBeUndefined();
    expect(trustProxyWarning('0.0.0.0', '10.0.0.5')).toBeUndefined();
    expect(trustProxyWarning('0.0.0.0', undefined)).toBeUndefined();
  });
});
