// The offline verifier and c2sp.org/tlog-proof@v1 files (docs/FORMAT.md §8a): a real .tlog-proof written by
// `timeseal proof --tlog-proof` on an archive made by the real pipeline is recognised, verified with the
// archive's keys and the document, and rejected with a reason once one byte of its path, index or either
// checkpoint signature is flipped — under Node (checks.ts) and in the built page, opened from disk, offline.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ecdsaPublicKeyFromPem } from '../../core/sig.ts';
import { verifyInputs, type KeyInput, type VerifierInputs } from '../../site/offline-verifier/src/checks.ts';
import { classifyFile } from '../../site/offline-verifier/src/inputs.ts';
import {
  BIN,
  buildArchive,
  buildVerifier,
  DAY1,
  launchChromium,
  run,
  sha256Hex,
  tempDir,
  type TestArchive,
} from './helpers.ts';

let archive: TestArchive;
let proofFile: string;
let text: string;
let keys: { ecdsa: KeyInput; mldsa: KeyInput };
let work: string;

beforeAll(() => {
  archive = buildArchive();
  work = tempDir('tlog-proof');
  proofFile = path.join(work, `${archive.documentHash}.tlog-proof`);
  run(archive.dir, BIN, ['proof', archive.documentHash, '--tlog-proof', proofFile], {
    TIMESEAL_NOW: '2025-11-03T00:01:00.000Z',
  });
  text = fs.readFileSync(proofFile, 'utf8');
  keys = {
    ecdsa: {
      key: ecdsaPublicKeyFromPem(fs.readFileSync(path.join(archive.keys, 'public.pem'), 'utf8')),
      source: 'test',
    },
    mldsa: { key: new Uint8Array(fs.readFileSync(path.join(archive.keys, 'dilithium_public.key'))), source: 'test' },
  };
}, 60_000);
afterAll(() => {
  for (const d of [archive?.dir, work]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

const doc = () => ({ hash: archive.documentHash, source: 'test' });
const input = (name: string, t: string | Uint8Array) =>
  classifyFile(name, typeof t === 'string' ? new TextEncoder().encode(t) : t);
const given = (files: ReturnType<typeof input>[], extra: Partial<VerifierInputs> = {}): VerifierInputs => ({
  files,
  keys,
  document: doc(),
  ...extra,
});
const rows = (r: Awaited<ReturnType<typeof verifyInputs>>) =>
  r.sections.flatMap((s) => s.checks.map((c) => `${c.label} | ${c.verdict}`));

/** The text with one byte flipped at the first occurrence of `marker` plus `offset`. With `letter`, the first
 *  letter from there changes case instead, so that base64 stays base64 and the signature check itself fails. */
function flipped(marker: string, offset = 0, letter = false): Uint8Array {
  const bytes = new TextEncoder().encode(text);
  let at = new TextEncoder().encode(text.slice(0, text.indexOf(marker))).length + offset;
  if (letter) while (!/[A-Za-z]/.test(String.fromCharCode(bytes[at]!))) at++;
  bytes[at] = bytes[at]! ^ (letter ? 0x20 : 0x01);
  return bytes;
}

describe('tlog-proof in the offline verifier (checks.ts)', () => {
  test('is recognised by its extension, and by its content under any name, also with a damaged header', async () => {
    expect(input('x.tlog-proof', text).kind).toBe('tlog-proof');
    expect(input('proof.txt', text).kind).toBe('tlog-proof');
    expect(input('proof.txt', text.replace('c2sp.org', 'c2sp.orh')).kind).toBe('tlog-proof');
  });

  test('verifies with the document and the keys; names the leaf and, with the ledger, the date', async () => {
    const r = await verifyInputs(given([input('p.tlog-proof', text)]));
    expect(r.summary.state, rows(r).join('\n')).toBe('ok');
    expect(rows(r)).toEqual(
      expect.arrayContaining([
        'Hash matches the document | Verified',
        'Checkpoint ECDSA P-256 signature | Verified',
        'Checkpoint ML-DSA-65 signature | Verified',
        'Inclusion proof leads to the checkpoint root | Verified',
        'Whole tlog-proof (both signatures, inclusion) | Verified',
      ]),
    );
    const withLedger = await verifyInputs(
      given([
        input('p.tlog-proof', text),
        ...archive.dayFiles(DAY1).map((f) => input(path.basename(f), fs.readFileSync(f))),
      ]),
    );
    expect(withLedger.summary.state, rows(withLedger).join('\n')).toBe('ok');
    const leaf = withLedger.sections
      .flatMap((s) => s.checks)
      .find((c) => c.label === `Leaf in the ledger file ${DAY1}.json`);
    expect(leaf?.details?.[0]).toMatch(new RegExp(`^Ledger of ${DAY1}, submitted ${DAY1}T09:15:00.123Z`));
  });

  test('without the document: not verified yet, it asks for it; another document fails', async () => {
    const alone = await verifyInputs({ files: [input('p.tlog-proof', text)], keys });
    expect(alone.summary.state).toBe('pending');
    expect(alone.summary.text).toMatch(/no document given/);
    const other = await verifyInputs(
      given([input('p.tlog-proof', text)], { document: { hash: sha256Hex('another file'), source: 'test' } }),
    );
    expect(other.summary.state).toBe('fail');
    expect(other.summary.text).toMatch(/Hash matches the document/);
  });

  test.each([
    ['a proof hash', () => flipped('\n\n', -5), /Inclusion proof leads to the checkpoint root/],
    ['the index', () => flipped('index ', 6), /Inclusion proof leads to the checkpoint root|tlog-proof format/],
    ['the ECDSA signature', () => flipped('\u2014 ', 40, true), /Checkpoint ECDSA P-256 signature/],
    // The second signature line is ML-DSA-65 (then Ed25519 and ML-DSA-44, which this page names but does not check).
    [
      'the ML-DSA-65 signature',
      () =>
        flipped('\u2014 ', text.indexOf('\u2014 ', text.indexOf('\u2014 ') + 1) - text.indexOf('\u2014 ') + 400, true),
      /Checkpoint ML-DSA-65 signature/,
    ],
    [
      'the checkpoint root',
      () =>
        flipped(
          '\n\n',
          2 +
            text
              .slice(text.indexOf('\n\n') + 2)
              .split('\n')
              .slice(0, 2)
              .join('\n').length +
            5,
        ),
      /Checkpoint ECDSA P-256 signature/,
    ],
  ])('a flipped byte in %s: Not verified, with the reason', async (_what, bytes, where) => {
    const r = await verifyInputs(given([input('p.tlog-proof', bytes())]));
    expect(r.summary.state, rows(r).join('\n')).toBe('fail');
    expect(r.summary.text).toMatch(/^Not verified: /);
    expect(r.summary.text).toMatch(where);
  });
});

describe('tlog-proof in the built page, from disk, offline', () => {
  let browser: Browser;
  let page: Page;
  let out: string;

  beforeAll(async () => {
    out = tempDir('tlog-proof-out');
    buildVerifier(out, archive.keys);
    browser = await launchChromium();
    const context = await browser.newContext();
    await context.setOffline(true);
    page = await context.newPage();
    await page.goto(`file://${path.join(out, 'offline-verifier.html')}`);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    if (out) fs.rmSync(out, { recursive: true, force: true });
  });

  async function verify(file: string): Promise<{ summary: string; state: string }> {
    await page.click('#clear');
    await page.fill('#hash-input', archive.documentHash);
    await page.setInputFiles('#proof-files', file);
    await page.waitForFunction(() => document.getElementById('file-count')!.textContent === '1 file given');
    return {
      summary: (await page.textContent('#summary'))!,
      state: (await page.getAttribute('#summary', 'data-state'))!,
    };
  }

  test('accepts the good file and rejects a tampered one', async () => {
    const good = await verify(proofFile);
    expect(good.state, good.summary).toBe('ok');
    expect(await page.textContent('#sections')).toContain(`tlog-proof ${archive.documentHash}.tlog-proof`);
    const bad = path.join(work, 'tampered.tlog-proof');
    fs.writeFileSync(bad, flipped('\n\n', -5));
    const r = await verify(bad);
    expect(r.state).toBe('fail');
    expect(r.summary).toMatch(/^Not verified: .*Inclusion proof leads to the checkpoint root/);
  }, 60_000);
});
