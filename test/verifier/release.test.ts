// pipeline/verifier-release.ts: a built verifier is listed with its SHA-256 in ledgers/offline-verifier.json and
// its hash is enqueued, once; a rebuilt, different file is a new release; the listed hash then lands in the
// next day's ledger built by the real CLI.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { openDatabase } from '../../store/sqlite/db.ts';
import { readVerifierReleases, releaseVerifier } from '../../pipeline/verifier-release.ts';
import { BIN, buildVerifier, run, sha256Hex, tempDir } from './helpers.ts';
import { openSqliteStore } from '../../store/sqlite/engine.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('releasing the offline verifier', () => {
  test('lists {version, sha256, size}, enqueues the hash once, and the next ledger contains it', async () => {
    const project = tempDir('release');
    dirs.push(project);
    run(project, BIN, ['keys', 'init']);
    const out = path.join(project, 'dist/site');
    buildVerifier(out, path.join(project, 'keys'));
    const file = path.join(out, 'offline-verifier.html');
    const archive = path.join(project, 'ledgers');
    const db = openDatabase(path.join(project, 'data/timeseal.db'));
    const now = new Date('2025-12-01T12:00:00.000Z');
    const store = openSqliteStore(path.join(project, 'data/timeseal.db'), { db });
    const first = await releaseVerifier({ file, archive, store, now });
    const bytes = fs.readFileSync(file);
    expect(first.added).toBe(true);
    expect(first.release).toEqual({
      version: '2.0',
      sha256: sha256Hex(bytes),
      size: bytes.length,
      submitted_at: now.toISOString(),
      ledger_date: '2025-12-01',
    });
    const again = await releaseVerifier({ file, archive, store, now: new Date('2025-12-01T13:00:00.000Z') });
    expect(again.added).toBe(false);
    const count = () =>
      (db.prepare('SELECT COUNT(*) AS n FROM submissions WHERE hash = ?').get(sha256Hex(bytes)) as { n: number }).n;
    expect(count()).toBe(1);
    expect(readVerifierReleases(archive).releases).toEqual([first.release]);

    // A different build (no keys built in) is a second release.
    const other = path.join(project, 'other');
    buildVerifier(other, path.join(project, 'no-keys'));
    const second = await releaseVerifier({ file: path.join(other, 'offline-verifier.html'), archive, store, now });
    expect(second.added).toBe(true);
    expect(readVerifierReleases(archive).releases.map((r) => r.sha256)).toEqual([
      first.release.sha256,
      second.release.sha256,
    ]);
    await store.close();
    db.close();

    run(project, BIN, ['ledger', 'build'], { TIMESEAL_NOW: '2025-12-02T00:01:00.000Z' });
    const ledger = fs.readFileSync(path.join(archive, '2025-12-01.json'), 'utf8');
    expect(ledger).toContain(first.release.sha256);
    expect(JSON.parse(fs.readFileSync(path.join(archive, 'offline-verifier.json'), 'utf8')).format).toBe(
      'timeseal-offline-verifier/1',
    );
  });
});
