// A shared /verify?hash=… link previews that hash (routes/verify-preview.ts): og:title, og:description and the
// description name it, and the day whose ledger holds it when one does; og:url is the link itself; the rest of
// the page is the built file. Without a hash, or with something else in it, the built page as it is. Before, every
// /verify link had the page's general tags.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY, makeFixture, ORIGIN, randomHash, removeTempDirs, type Fixture } from './fixture.ts';

/** The head Base.astro writes (test/site/build-output.test.ts checks the built page has these tags). */
const PAGE = `<!doctype html><html lang="en"><head><title>Verify a Timestamp · Timeseal</title>
<meta name="description" content="Timestamp any file with SHA-256.">
<meta property="og:site_name" content="Timeseal">
<meta property="og:type" content="website">
<meta property="og:title" content="Verify a Timestamp · Timeseal">
<meta property="og:description" content="Timestamp any file with SHA-256.">
<meta name="twitter:card" content="summary">
</head><body><main>the page</main></body></html>
`;

let f: Fixture;
beforeAll(async () => {
  f = await makeFixture();
  fs.mkdirSync(path.join(f.ingest.site, 'verify'), { recursive: true });
  fs.writeFileSync(path.join(f.ingest.site, 'verify', 'index.html'), PAGE);
});
afterAll(async () => {
  await f?.close();
  removeTempDirs();
});

const tag = (html: string, attr: string, name: string): string | undefined =>
  new RegExp(`<meta ${attr}="${name}" content="([^"]*)">`).exec(html)?.[1];

describe('/verify?hash=… previews the hash', () => {
  it('a published hash: its day in the description, the link as og:url, the page itself unchanged', async () => {
    const hash = f.published[0]!;
    const res = await f.app.inject(`/verify?hash=${hash.toUpperCase()}&search=true`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(tag(res.body, 'property', 'og:title')).toBe(
      `Verify the timestamp of SHA-256 ${hash.slice(0, 12)}…${hash.slice(-4)} · Timeseal`,
    );
    const description = `SHA-256 ${hash} is in Timeseal's public ledger of ${DAY}. Open the link to check its inclusion proof and the ledger's signatures in your browser.`;
    expect(tag(res.body, 'property', 'og:description')).toBe(description.replaceAll("'", '&#39;'));
    expect(tag(res.body, 'name', 'description')).toBe(tag(res.body, 'property', 'og:description'));
    expect(tag(res.body, 'property', 'og:url')).toBe(`${ORIGIN}/verify?hash=${hash}&amp;search=true`);
    expect(tag(res.body, 'name', 'twitter:card')).toBe('summary');
    expect(res.body).toContain('<main>the page</main>');
    expect(res.body.match(/<meta property="og:title"/g)).toHaveLength(1);
  });

  it('a hash no ledger holds: the hash and what the link does; /verify/ the same', async () => {
    const hash = randomHash();
    for (const url of [`/verify?hash=${hash}`, `/verify/?hash=${hash}&utm_source=mail`]) {
      const res = await f.app.inject(url);
      expect(res.statusCode, url).toBe(200);
      expect(tag(res.body, 'property', 'og:description'), url).toBe(
        `SHA-256 ${hash}: open the link to search Timeseal&#39;s public ledgers for it and check the answer in your browser.`,
      );
    }
  });

  it('without a hash, or with one that is not 64 hex digits: the built page as it is', async () => {
    for (const url of ['/verify', '/verify/', '/verify?hash=abc', `/verify?hash=${'g'.repeat(64)}`, '/verify?x=1']) {
      const res = await f.app.inject(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).toBe(PAGE);
    }
  });
});
