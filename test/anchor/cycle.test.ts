// The whole anchoring cycle offline, through the real `timeseal` CLI: build a day → anchor (loopback calendars
// speaking the real protocol) → pending → the calendar "mines" into a synthetic regtest chain with real proof
// of work, served by a loopback Esplora → upgrade → confirmed with confirmations = tip − height + 1. The
// ledger and per-hash .ots files are read by the reference implementation (python3-opentimestamps), which
// must reach the merkle root of the block the chain mined. Also: a failed stamp (fewer than m answers) and a
// forged header (right merkle root, no proof of work).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SyntheticChain } from './chain.ts';
import { cli, cliJson, referenceRead, removeTempDirs, tempDir } from './helpers.ts';
import { LoopbackCalendar, LoopbackEsplora } from './servers.ts';

const DAY = '2026-01-05';
const hashes = Array.from({ length: 13 }, (_, i) =>
  crypto.createHash('sha256').update(`anchor-cycle-${i}`).digest('hex'),
);
const target = hashes[6]!;

describe('anchoring cycle through the CLI', () => {
  const chain = new SyntheticChain();
  const calendars = [new LoopbackCalendar(), new LoopbackCalendar(), new LoopbackCalendar()];
  const esplora = new LoopbackEsplora(chain);
  let project: string;
  let env: Record<string, string>;
  const archive = () => path.join(project, 'ledgers');
  const readJson = (name: string) => JSON.parse(fs.readFileSync(path.join(archive(), name), 'utf8'));

  beforeAll(async () => {
    await Promise.all([...calendars.map((c) => c.start()), esplora.start()]);
    project = tempDir('cycle');
    env = {
      TIMESEAL_ORIGIN: 'https://timeseal.test',
      OTS_CALENDARS: calendars.map((c) => c.url).join(','),
      OTS_MIN_CALENDARS: '2',
      OTS_TIMEOUT_MS: '1500',
      BITCOIN_ESPLORA_URL: esplora.url,
      BITCOIN_NETWORK: 'regtest',
    };
    expect((await cli(project, ['keys', 'init'], env)).code).toBe(0);
    const imp = await cli(
      project,
      ['import', '-'],
      { ...env, TIMESEAL_NOW: `${DAY}T10:00:00Z` },
      `${hashes.join('\n')}\n`,
    );
    expect(imp.code, imp.stderr).toBe(0);
    const build = await cli(project, ['ledger', 'build'], { ...env, TIMESEAL_NOW: '2026-01-06T00:01:00Z' });
    expect(build.code, build.stderr).toBe(0);
  });

  afterAll(async () => {
    await Promise.all([...calendars.map((c) => c.stop()), esplora.stop()]);
    removeTempDirs();
  });

  it('a new day is "not stamped" in the status files after the build', () => {
    expect(readJson('ots_status.json')).toMatchObject({ latest_ots_ok: '', queue_size: 1 });
    expect(readJson('block_info.json').pending[DAY].state).toBe('not-stamped');
    expect(fs.existsSync(path.join(archive(), `${DAY}.json.ots`))).toBe(false);
  });

  it('fewer than m calendar answers fails the stamp: exit 1, no .ots, the reason recorded', async () => {
    calendars[1]!.fault = 'http400';
    calendars[2]!.fault = 'hang';
    const { r, json } = await cliJson(project, ['anchor'], {
      ...env,
      OTS_TIMEOUT_MS: '400',
      TIMESEAL_NOW: '2026-01-06T00:02:00Z',
    });
    calendars[1]!.fault = 'none';
    calendars[2]!.fault = 'none';
    expect(r.code).toBe(1);
    expect(json.days[0]).toMatchObject({ date: DAY, outcome: 'failed' });
    expect(fs.existsSync(path.join(archive(), `${DAY}.json.ots`))).toBe(false);
    const pending = readJson('block_info.json').pending[DAY];
    expect(pending.state).toBe('not-stamped');
    expect(pending.reason).toMatch(/1 of 3 calendars answered \(2 needed\)/);
    expect(pending.reason).toMatch(/HTTP 400/);
    expect(pending.reason).toMatch(/did not answer within 400 ms/);
    expect(readJson('ots_status.json')).toMatchObject({ latest_ots_ok: '', queue_size: 1 });
  });

  it('anchor stamps the day with every calendar; upgrade keeps it pending with the calendars’ text', async () => {
    const a = await cliJson(project, ['anchor'], { ...env, TIMESEAL_NOW: '2026-01-06T00:02:00Z' });
    expect(a.r.code, a.r.stderr).toBe(0);
    expect(a.json.days[0]).toMatchObject({ date: DAY, outcome: 'stamped' });
    expect(a.json.days[0].answered).toHaveLength(3);
    const ledgerOts = path.join(archive(), `${DAY}.json.ots`);
    expect(fs.existsSync(ledgerOts)).toBe(true);
    const u = await cliJson(project, ['upgrade'], { ...env, TIMESEAL_NOW: '2026-01-06T00:05:00Z' });
    expect(u.r.code, u.r.stderr).toBe(0);
    expect(u.json.days[0]).toMatchObject({ date: DAY, state: 'pending' });
    const pending = readJson('block_info.json').pending[DAY];
    expect(pending.state).toBe('pending');
    expect(pending.reason).toContain('Pending confirmation in Bitcoin blockchain');
    expect(readJson('block_info.json').ledgers).toEqual({});
    // The reference reads the pending proof: its digest is the ledger file's SHA-256, three pending calendars.
    const [ref] = referenceRead([ledgerOts]);
    const ledgerSha = crypto
      .createHash('sha256')
      .update(fs.readFileSync(path.join(archive(), `${DAY}.json`)))
      .digest('hex');
    expect(ref!.digest).toBe(ledgerSha);
    expect(ref!.attestations.map((x) => x[1]).sort()).toEqual(calendars.map((c) => c.url).sort());
  });

  it('after the calendar is mined into the chain, upgrade confirms the day with tip − height + 1 confirmations', async () => {
    const heights = calendars.slice(0, 2).map((c) => c.mine(chain)); // the third calendar stays pending
    chain.extend(3);
    const u = await cliJson(project, ['upgrade'], { ...env, TIMESEAL_NOW: '2026-01-06T01:05:00Z' });
    expect(u.r.code, u.r.stderr).toBe(0);
    const first = Math.min(...heights);
    const expected = { block_height: first, confirmations: chain.tip.height - first + 1 };
    expect(u.json.days[0]).toMatchObject({ date: DAY, state: 'confirmed', ...expected });
    expect(readJson('block_info.json').ledgers).toEqual({ [DAY]: expected });
    expect(readJson('block_info.json').pending).toEqual({});
    expect(readJson('ots_status.json')).toMatchObject({ latest_ots_ok: DAY, queue_size: 0 });
    chain.extend(2);
    const again = await cliJson(project, ['upgrade'], { ...env, TIMESEAL_NOW: '2026-01-06T02:05:00Z' });
    expect(again.json.days[0].confirmations).toBe(expected.confirmations + 2);
    expect(readJson('block_info.json').ledgers[DAY].confirmations).toBe(expected.confirmations + 2);
  });

  it('the reference implementation reaches the mined merkle roots from the ledger and per-hash .ots files', async () => {
    const perHash = path.join(project, 'h.ots');
    const p = await cli(project, ['proof', target, '--ots', perHash], env);
    expect(p.code, p.stderr).toBe(0);
    const bundle = JSON.parse(p.stdout);
    expect(Buffer.from(bundle.ots, 'base64').equals(fs.readFileSync(perHash))).toBe(true);
    const [ledger, hashProof] = referenceRead([path.join(archive(), `${DAY}.json.ots`), perHash]);
    expect(hashProof!.digest).toBe(target);
    expect(hashProof!.file_hash_op).toBe('sha256');
    const mined = chain.blocks.filter((b) => b.height > 0);
    for (const reading of [ledger!, hashProof!]) {
      const bitcoin = reading.attestations.filter((x) => x[0] === 'bitcoin');
      expect(bitcoin).toHaveLength(2);
      for (const [, height, message] of bitcoin)
        expect(message).toBe(chain.blocks[height as number]!.merkleRoot.toString('hex'));
      expect(reading.attestations.filter((x) => x[0] === 'pending').length).toBeGreaterThanOrEqual(1);
    }
    expect(hashProof!.attestations).toEqual(ledger!.attestations);
    expect(mined.length).toBeGreaterThan(2);
  });

  it('timeseal ots verify checks both proofs against the chain and prints the block and its time', async () => {
    const perHash = path.join(project, 'h.ots');
    const v = await cliJson(project, ['ots', 'verify', perHash, '--digest', target], env);
    expect(v.r.code, v.r.stderr).toBe(0);
    const first = v.json.verified[0];
    expect(first.time).toBe(new Date(chain.blocks[first.height]!.time * 1000).toISOString().replace('.000Z', 'Z'));
    expect(first.block_hash).toBe(chain.blocks[first.height]!.hash);
    const human = await cli(
      project,
      ['ots', 'verify', path.join(archive(), `${DAY}.json.ots`), '--file', path.join(archive(), `${DAY}.json`)],
      env,
    );
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain(`Bitcoin block ${first.height} attests existence as of ${first.time}`);
    const wrong = await cli(project, ['ots', 'verify', perHash, '--digest', hashes[0]!], env);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/digest/);
  });

  it('a header with the right merkle root but no proof of work is rejected', async () => {
    const perHash = path.join(project, 'h.ots');
    const v = await cliJson(project, ['ots', 'verify', perHash, '--digest', target], env);
    const heights: number[] = v.json.verified.map((x: { height: number }) => x.height);
    for (const h of heights) esplora.forged.set(h, chain.forgeWithoutWork(h));
    try {
      const forged = await cliJson(project, ['ots', 'verify', perHash, '--digest', target], env);
      expect(forged.r.code).toBe(1);
      expect(forged.json.verified).toEqual([]);
      expect(forged.json.problems.join('\n')).toMatch(/proof of work does not meet its target/);
    } finally {
      esplora.forged.clear();
    }
  });

  it('proof --ots fails (not found) while the day has no calendar proof, and the bundle carries ots: null', async () => {
    const other = tempDir('unanchored');
    const e = { ...env, OTS_CALENDARS: calendars.map((c) => c.url).join(',') };
    expect((await cli(other, ['keys', 'init'], e)).code).toBe(0);
    expect((await cli(other, ['import', '-'], { ...e, TIMESEAL_NOW: `${DAY}T10:00:00Z` }, `${target}\n`)).code).toBe(0);
    expect((await cli(other, ['ledger', 'build'], { ...e, TIMESEAL_NOW: '2026-01-06T00:01:00Z' })).code).toBe(0);
    const bundle = await cli(other, ['proof', target], e);
    expect(JSON.parse(bundle.stdout).ots).toBeNull();
    const out = path.join(other, 'x.ots');
    const r = await cli(other, ['proof', target, '--ots', out], e);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/no calendar proof yet/);
    expect(fs.existsSync(out)).toBe(false);
  });
});
