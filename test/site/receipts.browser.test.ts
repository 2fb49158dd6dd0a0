// Receipts in Debian's Chromium against the real server (`timeseal serve` on a temporary project whose TSA
// certificates are valid from the start of the test day): the drop zone on / and /proof offers each submitted
// file's RFC 3161 receipt as a .tsr download that `openssl ts -verify` accepts with the published certificates;
// /verify checks a receipt with its file or hash — pending before the day is published, kept after, broken for a
// hash the published ledger lacks, not valid for a flipped byte, not for this file for another file; a SHA-512
// token of POST /tsa is kept through the SHA-256 of its TSTInfo; and /tsa-policy states the policy. Under
// `make screenshots` (TIMESEAL_SCREENSHOTS=1) also the receipt offer and the receipt check's results, at 1280 and
// 390 px, dark and light. One server for the whole file.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  capture,
  CAPTURE,
  cli,
  openPage,
  pngProblems,
  sha256sum,
  startSite,
  stopSite,
  type Project,
  type Server,
} from './helpers.ts';

const DAY = '2025-11-03';
/** The server's clock, and `keys init`'s: the TSA certificates are valid from a minute before the latter. */
const NOW = `${DAY}T10:00:00.000Z`;
const KEYS_NOW = `${DAY}T00:00:00.000Z`;
/** When the day's ledger is built. */
const NEXT_DAY = '2025-11-04T00:01:00.000Z';
const POLICY_OID = '2.25.98735976325990746299618456542211080382';

let project: Project;
let server: Server;
let browser: Browser;
let tmp: string;
const pageErrors: string[] = [];
const shots: string[] = [];
const start = Date.now();

/** Files of the test and their receipts (saved downloads). */
const files = {
  kept: { file: '', hash: '', tsr: '' },
  broken: { file: '', hash: '', tsr: '' },
  sha512: { file: '', tsr: '' },
};

const newPage = (
  options: { theme?: 'light' | 'dark'; width?: number } = {},
): Promise<{ context: BrowserContext; page: Page }> =>
  openPage(browser, server, { ...options, downloads: true, errors: pageErrors });

/** Waits until the island holding `selector` has hydrated (Astro removes `ssr` from <astro-island>). */
async function hydrated(page: Page, selector: string): Promise<void> {
  await page.locator(selector).first().scrollIntoViewIfNeeded();
  await page.waitForFunction((s) => {
    const island = document.querySelector(s)?.closest('astro-island');
    return !!island && !island.hasAttribute('ssr');
  }, selector);
}

const openssl = (args: string[], cwd: string): string =>
  execFileSync('openssl', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** Adds `file` to the drop zone of the page, waits for its receipt, and saves the download into `dir`. */
async function submitAndDownload(
  page: Page,
  inputId: string,
  file: string,
  dir: string,
): Promise<{ saved: string; command: string; item: ReturnType<Page['locator']> }> {
  await hydrated(page, `#${inputId}`);
  await page.setInputFiles(`#${inputId}`, file);
  const item = page.locator('li', { hasText: path.basename(file) });
  const link = item.getByRole('link', { name: 'Download receipt (.tsr)' });
  await link.waitFor();
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  expect(download.suggestedFilename()).toBe(`${path.basename(file)}.tsr`);
  const saved = path.join(dir, download.suggestedFilename());
  await download.saveAs(saved);
  return { saved, command: (await item.locator('[data-testid=receipt-command]').textContent())!.trim(), item };
}

interface Check {
  state: string;
  text: string;
}

/** On /verify: gives `tsr` with a file or a hash (or neither), presses "Check receipt", and reads the verdict. */
async function checkOnVerify(
  page: Page,
  tsr: string,
  subject: { file?: string; hash?: string },
  shot?: string,
): Promise<Check> {
  await page.goto('/verify');
  await hydrated(page, '#receipt-file');
  await page.setInputFiles('#receipt-file', tsr);
  await page.locator('[data-testid=receipt-name]').waitFor();
  if (subject.file) {
    await page.setInputFiles('#receipt-target', subject.file);
    await page.locator('[data-testid=receipt-target-hash]').waitFor();
  }
  if (subject.hash) await page.fill('#receipt-hash', subject.hash);
  await page.getByRole('button', { name: 'Check receipt' }).click();
  const result = page.locator('[data-testid=receipt-result]');
  await result.waitFor({ timeout: 20_000 });
  if (shot)
    shots.push(...[await capture(page.locator('[data-testid=receipt-check]'), shot)].filter((f) => f !== undefined));
  return { state: (await result.getAttribute('data-state'))!, text: (await result.innerText()).replace(/\s+/g, ' ') };
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-receipts-'));
  ({ project, server, browser } = await startSite({ keysNow: KEYS_NOW, now: NOW }));
  for (const [name, content] of [
    ['kept', 'the kept promise'],
    ['broken', 'the broken promise'],
    ['sha512', 'stamped through POST /tsa'],
  ] as const) {
    const file = path.join(tmp, name === 'broken' ? 'lab notes (draft).txt' : `${name}.txt`);
    fs.writeFileSync(file, `${content} ${crypto.randomBytes(8).toString('hex')}\n`);
    files[name].file = file;
  }
  files.kept.hash = sha256sum(files.kept.file);
  files.broken.hash = sha256sum(files.broken.file);
}, 120_000);

afterAll(async () => {
  await stopSite({ browser, server, project });
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the receipt of a submission', () => {
  it('is offered at once on /, and openssl ts -verify accepts the download with the published certificates', async () => {
    const { context, page } = await newPage();
    const scripts: string[] = [];
    page.on('request', (r) => scripts.push(new URL(r.url()).pathname));
    await page.goto('/');
    const { saved, command } = await submitAndDownload(page, 'home-dropzone-input', files.kept.file, tmp);
    // The offer is a chunk of its own, loaded with the receipt; the receipt checker is never loaded here.
    expect(
      scripts.filter((p) => /\/(ReceiptOffer|receipt-check)\./.test(p)).map((p) => p.split('/').pop()!.split('.')[0]),
    ).toEqual(['ReceiptOffer']);
    files.kept.tsr = saved;
    expect(command).toBe(
      `openssl ts -verify -digest ${files.kept.hash} -in kept.txt.tsr -CAfile timeseal-tsa-root.pem -untrusted timeseal-tsa.pem`,
    );
    // What a receipt is and the certificates are said once, above the files.
    const help = page.locator('[data-testid=receipt-help]');
    expect(await help.innerText()).toContain(
      "Each receipt is an RFC 3161 time-stamp token, signed at submission by Timeseal's time-stamp authority; the hash is also published in today's public ledger.",
    );
    for (const name of ['timeseal-tsa-root.pem', 'timeseal-tsa.pem']) {
      await expect(help.getByRole('link', { name }).getAttribute('href')).resolves.toBe(`/keys/${name}`);
    }
    const out = openssl(
      [
        'ts',
        '-verify',
        '-digest',
        files.kept.hash,
        '-in',
        saved,
        '-CAfile',
        'keys/timeseal-tsa-root.pem',
        '-untrusted',
        'keys/timeseal-tsa.pem',
      ],
      project.dir,
    );
    expect(out).toContain('Verification: OK');
    // The token's time is the submission's (the server's clock).
    expect(openssl(['ts', '-reply', '-in', saved, '-text'], project.dir)).toMatch(
      /Time stamp: Nov {2}3 10:00:00(\.\d+)? 2025 GMT/,
    );
    await context.close();
  });

  it('is offered on /proof too, and the command shown runs as it is beside the two certificates it links', async () => {
    const { context, page } = await newPage();
    await page.goto('/proof');
    const dir = fs.mkdtempSync(path.join(tmp, 'proof-'));
    const { saved, command } = await submitAndDownload(page, 'proof-dropzone-input', files.broken.file, dir);
    files.broken.tsr = saved;
    expect(command).toBe(
      `openssl ts -verify -digest ${files.broken.hash} -in 'lab notes (draft).txt.tsr' -CAfile timeseal-tsa-root.pem -untrusted timeseal-tsa.pem`,
    );
    for (const name of ['timeseal-tsa-root.pem', 'timeseal-tsa.pem']) {
      const help = page.locator('[data-testid=receipt-help]');
      const res = await fetch(new URL((await help.getByRole('link', { name }).getAttribute('href'))!, server.url));
      expect(res.status, name).toBe(200);
      fs.writeFileSync(path.join(dir, name), Buffer.from(await res.arrayBuffer()));
    }
    expect(
      execFileSync('bash', ['-c', command], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }),
    ).toContain('Verification: OK');
    await context.close();
  });

  it('a token of POST /tsa (SHA-512) is saved for the checks below', async () => {
    const q = path.join(tmp, 'sha512.tsq');
    openssl(['ts', '-query', '-data', files.sha512.file, '-sha512', '-cert', '-out', q], tmp);
    const res = await fetch(`${server.url}/tsa`, {
      method: 'POST',
      headers: { 'content-type': 'application/timestamp-query' },
      body: fs.readFileSync(q),
    });
    expect(res.status).toBe(200);
    files.sha512.tsr = path.join(tmp, 'sha512.txt.tsr');
    fs.writeFileSync(files.sha512.tsr, Buffer.from(await res.arrayBuffer()));
    expect(
      openssl(
        [
          'ts',
          '-verify',
          '-queryfile',
          q,
          '-in',
          files.sha512.tsr,
          '-CAfile',
          'keys/timeseal-tsa-root.pem',
          '-untrusted',
          'keys/timeseal-tsa.pem',
        ],
        project.dir,
      ),
    ).toContain('Verification: OK');
  });
});

describe('checking a receipt on /verify', () => {
  it('before the day is published: pending, with when it will be; another file: not for this file; a flipped byte: not valid', async () => {
    const { context, page } = await newPage();
    // The browser keeps its own clock, a year and more after the server's (TIMESEAL_NOW): the page judges the
    // day's publication by the server's clock (its Date header), so it is still ahead.
    const pending = await checkOnVerify(page, files.kept.tsr, { file: files.kept.file }, 'receipt-check-pending');
    expect(pending.state).toBe('pending');
    expect(pending.text).toContain('A valid receipt for this file.');
    expect(pending.text).toContain(
      'Pending: the ledger of November 3, 2025 will be published at 00:01 UTC on November 4, 2025; check again after that.',
    );
    expect(pending.text).toContain('2025-11-03 10:00:00.000 UTC');
    // The TSA is named after the log origin (the origin's host).
    const host = new URL(project.env.TIMESEAL_ORIGIN!).host;
    expect(pending.text).toContain(`Time-stamp authority O=${host}, CN=Timeseal TSA ${host} `);
    expect(pending.text).toContain(
      `Certificate chain O=${host}, CN=Timeseal TSA ${host} → O=${host}, CN=Timeseal TSA root `,
    );
    expect(pending.text).toContain('Signature and chain verified up to the Timeseal TSA root published by this site.');

    const other = await checkOnVerify(page, files.kept.tsr, { file: files.broken.file });
    expect(other.state).toBe('mismatch');
    expect(other.text).toContain(
      `This receipt is not for this file: the receipt is for another SHA-256 digest (${files.kept.hash}, not ${files.broken.hash}).`,
    );

    const der = fs.readFileSync(files.kept.tsr);
    const at = der.indexOf(Buffer.from(files.kept.hash, 'hex'));
    expect(at).toBeGreaterThan(0);
    der[at] = der[at]! ^ 0x01;
    const flipped = path.join(tmp, 'flipped.tsr');
    fs.writeFileSync(flipped, der);
    const invalid = await checkOnVerify(page, flipped, { file: files.kept.file }, 'receipt-check-invalid');
    expect(invalid.state).toBe('invalid');
    expect(invalid.text).toContain(
      "This receipt is not valid: the token's signature does not verify: the signed digest is not the TSTInfo's.",
    );
    await context.close();
  });

  it('after the day is built: kept with its leaf and time; broken for a hash the ledger lacks; a SHA-512 token kept through its TSTInfo', async () => {
    // The broken promise: the hash's row disappears before the day is built, although its receipt was sent.
    const db = new Database(project.env.TIMESEAL_DB!);
    expect(db.prepare('DELETE FROM submissions WHERE hash = ?').run(files.broken.hash).changes).toBe(1);
    db.close();
    cli(['ledger', 'build', '--date', DAY], { env: project.env, now: NEXT_DAY });
    const ledger = JSON.parse(fs.readFileSync(path.join(project.env.TIMESEAL_ARCHIVE!, `${DAY}.json`), 'utf8')) as {
      entries: [string, string][];
      first_index: number;
    };
    const leaf = ledger.entries.findIndex(([h]) => h === files.kept.hash);
    expect(leaf).toBeGreaterThanOrEqual(0);

    const { context, page } = await newPage();
    const kept = await checkOnVerify(page, files.kept.tsr, { file: files.kept.file }, 'receipt-check-kept');
    expect(kept.state).toBe('kept');
    expect(kept.text).toContain(
      `Promise kept: the hash is leaf #${ledger.first_index + leaf} of the ledger of November 3, 2025, recorded at ${ledger.entries[leaf]![1].replace('T', ' ').replace('Z', ' UTC')}.`,
    );
    await expect(page.locator('[data-testid=receipt-promise] a').getAttribute('href')).resolves.toBe(
      `/ledgers/${DAY}.json`,
    );

    const broken = await checkOnVerify(
      page,
      files.broken.tsr,
      { hash: files.broken.hash.toUpperCase() },
      'receipt-check-broken',
    );
    expect(broken.state).toBe('broken');
    expect(broken.text).toContain('A valid receipt for this hash.');
    expect(broken.text).toContain(
      `This receipt is evidence of a broken promise: the ledger of ${DAY} is published and does not hold ${files.broken.hash}.`,
    );

    const sha512 = await checkOnVerify(page, files.sha512.tsr, { file: files.sha512.file });
    expect(sha512.state).toBe('kept');
    expect(sha512.text).toContain('Imprint (SHA-512)');
    expect(sha512.text).toContain("(SHA-256 of the token's TSTInfo)");
    // The same receipt with the file's SHA-256 pasted: the imprint is SHA-512, so that hash cannot be compared.
    const short = await checkOnVerify(page, files.sha512.tsr, { hash: sha256sum(files.sha512.file) });
    expect(short.state).toBe('mismatch');
    expect(short.text).toContain('This receipt is not for this hash: ');
    expect(short.text).toContain(
      "the receipt's imprint is SHA-512: give the file, or its SHA-512 hash (128 hexadecimal characters)",
    );
    await context.close();
  });
});

describe('the time-stamp authority policy', () => {
  it('renders on /tsa-policy with the endpoint, the policy OID and the certificates, linked from the footer and /verify', async () => {
    const { context, page } = await newPage();
    const scripts: string[] = [];
    page.on('request', (r) => scripts.push(new URL(r.url()).pathname));
    await page.goto('/verify');
    await hydrated(page, '#receipt-file');
    // Without a receipt, /verify does not load the receipt checker.
    expect(scripts.filter((p) => p.includes('/receipt-check.'))).toEqual([]);
    await expect(
      page.locator('footer').getByRole('link', { name: 'Time-stamp authority' }).getAttribute('href'),
    ).resolves.toBe('/tsa-policy');
    await page
      .locator('[data-testid=receipt-check]')
      .getByRole('link', { name: "time-stamp authority's policy" })
      .click();
    await page.waitForURL('**/tsa-policy');
    await expect(page.locator('h1').textContent()).resolves.toBe('Time-stamp authority');
    await expect(page.locator('[data-testid=policy-oid]').textContent()).resolves.toBe(POLICY_OID);
    await page.waitForFunction(
      (url) => document.querySelector('[data-testid=tsa-endpoint]')?.textContent === `POST${url}/tsa`,
      server.url,
    );
    const text = (await page.locator('main').innerText()).replace(/\s+/g, ' ');
    for (const phrase of [
      'application/timestamp-query',
      'to within ±1 second',
      'published permanently',
      "SHA-256 of the token's DER TSTInfo",
      'not qualified electronic time stamps',
      'Every imprint becomes public, permanently',
      'timeseal receipt check FILE.tsr --digest HEX',
      'openssl ts -verify -digest HEX -in FILE.tsr',
      'Free: no account, no key.',
      'The operator may cap requests per address',
    ]) {
      expect(text, phrase).toContain(phrase);
    }
    for (const href of ['/keys/timeseal-tsa-root.pem', '/keys/timeseal-tsa.pem', '/tsa/certs']) {
      await expect(page.locator(`main a[href="${href}"]`).count(), href).resolves.toBe(1);
      expect((await fetch(server.url + href)).status, href).toBe(200);
    }
    await context.close();
  });
});

// Only takes screenshots: registered under `make screenshots` alone.
if (CAPTURE) {
  describe('screenshots', () => {
    it('captures the receipt offer and the kept receipt at 1280 and 390 px, dark and light', async () => {
      const b64 = fs.readFileSync(files.kept.tsr).toString('base64');
      for (const [label, width] of [
        ['desktop', 1280],
        ['phone', 390],
      ] as const) {
        for (const theme of ['dark', 'light'] as const) {
          const { context, page } = await newPage({ theme, width });
          // The day is published and the free tier used up: the offer is shown with the receipt of the first file.
          await page.route('**/api/submit', (route) =>
            route.fulfill({
              status: 201,
              contentType: 'application/json',
              body: JSON.stringify({ ok: true, remainingToday: 1, receipt: b64 }),
            }),
          );
          await page.goto('/proof');
          await submitAndDownload(page, 'proof-dropzone-input', files.kept.file, tmp);
          await page.getByText('Hash queued!').waitFor();
          await page.getByRole('button', { name: 'Close notification' }).click();
          await page.locator('#toaster li').waitFor({ state: 'detached' });
          shots.push(
            (await capture(page.locator('section:has(#proof-dropzone-input)'), `receipt-offer-${label}-${theme}`))!,
          );
          await checkOnVerify(page, files.kept.tsr, { file: files.kept.file });
          shots.push(
            (await capture(page.locator('[data-testid=receipt-check]'), `receipt-check-kept-${label}-${theme}`))!,
          );
          await context.close();
        }
      }
      expect(pngProblems(shots, start)).toEqual([]);
    }, 120_000);
  });
}

describe('page errors', () => {
  it('raised no uncaught error in any page', () => {
    expect(pageErrors).toEqual([]);
  });
});
