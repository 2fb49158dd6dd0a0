// One origin on a development server: without TIMESEAL_ORIGIN, a browser's page
// visit on 127.0.0.1:PORT is redirected to http://localhost:PORT (the links' and the start banner's origin), so a
// session made there carries over from e-mail links. API calls, scripts and servers with TIMESEAL_ORIGIN are not.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeFixture, removeTempDirs, type Fixture } from './fixture.ts';

let dev: Fixture;
let prod: Fixture;
beforeAll(async () => {
  dev = await makeFixture({ env: { TIMESEAL_ORIGIN: undefined as unknown as string, PORT: '8080' }, publish: [] });
  prod = await makeFixture({ publish: [] });
});
afterAll(async () => {
  await dev?.close();
  await prod?.close();
  removeTempDirs();
});

const page = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

it('a page visit on 127.0.0.1:8080 goes to http://localhost:8080, path and query kept', async () => {
  expect(dev.config.origin).toBe('http://localhost:8080');
  for (const host of ['127.0.0.1:8080', '[::1]:8080']) {
    const r = await dev.app.inject({ method: 'GET', url: '/verify-email?token=abc', headers: { ...page, host } });
    expect(r.statusCode).toBe(302);
    expect(r.headers.location).toBe('http://localhost:8080/verify-email?token=abc');
  }
});

it('not for the API, scripts, the origin itself, another port or a server with TIMESEAL_ORIGIN', async () => {
  const notRedirected = [
    { f: dev, url: '/api/queue-stats.php', headers: { ...page, host: '127.0.0.1:8080' } },
    { f: dev, url: '/', headers: { accept: '*/*', host: '127.0.0.1:8080' } },
    { f: dev, url: '/', headers: { ...page, host: 'localhost:8080' } },
    { f: dev, url: '/', headers: { ...page, host: '127.0.0.1:9999' } },
    { f: prod, url: '/', headers: { ...page, host: '127.0.0.1:8080' } },
  ];
  for (const c of notRedirected) {
    const r = await c.f.app.inject({ method: 'GET', url: c.url, headers: c.headers });
    expect([c.url, c.headers.host, r.statusCode]).not.toEqual([c.url, c.headers.host, 302]);
  }
});
