// A proof bundle whose `ots` field is filled: the real pipeline anchors a day through loopback OpenTimestamps
// calendars into a synthetic regtest chain with real proof of work (the stand-ins of test/anchor/), then
// `timeseal proof` gives the bundle with its per-hash .ots. The verifier, offline from disk, follows that path
// from the hash through the checkpoint root and the ledger file's SHA-256 to the block's merkle root.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SyntheticChain } from '../anchor/chain.ts';
import { LoopbackCalendar } from '../anchor/servers.ts';
import { BIN, buildVerifier, launchChromium, run, runAsync, sha256Hex, tempDir } from './helpers.ts';

const DAY = '2026-01-05';
const documentText = 'a document anchored to the synthetic chain';
const hashes = [sha256Hex(documentText), ...Array.from({ length: 9 }, (_, i) => sha256Hex(`anchored-${i}`))];

const chain = new SyntheticChain();
const calendars = [new LoopbackCalendar(), new LoopbackCalendar()];
let project: string;
let out: string;
let bundleFile: string;
let headerFile: string;
let height: number;
let browser: Browser;
let page: Page;
const requests: string[] = [];

beforeAll(async () => {
  await Promise.all(calendars.map((c) => c.start()));
  project = tempDir('anchored');
  const env = {
    OTS_CALENDARS: calendars.map((c) => c.url).join(','),
    OTS_MIN_CALENDARS: '2',
    BITCOIN_NETWORK: 'regtest',
  };
  run(project, BIN, ['keys', 'init'], env);
  run(project, BIN, ['import', '-'], { ...env, TIMESEAL_NOW: `${DAY}T10:00:00.000Z` }, `${hashes.join('\n')}\n`);
  run(project, BIN, ['ledger', 'build'], { ...env, TIMESEAL_NOW: '2026-01-06T00:01:00.000Z' });
  await runAsync(project, BIN, ['anchor'], { ...env, TIMESEAL_NOW: '2026-01-06T00:02:00.000Z' });
  height = calendars[0]!.mine(chain); // the second calendar stays pending
  chain.extend(2);
  await runAsync(project, BIN, ['upgrade'], { ...env, TIMESEAL_NOW: '2026-01-06T01:05:00.000Z' });
  const bundle = run(project, BIN, ['proof', hashes[0]!], env);
  expect(JSON.parse(bundle).ots, 'the bundle carries its per-hash .ots').toEqual(expect.any(String));
  bundleFile = path.join(project, 'proof.json');
  fs.writeFileSync(bundleFile, bundle);
  headerFile = path.join(project, `block-${height}-header.hex`);
  fs.writeFileSync(headerFile, chain.blocks[height]!.header.toString('hex'));
  out = tempDir('anchored-out');
  buildVerifier(out, path.join(project, 'keys'));

  browser = await launchChromium();
  const context = await browser.newContext();
  await context.setOffline(true);
  const pageUrl = `file://${path.join(out, 'offline-verifier.html')}`;
  await context.route('**/*', (route) => {
    if (route.request().url() === pageUrl) return route.continue();
    requests.push(route.request().url());
    return route.abort();
  });
  page = await context.newPage();
  await page.goto(pageUrl);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all(calendars.map((c) => c.stop()));
  for (const d of [project, out]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

async function verify(files: string[], network: 'mainnet' | 'regtest'): Promise<string> {
  await page.click('#clear');
  await page.selectOption('#network', network);
  await page.fill('#hash-input', hashes[0]!);
  await page.setInputFiles('#proof-files', files);
  await page.waitForFunction(
    (n) => document.getElementById('file-count')!.textContent === `${n} file${n > 1 ? 's' : ''} given`,
    files.length,
  );
  return (await page.textContent('#summary'))!;
}

async function verdict(label: string): Promise<string> {
  return (await page
    .locator('li.check', { has: page.locator('.label', { hasText: label }) })
    .first()
    .locator('.verdict')
    .textContent())!;
}

describe('a bundle with its per-hash .ots', () => {
  test('verifies on regtest: from the hash through the checkpoint root and ledger file to the mined block', async () => {
    const summary = await verify([bundleFile, headerFile], 'regtest');
    expect(summary).toMatch(/^Verified: all \d+ checks passed\.$/); // a Bitcoin block checked: nothing left unchecked
    expect(await verdict('OpenTimestamps proof starts at the hash')).toBe('Verified');
    expect(await verdict("OpenTimestamps path goes through the checkpoint root and the ledger file's SHA-256")).toBe(
      'Verified',
    );
    expect(await verdict(`Bitcoin block ${height}`)).toBe('Verified');
    const block = chain.blocks[height]!;
    const text = (await page.locator('li.check', { hasText: `Bitcoin block ${height}` }).textContent())!;
    expect(text).toContain(`Block time ${new Date(block.time * 1000).toISOString().replace('.000Z', 'Z')}`);
    expect(text).toContain(`Block hash ${block.hash}`);
    expect(text).toContain('regtest proof-of-work limit');
    expect(await page.textContent('#sections')).toContain(`Pending at ${calendars[1]!.url}`);
  });

  test('the same header is refused on mainnet: its target is above what Bitcoin allows', async () => {
    const summary = await verify([bundleFile, headerFile], 'mainnet');
    expect(summary).toMatch(/^Not verified: nBits 0x207fffff: target above the mainnet limit/);
  });

  test("the day's ledger .ots starts at the ledger file's SHA-256 and reaches the same block", async () => {
    const ledgers = path.join(project, 'ledgers');
    const files = [
      '.json',
      '.json.sig',
      '.json.dilithium.sig',
      '.json.signatures.json',
      '.checkpoint',
      '.json.ots',
    ].map((s) => path.join(ledgers, `${DAY}${s}`));
    const summary = await verify([...files, headerFile], 'regtest');
    expect(summary).toMatch(/^Verified/);
    const ledgerSha = crypto.createHash('sha256').update(fs.readFileSync(files[0]!)).digest('hex');
    expect(await page.textContent('#sections')).toContain(`The SHA-256 of ${DAY}.json: ${ledgerSha}`);
  });

  test('a changed byte inside the embedded .ots is not verified', async () => {
    const text = fs.readFileSync(bundleFile, 'utf8');
    const start = text.indexOf('"ots": "') + 8;
    const end = text.indexOf('"', start);
    const dir = tempDir('anchored-bad');
    try {
      for (const at of [start + 80, Math.floor((start + end) / 2), end - 12]) {
        // Swap one base64 character for another valid one, so the damage is in the proof, not its encoding.
        const bytes = Buffer.from(text);
        bytes[at] = bytes[at] === 0x41 ? 0x42 : 0x41;
        const bad = path.join(dir, 'proof.json');
        fs.writeFileSync(bad, bytes);
        const summary = await verify([bad, headerFile], 'regtest');
        expect(summary, `byte ${at}`).toMatch(/^Not verified: /);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('no request left the page', () => {
    expect(requests).toEqual([]);
  });
});
