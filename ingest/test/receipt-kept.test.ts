// The receipts of the site's submissions are kept (store receipts, docs/DECISIONS.md) and given back: a person
// who lost the .tsr that POST /api/submit answered gets it again from the proof bundle (timeseal-proof/4,
// `receipts`) once the day is published, and from the certificate: the HTML page's download and the PDF's
// attachment <first 16 hex>.tsr, read back with Debian's poppler-utils (pdfdetach, pdftotext) and checked with
// stock `openssl ts -verify`. A logged-in paying user's history certificate (?id=) carries the receipt before
// the day is published too. The beta API's receipts are not kept; a refused submission keeps nothing. `timeseal
// proof` prints the same bundle from the database, and empty receipts where there is none.
import { spawnSync } from 'node:child_process';
import { timesealSync } from '../../test/support/cli-host.ts';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBase64, fromHex } from '../../core/encoding.ts';
import { parseProofBundle, verifyProofBundle } from '../../core/proof.ts';
import { checkReceipt } from '../../core/receipt.ts';
import { pemCertificates } from '../../core/rfc3161.ts';
import { buildLedgers } from '../../pipeline/build.ts';
import { loadPublicKeys, loadSigningKeys } from '../../runtime/keys.ts';
import { openSqliteStore } from '../../store/sqlite/engine.ts';
import { tokenHash } from '../accounts/tokens.ts';
import { childEnv, makeFixture, ORIGIN, randomHash, removeTempDirs, tempDir, TODAY, type Fixture } from './fixture.ts';
import type { SubmitAnswer } from '../routes/submit.ts';

const AT = [`${TODAY}T12:00:00.000Z`, `${TODAY}T12:00:05.000Z`, `${TODAY}T12:00:10.000Z`, `${TODAY}T12:00:15.000Z`];
const NEXT_DAY = '2025-11-04';

let f: Fixture;
let now = AT[0]!;
let root: Uint8Array[];
const hash = randomHash();
/** What POST /api/submit answered: submittedAt and the receipt's DER. */
const answered: Array<{ submittedAt: string; der: Uint8Array }> = [];
let historyId = 0;
/** GET /api/proof/<hash> once the day is built. */
let api = '';
let cookie = '';

const run = (command: string, args: string[]) => {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  if (r.error) throw r.error;
  return r;
};

/** The PDF's embedded files, as pdfdetach lists and saves them. */
function detach(pdf: Buffer): { list: string; files: Record<string, Buffer>; dir: string } {
  const dir = tempDir('pdfdetach');
  const file = path.join(dir, 'certificate.pdf');
  fs.writeFileSync(file, pdf);
  const list = run('pdfdetach', ['-list', file]);
  expect(list.status, list.stderr).toBe(0);
  const out = path.join(dir, 'attachments');
  fs.mkdirSync(out);
  const saved = run('pdfdetach', ['-saveall', '-o', out, file]);
  expect(saved.status, saved.stderr).toBe(0);
  return {
    list: list.stdout,
    files: Object.fromEntries(fs.readdirSync(out).map((name) => [name, fs.readFileSync(path.join(out, name))])),
    dir: out,
  };
}

function pdfText(pdf: Buffer): string {
  const file = path.join(tempDir('pdftext'), 'c.pdf');
  fs.writeFileSync(file, pdf);
  const r = run('pdftotext', ['-layout', '-enc', 'UTF-8', file, '-']);
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

/** `openssl ts -verify` of a .tsr for the hash with the archive's two TSA certificates. */
function opensslVerify(tsr: string, digest: string): { status: number | null; out: string } {
  const r = run('openssl', [
    'ts',
    '-verify',
    '-digest',
    digest,
    '-in',
    tsr,
    '-CAfile',
    path.join(f.config.keys, 'timeseal-tsa-root.pem'),
    '-untrusted',
    path.join(f.config.keys, 'timeseal-tsa.pem'),
  ]);
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

const submit = (ip: string, headers: Record<string, string> = {}, what = hash) =>
  f.app.inject({
    method: 'POST',
    url: '/api/submit',
    payload: { hash: what, fileName: 'contract.pdf' },
    remoteAddress: ip,
    headers,
  });

beforeAll(async () => {
  f = await makeFixture({ clock: () => new Date(now) });
  root = pemCertificates(fs.readFileSync(path.join(f.config.keys, 'timeseal-tsa-root.pem'), 'utf8'));
  // A logged-in paying user: the submission goes into the history (timestamps), the receipt into receipts.
  f.db
    .prepare(
      "INSERT INTO users (id, username, email, password, email_verified, created_at) VALUES ('payer', 'payer', 'payer@example.test', 'x', 1, ?)",
    )
    .run(AT[0]);
  f.db
    .prepare(
      "INSERT INTO subscriptions (user_id, stripe_customer_id, stripe_subscription_id, status) VALUES ('payer', 'cus_r', 'sub_r', 'active')",
    )
    .run();
  const session = `receipt-session-${'b'.repeat(40)}`;
  f.db
    .prepare(
      "INSERT INTO sessions (id_hash, user_id, created_at, expires_at) VALUES (?, 'payer', ?, '2099-01-01T00:00:00.000Z')",
    )
    .run(tokenHash(session), AT[0]);
  cookie = `ts_session=${session}`;
});
afterAll(async () => {
  await f?.close();
  removeTempDirs();
});

describe("the site's receipts are kept and given back", () => {
  it('POST /api/submit answers the receipt it stored with the row; a refused submission and the beta API keep none', async () => {
    for (const [i, ip] of ['198.51.100.60', '198.51.100.61'].entries()) {
      now = AT[i]!;
      const res = await submit(ip);
      expect(res.statusCode, res.body).toBe(201);
      const body = res.json() as SubmitAnswer;
      expect(body.submittedAt).toBe(now);
      answered.push({ submittedAt: body.submittedAt, der: fromBase64(body.receipt!) });
    }
    const stored = () =>
      f.db.prepare('SELECT submitted_at AS t, der FROM receipts WHERE hash = ? ORDER BY id').all(hash) as Array<{
        t: string;
        der: Buffer;
      }>;
    expect(stored().map((r) => [r.t, Buffer.from(r.der).toString('base64')])).toEqual(
      answered.map((a) => [a.submittedAt, Buffer.from(a.der).toString('base64')]),
    );
    // Over the free tier's limit: 429, no receipt kept.
    expect((await submit('198.51.100.60', {}, randomHash())).statusCode).toBe(201);
    const before = f.rowCounts();
    expect(before.receipts).toBe(3);
    expect((await submit('198.51.100.60')).statusCode).toBe(429);
    expect((await submit('198.51.100.60')).statusCode).toBe(429);
    expect(f.rowCounts()).toEqual(before);
    // The beta API's receipt is the client's to keep: its row is stored, its receipt is not.
    now = AT[3]!;
    const beta = await f.app.inject({
      method: 'POST',
      url: '/api/v1/beta/timestamp',
      payload: { hash, receipt: true },
      remoteAddress: '198.51.100.62',
    });
    expect(beta.statusCode).toBe(201);
    expect(beta.json()).toHaveProperty('receipt');
    expect(stored()).toHaveLength(2);
    // The paying user's submission: a history row and a third receipt.
    now = AT[2]!;
    const mine = await submit('198.51.100.63', { cookie, origin: ORIGIN });
    expect(mine.statusCode, mine.body).toBe(201);
    expect(mine.json()).toHaveProperty('remainingThisMonth');
    answered.push({ submittedAt: now, der: fromBase64((mine.json() as SubmitAnswer).receipt!) });
    expect(stored()).toHaveLength(3);
    historyId = (
      f.db.prepare("SELECT id FROM timestamps WHERE user_id = 'payer' AND hash = ?").get(hash) as { id: number }
    ).id;
    expect(historyId).toBeGreaterThan(0);
  });

  it('before the day is published: the owner’s pending certificate carries their receipt (HTML download and PDF attachment); the hash= certificate says nothing', async () => {
    const html = await f.app.inject({
      method: 'GET',
      url: `/api/certificate.php?id=${historyId}`,
      headers: { cookie },
    });
    expect(html.statusCode).toBe(200);
    expect(html.body).toContain('pending');
    expect(html.body).toContain('<h2>RFC 3161 receipt</h2>');
    const href = /href="data:application\/timestamp-reply;base64,([^"]+)" download="([0-9a-f]{16}\.tsr)"/.exec(
      html.body,
    );
    expect(href?.[2]).toBe(`${hash.slice(0, 16)}.tsr`);
    expect(Buffer.from(href![1]!, 'base64').equals(Buffer.from(answered[2]!.der))).toBe(true);
    const pdf = await f.app.inject({
      method: 'GET',
      url: `/api/certificate.php?id=${historyId}&format=pdf`,
      headers: { cookie },
    });
    expect(pdf.statusCode).toBe(200);
    const { files } = detach(pdf.rawPayload);
    expect(Object.keys(files)).toEqual([`${hash.slice(0, 16)}.tsr`]);
    expect(files[`${hash.slice(0, 16)}.tsr`]!.equals(Buffer.from(answered[2]!.der))).toBe(true);
    expect(pdfText(pdf.rawPayload)).toContain('Timestamp Certificate (pending)');
    // Nobody else sees an unpublished hash, nor its receipts.
    const anyone = await f.app.inject({ method: 'GET', url: `/api/certificate.php?hash=${hash}` });
    expect(anyone.statusCode).toBe(404);
    expect(anyone.body).not.toContain('RFC 3161 receipt');
    expect((await f.app.inject({ method: 'GET', url: `/api/certificate.php?id=${historyId}` })).statusCode).toBe(404);
  });

  it('once the day is built: GET /api/proof/<hash> is a timeseal-proof/4 bundle whose receipts check for the hash, earliest first', async () => {
    const store = openSqliteStore(f.config.db, { db: f.db });
    try {
      await buildLedgers({
        config: f.config,
        store,
        clock: () => new Date(`${NEXT_DAY}T00:01:00.000Z`),
        keys: loadSigningKeys({ keys: f.config.keys, privateKeys: f.config.privateKeys }),
      });
    } finally {
      await store.close();
    }
    const res = await f.app.inject(`/api/proof/${hash}`);
    expect(res.statusCode, res.body).toBe(200);
    api = res.body;
    const json = JSON.parse(res.body) as { format: string; receipts: string[] };
    expect(json.format).toBe('timeseal-proof/4');
    const bundle = parseProofBundle(res.body);
    expect(bundle.date).toBe(TODAY);
    expect(bundle.submittedAt).toBe(AT[0]);
    expect(() => verifyProofBundle(bundle, loadPublicKeys(f.config.keys))).not.toThrow();
    // The site's three, earliest first; the beta API's is not among them.
    expect(bundle.receipts).toEqual(
      [answered[0]!, answered[1]!, answered[2]!].map((a) => Buffer.from(a.der).toString('base64')),
    );
    for (const [i, text] of bundle.receipts.entries()) {
      const facts = await checkReceipt(fromBase64(text), root, fromHex(hash));
      expect(facts.anchored).toBe(true);
      expect(facts.ledgerHash).toBe(hash);
      expect(facts.date).toBe(bundle.date);
      expect(facts.genTime.toISOString()).toBe([AT[0], AT[1], AT[2]][i]);
    }
    // A hash published without a receipt (imported): an empty list, still version 3.
    const imported = JSON.parse((await f.app.inject(`/api/proof/${f.published[0]}`)).body) as {
      format: string;
      receipts: string[];
    };
    expect(imported).toMatchObject({ format: 'timeseal-proof/4', receipts: [] });
  });

  it('timeseal proof prints the same bundle from the database; without a database here, empty receipts, said on stderr', () => {
    const cli = (env: Record<string, string>) =>
      timesealSync(['proof', hash], { cwd: f.dir, env: childEnv({ ...f.env, ...env }) });
    const withDb = cli({});
    expect(withDb.status, withDb.stderr).toBe(0);
    expect(withDb.stderr).toBe('');
    expect(withDb.stdout).toBe(api);
    const missing = path.join(f.dir, 'elsewhere/none.db');
    const without = cli({ TIMESEAL_DB: missing });
    expect(without.status, without.stderr).toBe(0);
    expect(without.stderr).toContain("the bundle's receipts are left empty");
    expect(JSON.parse(without.stdout)).toEqual({ ...JSON.parse(api), receipts: [] });
    expect(fs.existsSync(missing)).toBe(false);
  });

  it('the PDF certificate attaches the earliest receipt as <16 hex>.tsr, which openssl ts -verify accepts, and states it', async () => {
    const r = await f.app.inject({ method: 'GET', url: `/api/certificate.php?hash=${hash}&format=pdf` });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('application/pdf');
    const name = `${hash.slice(0, 16)}.tsr`;
    const { list, files, dir } = detach(r.rawPayload);
    // The receipt beside the proof bundle and the day's checkpoint.
    expect(list).toMatch(/^3 embedded files\n/);
    expect(list.split('\n').filter((l) => l.endsWith(`: ${name}`))).toHaveLength(1);
    expect(files[name]!.equals(Buffer.from(answered[0]!.der))).toBe(true);
    const ok = opensslVerify(path.join(dir, name), hash);
    expect(ok.out).toContain('Verification: OK');
    expect(ok.status).toBe(0);
    const wrong = opensslVerify(path.join(dir, name), randomHash());
    expect(wrong.status).not.toBe(0);
    expect(wrong.out).not.toContain('Verification: OK');
    const facts = await checkReceipt(files[name]!, root, fromHex(hash));
    const text = pdfText(r.rawPayload);
    const flat = text.replace(/\s+/g, ' ');
    expect(text).toContain('RFC 3161 receipt');
    expect(flat).toContain(`Time (UTC) ${TODAY} 12:00:00 UTC`);
    expect(flat).toContain(`Time-stamp authority ${facts.tsaName}`);
    expect(flat).toContain(`Serial number 0x${facts.serialNumber.replace(/^0+/, '').toUpperCase()}`);
    expect(flat).toContain(`attached to this PDF as ${name}`);
    expect(text.replace(/\s+/g, '')).toContain(
      `openssl ts -verify -digest ${hash} -in ${name} -CAfile timeseal-tsa-root.pem -untrusted timeseal-tsa.pem`.replace(
        /\s+/g,
        '',
      ),
    );
    // The certificates it names are served.
    for (const link of new Set(text.match(/https:\/\/timeseal\.test\/keys\/\S+/g) ?? [])) {
      expect(
        (await f.app.inject({ method: 'GET', url: link.replace('https://timeseal.test', '') })).statusCode,
        link,
      ).toBe(200);
    }
    // A hash without a kept receipt: no section, no attachment.
    const plain = await f.app.inject({ method: 'GET', url: `/api/certificate.php?hash=${f.published[0]}&format=pdf` });
    expect(Object.keys(detach(plain.rawPayload).files).filter((n) => n.endsWith('.tsr'))).toEqual([]);
    expect(pdfText(plain.rawPayload)).not.toContain('RFC 3161 receipt');
  });

  it('the HTML certificate shows the same section with a download of the .tsr; the owner’s shows their own receipt', async () => {
    const r = await f.app.inject({ method: 'GET', url: `/api/certificate.php?hash=${hash}` });
    expect(r.statusCode).toBe(200);
    const section = r.body.slice(r.body.indexOf('<h2>RFC 3161 receipt</h2>'), r.body.indexOf('<h2>Signed checkpoint'));
    const facts = await checkReceipt(answered[0]!.der, root, fromHex(hash));
    expect(section).toContain(`<dd>${AT[0]}</dd>`);
    expect(section).toContain(facts.tsaName.replace(/&/g, '&amp;'));
    expect(section).toContain(`0x${facts.serialNumber.replace(/^0+/, '').toUpperCase()}`);
    expect(section).toContain(
      `openssl ts -verify -digest ${hash} -in ${hash.slice(0, 16)}.tsr -CAfile timeseal-tsa-root.pem -untrusted timeseal-tsa.pem`,
    );
    const href = /href="data:application\/timestamp-reply;base64,([^"]+)" download="([^"]+)"/.exec(section);
    expect(href?.[2]).toBe(`${hash.slice(0, 16)}.tsr`);
    expect(Buffer.from(href![1]!, 'base64').equals(Buffer.from(answered[0]!.der))).toBe(true);
    for (const [, link] of section.matchAll(/href="(\/keys\/[^"]+)"/g))
      expect((await f.app.inject({ method: 'GET', url: link! })).statusCode, link).toBe(200);
    // The history certificate: the owner's receipt (made at their submission's time), not the earliest.
    const own = await f.app.inject({ method: 'GET', url: `/api/certificate.php?id=${historyId}`, headers: { cookie } });
    expect(own.statusCode).toBe(200);
    expect(own.body).not.toContain('pending');
    const ownHref = /href="data:application\/timestamp-reply;base64,([^"]+)"/.exec(own.body);
    expect(Buffer.from(ownHref![1]!, 'base64').equals(Buffer.from(answered[2]!.der))).toBe(true);
    const ownPdf = await f.app.inject({
      method: 'GET',
      url: `/api/certificate.php?id=${historyId}&format=pdf`,
      headers: { cookie },
    });
    expect(detach(ownPdf.rawPayload).files[`${hash.slice(0, 16)}.tsr`]!.equals(Buffer.from(answered[2]!.der))).toBe(
      true,
    );
  });
});
