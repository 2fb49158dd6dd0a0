// Timeseal receipts in the offline verifier (docs/FORMAT.md §3b): real receipts made by the server's code
// (core/tsa-authority.ts with the TSA key and certificates of runtime/keys.ts initKeys) for submissions stored in a
// project whose days the real pipeline builds. Under Node (inputs.ts, checks.ts): what a receipt is taken for,
// and its verdicts — kept (leaf, the ledger's time), broken (the hash deleted before the build; a day with no
// ledger though a later day's signed ledger skips it, or days.json leaves it out), pending (no ledger given, or
// the day not published yet), not verified after any single flipped byte or against another archive's TSA root,
// unchecked without a root; a SHA-512 receipt. Then in Chromium from disk with the network off: a receipt with
// its file, the TSA root and the day's files, kept; a broken one; screenshots of both under `make screenshots`.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DAYS_PATH } from '../../core/archive.ts';
import { pemCertificates } from '../../core/rfc3161.ts';
import { ecdsaPublicKeyFromPem } from '../../core/sig.ts';
import {
  grantedResponse,
  ledgerHash,
  randomSerial,
  receiptRequest,
  tstInfo,
  type TimeStampRequest,
  type TsaIdentity,
} from '../../core/tsa-authority.ts';
import { encodeProofBundle } from '../../core/proof.ts';
import { buildLedgers } from '../../pipeline/build.ts';
import { buildProof } from '../../pipeline/proof.ts';
import { loadConfig, type Config } from '../../runtime/config.ts';
import { initKeys, loadSigningKeys } from '../../runtime/keys.ts';
import {
  verifyInputs,
  type KeyInput,
  type Report,
  type VerifierInputs,
} from '../../site/offline-verifier/src/checks.ts';
import { classifyFile, classifyText } from '../../site/offline-verifier/src/inputs.ts';
import { openDatabase, type DB } from '../../store/sqlite/db.ts';
import { openSqliteStore } from '../../store/sqlite/engine.ts';
import { enqueue } from '../../store/sqlite/queue.ts';
import { capture, CAPTURE } from '../site/helpers.ts';
import { buildVerifier, giveOfflinePage, launchChromium, sha256Hex, tempDir } from './helpers.ts';

const ORIGIN = 'https://timeseal.test';
const DAY1 = '2025-11-01';
const DAY2 = '2025-11-02';
const DAY3 = '2025-11-03';
const DAY4 = '2025-11-04';
const DAY_FILES = ['.json', '.json.sig', '.json.dilithium.sig', '.json.signatures.json', '.checkpoint'];

interface Project {
  dir: string;
  config: Config;
  db: DB;
  identity: TsaIdentity;
  root: string;
}

/** A project whose TSA certificate is valid from `from` (the project's clock at `keys init`). */
function makeProject(label: string, from: string): Project {
  const dir = tempDir(label);
  const config = loadConfig({
    TIMESEAL_DB: path.join(dir, 'data/timeseal.db'),
    TIMESEAL_ARCHIVE: path.join(dir, 'ledgers'),
    TIMESEAL_KEYS: path.join(dir, 'keys'),
    TIMESEAL_PRIVATE_KEYS: path.join(dir, 'data/private-keys'),
    TIMESEAL_SITE: path.join(dir, 'site'),
    TIMESEAL_OUTBOX: path.join(dir, 'data/outbox'),
    TIMESEAL_ORIGIN: ORIGIN,
  });
  initKeys({ keys: config.keys, privateKeys: config.privateKeys }, config.logOrigin, new Date(from));
  const key = crypto.createPrivateKey(fs.readFileSync(path.join(config.privateKeys, 'tsa_private.pem')));
  const identity: TsaIdentity = {
    certificates: pemCertificates(fs.readFileSync(path.join(config.keys, 'timeseal-tsa.pem'), 'utf8')),
    sign: (data) => new Uint8Array(crypto.sign('sha256', data, { key, dsaEncoding: 'der' })),
  };
  return { dir, config, db: openDatabase(config.db), identity, root: path.join(config.keys, 'timeseal-tsa-root.pem') };
}

/** The receipt the server answers for `request` stored at `at` (ingest/tsa-authority.ts: genTime = submittedAt). */
const receiptFor = (p: Project, request: TimeStampRequest, at: string): { der: Uint8Array; tst: Uint8Array } => {
  const tst = tstInfo(request, p.identity, new Date(at), randomSerial());
  return { der: grantedResponse(tst, request, p.identity), tst };
};

/** A SHA-512 request, as `openssl ts -query -sha512` makes it (certificates asked for, no nonce). */
function sha512Request(digest: Uint8Array): TimeStampRequest {
  const messageImprint = Uint8Array.from([
    0x30,
    0x4f,
    0x30,
    0x0b,
    0x06,
    0x09,
    0x60,
    0x86,
    0x48,
    0x01,
    0x65,
    0x03,
    0x04,
    0x02,
    0x03,
    0x04,
    0x40,
    ...digest,
  ]);
  return { algorithm: 'sha512', digest, messageImprint, certReq: true };
}

let p: Project;
let other: Project;
let work: string;
let keys: { ecdsa: KeyInput; mldsa: KeyInput };
/** The document of the kept receipt, and of the SHA-512 one. */
let contract: string;
let document512: string;
const receipts: Record<'kept' | 'broken' | 'skipped' | 'later' | 'unpublished' | 'sha512', string> = {} as never;
const hashes: Record<string, string> = {};

beforeAll(async () => {
  p = makeProject('receipt', `${DAY1}T00:00:00.000Z`);
  other = makeProject('receipt-other', `${DAY1}T00:00:00.000Z`);
  work = tempDir('receipt-work');
  contract = path.join(work, 'contract.pdf');
  fs.writeFileSync(contract, '%PDF-1.7 the contract, stamped with a receipt\n');
  document512 = path.join(work, 'drawing.svg');
  fs.writeFileSync(document512, '<svg xmlns="http://www.w3.org/2000/svg"/>\n');
  const write = (name: keyof typeof receipts, der: Uint8Array) =>
    fs.writeFileSync((receipts[name] = path.join(work, `${name}.tsr`)), der);
  const submit = (hash: string, at: string) => enqueue(p.db, [{ hash, submittedAt: new Date(at), source: 'import' }]);
  const remove = (hash: string) => p.db.prepare('DELETE FROM submissions WHERE hash = ?').run(hash);

  hashes.kept = sha256Hex(fs.readFileSync(contract));
  hashes.broken = sha256Hex('deleted before the build');
  hashes.skipped = sha256Hex('the only submission of the second day, deleted');
  hashes.later = sha256Hex('a submission of the third day');
  hashes.unpublished = sha256Hex('a submission of the fourth day, not built yet');
  const stamp = (name: 'kept' | 'broken' | 'skipped' | 'later' | 'unpublished', at: string, stored: boolean) => {
    if (stored) submit(hashes[name]!, at);
    write(name, receiptFor(p, receiptRequest(Buffer.from(hashes[name]!, 'hex')), at).der);
  };
  stamp('kept', `${DAY1}T09:15:00.123Z`, true);
  for (let i = 0; i < 3; i++) submit(sha256Hex(`day1-${i}`), `${DAY1}T10:0${i}:00.000Z`);
  stamp('broken', `${DAY1}T11:00:00.000Z`, true);
  // A SHA-512 receipt: the ledger holds the SHA-256 of its TSTInfo (docs/FORMAT.md §3b).
  const request = sha512Request(
    new Uint8Array(crypto.createHash('sha512').update(fs.readFileSync(document512)).digest()),
  );
  const r512 = receiptFor(p, request, `${DAY1}T12:00:00.000Z`);
  submit(Buffer.from(ledgerHash(request, r512.tst)).toString('hex'), `${DAY1}T12:00:00.000Z`);
  write('sha512', r512.der);
  stamp('skipped', `${DAY2}T08:00:00.000Z`, true);
  stamp('later', `${DAY3}T08:00:00.000Z`, true);
  stamp('unpublished', `${DAY4}T01:00:00.000Z`, false);
  // Stored, answered with a receipt, then gone before the day's ledger was built.
  remove(hashes.broken!);
  remove(hashes.skipped!);
  await buildLedgers({
    config: p.config,
    store: openSqliteStore(p.config.db, { db: p.db }),
    clock: () => new Date(`${DAY4}T00:01:00.000Z`),
    keys: loadSigningKeys({ keys: p.config.keys, privateKeys: p.config.privateKeys }),
  });
  keys = {
    ecdsa: {
      key: ecdsaPublicKeyFromPem(fs.readFileSync(path.join(p.config.keys, 'public.pem'), 'utf8')),
      source: 'test',
    },
    mldsa: { key: new Uint8Array(fs.readFileSync(path.join(p.config.keys, 'dilithium_public.key'))), source: 'test' },
  };
}, 60_000);

afterAll(() => {
  for (const x of [p, other]) x?.db.close();
  for (const d of [p?.dir, other?.dir, work]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

const dayFiles = (date: string) => DAY_FILES.map((s) => path.join(p.config.archive, `${date}${s}`));
const read = (file: string) => classifyFile(path.basename(file), new Uint8Array(fs.readFileSync(file)));
const authority = (file: string) => ({
  certs: pemCertificates(fs.readFileSync(file, 'utf8')),
  source: path.basename(file),
});
const rows = (r: Report) => r.sections.flatMap((s) => s.checks.map((c) => `${s.title} | ${c.label} | ${c.verdict}`));
const row = (r: Report, label: string) => r.sections.flatMap((s) => s.checks).find((c) => c.label.startsWith(label));

async function check(files: string[], extra: Partial<VerifierInputs> = {}): Promise<Report> {
  return verifyInputs({ files: files.map(read), keys, authority: authority(p.root), ...extra });
}

describe('what a receipt is taken for', () => {
  test("a receipt under any name, or its base64 as the JSON submissions answer it; a day's token by its archive name; days.json", () => {
    const der = fs.readFileSync(receipts.kept);
    expect(read(receipts.kept)).toMatchObject({ kind: 'receipt', name: 'kept.tsr' });
    expect(classifyFile('download', new Uint8Array(der)).kind).toBe('receipt');
    // The same bytes named as a day's token (YYYY-MM-DD.json.tsr) sit with that day's ledger: a TSA's token.
    expect(classifyFile(`${DAY1}.json.tsr`, new Uint8Array(der))).toMatchObject({ kind: 'tsr', date: DAY1 });
    const b64 = classifyText(der.toString('base64'));
    expect(b64?.kind).toBe('receipt');
    expect(Buffer.from(b64!.bytes).equals(der)).toBe(true);
    expect(
      classifyFile('receipt.txt', new TextEncoder().encode(`${der.toString('base64').replace(/(.{76})/g, '$1\n')}\n`))
        .kind,
    ).toBe('receipt');
    expect(read(path.join(p.config.archive, DAYS_PATH)).kind).toBe('days');
    expect(read(p.root).kind).toBe('tsa-ca');
    // A SHA-384 or SHA-512 hash pasted is a hash too.
    expect(classifyText('ab'.repeat(48))).toMatchObject({ kind: 'hash' });
    expect(classifyText('ab'.repeat(64))).toMatchObject({ kind: 'hash' });
  });
});

describe('verdicts', () => {
  test('kept: the receipt, its chain to the root, the document and the leaf of the day, with the ledger time', async () => {
    const r = await check([receipts.kept, ...dayFiles(DAY1)], { document: { hash: hashes.kept!, source: 'test' } });
    expect(r.summary.state, rows(r).join('\n')).toBe('ok');
    const title = 'Timeseal receipt kept.tsr';
    expect(rows(r)).toEqual(
      expect.arrayContaining([
        `${title} | Claim | SHA-256 ${hashes.kept!.slice(0, 12)}…${hashes.kept!.slice(-8)} existed at ${DAY1}T09:15:00.123Z (UTC), stamped by O=timeseal.test, CN=Timeseal TSA timeseal.test; promised to be in the ledger of ${DAY1}`,
        `${title} | Receipt (RFC 3161 time-stamp) | Verified`,
        `${title} | Chain to the TSA root | Verified`,
        `${title} | Hash matches the document | Verified`,
        `${title} | Promise: in the ledger of ${DAY1} | Verified`,
      ]),
    );
    expect(row(r, 'Receipt')!.details).toEqual(
      expect.arrayContaining([
        `Time ${DAY1}T09:15:00.123Z (UTC)`,
        'TSA O=timeseal.test, CN=Timeseal TSA timeseal.test',
      ]),
    );
    expect(row(r, 'Chain to the TSA root')!.details).toEqual([
      'Certificates O=timeseal.test, CN=Timeseal TSA timeseal.test → O=timeseal.test, CN=Timeseal TSA root',
      'Root from timeseal-tsa-root.pem',
    ]);
    // The ledger is sorted by hash: the leaf is the kept hash's place among the day's five.
    const sorted = [hashes.kept!, ...[0, 1, 2].map((i) => sha256Hex(`day1-${i}`))];
    const ledger = JSON.parse(fs.readFileSync(dayFiles(DAY1)[0]!, 'utf8')) as { entries: [string, string][] };
    expect(ledger.entries.map((e) => e[0])).toEqual(expect.arrayContaining(sorted));
    const leaf = ledger.entries.findIndex((e) => e[0] === hashes.kept);
    expect(row(r, 'Promise')!.details).toEqual([
      `Leaf ${leaf}`,
      `Recorded at ${DAY1}T09:15:00.123Z (the ledger's time)`,
      `From ${DAY1}.json, checked above`,
    ]);
  });

  test('broken: the hash was deleted before the build; the signed ledger of its day does not hold it', async () => {
    const r = await check([receipts.broken, ...dayFiles(DAY1)]);
    expect(r.summary.state).toBe('fail');
    expect(r.summary.text).toBe(
      `Not verified: the ledger of ${DAY1} is published and does not hold ${hashes.broken}: the receipt is evidence of a broken promise (Timeseal receipt broken.tsr: Promise: in the ledger of ${DAY1})`,
    );
    expect(row(r, 'Receipt')!.verdict).toBe('Verified');
    // Without the root, the receipt could be anyone's: not evidence yet, and the page says what to add.
    const unrooted = await check([receipts.broken, ...dayFiles(DAY1)], { authority: undefined });
    expect(unrooted.summary.state).toBe('pending');
    expect(row(unrooted, 'Chain to the TSA root')!.verdict).toBe(
      'Not verified: not checked against a root: add timeseal-tsa-root.pem from /keys/',
    );
    expect(row(unrooted, 'Promise')!.verdict).toMatch(
      /^Not verified: its chain was not checked against a root \(add timeseal-tsa-root\.pem\): if the receipt is Timeseal's, the ledger of 2025-11-01 is published and does not hold/,
    );
  });

  test('a day with no ledger: broken when a later signed ledger skips it, or days.json leaves it out; pending without either', async () => {
    const alone = await check([receipts.skipped]);
    expect(alone.summary.state).toBe('pending');
    expect(row(alone, 'Promise')!.verdict).toBe(
      `Not verified: the ledger of ${DAY2} was not given: add ${DAY2}.json with its .sig, .dilithium.sig, .signatures.json and .checkpoint (or days.json, to see whether it is published)`,
    );
    expect(fs.existsSync(dayFiles(DAY2)[0]!)).toBe(false);
    const skipped = await check([receipts.skipped, ...dayFiles(DAY3)]);
    expect(skipped.summary.state).toBe('fail');
    expect(row(skipped, 'Promise')!.verdict).toBe(
      `Not verified: no ledger of ${DAY2} is published, yet later days are (through ${DAY3}): the receipt is evidence of a broken promise`,
    );
    expect(row(skipped, 'Promise')!.details).toEqual([
      `The signed ledger of ${DAY3} names ${DAY1} as the day before it`,
    ]);
    const listed = await check([receipts.skipped, path.join(p.config.archive, DAYS_PATH)]);
    expect(row(listed, 'Promise')!.verdict).toBe(
      `Not verified: no ledger of ${DAY2} is published, yet later days are (through ${DAY3}): the receipt is evidence of a broken promise`,
    );
    // A later day whose ledger names the receipt's day: that day is published, its files are what is missing.
    // The day's ledger without its signature files: not judged from it.
    const unsigned = await check([receipts.kept, dayFiles(DAY1)[0]!]);
    expect(row(unsigned, 'Promise')!.verdict).toBe(
      `Not verified: ${DAY1}.json is given but not verified with its signature files: see Ledger ${DAY1}`,
    );
    const named = await check([receipts.kept, ...dayFiles(DAY3)]);
    expect(row(named, 'Promise')!.verdict).toMatch(
      new RegExp(`^Not verified: the ledger of ${DAY1} is published: add ${DAY1}\\.json`),
    );
  });

  test('pending: the day is not published yet (days.json), or its ledger is not given; a later day kept', async () => {
    const r = await check([receipts.unpublished, path.join(p.config.archive, DAYS_PATH)]);
    expect(r.summary.state).toBe('pending');
    expect(row(r, 'Promise')!.verdict).toBe(
      `Not verified: the ledger of ${DAY4} is not published yet (published through ${DAY3})`,
    );
    const later = await check([receipts.later, ...dayFiles(DAY3)], {
      document: { hash: hashes.later!, source: 'test' },
    });
    expect(later.summary.state, rows(later).join('\n')).toBe('ok');
  });

  test('a SHA-512 receipt: the document is compared with its SHA-512, the ledger holds the SHA-256 of the TSTInfo', async () => {
    const sha512 = crypto.createHash('sha512').update(fs.readFileSync(document512)).digest('hex');
    const sha256 = sha256Hex(fs.readFileSync(document512));
    const files = [receipts.sha512, ...dayFiles(DAY1)];
    const asked = await check(files, { document: { hash: sha256, source: 'test' } });
    expect(row(asked, 'Hash matches the document')).toMatchObject({
      state: 'pending',
      verdict: 'Not verified: a SHA-512 receipt: choose the original file, or paste its SHA-512 hash',
      needsDigest: 'SHA-512',
    });
    expect(row(asked, 'Promise')!.verdict).toBe('Verified');
    const hashed = await check(files, { document: { hash: sha256, source: 'test', digests: { 'SHA-512': sha512 } } });
    expect(hashed.summary.state, rows(hashed).join('\n')).toBe('ok');
    const pasted = await check(files, { document: { hash: sha512, source: 'test' } });
    expect(pasted.summary.state).toBe('ok');
    expect(pasted.sections[0]!.checks[0]!.label).toBe('SHA-512');
    const another = await check(files, {
      document: { hash: sha256Hex(sha512), source: 'test', digests: { 'SHA-512': 'ab'.repeat(64) } },
    });
    expect(row(another, 'Hash matches the document')!.verdict).toBe(
      `Not verified: your document's SHA-512 ${'ab'.repeat(64)} is not the receipt's ${sha512}`,
    );
  });

  test("another document's hash, another archive's TSA root (same names, another key), no root at all", async () => {
    const mismatch = await check([receipts.kept], { document: { hash: sha256Hex('another'), source: 'test' } });
    expect(row(mismatch, 'Hash matches the document')!.verdict).toBe(
      `Not verified: your document's hash ${sha256Hex('another')} is not the receipt's hash ${hashes.kept}`,
    );
    const wrong = await check([receipts.kept], { authority: authority(other.root) });
    expect(wrong.summary.state).toBe('fail');
    // The root the receipt carries has the same name as the one given, but not its key.
    expect(row(wrong, 'Receipt')!.verdict).toBe(
      'Not verified: the certificate of O=timeseal.test, CN=Timeseal TSA root is not signed by O=timeseal.test, CN=Timeseal TSA root (the Timeseal TSA root is timeseal-tsa-root.pem in /keys/)',
    );
    const none = await check([receipts.kept], {
      authority: undefined,
      document: { hash: hashes.kept!, source: 'test' },
    });
    expect(none.summary.text).toBe(
      'Not verified: not checked against a root: add timeseal-tsa-root.pem from /keys/ (Timeseal receipt kept.tsr: Chain to the TSA root)',
    );
  });

  test("a proof bundle's receipts (timeseal-proof/3): checked as receipts, for the bundle's hash, without holding back its verdict", async () => {
    const bundleWith = (name: string, ...files: string[]) => {
      const bundle = buildProof(p.config.archive, p.config.logOrigin, hashes.kept!, {
        ecdsa: keys.ecdsa.key,
        mldsa: keys.mldsa.key,
      });
      const file = path.join(work, name);
      fs.writeFileSync(
        file,
        encodeProofBundle({ ...bundle, receipts: files.map((f) => fs.readFileSync(f).toString('base64')) }),
      );
      return file;
    };
    const bundle = bundleWith('proof.json', receipts.kept);
    const doc = { document: { hash: hashes.kept!, source: 'test' } };
    const full = await check([bundle, ...dayFiles(DAY1)], doc);
    expect(full.summary.state, rows(full).join('\n')).toBe('ok');
    expect(rows(full)).toEqual(
      expect.arrayContaining([
        `Timeseal receipt 1 in proof.json | Chain to the TSA root | Verified`,
        `Timeseal receipt 1 in proof.json | Promise: in the ledger of ${DAY1} | Verified`,
      ]),
    );
    // The bundle alone, without the root or the day: it verifies; what its receipt could not check is named.
    const alone = await check([bundle], { ...doc, authority: undefined });
    expect(alone.summary.state, rows(alone).join('\n')).toBe('ok');
    expect(rows(alone)).toContain(
      'Timeseal receipt 1 in proof.json | Chain to the TSA root | not checked here: not checked against a root: add timeseal-tsa-root.pem from /keys/',
    );
    // A receipt for another hash in the bundle, or a damaged one: not verified.
    const other = await check([bundleWith('other.json', receipts.broken)], doc);
    expect(rows(other)).toContain(
      `Timeseal receipt 1 in other.json | The bundle's hash | Not verified: the receipt is for ${hashes.broken}, not the bundle's ${hashes.kept}`,
    );
    const der = Buffer.from(fs.readFileSync(receipts.kept));
    der[der.length - 30]! ^= 1;
    const damaged = path.join(work, 'damaged.tsr');
    fs.writeFileSync(damaged, der);
    const bad = await check([bundleWith('damaged.json', damaged)], doc);
    expect(bad.summary.text).toMatch(
      /^Not verified: the token's signature does not verify .*\(Timeseal receipt 1 in damaged\.json: Receipt \(RFC 3161 time-stamp\)\)$/,
    );
  });

  test('every single flipped byte of the receipt: still a receipt, not verified, with the reason', async () => {
    const der = fs.readFileSync(receipts.kept);
    const reasons = new Set<string>();
    for (let i = 0; i < der.length; i++) {
      const bad = Buffer.from(der);
      bad[i]! ^= 0x01;
      const input = classifyFile('kept.tsr', new Uint8Array(bad));
      expect(input.kind, `byte ${i}`).toBe('receipt');
      const r = await verifyInputs({
        files: [input],
        keys,
        authority: authority(p.root),
        document: { hash: hashes.kept!, source: 'test' },
      });
      expect(r.summary.state, `byte ${i}: ${r.summary.text}`).toBe('fail');
      const verdict = row(r, 'Receipt')!.verdict;
      expect(verdict, `byte ${i}`).toMatch(/^Not verified: \S/);
      reasons.add(verdict.replace(/ \(.*/, '').replace(/[0-9a-f]{16,}/g, 'HEX'));
    }
    // The reasons name what broke: DER, the signature, the certificates, the policy, the status…
    expect(reasons.size).toBeGreaterThan(8);
  }, 60_000);
});

describe('in Chromium, from disk, with the network off', () => {
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];
  beforeAll(async () => {
    const out = path.join(work, 'site');
    buildVerifier(out, p.config.keys);
    const url = `file://${path.join(out, 'offline-verifier.html')}`;
    browser = await launchChromium();
    const context = await browser.newContext({ colorScheme: 'light' });
    await context.setOffline(true);
    await context.route('**/*', (route) =>
      route.request().url() === url
        ? route.continue()
        : (requests.push(route.request().url()), route.abort('internetdisconnected')),
    );
    page = await context.newPage();
    await page.goto(url);
  }, 60_000);
  afterAll(() => browser?.close());

  /** Gives the page the document file and `files`, waits until every check has its verdict, returns the rows. */
  async function verify(files: string[], doc?: string): Promise<{ state: string; summary: string; rows: string[] }> {
    await giveOfflinePage(page, files, doc);
    const rows = await page.$$eval('li.check', (lis) =>
      lis.map((li) => `${li.querySelector('.label')!.textContent} | ${li.querySelector('.verdict')!.textContent}`),
    );
    return {
      state: (await page.getAttribute('#summary', 'data-state'))!,
      summary: (await page.textContent('#summary'))!,
      rows,
    };
  }

  test('a receipt, its file, the TSA root and the day: kept, with the time, the TSA, the chain and the leaf', async () => {
    const r = await verify([receipts.kept, p.root, ...dayFiles(DAY1)], contract);
    expect(r.state, r.summary).toBe('ok');
    expect(r.summary).toMatch(/^Verified: all \d+ checks passed\./);
    expect(r.rows).toEqual(
      expect.arrayContaining([
        'Receipt (RFC 3161 time-stamp) | Verified',
        'Chain to the TSA root | Verified',
        'Hash matches the document | Verified',
        `Promise: in the ledger of ${DAY1} | Verified`,
        "Ledger format, signature metadata and the day's checkpoint | Verified",
      ]),
    );
    const section = (await page.locator('section.result', { hasText: 'Timeseal receipt kept.tsr' }).textContent())!;
    expect(section).toContain(`Time ${DAY1}T09:15:00.123Z (UTC)`);
    expect(section).toContain('TSA O=timeseal.test, CN=Timeseal TSA timeseal.test');
    expect(section).toMatch(/Leaf \d+/);
    expect(section).toContain(`Recorded at ${DAY1}T09:15:00.123Z (the ledger's time)`);
    if (CAPTURE) {
      for (const [name, scheme, width] of [
        ['1280-light', 'light', 1280],
        ['390-dark', 'dark', 390],
      ] as const) {
        await page.setViewportSize({ width, height: 900 });
        await page.emulateMedia({ colorScheme: scheme });
        await capture(page, `offline-verifier-receipt-kept-${name}`, { fullPage: true });
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      }
    }
  });

  test('a SHA-512 receipt: the page hashes the file with SHA-512 itself, then it is verified', async () => {
    const first = await verify([receipts.sha512, p.root, ...dayFiles(DAY1)], document512);
    expect(first.rows).toContain(`Promise: in the ledger of ${DAY1} | Verified`);
    const sha512 = crypto.createHash('sha512').update(fs.readFileSync(document512)).digest('hex');
    await page.waitForFunction(
      (text) => document.getElementById('doc-status')!.textContent === text,
      `SHA-512 of drawing.svg: ${sha512}`,
    );
    await expect.poll(() => page.textContent('#summary')).toMatch(/^Verified/);
    const row = page
      .locator('section.result', { hasText: 'Timeseal receipt sha512.tsr' })
      .locator('li.check', { hasText: 'Hash matches the document' });
    expect(await row.locator('.verdict').textContent()).toBe('Verified');
    expect(await page.locator('section.result').first().textContent()).toContain(`SHA-512 ${sha512}`);
  });

  test('broken, and a flipped byte: not verified, with the reason; no request made', async () => {
    const r = await verify([receipts.broken, p.root, ...dayFiles(DAY1)]);
    expect(r.state).toBe('fail');
    expect(r.summary).toContain('the receipt is evidence of a broken promise');
    if (CAPTURE) {
      for (const [name, scheme, width] of [
        ['1280-dark', 'dark', 1280],
        ['390-light', 'light', 390],
      ] as const) {
        await page.setViewportSize({ width, height: 900 });
        await page.emulateMedia({ colorScheme: scheme });
        await capture(page, `offline-verifier-receipt-broken-${name}`, { fullPage: true });
      }
      await page.setViewportSize({ width: 1280, height: 900 });
    }
    const bad = Buffer.from(fs.readFileSync(receipts.kept));
    bad[bad.length - 20]! ^= 0x01;
    const flipped = path.join(work, 'flipped', 'kept.tsr');
    fs.mkdirSync(path.dirname(flipped), { recursive: true });
    fs.writeFileSync(flipped, bad);
    const f = await verify([flipped, p.root, ...dayFiles(DAY1)], contract);
    expect(f.state).toBe('fail');
    expect(f.rows).toContainEqual(
      expect.stringMatching(/^Receipt \(RFC 3161 time-stamp\) \| Not verified: the token's signature does not verify/),
    );
    expect(requests).toEqual([]);
  });
});
