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
  published = tempProject('reverify');
  expect(run(published, ['keys', 'init']).code).toBe(0);
  const first = writeHashFile(published, 'day1.txt', makeHashes('reverify-1', 700));
  expect(run(published, ['import', first], { env: { TIMESEAL_NOW: '2025-11-01T10:00:00.000Z' } }).code).toBe(0);
  expect(run(published, ['ledger', 'build'], { env: { TIMESEAL_NOW: '2025-11-02T00:01:00.000Z' } }).code).toBe(0);
  const second = writeHashFile(published, 'day2.txt', makeHashes('reverify-2', 50));
  expect(run(published, ['import', second], { env: { TIMESEAL_NOW: '2025-11-02T10:00:00.000Z' } }).code).toBe(0);
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
