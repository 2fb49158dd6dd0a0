// The offline verifier as served by `timeseal serve`: its own CSP allows the one opt-in header fetch,
// the rest of the site keeps connect-src 'self', and the release record is a served archive file.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERIFIER_ARCHIVE_PATH } from '../../core/archive.ts';
import { releaseVerifier } from '../../pipeline/verifier-release.ts';
import { makeFixture, removeTempDirs, type Fixture } from './fixture.ts';
import { openSqliteStore } from '../../store/sqlite/engine.ts';

let f: Fixture;

beforeAll(async () => {
  f = await makeFixture();
  fs.mkdirSync(f.ingest.site, { recursive: true });
  fs.writeFileSync(path.join(f.ingest.site, 'index.html'), '<!doctype html><title>Home</title>');
  fs.writeFileSync(
    path.join(f.ingest.site, 'offline-verifier.html'),
    '<!doctype html><title>Timeseal offline verifier 2.0</title><meta name="generator" content="Timeseal offline verifier 2.0">',
  );
});
afterAll(async () => {
  await f.close();
  removeTempDirs();
});

describe('offline verifier page', () => {
  it('is served with a policy that allows only an explicit header fetch, while other pages keep connect-src self', async () => {
    const page = await f.app.inject({ url: '/offline-verifier.html' });
    expect(page.statusCode).toBe(200);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain('connect-src https: http:');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    const home = await f.app.inject({ url: '/' });
    expect(String(home.headers['content-security-policy'])).toContain("connect-src 'self'");
  });

  it('when the verifier page is missing, the 404 page answered instead keeps the site policy', async () => {
    const file = path.join(f.ingest.site, 'offline-verifier.html');
    const saved = fs.readFileSync(file);
    fs.rmSync(file);
    try {
      const res = await f.app.inject({ url: '/offline-verifier.html' });
      expect(res.statusCode).toBe(404);
      expect(String(res.headers['content-security-policy'])).toContain("connect-src 'self'");
    } finally {
      fs.writeFileSync(file, saved);
    }
  });

  it('lists each release with its SHA-256 in the archive, served under /ledgers', async () => {
    const file = path.join(f.ingest.site, 'offline-verifier.html');
    const store = openSqliteStore(f.config.db, { db: f.db });
    const first = await releaseVerifier({
      file,
      archive: f.config.archive,
      store,
      now: new Date('2025-11-03T12:00:00Z'),
    });
    expect(first.added).toBe(true);
    expect(
      (await releaseVerifier({ file, archive: f.config.archive, store, now: new Date('2025-11-03T13:00:00Z') })).added,
    ).toBe(false);
    const res = await f.app.inject({ url: `/ledgers/${VERIFIER_ARCHIVE_PATH}` });
    expect(res.statusCode).toBe(200);
    const listed = JSON.parse(res.body) as { releases: Array<{ sha256: string }> };
    expect(listed.releases.map((r) => r.sha256)).toEqual([first.release.sha256]);
  });
});
