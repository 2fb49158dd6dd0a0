// POST /tsa in process (ingest/routes/tsa-authority.ts), with a stand-in store and gate: a granted token passes the
// project's own strict client check (runtime/tsa-client.ts: pkijs, then core/rfc3161.ts's DER reading) with the nonce and
// the root as the only trust; the stored row is the imprint at genTime; a closed day, a full disk and an unknown
// write error give no token (503, 503, 500). test/cli/tsa-authority.test.ts checks the same with OpenSSL.
import crypto from 'node:crypto';
import fs from 'node:fs';
import zlib from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import * as pkijs from 'pkijs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { pemCertificates } from '../../core/rfc3161.ts';
import { timeStampRequest } from '../../core/tsa-client.ts';
import { checkTimeStamp } from '../../runtime/tsa-client.ts';
import { addTsaKeys } from '../../runtime/keys.ts';
import { DayClosedError, StorageUnavailableError, type Submission } from '../../store/store.ts';
import { tsaRoutes } from '../routes/tsa-authority.ts';
import type { Services } from '../services.ts';
import { removeTempDirs, tempDir } from './fixture.ts';

const NOW = new Date('2025-11-02T12:00:00.123Z');
let now = NOW;
let app: FastifyInstance;
let root: Uint8Array;
const written: Submission[] = [];
let failure: Error | undefined;

beforeAll(async () => {
  const dir = tempDir('tsa-route');
  const dirs = { keys: `${dir}/keys`, privateKeys: `${dir}/private` };
  addTsaKeys(dirs, 'timeseal.test', new Date('2025-11-02T00:00:00.000Z'));
  root = pemCertificates(fs.readFileSync(`${dirs.keys}/timeseal-tsa-root.pem`, 'utf8'))[0]!;
  const services = {
    config: dirs,
    ingest: {},
    clock: () => now,
    store: {
      submissions: {
        write: async (s: Submission) => {
          if (failure) throw failure;
          written.push(s);
        },
      },
    },
    gate: { refusal: () => null, stored: () => {}, storageFailed: () => {}, dayClosed: () => {} },
  } as unknown as Services;
  app = Fastify();
  app.removeAllContentTypeParsers();
  await app.register(tsaRoutes, services);
  await app.ready();
});

afterAll(async () => {
  await app.close();
  removeTempDirs();
});

const post = (payload: Uint8Array) =>
  app.inject({
    method: 'POST',
    url: '/tsa',
    headers: { 'content-type': 'application/timestamp-query' },
    payload: Buffer.from(payload),
  });

describe('GET /tsa', () => {
  test('a browser opening the address is sent to the policy page', async () => {
    const res = await app.inject({ method: 'GET', url: '/tsa' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/tsa-policy');
  });
});

describe('POST /tsa', () => {
  test('a granted token passes runtime/tsa-client.ts with the nonce and the root; the row is the imprint at genTime', async () => {
    const digest = crypto.randomBytes(32);
    const nonce = crypto.randomBytes(8);
    const res = await post(timeStampRequest(digest, nonce));
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/timestamp-reply');
    const facts = await checkTimeStamp(new Uint8Array(res.rawPayload), digest, { nonce, trusted: [root] });
    expect(facts.genTime.toISOString()).toBe(NOW.toISOString());
    expect(facts.tsaName).toMatch(/Timeseal TSA timeseal\.test/);
    expect(written.at(-1)).toEqual({ hash: digest.toString('hex'), submittedAt: NOW, source: 'api_beta' });
    // The signed attributes: contentType, messageDigest, signingCertificateV2; no signingTime.
    const resp = pkijs.TimeStampResp.fromBER(Uint8Array.from(res.rawPayload));
    const signed = new pkijs.SignedData({ schema: resp.timeStampToken!.content });
    expect(signed.signerInfos[0]!.signedAttrs!.attributes.map((a) => a.type).sort()).toEqual([
      '1.2.840.113549.1.9.16.2.47',
      '1.2.840.113549.1.9.3',
      '1.2.840.113549.1.9.4',
    ]);
    expect(signed.signerInfos[0]!.signatureAlgorithm.algorithmId).toBe('1.2.840.10045.4.3.2');
  });

  test('a tampered token is refused by runtime/tsa-client.ts (the check is not vacuous)', async () => {
    const digest = crypto.randomBytes(32);
    const res = await post(timeStampRequest(digest, crypto.randomBytes(8)));
    const der = new Uint8Array(res.rawPayload);
    der[der.length - 10]! ^= 1;
    await expect(checkTimeStamp(der, digest, { trusted: [root] })).rejects.toThrow();
    await expect(
      checkTimeStamp(new Uint8Array(res.rawPayload), crypto.randomBytes(32), { trusted: [root] }),
    ).rejects.toThrow(/another digest/);
  });

  test("a time outside the certificate's validity: timeNotAvailable, nothing stored", async () => {
    now = new Date('2025-11-01T23:00:00.000Z');
    const before = written.length;
    const res = await post(timeStampRequest(crypto.randomBytes(32), crypto.randomBytes(8)));
    now = NOW;
    expect(res.statusCode).toBe(200);
    const resp = pkijs.TimeStampResp.fromBER(Uint8Array.from(res.rawPayload));
    expect(resp.status.status).toBe(2);
    expect(resp.status.failInfo?.valueBlock.valueHexView).toEqual(Uint8Array.of(0x00, 0x02)); // bit 14
    expect(resp.status.statusStrings?.[0]?.valueBlock.value).toMatch(/not valid at 2025-11-01T23:00:00\.000Z/);
    expect(written.length).toBe(before);
  });

  test.each([
    ['a closed day', new DayClosedError('2025-11-02'), 503, /already closed/],
    // What a store rejects with on a full disk (store/store.ts: its engine's code kept for the log).
    [
      'a full disk',
      new StorageUnavailableError('full', 'SQLITE_FULL', 'database or disk is full'),
      503,
      /disk is full/,
    ],
    ['an unknown write error', new Error('boom'), 500, /Internal server error/],
  ] as const)('%s: no token', async (_name, err, status, message) => {
    failure = err;
    const before = written.length;
    const res = await post(timeStampRequest(crypto.randomBytes(32), crypto.randomBytes(8)));
    failure = undefined;
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json().error).toMatch(message);
    if (status === 503) expect(res.headers['retry-after']).toBe('60');
    expect(written.length).toBe(before);
  });
});

describe('POST /tsa with a Content-Encoding', () => {
  // The body is stamped as it arrives: a gzip of a TimeStampReq stamped as such would give a token for bytes
  // nobody holds. Any encoding but identity is refused before the body is read; nothing is stored.
  test.each(['gzip', 'deflate', 'br', 'GZIP', 'gzip, identity'])(
    '%s: 415, no token, nothing stored',
    async (encoding) => {
      const request = timeStampRequest(crypto.randomBytes(32), crypto.randomBytes(8));
      const before = written.length;
      const res = await app.inject({
        method: 'POST',
        url: '/tsa',
        headers: { 'content-type': 'application/timestamp-query', 'content-encoding': encoding },
        payload: encoding.toLowerCase().startsWith('gzip') ? zlib.gzipSync(request) : Buffer.from(request),
      });
      expect(res.statusCode).toBe(415);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json().error).toBe(
        `Content-Encoding ${JSON.stringify(encoding)} is not accepted: send the DER TimeStampReq as it is, without a Content-Encoding (or with identity); nothing was stored`,
      );
      expect(written.length).toBe(before);
    },
  );

  test('identity is the bytes as they are: a token', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/tsa',
      headers: { 'content-type': 'application/timestamp-query', 'content-encoding': 'identity' },
      payload: Buffer.from(timeStampRequest(crypto.randomBytes(32), crypto.randomBytes(8))),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/timestamp-reply');
  });
});
