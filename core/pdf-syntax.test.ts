// core/pdf-syntax.ts: the object parser read against ISO 32000-2 §7.3's own examples (literal strings with
// escapes and balanced parentheses, hexadecimal strings with an odd digit, names, references, nesting), the
// serializer's round trip, a table of damaged inputs, each refused with a sentence, and the last startxref found
// however many bytes follow the file's last %%EOF.
import { describe, expect, test } from 'vitest';
import {
  lastStartxref,
  parseValue,
  PdfDict,
  PdfError,
  PdfFile,
  PdfName,
  PdfNumber,
  PdfRef,
  PdfString,
  serialize,
} from './pdf-syntax.ts';

const bytes = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const parse = (s: string) => parseValue(bytes(s), 0).value;
const text = (v: unknown): string => String.fromCharCode(...(v as PdfString).bytes);

describe('parseValue', () => {
  test.each([
    ['(This is a string)', 'This is a string'],
    [
      '(Strings may contain balanced parentheses ( ) and\nspecial characters (*!&}^% and so on).)',
      'Strings may contain balanced parentheses ( ) and\nspecial characters (*!&}^% and so on).',
    ],
    ['(These \\\ntwo strings \\\nare the same.)', 'These two strings are the same.'],
    ['(a\\nb\\tc\\(d\\)e\\\\f)', 'a\nb\tc(d)e\\f'],
    ['(\\0053 and \\53 and \\053)', '\x053 and + and +'],
    ['(line\r\nend)', 'line\nend'],
    ['<4E6F762073686D6F7A206B6120706F702E>', 'Nov shmoz ka pop.'],
    ['<901FA>', '\x90\x1f\xa0'],
    ['< 41 42\n43 >', 'ABC'],
  ])('the string %j', (input, expected) => {
    expect(text(parse(input))).toBe(expected);
  });

  test('names, numbers, references, arrays and dictionaries', () => {
    const d = parse(
      '<< /Type /Example /Sub#20Name 12 /Real -.5 /Ref 12 0 R /Array [1 2 0 R 3 (x) [4]] /Null null /T true >>',
    );
    expect(d).toBeInstanceOf(PdfDict);
    const e = (d as PdfDict).entries;
    expect((e.get('Type') as PdfName).name).toBe('Example');
    expect(e.has('Sub#20Name')).toBe(true);
    expect((e.get('Real') as PdfNumber).value).toBe(-0.5);
    expect(e.get('Ref')).toEqual(new PdfRef(12, 0));
    const arr = e.get('Array') as unknown[];
    expect(arr).toHaveLength(5);
    expect(arr[1]).toEqual(new PdfRef(2, 0));
    expect(e.get('Null')).toBeNull();
    expect(e.get('T')).toBe(true);
    // Serialized and read again: the same structure (strings as hexadecimal, reals as written).
    expect(serialize(parse(serialize(d)))).toBe(serialize(d));
    expect(serialize(d)).toContain('/Real -.5');
    expect(serialize(d)).toContain('/Sub#20Name 12');
  });

  test('a string records where it lies in the buffer (a signature\u2019s /Contents is checked against its ByteRange)', () => {
    const src = '<< /Contents <00ff> /ByteRange [0 13 19 0] >>';
    const s = (parse(src) as PdfDict).get('Contents') as PdfString;
    expect([s.start, s.end]).toEqual([13, 19]);
    expect(src.slice(s.start, s.end)).toBe('<00ff>');
  });

  test.each([
    ['(never closed', /a string at byte 0 is not closed/],
    ['<41 4G>', /holds a character that is not hexadecimal/],
    ['<41', /a hexadecimal string at byte 0 is not closed/],
    ['[1 2', /an array at byte 0 is not closed/],
    ['<< 1 2 >>', /a dictionary at byte 0 has a key that is not a name/],
    ['<< /A', /an object is cut short by the end of the file/],
    ['endobj', /an unexpected word "endobj" at byte 0/],
    ['['.repeat(200), /nest more than 100 deep/],
  ])('refuses %j', (input, why) => {
    let err: unknown;
    try {
      parse(input);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PdfError);
    expect((err as PdfError).code).toBe('damaged');
    expect((err as PdfError).message).toMatch(/^This PDF is damaged: .+\.$/);
    expect((err as PdfError).message).toMatch(why);
  });
});

/** A one-page PDF with a classic cross-reference table (§7.5.4), its offsets counted here. */
function onePagePdf(): string {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>',
  ];
  let out = '%PDF-1.7\n';
  const offsets: number[] = [];
  for (const [i, o] of objects.entries()) {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  }
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, '0')} 00000 n \n`;
  return `${out}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
}

describe('the last startxref (§7.5.5), wherever the file ends', () => {
  const inflate = () => Promise.reject(new Error('no streams here'));
  const pdf = onePagePdf();
  const xref = pdf.indexOf('xref\n');

  test.each([
    ['nothing', ''],
    ['8 KiB of white space', ' \r\n\t\f\0'.repeat(1400)],
    ['8 KiB of other bytes', 'garbage \u00ff'.repeat(820)],
    ['a startxref with no number among them', `startxref\n%%EOF\n${'x'.repeat(9000)}startxref oops`],
  ])('after the last %%EOF: %s', async (_label, tail) => {
    expect(tail.length === 0 || tail.length > 4096).toBe(true);
    const buf = bytes(pdf + tail);
    expect(lastStartxref(buf)).toEqual({ offset: xref, eofEnd: pdf.length - 1 });
    const file = await PdfFile.open(buf, inflate);
    expect(file.sections.map((s) => [s.offset, s.kind])).toEqual([[xref, 'table']]);
    expect(file.trailer.get('Root')).toEqual(new PdfRef(1, 0));
  });

  test('a file without one is refused in a sentence; one without its %%EOF still names its section', async () => {
    expect(lastStartxref(bytes('%PDF-1.7\nnothing here'))).toBeNull();
    await expect(PdfFile.open(bytes('%PDF-1.7\n1 0 obj\nnull\nendobj\n'), inflate)).rejects.toThrow(
      /its end has no startxref/,
    );
    expect(lastStartxref(bytes(pdf.replace('%%EOF\n', '')))).toEqual({ offset: xref, eofEnd: -1 });
  });
});
