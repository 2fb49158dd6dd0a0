// `timeseal verify` also checks each anchored day's OpenTimestamps proof: it must start at the ledger file's
// SHA-256 and lead to the day commitment C = SHA-256(R || F) (docs/FORMAT.md); a flipped byte is named.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dayCommitment, ledgerTimestamp } from '../../core/ots-path.ts';
import { addAttestation, newTimestamp, pendingAttestation, serializeDetached } from '../../core/ots.ts';
import { removeTempProjects, run, tempProject } from './helpers.ts';

afterAll(removeTempProjects);

describe('verify checks the day .ots', () => {
  it('accepts a proof of the day commitment and names a tampered or foreign one', () => {
    const dir = tempProject('ots');
    expect(run(dir, ['keys', 'init']).code).toBe(0);
    const hashes = Array.from({ length: 5 }, (_, i) => crypto.createHash('sha256').update(`h${i}`).digest('hex'));
    expect(
      run(dir, ['import', '-'], { input: hashes.join('\n'), env: { TIMESEAL_NOW: '2025-11-02T10:00:00Z' } }).code,
    ).toBe(0);
    expect(run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: '2025-11-03T00:01:00Z' } }).code).toBe(0);
    const ledgers = path.join(dir, 'ledgers');
    const ledger = JSON.parse(fs.readFileSync(path.join(ledgers, '2025-11-02.json'), 'utf8')) as { root: string };
    const root = Buffer.from(ledger.root, 'hex');
    const sha = crypto
      .createHash('sha256')
      .update(fs.readFileSync(path.join(ledgers, '2025-11-02.json')))
      .digest();
    const calendar = newTimestamp(dayCommitment(root, sha));
    addAttestation(calendar, pendingAttestation('https://calendar.example.org'));
    const otsFile = path.join(ledgers, '2025-11-02.json.ots');
    const good = serializeDetached(ledgerTimestamp(root, sha, calendar));
    fs.writeFileSync(otsFile, good);
    expect(run(dir, ['verify']).code).toBe(0);

    const flipped = Buffer.from(good);
    flipped[flipped.length - 40] = flipped[flipped.length - 40]! ^ 0x01;
    fs.writeFileSync(otsFile, flipped);
    const bad = run(dir, ['verify']);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('2025-11-02.json.ots');

    const otherRoot = crypto.randomBytes(32);
    const foreign = newTimestamp(dayCommitment(otherRoot, sha));
    addAttestation(foreign, pendingAttestation('https://calendar.example.org'));
    fs.writeFileSync(otsFile, serializeDetached(ledgerTimestamp(otherRoot, sha, foreign)));
    const wrong = run(dir, ['verify']);
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toMatch(/2025-11-02\.json\.ots: .*prepend/);
  });
});
