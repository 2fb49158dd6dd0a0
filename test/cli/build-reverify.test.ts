// Before it extends the log, `timeseal ledger build` re-verifies the last published day (its ledger file read a few
// MB at a time, hashed and parsed as it comes: pipeline/build.ts verifyPublishedDay): a changed byte in any of
// the day's files stops the build, which names the file, and publishes nothing.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { flipByte, makeHashes, removeTempProjects, run, tempProject, treeDigest, writeHashFile } from './helpers.ts';

afterAll(removeTempProjects);

let published: string;
beforeAll(() => {
  published = builtProject('reverify');
});

test.each([
  ['2025-11-01.json', 'an entry', (size: number) => size >> 1, /2025-11-01\.json was altered after signing/],
  ['2025-11-01.json', 'its last byte', (size: number) => size - 1, /2025-11-01\.json was altered after signing/],
  ['2025-11-01.json.sig', 'the ECDSA signature', (size: number) => size - 5, /2025-11-01\.json\.sig/],
  ['2025-11-01.json.signatures.json', 'the metadata', (size: number) => size >> 1, /signatures\.json/],
])('a changed byte in %s (%s) stops the next build, which names it', (file, _what, at, named) => {
  const dir = tempProject('reverify-copy');
  fs.cpSync(published, dir, { recursive: true });
  const target = path.join(dir, 'ledgers', file);
  flipByte(target, at(fs.statSync(target).size));
  const before = treeDigest(path.join(dir, 'ledgers'));
  const r = run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: '2025-11-03T00:01:00.000Z' } });
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).toMatch(named);
  expect(r.stderr).not.toContain('    at ');
  expect(fs.readFileSync(path.join(dir, 'ledgers/days.json'), 'utf8')).not.toContain('2025-11-02');
  expect(treeDigest(path.join(dir, 'ledgers')).get('days.json')).toBe(before.get('days.json'));
});

test('the untouched archive extends', () => {
  const r = run(published, ['ledger', 'build'], { env: { TIMESEAL_NOW: '2025-11-03T00:01:00.000Z' } });
  expect(r.code, r.stderr).toBe(0);
  expect(fs.readFileSync(path.join(published, 'ledgers/days.json'), 'utf8')).toContain('2025-11-02');
});

// In the archive whose build wrote the last day's ledger, the next build does not read that ledger again: it
// checks the day's signatures, their metadata and its checkpoint against the digests that build computed while
// writing it (data/ledger-stamp.json), while the file is still that very file (same inode, size and times), and
// the tiles' root at the day's size. Each project below is built in place: a copy is another archive.
/** Day 1 (700 hashes) built, day 2 (50) imported. */
function builtProject(name: string): string {
  const dir = tempProject(name);
  expect(run(dir, ['keys', 'init']).code).toBe(0);
  const first = writeHashFile(dir, 'day1.txt', makeHashes('reverify-1', 700));
  expect(run(dir, ['import', first], { env: { TIMESEAL_NOW: '2025-11-01T10:00:00.000Z' } }).code).toBe(0);
  expect(run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: '2025-11-02T00:01:00.000Z' } }).code).toBe(0);
  const second = writeHashFile(dir, 'day2.txt', makeHashes('reverify-2', 50));
  expect(run(dir, ['import', second], { env: { TIMESEAL_NOW: '2025-11-02T10:00:00.000Z' } }).code).toBe(0);
  return dir;
}

function refusedInPlace(dir: string, named: RegExp): void {
  const before = treeDigest(path.join(dir, 'ledgers'));
  const r = run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: '2025-11-03T00:01:00.000Z' } });
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).toMatch(named);
  expect(r.stderr).not.toContain('    at ');
  expect(treeDigest(path.join(dir, 'ledgers')).get('days.json')).toBe(before.get('days.json'));
}

test('the build records the digests of the ledger it wrote, which days.json gives', () => {
  const dir = builtProject('reverify-stamp');
  const stamp = JSON.parse(fs.readFileSync(path.join(dir, 'data/ledger-stamp.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  const days = JSON.parse(fs.readFileSync(path.join(dir, 'ledgers/days.json'), 'utf8')) as {
    days: { date: string; sha256: string }[];
  };
  expect(stamp.date).toBe('2025-11-01');
  expect(stamp.sha256).toBe(days.days[0]!.sha256);
  expect(stamp.size).toBe(fs.statSync(path.join(dir, 'ledgers/2025-11-01.json')).size);
});

test.each([
  ['2025-11-01.json', 'an entry', (size: number) => size >> 1, /2025-11-01\.json was altered after signing/],
  ['2025-11-01.json.sig', 'the ECDSA signature', (size: number) => size - 5, /2025-11-01\.json\.sig/],
  [
    '2025-11-01.json.dilithium.sig',
    'the ML-DSA signature',
    (size: number) => size >> 1,
    /2025-11-01\.json\.dilithium\.sig/,
  ],
  ['2025-11-01.json.signatures.json', 'the metadata', (size: number) => size >> 1, /signatures\.json/],
  ['2025-11-01.checkpoint', 'the checkpoint', (size: number) => size - 10, /2025-11-01\.checkpoint/],
])('in the archive that wrote it, a changed byte in %s (%s) still stops the next build', (file, _what, at, named) => {
  const dir = builtProject('reverify-in-place');
  const target = path.join(dir, 'ledgers', file);
  flipByte(target, at(fs.statSync(target).size));
  refusedInPlace(dir, named);
});

test('in the archive that wrote it, a changed tile still stops the next build', () => {
  const dir = builtProject('reverify-tile');
  // The partial tile of level 0 (700 = 2 × 256 + 188): the two full ones are read as level 1's hashes.
  flipByte(path.join(dir, 'ledgers/tile/0/002.p/188'), 7);
  refusedInPlace(dir, /tiles root at size 700/);
});

test('the signatures are checked against the recorded digests when the ledger is untouched', () => {
  // A record whose μ is not the ledger's: the ML-DSA signature no longer verifies against it, and the build stops
  // (a build that read the ledger again would not look at the record and would extend the log).
  const dir = builtProject('reverify-record');
  const file = path.join(dir, 'data/ledger-stamp.json');
  const stamp = JSON.parse(fs.readFileSync(file, 'utf8')) as { mu: string };
  stamp.mu = `${stamp.mu[0] === '0' ? '1' : '0'}${stamp.mu.slice(1)}`;
  fs.writeFileSync(file, JSON.stringify(stamp));
  refusedInPlace(dir, /2025-11-01\.json\.dilithium\.sig/);
});
