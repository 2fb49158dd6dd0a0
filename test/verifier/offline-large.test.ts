// The offline verifier and a busy day's ledger: every dropped file over 8 MB was taken for the
// document, so a real 18.5 MB ledger was hashed as "your document" and a valid proof came out "Not verified".
// A large file is the day's ledger when it is named YYYY-MM-DD.json or starts as a ledger's canonical JSON does
// (only its first bytes are read to tell); any other large file is still a document. Here a real archive made by
// the CLI with one day of 150,000 hashes (a 14.5 MB ledger), in Chromium from disk with the network off. A large
// timestamped PDF is read whole too, wherever its time-stamp is: a 9 MiB PDF (qpdf) stamped by `openssl ts -reply`
// with a 300 KiB update after it, which the page names as not covered.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { complete, prepare, tokenCertificates } from '../../core/pdf-timestamp.ts';
import { appendUpdate, askTsa, inflate } from '../pdf/tools.ts';
import { writeBigPdf } from '../support/big-pdf.ts';
import { startTsa } from '../support/openssl-tsa.ts';
import { BIN, buildVerifier, openOffline, run, sha256Hex, tempDir } from './helpers.ts';

const DAY = '2025-11-01';
const HASHES = 150_000;

let dir: string;
let out: string;
let ledger: string;
let dayFiles: string[];
let bundle: string;
let documentHash: string;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  dir = tempDir('large');
  out = tempDir('large-out');
  const hashes = Array.from({ length: HASHES }, (_, i) => sha256Hex(`large-${i}`));
  documentHash = hashes[HASHES / 2]!;
  run(dir, BIN, ['keys', 'init']);
  run(dir, BIN, ['import', '-'], { TIMESEAL_NOW: `${DAY}T09:15:00.123Z` }, `${hashes.join('\n')}\n`);
  run(dir, BIN, ['ledger', 'build'], { TIMESEAL_NOW: '2025-11-02T00:01:00.000Z' });
  bundle = path.join(dir, 'proof.json');
  fs.writeFileSync(bundle, run(dir, BIN, ['proof', documentHash], { TIMESEAL_NOW: '2025-11-02T00:01:00.000Z' }));
  const ledgers = path.join(dir, 'ledgers');
  ledger = path.join(ledgers, `${DAY}.json`);
  dayFiles = ['.json.sig', '.json.dilithium.sig', '.json.signatures.json', '.checkpoint'].map((s) =>
    path.join(ledgers, `${DAY}${s}`),
  );
  buildVerifier(out, path.join(dir, 'keys'));
  ({ browser, page } = await openOffline(out));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  for (const d of [dir, out]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

/** Gives the page the document's hash and `files` as proof files; once it lists them (after checking), returns the summary. */
async function verify(files: string[]): Promise<{ summary: string; state: string }> {
  await page.click('#clear');
  await page.fill('#hash-input', documentHash);
  await page.setInputFiles('#proof-files', files);
  await page.waitForFunction(
    (expected) => document.getElementById('file-count')!.textContent === expected,
    `${files.length} files given`,
    { timeout: 30_000 },
  );
  return {
    summary: (await page.textContent('#summary'))!,
    state: (await page.getAttribute('#summary', 'data-state'))!,
  };
}

async function row(label: string): Promise<string> {
  const rows = page.locator('li.check', { has: page.locator('.label', { hasText: label }) });
  await expect.poll(() => rows.count(), { timeout: 60_000 }).toBeGreaterThan(0);
  return (await rows.first().locator('.verdict').textContent())!;
}

describe('a ledger over 8 MB', () => {
  test('is made: one day of 150,000 hashes', () => {
    expect(fs.statSync(ledger).size).toBeGreaterThan(8 * 1024 * 1024);
    expect(fs.readFileSync(ledger).subarray(0, 40).toString()).toBe('{"format":"timeseal-ledger/1","origin":"');
  });

  test('dropped with its proof bundle and signatures is the ledger, and the proof verifies', async () => {
    const r = await verify([bundle, ledger, ...dayFiles]);
    expect(r.summary).toMatch(/^Verified/);
    expect(r.state).toBe('ok');
    expect(await row(`Matches the ledger file ${DAY}.json`)).toBe('Verified');
    expect(await row("Ledger format, signature metadata and the day's checkpoint")).toBe('Verified');
    expect(await page.textContent('#doc-status')).not.toContain(`${DAY}.json`);
  }, 120_000);

  test('under another name, it is known by its first bytes', async () => {
    const renamed = path.join(out, 'downloaded-ledger.json');
    fs.copyFileSync(ledger, renamed);
    const r = await verify([bundle, renamed, ...dayFiles]);
    expect(await row('Matches the ledger file downloaded-ledger.json')).toBe('Verified');
    expect(r.summary).toMatch(/^Verified/);
  }, 120_000);

  test('given as "your document" joins the proof files instead of being hashed', async () => {
    await page.click('#clear');
    await page.setInputFiles('#doc-file', ledger);
    await page.waitForFunction(
      () => /not your document/.test(document.getElementById('doc-status')!.textContent!),
      undefined,
      { timeout: 60_000 },
    );
    expect(await page.textContent('#doc-status')).toContain(`${DAY}.json is a ledger file`);
    expect(await page.inputValue('#hash-input')).toBe('');
  }, 120_000);

  test('any other large file is still a document, hashed', async () => {
    const other = path.join(out, 'notes.json');
    fs.writeFileSync(other, `{"format":"something-else","origin":"${'x'.repeat(9 * 1024 * 1024)}"}\n`);
    await page.click('#clear');
    await page.setInputFiles('#proof-files', other);
    await page.waitForFunction(
      () => document.getElementById('doc-status')!.textContent!.startsWith('SHA-256 of'),
      undefined,
      { timeout: 60_000 },
    );
    expect(await page.inputValue('#hash-input')).toBe(sha256Hex(fs.readFileSync(other)));
    expect(await page.textContent('#file-count')).toBe('');
  }, 120_000);
});

describe('a timestamped PDF over 8 MB', () => {
  test('with 300 KiB after its time-stamp, it is the PDF, checked whole: the time-stamp verified', async () => {
    const tsa = await startTsa('Large PDF Test TSA');
    try {
      const source = path.join(out, 'scan.pdf');
      writeBigPdf(source, 9 * 2 ** 20);
      const prepared = await prepare(new Uint8Array(fs.readFileSync(source)), { inflate });
      const token = await askTsa(tsa.url, prepared.digest, out);
      const stamped = complete(prepared, token, { certificates: tokenCertificates(token) });
      const file = path.join(out, 'scan.timestamped.pdf');
      fs.writeFileSync(file, appendUpdate(stamped, 300 << 10));
      expect(fs.statSync(file).size).toBeGreaterThan(8 * 1024 * 1024);
      await page.click('#clear');
      await page.setInputFiles('#proof-files', [file, tsa.caFile]);
      await page.waitForFunction(
        () => document.getElementById('file-count')!.textContent === '2 files given',
        undefined,
        {
          timeout: 60_000,
        },
      );
      expect(await row('Time-stamp 1 (Timeseal time-stamp)')).toBe('Verified');
      expect(await row('Time-stamp 1: chain to the TSA root')).toBe('Verified');
      // The update after it is named as bytes the time-stamp does not cover.
      expect(await row('After the last time-stamp')).toMatch(
        /^\d+ bytes after the last time-stamp are not covered by it/,
      );
      expect(await page.textContent('#summary')).toMatch(/^Verified/);
      expect(await page.inputValue('#hash-input')).toBe('');
    } finally {
      await tsa.stop();
    }
  }, 180_000);
});
