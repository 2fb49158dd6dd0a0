// The checkpoint lines witnesses know (docs/FORMAT.md §4): an archive made before them
// (test/fixtures/archive-r2) gets the Ed25519 and ML-DSA-44 keys with `timeseal keys add`; its published
// checkpoints stay byte-identical, every new checkpoint carries four lines, and `timeseal verify` checks each
// one: a changed byte in any line, a line from no key of the log, or one of the two new lines alone fails it,
// naming the checkpoint.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixtureProject, removeTempProjects, run, runJson, tempProject, treeDigest } from './helpers.ts';

afterAll(removeTempProjects);

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/archive-r2');
const DAYS = ['2025-11-02', '2025-11-03', '2025-11-05'];
const NEW_DAY = '2025-11-07';

/** The signature lines of a checkpoint note. */
const lines = (note: string): string[] =>
  note
    .slice(note.indexOf('\n\n') + 2)
    .split('\n')
    .filter(Boolean);

describe('timeseal keys add on an archive made before the checkpoint keys', () => {
  let dir: string;
  let before: Map<string, string>;
  beforeAll(() => {
    dir = fixtureProject(FIXTURE);
    before = treeDigest(path.join(dir, 'ledgers'));
    const added = runJson(dir, ['keys', 'add']);
    expect(added.result.code, added.result.stderr).toBe(0);
    expect(added.json.created.map((f: string) => path.basename(f))).toEqual([
      'ed25519.vkey',
      'mldsa44.vkey',
      'ed25519_private.pem',
      'mldsa44_private.pem',
      'timeseal-tsa.pem',
      'timeseal-tsa-root.pem',
      'tsa_private.pem',
      'receipt-es256.pem',
      'receipt-mldsa65.pem',
      'receipt_es256_private.pem',
      'receipt_mldsa65_private.pem',
    ]);
    expect(
      run(dir, ['import', '-'], { env: { TIMESEAL_NOW: `${NEW_DAY}T10:00:00.000Z` }, input: `${'7'.repeat(64)}\n` })
        .code,
    ).toBe(0);
    const built = run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: '2025-11-08T00:01:00.000Z' } });
    expect(built.code, built.stderr).toBe(0);
  });

  test('past checkpoints are unchanged; the new one has the ECDSA, ML-DSA-65, Ed25519 and ML-DSA-44 lines', () => {
    const after = treeDigest(path.join(dir, 'ledgers'));
    for (const day of DAYS) {
      expect(after.get(`${day}.checkpoint`), day).toBe(before.get(`${day}.checkpoint`));
      expect(lines(fs.readFileSync(path.join(dir, 'ledgers', `${day}.checkpoint`), 'utf8'))).toHaveLength(2);
    }
    const fresh = fs.readFileSync(path.join(dir, 'ledgers', `${NEW_DAY}.checkpoint`), 'utf8');
    expect(lines(fresh)).toHaveLength(4);
    expect(fs.readFileSync(path.join(dir, 'ledgers/checkpoint'), 'utf8')).toBe(fresh);
    const verify = runJson(dir, ['verify']);
    expect(verify.result.code, verify.result.stdout).toBe(0);
    expect(verify.json).toMatchObject({ ok: true, days: 4 });
    // Running it again changes nothing and says why.
    const again = run(dir, ['keys', 'add']);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/keys already exist, refusing to overwrite/);
  });

  test.each([
    ['a changed byte in the Ed25519 line', (l: string[]) => [l[0], l[1], flipBase64(l[2]!), l[3]]],
    ['a changed byte in the ML-DSA-44 line', (l: string[]) => [l[0], l[1], l[2], flipBase64(l[3]!)]],
    ['a changed byte in a key name', (l: string[]) => [l[0], l[1], l[2]!.replace('— ', '— x'), l[3]]],
    ['the Ed25519 line alone', (l: string[]) => [l[0], l[1], l[2]]],
    [
      'a line from no key of the log',
      (l: string[]) => [...l, `— someone.example ${Buffer.alloc(40, 7).toString('base64')}`],
    ],
  ])('%s fails verify, which names the checkpoint', (_, change) => {
    const copy = path.join(tempProject('checkpoint-keys'), 'ledgers');
    fs.cpSync(path.join(dir, 'ledgers'), copy, { recursive: true });
    const file = path.join(copy, `${NEW_DAY}.checkpoint`);
    const note = fs.readFileSync(file, 'utf8');
    const text = note.slice(0, note.indexOf('\n\n') + 2);
    fs.writeFileSync(file, `${text}${change(lines(note)).join('\n')}\n`);
    const { result, json } = runJson(dir, ['verify', '--archive', copy]);
    expect(result.code).toBe(1);
    expect(
      json.problems.some((p: string) => p.includes(`${NEW_DAY}.checkpoint`)),
      JSON.stringify(json.problems),
    ).toBe(true);
  });
});

/** A signature line with one bit of its signature changed (past the key ID). */
function flipBase64(line: string): string {
  const [dash, name, encoded] = line.split(' ') as [string, string, string];
  const bytes = Buffer.from(encoded, 'base64');
  bytes[10]! ^= 1;
  return `${dash} ${name} ${bytes.toString('base64')}`;
}
