// `timeseal ots info|verify|upgrade` on real proofs from the public calendars (test/vectors/ots, provenance in
// its README.md) and on a proof pending at a loopback calendar. The header source is a loopback Esplora
// serving the real header of block 358391 (test/vectors/ots/headers), verified on mainnet rules.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergeTimestamps, newDetached, serializeDetached } from '../../core/ots.ts';
import { submitDigest } from '../../pipeline/anchor/calendar.ts';
import { SyntheticChain } from './chain.ts';
import { cli, cliJson, OTS_VECTORS, referenceRead, removeTempDirs, tempDir } from './helpers.ts';
import { LoopbackCalendar, LoopbackEsplora } from './servers.ts';

const client = (name: string) => path.join(OTS_VECTORS, 'opentimestamps-client', name);
const header358391 = Buffer.from(
  fs.readFileSync(path.join(OTS_VECTORS, 'headers/block-358391-header.hex'), 'utf8').trim(),
  'hex',
);
const hasStack = (s: string) => /\n\s+at /.test(s);

describe('timeseal ots on the real vectors', () => {
  const esplora = new LoopbackEsplora(null, new Map([[358391, header358391]]));
  let dir: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    await esplora.start();
    dir = tempDir('ots');
    env = { BITCOIN_ESPLORA_URL: esplora.url, BITCOIN_NETWORK: 'mainnet' };
  });
  afterAll(async () => {
    await esplora.stop();
    removeTempDirs();
  });

  it('verify hello-world.txt.ots: block 358391, 2015-05-28T15:41:18Z', async () => {
    const human = await cli(
      dir,
      ['ots', 'verify', client('hello-world.txt.ots'), '--file', client('hello-world.txt')],
      env,
    );
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain('Bitcoin block 358391 attests existence as of 2015-05-28T15:41:18Z');
    const { r, json } = await cliJson(
      dir,
      [
        'ots',
        'verify',
        client('hello-world.txt.ots'),
        '--digest',
        '03ba204e50d126e4674c005e04d82e84c21366780af1f43bd54a37816b6ab340',
      ],
      env,
    );
    expect(r.code).toBe(0);
    expect(json.verified).toEqual([
      {
        height: 358391,
        time: '2015-05-28T15:41:18Z',
        block_hash: '000000000000000003e892881a8cdcdc117c06d444057c98b6f04a9ee75a2319',
        merkle_root: Buffer.from('007ee445d23ad061af4a36b809501fab1ac4f2d7e7a739817dd0cbb7ec661b8a', 'hex')
          .reverse()
          .toString('hex'),
      },
    ]);
  });

  it('verify bad-stamp.txt.ots fails: its message is not the merkle root of block 358391', async () => {
    const { r, json } = await cliJson(
      dir,
      ['ots', 'verify', client('bad-stamp.txt.ots'), '--file', client('bad-stamp.txt')],
      env,
    );
    expect(r.code).toBe(1);
    expect(json.ok).toBe(false);
    expect(json.problems.join('\n')).toMatch(/height 358391: .*merkle root/);
  });

  it('verify says pending (exit 2) for a pending proof, and fails for another file and a header source that is down', async () => {
    const pending = await cli(
      dir,
      ['ots', 'verify', client('incomplete.txt.ots'), '--file', client('incomplete.txt')],
      env,
    );
    expect(pending.code).toBe(2);
    expect(pending.stdout).toMatch(/Not yet in Bitcoin.*alice\.btc\.calendar\.opentimestamps\.org/);
    const other = await cli(
      dir,
      ['ots', 'verify', client('hello-world.txt.ots'), '--file', client('bad-stamp.txt')],
      env,
    );
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/expected 03ba204e.*got 7e3717bb/);
    esplora.down = true;
    try {
      const down = await cli(
        dir,
        ['ots', 'verify', client('hello-world.txt.ots'), '--file', client('hello-world.txt')],
        env,
      );
      expect(down.code).toBe(1);
      expect(down.stdout).toMatch(/FAILED: .*HTTP 503/);
      expect(hasStack(down.stderr)).toBe(false);
    } finally {
      esplora.down = false;
    }
  });

  it('usage errors exit 64; unreadable proofs exit 1 with a typed reason', async () => {
    expect((await cli(dir, ['ots', 'verify', client('hello-world.txt.ots')], env)).code).toBe(64);
    expect((await cli(dir, ['ots', 'verify', client('hello-world.txt.ots'), '--digest', 'zz'], env)).code).toBe(64);
    const keccak = await cli(dir, ['ots', 'info', client('different-blockchains.txt.ots')], env);
    expect(keccak.code).toBe(1);
    expect(keccak.stderr).toMatch(/keccak256/);
    for (const name of fs.readdirSync(client('invalid'))) {
      const r = await cli(dir, ['ots', 'info', path.join(client('invalid'), name)], env);
      expect(r.code, name).toBe(1);
      expect(hasStack(r.stderr), name).toBe(false);
    }
  });

  it('info prints the tree like the reference, and --json lists the attestations', async () => {
    const human = await cli(dir, ['ots', 'info', client('hello-world.txt.ots')], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(
      /^File sha256 hash: 03ba204e50d126e4674c005e04d82e84c21366780af1f43bd54a37816b6ab340\nTimestamp:\n/,
    );
    expect(human.stdout).toContain('verify BitcoinBlockHeaderAttestation(358391)');
    const { json } = await cliJson(dir, ['ots', 'info', client('two-calendars.txt.ots')], env);
    expect(json.attestations.map((a: { uri: string }) => a.uri).sort()).toEqual([
      'https://alice.btc.calendar.opentimestamps.org',
      'https://bob.btc.calendar.opentimestamps.org',
    ]);
  });
});

describe('timeseal ots upgrade', () => {
  const cal = new LoopbackCalendar();
  const chain = new SyntheticChain();
  const esplora = new LoopbackEsplora(chain);
  beforeAll(async () => {
    await cal.start();
    await esplora.start();
  });
  afterAll(async () => {
    await cal.stop();
    await esplora.stop();
    removeTempDirs();
  });

  it('keeps a pending proof as it is, then merges the upgrade once mined; the result verifies', async () => {
    const dir = tempDir('ots-upgrade');
    const data = crypto.randomBytes(100);
    fs.writeFileSync(path.join(dir, 'data.bin'), data);
    const digest = new Uint8Array(crypto.createHash('sha256').update(data).digest());
    const detached = newDetached('sha256', digest);
    mergeTimestamps(detached.timestamp, await submitDigest(cal.url, digest, 2000));
    const file = path.join(dir, 'data.bin.ots');
    fs.writeFileSync(file, serializeDetached(detached));
    const before = fs.readFileSync(file);
    const env = {
      OTS_CALENDARS: cal.url,
      OTS_MIN_CALENDARS: '1',
      BITCOIN_ESPLORA_URL: esplora.url,
      BITCOIN_NETWORK: 'regtest',
    };
    const pending = await cliJson(dir, ['ots', 'upgrade', file], env);
    expect(pending.r.code).toBe(0);
    expect(pending.json).toMatchObject({
      upgraded_from: [],
      complete: false,
      notes: [`${cal.url}: Pending confirmation in Bitcoin blockchain`],
    });
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    const height = cal.mine(chain);
    const done = await cliJson(dir, ['ots', 'upgrade', file], env);
    expect(done.json).toMatchObject({
      upgraded_from: [cal.url],
      complete: true,
      bitcoin: [`BitcoinBlockHeaderAttestation(${height})`],
    });
    const [ref] = referenceRead([file]);
    expect(ref!.attestations.find((a) => a[0] === 'bitcoin')).toEqual([
      'bitcoin',
      height,
      chain.blocks[height]!.merkleRoot.toString('hex'),
    ]);
    const verified = await cli(dir, ['ots', 'verify', file, '--file', path.join(dir, 'data.bin')], env);
    expect(verified.code, verified.stderr + verified.stdout).toBe(0);
    expect(verified.stdout).toContain(
      `Bitcoin block ${height} attests existence as of ${new Date(chain.blocks[height]!.time * 1000).toISOString().replace('.000Z', 'Z')}`,
    );
    // An untrusted calendar is never asked.
    const untrusted = await cliJson(dir, ['ots', 'upgrade', file], {
      ...env,
      OTS_CALENDARS: 'https://a.example',
      OTS_TRUSTED_CALENDARS: 'https://b.example',
    });
    expect(untrusted.json.notes).toEqual([
      `${cal.url}: not a trusted calendar (OTS_CALENDARS, OTS_TRUSTED_CALENDARS); not asked`,
    ]);
  });
});
