// core/der.ts, the one DER codec: a table of what strict DER (X.690 §10) refuses, each with the words of its
// refusal, so that removing any one check of the reader fails its row; the forms just inside each limit, which
// must be read; the writer read back at every length boundary; a property that any bytes either read as an
// element whose re-encoding is those very bytes or are refused with a FormatError (there is one encoding per
// value); and the same refusals through every parser that reads DER with it — the TSA's request reader
// (tsa-authority.ts), the token check (rfc3161.ts, and tsa-client.ts, which runs it after pkijs), the PKCS#8
// key reader (sig.ts) and the offline verifier's ECDSA signatures (site/offline-verifier/src/p256.ts).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, test } from 'vitest';
import { addTsaKeys, loadTsaKeys } from '../runtime/keys.ts';
import {
  children,
  contents,
  decode,
  DerReader,
  encode,
  encodedSize,
  encoding,
  headerSize,
  integer,
  octetString,
  oid,
  readBoolean,
  readElement,
  readInteger,
  readOid,
  sequence,
  setOf,
  TAG,
} from './der.ts';
import { FormatError } from './errors.ts';
import { checkToken, pemCertificates } from './rfc3161.ts';
import { ecdsaKeygen, ecdsaSecretKeyFromPkcs8Pem, ecdsaSecretKeyToPkcs8Pem, pemDecode, pemEncode } from './sig.ts';
import { grantedResponse, parseTimeStampRequest, signedAttributes, signedResponse, tstInfo } from './tsa-authority.ts';
import { checkTimeStamp } from '../runtime/tsa-client.ts';
import { timeStampRequest } from './tsa-client.ts';
import { p256 as page, settled } from '../site/offline-verifier/src/p256.ts';

const hex = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h.replace(/\s+/g, ''), 'hex'));
const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const filled = (n: number): string => '00'.repeat(n);

/** What `read` makes of `bytes`: 'ok', or the FormatError's message (anything else is rethrown). */
function refusal(read: (b: Uint8Array) => unknown, bytes: Uint8Array): string {
  try {
    read(bytes);
    return 'ok';
  } catch (err) {
    if (err instanceof FormatError) return err.message;
    throw err;
  }
}

const element = (b: Uint8Array) => decode(b, 'the field');
const tree = (b: Uint8Array) => children(decode(b, 'the field'), 'the field');

describe('the reader refuses what is not DER, naming the field', () => {
  test.each([
    // The length
    [
      'a long-form length for a short value (0x81 0x05)',
      element,
      `04 81 05 ${filled(5)}`,
      /the length 5 in the long form/,
    ],
    ['the long form for 127', element, `04 81 7f ${filled(127)}`, /the length 127 in the long form/],
    ['an indefinite length (0x80)', element, '30 80 05 00 00 00', /indefinite length \(0x80\)/],
    ['a leading 0x00 in a long-form length', element, `04 82 00 80 ${filled(128)}`, /leading zero byte/],
    ['5 length bytes', element, `04 85 01 00 00 00 00 ${filled(8)}`, /a length of 5 bytes \(at most 4\)/],
    ['the reserved 0xff length byte (127 length bytes)', element, `04 ff ${filled(130)}`, /a length of 127 bytes/],
    // The tag
    ['a high-tag-number form tag (0x1f)', element, '1f 21 00', /tag 0x1f is in the high-tag-number form/],
    ['a context tag in the high-tag-number form (0xbf)', element, 'bf 81 00 00', /tag 0xbf is in the high-tag/],
    // Cut short, and what follows
    ['no bytes at all', element, '', /cut short before its tag/],
    ['a tag without its length', element, '04', /cut short before its length/],
    ['long-form length bytes cut short', element, '04 82 01', /a length is cut short/],
    ['contents cut short', element, '04 05 01 02 03', /an element of 5 bytes runs past its end \(3 left\)/],
    ['a child running past its parent', tree, '30 03 04 05 00', /5 bytes runs past its end \(1 left\)/],
    ['a child cut short inside its parent', tree, '30 01 04', /cut short before its length/],
    ['a byte after the element', element, '05 00 00', /1 unexpected bytes follow the element/],
    ['an element after the element', element, '05 00 05 00', /2 unexpected bytes follow the element/],
    // INTEGER (X.690 §8.3.2)
    ['an INTEGER with no contents', (b) => readInteger(element(b), 'n'), '02 00', /an INTEGER with no contents/],
    ['a needless leading 0x00', (b) => readInteger(element(b), 'n'), '02 02 00 7f', /needless leading 0x00/],
    ['a needless leading 0x00 before 0x00', (b) => readInteger(element(b), 'n'), '02 02 00 00', /leading 0x00/],
    ['a needless leading 0xff', (b) => readInteger(element(b), 'n'), '02 02 ff 80', /needless leading 0xff/],
    ['another tag where an INTEGER is due', (b) => readInteger(element(b), 'n'), '04 01 01', /n: malformed: tag 0x04/],
    // OBJECT IDENTIFIER (X.690 §8.19)
    ['an empty OBJECT IDENTIFIER', (b) => readOid(element(b), 'id'), '06 00', /an empty OBJECT IDENTIFIER/],
    ['an arc with a leading 0x80', (b) => readOid(element(b), 'id'), '06 03 2a 80 01', /needless leading 0x80/],
    ['a first arc with a leading 0x80', (b) => readOid(element(b), 'id'), '06 02 80 2a', /needless leading 0x80/],
    ['a last arc cut short', (b) => readOid(element(b), 'id'), '06 02 2a 86', /last arc is cut short/],
    // BOOLEAN (X.690 §11.1)
    ['the BOOLEAN 0x01', (b) => readBoolean(element(b), 'flag'), '01 01 01', /the BOOLEAN 0x01/],
    ['a BOOLEAN of two bytes', (b) => readBoolean(element(b), 'flag'), '01 02 00 00', /a BOOLEAN of 2 bytes/],
    ['an empty BOOLEAN', (b) => readBoolean(element(b), 'flag'), '01 00', /a BOOLEAN of 0 bytes/],
  ] satisfies Array<[string, (b: Uint8Array) => unknown, string, RegExp]>)('%s', (_, read, bytes, problem) => {
    const message = refusal(read, hex(bytes));
    expect(message).toMatch(problem);
    expect(message).toMatch(/^(the field|n|id|flag): /);
  });

  test('an element missing where one is due is named', () => {
    const one = hex('30 03 02 01 01');
    const [version, imprint] = children(decode(one, 'the request'), 'the request');
    expect(toHex(readInteger(version, 'the version'))).toBe('01');
    expect(refusal(() => readInteger(imprint, 'the messageImprint'), one)).toBe(
      'the messageImprint: malformed: missing',
    );
    expect(parseTimeStampRequest(one)).toEqual({
      rejection: {
        failInfo: 'badDataFormat',
        text: 'The request is not a DER TimeStampReq (the messageImprint: malformed: missing).',
      },
    });
  });

  test('the sequential reader: a wrong tag, a missing element and bytes left over, each named', () => {
    const two = hex('30 06 02 01 01 04 01 00');
    const reader = () => DerReader.of(decode(two, 'the key'), 'the key');
    expect(refusal(() => reader().next(TAG.OCTET_STRING, 'version'), two)).toBe(
      'the key: version: malformed: tag 0x02, expected 0x04',
    );
    expect(
      refusal(() => {
        const r = reader();
        r.next(TAG.INTEGER, 'version');
        r.next(TAG.OCTET_STRING, 'key');
        r.next(TAG.OCTET_STRING, 'more');
      }, two),
    ).toBe('the key: more: missing');
    expect(
      refusal(() => {
        const r = reader();
        r.next(TAG.INTEGER, 'version');
        r.end();
      }, two),
    ).toBe('the key: 3 unexpected bytes after the last element');
    const r = reader();
    expect(r.peek()).toBe(TAG.INTEGER);
    expect(toHex(r.next(TAG.INTEGER, 'version'))).toBe('01');
    expect(toHex(r.next(TAG.OCTET_STRING, 'key'))).toBe('00');
    expect(r.peek()).toBe(undefined);
    expect(() => r.end()).not.toThrow();
  });
});

describe('the reader reads what is just inside each limit', () => {
  test.each([
    ['a 127-byte value in the short form', `04 7f ${filled(127)}`, 127],
    ['a 128-byte value in one length byte', `04 81 80 ${filled(128)}`, 128],
    ['a 256-byte value in two length bytes', `04 82 01 00 ${filled(256)}`, 256],
    ['an empty value', '05 00', 0],
    ['tag 30 (the largest low tag number)', '1e 00', 0],
  ])('%s', (_, bytes, length) => {
    expect(contents(element(hex(bytes))).length).toBe(length);
  });

  test('four length bytes: a 16 MiB value', () => {
    const n = 2 ** 24;
    const b = new Uint8Array(6 + n);
    b.set([0x04, 0x84, 0x01, 0x00, 0x00, 0x00]);
    const d = element(b);
    expect([d.body, d.end]).toEqual([6, 6 + n]);
  });

  test.each([
    ['02 01 00', '00'],
    ['02 01 7f', '7f'],
    ['02 02 00 80', '0080'],
    ['02 01 ff', 'ff'],
    ['02 02 ff 7f', 'ff7f'],
    ['02 02 80 00', '8000'],
  ])('the minimal INTEGER %s', (bytes, value) => {
    expect(toHex(readInteger(element(hex(bytes)), 'n'))).toBe(value);
  });

  test.each([
    ['06 03 55 04 03', '2.5.4.3'],
    ['06 01 27', '0.39'],
    ['06 01 4f', '1.39'],
    ['06 02 88 37', '2.999'],
    ['06 09 60 86 48 01 65 03 04 02 01', '2.16.840.1.101.3.4.2.1'],
  ])('the OBJECT IDENTIFIER %s is %s', (bytes, text) => {
    expect(readOid(element(hex(bytes)), 'id')).toBe(text);
  });

  test('BOOLEANs 0x00 and 0xff', () => {
    expect(readBoolean(element(hex('01 01 00')), 'flag')).toBe(false);
    expect(readBoolean(element(hex('01 01 ff')), 'flag')).toBe(true);
  });
});

describe('the writer', () => {
  test('every length boundary: the header has the fewest bytes and reads back', () => {
    for (const [n, size] of [
      [0, 2],
      [127, 2],
      [128, 3],
      [255, 3],
      [256, 4],
      [65535, 4],
      [65536, 5],
      [2 ** 24 - 1, 5],
      [2 ** 24, 6],
    ] as const) {
      expect(headerSize(n), `${n}`).toBe(size);
      const der = encode(TAG.OCTET_STRING, new Uint8Array(n));
      expect(der.length).toBe(encodedSize(n));
      const d = element(der);
      expect([d.body, d.end]).toEqual([size, size + n]);
    }
    expect(() => headerSize(2 ** 32)).toThrow(RangeError);
    expect(() => encode(0x1f, new Uint8Array(0))).toThrow(RangeError);
  });

  test('INTEGERs: non-negative, minimal, a 0x00 before a high bit', () => {
    for (const [value, bytes] of [
      [0, '020100'],
      [127, '02017f'],
      [128, '02020080'],
      [256, '02020100'],
      [2 ** 53 - 1, '02071fffffffffffff'],
      [hex('000001'), '020101'],
      [hex('0000'), '020100'],
      [hex('ff'), '020200ff'],
      [new Uint8Array(0), '020100'],
    ] as const) {
      const der = integer(value);
      expect(toHex(der)).toBe(bytes);
      expect(() => readInteger(element(der), 'n')).not.toThrow();
    }
    expect(() => integer(-1)).toThrow(RangeError);
    expect(() => integer(0.5)).toThrow(RangeError);
  });

  test('OIDs read back, a 128-bit arc included; invalid dotted forms are refused', () => {
    const policy = '2.25.98735976325990746299618456542211080382';
    for (const text of ['2.5.4.3', '0.39', '1.39', '2.999.3', '1.2.840.113549.1.9.16.1.4', policy]) {
      expect(readOid(element(oid(text)), 'id')).toBe(text);
    }
    for (const bad of ['1', '3.1', '1.40', '0.40', '1.02', '1..2', '', '1.2.', 'a.b']) {
      expect(() => oid(bad), bad).toThrow(RangeError);
    }
  });

  test('a SET OF is sorted by its elements encodings; SEQUENCEs nest', () => {
    const set = setOf([hex('0401ff'), hex('040100'), hex('0201ff'), hex('04020000')]);
    expect(toHex(set)).toBe('310d' + '0201ff' + '040100' + '0401ff' + '04020000');
    expect(toHex(sequence(integer(1), sequence()))).toBe('3005' + '020101' + '3000');
  });

  test('property: any bytes either read as one element whose re-encoding is those bytes, or a FormatError', () => {
    let read = 0;
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 40 }),
      // Mostly well-formed: a header of some kind in front of random contents.
      fc
        .tuple(fc.integer({ min: 0, max: 255 }), fc.uint8Array({ maxLength: 3 }), fc.uint8Array({ maxLength: 300 }))
        .map(([tag, len, body]) => Uint8Array.from([tag, ...len, ...body])),
      fc
        .tuple(fc.integer({ min: 0, max: 30 }), fc.uint8Array({ maxLength: 300 }))
        .map(([tag, body]) => encode(tag, body)),
    );
    fc.assert(
      fc.property(bytes, (b) => {
        let d;
        try {
          d = decode(b, 'the field');
        } catch (err) {
          if (!(err instanceof FormatError) || !/^the field: not DER: /.test(err.message)) throw err;
          return;
        }
        read++;
        expect(toHex(encode(d.tag, contents(d)))).toBe(toHex(b));
      }),
      { numRuns: 3000 },
    );
    expect(read).toBeGreaterThan(500);
  });
});

// ---- The same refusals through each parser that reads DER with core/der.ts ----

/** `der` with the header of its outermost element written with one more length byte than it needs. */
function longFormOuter(der: Uint8Array): Uint8Array {
  const d = element(der);
  const n = d.end - d.body;
  const size = headerSize(n) - 2; // length bytes in the long form, 0 in the short form
  const length = Array.from({ length: size + 1 }, (_, i) => Math.floor(n / 256 ** (size - i)) & 0xff);
  return Uint8Array.from([d.tag, 0x80 | (size + 1), ...length, ...contents(d)]);
}

const SHA256 = '2.16.840.1.101.3.4.2.1';

describe('through the TSA request reader (core/tsa-authority.ts)', () => {
  const digest = crypto.randomBytes(32);
  const good = timeStampRequest(digest, hex('0102030405060708'));
  const answer = (der: Uint8Array): string => {
    const r = parseTimeStampRequest(der);
    return 'request' in r ? 'granted' : `${r.rejection.failInfo}: ${r.rejection.text}`;
  };

  test('the request as written is read, and one written with core/der.ts', () => {
    expect(answer(good)).toBe('granted');
    expect(answer(sequence(integer(1), sequence(sequence(oid(SHA256)), octetString(digest))))).toBe('granted');
  });
  test.each([
    ['a long-form outer length', () => longFormOuter(good), /badDataFormat: .*not DER: the length 67 in the long form/],
    ['a byte after it', () => Uint8Array.from([...good, 0]), /badDataFormat: .*1 unexpected bytes follow/],
    ['an indefinite length', () => Uint8Array.from([0x30, 0x80, ...good.subarray(2), 0, 0]), /indefinite length/],
    ['cut short', () => good.subarray(0, good.length - 1), /badDataFormat: .*runs past its end/],
    [
      'a non-minimal nonce',
      () => {
        const der = Uint8Array.from(good);
        const at = toHex(der).indexOf('02080102030405060708') / 2;
        der.set(hex('0208000203040506'), at); // a nonce starting 0x00 0x02: a needless leading zero
        return der;
      },
      /badDataFormat: The request is not a DER TimeStampReq \(the nonce: not DER: an INTEGER with a needless leading 0x00\)/,
    ],
    [
      'a messageImprint of three elements',
      () => sequence(integer(1), sequence(sequence(oid(SHA256)), octetString(digest), integer(1))),
      /badDataFormat: .*the messageImprint: more than an algorithm and a digest/,
    ],
    [
      'hash algorithm parameters that are not NULL',
      () => sequence(integer(1), sequence(sequence(oid(SHA256), integer(0)), octetString(digest))),
      /badDataFormat: .*the hash algorithm: parameters other than none or NULL/,
    ],
    [
      'certReq TRUE written 0x01',
      () => Uint8Array.from([...good.subarray(0, -1), 0x01]),
      /badDataFormat: .*certReq: not DER: the BOOLEAN 0x01/,
    ],
  ])('%s: badDataFormat, naming what', (_, make, expected) => {
    expect(answer(make())).toMatch(expected);
  });
});

describe('through the PKCS#8 key reader (core/sig.ts)', () => {
  const { secretKey } = ecdsaKeygen(new Uint8Array(48).fill(7));
  const der = pemDecode(ecdsaSecretKeyToPkcs8Pem(secretKey), 'PRIVATE KEY');
  test.each([
    ['a long-form outer length', () => longFormOuter(der), /not DER: a length with a leading zero/],
    ['a byte after it', () => Uint8Array.from([...der, 0]), /PrivateKeyInfo: not DER: 1 unexpected bytes follow/],
    ['a 0x80 length', () => Uint8Array.from([0x30, 0x80, ...der.subarray(3), 0, 0]), /indefinite length/],
    [
      'a byte after the public key inside its [1]',
      () => {
        const pub = toHex(der).lastIndexOf('a144034200') / 2; // [1] { BIT STRING (66) } at the end
        const tail = Uint8Array.from([0xa1, 0x46, ...der.subarray(pub + 2), 0x05, 0x00]);
        const ecKey = sequence(
          ...children(element(contents(children(element(der), 'k')[2]!)), 'k')
            .slice(0, 2)
            .map(encoding),
          tail,
        );
        const outer = children(element(der), 'k');
        return sequence(encoding(outer[0]!), encoding(outer[1]!), octetString(ecKey));
      },
      /ECPrivateKey publicKey: 2 unexpected bytes after the last element/,
    ],
  ])('%s is a FormatError', (_, make, expected) => {
    expect(refusal((b) => ecdsaSecretKeyFromPkcs8Pem(pemEncode('PRIVATE KEY', b)), make())).toMatch(expected);
  });
});

describe('through the token checks (core/rfc3161.ts, and runtime/tsa-client.ts after pkijs)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-der-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const dirs = { keys: path.join(dir, 'keys'), privateKeys: path.join(dir, 'private-keys') };
  addTsaKeys(dirs, 'https://timeseal.test', new Date('2025-01-01T00:00:00Z'));
  const keys = loadTsaKeys(dirs)!;
  const root = pemCertificates(fs.readFileSync(path.join(dirs.keys, 'timeseal-tsa-root.pem'), 'utf8'));
  const identity = {
    certificates: keys.certificates,
    sign: (d: Uint8Array) => crypto.sign('sha256', d, keys.privateKey),
  };
  const digest = new Uint8Array(crypto.randomBytes(32));
  const parsed = parseTimeStampRequest(timeStampRequest(digest, hex('0102030405060708')));
  if (!('request' in parsed)) throw new Error('the request was refused');
  const request = parsed.request;
  const genTime = new Date('2025-06-01T12:00:00.5Z');
  const info = tstInfo(request, identity, genTime, hex('4001020304'));
  const token = grantedResponse(info, request, identity);
  /** The token signed with `signature` as given (its DER changed by the caller). */
  const withSignature = (signature: Uint8Array) =>
    signedResponse(info, request, identity, signedAttributes(info, identity), signature);
  /** A valid signature whose r is written with a needless leading zero (the lengths around it adjusted). */
  const paddedSignature = (): Uint8Array => {
    const sig = identity.sign(signedAttributes(info, identity));
    const [r, s] = children(decode(sig, 'sig'), 'sig');
    return sequence(encode(TAG.INTEGER, Uint8Array.of(0, ...contents(r!))), encoding(s!));
  };
  /** A valid signature whose r has its high bit set, written without its 0x00: a negative INTEGER. */
  const negativeSignature = (): Uint8Array => {
    for (;;) {
      const sig = identity.sign(signedAttributes(info, identity));
      const [r, s] = children(decode(sig, 'sig'), 'sig');
      if (contents(r!)[0] === 0) return sequence(encode(TAG.INTEGER, contents(r!).subarray(1)), encoding(s!));
    }
  };
  /** A valid signature with a third INTEGER after r and s. */
  const threeIntegers = (): Uint8Array => {
    const [r, s] = children(decode(identity.sign(signedAttributes(info, identity)), 'sig'), 'sig');
    return sequence(encoding(r!), encoding(s!), integer(1));
  };
  /** A signature whose r is a minimal positive INTEGER of 33 bytes (0x01 then 32 bytes): too long for P-256. */
  const longR = (): Uint8Array => {
    const [r, s] = children(decode(identity.sign(signedAttributes(info, identity)), 'sig'), 'sig');
    return sequence(integer(thirtyThreeBytes(contents(r!))), encoding(s!));
  };
  const reason = async (check: Promise<unknown>): Promise<string> =>
    check.then(
      () => 'ok',
      (err: Error) => err.message,
    );

  test('the token as written passes both', async () => {
    expect(await reason(checkToken(token, digest, root))).toBe('ok');
    expect(await reason(checkTimeStamp(token, digest, { trusted: root, nonce: hex('0102030405060708') }))).toBe('ok');
  });
  test.each([
    ['a long-form outer length', () => longFormOuter(token), /not DER: a length with a leading zero/],
    ['a byte after it', () => Uint8Array.from([...token, 0]), /not DER: 1 unexpected bytes follow/],
    ['cut short', () => token.subarray(0, token.length - 1), /not DER: .*runs past its end/],
    [
      'a signature INTEGER with a needless 0x00',
      () => withSignature(paddedSignature()),
      /ECDSA signature: not DER: .*needless leading 0x00/,
    ],
    [
      'a negative signature INTEGER',
      () => withSignature(negativeSignature()),
      /an ECDSA signature holds a negative number/,
    ],
    ['a signature of three INTEGERs', () => withSignature(threeIntegers()), /an ECDSA signature is not two INTEGERs/],
    ['an r of 33 bytes', () => withSignature(longR()), /an ECDSA signature is malformed/],
  ])('%s is refused by rfc3161.ts, naming what', async (_, make, expected) => {
    const bytes = make();
    expect(await reason(checkToken(bytes, digest, root))).toMatch(expected);
    expect(await reason(checkTimeStamp(bytes, digest, { trusted: root }))).not.toBe('ok');
  });
  test('the padded signature is otherwise the token’s own: trimmed, it verifies', async () => {
    const padded = paddedSignature();
    const [r, s] = children(decode(padded, 'sig'), 'sig');
    const trimmed = sequence(integer(contents(r!)), encode(TAG.INTEGER, contents(s!)));
    expect(await reason(checkToken(withSignature(trimmed), digest, root))).toBe('ok');
  });
});

describe("through the offline verifier's ECDSA signatures (site/offline-verifier/src/p256.ts)", () => {
  const { secretKey, publicKey } = ecdsaKeygen(new Uint8Array(48).fill(3));
  const message = new TextEncoder().encode('a checkpoint\n');
  const pkcs8 = Buffer.from(pemDecode(ecdsaSecretKeyToPkcs8Pem(secretKey), 'PRIVATE KEY'));
  const key = crypto.createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
  const sig = new Uint8Array(crypto.sign('sha256', message, { key, dsaEncoding: 'der' }));
  const [r, s] = children(decode(sig, 'sig'), 'sig');
  const padded = sequence(encode(TAG.INTEGER, Uint8Array.of(0, ...contents(r!))), encoding(s!));
  /** A valid signature (node's are random) whose r has its high bit set, its 0x00 dropped: a negative INTEGER. */
  const negative = (): Uint8Array => {
    for (;;) {
      const [r2, s2] = children(decode(crypto.sign('sha256', message, { key, dsaEncoding: 'der' }), 'sig'), 'sig');
      if (contents(r2!)[0] === 0) return sequence(encode(TAG.INTEGER, contents(r2!).subarray(1)), encoding(s2!));
    }
  };
  const three = sequence(encoding(r!), encoding(s!), integer(1));
  const verify = (signature: Uint8Array) =>
    settled(async () => page.verify(signature, message, publicKey, { prehash: true, format: 'der' }));
  test.each([
    ['as signed', sig, true],
    ['with a byte after it', Uint8Array.from([...sig, 0]), false],
    ['in a long-form SEQUENCE length', longFormOuter(sig), false],
    ['with r padded by a needless 0x00', padded, false],
    ['with a negative r', negative(), false],
    ['with a third INTEGER', three, false],
    ['with an r of 33 bytes', sequence(integer(thirtyThreeBytes(contents(r!))), encoding(s!)), false],
  ])('%s: valid %s', async (_, bytes, valid) => {
    expect(await verify(bytes)).toBe(valid);
  });
});

test('readElement reads within its limit only', () => {
  const b = hex('04 02 00 00 ff');
  expect(refusal(() => readElement(b, 0, 3, 'the field'), b)).toMatch(/runs past its end \(1 left\)/);
  expect(readElement(b, 0, 4, 'the field').end).toBe(4);
});

/** 0x01 then r's last 32 bytes, left-padded with zeros when r is shorter (one signature in 256 has a 31-byte r):
 * a minimal positive INTEGER of 33 bytes, too long for P-256 whatever r was. */
function thirtyThreeBytes(r: Uint8Array): Uint8Array {
  const out = new Uint8Array(33);
  const tail = r.slice(-32);
  out[0] = 1;
  out.set(tail, 33 - tail.length);
  return out;
}
