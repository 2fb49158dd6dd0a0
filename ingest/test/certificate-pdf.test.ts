// The PDF certificate: GET /api/certificate.php?…&format=pdf is a real PDF that Debian's pdftotext
// (poppler-utils, an independent reader) opens and that shows the hash, the ledger date and time, the signature
// verdicts, the Bitcoin status and the verification link; a file name with markup, non-Latin letters or 300
// characters is drawn as text; a history certificate (?id=) opens only for its owner; links name only files that
// exist (no .ots before anchoring); a pending day says when to come back. What it draws is capped: a 100 KB file
// name (it blocked the event loop for 17-19 s) is cut with an ellipsis, and so is any other text.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenHash } from '../accounts/tokens.ts';
import { certificatePdf, MAX_FILE_NAME, MAX_TEXT } from '../certificate-pdf.ts';
import { DAY, makeFixture, removeTempDirs, sha256, tempDir, type Fixture } from './fixture.ts';

let f: Fixture;
beforeAll(async () => {
  f = await makeFixture();
});
afterAll(async () => {
  await f?.close();
  removeTempDirs();
});

function pdfText(body: Buffer): string {
  const file = path.join(tempDir('pdf'), 'c.pdf');
  fs.writeFileSync(file, body);
  const r = spawnSync('pdftotext', ['-layout', '-enc', 'UTF-8', file, '-'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`pdftotext: ${r.stderr}`);
  return r.stdout;
}

let users = 0;
/** A user with a session and one history row; returns the session cookie and the row id. */
function userWithRow(hash: string, fileName: string | null, ledgerDate: string): { cookie: string; id: number } {
  users++;
  const userId = `user-${users}`;
  f.db
    .prepare('INSERT INTO users (id, username, email, password, email_verified) VALUES (?, ?, ?, ?, 1)')
    .run(userId, `u${users}`, `u${users}@example.test`, 'x');
  const session = `session-token-${users}-${'a'.repeat(40)}`;
  f.db
    .prepare('INSERT INTO sessions (id_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)')
    .run(tokenHash(session), userId, '2025-01-01T00:00:00.000Z', '2099-01-01T00:00:00.000Z');
  const r = f.db
    .prepare('INSERT INTO timestamps (user_id, hash, submitted_at, ledger_date, file_name) VALUES (?, ?, ?, ?, ?)')
    .run(userId, hash, `${ledgerDate}T09:00:00.000Z`, ledgerDate, fileName);
  return { cookie: `ts_session=${session}`, id: Number(r.lastInsertRowid) };
}

describe('PDF certificate', () => {
  it('of a published hash: a PDF attachment that pdftotext reads, with hash, date, verdicts, Bitcoin and the link', async () => {
    const hash = f.published[0]!;
    const r = await f.app.inject({ method: 'GET', url: `/api/certificate.php?hash=${hash}&format=pdf` });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('application/pdf');
    expect(r.headers['content-disposition']).toBe(
      `attachment; filename="timeseal-certificate-${hash.slice(0, 12)}-${DAY}.pdf"`,
    );
    expect(r.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    const text = pdfText(r.rawPayload);
    expect(text).toContain(hash);
    expect(text).toContain(DAY);
    expect(text).toContain(`${DAY} 09:00:00 UTC`);
    expect(text).toMatch(/ECDSA P-256 signature\s+Verified/);
    expect(text).toMatch(/ML-DSA-65 signature\s+Verified/);
    expect(text).toContain('Pending: the ledger is submitted for Bitcoin anchoring');
    expect(text.replace(/\s+/g, '')).toContain(`https://timeseal.test/verify?hash=${hash}&search=true`);
    expect(text).toContain('How to verify without Timeseal');
    expect(text).toContain(`openssl dgst -sha256 -verify public.pem -signature ${DAY}.json.sig ${DAY}.json`);
    expect(text).toContain('offline-verifier.html');
    // Not anchored: no link to .ots files that would 404, and a word on when to come back.
    expect(text).not.toContain(`/api/proof/${hash}.ots`);
    expect(text).not.toContain(`/ledgers/${DAY}.json.ots`);
    expect(text).toContain('Come back after that');
    for (const link of text.match(/https:\/\/timeseal\.test\/(?:api|ledgers|keys)\/\S+/g) ?? []) {
      const res = await f.app.inject({ method: 'GET', url: link.replace('https://timeseal.test', '') });
      expect(res.statusCode, link).toBe(200);
    }
  });

  it('the HTML certificate links only to proof files that exist, and to its PDF', async () => {
    const hash = f.published[1]!;
    const r = await f.app.inject({ method: 'GET', url: `/api/certificate.php?hash=${hash}` });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toContain('text/html');
    expect(r.body).not.toContain('.ots"');
    expect(r.body).toContain(`/api/certificate.php?hash=${hash}&amp;format=pdf`);
    for (const [, href] of r.body.matchAll(/href="(\/(?:api\/proof|ledgers|keys)\/[^"]+)"/g)) {
      expect((await f.app.inject({ method: 'GET', url: href! })).statusCode, href).toBe(200);
    }
  });

  it('user text is drawn as text: markup, non-Latin letters and a 300-character name', async () => {
    const hash = f.published[2]!;
    const names = [
      '<script>alert(1)</script>.pdf',
      'Ünïcødé résumé Ωμέγα Кириллица.txt',
      `${'long-name-'.repeat(30)}.bin`,
    ];
    for (const name of names) {
      const { cookie, id } = userWithRow(hash, name, DAY);
      const r = await f.app.inject({
        method: 'GET',
        url: `/api/certificate.php?id=${id}&format=pdf`,
        headers: { cookie },
      });
      expect(r.statusCode).toBe(200);
      expect(r.headers['content-type']).toBe('application/pdf');
      const text = pdfText(r.rawPayload).replace(/\s+/g, '');
      expect(text).toContain(name.replace(/\s+/g, ''));
      expect(text).toContain(hash);
    }
  });

  it('a 100 KB file name renders at once, cut to MAX_FILE_NAME characters with an ellipsis', async () => {
    const hash = f.published[2]!;
    const name = `${'a-very-long-file-name-'.repeat(4700)}.pdf`;
    expect(name.length).toBeGreaterThan(100_000);
    const pdfOf = async (fileName: string) => {
      const { cookie, id } = userWithRow(hash, fileName, DAY);
      const started = performance.now();
      const r = await f.app.inject({
        method: 'GET',
        url: `/api/certificate.php?id=${id}&format=pdf`,
        headers: { cookie },
      });
      expect(r.statusCode).toBe(200);
      return { pdf: r.rawPayload, ms: performance.now() - started };
    };
    const pages = (text: string) => text.split('\f').filter((p) => p.trim() !== '').length;
    // A short name first: the server loads pdf-lib with its first certificate, which is not what is timed here.
    // Then the long name and a short one in turn: at once means about as fast as a short name (the long one
    // drawn whole blocked the event loop for 17-19 s), a ratio that holds however loaded the machine is.
    await pdfOf('short.txt');
    const short: Array<{ pdf: Buffer; ms: number }> = [];
    const long: Array<{ pdf: Buffer; ms: number }> = [];
    for (let i = 0; i < 2; i++) {
      short.push(await pdfOf('short.txt'));
      long.push(await pdfOf(name));
    }
    const fastest = (runs: Array<{ ms: number }>) => Math.min(...runs.map((r) => r.ms));
    expect(fastest(long), JSON.stringify({ short: short.map((r) => r.ms), long: long.map((r) => r.ms) })).toBeLessThan(
      3 * fastest(short) + 250,
    );
    const text = pdfText(long[0]!.pdf);
    expect(pages(text)).toBe(pages(pdfText(short[0]!.pdf)));
    const flat = text.replace(/\s+/g, '');
    expect(MAX_FILE_NAME).toBe(400);
    expect(flat).toContain(`${name.slice(0, MAX_FILE_NAME - 1)}…`);
    expect(flat).not.toContain(name.slice(0, MAX_FILE_NAME));
    expect(flat).toContain(hash);
  });

  it('any other text drawn is capped to MAX_TEXT characters (a TSA name, the Bitcoin status)', async () => {
    const status = `${'status '.repeat(15_000)}end of status`;
    const certificate = (bitcoinText: string, tsaName: string) =>
      certificatePdf({
        state: 'published',
        hash: f.published[0]!,
        fileName: null,
        submittedAt: `${DAY}T09:00:00.000Z`,
        ledgerDate: DAY,
        verifyUrl: 'https://timeseal.test/verify',
        origin: 'https://timeseal.test',
        files: [],
        bitcoin: { ok: false, text: bitcoinText },
        rfc3161: [{ file: `${DAY}.json.tsr`, genTime: `${DAY}T00:01:00Z`, tsaName }],
      });
    // This thread's CPU time, which other processes on a loaded machine do not move (wall time did: 454 ms for
    // the long texts against 47 ms for the short ones, in one fresh-clone run beside other work).
    const timed = async (work: () => Promise<Uint8Array>) => {
      const started = process.threadCpuUsage();
      const pdf = await work();
      const used = process.threadCpuUsage(started);
      return { pdf, ms: (used.user + used.system) / 1000 };
    };
    // The long texts cost about what short ones cost (a ratio, in turn, as above).
    await certificate('pending', 'CN=Short');
    const short: number[] = [];
    const long: Array<{ pdf: Uint8Array; ms: number }> = [];
    for (let i = 0; i < 3; i++) {
      short.push((await timed(() => certificate('pending', 'CN=Short'))).ms);
      long.push(await timed(() => certificate(status, `CN=${'T'.repeat(100_000)}`)));
    }
    expect(Math.min(...long.map((r) => r.ms)), JSON.stringify({ short, long: long.map((r) => r.ms) })).toBeLessThan(
      3 * Math.min(...short) + 250,
    );
    const { pdf } = long[0]!;
    const flat = pdfText(Buffer.from(pdf)).replace(/\s+/g, '');
    expect(flat.match(/T/g)!.length).toBeLessThan(MAX_TEXT);
    expect(flat).toContain(`CN=${'T'.repeat(1000)}`);
    expect(flat).not.toContain('endofstatus');
    expect(flat).toContain(
      `${status
        .slice(0, MAX_TEXT - 1)
        .replace(/\s+/g, '')
        .slice(-40)}…`,
    );
  });

  it('a history certificate PDF opens only for its owner', async () => {
    const { cookie, id } = userWithRow(f.published[0]!, 'alice-secret.txt', DAY);
    const other = userWithRow(sha256('other'), null, DAY);
    const mine = await f.app.inject({
      method: 'GET',
      url: `/api/certificate.php?id=${id}&format=pdf`,
      headers: { cookie },
    });
    expect(mine.statusCode).toBe(200);
    expect(pdfText(mine.rawPayload)).toContain('alice-secret.txt');
    for (const headers of [{ cookie: other.cookie }, {}]) {
      const r = await f.app.inject({ method: 'GET', url: `/api/certificate.php?id=${id}&format=pdf`, headers });
      expect(r.statusCode).toBe(404);
      expect(r.headers['content-type']).not.toContain('pdf');
      expect(r.body).not.toContain('alice-secret');
    }
  });

  it('a pending history row: a PDF saying when to come back, with no proof links', async () => {
    const hash = sha256('pending-item');
    const { cookie, id } = userWithRow(hash, 'draft.docx', '2025-11-03');
    const r = await f.app.inject({
      method: 'GET',
      url: `/api/certificate.php?id=${id}&format=pdf`,
      headers: { cookie },
    });
    expect(r.statusCode).toBe(200);
    const text = pdfText(r.rawPayload);
    expect(text).toContain('Timestamp Certificate (pending)');
    expect(text).toContain(hash);
    expect(text).toContain('Come back after 00:01 UTC on the day after 2025-11-03');
    expect(text).not.toContain('/ledgers/2025-11-03.json.sig');
    expect(text).not.toContain('/api/proof/');
  });

  it('format is html or pdf', async () => {
    const r = await f.app.inject({ method: 'GET', url: `/api/certificate.php?hash=${f.published[0]}&format=docx` });
    expect(r.statusCode).toBe(400);
  });
});

/** The PDF's pages as pdftotext reads them, one string a page (form feeds split them). */
function pdfPages(body: Buffer): string[] {
  return pdfText(body)
    .split('\f')
    .filter((p) => p.trim() !== '');
}

/** Runs of 80 or more base64 characters: signatures, keys and tokens, not words a person reads (a hash is 64). */
const BASE64_RUN = /[A-Za-z0-9+/=]{80,}/g;

describe('certificates a person reads', () => {
  it('PDF: page 1 says in plain words what was proved, one appendix page holds the rest; no page is base64; the bundle and the checkpoint are attached', async () => {
    const hash = f.published[0]!;
    const r = await f.app.inject(`/api/certificate.php?hash=${hash}&format=pdf`);
    expect(r.statusCode).toBe(200);
    const pages = pdfPages(r.rawPayload);
    expect(pages).toHaveLength(2);
    const [first, appendix] = pages.map((p) => p.replace(/\s+/g, ' '));
    expect(first).toContain(`Timeseal (https://timeseal.test) recorded the SHA-256 hash below at ${DAY} 09:00:00 UTC.`);
    expect(first).toContain(
      `It is in the public ledger of ${DAY}, published at https://timeseal.test/ledgers/${DAY}.json`,
    );
    expect(first).toContain('both verified');
    expect(first).toMatch(/Signatures Both verified ECDSA P-256 and ML-DSA-65/);
    expect(first).toContain('How anyone can check it');
    expect(first).not.toMatch(/Leaf|Ledger file SHA-256|openssl/);
    expect(appendix).toContain('Appendix: the machine material');
    expect(appendix).toMatch(/ECDSA P-256 signature\s+Verified/);
    for (const [i, p] of pages.entries()) expect(p.match(BASE64_RUN) ?? [], `page ${i + 1}`).toEqual([]);
    expect(pdfText(r.rawPayload).length).toBeLessThan(7_000);

    const dir = tempDir('attachments');
    const file = path.join(dir, 'c.pdf');
    fs.writeFileSync(file, r.rawPayload);
    const list = spawnSync('pdfdetach', ['-list', file], { encoding: 'utf8' });
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toContain(`timeseal-proof-${hash.slice(0, 12)}.json`);
    expect(list.stdout).toContain(`${DAY}.checkpoint`);
    const saved = spawnSync('pdfdetach', ['-saveall', '-o', dir, file], { encoding: 'utf8' });
    expect(saved.status, saved.stderr).toBe(0);
    const bundle = fs.readFileSync(path.join(dir, `timeseal-proof-${hash.slice(0, 12)}.json`), 'utf8');
    const served = await f.app.inject(`/api/proof/${hash}`);
    expect(bundle).toBe(served.body);
    const checkpoint = fs.readFileSync(path.join(dir, `${DAY}.checkpoint`), 'utf8');
    expect(checkpoint).toBe(fs.readFileSync(path.join(f.config.archive, `${DAY}.checkpoint`), 'utf8'));
  });

  it('HTML: the plain-words statement first, styled like the site; the checkpoint only in the appendix, behind a disclosure', async () => {
    const hash = f.published[0]!;
    const r = await f.app.inject(`/api/certificate.php?hash=${hash}`);
    expect(r.statusCode).toBe(200);
    const html = r.body;
    expect(html).toMatch(/font-family:system-ui/);
    expect(html).not.toMatch(/font-family:Georgia/);
    const [human, appendix] = html.split('<section class="frame appendix"');
    expect(appendix).toBeDefined();
    expect(human).toContain(`Timeseal (https://timeseal.test) recorded the SHA-256 hash below at ${DAY} 09:00:00 UTC.`);
    expect(human!.replace(/<[^>]+>/g, ' ').match(BASE64_RUN) ?? []).toEqual([]);
    expect(appendix).toMatch(/<details>\s*<summary>Signed checkpoint of /);
    expect(appendix).toContain(`Ledger file SHA-256`);
  });

  it('a delayed anchoring: one plain sentence on page 1 and in the HTML, the calendars’ error only in the appendix', async () => {
    const hash = f.published[0]!;
    const info = path.join(f.config.archive, 'block_info.json');
    const saved = fs.existsSync(info) ? fs.readFileSync(info) : undefined;
    const error =
      'stamp failed: 0 of 4 calendars answered (2 needed): https://a.pool.opentimestamps.org: unreachable (ENOTFOUND)';
    fs.writeFileSync(
      info,
      JSON.stringify({
        ledgers: {},
        pending: {
          [DAY]: {
            state: 'not-stamped',
            reason: `${error}; next attempt at 2025-11-03T20:36:00.000Z`,
            checked_at: '2025-11-03T19:36:00.000Z',
          },
        },
      }),
    );
    try {
      const pdf = await f.app.inject(`/api/certificate.php?hash=${hash}&format=pdf`);
      const [first, appendix] = pdfPages(pdf.rawPayload).map((p) => p.replace(/\s+/g, ' '));
      expect(first).toContain('Bitcoin anchoring is delayed; next try 2025-11-03 20:36 UTC');
      expect(first).not.toContain('ENOTFOUND');
      expect(appendix).toContain('ENOTFOUND');
      const html = (await f.app.inject(`/api/certificate.php?hash=${hash}`)).body;
      const [human, rest] = html.split('<section class="frame appendix"');
      expect(human).toContain('Bitcoin anchoring is delayed; next try 2025-11-03 20:36 UTC');
      expect(human).not.toContain('ENOTFOUND');
      expect(rest).toContain(error);
      // Nowhere "come back after 00:02": the next try, as the Bitcoin row says it.
      for (const text of [first, appendix, html])
        expect(text).not.toMatch(/Come back after that|submitted to the calendars at 00:02/);
      expect(rest).toContain('do not exist yet: Bitcoin anchoring is delayed; next try 2025-11-03 20:36 UTC.');
    } finally {
      if (saved) fs.writeFileSync(info, saved);
      else fs.rmSync(info);
    }
  });

  it('a day the anchoring run has not reached, months after its publication: said so, not "typically within 12 to 24 hours"', async () => {
    const hash = f.published[0]!;
    const info = path.join(f.config.archive, 'block_info.json');
    const saved = fs.existsSync(info) ? fs.readFileSync(info) : undefined;
    const reason = 'not yet submitted to the OpenTimestamps calendars (anchoring runs at 00:02 UTC)';
    const write = (checkedAt: string) =>
      fs.writeFileSync(
        info,
        JSON.stringify({ ledgers: {}, pending: { [DAY]: { state: 'not-stamped', reason, checked_at: checkedAt } } }),
      );
    const sentence = 'Not anchored yet: the anchoring run has not reached this day (it stamps the newest days first)';
    try {
      write('2026-02-01T00:02:00.000Z');
      const pdf = await f.app.inject(`/api/certificate.php?hash=${hash}&format=pdf`);
      const [first, appendix] = pdfPages(pdf.rawPayload).map((p) => p.replace(/\s+/g, ' '));
      const html = (await f.app.inject(`/api/certificate.php?hash=${hash}`)).body;
      const [human, rest] = html.split('<section class="frame appendix"');
      expect(first).toContain(sentence);
      expect(human).toContain(sentence);
      expect(rest).toContain(
        'do not exist yet: the anchoring run has not reached this day (it stamps the newest days first). The .ots files follow once it is stamped',
      );
      expect(appendix).toContain(reason);
      for (const text of [first, appendix, html])
        expect(text).not.toMatch(/typically confirmed within 12 to 24 hours|Come back after that/);
      // Checked within a day of its publication, the same entry is the normal wait.
      write('2025-11-03T12:00:00.000Z');
      const soon = pdfPages((await f.app.inject(`/api/certificate.php?hash=${hash}&format=pdf`)).rawPayload)[0]!;
      expect(soon.replace(/\s+/g, ' ')).toContain(
        'Pending: the ledger is submitted for Bitcoin anchoring at 00:02 UTC',
      );
    } finally {
      if (saved) fs.writeFileSync(info, saved);
      else fs.rmSync(info);
    }
  });
});
