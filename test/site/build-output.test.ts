// The built site (dist/site) as files: one page per route plus 404.html, the sealed document copied byte for
// byte with its hash in the Quantum Shield page, the hashing worker, no use of index-sha256.json, and the
// legal pages shipping no framework JavaScript.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyPreview, withPreviewTags } from '../../ingest/routes/verify-preview.ts';
import { ensureBuilt, ROOT, ROUTES, SITE_DIR } from './helpers.ts';

const read = (rel: string) => fs.readFileSync(path.join(SITE_DIR, rel), 'utf8');
const pageFile = (route: string) => (route === '/' ? 'index.html' : `${route.slice(1)}/index.html`);
const assets = () => fs.readdirSync(path.join(SITE_DIR, '_astro'));

beforeAll(() => ensureBuilt());

describe('built site', () => {
  it('has one page per route and a 404 page, each starting dark with the before-paint theme script', () => {
    for (const route of ROUTES) {
      const html = read(pageFile(route));
      expect(html, route).toContain('<html lang="en" class="dark">');
      expect(html, route).toContain("localStorage.getItem('theme')");
      expect(html.indexOf("localStorage.getItem('theme')"), route).toBeLessThan(html.indexOf('<body'));
    }
    expect(read('404.html')).toContain('Page Not Found');
  });

  it('ships the sealed disclosure document unchanged and shows its SHA-256 on /quantum-shield and /', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/sealed-disclosure.md'));
    expect(fs.readFileSync(path.join(SITE_DIR, 'sealed-disclosure.md')).equals(doc)).toBe(true);
    const sha256 = crypto.createHash('sha256').update(doc).digest('hex');
    expect(read('quantum-shield/index.html')).toContain(sha256);
    expect(read('index.html')).toContain(sha256);
  });

  it('never fetches index-sha256.json and hashes files in a worker with hash-wasm', () => {
    const scripts = assets().filter((f) => f.endsWith('.js'));
    for (const f of scripts) expect(read(`_astro/${f}`), f).not.toContain('index-sha256.json');
    const worker = scripts.find((f) => f.startsWith('hash.worker'));
    expect(worker).toBeDefined();
    expect(read(`_astro/${worker}`)).toMatch(/WebAssembly/);
  });

  it('loads no external script and no island on the legal pages', () => {
    for (const route of ['/privacy', '/terms']) {
      const html = read(pageFile(route));
      expect(html, route).not.toMatch(/<script[^>]+src=/);
      expect(html, route).not.toContain('<astro-island');
    }
  });

  it("/verify's preview tags are in the form the server replaces for a shared link's hash", () => {
    const html = read('verify/index.html');
    const hash = 'ab'.repeat(32);
    const preview = verifyPreview(hash, ['2025-11-02']);
    const shared = withPreviewTags(html, `https://timeseal.example/verify?hash=${hash}`, preview);
    for (const [attr, name] of [
      ['property', 'og:title'],
      ['property', 'og:description'],
      ['name', 'description'],
    ]) {
      const content = (h: string) => new RegExp(`<meta ${attr}="${name}" content="([^"]*)">`).exec(h)?.[1];
      expect(content(html), name).toBeDefined();
      expect(content(shared), name).not.toBe(content(html));
    }
    expect(shared).toContain(`<meta property="og:url" content="https://timeseal.example/verify?hash=${hash}">`);
  });

  it("states the offline verifier's size once, as built: /verify's card says its kilobytes", () => {
    const size = fs.statSync(path.join(SITE_DIR, 'offline-verifier.html')).size;
    const stated = /<span data-verifier-size>about (\d+) KB<\/span>/.exec(read('verify/index.html'));
    expect(stated, 'the size on /verify').not.toBeNull();
    expect(Number(stated![1])).toBe(Math.round(size / 1000));
  });
});
