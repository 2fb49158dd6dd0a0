// What browsers and search engines ask for by name (routes/crawlers.ts): /robots.txt names the sitemap at
// TIMESEAL_ORIGIN and keeps crawlers out of the API, /sitemap.xml lists the built site's public pages there (a page
// the site lacks is left out), /favicon.ico is sent to the site's /favicon.svg. Each answered 404 before.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixture, ORIGIN, removeTempDirs, type Fixture } from './fixture.ts';

let f: Fixture;
beforeAll(async () => {
  f = await makeFixture();
  for (const page of ['', 'verify', 'ledgers', 'beta-api']) {
    fs.mkdirSync(path.join(f.ingest.site, page), { recursive: true });
    fs.writeFileSync(path.join(f.ingest.site, page, 'index.html'), '<!doctype html><title>t</title>');
  }
  fs.writeFileSync(path.join(f.ingest.site, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
});
afterAll(async () => {
  await f?.close();
  removeTempDirs();
});

describe('files asked for by name', () => {
  it('/robots.txt: everything but the API, and the sitemap at the origin', async () => {
    const res = await f.app.inject('/robots.txt');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body.split('\n')).toEqual([
      'User-agent: *',
      'Disallow: /api/',
      'Allow: /',
      '',
      `Sitemap: ${ORIGIN}/sitemap.xml`,
      '',
    ]);
  });

  it('/sitemap.xml: the public pages the built site has, as absolute addresses', async () => {
    const res = await f.app.inject('/sitemap.xml');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(res.body).toMatch(
      /^<\?xml version="1.0" encoding="UTF-8"\?>\n<urlset xmlns="http:\/\/www\.sitemaps\.org\/schemas\/sitemap\/0\.9">/,
    );
    const locs = [...res.body.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]);
    expect(locs).toEqual([`${ORIGIN}/`, `${ORIGIN}/verify`, `${ORIGIN}/ledgers`, `${ORIGIN}/beta-api`]);
  });

  it('/favicon.ico: a permanent redirect to the site’s icon, which is served', async () => {
    const res = await f.app.inject('/favicon.ico');
    expect(res.statusCode).toBe(301);
    expect(res.headers.location).toBe('/favicon.svg');
    expect((await f.app.inject('/favicon.svg')).statusCode).toBe(200);
  });
});
