// FREE_TIER_DAILY_LIMIT: on a local development server (TIMESEAL_ORIGIN unset or on localhost),
// where every test shares 127.0.0.1's count, it raises the free tier's daily cap; a public server refuses it
// and keeps the spec's 2 a day.
import { afterAll, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.ts';
import { loadIngestConfig } from '../config.ts';
import { makeFixture, projectEnv, randomHash, removeTempDirs, tempDir, type Fixture } from './fixture.ts';

const fixtures: Fixture[] = [];
afterAll(async () => {
  for (const f of fixtures) await f.close();
  removeTempDirs();
});

it('a local server with FREE_TIER_DAILY_LIMIT=5 accepts 5 a day from 127.0.0.1, then 429 naming 5', async () => {
  const f = await makeFixture({
    env: { TIMESEAL_ORIGIN: 'http://localhost:8080', FREE_TIER_DAILY_LIMIT: '5' },
    publish: [],
  });
  fixtures.push(f);
  const submit = () =>
    f.app.inject({
      method: 'POST',
      url: '/api/submit',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ hash: randomHash() }),
      remoteAddress: '127.0.0.1',
    });
  for (let i = 4; i >= 0; i--) {
    const r = await submit();
    expect(r.statusCode).toBe(201);
    expect(r.json().remainingToday).toBe(i);
  }
  const refused = await submit();
  expect(refused.statusCode).toBe(429);
  expect(refused.json()).toMatchObject({
    error: 'Daily limit reached: the free tier allows 5 timestamps per day. Try again tomorrow.',
    limit: { period: 'day', max: 5 },
  });
});

it('without it, or on a public origin, the free tier is 2 a day; a public server refuses the setting', () => {
  const env = projectEnv(tempDir('free-tier'));
  const config = loadConfig({ ...env });
  expect(loadIngestConfig(config, env).freePerDay).toBe(2);
  expect(loadIngestConfig(config, { ...env, TIMESEAL_ORIGIN: undefined, FREE_TIER_DAILY_LIMIT: '50' }).freePerDay).toBe(
    50,
  );
  expect(
    loadIngestConfig(config, { ...env, TIMESEAL_ORIGIN: 'http://127.0.0.1:8080', FREE_TIER_DAILY_LIMIT: '50' })
      .freePerDay,
  ).toBe(50);
  expect(() =>
    loadIngestConfig(config, { ...env, TIMESEAL_ORIGIN: 'https://timeseal.example', FREE_TIER_DAILY_LIMIT: '50' }),
  ).toThrow(/local development server only.*stays 2 a day/);
  expect(() =>
    loadIngestConfig(config, { ...env, TIMESEAL_ORIGIN: 'http://localhost:8080', FREE_TIER_DAILY_LIMIT: 'lots' }),
  ).toThrow(/FREE_TIER_DAILY_LIMIT must be/);
});
