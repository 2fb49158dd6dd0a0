// The token writer (core/tsa-authority.ts) writes each TimeStampResp into one array from parts encoded once. Here its
// bytes are compared with a plain element-by-element DER encoding of the same ASN.1 (RFC 3161 §2.4.2, RFC 5652
// §5, RFC 5035 §3) written out in this file, across the fields whose lengths vary: the imprint's algorithm, nonces
// of every length up to past 256 bytes, certReq, genTime's fraction of a second, serial numbers with leading
// zero bytes or a high bit, and signatures of 8 to 72 bytes. Tokens signed with a real TSA key (`timeseal keys
// init`'s chain) pass core/rfc3161.ts and, for SHA-256 imprints, runtime/tsa-client.ts (pkijs, which also re-encodes them
// to check the DER). Wall time ~2 s.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { addTsaKeys, loadTsaKeys } from '../runtime/keys.ts';
import { pemCertificates, checkToken } from './rfc3161.ts';
import { checkTimeStamp } from '../runtime/tsa-client.ts';
import { timeStampRequest } from './tsa-client.ts';
import {
  grantedResponse,
  parseTimeStampRequest,
  randomSerial,
  receiptRequest,
  signedAttributes,
  signedResponse,
  tstInfo,
  TSA_POLICY_OID,
  type TimeStampRequest,
  type TsaIdentity,
} from './tsa-authority.ts';

// ---- The reference: each element encoded on its own, then nested ----

function tlv(tag: number, ...contents: Uint8Array[]): Uint8Array {
  const body = Buffer.concat(contents);
  const n = body.length;
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  return Buffer.concat([Uint8Array.of(tag, ...length), body]);
}
const seq = (...c: Uint8Array[]) => tlv(0x30, ...c);
function oid(text: string): Uint8Array {
  const arcs = text.split('.').map(BigInt);
  const out: number[] = [];
  for (const arc of [arcs[0]! * 40n + arcs[1]!, ...arcs.slice(2)]) {
    const chunk = [Number(arc & 0x7fn)];
    for (let v = arc >> 7n; v > 0n; v >>= 7n) chunk.unshift(Number(v & 0x7fn) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Uint8Array.from(out));
}
/** A positive INTEGER from big-endian bytes: minimal, with a zero byte before a high bit. */
function integer(bytes: Uint8Array): Uint8Array {
  let b = [...bytes];
  while (b.length > 1 && b[0] === 0) b.shift();
  if (b.length === 0) b = [0];
  if (b[0]! & 0x80) b.unshift(0);
  return tlv(0x02, Uint8Array.from(b));
}
const small = (n: number) => integer(Uint8Array.of(n));
const derSort = (items: Uint8Array[]) => [...items].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
const setOf = (items: Uint8Array[]) => tlv(0x31, ...derSort(items));
const retag = (tag: number, der: Uint8Array) => Uint8Array.of(tag, ...der.subarray(1));
const sha256 = (b: Uint8Array) => new Uint8Array(crypto.createHash('sha256').update(b).digest());

/** The elements inside the DER element `der` (definite lengths of at most two bytes, as in a certificate). */
function kids(der: Uint8Array): Uint8Array[] {
  const first = der[1]!;
  const out: Uint8Array[] = [];
  for (let at = first & 0x80 ? 2 + (first & 0x7f) : 2; at < der.length;) {
    const b = der[at + 1]!;
    const n = b & 0x80 ? b & 0x7f : 0;
    let len = n === 0 ? b : 0;
    for (let i = 0; i < n; i++) len = len * 256 + der[at + 2 + i]!;
    out.push(der.subarray(at, at + 2 + n + len));
    at += 2 + n + len;
  }
  return out;
}

/** The issuer, serial number and subject of a DER certificate (RFC 5280 §4.1). */
function certificateFields(cert: Uint8Array): { issuer: Uint8Array; serial: Uint8Array; subject: Uint8Array } {
  const f = kids(kids(cert)[0]!);
  const o = f[0]![0] === 0xa0 ? 1 : 0; // [0] version
  return { serial: f[o]!, issuer: f[o + 2]!, subject: f[o + 4]! };
}

function referenceTstInfo(
  request: TimeStampRequest,
  certificates: Uint8Array[],
  genTime: Date,
  serial: Uint8Array,
): Uint8Array {
  const iso = genTime.toISOString();
  const fraction = iso.slice(20, 23).replace(/0+$/, '');
  const text = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}${fraction ? `.${fraction}` : ''}Z`;
  return seq(
    small(1),
    oid(TSA_POLICY_OID),
    request.messageImprint,
    integer(serial),
    tlv(0x18, Buffer.from(text, 'latin1')),
    seq(small(1)),
    ...(request.nonce ? [tlv(0x02, request.nonce)] : []),
    tlv(0xa0, tlv(0xa4, certificateFields(certificates[0]!).subject)),
  );
}

function referenceResponse(
  info: Uint8Array,
  request: TimeStampRequest,
  certificates: Uint8Array[],
  sign: (data: Uint8Array) => Uint8Array,
): Uint8Array {
  const { issuer, serial } = certificateFields(certificates[0]!);
  const sha256Id = seq(oid('2.16.840.1.101.3.4.2.1'));
  const attribute = (type: string, value: Uint8Array) => seq(oid(type), setOf([value]));
  const attrs = setOf([
    attribute('1.2.840.113549.1.9.3', oid('1.2.840.113549.1.9.16.1.4')),
    attribute('1.2.840.113549.1.9.4', tlv(0x04, sha256(info))),
    attribute('1.2.840.113549.1.9.16.2.47', seq(seq(seq(tlv(0x04, sha256(certificates[0]!)))))),
  ]);
  const signerInfo = seq(
    small(1),
    seq(issuer, serial),
    sha256Id,
    retag(0xa0, attrs),
    seq(oid('1.2.840.10045.4.3.2')),
    tlv(0x04, sign(attrs)),
  );
  const signedData = seq(
    small(3),
    setOf([sha256Id]),
    seq(oid('1.2.840.113549.1.9.16.1.4'), tlv(0xa0, tlv(0x04, info))),
    ...(request.certReq ? [retag(0xa0, setOf(certificates))] : []),
    setOf([signerInfo]),
  );
  return seq(seq(small(0)), seq(oid('1.2.840.113549.1.7.2'), tlv(0xa0, signedData)));
}

// ---- A TSA ----

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-tsa-token-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const dirs = { keys: path.join(dir, 'keys'), privateKeys: path.join(dir, 'private-keys') };
addTsaKeys(dirs, 'https://timeseal.test');
const keys = loadTsaKeys(dirs)!;
const root = pemCertificates(fs.readFileSync(path.join(dirs.keys, 'timeseal-tsa-root.pem'), 'utf8'));
const real: TsaIdentity = {
  certificates: keys.certificates,
  sign: (data) => crypto.sign('sha256', data, keys.privateKey),
};
/** A stand-in signature of 8 to 72 bytes that depends on what is signed, so both writers can be given the same one. */
const fakeSign = (data: Uint8Array): Uint8Array => {
  const h = crypto.createHash('sha512').update(data).digest();
  return new Uint8Array(Buffer.concat([h, h]).subarray(0, 8 + (h[0]! % 65)));
};
const fake: TsaIdentity = { certificates: keys.certificates, sign: fakeSign };

/** A DER TimeStampReq: the algorithm's OID (contents, hex), the digest, optional nonce and certReq. */
function requestDer(
  algorithm: string,
  digest: Uint8Array,
  nonce: Uint8Array | undefined,
  certReq: boolean,
): Uint8Array {
  const imprint = seq(seq(tlv(0x06, Buffer.from(algorithm, 'hex'))), tlv(0x04, digest));
  return seq(
    small(1),
    imprint,
    ...(nonce ? [tlv(0x02, nonce)] : []),
    ...(certReq ? [Uint8Array.of(0x01, 0x01, 0xff)] : []),
  );
}
const ALGORITHMS = [
  ['608648016503040201', 32],
  ['608648016503040202', 48],
  ['608648016503040203', 64],
] as const;
/** A positive nonce of `n` bytes (the first byte below 0x80, not zero: a minimal INTEGER). */
const nonceOf = (n: number) => Uint8Array.from(crypto.randomBytes(n), (b, i) => (i === 0 ? (b % 0x7f) + 1 : b));

function parsed(der: Uint8Array): TimeStampRequest {
  const r = parseTimeStampRequest(der);
  if (!('request' in r)) throw new Error(`refused: ${r.rejection.text}`);
  return r.request;
}

describe('the token writer', () => {
  test('every token equals the element-by-element DER encoding, whatever the lengths of its variable fields', () => {
    let compared = 0;
    const nonceLengths = [undefined, 1, 8, 20, 60, 100, 127, 128, 200, 255, 256, 300];
    const millis = [0, 1, 10, 100, 120, 123, 500, 999];
    const serials = [
      randomSerial(),
      Uint8Array.of(0, 0, 1, 2),
      Uint8Array.of(0xff, 1),
      Uint8Array.of(0),
      new Uint8Array(20).fill(0x80),
    ];
    for (const [i, nonceLength] of nonceLengths.entries()) {
      for (const [j, [alg, length]] of ALGORITHMS.entries()) {
        for (const certReq of [true, false]) {
          const request = parsed(
            requestDer(
              alg,
              crypto.randomBytes(length),
              nonceLength === undefined ? undefined : nonceOf(nonceLength),
              certReq,
            ),
          );
          const genTime = new Date(
            Date.UTC(2026, (i + j) % 12, 1 + i, j, 59, 30, millis[(i * 3 + j) % millis.length]!),
          );
          const serial = serials[(i + j) % serials.length]!;
          const info = tstInfo(request, fake, genTime, serial);
          expect(Buffer.from(info).toString('hex')).toBe(
            Buffer.from(referenceTstInfo(request, keys.certificates, genTime, serial)).toString('hex'),
          );
          const token = grantedResponse(info, request, fake);
          expect(Buffer.from(token).toString('hex')).toBe(
            Buffer.from(referenceResponse(info, request, keys.certificates, fakeSign)).toString('hex'),
          );
          compared++;
        }
      }
    }
    // Signatures of every length the stand-in makes (8 to 72 bytes), on a receipt's request.
    const lengths = new Set<number>();
    for (let k = 0; k < 400; k++) {
      const request = receiptRequest(crypto.randomBytes(32));
      const info = tstInfo(request, fake, new Date(Date.UTC(2026, 0, 1, 0, 0, 0, k)), randomSerial());
      lengths.add(fakeSign(signedAttributes(info, fake)).length);
      expect(
        Buffer.from(grantedResponse(info, request, fake)).equals(
          Buffer.from(referenceResponse(info, request, keys.certificates, fakeSign)),
        ),
      ).toBe(true);
    }
    expect(compared).toBe(nonceLengths.length * ALGORITHMS.length * 2);
    expect(lengths.size).toBeGreaterThan(60);
  });

  test('a signature made elsewhere (the server signs off the event loop) gives the same token', () => {
    const request = parsed(requestDer(ALGORITHMS[0][0], crypto.randomBytes(32), nonceOf(8), true));
    const info = tstInfo(request, fake, new Date('2026-03-04T05:06:07.080Z'), randomSerial());
    const attrs = signedAttributes(info, fake);
    expect(
      Buffer.from(signedResponse(info, request, fake, attrs, fakeSign(attrs))).equals(
        Buffer.from(grantedResponse(info, request, fake)),
      ),
    ).toBe(true);
    expect(() => signedResponse(info, request, fake, attrs.subarray(1), fakeSign(attrs))).toThrow(
      /not the signed attributes/,
    );
  });

  test('tokens signed with a real TSA key verify (core/rfc3161.ts; pkijs for SHA-256) and say what was asked', async () => {
    for (const [alg, length] of ALGORITHMS) {
      for (const nonceLength of [undefined, 8, 130]) {
        const digest = crypto.randomBytes(length);
        const nonce = nonceLength === undefined ? undefined : nonceOf(nonceLength);
        const request = parsed(requestDer(alg, digest, nonce, true));
        const genTime = new Date(Date.now() - 1000);
        const serial = randomSerial();
        const token = grantedResponse(tstInfo(request, real, genTime, serial), request, real);
        const facts = await checkToken(token, null, root);
        expect(facts.anchored).toBe(true);
        expect(Buffer.from(facts.imprint).equals(digest)).toBe(true);
        expect(facts.genTime.getTime()).toBe(genTime.getTime());
        expect(facts.serialNumber).toBe(Buffer.from(serial).toString('hex'));
        expect(facts.policy).toBe(TSA_POLICY_OID);
        if (length === 32) {
          const checked = await checkTimeStamp(token, digest, { trusted: root, ...(nonce ? { nonce } : {}) });
          expect(checked.genTime.getTime()).toBe(genTime.getTime());
        }
      }
    }
    // A flipped bit in the signed TSTInfo is caught: the check is not vacuous.
    const request = receiptRequest(crypto.randomBytes(32));
    const token = grantedResponse(tstInfo(request, real, new Date(Date.now() - 1000), randomSerial()), request, real);
    const info = Buffer.from(token).indexOf(Buffer.from(request.messageImprint));
    token[info + request.messageImprint.length - 1]! ^= 1;
    await expect(checkToken(token, null, root)).rejects.toThrow(/signature does not verify/);
  });

  test('serial numbers: 16 bytes, positive with the top bits 01, none twice in 100,000', () => {
    const seen = new Set<string>();
    let malformed = 0;
    for (let i = 0; i < 100_000; i++) {
      const s = randomSerial();
      if (s.length !== 16 || (s[0]! & 0xc0) !== 0x40) malformed++;
      seen.add(Buffer.from(s).toString('hex'));
    }
    expect(malformed).toBe(0);
    expect(seen.size).toBe(100_000);
  });
});

describe('the request writer (core/tsa-client.ts timeStampRequest)', () => {
  // A random 8-byte nonce starts with a zero byte about once in 256 requests; written as it is, that INTEGER
  // is not minimal DER and a strict TSA (this one's reader) refuses the request as badDataFormat.
  test.each([
    ['00413f9d955a30f5', '413f9d955a30f5'],
    ['0000807a9dbca6bb', '00807a9dbca6bb'],
    ['80c0ffee00000001', '0080c0ffee00000001'],
    ['7fffffffffffffff', '7fffffffffffffff'],
    ['0000000000000000', '00'],
  ])('nonce %s is sent as the minimal positive INTEGER %s, which the strict reader accepts', (nonce, content) => {
    const parsed = parseTimeStampRequest(
      Buffer.from(timeStampRequest(crypto.randomBytes(32), Buffer.from(nonce, 'hex'))),
    );
    if ('rejection' in parsed) throw new Error(parsed.rejection.text);
    expect(Buffer.from(parsed.request.nonce!).toString('hex')).toBe(content);
  });

  test('every one of 2,000 random nonces gives a request the strict reader accepts', () => {
    const refused = [];
    for (let i = 0; i < 2000; i++) {
      const nonce = crypto.randomBytes(8);
      nonce[0] = i % 4 === 0 ? 0 : nonce[0]!; // a leading zero byte in a quarter of them
      const parsed = parseTimeStampRequest(Buffer.from(timeStampRequest(crypto.randomBytes(32), nonce)));
      if ('rejection' in parsed) refused.push(nonce.toString('hex'));
    }
    expect(refused).toEqual([]);
  });
});
