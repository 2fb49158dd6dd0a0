// RFC 3161 tokens shown where readers look: GET /api/ledgers.php lists each day's checked
// tokens (for /ledgers), and the certificate (HTML and PDF, read back with Debian's pdftotext) names the
// stated time, the TSA and the `openssl ts -verify` command, and links the token. The token comes from a real
// `openssl ts -reply` TSA on loopback (test/support/openssl-tsa.ts) for the day's ledger digest; a token for another
// digest is not shown.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timeStampRequest } from '../../core/tsa-client.ts';
import { startTsa, type LoopbackTsa } from '../../test/support/openssl-tsa.ts';
import { DAY, makeFixture, removeTempDirs, tempDir, type Fixture } from './fixture.ts';

let f: Fixture;
let tsa: LoopbackTsa;
beforeAll(async () => {
  f = await makeFixture();
  tsa = await startTsa('Display Test TSA');
});
afterAll(async () => {
  await tsa?.stop();
  await f?.close();
  removeTempDirs();
});

/** A token from the loopback TSA for `digest`. */
async function token(digest: Buffer): Promise<Buffer> {
  const res = await fetch(tsa.url, {
    method: 'POST',
    headers: { 'content-type': 'application/timestamp-query' },
    // A nonce of one length (top bit clear, first byte not zero), so that two tokens can have the same size.
    body: Buffer.from(timeStampRequest(digest, Buffer.concat([Buffer.of(0x11), crypto.randomBytes(7)]))),
  });
  return Buffer.from(await res.arrayBuffer());
}

describe('RFC 3161 tokens on /api/ledgers.php and the certificate', () => {
  it('lists the checked token with its time and TSA, and the certificate names them with the openssl command', async () => {
    const file = path.join(f.config.archive, `${DAY}.json.tsr`);
    const digest = crypto
      .createHash('sha256')
      .update(fs.readFileSync(path.join(f.config.archive, `${DAY}.json`)))
      .digest();
    // A token for another digest is not shown.
    const other = await token(crypto.createHash('sha256').update('another file').digest());
    fs.writeFileSync(file, other);
    expect((await f.app.inject('/api/ledgers.php')).json().ledgers[0].rfc3161).toEqual([]);
    // The right token written over it: the same inode and the same size, only the modification time differs
    // (what the server remembers a checked token by must see that).
    let right = await token(digest);
    // The signature's DER length varies by a byte or two; ask again until the sizes match.
    for (let i = 0; i < 30 && right.length !== other.length; i++) right = await token(digest);
    expect(right.length).toBe(other.length);
    const inode = fs.statSync(file).ino;
    fs.writeFileSync(file, right);
    expect(fs.statSync(file).ino).toBe(inode);
    const listed = (await f.app.inject('/api/ledgers.php')).json().ledgers[0].rfc3161;
    expect(listed).toEqual([
      {
        url: `/ledgers/${DAY}.json.tsr`,
        genTime: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
        tsa: 'O=Timeseal tests, CN=Display Test TSA',
      },
    ]);
    const hash = f.published[0]!;
    const html = (await f.app.inject(`/api/certificate.php?hash=${hash}`)).body;
    expect(html).toContain('<dt>RFC 3161 time-stamp</dt>');
    expect(html).toContain(`openssl ts -verify -data ${DAY}.json -in ${DAY}.json.tsr -CAfile tsa-ca.pem`);
    expect(html).toContain(`href="/ledgers/${DAY}.json.tsr"`);
    const pdf = await f.app.inject(`/api/certificate.php?hash=${hash}&format=pdf`);
    const out = path.join(tempDir('tsa-pdf'), 'c.pdf');
    fs.writeFileSync(out, pdf.rawPayload);
    const text = spawnSync('pdftotext', ['-layout', '-enc', 'UTF-8', out, '-'], { encoding: 'utf8' }).stdout.replace(
      /\s+/g,
      ' ',
    );
    expect(text).toContain('RFC 3161 time-stamp');
    expect(text).toContain('Display Test TSA');
    expect(text).toContain(`openssl ts -verify -data ${DAY}.json -in ${DAY}.json.tsr`);
  });
});
