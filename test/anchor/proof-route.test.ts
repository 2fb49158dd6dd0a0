// GET /api/proof/:hash.ots through the real app (inject()): 404 until the day has a calendar proof, then the
// per-hash .ots — the same bytes as the bundle's `ots` field, starting at the hash, read by the reference
// implementation. Also the anchoring steps in-process on the same archive, and the status files they leave.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toHex } from '../../core/encoding.ts';
import { parseDetached } from '../../core/ots.ts';
import { anchorDays, upgradeDays } from '../../pipeline/anchor/anchor.ts';
import { loadAnchorConfig } from '../../pipeline/anchor/config.ts';
import { DAY, makeFixture, removeTempDirs as removeFixtures, TODAY, type Fixture } from '../../ingest/test/fixture.ts';
import { SyntheticChain } from './chain.ts';
import { referenceRead } from './helpers.ts';
import { LoopbackCalendar, LoopbackEsplora } from './servers.ts';

describe('GET /api/proof/:hash.ots', () => {
  const cal = new LoopbackCalendar();
  const chain = new SyntheticChain();
  const esplora = new LoopbackEsplora(chain);
  let f: Fixture;
  const anchorCtx = () => ({
    config: f.config,
    anchor: loadAnchorConfig({
      OTS_CALENDARS: cal.url,
      OTS_MIN_CALENDARS: '1',
      OTS_TIMEOUT_MS: '2000',
      BITCOIN_ESPLORA_URL: esplora.url,
      BITCOIN_NETWORK: 'regtest',
    }),
    clock: () => new Date(`${TODAY}T00:02:00.000Z`),
  });

  beforeAll(async () => {
    await cal.start();
    await esplora.start();
    f = await makeFixture();
  });
  afterAll(async () => {
    await f.close();
    await cal.stop();
    await esplora.stop();
    removeFixtures();
  });

  it('answers 404 while the day is not anchored and for unknown hashes', async () => {
    const r = await f.app.inject({ method: 'GET', url: `/api/proof/${f.published[0]}.ots` });
    expect(r.statusCode).toBe(404);
    expect(r.json()).toEqual({ error: 'not anchored yet', message: 'not anchored yet' });
    const unknown = await f.app.inject({ method: 'GET', url: `/api/proof/${'ab'.repeat(32)}.ots` });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toMatch(/not in any published ledger/);
  });

  it('serves the per-hash .ots once anchored: the bundle’s bytes, rooted at the hash, read by the reference', async () => {
    const [stamp] = await anchorDays(anchorCtx());
    expect(stamp).toMatchObject({ date: DAY, outcome: 'stamped', answered: [cal.url] });
    const hash = f.published[1]!;
    const r = await f.app.inject({ method: 'GET', url: `/api/proof/${hash}.ots` });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('application/octet-stream');
    const bytes = r.rawPayload;
    expect(toHex(parseDetached(new Uint8Array(bytes)).timestamp.message)).toBe(hash);
    const bundle = (await f.app.inject({ method: 'GET', url: `/api/proof/${hash}` })).json();
    expect(bundle.ots).toBe(bytes.toString('base64'));
    const file = path.join(f.dir, 'h.ots');
    fs.writeFileSync(file, bytes);
    const [ref] = referenceRead([file]);
    expect(ref!.digest).toBe(hash);
    expect(ref!.attestations.map((a) => a.slice(0, 2))).toEqual([['pending', cal.url]]);
  });

  it('the in-process upgrade confirms the day; an upgraded day serves the Bitcoin attestation too', async () => {
    const height = cal.mine(chain);
    const report = await upgradeDays(anchorCtx());
    expect(report.days).toEqual([
      { date: DAY, state: 'confirmed', block_height: height, confirmations: 1, upgraded_from: [cal.url] },
    ]);
    const info = JSON.parse(fs.readFileSync(path.join(f.config.archive, 'block_info.json'), 'utf8'));
    expect(info.ledgers).toEqual({ [DAY]: { block_height: height, confirmations: 1 } });
    expect(info.tip_height).toBe(height);
    const r = await f.app.inject({ method: 'GET', url: `/api/proof/${f.published[2]}.ots` });
    const file = path.join(f.dir, 'h2.ots');
    fs.writeFileSync(file, r.rawPayload);
    const [ref] = referenceRead([file]);
    expect(ref!.attestations.filter((a) => a[0] === 'bitcoin')).toEqual([
      ['bitcoin', height, chain.blocks[height]!.merkleRoot.toString('hex')],
    ]);
    // The anchor of the leaf's COSE receipt: an .ots of the day's root (docs/FORMAT.md §11), the same attestation.
    const anchor = await f.app.inject({ method: 'GET', url: `/api/receipt-anchor/${f.published[2]}.ots` });
    expect(anchor.statusCode).toBe(200);
    const rootFile = path.join(f.dir, 'root.ots');
    fs.writeFileSync(rootFile, anchor.rawPayload);
    const [rootRef] = referenceRead([rootFile]);
    const days = JSON.parse(fs.readFileSync(path.join(f.config.archive, 'days.json'), 'utf8'));
    expect(rootRef!.digest).toBe(days.days.find((d: { date: string }) => d.date === DAY).root);
    expect(rootRef!.attestations.filter((a) => a[0] === 'bitcoin')).toEqual([
      ['bitcoin', height, chain.blocks[height]!.merkleRoot.toString('hex')],
    ]);
  });

  it('a forged header (right merkle root, no proof of work) takes a fresh confirmation back to "unverified"', async () => {
    // Confirmed with 1 confirmation (< 6): the next run re-checks its header and meets the forgery.
    const height = chain.tip.height;
    esplora.forged.set(height, chain.forgeWithoutWork(height));
    try {
      const report = await upgradeDays(anchorCtx());
      expect(report.days[0]).toMatchObject({ date: DAY, state: 'unverified' });
      expect(report.days[0]!.reason).toMatch(/proof of work does not meet its target/);
      const status = JSON.parse(fs.readFileSync(path.join(f.config.archive, 'ots_status.json'), 'utf8'));
      expect(status).toMatchObject({ latest_ots_ok: '', queue_size: 1 });
    } finally {
      esplora.forged.clear();
    }
  });
});
