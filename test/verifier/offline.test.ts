// The offline verifier in Chromium: the built file, opened from disk with the network
// off, verifies a real proof bundle and a real ledger made by the pipeline in this test, and the real
// OpenTimestamps vector hello-world.txt.ots against the real header of block 358391; single-byte corruptions of
// each kind of file turn the verdict to "Not verified" with the reason; the page makes no request at all. Under
// `make screenshots` (TIMESEAL_SCREENSHOTS=1) also screenshots of a full verification in test-results/screenshots.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  buildArchive,
  buildVerifier,
  corruptCopy,
  DAY1,
  DAY2,
  launchChromium,
  OTS_VECTORS,
  samplePositions,
  sha256Hex,
  tempDir,
  type TestArchive,
} from './helpers.ts';
import { capture } from '../site/helpers.ts';

const HELLO = path.join(OTS_VECTORS, 'opentimestamps-client/hello-world.txt');
const HELLO_OTS = `${HELLO}.ots`;
const HEADER_HEX = path.join(OTS_VECTORS, 'headers/block-358391-header.hex');
const HEADER = Buffer.from(fs.readFileSync(HEADER_HEX, 'utf8').trim(), 'hex');

let archive: TestArchive;
let out: string;
let work: string;
let buildOutput: string;
let pageUrl: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Every request the offline context saw, other than the page itself. */
const requests: string[] = [];

beforeAll(async () => {
  archive = buildArchive();
  out = tempDir('out');
  work = tempDir('work');
  buildOutput = buildVerifier(out, archive.keys);
  pageUrl = `file://${path.join(out, 'offline-verifier.html')}`;
  browser = await launchChromium();
  context = await browser.newContext({ colorScheme: 'light' });
  await context.setOffline(true);
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url === pageUrl) return route.continue();
    requests.push(url);
    return route.abort('internetdisconnected');
  });
  context.on('request', (r) => {
    if (r.url() !== pageUrl) requests.push(r.url());
  });
  page = await context.newPage();
  await page.goto(pageUrl);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const d of [archive?.dir, out, work]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

interface Given {
  hash?: string;
  document?: string;
  files: string[];
}

/** Clears the page, gives it the inputs through its own controls, and returns the summary verdict. */
async function verify(given: Given): Promise<{ summary: string; state: string }> {
  await page.click('#clear');
  if (given.hash) await page.fill('#hash-input', given.hash);
  if (given.document) {
    await page.setInputFiles('#doc-file', given.document);
    await page.waitForFunction(() => document.getElementById('doc-status')!.textContent!.startsWith('SHA-256 of'));
  }
  await page.setInputFiles('#proof-files', given.files);
  const n = given.files.length;
  await page.waitForFunction(
    (expected) => document.getElementById('file-count')!.textContent === expected,
    `${n} file${n > 1 ? 's' : ''} given`,
  );
  return {
    summary: (await page.textContent('#summary'))!,
    state: (await page.getAttribute('#summary', 'data-state'))!,
  };
}

/** The verdict of the check row labelled `label` (first match, in document order). */
async function row(label: string): Promise<string> {
  const rows = page.locator('li.check', { has: page.locator('.label', { hasText: label }) });
  await expect.poll(() => rows.count()).toBeGreaterThan(0);
  return (await rows.first().locator('.verdict').textContent())!;
}

const pemFingerprint = (pem: string): string =>
  sha256Hex(crypto.createPublicKey(pem).export({ type: 'spki', format: 'der' }));

describe('the built file', () => {
  test('make build reports the size; the file is at most 160 KB, self-contained, version 2.0, with a sha256sum line', () => {
    const html = fs.readFileSync(path.join(out, 'offline-verifier.html'));
    expect(buildOutput).toContain(`${html.length.toLocaleString('en-US')} bytes`);
    expect(buildOutput).toContain(`about ${Math.round(html.length / 1000)} KB`);
    expect(html.length).toBeLessThanOrEqual(160 * 1024);
    const text = html.toString('utf8');
    expect(text).toContain('<title>Timeseal Offline Verifier 2.0</title>');
    // Nothing that would load a resource: no src attributes, no stylesheets, every href a fragment or data: URL.
    expect(text).not.toMatch(/<script[^>]+src=/i);
    expect(text).not.toMatch(/<link[^>]+rel="stylesheet"/i);
    for (const m of text.matchAll(/\bhref="([^"]*)"/g)) expect(m[1]).toMatch(/^(#|data:)/);
    expect(fs.readFileSync(path.join(out, 'offline-verifier.html.sha256'), 'utf8')).toBe(
      `${sha256Hex(html)}  offline-verifier.html\n`,
    );
    const manifest = JSON.parse(fs.readFileSync(path.join(out, 'offline-verifier.webmanifest'), 'utf8'));
    expect(manifest).toMatchObject({ start_url: 'offline-verifier.html', display: 'standalone' });
    expect(fs.readFileSync(path.join(out, 'offline-verifier-sw.js'), 'utf8')).toContain(sha256Hex(html).slice(0, 16));
  });
});

describe('opened from disk with the network off', () => {
  test('shows version 2.0 and the fingerprints of the built-in keys', async () => {
    await expect.poll(() => page.textContent('#version')).toBe('2.0');
    await verify({ files: [archive.bundle] });
    const body = (await page.textContent('#sections'))!;
    expect(body).toContain(pemFingerprint(fs.readFileSync(path.join(archive.keys, 'public.pem'), 'utf8')));
    expect(body).toContain(sha256Hex(fs.readFileSync(path.join(archive.keys, 'dilithium_public.key'))));
    expect(await page.textContent('#builtin-keys')).toMatch(/public keys built in/);
  });

  test('verifies the real proof bundle of the document, chosen as a file, with its ledger and the previous day', async () => {
    const r = await verify({
      document: archive.document,
      files: [archive.bundle, ...archive.dayFiles(DAY1), ...archive.dayFiles(DAY2)],
    });
    expect(r.state).toBe('ok');
    expect(r.summary).toMatch(/^Verified/);
    expect(await row('Hash matches the document')).toBe('Verified');
    expect(await row('Checkpoint ECDSA P-256 signature')).toBe('Verified');
    expect(await row('Checkpoint ML-DSA-65 signature')).toBe('Verified');
    expect(await row('Inclusion proof leads to the checkpoint root')).toBe('Verified');
    expect(await row(`Matches the ledger file ${DAY1}.json`)).toBe('Verified');
    expect(await row("Ledger format, signature metadata and the day's checkpoint")).toBe('Verified');
    expect(await row('Chain to the previous day')).toMatch(/this is the first day|Verified/);
    const chain = page
      .locator('section.result', { hasText: `Ledger ${DAY2}` })
      .locator('li.check', { hasText: 'Chain to the previous day' })
      .locator('.verdict');
    expect(await chain.textContent()).toBe('Verified');
    expect(await page.textContent('#doc-status')).toContain(archive.documentHash);
  });

  test('hashes a large document in chunks (several 4 MiB pieces) to the same SHA-256 as node:crypto', async () => {
    const big = path.join(work, 'big.bin');
    const block = crypto.createHash('sha512').update('seed').digest();
    fs.writeFileSync(
      big,
      Buffer.concat(
        Array.from({ length: (24 * 1024 * 1024) / 64 + 3 }, (_, i) =>
          i % 7 ? block : crypto.createHash('sha512').update(String(i)).digest(),
        ),
      ),
    );
    await page.click('#clear');
    await page.setInputFiles('#doc-file', big);
    await page.waitForFunction(
      () => document.getElementById('doc-status')!.textContent!.startsWith('SHA-256 of'),
      undefined,
      { timeout: 60_000 },
    );
    expect(await page.inputValue('#hash-input')).toBe(sha256Hex(fs.readFileSync(big)));
  }, 90_000);

  test('a pasted hash of another document is "Not verified" for the bundle', async () => {
    const r = await verify({ hash: sha256Hex('another document'), files: [archive.bundle] });
    expect(r.summary).toMatch(/^Not verified: your document's hash [0-9a-f]{64} is not the proof bundle's hash/);
  });

  test("a ledger day with its signatures but without the previous day's ledger verifies, and says how to check the chain", async () => {
    const r = await verify({ files: archive.dayFiles(DAY2) });
    expect(r.summary).toMatch(/^Verified/);
    expect(await row('ECDSA P-256 signature')).toBe('Verified');
    expect(await row('ML-DSA-65 signature')).toBe('Verified');
    expect(await row('Chain to the previous day')).toContain(`add that file to check the chain`);
  });

  test('verifies hello-world.txt.ots against the real header of block 358391 and shows the block time', async () => {
    const r = await verify({ document: HELLO, files: [HELLO_OTS, HEADER_HEX] });
    expect(r.summary).toMatch(/^Verified/);
    expect(await row('Bitcoin block 358391')).toBe('Verified');
    const details = (await page.locator('li.check', { hasText: 'Bitcoin block 358391' }).textContent())!;
    expect(details).toContain('Block time 2015-05-28T15:41:18Z');
    expect(details).toContain('000000000000000003e892881a8cdcdc117c06d444057c98b6f04a9ee75a2319');
    // The merkle root as explorers print it: the header's bytes 36..68 reversed.
    expect(details).toContain(Buffer.from(HEADER.subarray(36, 68)).reverse().toString('hex'));
  });

  test('the header can be pasted as hex; without a header the attestation waits for one, with the root to compare', async () => {
    await verify({ hash: sha256Hex(fs.readFileSync(HELLO)), files: [HELLO_OTS] });
    expect(await row('Bitcoin block 358391')).toMatch(/^Not verified: needs the block header at height 358391/);
    expect(await page.textContent('#sections')).toContain(
      Buffer.from(HEADER.subarray(36, 68)).reverse().toString('hex'),
    );
    await page.click('.paste summary');
    await page.fill('#paste', HEADER.toString('hex'));
    await page.click('#paste-add');
    await expect.poll(() => row('Bitcoin block 358391')).toBe('Verified');
    expect(await page.textContent('#summary')).toMatch(/^Verified/);
  });

  test('a pending proof lists its calendars and is not verified yet', async () => {
    const incomplete = path.join(OTS_VECTORS, 'opentimestamps-client/incomplete.txt');
    const r = await verify({ document: incomplete, files: [`${incomplete}.ots`] });
    expect(r.state).toBe('pending');
    expect(r.summary).toMatch(/^Not verified: not in Bitcoin yet/);
    expect(await page.textContent('#sections')).toContain('Pending at https://alice.btc.calendar.opentimestamps.org');
  });

  test('bad-stamp.txt.ots (claims block 358391 with another merkle root) is not verified', async () => {
    const bad = path.join(OTS_VECTORS, 'opentimestamps-client/bad-stamp.txt');
    const r = await verify({ document: bad, files: [`${bad}.ots`, HEADER_HEX] });
    expect(r.summary).toMatch(/^Not verified: Bitcoin attestation at height 358391: merkle root of block/);
  });
});

describe('single-byte corruptions turn the verdict to "Not verified" with the reason', () => {
  let n = 0;
  const corruptDir = () => {
    const d = path.join(work, `c${n++}`);
    fs.mkdirSync(d);
    return d;
  };

  async function expectNotVerified(given: Given, reason: RegExp, what: string): Promise<void> {
    const r = await verify(given);
    expect(r.state, `${what}: ${r.summary}`).toBe('fail');
    expect(r.summary, what).toMatch(/^Not verified: /);
    expect(r.summary, what).toMatch(reason);
  }

  test('the proof bundle (given with the day files, which bind its date and time)', async () => {
    // Byte offsets: read as latin1, so that each character is one byte (the em dashes are three).
    const text = fs.readFileSync(archive.bundle, 'latin1');
    const targeted = [
      '"submitted_at": "',
      '"date": "',
      '"path": "',
      '"leaf_index": ',
      '"tree_size": ',
      '"ots": ',
      '"first_index": ',
      '"ml_dsa_65_fingerprint": "',
    ].map((key) => text.indexOf(key) + key.length + 3);
    // Every line of the checkpoint is checked now (the Ed25519 one with Web Crypto), and so are the COSE receipts
    // (`cose_receipts`, with the receipt keys built in): any byte may change, and some in the receipts must.
    const receiptsAt = text.indexOf('"cose_receipts"');
    expect(receiptsAt).toBeGreaterThan(0);
    const receiptsEnd = text.indexOf(']', receiptsAt);
    const inReceipts = Array.from({ length: 8 }, (_, k) => {
      let i = receiptsAt + 20 + Math.floor((k * (receiptsEnd - receiptsAt - 40)) / 7);
      while (!/[A-Za-z0-9+/]/.test(text[i]!)) i++;
      return i;
    });
    const positions = [...samplePositions(text.length, 14), ...inReceipts, ...targeted];
    for (const at of positions) {
      const bad = corruptCopy(archive.bundle, corruptDir(), at);
      await expectNotVerified(
        { document: archive.document, files: [bad, ...archive.dayFiles(DAY1)] },
        /proof|bundle|JSON|inclusion|checkpoint|signature|fingerprint|ledger|date|submission|leaf|tree|hash|root|base64|entry|first_index|path|ots/i,
        `bundle byte ${at} (${JSON.stringify(text[at])})`,
      );
    }
  }, 120_000);

  test('the detached signatures, the ledger, the signature metadata and the checkpoint', async () => {
    const [ledger, ecdsaSig, mldsaSig, meta, checkpoint] = archive.dayFiles(DAY1) as [
      string,
      string,
      string,
      string,
      string,
    ];
    const cases: Array<[string, number, RegExp]> = [
      [ecdsaSig, 6, /\.json\.sig: signature does not verify/],
      [mldsaSig, 8, /\.json\.dilithium\.sig: signature does not verify/],
      [ledger, 8, /\.json\.sig: signature does not verify/],
      [meta, 4, /signatures\.json: does not describe this ledger/],
      [checkpoint, 6, /checkpoint/i],
    ];
    for (const [file, count, reason] of cases) {
      for (const at of samplePositions(fs.statSync(file).size, count)) {
        const files = archive.dayFiles(DAY1).map((f) => (f === file ? corruptCopy(file, corruptDir(), at) : f));
        await expectNotVerified({ files }, reason, `${path.basename(file)} byte ${at}`);
      }
    }
  }, 120_000);

  test('the Ed25519 line (Web Crypto) and the ML-DSA-44 line are checked with the built-in keys', async () => {
    const checkpoint = archive.dayFiles(DAY1)[4]!;
    const content = fs.readFileSync(checkpoint, 'latin1');
    const dash = '\u00e2\u0080\u0094 ';
    const third = content.indexOf(dash, content.indexOf(dash, content.indexOf(dash) + 1) + 1);
    const fourth = content.indexOf(dash, third + 1);
    expect(third).toBeGreaterThan(0);
    expect(fourth).toBeGreaterThan(third);
    const plain = await verify({ files: archive.dayFiles(DAY1) });
    expect(plain.state, plain.summary).toBe('ok');
    expect(await row('Checkpoint Ed25519 signature')).toBe('Verified');
    expect(await row('Checkpoint ML-DSA-44 cosignature')).toBe('Verified');
    // Every line is known to the page now: none is left unchecked.
    expect(await page.locator('li.check', { hasText: 'Other checkpoint lines' }).count()).toBe(0);
    const withCorrupt = (at: number) =>
      archive.dayFiles(DAY1).map((f) => (f === checkpoint ? corruptCopy(f, corruptDir(), at) : f));
    // A changed byte of the Ed25519 signature (one that stays a base64 character, so that the note still parses).
    const base64 = /[A-Za-z0-9+/]/;
    let at = content.lastIndexOf(' ', content.indexOf('\n', third)) + 12;
    while (!base64.test(String.fromCharCode(content.charCodeAt(at) ^ 0x01))) at++;
    await expectNotVerified(
      { files: withCorrupt(at) },
      /Checkpoint Ed25519 signature|signature/,
      `Ed25519 line byte ${at}`,
    );
    expect(await row('Checkpoint Ed25519 signature')).toBe('Not verified: the Ed25519 signature does not verify');
    // A changed byte in the ML-DSA-44 line (fourth): not verified.
    for (const at of [fourth + 40, fourth + 2000])
      await expectNotVerified(
        { files: withCorrupt(at) },
        /Checkpoint ML-DSA-44 cosignature|signature/,
        `ML-DSA-44 line byte ${at}`,
      );
  });

  test('the previous day: a changed byte in it breaks the chain (and its own signatures)', async () => {
    const prev = archive.dayFiles(DAY1)[0]!;
    const bad = corruptCopy(prev, corruptDir(), 200);
    await verify({ files: [bad, ...archive.dayFiles(DAY2)] });
    const chain = page
      .locator('section.result', { hasText: `Ledger ${DAY2}` })
      .locator('li.check', { hasText: 'Chain to the previous day' })
      .locator('.verdict');
    expect(await chain.textContent()).toMatch(
      /^Not verified: 2025-11-01\.json has SHA-256 [0-9a-f]{64}, but this ledger names/,
    );
  });

  test('the block header, including one with the right merkle root but too little proof of work', async () => {
    const helloHash = sha256Hex(fs.readFileSync(HELLO));
    for (const at of samplePositions(80, 10)) {
      const bytes = Buffer.from(HEADER);
      bytes[at] = bytes[at]! ^ 0x01;
      const file = path.join(corruptDir(), 'block-358391-header.hex');
      fs.writeFileSync(file, `${bytes.toString('hex')}\n`);
      // Any changed byte changes the block hash, so the proof of work fails (checked before the merkle root).
      await expectNotVerified(
        { hash: helloHash, files: [HELLO_OTS, file] },
        /Bitcoin block 358391|proof of work does not meet its target|target above the mainnet limit|nBits/,
        `header byte ${at}`,
      );
      expect(await row('Bitcoin block 358391')).toMatch(
        /^Not verified: (block [0-9a-f]{64}: proof of work does not meet its target|nBits)/,
      );
    }
    // The right merkle root, but nonce 0: its hash does not meet the target of its nBits.
    const weak = Buffer.from(HEADER);
    weak.writeUInt32LE(0, 76);
    const weakFile = path.join(corruptDir(), 'block-358391-header.hex');
    fs.writeFileSync(weakFile, weak.toString('hex'));
    await expectNotVerified(
      { hash: helloHash, files: [HELLO_OTS, weakFile] },
      /proof of work does not meet its target/,
      'nonce 0',
    );
    // The right merkle root and real work for an easy (regtest) target: that target is above what mainnet allows.
    const easy = Buffer.from(HEADER);
    easy.writeUInt32LE(0x207fffff, 72);
    const target = 0x7fffffn << 232n;
    for (let nonce = 0; ; nonce++) {
      easy.writeUInt32LE(nonce, 76);
      const h = crypto.createHash('sha256').update(crypto.createHash('sha256').update(easy).digest()).digest();
      if (BigInt(`0x${Buffer.from(h).reverse().toString('hex')}`) <= target) break;
    }
    const easyFile = path.join(corruptDir(), 'block-358391-header.hex');
    fs.writeFileSync(easyFile, easy.toString('hex'));
    await expectNotVerified(
      { hash: helloHash, files: [HELLO_OTS, easyFile] },
      /target above the mainnet limit/,
      'regtest difficulty',
    );
  }, 120_000);
});

describe('themes and requests', () => {
  test('a full verification in light, dark and at phone width: the theme follows the system, nothing overflows', async () => {
    const files = [archive.bundle, ...archive.dayFiles(DAY1), ...archive.dayFiles(DAY2)];
    for (const [name, scheme, width] of [
      ['light', 'light', 1100],
      ['dark', 'dark', 1100],
      ['phone', 'dark', 390],
    ] as const) {
      await page.setViewportSize({ width, height: 900 });
      await page.emulateMedia({ colorScheme: scheme });
      await verify({ document: archive.document, files });
      expect(await page.getAttribute('html', 'data-theme')).toBe(scheme);
      await capture(page, `offline-verifier-${name}`, { fullPage: true });
      // Nothing overflows sideways at phone width.
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    }
    // The theme toggle overrides the system setting.
    await page.click('#theme');
    expect(await page.getAttribute('html', 'data-theme')).toBe('light');
    await page.click('#theme');
    expect(await page.getAttribute('html', 'data-theme')).toBe('dark');
  }, 120_000);

  test('the page made no network request at all (routes and request events recorded every one)', () => {
    expect(requests).toEqual([]);
  });
});
