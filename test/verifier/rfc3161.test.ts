// The offline verifier's RFC 3161 check (core/rfc3161.ts: a small DER reader and Web Crypto,
// because pkijs would not fit the page) against real answers of Debian's `openssl ts -reply` on loopback, with
// ECDSA P-256 and RSA 2048 authorities: the same facts as `timeseal verify`'s pkijs check (runtime/tsa-client.ts) for the
// good token, a refusal of every single flipped byte of it (by both), and each refusal the pipeline makes.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { timeStampRequest } from '../../core/tsa-client.ts';
import { checkTimeStamp } from '../../runtime/tsa-client.ts';
import { checkToken, pemCertificates } from '../../core/rfc3161.ts';
import { startTsa, type LoopbackTsa, type TsaMode } from '../support/openssl-tsa.ts';

const digest = new Uint8Array(crypto.createHash('sha256').update('a ledger file').digest());

async function ask(tsa: LoopbackTsa, mode: TsaMode = 'ok'): Promise<Uint8Array> {
  tsa.mode = mode;
  try {
    const res = await fetch(tsa.url, {
      method: 'POST',
      headers: { 'content-type': 'application/timestamp-query' },
      body: Buffer.from(timeStampRequest(digest, crypto.randomBytes(8))),
    });
    expect(res.status).toBe(200);
    return new Uint8Array(await res.arrayBuffer());
  } finally {
    tsa.mode = 'ok';
  }
}

/** The reason the page's check gives, or 'ok'. */
const page = (der: Uint8Array, ca: Uint8Array[] = []) =>
  checkToken(der, digest, ca).then(
    () => 'ok',
    (e: Error) => e.message,
  );
/** The reason runtime/tsa-client.ts (pkijs) gives, or 'ok'. */
const core = (der: Uint8Array, ca: Uint8Array[] = []) =>
  checkTimeStamp(der, digest, ca.length ? { trusted: ca } : {}).then(
    () => 'ok',
    (e: Error) => e.message,
  );

describe.each([
  ['ECDSA P-256', false],
  ['RSA 2048', true],
] as const)('an RFC 3161 answer from an %s TSA, checked in the offline verifier', (_name, rsa) => {
  let tsa: LoopbackTsa;
  let other: LoopbackTsa;
  let ca: Uint8Array[];
  let token: Uint8Array;

  beforeAll(async () => {
    tsa = await startTsa('Timeseal Test TSA', { rsa });
    other = await startTsa('Other Test TSA', { rsa });
    ca = pemCertificates(fs.readFileSync(tsa.caFile, 'utf8'));
    token = await ask(tsa);
  });
  afterAll(async () => {
    await tsa.stop();
    await other.stop();
  });

  test('a good answer: what it says, the same as pkijs; anchored only with its own authority', async () => {
    // The PEM's one certificate, as openssl writes its DER.
    expect(ca).toEqual([new Uint8Array(execFileSync('openssl', ['x509', '-in', tsa.caFile, '-outform', 'DER']))]);
    const facts = await checkToken(token, digest, ca);
    const byCore = await checkTimeStamp(token, digest, { trusted: ca });
    expect(facts).toMatchObject({
      tsaName: 'O=Timeseal tests, CN=Timeseal Test TSA',
      anchored: true,
      genTime: byCore.genTime,
      serialNumber: byCore.serialNumber,
    });
    expect(facts.chain).toEqual([
      'O=Timeseal tests, CN=Timeseal Test TSA',
      'O=Timeseal tests, CN=Timeseal Test TSA Root CA',
    ]);
    expect(Math.abs(facts.genTime.getTime() - Date.now())).toBeLessThan(60_000);
    expect(await checkToken(token, digest)).toMatchObject({ anchored: false });
    const otherCa = pemCertificates(fs.readFileSync(other.caFile, 'utf8'));
    expect(await page(token, otherCa)).toMatch(/does not lead to the certificate authority given/);
    expect(await core(token, otherCa)).not.toBe('ok');
    expect(await page(token.subarray(0, token.length - 1), ca)).toMatch(/not DER/);
    expect(await checkToken(token, new Uint8Array(32), ca).catch((e: Error) => e.message)).toMatch(
      /^the token is for another digest/,
    );
  });

  test.each<[TsaMode, RegExp]>([
    ['other-digest', /the token is for another digest/],
    ['expired', /was not valid at the stated time/],
    ['refuse', /the TSA refused: status 02/],
    ['garbage', /not DER|not a DER TimeStampResp|malformed/],
    ['not-signed-data', /not CMS SignedData|malformed|not DER/],
  ])('an answer of a TSA in mode %s is refused, as by pkijs', async (mode, reason) => {
    const der = await ask(tsa, mode);
    expect(await page(der, ca)).toMatch(reason);
    expect(await core(der, ca)).not.toBe('ok');
  });

  test("the authority's keys are imported once for many of its tokens", async () => {
    const importKey = vi.spyOn(globalThis.crypto.subtle, 'importKey');
    try {
      await checkToken(token, digest, ca);
      const first = importKey.mock.calls.length;
      for (let i = 0; i < 5; i++) await checkToken(token, digest, ca);
      expect(importKey.mock.calls.length).toBe(first);
      const otherCa = pemCertificates(fs.readFileSync(other.caFile, 'utf8'));
      await checkToken(await ask(other), digest, otherCa);
      expect(importKey.mock.calls.length).toBeGreaterThan(first);
    } finally {
      importKey.mockRestore();
    }
  });

  // `timeseal verify` (runtime/tsa-client.ts) reads the token with pkijs and then with the page's strict reader, so the
  // page refusing a byte means verify refuses it too; pkijs costs ~15 ms a token, so verify is asked about every
  // seventh byte (each part of the token still), the page about every byte.
  test('every single flipped byte is refused with the authority, by the page and by `timeseal verify` (pkijs, then the same strict reading)', async () => {
    const accepted: string[] = [];
    for (let at = 0; at < token.length; at++) {
      const bad = Uint8Array.from(token);
      bad[at] = bad[at]! ^ 0x01;
      const [mine, theirs] = await Promise.all([page(bad, ca), at % 7 === 0 ? core(bad, ca) : 'not asked']);
      if (mine === 'ok' || theirs === 'ok') accepted.push(`byte ${at}: page ${mine}; core ${theirs}`);
    }
    expect(accepted).toEqual([]);
  }, 120_000);
});
