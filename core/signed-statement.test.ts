// core/signed-statement.ts: the registration policy's structural checks as a table of statements it refuses
// (each with its SCRAPI title and the words of its detail), the statement's form on the log, and the strict
// reader of a day's statements file.
import { p256 } from '@noble/curves/nist.js';
import { describe, expect, it } from 'vitest';
import { CborTag, encodeCbor, type CborValue } from './cbor.ts';
import { ALG_ES256 } from './cose-receipt.ts';
import { concatBytes, fromHex, toHex, utf8 } from './encoding.ts';
import { sha256 } from './hash.ts';
import {
  encodeDayStatements,
  parseDayStatements,
  readSignedStatement,
  readTransparentStatement,
  signServiceStatement,
  transparentStatement,
  StatementRefusal,
  STATEMENT_MAX_BYTES,
} from './signed-statement.ts';

const secret = p256.utils.randomSecretKey();
const key = { alg: ALG_ES256, publicKey: p256.getPublicKey(secret, false), secret } as const;
const claims = new Map<number, CborValue>([
  [1, 'https://issuer.example'],
  [2, 'urn:example:sbom'],
]);
const header = (entries: Array<[number, CborValue]>) => encodeCbor(new Map(entries));
const sign1 = (protectedBytes: Uint8Array, payload: CborValue = utf8('{}'), unprotected = new Map()) =>
  encodeCbor(new CborTag(18, [protectedBytes, unprotected, payload, new Uint8Array(64)]));
const good = header([
  [1, -7],
  [3, 'application/json'],
  [15, claims],
]);

describe('readSignedStatement refuses', () => {
  const table: Array<[string, Uint8Array, string, RegExp]> = [
    ['an empty body', new Uint8Array(0), 'Malformed request', /the body is empty/],
    ['JSON', utf8('{"a":1}'), 'Malformed request', /not well-formed CBOR/],
    ['another tag', encodeCbor(new CborTag(98, [])), 'Malformed request', /tag 98, not a COSE_Sign1/],
    ['an array of 3', encodeCbor([good, new Map(), null]), 'Malformed request', /an array of 3/],
    [
      'a protected header that is a number',
      encodeCbor([1, new Map(), null, new Uint8Array(1)]),
      'Malformed request',
      /protected header is number/,
    ],
    [
      'no alg',
      sign1(
        header([
          [3, 'text/plain'],
          [15, claims],
        ]),
      ),
      'Bad Signature Algorithm',
      /no alg \(label 1\)/,
    ],
    [
      'an unknown alg',
      sign1(
        header([
          [1, -999],
          [3, 'text/plain'],
          [15, claims],
        ]),
      ),
      'Bad Signature Algorithm',
      /alg -999 is not supported; supported: ES256 \(-7\)/,
    ],
    [
      'no content type',
      sign1(
        header([
          [1, -7],
          [15, claims],
        ]),
      ),
      'Rejected',
      /no content type \(label 3/,
    ],
    [
      'no CWT claims',
      sign1(
        header([
          [1, -7],
          [3, 'text/plain'],
        ]),
      ),
      'Rejected',
      /no CWT claims \(label 15/,
    ],
    [
      'no iss',
      sign1(
        header([
          [1, -7],
          [3, 'text/plain'],
          [15, new Map([[2, 'x']])],
        ]),
      ),
      'Rejected',
      /no iss \(1\)/,
    ],
    [
      'no sub',
      sign1(
        header([
          [1, -7],
          [3, 'text/plain'],
          [15, new Map([[1, 'x']])],
        ]),
      ),
      'Rejected',
      /no sub \(2\)/,
    ],
    ['a detached payload', sign1(good, null), 'Payload Missing', /detached/],
    [
      'an x5chain only in the unprotected header',
      sign1(good, utf8('{}'), new Map([[33, new Uint8Array(3)]])),
      'Rejected',
      /unprotected header, which the log does not keep/,
    ],
    [
      'a label in both headers',
      sign1(good, utf8('{}'), new Map([[3, 'text/plain']])),
      'Malformed request',
      /both the protected and the unprotected header/,
    ],
    [
      '65 KB',
      sign1(good, new Uint8Array(STATEMENT_MAX_BYTES)),
      'Rejected',
      /this Transparency Service registers at most 65536 bytes/,
    ],
  ];
  for (const [what, bytes, title, detail] of table) {
    it(what, () => {
      let refusal: unknown;
      try {
        readSignedStatement(bytes);
      } catch (err) {
        refusal = err;
      }
      expect(refusal).toBeInstanceOf(StatementRefusal);
      expect((refusal as StatementRefusal).title).toBe(title);
      expect((refusal as StatementRefusal).detail).toMatch(detail);
    });
  }
});

describe('a statement on the log', () => {
  it('is the statement with an empty unprotected header in deterministic CBOR, whatever the encoding sent; its entry is its SHA-256', () => {
    const onLog = sign1(good);
    // The same statement with receipts in its unprotected header and its array head in a longer form (0x98 0x04).
    const sent = concatBytes(
      Uint8Array.of(0xd2, 0x98, 0x04),
      sign1(good, utf8('{}'), new Map([[394, [new Uint8Array(2)]]])).subarray(2),
    );
    const read = readSignedStatement(sent);
    expect(toHex(read.ledgerBytes)).toBe(toHex(onLog));
    expect(toHex(read.entry)).toBe(toHex(sha256(onLog)));
    expect([read.iss, read.sub, read.contentType, read.algName]).toEqual([
      'https://issuer.example',
      'urn:example:sbom',
      'application/json',
      'ES256',
    ]);
  });

  it('the service’s own statement verifies with its key over the Sig_structure, and is the same bytes when signed again', () => {
    const bytes = signServiceStatement(
      key,
      { iss: 'timeseal.test', sub: 'registration-policy' },
      'application/json',
      utf8('{"p":1}'),
    );
    expect(
      toHex(
        signServiceStatement(
          key,
          { iss: 'timeseal.test', sub: 'registration-policy' },
          'application/json',
          utf8('{"p":1}'),
        ),
      ),
    ).toBe(toHex(bytes));
    const read = readSignedStatement(bytes);
    expect(toHex(read.ledgerBytes)).toBe(toHex(bytes));
    expect(p256.verify(read.signature, read.toBeSigned, key.publicKey, { prehash: true, format: 'compact' })).toBe(
      true,
    );
  });
});

describe('a Transparent Statement as a reader takes it', () => {
  it('gives the entry of its statement on the log and its receipts, whatever the encoding sent', () => {
    const onLog = sign1(good);
    const receipts = [Uint8Array.of(0xd2, 0x84), Uint8Array.of(0xd2, 0x84, 0x40)];
    const read = readTransparentStatement(transparentStatement(onLog, receipts));
    expect(toHex(read.entry)).toBe(toHex(sha256(onLog)));
    expect(read.receipts.map(toHex)).toEqual(receipts.map(toHex));
    // The array head in a longer form (0x98 0x04): the same entry.
    const longer = concatBytes(Uint8Array.of(0xd2, 0x98, 0x04), transparentStatement(onLog, receipts).subarray(2));
    expect(toHex(readTransparentStatement(longer).entry)).toBe(toHex(sha256(onLog)));
  });

  it.each([
    ['no receipts', sign1(good), /no receipts \(394/],
    ['an empty array of receipts', sign1(good, utf8('{}'), new Map([[394, []]])), /no receipts \(394/],
    ['a receipt that is not a byte string', sign1(good, utf8('{}'), new Map([[394, [1]]])), /no receipts \(394/],
    ['a detached payload', sign1(good, null, new Map([[394, [new Uint8Array(2)]]])), /must be byte strings/],
    ['not a COSE_Sign1', encodeCbor([1, 2, 3]), /not a COSE_Sign1/],
  ] as Array<[string, Uint8Array, RegExp]>)('refuses %s', (_what, bytes, why) => {
    expect(() => readTransparentStatement(bytes)).toThrow(why);
  });
});

describe("a day's statements file", () => {
  const a = signServiceStatement(key, { iss: 'timeseal.test', sub: 'a' }, 'text/plain', utf8('a'));
  const b = signServiceStatement(key, { iss: 'timeseal.test', sub: 'b' }, 'text/plain', utf8('b'));
  it('lists the statements in entry order and reads back', () => {
    const file = encodeDayStatements([a, b]);
    const read = parseDayStatements(file);
    expect(read.map((s) => toHex(s.entry))).toEqual([toHex(sha256(a)), toHex(sha256(b))].sort());
    expect(() => encodeDayStatements([a, a])).toThrow(/there twice/);
  });
  const [first, second] = [a, b].sort((x, y) => (toHex(sha256(x)) < toHex(sha256(y)) ? -1 : 1));
  const refused: Array<[string, Uint8Array, RegExp]> = [
    ['not an array', encodeCbor(new Map()), /expected a CBOR array/],
    ['an item that is not bytes', encodeCbor([1]), /statements file\[0\]: expected a byte string/],
    ['entries out of order', encodeCbor([second!, first!]), /statements file\[1\]: entry [0-9a-f]{64} is not after/],
    [
      'a statement not in its form on the log',
      encodeCbor([sign1(good, utf8('{}'), new Map([[394, [new Uint8Array(1)]]]))]),
      /not in its form on the log/,
    ],
    ['a statement that is not one', encodeCbor([fromHex('a0')]), /statements file\[0\]: Malformed request/],
  ];
  for (const [what, bytes, message] of refused)
    it(`refuses ${what}`, () => expect(() => parseDayStatements(bytes)).toThrow(message));
});
