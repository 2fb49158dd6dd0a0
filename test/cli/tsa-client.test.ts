// RFC 3161 tokens on the ledger files (pipeline/tsa-client.ts, core/ and runtime/tsa-client.ts; docs/FORMAT.md §3a) against a real TSA on
// loopback: Debian's `openssl ts -reply` behind HTTP, with a CA and a TSA certificate made by openssl in the test
// (test/support/openssl-tsa.ts). A good token is published once and stock OpenSSL verifies it against the ledger
// (`openssl ts -verify -data D.json -in D.json.tsr -CAfile ca.pem`); a reply for another digest, one without the
// nonce, an expired TSA certificate, a refusal, garbage, an HTTP error and no answer are each refused with a
// reason and publish nothing; TSA_MIN counts good answers; `timeseal verify` checks every token.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTsa, type LoopbackTsa, type TsaMode } from '../support/openssl-tsa.ts';
import { flipByte, makeHashes, removeTempProjects, run, runAsync, runJson, tempProject } from './helpers.ts';

describe('RFC 3161 time-stamps of the ledger files', () => {
  let dir: string;
  let tsa: LoopbackTsa;
  let other: LoopbackTsa;
  let day = 0;
  const ledgers = () => path.join(dir, 'ledgers');
  const dateOf = (n: number) => `2025-11-${String(2 + n).padStart(2, '0')}`;
  const publishDay = (): string => {
    const date = dateOf(day++);
    expect(
      run(dir, ['import', '-'], {
        env: { TIMESEAL_NOW: `${date}T10:00:00.000Z` },
        input: `${makeHashes(`t-${date}`, 20).join('\n')}\n`,
      }).code,
    ).toBe(0);
    const built = run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: `${dateOf(day)}T00:01:00.000Z` } });
    expect(built.code, built.stderr).toBe(0);
    return date;
  };
  /** `timeseal tsa stamp --json`, awaited (the TSAs answer from this process meanwhile). */
  const stamp = async (env: Record<string, string>) => {
    const result = await runAsync(dir, ['tsa', 'stamp', '--json'], { env });
    return { result, json: JSON.parse(result.stdout || 'null') };
  };
  const tsrFiles = () =>
    fs
      .readdirSync(ledgers())
      .filter((f) => f.endsWith('.tsr'))
      .sort();

  beforeAll(async () => {
    dir = tempProject('tsa');
    expect(run(dir, ['keys', 'init']).code).toBe(0);
    tsa = await startTsa('Timeseal Test TSA');
    other = await startTsa('Second Test TSA');
  });
  afterAll(async () => {
    await tsa.stop();
    await other.stop();
    removeTempProjects();
  });

  test('without TSA_URLS there is nothing to do', async () => {
    publishDay();
    const { result, json } = await stamp({});
    expect(result.code, result.stderr).toBe(0);
    expect(json).toEqual({ days: [] });
    expect(tsrFiles()).toEqual([]);
  });

  test.each<[TsaMode, RegExp]>([
    ['other-digest', /the token is for another digest/],
    ['no-nonce', /the token has no nonce/],
    ['other-nonce', /the token holds another nonce than the request/],
    ['not-signed-data', /a malformed token|not a DER TimeStampResp/],
    ['expired', /certificate was not valid at the stated time/],
    ['refuse', /the TSA refused: status 2/],
    ['garbage', /not a DER TimeStampResp/],
    ['http-error', /HTTP 503/],
    ['timeout', /no answer within 1500 ms/],
  ])('a TSA answering %s is refused with the reason; nothing is published', async (mode, reason) => {
    tsa.mode = mode;
    try {
      const { result, json } = await stamp({ TSA_URLS: tsa.url, TSA_TIMEOUT_MS: '1500' });
      expect(result.code).toBe(1);
      expect(json.days).toHaveLength(1);
      expect(json.days[0]).toMatchObject({ date: dateOf(0), outcome: 'failed', tokens: [] });
      expect(json.days[0].failures).toEqual([{ tsa: tsa.url, reason: expect.stringMatching(reason) }]);
      expect(tsrFiles()).toEqual([]);
    } finally {
      tsa.mode = 'ok';
    }
  });

  test('TSA_MIN 2 with one good answer publishes nothing; with both, both tokens, and stock OpenSSL verifies each', async () => {
    const env = { TSA_URLS: `${tsa.url},${other.url}`, TSA_MIN: '2' };
    other.mode = 'garbage';
    const short = await stamp(env);
    other.mode = 'ok';
    expect(short.result.code).toBe(1);
    expect(short.json.days[0]).toMatchObject({
      outcome: 'failed',
      reason: expect.stringMatching(/1 good answer, TSA_MIN is 2/),
    });
    expect(tsrFiles()).toEqual([]);
    const { result, json } = await stamp(env);
    expect(result.code, result.stderr).toBe(0);
    const date = dateOf(0);
    expect(json.days[0]).toMatchObject({ date, outcome: 'stamped' });
    expect(json.days[0].tokens.map((t: { file: string; tsaName: string }) => [t.file, t.tsaName])).toEqual([
      [`${date}.json.tsr`, 'O=Timeseal tests, CN=Timeseal Test TSA'],
      [`${date}.json.2.tsr`, 'O=Timeseal tests, CN=Second Test TSA'],
    ]);
    for (const [file, ca] of [
      [`${date}.json.tsr`, tsa.caFile],
      [`${date}.json.2.tsr`, other.caFile],
    ] as const) {
      const out = execFileSync(
        'openssl',
        [
          'ts',
          '-verify',
          '-data',
          path.join(ledgers(), `${date}.json`),
          '-in',
          path.join(ledgers(), file),
          '-CAfile',
          ca,
        ],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
      );
      expect(out.trim(), file).toBe('Verification: OK');
    }
    // The proof bundle of a hash of that day carries both answers, byte for byte (docs/FORMAT.md §8).
    const proof = run(dir, ['proof', makeHashes(`t-${date}`, 20)[3]!]);
    expect(proof.code, proof.stderr).toBe(0);
    const bundle = JSON.parse(proof.stdout);
    expect(bundle.format).toBe('timeseal-proof/4');
    expect(bundle.rfc3161).toEqual(
      [`${date}.json.tsr`, `${date}.json.2.tsr`].map((f) =>
        fs.readFileSync(path.join(ledgers(), f)).toString('base64'),
      ),
    );
    // The other TSA's chain does not vouch for the first token: OpenSSL says so too.
    expect(() =>
      execFileSync(
        'openssl',
        [
          'ts',
          '-verify',
          '-data',
          path.join(ledgers(), `${date}.json`),
          '-in',
          path.join(ledgers(), `${date}.json.tsr`),
          '-CAfile',
          other.caFile,
        ],
        { stdio: 'pipe' },
      ),
    ).toThrow();
    // A day is stamped once: the next run asks nobody about it.
    const requests = tsa.requests;
    expect((await stamp(env)).json).toEqual({ days: [] });
    expect(tsa.requests).toBe(requests);
  });

  test('the next published day is stamped by the next run; verify checks every token, with the CA chain when published', async () => {
    const date = publishDay();
    const { json } = await stamp({ TSA_URLS: tsa.url });
    expect(json.days.map((d: { date: string; outcome: string }) => [d.date, d.outcome])).toEqual([[date, 'stamped']]);
    const verify = runJson(dir, ['verify']);
    expect(verify.result.code, verify.result.stdout).toBe(0);
    expect(verify.json.notes.join('\n')).toMatch(/3 RFC 3161 tokens checked without a CA chain/);
    // With the first TSA's chain published in keys/, the second TSA's token (another chain) is refused.
    fs.copyFileSync(tsa.caFile, path.join(dir, 'keys/tsa-ca.pem'));
    const chained = runJson(dir, ['verify']);
    expect(chained.result.code).toBe(1);
    expect(chained.json.problems).toEqual([
      expect.stringMatching(new RegExp(`^${dateOf(0)}\\.json\\.2\\.tsr: the token's signature does not verify`)),
    ]);
    fs.rmSync(path.join(dir, 'keys/tsa-ca.pem'));
  });

  test('a flipped byte in a token (its status, TSTInfo, signed attributes, signer certificate, signature, DER structure) fails verify, which names the file', () => {
    for (const file of [`${dateOf(0)}.json.tsr`, `${dateOf(0)}.json.2.tsr`, `${dateOf(1)}.json.tsr`]) {
      const copy = path.join(tempProject('tsa-flip'), 'ledgers');
      fs.cpSync(ledgers(), copy, { recursive: true });
      const bytes = fs.readFileSync(path.join(ledgers(), file));
      const size = bytes.length;
      // The status (byte 8), the first length byte, inside the TSTInfo (its imprint), the signer certificate
      // (it follows the TSTInfo), and the signature at the end.
      const tstInfo = bytes.indexOf(Buffer.from('0609608648016503040201', 'hex'), 60);
      for (const at of [8, 3, tstInfo + 20, tstInfo + 300, size - 20]) {
        fs.writeFileSync(path.join(copy, file), bytes);
        flipByte(path.join(copy, file), at);
        const { result, json } = runJson(dir, ['verify', '--archive', copy]);
        expect(result.code, `${file} @ ${at}`).toBe(1);
        expect(
          json.problems.some((p: string) => p.startsWith(`${file}:`)),
          `${file} @ ${at}: ${JSON.stringify(json.problems)}`,
        ).toBe(true);
      }
    }
  });

  test('a removed first token, with a later one still there, fails verify', () => {
    const copy = path.join(tempProject('tsa-gap'), 'ledgers');
    fs.cpSync(ledgers(), copy, { recursive: true });
    fs.rmSync(path.join(copy, `${dateOf(0)}.json.tsr`));
    const { result, json } = runJson(dir, ['verify', '--archive', copy]);
    expect(result.code).toBe(1);
    expect(json.problems).toContain(`${dateOf(0)}.json.tsr: missing, but ${dateOf(0)}.json.2.tsr exists`);
  });

  test('bad settings stop the command with a message naming them', async () => {
    const bad = await stamp({ TSA_URLS: 'ftp://example.test' });
    expect(bad.result.code).toBe(64);
    expect(bad.result.stderr).toMatch(/TSA_URLS/);
    const min = await stamp({ TSA_URLS: tsa.url, TSA_MIN: '2' });
    expect(min.result.code).toBe(64);
    expect(min.result.stderr).toMatch(/TSA_MIN/);
  });
});
