// The offline verifier's other paths: a copy built without keys, where the person loads keys; the one
// request it can make (an Esplora block header, only on a click, only to the address given); and, served over
// HTTP, the web app manifest and the service worker that keep it working with no connection.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  buildArchive,
  buildVerifier,
  BIN,
  launchChromium,
  OTS_VECTORS,
  run,
  sha256Hex,
  tempDir,
  type TestArchive,
} from './helpers.ts';

const HELLO = path.join(OTS_VECTORS, 'opentimestamps-client/hello-world.txt');
const HEADER_HEX = fs.readFileSync(path.join(OTS_VECTORS, 'headers/block-358391-header.hex'), 'utf8').trim();
const BLOCK_358391 = '000000000000000003e892881a8cdcdc117c06d444057c98b6f04a9ee75a2319';

let archive: TestArchive;
let browser: Browser;
const dirs: string[] = [];

beforeAll(async () => {
  archive = buildArchive();
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const d of [archive?.dir, ...dirs]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

function dir(label: string): string {
  const d = tempDir(label);
  dirs.push(d);
  return d;
}

describe('a copy built without keys', () => {
  let out: string;
  let stdout: string;
  beforeAll(() => {
    out = dir('nokeys');
    stdout = buildVerifier(out, path.join(out, 'no-such-keys'));
  });

  test('the build says so, and the page asks for keys; loaded keys verify, keys of another archive do not', async () => {
    expect(stdout).toMatch(/no built-in key for: .*public\.pem, .*dilithium_public\.key \(absent\)/);
    const page = await browser.newPage();
    await page.goto(`file://${path.join(out, 'offline-verifier.html')}`);
    expect(await page.textContent('#builtin-keys')).toMatch(/built without public keys/);
    await page.fill('#hash-input', archive.documentHash);
    await page.setInputFiles('#proof-files', [archive.bundle]);
    await expect
      .poll(() => page.textContent('#summary'))
      .toMatch(/^Not verified: no ECDSA P-256 public key: load public\.pem/);

    const other = dir('other-keys');
    run(other, BIN, ['keys', 'init']);
    await page.setInputFiles('#key-files', [
      path.join(other, 'keys/public.pem'),
      path.join(other, 'keys/dilithium_public.key'),
    ]);
    await expect
      .poll(() => page.textContent('#summary'))
      .toMatch(/^Not verified: ECDSA P-256 key fingerprint: expected [0-9a-f]{64} != got [0-9a-f]{64}/);

    await page.setInputFiles('#key-files', [
      path.join(archive.keys, 'public.pem'),
      path.join(archive.keys, 'dilithium_public.pem'),
    ]);
    await expect.poll(() => page.textContent('#summary')).toMatch(/^Verified/);
    expect(await page.textContent('#keys-status')).toContain('ECDSA P-256: from public.pem');
    await page.close();
  });
});

describe('the Esplora fetch', () => {
  test('asks nothing until the click, then only the address given, and checks the header it gets', async () => {
    const out = dir('esplora');
    buildVerifier(out, archive.keys);
    const pageUrl = `file://${path.join(out, 'offline-verifier.html')}`;
    const context = await browser.newContext();
    const requests: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url === pageUrl) return route.continue();
      requests.push(url);
      if (url === 'https://esplora.test/api/block-height/358391')
        return route.fulfill({
          body: BLOCK_358391,
          contentType: 'text/plain',
          headers: { 'access-control-allow-origin': '*' },
        });
      if (url === `https://esplora.test/api/block/${BLOCK_358391}/header`)
        return route.fulfill({
          body: HEADER_HEX,
          contentType: 'text/plain',
          headers: { 'access-control-allow-origin': '*' },
        });
      return route.abort();
    });
    const page = await context.newPage();
    await page.goto(pageUrl);
    await page.setInputFiles('#doc-file', HELLO);
    await page.setInputFiles('#proof-files', [`${HELLO}.ots`]);
    await expect
      .poll(() => page.textContent('#summary'))
      .toMatch(/^Not verified: needs the block header at height 358391/);
    await page.waitForTimeout(300);
    expect(requests).toEqual([]);
    await page.fill('#esplora', 'https://esplora.test/api/');
    await page.click('text=Fetch the header of block 358391');
    await expect.poll(() => page.textContent('#summary')).toMatch(/^Verified/);
    expect(await page.textContent('#sections')).toContain('Block time 2015-05-28T15:41:18Z');
    expect(requests).toEqual([
      'https://esplora.test/api/block-height/358391',
      `https://esplora.test/api/block/${BLOCK_358391}/header`,
    ]);
    await context.close();
  });

  test('a server answering a header that is not that block is not believed', async () => {
    const out = dir('esplora-bad');
    buildVerifier(out, archive.keys);
    const context = await browser.newContext();
    const wrong = Buffer.from(HEADER_HEX, 'hex');
    wrong.writeUInt32LE(0, 76);
    await context.route('https://esplora.test/**', (route) =>
      route.fulfill({
        body: route.request().url().endsWith('/header') ? wrong.toString('hex') : BLOCK_358391,
        headers: { 'access-control-allow-origin': '*' },
      }),
    );
    const page = await context.newPage();
    await page.goto(`file://${path.join(out, 'offline-verifier.html')}`);
    await page.fill('#hash-input', sha256Hex(fs.readFileSync(HELLO)));
    await page.setInputFiles('#proof-files', [`${HELLO}.ots`]);
    await page.fill('#esplora', 'https://esplora.test/api');
    await page.click('text=Fetch the header of block 358391');
    await expect
      .poll(() => page.textContent('#summary'))
      .toMatch(/^Not verified: block header at height 358391: block hash: expected 0{17}3e892881/);
    await context.close();
  });
});

describe('served over HTTP', () => {
  let server: http.Server;
  let base: string;
  let out: string;
  beforeAll(async () => {
    out = dir('served');
    buildVerifier(out, archive.keys);
    const types: Record<string, string> = {
      '.html': 'text/html; charset=utf-8',
      '.js': 'text/javascript',
      '.webmanifest': 'application/manifest+json',
    };
    server = http.createServer((req, res) => {
      const name = path.basename(new URL(req.url!, 'http://x').pathname);
      const file = path.join(out, name);
      if (!fs.existsSync(file)) return void res.writeHead(404).end();
      res
        .writeHead(200, { 'content-type': types[path.extname(name)] ?? 'application/octet-stream' })
        .end(fs.readFileSync(file));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  test('links its manifest, installs its service worker, and then opens and verifies with the network off', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/offline-verifier.html`);
    expect(await page.getAttribute('link[rel="manifest"]', 'href')).toBe('offline-verifier.webmanifest');
    const scope = await page.evaluate(async () => (await navigator.serviceWorker.ready).scope);
    expect(scope).toBe(`${base}/offline-verifier`);
    await context.setOffline(true);
    await page.reload();
    expect(await page.title()).toBe('Timeseal Offline Verifier 2.0');
    await page.fill('#hash-input', archive.documentHash);
    await page.setInputFiles('#proof-files', [archive.bundle]);
    await expect.poll(() => page.textContent('#summary')).toMatch(/^Verified/);
    await context.close();
  });
});
