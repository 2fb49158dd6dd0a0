// RFC 3161 tokens in the offline verifier (issue 17 part 1), in Chromium with the network off: a day stamped by a
// real TSA on loopback (`openssl ts -reply`, test/support/tsa.ts) through `timeseal tsa stamp`; its `.tsr` given
// with the day's files, and inside the proof bundle, is checked against the ledger's SHA-256 — verified with the
// authority built into the page (keys/tsa-ca.pem at build time) or dropped by the person, named as unchecked
// without one, and not verified when a byte of it changed or the authority is another TSA's.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTsa, type LoopbackTsa } from '../support/tsa.ts';
import { BIN, buildArchive, buildVerifier, corruptCopy, DAY1, launchChromium, RESULTS, run, runAsync, tempDir, type TestArchive } from './helpers.ts';

let archive: TestArchive;
let tsa: LoopbackTsa;
let other: LoopbackTsa;
let withCa: string;
let withoutCa: string;
let work: string;
let browser: Browser;
let page: Page;
let bundle: string;
const tsr = () => path.join(archive.ledgers, `${DAY1}.json.tsr`);

beforeAll(async () => {
  archive = buildArchive();
  tsa = await startTsa('Timeseal Test TSA');
  other = await startTsa('Other Test TSA');
  await runAsync(archive.dir, BIN, ['tsa', 'stamp'], { TSA_URLS: tsa.url, TIMESEAL_NOW: '2025-11-03T01:04:00.000Z' });
  expect(fs.existsSync(tsr())).toBe(true);
  bundle = path.join(archive.dir, 'proof-with-tokens.json');
  fs.writeFileSync(bundle, run(archive.dir, BIN, ['proof', archive.documentHash]));
  withoutCa = tempDir('out-no-ca');
  buildVerifier(withoutCa, archive.keys);
  const keys = tempDir('keys-ca');
  fs.cpSync(archive.keys, keys, { recursive: true });
  fs.copyFileSync(tsa.caFile, path.join(keys, 'tsa-ca.pem'));
  withCa = tempDir('out-ca');
  buildVerifier(withCa, keys);
  work = tempDir('work');
  browser = await launchChromium();
  const context = await browser.newContext();
  await context.setOffline(true);
  page = await context.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await tsa?.stop();
  await other?.stop();
  for (const d of [archive?.dir, withCa, withoutCa, work]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

async function open(out: string): Promise<void> {
  await page.goto(`file://${path.join(out, 'offline-verifier.html')}`);
}

/** Gives the page `files` (and the document), waits for the report, returns the summary and every row. */
async function verify(files: string[], document = true): Promise<{ state: string; summary: string; rows: string[] }> {
  await page.click('#clear');
  if (document) {
    await page.setInputFiles('#doc-file', archive.document);
    await page.waitForFunction(() => document.getElementById('doc-status')!.textContent!.startsWith('SHA-256 of'));
  }
  await page.setInputFiles('#proof-files', files);
  await page.waitForFunction((n) => document.getElementById('file-count')!.textContent === `${n} file${n > 1 ? 's' : ''} given`, files.length);
  const rows = await page.$$eval('li.check', (lis) => lis.map((li) => `${li.querySelector('.label')!.textContent} | ${li.querySelector('.verdict')!.textContent}`));
  return { state: (await page.getAttribute('#summary', 'data-state'))!, summary: (await page.textContent('#summary'))!, rows };
}

const tokenRows = (rows: string[]) => rows.filter((r) => r.startsWith('RFC 3161 time-stamp'));

describe('the offline verifier and RFC 3161 tokens', () => {
  test('with the authority built in: the day\'s .tsr and the bundle\'s token are verified', async () => {
    await open(withCa);
    const day = await verify([...archive.dayFiles(DAY1), tsr()]);
    expect(tokenRows(day.rows)).toEqual([`RFC 3161 time-stamp ${DAY1}.json.tsr | Verified`]);
    expect(day.state, day.summary).toBe('ok');
    const details = await page.locator('li.check', { hasText: 'RFC 3161 time-stamp' }).first().textContent();
    expect(details).toMatch(/TSA O=Timeseal tests, CN=Timeseal Test TSA/);
    expect(details).toMatch(/Authority from the tsa-ca\.pem built into this file/);
    const fromBundle = await verify([bundle, ...archive.dayFiles(DAY1)]);
    expect(tokenRows(fromBundle.rows)).toEqual([`RFC 3161 time-stamp ${DAY1}.json.tsr | Verified`]);
    expect(fromBundle.state, fromBundle.summary).toBe('ok');
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: path.join(RESULTS, 'offline-verifier-rfc3161-1280.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.reload();
    await verify([bundle, ...archive.dayFiles(DAY1)]);
    await page.screenshot({ path: path.join(RESULTS, 'offline-verifier-rfc3161-390-dark.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  test('without an authority the token is named, not verified; the person adds tsa-ca.pem and it is verified', async () => {
    await open(withoutCa);
    const alone = await verify([...archive.dayFiles(DAY1), tsr()]);
    expect(tokenRows(alone.rows)).toEqual([
      expect.stringMatching(new RegExp(`^RFC 3161 time-stamp ${DAY1}\\.json\\.tsr \\| stamped by O=Timeseal tests, CN=Timeseal Test TSA at 20\\d\\d-.*its certificate authority was not given`)),
    ]);
    expect(alone.state, alone.summary).toBe('ok');
    const ca = path.join(work, 'tsa-ca.pem');
    fs.copyFileSync(tsa.caFile, ca);
    const given = await verify([...archive.dayFiles(DAY1), tsr(), ca]);
    expect(tokenRows(given.rows)).toEqual([`RFC 3161 time-stamp ${DAY1}.json.tsr | Verified`]);
    const wrong = path.join(work, 'other-ca.pem');
    fs.copyFileSync(other.caFile, wrong);
    const another = await verify([...archive.dayFiles(DAY1), tsr(), wrong]);
    expect(another.state).toBe('fail');
    expect(tokenRows(another.rows)).toEqual([expect.stringMatching(/Not verified: the TSA's certificate does not lead to the certificate authority given/)]);
  });

  test('a changed byte of the token, or a token of another day, is not verified, with the reason', async () => {
    await open(withCa);
    const size = fs.statSync(tsr()).size;
    for (const at of [10, Math.floor(size / 3), Math.floor(size / 2), size - 5]) {
      const bad = corruptCopy(tsr(), work, at);
      const r = await verify([...archive.dayFiles(DAY1), bad]);
      expect(r.state, `byte ${at}`).toBe('fail');
      expect(tokenRows(r.rows), `byte ${at}`).toEqual([expect.stringMatching(/\| Not verified: /)]);
    }
    // The first day's token given as the second day's: another digest.
    const day2 = path.join(work, '2025-11-02.json.tsr');
    fs.copyFileSync(tsr(), day2);
    const r = await verify([...archive.dayFiles('2025-11-02'), day2], false);
    expect(tokenRows(r.rows)).toEqual([expect.stringMatching(/Not verified: the token is for another digest/)]);
  });
});
