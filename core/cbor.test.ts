// core/cbor.ts: RFC 8949 Appendix A's examples (test/vectors/cbor/, with its source note) both ways, round trips
// of arbitrary values (fast-check), and a table of encodings the strict decoder must refuse, each with the words
// of its error.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CborTag, decodeCbor, encodeCbor, type CborValue } from './cbor.ts';
import { fromHex, toHex } from './encoding.ts';
import { FormatError } from './errors.ts';

type JsonVector = { diagnostic: string; encoded: string; value: unknown };
const appendixA = JSON.parse(
  readFileSync(new URL('../test/vectors/cbor/rfc8949-appendix-a.json', import.meta.url), 'utf8'),
) as { source: string; vectors: JsonVector[] };

function fromJson(v: unknown): CborValue {
  if (v === null || typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map(fromJson);
  const o = v as { bytes?: string; map?: [unknown, unknown][]; tag?: number; value?: unknown };
  if (o.bytes !== undefined) return fromHex(o.bytes);
  if (o.map !== undefined) return new Map(o.map.map(([k, val]) => [k as number | string, fromJson(val)]));
  return new CborTag(o.tag!, fromJson(o.value));
}

describe('RFC 8949 Appendix A', () => {
  it('has vectors', () => {
    expect(appendixA.source).toContain('RFC 8949');
    expect(appendixA.vectors.length).toBeGreaterThan(30);
  });
  for (const v of appendixA.vectors) {
    it(`${v.diagnostic} ⇄ ${v.encoded}`, () => {
      const value = fromJson(v.value);
      expect(toHex(encodeCbor(value))).toBe(v.encoded);
      expect(decodeCbor(fromHex(v.encoded))).toEqual(value);
    });
  }
});

const arbitraryValue: fc.Arbitrary<CborValue> = fc.letrec<{ value: CborValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
    fc.string({ unit: 'grapheme' }),
    fc.uint8Array({ maxLength: 40 }),
    fc.constantFrom<CborValue>(true, false, null),
    fc.array(tie('value'), { maxLength: 5 }),
    fc
      .uniqueArray(fc.tuple(fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.string()), tie('value')), {
        maxLength: 5,
        selector: ([k]) => k,
      })
      .map((entries) => new Map(entries)),
    fc.tuple(fc.nat(1000), tie('value')).map(([t, v]) => new CborTag(t, v)),
  ),
})).value;

describe('round trips', () => {
  it('decode(encode(v)) = v and encode(decode(b)) = b', () => {
    fc.assert(
      fc.property(arbitraryValue, (value) => {
        const bytes = encodeCbor(value);
        const back = decodeCbor(bytes);
        expect(back).toEqual(value);
        expect(toHex(encodeCbor(back))).toBe(toHex(bytes));
      }),
      { numRuns: 500 },
    );
  });

  it('sorts map keys by their encoded bytes (RFC 8949 §4.2.1: 10 before 100 before -1 before "z" before "aa")', () => {
    const map = new Map<number | string, CborValue>([
      ['aa', 1],
      [-1, 2],
      ['z', 3],
      [100, 4],
      [10, 5],
    ]);
    expect(toHex(encodeCbor(map))).toBe('a50a051864042002617a036261610' + '1');
  });
});

describe('the strict decoder refuses', () => {
  const table: [string, string, RegExp][] = [
    ['an indefinite-length byte string', '5f4101ff', /indefinite length/],
    ['an indefinite-length array', '9f01ff', /indefinite length/],
    ['an indefinite-length map', 'bf0102ff', /indefinite length/],
    ['an integer not in its shortest form', '1817', /not in its shortest form/],
    ['a length not in its shortest form', '5801aa', /not in its shortest form/],
    ['a 64-bit integer that fits 32 bits', '1b00000000ffffffff', /not in its shortest form/],
    ['an integer beyond 2^53 − 1', '1b0020000000000000', /beyond 2\^53/],
    ['a negative integer beyond −2^53', '3b001fffffffffffff', /beyond −2\^53/],
    ['map keys out of order', 'a203040102', /out of the deterministic order/],
    ['a duplicate map key', 'a201020103', /duplicate map key/],
    ['a float', 'f93c00', /floating-point/],
    ['undefined', 'f7', /simple value 23/],
    ['a break alone', 'ff', /"break"/],
    ['reserved additional information', '1c', /reserved/],
    ['bytes after the item', '0101', /1 bytes after the CBOR item/],
    ['a truncated integer', '1903', /truncated/],
    ['a truncated byte string', '43aabb', /truncated/],
    ['an array longer than its bytes', '9a0fffffff', /an array of 268435455 items in fewer bytes/],
    ['text that is not UTF-8', '62c328', /not valid UTF-8/],
    ['a map key that is a byte string', 'a14001', /not an integer or text/],
    ['nothing', '', /truncated/],
  ];
  for (const [what, hex, message] of table) {
    it(`${what}: ${hex || '(empty)'}`, () => {
      expect(() => decodeCbor(fromHex(hex), 'test item')).toThrow(FormatError);
      expect(() => decodeCbor(fromHex(hex), 'test item')).toThrow(message);
    });
  }

  it('nesting deeper than 16', () => {
    expect(() => decodeCbor(fromHex(`${'81'.repeat(20)}00`))).toThrow(/nested deeper than 16/);
    expect(decodeCbor(fromHex(`${'81'.repeat(10)}00`))).toBeDefined();
  });
});

describe('the well-formed reader ({ deterministic: false }, for Signed Statements from other encoders)', () => {
  const read = (hex: string) => decodeCbor(fromHex(hex), 'statement', { deterministic: false });
  it('takes integers and lengths not in their shortest form and map keys out of order', () => {
    expect(read('1817')).toBe(23);
    expect(toHex(read('5801aa') as Uint8Array)).toBe('aa');
    expect([...(read('a203040102') as Map<number, number>)]).toEqual([
      [3, 4],
      [1, 2],
    ]);
  });
  const refused: [string, string, RegExp][] = [
    ['an indefinite-length array', '9f01ff', /indefinite length/],
    ['a duplicate map key after another key', 'a3010203040105', /duplicate map key 1/],
    ['a duplicate map key written longer', 'a20102180103', /duplicate map key 1/],
    ['a float', 'f93c00', /floating-point/],
    ['bytes after the item', '0101', /bytes after the CBOR item/],
  ];
  for (const [what, hex, message] of refused) {
    it(`still refuses ${what}: ${hex}`, () => expect(() => read(hex)).toThrow(message));
  }
});

describe('the encoder refuses', () => {
  it('numbers that are not safe integers', () => {
    expect(() => encodeCbor(1.5)).toThrow(/not a safe integer/);
    expect(() => encodeCbor(2 ** 53)).toThrow(/not a safe integer/);
  });
});
