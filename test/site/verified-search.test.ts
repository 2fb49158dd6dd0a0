// lib/verified-search.ts against a real archive written by the real CLI (keys init, import, ledger build):
// found hashes verify (both signatures, inclusion proof), the first day wins, unknown hashes are not found,
// and a tampered tile, checkpoint or key is caught instead of trusted.
import { encodeWitnessPolicy } from '../../core/witness-policy.ts';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  otsStateFor,
  SearchUnavailableError,
  verifiedSearch,
  VerificationFailedError,
  type Fetcher,
} from '../../site/src/lib/verified-search.ts';
import { encodeIndexHead, INDEX_HEAD_PATH, segmentPath } from '../../core/index-segments.ts';
import { diskFetcher as serveFolders } from '../support/disk-fetcher.ts';
import { tilePath, tilesForInclusion } from '../../core/tiles.ts';
import { encodeVkey, mldsa44CosignatureSigner, mldsa44PublicKey } from '../../core/cosignature.ts';
import { signNote } from '../../core/note.ts';
import { cli, createProject, removeProject, type Project } from './helpers.ts';

const h = (n: number) => n.toString(16).padStart(2, '0').repeat(32);
const DAY1 = ['a1', 'b2', 'c3', 'd4', 'e5'].map((p) => p.repeat(32));
const DAY2 = [DAY1[1]!, 'f6'.repeat(32), h(7)];

let project: Project;
let archive: string;
let keys: string;

/** Serves the archive and keys folders like the web server (test/support/disk-fetcher.ts). */
const diskFetcher = (
  overrides: Record<string, Uint8Array | null> = {},
  log: string[] = [],
  ignoreRange = false,
): Fetcher => serveFolders(archive, keys, { overrides, log, ignoreRange });

beforeAll(() => {
  project = createProject();
  archive = project.env.TIMESEAL_ARCHIVE!;
  keys = project.env.TIMESEAL_KEYS!;
  cli(['import', '-'], { env: project.env, now: '2025-11-02T09:14:03.123Z', input: DAY1.join('\n') });
  cli(['ledger', 'build'], { env: project.env, now: '2025-11-03T00:01:00Z' });
  cli(['import', '-'], { env: project.env, now: '2025-11-03T12:00:00.000Z', input: DAY2.join('\n') });
  cli(['ledger', 'build'], { env: project.env, now: '2025-11-04T00:01:00Z' });
});

afterAll(() => removeProject(project));

describe('verifiedSearch', () => {
  it('finds a hash, verifies both checkpoint signatures and the inclusion proof, and reports its day', async () => {
    const log: string[] = [];
    const result = await verifiedSearch(DAY1[3]!.toUpperCase(), diskFetcher({}, log));
    expect(result).toMatchObject({
      found: true,
      hash: DAY1[3],
      date: '2025-11-02',
      timestamp: '2025-11-02T09:14:03.123Z',
      ledgerUrl: '/ledgers/2025-11-02.json',
      quantumShield: true,
      dualSignature: true,
      ecdsaVerified: true,
      inclusionVerified: true,
      treeSize: 8,
      otsStatus: 'pending',
    });
    expect(log).not.toContain('/ledgers/index-sha256.json');
    // Two days of 5 and 3 leaves: the second day's segment was merged with the first (5 < 2 x 3).
    expect(log).toContain(`/ledgers/${INDEX_HEAD_PATH}`);
    // One segment file, read twice: the shard's fan-out entries, then its records.
    expect(log.filter((u) => u === `/ledgers/${segmentPath({ from: 0, to: 8 })}`)).toHaveLength(2);
    const expectedTiles = tilesForInclusion(result.leafIndex!, 8).map(
      (t) => `/ledgers/${tilePath(t.level, t.index, t.width)}`,
    );
    expect(log.filter((u) => u.includes('/tile/')).sort()).toEqual(expectedTiles.sort());
  });

  it('gives the first day of a hash submitted on two days', async () => {
    const result = await verifiedSearch(DAY1[1]!, diskFetcher());
    expect(result.found).toBe(true);
    expect(result.date).toBe('2025-11-02');
  });

  it('finds a hash of the second day at its own date', async () => {
    const result = await verifiedSearch(DAY2[2]!, diskFetcher());
    expect(result).toMatchObject({
      found: true,
      date: '2025-11-03',
      timestamp: '2025-11-03T12:00:00.000Z',
      dualSignature: true,
    });
  });

  it('answers not found for an unknown hash, whether its shard exists or not', async () => {
    const missingShard = await verifiedSearch('99'.repeat(32), diskFetcher());
    expect(missingShard.found).toBe(false);
    const sameShard = await verifiedSearch(`${DAY1[0]!.slice(0, 8)}${'0'.repeat(56)}`, diskFetcher());
    expect(sameShard.found).toBe(false);
    expect(sameShard.quantumShield).toBe(true);
  });

  it('never answers "not found" when the index is incomplete: a missing segment shard or a head behind the checkpoint', async () => {
    const segment = `/ledgers/${segmentPath({ from: 0, to: 8 })}`;
    const log: string[] = [];
    await expect(verifiedSearch(DAY1[3]!, diskFetcher({ [segment]: null }, log))).rejects.toThrow(
      SearchUnavailableError,
    );
    expect(log.filter((u) => u === `/ledgers/${INDEX_HEAD_PATH}`)).toHaveLength(2);
    const behind = new TextEncoder().encode(encodeIndexHead({ treeSize: 5, segments: [{ from: 0, to: 5 }] }));
    await expect(verifiedSearch(DAY2[2]!, diskFetcher({ [`/ledgers/${INDEX_HEAD_PATH}`]: behind }))).rejects.toThrow(
      /index covers 5 leaves, the checkpoint 8/,
    );
  });

  it('reads a segment file from a server without Range support too, and refuses a segment file that lies', async () => {
    const whole = await verifiedSearch(DAY1[3]!, diskFetcher({}, [], true));
    expect(whole).toMatchObject({ found: true, date: '2025-11-02', inclusionVerified: true });
    const ranged = await verifiedSearch(DAY1[3]!, diskFetcher());
    expect(whole.bytesFetched).toBeGreaterThan(ranged.bytesFetched);
    const url = `/ledgers/${segmentPath({ from: 0, to: 8 })}`;
    const file = fs.readFileSync(path.join(archive, segmentPath({ from: 0, to: 8 })));
    // 8 leaves: one shard (0 bits); its fan-out table says 8 records at bytes 12 on.
    expect(file.length).toBe(12 + 8 * 44);
    await expect(verifiedSearch(DAY1[3]!, diskFetcher({ [url]: file.subarray(0, file.length - 44) }))).rejects.toThrow(
      /shorter than its index says/,
    );
    const unsorted = Buffer.concat([
      file.subarray(0, 12),
      file.subarray(56, 100),
      file.subarray(12, 56),
      file.subarray(100),
    ]);
    await expect(verifiedSearch(DAY1[3]!, diskFetcher({ [url]: unsorted }))).rejects.toThrow(VerificationFailedError);
    const table = Buffer.from(file);
    table.writeUInt32BE(9, 8); // says 9 records: past the segment's 8 leaves
    await expect(verifiedSearch(DAY1[3]!, diskFetcher({ [url]: table }))).rejects.toThrow(/fan-out table out of order/);
  });

  it('answers not found on an archive without a checkpoint', async () => {
    const result = await verifiedSearch(DAY1[0]!, diskFetcher({ '/ledgers/checkpoint': null }));
    expect(result.found).toBe(false);
  });

  it('rejects a hash that is not 64 hexadecimal characters', async () => {
    await expect(verifiedSearch('abc', diskFetcher())).rejects.toThrow(RangeError);
  });

  it('catches a tampered tile', async () => {
    const index = 3;
    const [tile] = tilesForInclusion(index, 8);
    const url = `/ledgers/${tilePath(tile!.level, tile!.index, tile!.width)}`;
    const bytes = new Uint8Array(fs.readFileSync(path.join(archive, url.slice(9))));
    bytes[5]! ^= 1;
    await expect(verifiedSearch(DAY1[3]!, diskFetcher({ [url]: bytes }))).rejects.toThrow(VerificationFailedError);
  });

  it('catches a checkpoint whose root was changed (both signatures fail)', async () => {
    const text = fs.readFileSync(path.join(archive, 'checkpoint'), 'utf8').split('\n');
    text[2] = Buffer.alloc(32, 7).toString('base64');
    await expect(
      verifiedSearch(DAY1[0]!, diskFetcher({ '/ledgers/checkpoint': new TextEncoder().encode(text.join('\n')) })),
    ).rejects.toThrow(VerificationFailedError);
  });

  it("checks the Ed25519 and ML-DSA-44 lines with the published vkeys, and the witnesses' cosignatures", async () => {
    const plain = await verifiedSearch(DAY1[0]!, diskFetcher());
    expect(plain.signers).toEqual(['ECDSA P-256', 'ML-DSA-65', 'Ed25519', 'ML-DSA-44']);
    expect(plain.witnesses).toBeUndefined();
    // Without the vkeys (an archive made before them): the two lines are not checked, and not claimed.
    const older = await verifiedSearch(
      DAY1[0]!,
      diskFetcher({ '/keys/ed25519.vkey': null, '/keys/mldsa44.vkey': null }),
    );
    expect(older.signers).toEqual(['ECDSA P-256', 'ML-DSA-65']);
    // A changed byte in the Ed25519 line: the checkpoint is not what its signer signed.
    const note = fs.readFileSync(path.join(archive, 'checkpoint'), 'utf8');
    const lines = note.split('\n');
    const ed = lines.findIndex(
      (l, i) => i > 4 && l.startsWith('\u2014') && Buffer.from(l.split(' ')[2]!, 'base64').length === 68,
    );
    const sig = Buffer.from(lines[ed]!.split(' ')[2]!, 'base64');
    sig[20]! ^= 1;
    const flipped = [...lines];
    flipped[ed] = `${lines[ed]!.split(' ').slice(0, 2).join(' ')} ${sig.toString('base64')}`;
    await expect(
      verifiedSearch(DAY1[0]!, diskFetcher({ '/ledgers/checkpoint': new TextEncoder().encode(flipped.join('\n')) })),
    ).rejects.toThrow(/Ed25519 line of/);
    // Two witnesses named in keys/witnesses (c2sp.org/tlog-policy), both required; one cosigned this checkpoint.
    const seedA = new Uint8Array(32).fill(1);
    const seedB = new Uint8Array(32).fill(2);
    const policy = encodeWitnessPolicy({
      witnesses: [
        { text: encodeVkey('w1.example', 6, mldsa44PublicKey(seedA)) },
        { text: encodeVkey('w2.example', 6, mldsa44PublicKey(seedB)) },
      ],
      threshold: 2,
    });
    const text = note.slice(0, note.indexOf('\n\n') + 1);
    const witnessLine = signNote(text, [mldsa44CosignatureSigner('w1.example', seedA, () => 1_762_000_000)]).slice(
      text.length + 1,
    );
    const witnessed = new TextEncoder().encode(note + witnessLine);
    const result = await verifiedSearch(
      DAY1[0]!,
      diskFetcher({ '/ledgers/checkpoint': witnessed, '/keys/witnesses': new TextEncoder().encode(policy) }),
    );
    expect(result).toMatchObject({
      found: true,
      witnessQuorum: 2,
      witnesses: [
        { name: 'w1.example', cosigned: true },
        { name: 'w2.example', cosigned: false },
      ],
    });
    expect(result.signers).toContain('w1.example');
    // A cosignature for another checkpoint (another size) is refused, not counted.
    const otherText = text.replace(/\n8\n/, '\n7\n');
    const foreign = signNote(otherText, [mldsa44CosignatureSigner('w1.example', seedA, () => 1_762_000_000)]).slice(
      otherText.length + 1,
    );
    await expect(
      verifiedSearch(
        DAY1[0]!,
        diskFetcher({
          '/ledgers/checkpoint': new TextEncoder().encode(note + foreign),
          '/keys/witnesses': new TextEncoder().encode(policy),
        }),
      ),
    ).rejects.toThrow(/ML-DSA-44 cosignature line of w1.example does not verify/);
  });

  it('shows the quantum shield off when the ML-DSA-65 key does not match, and keeps the ECDSA result', async () => {
    const otherKey = new Uint8Array(1952).fill(3);
    const result = await verifiedSearch(DAY1[0]!, diskFetcher({ '/keys/dilithium_public.key': otherKey }));
    expect(result).toMatchObject({ found: true, quantumShield: false, dualSignature: false, ecdsaVerified: true });
  });

  it('reports the archive unreachable when a key cannot be fetched', async () => {
    await expect(verifiedSearch(DAY1[0]!, diskFetcher({ '/keys/public.pem': null }))).rejects.toThrow(
      SearchUnavailableError,
    );
    await expect(
      verifiedSearch(DAY1[0]!, async () => {
        throw new TypeError('network');
      }),
    ).rejects.toThrow(SearchUnavailableError);
  });

  it("reads block height, confirmations and why anchoring waits from the day's month of block information, and the OTS state from ots_status.json", async () => {
    const MONTH = '/ledgers/block-info/2025-11.json';
    const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
    // The build wrote the month file: the whole block_info.json is not read.
    const log: string[] = [];
    const fresh = await verifiedSearch(DAY1[0]!, diskFetcher({}, log));
    expect(fresh.anchoring).toMatchObject({ state: 'not-stamped', reason: expect.stringContaining('00:02 UTC') });
    expect(log).toContain(MONTH);
    expect(log).not.toContain('/ledgers/block_info.json');
    const blocks = json({ ledgers: { '2025-11-02': { block_height: 922004, confirmations: 7 } }, pending: {} });
    const result = await verifiedSearch(DAY1[0]!, diskFetcher({ [MONTH]: blocks }));
    expect(result).toMatchObject({ blockHeight: 922004, confirmations: 7, otsStatus: 'verified' });
    expect(result.anchoring).toBeUndefined();
    // An archive written before the month files: block_info.json is read instead.
    const older = await verifiedSearch(DAY1[0]!, diskFetcher({ [MONTH]: null, '/ledgers/block_info.json': blocks }));
    expect(older).toMatchObject({ blockHeight: 922004, confirmations: 7, otsStatus: 'verified' });
    const ots = json({ latest_ots_ok: '2025-11-03', last_update: '2025-11-04T00:05:00Z', queue_size: 0 });
    const viaOts = await verifiedSearch(
      DAY1[0]!,
      diskFetcher({ '/ledgers/ots_status.json': ots, [MONTH]: null, '/ledgers/block_info.json': null }),
    );
    expect(viaOts).toMatchObject({ otsStatus: 'verified', blockHeight: null, confirmations: null });
  });

  it('reads the same bytes whether block_info.json holds these days or 3,650 of them (a search never reads it whole)', async () => {
    const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
    const day = (i: number) => new Date(Date.parse('2015-11-04T00:00:00Z') + i * 86_400_000).toISOString().slice(0, 10);
    const decade = json({
      ledgers: Object.fromEntries(
        Array.from({ length: 3650 }, (_, i) => [day(i), { block_height: 800_000 + i, confirmations: 3650 - i }]),
      ),
      pending: {},
    });
    expect(decade.length).toBeGreaterThan(150_000);
    const now = await verifiedSearch(DAY1[0]!, diskFetcher());
    const later = await verifiedSearch(DAY1[0]!, diskFetcher({ '/ledgers/block_info.json': decade }));
    expect(later.found).toBe(true);
    expect(later.bytesFetched).toBe(now.bytesFetched);
  });

  it('keeps the defaults when the status files are broken', async () => {
    const broken = new TextEncoder().encode('{not json');
    const result = await verifiedSearch(
      DAY1[0]!,
      diskFetcher({ '/ledgers/ots_status.json': broken, '/ledgers/block-info/2025-11.json': broken }),
    );
    expect(result).toMatchObject({ found: true, otsStatus: 'pending', blockHeight: null, confirmations: null });
  });

  it("asks for no file a default archive does not have: the witness policy only when the checkpoint carries a line that is not the log's", async () => {
    const log: string[] = [];
    const found = await verifiedSearch(DAY1[0]!, diskFetcher({}, log));
    expect(found.found).toBe(true);
    const notFound = await verifiedSearch('99'.repeat(32), diskFetcher({}, log));
    expect(notFound.found).toBe(false);
    const missing = log.filter(
      (u) => !fs.existsSync(u.startsWith('/keys/') ? path.join(keys, u.slice(6)) : path.join(archive, u.slice(9))),
    );
    expect(missing).toEqual([]);
    expect(log).not.toContain('/keys/witnesses');
  });
});

describe('otsStateFor (the Bitcoin status of a day)', () => {
  it.each([
    ['2025-11-02', '', undefined, 'pending'],
    ['2025-11-02', '2025-11-01', undefined, 'pending'],
    ['2025-11-02', '2025-11-02', undefined, 'verified'],
    ['2025-11-02', '2025-11-05', undefined, 'verified'],
    ['2025-11-02', '', { confirmations: 0 }, 'verified'],
    ['2025-11-02', '', { block_height: 1 }, 'pending'],
  ] as const)('date %s, latest_ots_ok "%s", block %j → %s', (date, latest, block, expected) => {
    expect(otsStateFor(date, latest, block)).toBe(expected);
  });
});
