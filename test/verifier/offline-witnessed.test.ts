// A witnessed day in the offline verifier, in Chromium with the network off. RFC 3161: a day stamped
// by a real TSA on loopback (`openssl ts -reply`, test/support/openssl-tsa.ts) through `timeseal tsa stamp`; its `.tsr`
// given with the day's files, and inside the proof bundle, is checked against the ledger's SHA-256 — verified with
// the TSA's authority the person drops (tsa-ca.pem from /keys/), named as unchecked without one, not verified when
// a byte changed or the authority is another TSA's. Witnesses: two loopback witnesses (ML-DSA-44 and Ed25519,
// test/support/witness.ts) cosign through `timeseal witness cosign`; the bundle's checkpoint carries their lines,
// which the page checks with the witness policy the person drops (keys/witnesses), and reports who vouched. Under
// `make screenshots` (TIMESEAL_SCREENSHOTS=1) also screenshots of both reports in test-results/screenshots.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseVkey, vkeyVerifier } from '../../core/cosignature.ts';
import { startTsa, type LoopbackTsa } from '../support/openssl-tsa.ts';
import { startWitness, type LoopbackWitness } from '../support/witness.ts';
import { capture, CAPTURE } from '../site/helpers.ts';
import {
  BIN,
  buildArchive,
  buildVerifier,
  corruptCopy,
  DAY1,
  DAY2,
  launchChromium,
  run,
  runAsync,
  sha256Hex,
  tempDir,
  type TestArchive,
} from './helpers.ts';

let archive: TestArchive;
let tsa: LoopbackTsa;
let other: LoopbackTsa;
let witnesses: LoopbackWitness[] = [];
let out: string;
let work: string;
let browser: Browser;
let page: Page;
let bundle: string;
let witnessed: string;
/** A hash of the second day (test/verifier/helpers.ts buildArchive). */
const DAY2_HASH = sha256Hex('day2-0');
let caFile: string;
let policy: string;
const tsr = () => path.join(archive.ledgers, `${DAY1}.json.tsr`);

beforeAll(async () => {
  archive = buildArchive();
  tsa = await startTsa('Timeseal Test TSA');
  other = await startTsa('Other Test TSA');
  await runAsync(archive.dir, BIN, ['tsa', 'stamp'], { TSA_URLS: tsa.url });
  expect(fs.existsSync(tsr())).toBe(true);
  const logKey = parseVkey(fs.readFileSync(path.join(archive.keys, 'ed25519.vkey'), 'utf8'));
  const logs = new Map([[logKey.name, [vkeyVerifier(logKey)]]]);
  witnesses = [
    await startWitness({ name: 'w1.example/witness', seed: new Uint8Array(32).fill(11), algorithm: 'ML-DSA-44', logs }),
    await startWitness({ name: 'w2.example/witness', seed: new Uint8Array(32).fill(12), algorithm: 'Ed25519', logs }),
  ];
  await runAsync(archive.dir, BIN, ['witness', 'cosign'], {
    TIMESEAL_WITNESSES: witnesses.map((w) => w.setting).join(', '),
  });
  bundle = path.join(archive.dir, 'proof-tokens.json');
  fs.writeFileSync(bundle, run(archive.dir, BIN, ['proof', archive.documentHash]));
  // The witnesses cosign the latest checkpoint, the second day's: the proof of a hash of that day carries them.
  witnessed = path.join(archive.dir, 'proof-witnessed.json');
  fs.writeFileSync(witnessed, run(archive.dir, BIN, ['proof', DAY2_HASH]));
  out = tempDir('out');
  buildVerifier(out, archive.keys);
  work = tempDir('work');
  caFile = path.join(work, 'tsa-ca.pem');
  fs.copyFileSync(tsa.caFile, caFile);
  policy = path.join(archive.keys, 'witnesses');
  expect(fs.existsSync(policy)).toBe(true);
  browser = await launchChromium();
  const context = await browser.newContext();
  await context.setOffline(true);
  page = await context.newPage();
  await page.goto(`file://${path.join(out, 'offline-verifier.html')}`);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await tsa?.stop();
  await other?.stop();
  for (const w of witnesses) await w.stop().catch(() => undefined);
  for (const d of [archive?.dir, out, work]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

/** Gives the page `files` (and the document), waits for the report, returns the summary and every row. */
async function verify(
  files: string[],
  withDocument = true,
  hash?: string,
): Promise<{ state: string; summary: string; rows: string[] }> {
  await page.click('#clear');
  if (hash) await page.fill('#hash-input', hash);
  else if (withDocument) {
    await page.setInputFiles('#doc-file', archive.document);
    await page.waitForFunction(() => document.getElementById('doc-status')!.textContent!.startsWith('SHA-256 of'));
  }
  await page.setInputFiles('#proof-files', files);
  await page.waitForFunction(
    (n) => document.getElementById('file-count')!.textContent === `${n} file${n > 1 ? 's' : ''} given`,
    files.length,
  );
  const rows = await page.$$eval('li.check', (lis) =>
    lis.map((li) => `${li.querySelector('.label')!.textContent} | ${li.querySelector('.verdict')!.textContent}`),
  );
  return {
    state: (await page.getAttribute('#summary', 'data-state'))!,
    summary: (await page.textContent('#summary'))!,
    rows,
  };
}

const tokenRows = (rows: string[]) => rows.filter((r) => r.startsWith('RFC 3161 time-stamp'));

describe('the offline verifier and a witnessed day: RFC 3161 tokens, witness cosignatures', () => {
  test("with the TSA's authority dropped: the day's .tsr and the bundle's token are verified", async () => {
    const day = await verify([...archive.dayFiles(DAY1), tsr(), caFile]);
    expect(tokenRows(day.rows)).toEqual([`RFC 3161 time-stamp ${DAY1}.json.tsr | Verified`]);
    expect(day.state, day.summary).toBe('ok');
    const details = await page.locator('li.check', { hasText: 'RFC 3161 time-stamp' }).first().textContent();
    expect(details).toMatch(/TSA O=Timeseal tests, CN=Timeseal Test TSA/);
    expect(details).toMatch(/Authority from tsa-ca\.pem/);
    const fromBundle = await verify([bundle, ...archive.dayFiles(DAY1), caFile]);
    expect(tokenRows(fromBundle.rows)).toEqual([`RFC 3161 time-stamp ${DAY1}.json.tsr | Verified`]);
    expect(fromBundle.state, fromBundle.summary).toBe('ok');
    // The report, and a witnessed day's at phone width in the dark theme: for the screenshots only.
    if (CAPTURE) {
      await page.setViewportSize({ width: 1280, height: 900 });
      await capture(page, 'offline-verifier-witnessed-1280', { fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.reload();
      await verify([witnessed, ...archive.dayFiles(DAY2), policy], false, DAY2_HASH);
      await capture(page, 'offline-verifier-witnessed-390-dark', { fullPage: true });
      await page.emulateMedia({ colorScheme: 'light' });
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  test('without an authority the token is named, not verified; the person adds tsa-ca.pem and it is verified', async () => {
    const alone = await verify([...archive.dayFiles(DAY1), tsr()]);
    expect(tokenRows(alone.rows)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^RFC 3161 time-stamp ${DAY1}\\.json\\.tsr \\| stamped by O=Timeseal tests, CN=Timeseal Test TSA at 20\\d\\d-.*its certificate authority was not given`,
        ),
      ),
    ]);
    expect(alone.state, alone.summary).toBe('ok');
    const given = await verify([...archive.dayFiles(DAY1), tsr(), caFile]);
    expect(tokenRows(given.rows)).toEqual([`RFC 3161 time-stamp ${DAY1}.json.tsr | Verified`]);
    const wrong = path.join(work, 'other-ca.pem');
    fs.copyFileSync(other.caFile, wrong);
    const another = await verify([...archive.dayFiles(DAY1), tsr(), wrong]);
    expect(another.state).toBe('fail');
    expect(tokenRows(another.rows)).toEqual([
      expect.stringMatching(/Not verified: the TSA's certificate does not lead to the certificate authority given/),
    ]);
  });

  test('a changed byte of the token, or a token of another day, is not verified, with the reason', async () => {
    const size = fs.statSync(tsr()).size;
    for (const at of [10, Math.floor(size / 3), Math.floor(size / 2), size - 5]) {
      const bad = corruptCopy(tsr(), work, at);
      const r = await verify([...archive.dayFiles(DAY1), bad, caFile]);
      expect(r.state, `byte ${at}`).toBe('fail');
      expect(tokenRows(r.rows), `byte ${at}`).toEqual([expect.stringMatching(/\| Not verified: /)]);
    }
    // The first day's token given as the second day's: another digest.
    const day2 = path.join(work, '2025-11-02.json.tsr');
    fs.copyFileSync(tsr(), day2);
    const r = await verify([...archive.dayFiles('2025-11-02'), day2, caFile], false);
    expect(tokenRows(r.rows)).toEqual([expect.stringMatching(/Not verified: the token is for another digest/)]);
  });

  test("the witnesses' cosignatures in the bundle are checked with the policy and named; a changed one is not verified", async () => {
    const without = await verify([witnessed, ...archive.dayFiles(DAY2)], false, DAY2_HASH);
    expect(without.state, without.summary).toBe('ok');
    expect(without.rows).toContainEqual(expect.stringMatching(/^Other checkpoint lines \| 2 more signature lines/));
    const r = await verify([witnessed, ...archive.dayFiles(DAY2), policy], false, DAY2_HASH);
    expect(r.state, r.summary).toBe('ok');
    expect(r.rows).toContainEqual('Witness w1.example/witness | Verified');
    expect(r.rows).toContainEqual('Witness w2.example/witness | Verified');
    expect(r.rows).toContainEqual(
      expect.stringMatching(
        /^Witnesses \| 2 of the 2 witnesses of the policy cosigned this checkpoint \(quorum 2, met\)/,
      ),
    );
    expect(r.rows.filter((x) => x.startsWith('Other checkpoint lines'))).toEqual([]);
    // A changed byte in each witness's signature (kept a base64 character, so that the note still parses).
    const text = fs.readFileSync(witnessed, 'latin1');
    for (const name of ['w1.example/witness', 'w2.example/witness']) {
      let at = text.indexOf(`\u00e2\u0080\u0094 ${name} `) + name.length + 30;
      while (!/[A-Za-z0-9+/]/.test(String.fromCharCode(text.charCodeAt(at) ^ 0x01))) at++;
      const bad = await verify([corruptCopy(witnessed, work, at), ...archive.dayFiles(DAY2), policy], false, DAY2_HASH);
      expect(bad.state, `${name} byte ${at}`).toBe('fail');
      expect(bad.rows).toContainEqual(
        expect.stringMatching(new RegExp(`^Witness ${name.replace('.', '\\.')} \\| Not verified: `)),
      );
    }
  });

  test("a day's .cosignatures file is read with its checkpoint, not taken for the document", async () => {
    const cosignatures = path.join(archive.ledgers, `${DAY2}.cosignatures`);
    expect(fs.existsSync(cosignatures)).toBe(true);
    const r = await verify([...archive.dayFiles(DAY2), cosignatures, policy]);
    expect(await page.inputValue('#hash-input')).toBe(archive.documentHash);
    expect(r.rows).toContainEqual(`Cosignature lines ${DAY2}.cosignatures | Verified`);
    expect(r.rows).toContainEqual('Witness w1.example/witness | Verified');
    expect(r.rows).toContainEqual('Witness w2.example/witness | Verified');
    expect(r.state, r.summary).toBe('ok');
    const text = fs.readFileSync(cosignatures, 'latin1');
    let at = text.indexOf('w2.example/witness') + 40;
    while (!/[A-Za-z0-9+/]/.test(String.fromCharCode(text.charCodeAt(at) ^ 0x01))) at++;
    const bad = await verify([...archive.dayFiles(DAY2), corruptCopy(cosignatures, work, at), policy]);
    expect(bad.state).toBe('fail');
    expect(bad.rows).toContainEqual(expect.stringMatching(/^Witness w2\.example\/witness \| Not verified: /));
    const cut = path.join(work, `${DAY2}.cosignatures`);
    fs.writeFileSync(cut, fs.readFileSync(cosignatures).subarray(0, -1));
    const malformed = await verify([...archive.dayFiles(DAY2), cut, policy]);
    expect(malformed.rows).toContainEqual(
      expect.stringMatching(new RegExp(`^Cosignature lines ${DAY2}\\.cosignatures \\| Not verified: .*newline`)),
    );
  });
});
