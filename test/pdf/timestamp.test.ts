// PDF document time-stamps (core/pdf-timestamp.ts) checked with tools we did not write: `openssl ts -verify`
// over the ByteRange's bytes (and refusing them after one flipped byte), qpdf --check, poppler's pdfsig (it
// lists the time-stamp, and a signature made before it by PDFBox still validates), PDFBox reading the
// signatures back, cmp for the original as a prefix; a first time-stamp more than 256 KiB before the end. The PDFs: a classic xref table (qpdf), xref streams and
// object streams (qpdf --object-streams=generate), a real pdfTeX file, a form with a field to keep, one signed
// by PDFBox, one encrypted by qpdf and damaged ones (test/fixtures/pdf/README.md). The token comes from
// `openssl ts -reply` behind test/support/openssl-tsa.ts.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { complete, inspect, prepare, PdfError, tokenCertificates, type PreparedPdf } from '../../core/pdf-timestamp.ts';
import { sniffEvidence } from '../../core/evidence.ts';
import { startTsa, type LoopbackTsa } from '../support/openssl-tsa.ts';
import {
  appendUpdate,
  askTsa,
  byteRangesOf,
  covered,
  fixture,
  gapToken,
  hybridPdf,
  inflate,
  pdfbox,
  tool,
} from './tools.ts';

let dir: string;
let tsa: LoopbackTsa;
let java: ReturnType<typeof pdfbox>;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-pdf-'));
  tsa = await startTsa('PDF Test TSA');
  java = pdfbox(dir);
});
afterAll(async () => {
  await tsa?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const write = (name: string, bytes: Uint8Array): string => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return file;
};

/** prepare → the TSA → complete with the token's certificates in the DSS. */
async function stamp(pdf: Uint8Array): Promise<{ prepared: PreparedPdf; out: Uint8Array; token: Uint8Array }> {
  const prepared = await prepare(pdf, { inflate });
  const token = await askTsa(tsa.url, prepared.digest, dir);
  const out = complete(prepared, token, { certificates: tokenCertificates(token) });
  return { prepared, out, token };
}

/** The input is a prefix of the output, by cmp. */
function expectPrefix(input: string, output: string): void {
  const r = tool('cmp', ['-n', String(fs.statSync(input).size), input, output]);
  expect(r.code, `cmp: ${r.stdout}${r.stderr}`).toBe(0);
}

function expectQpdfCheck(file: string): void {
  const r = tool('qpdf', ['--check', file]);
  expect(r.code, `qpdf --check ${file}\n${r.stdout}${r.stderr}`).toBe(0);
  expect(r.stdout).toMatch(/No syntax or stream encoding errors found/);
}

/** `openssl ts -verify -data` over the time-stamp's ByteRange, with the token taken from its gap. */
function opensslVerify(pdf: Uint8Array, range: [number, number, number, number], name: string): ToolResult {
  const data = write(`${name}.data`, covered(pdf, range));
  const token = write(`${name}.tst`, gapToken(pdf, range));
  return tool('openssl', ['ts', '-verify', '-data', data, '-in', token, '-token_in', '-CAfile', tsa.caFile]);
}
type ToolResult = ReturnType<typeof tool>;

describe('a time-stamp appended to real PDFs', () => {
  test('a classic xref table: the update is a table whose /Prev is the last one; openssl verifies the token over the ByteRange, and not after one flipped byte', async () => {
    const pdf = fixture('hello.pdf');
    const { prepared, out } = await stamp(pdf);
    const input = write('hello.pdf', pdf);
    const output = write('hello.timestamped.pdf', out);
    expectPrefix(input, output);
    expectQpdfCheck(output);
    const update = Buffer.from(out.subarray(pdf.length)).toString('latin1');
    expect(update).toMatch(/\nxref\n/);
    expect(update).not.toMatch(/\/Type \/XRef/);
    const lastXref = Number(/startxref\s+(\d+)\s+%%EOF\s*$/.exec(Buffer.from(pdf).toString('latin1'))![1]);
    expect(update).toContain(`/Prev ${lastXref}`);
    expect(update).toMatch(/\/Type \/DocTimeStamp \/Filter \/Adobe\.PPKLite \/SubFilter \/ETSI\.RFC3161/);

    const [range] = byteRangesOf(out);
    expect(range).toEqual(prepared.byteRange);
    expect(range![0]).toBe(0);
    const good = opensslVerify(out, range!, 'hello');
    expect(good.stdout, good.stderr).toMatch(/Verification: OK/);
    // One byte flipped inside the covered range (in the original part).
    const flipped = Uint8Array.from(out);
    const at = Math.floor(pdf.length / 2);
    flipped[at] = flipped[at]! ^ 0x20;
    const bad = opensslVerify(flipped, range!, 'hello-flipped');
    expect(bad.stdout).not.toMatch(/Verification: OK/);
    expect(`${bad.stdout}${bad.stderr}`).toMatch(/Verification: FAILED|message imprint mismatch/);

    // pdfsig lists the time-stamp field with the ranges; pdftotext still reads the page.
    const sig = tool('pdfsig', [output]);
    expect(sig.stdout).toMatch(/Signature Field Name: Timeseal time-stamp/);
    expect(sig.stdout).toContain(`Signed Ranges: [0 - ${range![1]}], [${range![2]} - ${range![2] + range![3]}]`);
    expect(tool('pdftotext', [output, '-']).stdout).toMatch(/Hello, PDF/);
  });

  test('xref streams and object streams: the update is an xref stream, read back by qpdf and PDFBox', async () => {
    const classic = write('hello-src.pdf', fixture('hello.pdf'));
    const input = path.join(dir, 'hello-objstm.pdf');
    expect(tool('qpdf', ['--object-streams=generate', classic, input]).code).toBe(0);
    const pdf = new Uint8Array(fs.readFileSync(input));
    expect(Buffer.from(pdf).toString('latin1')).toMatch(/\/Type \/ObjStm/);
    const { out } = await stamp(pdf);
    const output = write('hello-objstm.timestamped.pdf', out);
    expectPrefix(input, output);
    expectQpdfCheck(output);
    const update = Buffer.from(out.subarray(pdf.length)).toString('latin1');
    expect(update).toMatch(/\/Type \/XRef/);
    expect(update).not.toMatch(/\nxref\n/);
    const [range] = byteRangesOf(out);
    expect(opensslVerify(out, range!, 'objstm').stdout).toMatch(/Verification: OK/);
    const listed = java.list(output);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatch(/^ETSI\.RFC3161 \[0, \d+, \d+, \d+\] [0-9a-f]{64}$/);
    expect(listed[0]).toContain(`[${range!.join(', ')}]`);
    const report = await inspect(out, { inflate });
    expect(listed[0]!.split(' ').at(-1)).toBe(Buffer.from(report.signatures[0]!.digest).toString('hex'));
  });

  test('a hybrid-reference file (a table whose /XRefStm holds the page tree): the update is a table, the page found in the object stream', async () => {
    const pdf = hybridPdf();
    const input = write('hybrid.pdf', pdf);
    expectQpdfCheck(input);
    const { out } = await stamp(pdf);
    const output = write('hybrid.timestamped.pdf', out);
    expectPrefix(input, output);
    expectQpdfCheck(output);
    const update = Buffer.from(out.subarray(pdf.length)).toString('latin1');
    expect(update).toMatch(/\nxref\n/);
    // Page 1 (object 3, compressed) is rewritten with the widget in its /Annots.
    expect(update).toMatch(/\n3 0 obj\n<< \/Type \/Page [^\n]*\/Annots \[\d+ 0 R\]/);
    const [range] = byteRangesOf(out);
    expect(opensslVerify(out, range!, 'hybrid').stdout).toMatch(/Verification: OK/);
    expect(tool('pdfsig', [output]).stdout).toMatch(/Signature Field Name: Timeseal time-stamp/);
    expect(tool('pdftotext', [output, '-']).stdout).toMatch(/Hybrid/);
  });

  test('a real pdfTeX file (xref stream, object streams, 17 pages)', async () => {
    const pdf = fixture('shared-mime-info-spec.pdf');
    const { out } = await stamp(pdf);
    const input = write('smi.pdf', pdf);
    const output = write('smi.timestamped.pdf', out);
    expectPrefix(input, output);
    expectQpdfCheck(output);
    const [range] = byteRangesOf(out);
    expect(opensslVerify(out, range!, 'smi').stdout).toMatch(/Verification: OK/);
    expect(tool('pdfsig', [output]).stdout).toMatch(/Signature Field Name: Timeseal time-stamp/);
    expect(tool('pdftotext', ['-f', '17', '-l', '17', input, '-']).stdout).toBe(
      tool('pdftotext', ['-f', '17', '-l', '17', output, '-']).stdout,
    );
  });

  test("a form: its field stays, the signature field joins it on page 1, /SigFlags 3 (qpdf's reading)", async () => {
    const pdf = fixture('form.pdf');
    const { out } = await stamp(pdf);
    const output = write('form.timestamped.pdf', out);
    expectQpdfCheck(output);
    const json = JSON.parse(tool('qpdf', ['--json', output]).stdout) as {
      acroform: { fields: Array<{ fullname: string; fieldtype: string; pageposfrom1: number; value: unknown }> };
    };
    expect(json.acroform.fields.map((f) => [f.fullname, f.fieldtype, f.pageposfrom1])).toEqual([
      ['Name', '/Tx', 1],
      ['Timeseal time-stamp', '/Sig', 1],
    ]);
    expect(json.acroform.fields[0]!.value).toBe('u:Alice');
    expect(Buffer.from(out).toString('latin1')).toMatch(/\/SigFlags 3/);
  });

  test('a PDF signed by PDFBox: pdfsig still validates that signature after the time-stamp, and lists both', async () => {
    const classic = write('form-src.pdf', fixture('form.pdf'));
    const signedFile = path.join(dir, 'form-signed.pdf');
    java.sign(classic, signedFile);
    const before = tool('pdfsig', [signedFile]).stdout;
    expect(before).toMatch(
      /Signature #1:[\s\S]*Total document signed[\s\S]*Signature Validation: Signature is Valid\./,
    );
    const pdf = new Uint8Array(fs.readFileSync(signedFile));
    const { out } = await stamp(pdf);
    const output = write('form-signed.timestamped.pdf', out);
    expectPrefix(signedFile, output);
    expectQpdfCheck(output);
    const after = tool('pdfsig', [output]).stdout;
    expect(after).toMatch(
      /Signature #1:\n\s+- Signature Field Name: Signature1[\s\S]*?Signature Validation: Signature is Valid\.[\s\S]*Signature #2:\n\s+- Signature Field Name: Timeseal time-stamp/,
    );
    const report = await inspect(out, { inflate });
    expect(report.signatures.map((s) => [s.kind, s.field, s.subFilter, s.coversRevision])).toEqual([
      ['signature', 'Signature1', 'adbe.pkcs7.detached', true],
      ['document-time-stamp', 'Timeseal time-stamp', 'ETSI.RFC3161', true],
    ]);
    expect(report.signatures[0]!.revisionEnd).toBe(pdf.length);
    expect(java.list(output).map((l) => l.split(' ')[0])).toEqual(['adbe.pkcs7.detached', 'ETSI.RFC3161']);
  });
});

describe('inspect: what the time-stamps cover', () => {
  test('a DSS update after the time-stamp is named validation data; a signature after it is named changes not covered', async () => {
    const { out } = await stamp(fixture('hello.pdf'));
    const first = await inspect(out, { inflate });
    expect(first.signatures).toHaveLength(1);
    expect(first.signatures[0]!.problem).toBeNull();
    expect(first.afterLastTimeStamp).toMatchObject({ kind: 'validation-data' });
    expect(first.afterLastTimeStamp!.text).toMatch(/DSS update/);
    expect(first.afterLastTimeStamp!.from + first.afterLastTimeStamp!.bytes).toBe(out.length);

    const stamped = write('hello-ts.pdf', out);
    const resigned = path.join(dir, 'hello-ts-signed.pdf');
    java.sign(stamped, resigned);
    const later = await inspect(new Uint8Array(fs.readFileSync(resigned)), { inflate });
    expect(later.signatures.map((s) => s.kind)).toEqual(['document-time-stamp', 'signature']);
    expect(later.afterLastTimeStamp).toMatchObject({ kind: 'changes', from: first.afterLastTimeStamp!.from });
    expect(later.afterLastTimeStamp!.text).toMatch(/^\d+ bytes after the last time-stamp are not covered by it/);
  });

  test('bytes past 4 KiB after the last %%EOF: white space after the DSS is still validation data, other bytes are changes, and such a file is stamped', async () => {
    const { out } = await stamp(fixture('hello.pdf'));
    const spaces = new Uint8Array(8192).fill(0x20);
    const padded = await inspect(new Uint8Array([...out, ...spaces]), { inflate });
    expect(padded.signatures.map((s) => s.coversRevision)).toEqual([true]);
    expect(padded.afterLastTimeStamp).toMatchObject({
      kind: 'validation-data',
      bytes: padded.length - padded.afterLastTimeStamp!.from,
    });
    const junk = new TextEncoder().encode('appended by a mail gateway\n'.repeat(400));
    const changed = await inspect(new Uint8Array([...out, ...junk]), { inflate });
    expect(changed.afterLastTimeStamp).toMatchObject({ kind: 'changes' });
    // A PDF with that much after its %%EOF is stamped too, and its time-stamp covers it.
    const input = new Uint8Array([...fixture('hello.pdf'), ...spaces]);
    const again = await stamp(input);
    const report = await inspect(again.out, { inflate });
    expect(report.signatures.map((s) => s.coversRevision)).toEqual([true]);
    expect(opensslVerify(again.out, byteRangesOf(again.out)[0]!, 'padded').stdout).toMatch(/Verification: OK/);
    expect(Buffer.from(again.out.subarray(0, input.length)).equals(Buffer.from(input))).toBe(true);
  });

  test('without the DSS nothing follows; a second time-stamp gets its own field and both cover their revisions', async () => {
    const pdf = fixture('hello.pdf');
    const p1 = await prepare(pdf, { inflate });
    const once = complete(p1, await askTsa(tsa.url, p1.digest, dir));
    expect((await inspect(once, { inflate })).afterLastTimeStamp).toMatchObject({ kind: 'none', bytes: 0 });
    const p2 = await prepare(once, { inflate });
    expect(p2.fieldName).toBe('Timeseal time-stamp 2');
    const twice = complete(p2, await askTsa(tsa.url, p2.digest, dir));
    const report = await inspect(twice, { inflate });
    expect(report.signatures.map((s) => [s.field, s.coversRevision, s.revisionEnd])).toEqual([
      ['Timeseal time-stamp', true, once.length],
      ['Timeseal time-stamp 2', true, twice.length],
    ]);
    for (const [i, range] of byteRangesOf(twice).entries())
      expect(opensslVerify(twice, range, `twice-${i}`).stdout).toMatch(/Verification: OK/);
  });

  test('time-stamps further back than the last 256 KiB: a 300 KiB update after the first, then a second; each covers its revision, openssl, pdfsig and qpdf agree', async () => {
    const first = (await stamp(fixture('hello.pdf'))).out;
    const grown = appendUpdate(first, 300 * 1024);
    const between = await inspect(grown, { inflate });
    expect(between.signatures.map((s) => s.coversRevision)).toEqual([true]);
    // The DSS and the update after it: bytes the time-stamp does not cover, named.
    expect(between.afterLastTimeStamp).toMatchObject({ kind: 'changes', from: between.signatures[0]!.revisionEnd });
    expect(between.afterLastTimeStamp!.bytes).toBeGreaterThan(300 * 1024);
    expect(sniffEvidence(grown, 'grown.pdf')).toBe('timestamped-pdf');

    const { out } = await stamp(grown);
    const input = write('grown.pdf', grown);
    const output = write('grown.timestamped.pdf', out);
    expectPrefix(input, output);
    expectQpdfCheck(output);
    const report = await inspect(out, { inflate });
    expect(report.signatures.map((s) => [s.field, s.coversRevision, s.problem])).toEqual([
      ['Timeseal time-stamp', true, null],
      ['Timeseal time-stamp 2', true, null],
    ]);
    // The first time-stamp's dictionary is more than 256 KiB before the end.
    expect(out.length - report.signatures[0]!.revisionEnd).toBeGreaterThan(256 * 1024);
    const ranges = byteRangesOf(out);
    expect(ranges).toHaveLength(2);
    for (const [i, range] of ranges.entries())
      expect(opensslVerify(out, range, `grown-${i}`).stdout).toMatch(/Verification: OK/);
    expect(tool('pdfsig', [output]).stdout).toMatch(
      /Signature #1:\n\s+- Signature Field Name: Timeseal time-stamp\n[\s\S]*Signature #2:\n\s+- Signature Field Name: Timeseal time-stamp 2\n/,
    );
  });

  test('a ByteRange that leaves out more than /Contents is reported, and so is a changed byte (another digest)', async () => {
    const { out, prepared } = await stamp(fixture('hello.pdf'));
    const good = await inspect(out, { inflate });
    const flipped = Uint8Array.from(out);
    flipped[100] = flipped[100]! ^ 0x01;
    const changed = await inspect(flipped, { inflate });
    expect(Buffer.from(changed.signatures[0]!.digest).equals(Buffer.from(good.signatures[0]!.digest))).toBe(false);
    expect(Buffer.from(good.signatures[0]!.digest).equals(Buffer.from(prepared.digest))).toBe(true);

    // Widen the gap by one byte on each side, keeping the numbers' width.
    const text = Buffer.from(out).toString('latin1');
    const [a0, a, b, c] = prepared.byteRange;
    const old = `[${a0} ${a} ${b} ${c}]`;
    const wider = `[${a0} ${a - 1} ${b + 1} ${c - 1}]`.padEnd(old.length);
    const widened = Buffer.from(text.replace(old, wider), 'latin1');
    const report = await inspect(new Uint8Array(widened), { inflate });
    expect(report.signatures[0]).toMatchObject({
      coversRevision: false,
      problem: 'its /ByteRange leaves out more (or other) bytes than its /Contents',
    });
    expect(report.afterLastTimeStamp).toBeNull();
  });
});

describe('refusals, each in one sentence', () => {
  test('an encrypted PDF (qpdf --encrypt) is refused and nothing is prepared', async () => {
    const input = write('enc-src.pdf', fixture('hello.pdf'));
    const output = path.join(dir, 'enc.pdf');
    expect(tool('qpdf', ['--encrypt', 'user', 'owner', '256', '--', input, output]).code).toBe(0);
    const err = await prepare(new Uint8Array(fs.readFileSync(output)), { inflate }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PdfError);
    expect(err).toMatchObject({
      code: 'encrypted',
      message:
        'This PDF is encrypted, so a time-stamp cannot be added without its password: save an unencrypted copy and stamp that.',
    });
  });

  test.each([
    ['without startxref (hand-written, qpdf must reconstruct it)', () => fixture('hello-src.pdf'), /has no startxref/],
    ['cut in half', () => fixture('hello.pdf').subarray(0, 400), /has no startxref/],
    [
      'whose startxref points elsewhere',
      () => {
        const t = Buffer.from(fixture('hello.pdf')).toString('latin1');
        return new Uint8Array(
          Buffer.from(
            t.replace(/startxref\s+(\d+)/, (_m, n: string) => `startxref\n${Number(n) - 7}`),
            'latin1',
          ),
        );
      },
      /no cross-reference table or stream is at byte|no object is at byte/,
    ],
    [
      'whose xref entry for the catalog is wrong',
      () => {
        const t = Buffer.from(fixture('hello.pdf')).toString('latin1');
        const m = /xref\s+0 (\d+)\s+0000000000 65535 f\s+(\d{10})/.exec(t)!;
        return new Uint8Array(Buffer.from(t.replace(m[2]!, String(Number(m[2]) + 3).padStart(10, '0')), 'latin1'));
      },
      /object 1 is not at byte \d+, where its cross-reference entry says/,
    ],
    ['that is not a PDF', () => new TextEncoder().encode('just some text\n'), /does not start with %PDF-/],
  ])('a damaged PDF %s', async (_what, make, why) => {
    const err = await prepare(make(), { inflate }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PdfError);
    expect((err as PdfError).code).toBe('damaged');
    expect((err as PdfError).message).toMatch(/^This PDF is damaged: [^\n]+\.$/);
    expect((err as PdfError).message).toMatch(why);
  });

  test('a token larger than the room reserved is refused; an RSA authority with a chain fits the default', async () => {
    const pdf = fixture('hello.pdf');
    const small = await prepare(pdf, { inflate, reserve: 256 });
    const token = await askTsa(tsa.url, small.digest, dir);
    expect(() => complete(small, token)).toThrow(/more than the 256 reserved in \/Contents/);
    const rsa = await startTsa('RSA PDF Test TSA', { rsa: true });
    try {
      const p = await prepare(pdf, { inflate });
      const out = complete(p, await askTsa(rsa.url, p.digest, dir));
      const [range] = byteRangesOf(out);
      const r = tool('openssl', [
        'ts',
        '-verify',
        '-data',
        write('rsa.data', covered(out, range!)),
        '-in',
        write('rsa.tst', gapToken(out, range!)),
        '-token_in',
        '-CAfile',
        rsa.caFile,
      ]);
      expect(r.stdout).toMatch(/Verification: OK/);
    } finally {
      await rsa.stop();
    }
  });
});
