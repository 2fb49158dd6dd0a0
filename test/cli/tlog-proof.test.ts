// `timeseal proof HASH --tlog-proof FILE` (docs/FORMAT.md §8a), black box: the real CLI on a two-day archive in a
// temp project. The file it writes is checked with a verifier written here from c2sp.org/tlog-proof, RFC 6962
// (helpers.ts) and node:crypto for the two checkpoint signatures, not with core/; then with core/ as well.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseTlogProof, verifyTlogProof } from '../../core/tlog-proof.ts';
import { loadPublicKeys } from '../../runtime/keys.ts';
import {
  makeHashes,
  parseCheckpoint,
  removeTempProjects,
  rfcLeafHash,
  rfcVerifyInclusion,
  run,
  tempProject,
  writeHashFile,
} from './helpers.ts';

afterAll(removeTempProjects);

const DAY1 = '2025-11-01';
const BUILD_AT = { TIMESEAL_NOW: '2025-11-03T00:01:00.000Z' };

let dir: string;
const day1 = makeHashes('tlog-day1', 40);
const day2 = makeHashes('tlog-day2', 25);
/** Submitted on both days: its proof is the first day's. */
const twice = day1[17]!;

beforeAll(() => {
  dir = tempProject('tlog-proof');
  for (const [args, env] of [
    [['keys', 'init'], {}],
    [['import', writeHashFile(dir, 'day1.txt', day1)], { TIMESEAL_NOW: `${DAY1}T09:00:00.000Z` }],
    [['import', writeHashFile(dir, 'day2.txt', [...day2, twice])], { TIMESEAL_NOW: '2025-11-02T10:00:00.000Z' }],
    [['ledger', 'build'], BUILD_AT],
  ] as const) {
    const r = run(dir, [...args], { env });
    expect(r.code, r.stderr).toBe(0);
  }
});

/** c2sp.org/tlog-proof@v1 read by hand: header, extra, index, hashes, empty line, checkpoint. */
function readByHand(text: string) {
  const split = text.indexOf('\n\n');
  const head = text.slice(0, split).split('\n');
  expect(head[0]).toBe('c2sp.org/tlog-proof@v1');
  expect(head[1]).toMatch(/^extra [A-Za-z0-9+/]{43}=$/);
  expect(head[2]).toMatch(/^index (0|[1-9][0-9]*)$/);
  return {
    extra: Buffer.from(head[1]!.slice(6), 'base64'),
    index: Number(head[2]!.slice(6)),
    path: head.slice(3).map((line) => Buffer.from(line, 'base64')),
    checkpoint: text.slice(split + 2),
  };
}

describe('timeseal proof --tlog-proof', () => {
  test('writes a file that verifies: the first day’s leaf, its RFC 6962 path and that day’s dual-signed checkpoint', () => {
    const file = path.join(dir, 'twice.tlog-proof');
    const r = run(dir, ['proof', twice, '--tlog-proof', file], { env: BUILD_AT });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ format: 'timeseal-proof/4', hash: twice, date: DAY1 });
    const text = fs.readFileSync(file, 'utf8');
    const p = readByHand(text);
    expect(p.extra.toString('hex')).toBe(twice);
    expect(p.checkpoint).toBe(fs.readFileSync(path.join(dir, 'ledgers', `${DAY1}.checkpoint`), 'utf8'));
    const cp = parseCheckpoint(p.checkpoint);
    expect(cp.size).toBe(40);
    const sorted = [...day1].sort();
    expect(p.index).toBe(sorted.indexOf(twice));
    expect(rfcVerifyInclusion(p.index, cp.size, rfcLeafHash(Buffer.from(twice, 'hex')), p.path, cp.root)).toBe(true);
    expect(rfcVerifyInclusion(p.index, cp.size, rfcLeafHash(Buffer.from(day1[0]!, 'hex')), p.path, cp.root)).toBe(
      false,
    );
    // Both of the log's signature lines, checked with node:crypto and the published keys.
    const [ecdsaLine, mldsaLine] = cp.signatures;
    expect(
      crypto.verify(
        'sha256',
        Buffer.from(cp.text),
        fs.readFileSync(path.join(dir, 'keys/public.pem'), 'utf8'),
        ecdsaLine!.signature,
      ),
    ).toBe(true);
    expect(
      crypto.verify(
        null,
        Buffer.from(cp.text),
        fs.readFileSync(path.join(dir, 'keys/dilithium_public.pem'), 'utf8'),
        mldsaLine!.signature,
      ),
    ).toBe(true);
    // And with core/, with and without the hash.
    const keys = loadPublicKeys(path.join(dir, 'keys'));
    expect(verifyTlogProof(parseTlogProof(text), keys)).toMatchObject({ hash: twice, index: p.index, treeSize: 40 });
    const flipped = Buffer.from(text);
    const at = text.indexOf('\n\n') - 3;
    flipped[at] = flipped[at]! ^ 0x02;
    expect(() => verifyTlogProof(parseTlogProof(flipped), keys)).toThrow(/tlog-proof/);
  });

  test("'-' prints the same proof instead of the bundle", () => {
    const file = path.join(dir, 'day2.tlog-proof');
    expect(run(dir, ['proof', day2[3]!.toUpperCase(), '--tlog-proof', file], { env: BUILD_AT }).code).toBe(0);
    const r = run(dir, ['proof', day2[3]!, '--tlog-proof', '-'], { env: BUILD_AT });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(fs.readFileSync(file, 'utf8'));
    const p = readByHand(r.stdout);
    expect(p.index).toBeGreaterThanOrEqual(40);
    expect(parseCheckpoint(p.checkpoint).size).toBe(66);
  });

  test("'-' with --json is a usage error (stdout would not be JSON)", () => {
    const r = run(dir, ['proof', day2[3]!, '--tlog-proof', '-', '--json'], { env: BUILD_AT });
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(/--tlog-proof - prints text, not JSON/);
    expect(r.stdout).toBe('');
  });

  test('an unknown hash exits 3 (not found) and writes no file', () => {
    const unknown = makeHashes('never', 1)[0]!;
    const file = path.join(dir, 'unknown.tlog-proof');
    const r = run(dir, ['proof', unknown, '--tlog-proof', file], { env: BUILD_AT });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(new RegExp(`${unknown}.*not in any published ledger`));
    expect(fs.existsSync(file)).toBe(false);
  });
});
