// Timestamped PDFs made in the browser (site/src/lib/pdf-stamp.ts), in Debian's Chromium against the real server
// (`timeseal serve` on a temporary project): a PDF given to the drop zone on /proof and on / offers "Timestamp
// this PDF", and its download `<name>.timestamped.pdf` is checked with tools we did not write — `qpdf --check`
// passes, poppler's `pdfsig` lists the time-stamp (and still validates a PDFBox signature made before it),
// `openssl ts -verify` accepts the token over the bytes its ByteRange names with the published TSA root, and
// the input is a byte-for-byte prefix. The PDFs: a real pdfTeX file with an xref stream and object streams, a
// form signed by PDFBox, one of 20 MB made here (an uncompressed image of random bytes, laid out by qpdf), and
// an encrypted (qpdf --encrypt) and a damaged one, each refused in one sentence with nothing sent. The network
// log (playwright's request events) shows no request carrying PDF bytes: besides the drop zone's JSON
// submission of the file's hash, only the TimeStampReq, under 200 bytes. Under `make screenshots` also the offer
// and the result at 1280 and 390 px, dark and light.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { byteRangesOf, covered, fixture, gapToken, pdfbox, tool } from '../pdf/tools.ts';
import { writeBigPdf } from '../support/big-pdf.ts';
import {
  capture,
  CAPTURE,
  cli,
  openPage,
  pngProblems,
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

let project: Project;
let server: Server;
let browser: Browser;
let tmp: string;
const pageErrors: string[] = [];
const shots: string[] = [];
const start = Date.now();

/** Every request a page made, with its body. */
interface Sent {
  method: string;
  path: string;
  contentType: string | null;
  body: Buffer | null;
}

const inputs = { xrefStream: '', signed: '', big: '', encrypted: '', damaged: '' };
/** The downloads, for /verify. */
const stamped = { xrefStream: '', signed: '' };

async function newPage(
  options: { theme?: 'light' | 'dark'; width?: number } = {},
): Promise<{ page: Page; sent: Sent[] }> {
  const { page } = await openPage(browser, server, { ...options, downloads: true, errors: pageErrors });
  const sent: Sent[] = [];
  page.on('request', (r: Request) =>
    sent.push({
      method: r.method(),
      path: new URL(r.url()).pathname,
      contentType: r.headers()['content-type'] ?? null,
      body: r.postDataBuffer(),
    }),
  );
  return { page, sent };
}

async function hydrated(page: Page, selector: string): Promise<void> {
  await page.locator(selector).first().scrollIntoViewIfNeeded();
  await page.waitForFunction((s) => {
    const island = document.querySelector(s)?.closest('astro-island');
    return !!island && !island.hasAttribute('ssr');
  }, selector);
}

/** Gives `file` to the drop zone at `route`, and returns its list item once it offers the PDF action. */
async function givePdf(page: Page, route: '/proof' | '/', file: string) {
  await page.goto(route);
  const input = route === '/' ? '#home-dropzone-input' : '#proof-dropzone-input';
  await hydrated(page, input);
  await page.setInputFiles(input, file);
  const item = page.locator('li', { hasText: path.basename(file) });
  await item.getByRole('button', { name: 'Timestamp this PDF' }).waitFor();
  return item;
}

/** Presses "Timestamp this PDF" and saves the download into tmp. */
async function stampAndDownload(page: Page, item: ReturnType<Page['locator']>, file: string): Promise<string> {
  await item.getByRole('button', { name: 'Timestamp this PDF' }).click();
  const expected = `${path.basename(file, '.pdf')}.timestamped.pdf`;
  const link = item.getByRole('link', { name: 'Download timestamped PDF' });
  await link.waitFor({ timeout: 60_000 });
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  expect(download.suggestedFilename()).toBe(expected);
  const saved = path.join(tmp, `${path.basename(file, '.pdf')}.${crypto.randomUUID().slice(0, 8)}.timestamped.pdf`);
  await download.saveAs(saved);
  expect(await item.locator('[data-testid=pdf-stamp-name]').textContent()).toBe(expected);
  return saved;
}

/** The checks of a downloaded timestamped PDF with tools we did not write; returns pdfsig's output. */
function checkDownload(input: string, output: string): string {
  const before = fs.readFileSync(input);
  const after = fs.readFileSync(output);
  expect(after.length).toBeGreaterThan(before.length);
  expect(after.subarray(0, before.length).equals(before), 'the input is a prefix of the output').toBe(true);
  const check = tool('qpdf', ['--check', output]);
  expect(check.code, `${check.stdout}${check.stderr}`).toBe(0);
  const sig = tool('pdfsig', [output]);
  expect(sig.stdout).toMatch(/Signature Field Name: Timeseal time-stamp/);
  // The token over the bytes the last ByteRange names, with the root this server publishes.
  const pdf = new Uint8Array(after);
  const range = byteRangesOf(pdf).at(-1)!;
  expect(range[2] + range[3]).toBeLessThanOrEqual(pdf.length);
  const data = path.join(tmp, 'range.bin');
  const token = path.join(tmp, 'token.der');
  fs.writeFileSync(data, covered(pdf, range));
  fs.writeFileSync(token, gapToken(pdf, range));
  const root = path.join(project.dir, 'keys/timeseal-tsa-root.pem');
  const ok = tool('openssl', ['ts', '-verify', '-data', data, '-in', token, '-token_in', '-CAfile', root]);
  expect(`${ok.stdout}${ok.stderr}`).toMatch(/Verification: OK/);
  return sig.stdout;
}

/** What a stamp sent: one TimeStampReq to POST /tsa under 200 bytes, and no body holding PDF bytes. */
function expectOnlyDigestSent(sent: Sent[], input: string): void {
  // The network log, one line: each request with a body, its type and size (the page's GETs counted).
  const bodies = sent
    .filter((s) => s.body !== null)
    .map((s) => `${s.method} ${s.path} ${s.contentType} ${s.body!.length} B`);
  console.log(
    `[Chromium network log ${path.basename(input)}] ${sent.length - bodies.length} requests without a body; ${bodies.join(' | ')}`,
  );
  const tsa = sent.filter((s) => s.path === '/tsa');
  expect(tsa.map((s) => [s.method, s.contentType])).toEqual([['POST', 'application/timestamp-query']]);
  expect(tsa[0]!.body!.length).toBeLessThan(200);
  const pdf = fs.readFileSync(input);
  const sample = pdf.subarray(0, 64);
  for (const s of sent.filter((x) => x.body !== null)) {
    expect(s.body!.includes(sample), `${s.method} ${s.path} carries the PDF's first bytes`).toBe(false);
    expect(s.body!.includes(Buffer.from('%PDF')), `${s.method} ${s.path} carries PDF bytes`).toBe(false);
    expect(s.body!.length, `${s.method} ${s.path}`).toBeLessThan(1024);
  }
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-pdf-browser-'));
  // Each file's hash is also submitted by the drop zone: a free tier of its own (a development server's,
  // ingest/config.ts) keeps the daily limit out of the way.
  ({ project, server, browser } = await startSite({
    keysNow: KEYS_NOW,
    now: NOW,
    env: { FREE_TIER_DAILY_LIMIT: '100', TIMESEAL_ORIGIN: 'http://localhost' },
  }));

  inputs.xrefStream = path.join(tmp, 'shared-mime-info-spec.pdf');
  fs.writeFileSync(inputs.xrefStream, fixture('shared-mime-info-spec.pdf'));
  const form = path.join(tmp, 'form.pdf');
  fs.writeFileSync(form, fixture('form.pdf'));
  inputs.signed = path.join(tmp, 'contract signed.pdf');
  pdfbox(tmp).sign(form, inputs.signed);
  expect(tool('pdfsig', [inputs.signed]).stdout).toMatch(/Signature Validation: Signature is Valid\./);
  inputs.big = path.join(tmp, 'scan-20mb.pdf');
  writeBigPdf(inputs.big, 20 * 2 ** 20);
  const hello = path.join(tmp, 'hello.pdf');
  fs.writeFileSync(hello, fixture('hello.pdf'));
  inputs.encrypted = path.join(tmp, 'locked.pdf');
  expect(tool('qpdf', ['--encrypt', 'user', 'owner', '256', '--', hello, inputs.encrypted]).code).toBe(0);
  inputs.damaged = path.join(tmp, 'broken.pdf');
  fs.writeFileSync(inputs.damaged, fixture('hello-src.pdf'));
}, 180_000);

afterAll(async () => {
  await stopSite({ browser, server, project });
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('Timestamp this PDF, in the browser', () => {
  it('a real pdfTeX file with an xref stream, on /proof: the download passes qpdf, pdfsig and openssl; only the TimeStampReq was sent', async () => {
    const { page, sent } = await newPage();
    const item = await givePdf(page, '/proof', inputs.xrefStream);
    const saved = await stampAndDownload(page, item, inputs.xrefStream);
    stamped.xrefStream = saved;
    checkDownload(inputs.xrefStream, saved);
    expectOnlyDigestSent(sent, inputs.xrefStream);
    // The digest shown is the SHA-256 over the ByteRange of the download.
    const pdf = new Uint8Array(fs.readFileSync(saved));
    const range = byteRangesOf(pdf).at(-1)!;
    const digest = crypto.createHash('sha256').update(covered(pdf, range)).digest('hex');
    expect((await item.locator('[data-testid=pdf-digest]').textContent())!.trim()).toBe(digest);
    await page.context().close();
  }, 90_000);

  it('a PDF signed by PDFBox, on the home page: pdfsig still validates the signature made before the time-stamp', async () => {
    const { page, sent } = await newPage();
    const item = await givePdf(page, '/', inputs.signed);
    const saved = await stampAndDownload(page, item, inputs.signed);
    stamped.signed = saved;
    const sig = checkDownload(inputs.signed, saved);
    expect(sig).toMatch(
      /Signature #1:\n\s+- Signature Field Name: Signature1[\s\S]*?Signature Validation: Signature is Valid\.[\s\S]*Signature #2:\n\s+- Signature Field Name: Timeseal time-stamp/,
    );
    expectOnlyDigestSent(sent, inputs.signed);
    await page.context().close();
  }, 90_000);

  it('a PDF of 20 MB: stamped on this device, nothing of it sent', async () => {
    expect(fs.statSync(inputs.big).size).toBeGreaterThan(20 * 2 ** 20);
    const { page, sent } = await newPage();
    const item = await givePdf(page, '/proof', inputs.big);
    const saved = await stampAndDownload(page, item, inputs.big);
    checkDownload(inputs.big, saved);
    expectOnlyDigestSent(sent, inputs.big);
    await page.context().close();
  }, 180_000);

  it.each([
    [
      'an encrypted',
      () => inputs.encrypted,
      /^This PDF is encrypted, so a time-stamp cannot be added without its password/,
    ],
    ['a damaged', () => inputs.damaged, /^This PDF is damaged: .*has no startxref/],
  ])(
    '%s PDF gets one sentence saying why, and nothing is sent to the TSA',
    async (_kind, file, sentence) => {
      const { page, sent } = await newPage();
      const item = await givePdf(page, '/proof', file());
      await item.getByRole('button', { name: 'Timestamp this PDF' }).click();
      const refused = item.locator('[data-testid=pdf-stamp-refused]');
      await refused.waitFor();
      const text = (await refused.textContent())!.trim();
      expect(text).toMatch(sentence);
      expect(text.match(/[.!?](\s|$)/g)?.length, text).toBe(1);
      expect(sent.filter((s) => s.path === '/tsa')).toEqual([]);
      expect(await item.getByRole('link', { name: /timestamped\.pdf/ }).count()).toBe(0);
      await page.context().close();
    },
    60_000,
  );

  it('no page error', () => {
    expect(pageErrors).toEqual([]);
  });
});

describe.runIf(CAPTURE)('screenshots', () => {
  it('the PDF offer and the result, at 1280 and 390 px, dark and light', async () => {
    for (const theme of ['light', 'dark'] as const) {
      for (const width of [1280, 390]) {
        const { page } = await newPage({ theme, width });
        const item = await givePdf(page, '/proof', inputs.signed);
        shots.push(...[await capture(item, `pdf-stamp-offer-${width}-${theme}`)].filter((f) => f !== undefined));
        await stampAndDownload(page, item, inputs.signed);
        shots.push(...[await capture(item, `pdf-stamp-result-${width}-${theme}`)].filter((f) => f !== undefined));
        const refusedItem = await givePdf(page, '/proof', inputs.encrypted);
        await refusedItem.getByRole('button', { name: 'Timestamp this PDF' }).click();
        await refusedItem.locator('[data-testid=pdf-stamp-refused]').waitFor();
        shots.push(
          ...[await capture(refusedItem, `pdf-stamp-refused-${width}-${theme}`)].filter((f) => f !== undefined),
        );
        await page.context().close();
      }
    }
    expect(pngProblems(shots, start)).toEqual([]);
  }, 240_000);
});

/** `pdf` with one more incremental update (a classic xref section) adding an object nothing refers to. */
function withLaterUpdate(pdf: Buffer): Buffer {
  const text = pdf.toString('latin1');
  const prev = Number([...text.matchAll(/startxref\s+(\d+)/g)].at(-1)![1]);
  const trailer = [...text.matchAll(/trailer\s*<<([\s\S]*?)>>\s*startxref/g)].at(-1)![1]!;
  const size = Number(/\/Size (\d+)/.exec(trailer)![1]);
  const root = /\/Root (\d+ \d+ R)/.exec(trailer)![1];
  const object = `${size} 0 obj\n<< /Note (added after the time-stamp) >>\nendobj\n`;
  const at = pdf.length + 1;
  const xrefAt = at + object.length;
  const update =
    `\n${object}xref\n${size} 1\n${String(at).padStart(10, '0')} 00000 n \n` +
    `trailer\n<< /Size ${size + 1} /Root ${root} /Prev ${prev} >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return Buffer.concat([pdf, Buffer.from(update, 'latin1')]);
}

interface PdfVerdict {
  state: string;
  stamps: string[];
  after: string | null;
  text: string;
}

/** On /verify: gives `file` to the PDF card and reads the verdict. */
async function checkPdfOnVerify(page: Page, file: string, shot?: string): Promise<PdfVerdict> {
  await page.goto('/verify');
  await hydrated(page, '#pdf-check-file');
  await page.setInputFiles('#pdf-check-file', file);
  const result = page.locator('[data-testid=pdf-check-result]');
  await result.waitFor({ timeout: 30_000 });
  if (shot)
    shots.push(...[await capture(page.locator('[data-testid=pdf-check]'), shot)].filter((f) => f !== undefined));
  return {
    state: (await result.getAttribute('data-state'))!,
    stamps: await page
      .locator('[data-testid=pdf-check-stamp]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-state')!)),
    after: await page
      .locator('[data-testid=pdf-check-after]')
      .getAttribute('data-kind', { timeout: 1000 })
      .catch(() => null),
    text: (await result.innerText()).replace(/\s+/g, ' '),
  };
}

describe('/verify checks a timestamped PDF', () => {
  it('before the day is published: valid, its promise pending, the DSS after it named as validation data', async () => {
    const { page, sent } = await newPage();
    const v = await checkPdfOnVerify(page, stamped.xrefStream);
    expect(v.state).toBe('valid');
    expect(v.stamps).toEqual(['pending']);
    expect(v.after).toBe('validation-data');
    expect(v.text).toContain('Time-stamp 1: valid.');
    expect(v.text).toContain('Pending: the ledger of');
    expect(v.text).toContain('2025-11-03 10:00:');
    const pdf = new Uint8Array(fs.readFileSync(stamped.xrefStream));
    const digest = crypto
      .createHash('sha256')
      .update(covered(pdf, byteRangesOf(pdf).at(-1)!))
      .digest('hex');
    expect(v.text).toContain(digest);
    // The PDF was read on this device.
    expect(sent.filter((s) => s.body !== null)).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('one flipped byte in what the time-stamp covers: not valid, with the reason', async () => {
    const pdf = Buffer.from(fs.readFileSync(stamped.xrefStream));
    pdf[1000] = pdf[1000]! ^ 0x01;
    const file = path.join(tmp, 'flipped.pdf');
    fs.writeFileSync(file, pdf);
    const { page } = await newPage();
    const v = await checkPdfOnVerify(page, file);
    expect(v.state).toBe('invalid');
    expect(v.stamps).toEqual(['invalid']);
    expect(v.text).toMatch(/Time-stamp 1 is not valid: its token is for another SHA-256 digest/);
    await page.context().close();
  }, 60_000);

  it('an update after the time-stamp: its bytes are reported as not covered; the earlier signature is listed', async () => {
    const file = path.join(tmp, 'edited.pdf');
    const edited = withLaterUpdate(fs.readFileSync(stamped.signed));
    fs.writeFileSync(file, edited);
    expect(tool('qpdf', ['--check', file]).code).toBe(0);
    const { page } = await newPage();
    const v = await checkPdfOnVerify(page, file);
    expect(v.stamps).toEqual(['pending']);
    expect(v.after).toBe('changes');
    expect(v.text).toMatch(/Not covered: [\d,]+ bytes after the last time-stamp/);
    expect(v.text).toContain('1 other signature');
    await page.context().close();
  }, 60_000);

  it('bytes appended after the last %%EOF (no revision holds them): reported as not covered, not as validation data', async () => {
    const file = path.join(tmp, 'appended.pdf');
    const junk = '\n9 0 obj\n<< /Type /Catalog /Changed true >>\nendobj\n';
    fs.writeFileSync(file, Buffer.concat([fs.readFileSync(stamped.xrefStream), Buffer.from(junk, 'latin1')]));
    const { page } = await newPage();
    const v = await checkPdfOnVerify(page, file);
    expect(v.stamps).toEqual(['pending']);
    expect(v.after).toBe('changes');
    expect(v.text).toMatch(/Not covered: [\d,]+ bytes after the last time-stamp/);
    await page.context().close();
  }, 60_000);

  it("after the day's build: its promise kept, with the leaf", async () => {
    cli(['ledger', 'build', '--date', DAY], { env: project.env, now: NEXT_DAY });
    const { page } = await newPage();
    const v = await checkPdfOnVerify(page, stamped.xrefStream);
    expect(v.state).toBe('valid');
    expect(v.stamps).toEqual(['kept']);
    expect(v.text).toMatch(/Promise kept: the hash is leaf #\d+ of the ledger of/);
    await page.context().close();
  }, 60_000);

  it.runIf(CAPTURE)(
    "/verify's PDF verdict at 1280 and 390 px, dark and light",
    async () => {
      for (const theme of ['light', 'dark'] as const) {
        for (const width of [1280, 390]) {
          const { page } = await newPage({ theme, width });
          await checkPdfOnVerify(page, stamped.signed, `pdf-verify-kept-${width}-${theme}`);
          await checkPdfOnVerify(page, path.join(tmp, 'edited.pdf'), `pdf-verify-edited-${width}-${theme}`);
          await page.context().close();
        }
      }
      expect(pngProblems(shots, start)).toEqual([]);
    },
    240_000,
  );

  it('no page error', () => {
    expect(pageErrors).toEqual([]);
  });
});
