// GET /api/site-config: DONATION_URL, or null when unset; a malformed value stops the start.
import { afterAll, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.ts';
import { loadIngestConfig } from '../config.ts';
import { makeFixture, projectEnv, removeTempDirs, tempDir, type Fixture } from './fixture.ts';

const fixtures: Fixture[] = [];
afterAll(async () => {
  for (const f of fixtures) await f.close();
  removeTempDirs();
});

it('names DONATION_URL when set', async () => {
  const f = await makeFixture({ env: { DONATION_URL: 'https://donate.example/timeseal' }, publish: [] });
  fixtures.push(f);
  const r = await f.app.inject('/api/site-config');
  expect(r.statusCode).toBe(200);
  expect(r.json()).toEqual({ donationUrl: 'https://donate.example/timeseal' });
  expect(r.headers['cache-control']).toBe('no-cache');
});

it('is null when unset or empty', async () => {
  for (const env of [{}, { DONATION_URL: '' }] as Array<Record<string, string>>) {
    const f = await makeFixture({ env, publish: [] });
    fixtures.push(f);
    expect((await f.app.inject('/api/site-config')).json()).toEqual({ donationUrl: null });
  }
});

it('refuses a value that is not an http(s) URL', () => {
  const env = projectEnv(tempDir('donation'));
  const config = loadConfig({ ...env });
  for (const bad of ['donate.example', 'javascript:alert(1)', 'https://user:pw@donate.example/']) {
    expect(() => loadIngestConfig(config, { ...env, DONATION_URL: bad })).toThrow(/DONATION_URL/);
  }
});
