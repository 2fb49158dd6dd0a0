// The calendar client and the header sources against loopback stand-ins: every way an answer can go wrong
// (timeout, HTTP 400/500, 404 while pending, oversized, malformed, nobody listening) is a typed error with a
// readable reason, never a crash; headers are accepted only with the right hash and real proof of work.
import crypto from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toHex } from '../../core/encoding.ts';
import {
  bitcoinAttestation,
  newTimestamp,
  pendingAttestation,
  addAttestation,
  addOp,
  SHA256_OP,
} from '../../core/ots.ts';
import { collectUpgrades } from '../../pipeline/anchor/anchor.ts';
import { CalendarError, fetchUpgrade, submitDigest } from '../../pipeline/anchor/calendar.ts';
import { isTrustedCalendar, loadAnchorConfig } from '../../pipeline/anchor/config.ts';
import {
  checkPlausibleDifficulty,
  esploraSource,
  fetchVerifiedHeader,
  rpcSource,
  verifyAttestation,
} from '../../pipeline/anchor/headers.ts';
import { NetworkError } from '../../pipeline/http.ts';
import { SyntheticChain } from './chain.ts';
import { LoopbackBitcoind, LoopbackCalendar, LoopbackEsplora } from './servers.ts';

const digest = () => new Uint8Array(crypto.randomBytes(32));

async function closedPort(): Promise<string> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

describe('calendar client', () => {
  const cal = new LoopbackCalendar();
  beforeAll(() => cal.start());
  afterAll(() => cal.stop());

  it('submits a digest and gets a pending attestation at a commitment; 404 text while pending; 200 once mined', async () => {
    const d = digest();
    const t = await submitDigest(cal.url, d, 2000);
    expect(toHex(t.message)).toBe(toHex(d));
    const chain = new SyntheticChain();
    const { upgrades, notes } = await collectUpgrades(t, [cal.url], 2000);
    expect(upgrades).toEqual([]);
    expect(notes).toEqual([`${cal.url}: Pending confirmation in Bitcoin blockchain`]);
    const height = cal.mine(chain);
    const after = await collectUpgrades(t, [cal.url], 2000);
    expect(after.upgrades).toHaveLength(1);
    expect(after.notes).toEqual([]);
    const unknown = await fetchUpgrade(cal.url, digest(), 2000);
    expect(unknown).toEqual({ kind: 'pending', text: 'Not found' });
    expect(height).toBe(1);
  });

  it.each([
    ['http400', /HTTP 400 digest too long/],
    ['http500', /HTTP 500/],
    ['oversized', /exceeds the 10000-byte limit/],
    ['garbage', /not a valid timestamp/],
  ] as const)('a %s answer is a typed error', async (fault, message) => {
    cal.fault = fault;
    try {
      const err = await submitDigest(cal.url, digest(), 2000).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(fault === 'oversized' ? NetworkError : CalendarError);
      expect((err as Error).message).toMatch(message);
    } finally {
      cal.fault = 'none';
    }
  });

  it('a calendar that never answers times out; nobody listening is "unreachable"', async () => {
    cal.fault = 'hang';
    const started = Date.now();
    try {
      const err = await submitDigest(cal.url, digest(), 300).catch((e: unknown) => e);
      expect((err as NetworkError).reason).toBe('timeout');
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      cal.fault = 'none';
    }
    const err = await submitDigest(await closedPort(), digest(), 2000).catch((e: unknown) => e);
    expect((err as NetworkError).reason).toBe('unreachable');
    expect((err as Error).message).toMatch(/ECONNREFUSED/);
  });

  it('upgrade: 400 answers and untrusted calendars become notes, nothing is merged', async () => {
    const t = await submitDigest(cal.url, digest(), 2000);
    const leaf = addOp(t, SHA256_OP);
    addAttestation(leaf, pendingAttestation('https://evil.example'));
    cal.fault = 'http400';
    try {
      const { upgrades, notes } = await collectUpgrades(t, [cal.url], 2000);
      expect(upgrades).toEqual([]);
      expect(notes.some((n) => /HTTP 400 Invalid commitment/.test(n))).toBe(true);
      expect(notes.some((n) => /https:\/\/evil.example: not a trusted calendar/.test(n))).toBe(true);
      expect(cal.requests.filter((r) => r.includes('evil'))).toEqual([]);
    } finally {
      cal.fault = 'none';
    }
  });

  it('trust: configured calendars and the reference whitelist patterns, nothing else', () => {
    const config = loadAnchorConfig({});
    expect(config.calendars).toContain('https://a.pool.opentimestamps.org');
    expect(config.minCalendars).toBe(2);
    expect(isTrustedCalendar('https://alice.btc.calendar.opentimestamps.org', config.trusted)).toBe(true);
    expect(isTrustedCalendar('https://finney.calendar.eternitywall.com', config.trusted)).toBe(true);
    expect(isTrustedCalendar('https://a.pool.opentimestamps.org/', config.trusted)).toBe(true);
    expect(isTrustedCalendar('https://calendar.opentimestamps.org.evil.example', config.trusted)).toBe(false);
    expect(isTrustedCalendar('http://alice.btc.calendar.opentimestamps.org', config.trusted)).toBe(false);
    expect(isTrustedCalendar('https://evil.example/x.calendar.opentimestamps.org', config.trusted)).toBe(false);
    expect(() => loadAnchorConfig({ OTS_CALENDARS: 'https://a.example', OTS_MIN_CALENDARS: '2' })).toThrow(
      /names only 1 calendar/,
    );
    expect(() => loadAnchorConfig({ BITCOIN_NETWORK: 'testnet' })).toThrow(/mainnet or regtest/);
  });
});

describe('header sources', () => {
  const chain = new SyntheticChain();
  chain.extend(4);
  const esplora = new LoopbackEsplora(chain);
  const bitcoind = new LoopbackBitcoind(chain, 'alice', 's3cret');
  beforeAll(async () => {
    await esplora.start();
    await bitcoind.start();
  });
  afterAll(async () => {
    await esplora.stop();
    await bitcoind.stop();
  });

  it('Esplora and bitcoind RPC give the same verified header and tip', async () => {
    const rpcUrl = bitcoind.url.replace('http://', 'http://alice:s3cret@');
    for (const source of [esploraSource(esplora.url, 2000), rpcSource(rpcUrl, 2000)]) {
      const { header, hash } = await fetchVerifiedHeader(source, 3, 'regtest');
      expect(hash).toBe(chain.blocks[3]!.hash);
      expect(Buffer.from(header).equals(chain.blocks[3]!.header)).toBe(true);
      expect(await source.tipHeight()).toBe(4);
      const v = await verifyAttestation(source, chain.blocks[3]!.merkleRoot, 3, 'regtest');
      expect(v.time).toBe(chain.blocks[3]!.time);
      await expect(source.blockHashAt(99)).rejects.toThrow(/no block at height 99/);
    }
    await expect(rpcSource(bitcoind.url, 2000).tipHeight()).rejects.toThrow(/HTTP 401/);
  });

  it('rejects a header without proof of work, a wrong merkle root, and regtest work on mainnet', async () => {
    const source = esploraSource(esplora.url, 2000);
    esplora.forged.set(2, chain.forgeWithoutWork(2));
    try {
      await expect(fetchVerifiedHeader(source, 2, 'regtest')).rejects.toThrow(/proof of work does not meet its target/);
    } finally {
      esplora.forged.clear();
    }
    await expect(verifyAttestation(source, digest(), 2, 'regtest')).rejects.toThrow(/merkle root/);
    await expect(fetchVerifiedHeader(source, 2, 'mainnet')).rejects.toThrow(/target above the mainnet limit/);
  });

  it('mainnet: difficulty 1 is implausible at height 800000 but fine at height 50000', () => {
    const header = Buffer.alloc(80);
    header.writeUInt32LE(0x1d00ffff, 72);
    expect(() => checkPlausibleDifficulty(header, 800_000, 'mainnet')).toThrow(/implausibly low/);
    expect(() => checkPlausibleDifficulty(header, 50_000, 'mainnet')).not.toThrow();
    header.writeUInt32LE(0x1903a30c, 72); // difficulty ≈ 1.2e9
    expect(() => checkPlausibleDifficulty(header, 358_391, 'mainnet')).not.toThrow();
    expect(() => checkPlausibleDifficulty(header, 400_000, 'mainnet')).toThrow(/implausibly low/);
  });

  it('an unavailable or oversized source is a readable error', async () => {
    esplora.down = true;
    try {
      await expect(esploraSource(esplora.url, 2000).tipHeight()).rejects.toThrow(/HTTP 503/);
    } finally {
      esplora.down = false;
    }
    const cal = await new LoopbackCalendar().start();
    cal.fault = 'oversized';
    try {
      await expect(esploraSource(cal.url, 2000).tipHeight()).rejects.toThrow(/exceeds the 1024-byte limit/);
    } finally {
      await cal.stop();
    }
  });
});

describe('Bitcoin attestations in a tree', () => {
  it('an attestation with an unreachable header source is reported, not thrown', async () => {
    const { checkBitcoinAttestations } = await import('../../pipeline/anchor/anchor.ts');
    const t = newTimestamp(digest());
    addAttestation(t, bitcoinAttestation(5));
    const result = await checkBitcoinAttestations(t, {
      headers: esploraSource(await closedPort(), 500),
      network: 'regtest',
    });
    expect(result.verified).toEqual([]);
    expect(result.rejected).toBe(0);
    expect(result.problems[0]).toMatch(/height 5: .*unreachable/);
  });
});
