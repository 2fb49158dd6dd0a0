// What the PDF time-stamp tests share: the fixtures (test/fixtures/pdf/README.md), Node's zlib as the codec's
// inflate, the tools we did not write (openssl, qpdf, pdfsig, Java with PDFBox and Bouncy Castle), and readers
// of a stamped file that do not use core/pdf-*.ts: the ByteRanges as the file's text says them, and the token in
// the gap of one.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

export const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures', 'pdf');
export const fixture = (name: string): Uint8Array => new Uint8Array(fs.readFileSync(path.join(FIXTURES, name)));

export const inflate = async (data: Uint8Array): Promise<Uint8Array> => new Uint8Array(zlib.inflateSync(data));

export interface ToolRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function tool(cmd: string, args: string[], cwd?: string): ToolRun {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 120_000, maxBuffer: 64 << 20 });
  if (r.error) throw r.error;
  logTool(cmd, args, r.status, `${r.stdout}${r.stderr}`);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The outside checkers whose verdicts a run prints, so that their own words can be quoted. */
const LOGGED = new Set(['openssl ts', 'qpdf --check', 'pdfsig', 'cmp']);

/** pdfsig's lines that say what it found and its verdicts (not the signer's names and times). */
const PDFSIG_LINES =
  /^(Signature #|Signature Field Name|Signature Type|Signed Ranges|Total document|Not total|Signature Validation|Certificate Validation|File '.*' does not contain)/;

/** One compact line of what an outside checker said (its verdict lines, at most 12 of them), on stdout. */
export function logTool(cmd: string, args: string[], code: number | null, said: string): void {
  const name = cmd === 'openssl' || cmd === 'qpdf' ? `${cmd} ${args[0]}` : cmd;
  if (!LOGGED.has(name) || (cmd === 'openssl' && args[1] !== '-verify')) return;
  const lines = said
    .split('\n')
    .map((l) => l.replace(/^\s*-?\s*/, ''))
    .filter((l) => l !== '' && !l.startsWith('Using configuration') && (cmd !== 'pdfsig' || PDFSIG_LINES.test(l)));
  if (cmd === 'cmp' && code === 0) lines.push(`the first ${args[1]} bytes are the same`);
  const file = path.basename((cmd === 'openssl' ? args[args.indexOf('-in') + 1] : args.at(-1)) ?? '');
  console.log(`[${name} ${file}] exit ${code}: ${lines.slice(0, 12).join(' | ') || '(nothing printed)'}`);
}

const JARS = ['pdfbox2', 'fontbox2', 'commons-logging', 'bcprov', 'bcpkix', 'bcutil'].map(
  (j) => `/usr/share/java/${j}.jar`,
);

/** test/pdf/SignPdf.java compiled into `dir`, with an ECDSA P-256 signing key made by openssl. */
export function pdfbox(dir: string): { sign(input: string, output: string): void; list(file: string): string[] } {
  const cp = [...JARS, dir].join(':');
  const javac = tool('javac', ['-cp', cp, '-d', dir, path.join(import.meta.dirname, 'SignPdf.java')]);
  if (javac.code !== 0) throw new Error(`javac: ${javac.stderr}`);
  const key = path.join(dir, 'signer.key');
  const cert = path.join(dir, 'signer.pem');
  const p12 = path.join(dir, 'signer.p12');
  for (const args of [
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert],
    ['pkcs12', '-export', '-inkey', key, '-in', cert, '-out', p12, '-passout', 'pass:secret'],
  ]) {
    const r = tool('openssl', args[0] === 'req' ? [...args, '-subj', '/CN=PDFBox test signer', '-days', '30'] : args);
    if (r.code !== 0) throw new Error(`openssl ${args[0]}: ${r.stderr}`);
  }
  const java = (args: string[]): string => {
    const r = tool('java', ['-cp', cp, 'SignPdf', ...args], dir);
    if (r.code !== 0) throw new Error(`java SignPdf ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  return {
    sign: (input, output) => void java(['sign', input, output, p12, 'secret']),
    list: (file) => java(['list', file]).trim().split('\n').filter(Boolean),
  };
}

/** An RFC 3161 answer from the TSA at `url` for a SHA-256 digest, asked with `openssl ts -query` (certificates in). */
export async function askTsa(url: string, digest: Uint8Array, dir: string): Promise<Uint8Array> {
  const q = path.join(dir, `q-${Buffer.from(digest).toString('hex').slice(0, 16)}.tsq`);
  const r = tool('openssl', [
    'ts',
    '-query',
    '-digest',
    Buffer.from(digest).toString('hex'),
    '-sha256',
    '-cert',
    '-out',
    q,
  ]);
  if (r.code !== 0) throw new Error(`openssl ts -query: ${r.stderr}`);
  // A kept-alive connection the loopback server closed at the same moment fails once (ECONNRESET): ask again.
  const ask = () =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/timestamp-query' },
      body: fs.readFileSync(q),
    });
  const res = await ask().catch(ask);
  if (!res.ok) throw new Error(`TSA ${url}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** Every `/ByteRange [0 a b c]` the file's bytes spell out, in file order (read with a regular expression). */
export function byteRangesOf(pdf: Uint8Array): Array<[number, number, number, number]> {
  const text = Buffer.from(pdf).toString('latin1');
  return [...text.matchAll(/\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g)].map(
    (m) => [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])] as [number, number, number, number],
  );
}

/** The bytes a ByteRange covers. */
export function covered(pdf: Uint8Array, [a0, a, b, c]: [number, number, number, number]): Uint8Array {
  return Buffer.concat([pdf.subarray(a0, a0 + a), pdf.subarray(b, b + c)]);
}

/** The DER element hex-encoded in a ByteRange's gap (`<…>`), its zero padding cut by the DER length. */
export function gapToken(pdf: Uint8Array, [, a, b]: [number, number, number, number]): Uint8Array {
  const gap = Buffer.from(Buffer.from(pdf.subarray(a + 1, b - 1)).toString('latin1'), 'hex');
  const n = gap[1]! & 0x80 ? gap[1]! & 0x7f : 0;
  let len = n ? 0 : gap[1]!;
  for (let i = 0; i < n; i++) len = len * 256 + gap[2 + i]!;
  return new Uint8Array(gap.subarray(0, 2 + n + len));
}

/**
 * A hybrid-reference file (ISO 32000-2 §7.5.8.4), written here: a classic table whose trailer's /XRefStm names
 * an xref stream holding the page tree's two objects, which sit compressed in an object stream (the table leaves
 * them out: poppler reads a table's free entry as the last word, qpdf and this code read the stream's). qpdf --check accepts it.
 */
export function hybridPdf(): Uint8Array {
  const parts: Buffer[] = [Buffer.from('%PDF-1.5\n')];
  const offsets = new Map<number, number>();
  let at = parts[0]!.length;
  const put = (num: number, body: string | Buffer) => {
    offsets.set(num, at);
    const b = Buffer.concat([Buffer.from(`${num} 0 obj\n`), Buffer.from(body), Buffer.from('\nendobj\n')]);
    parts.push(b);
    at += b.length;
  };
  put(1, '<< /Type /Catalog /Pages 2 0 R >>');
  const text = 'BT /F1 24 Tf 72 700 Td (Hybrid) Tj ET';
  put(4, `<< /Length ${text.length} >>\nstream\n${text}\nendstream`);
  const pages = '<< /Type /Pages /Kids [3 0 R] /Count 1 >>';
  const page =
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>';
  const head = `2 0 3 ${pages.length + 1} `;
  const objstm = `${head}${pages} ${page}`;
  put(5, `<< /Type /ObjStm /N 2 /First ${head.length} /Length ${objstm.length} >>\nstream\n${objstm}\nendstream`);
  const row = (type: number, a: number, b: number) =>
    Buffer.from([type, (a >>> 24) & 255, (a >>> 16) & 255, (a >>> 8) & 255, a & 255, b >> 8, b & 255]);
  const xrefStmAt = at;
  const rows = Buffer.concat([row(2, 5, 0), row(2, 5, 1), row(1, offsets.get(5)!, 0), row(1, xrefStmAt, 0)]);
  put(
    6,
    Buffer.concat([
      Buffer.from(`<< /Type /XRef /Size 7 /W [1 4 2] /Index [2 2 5 2] /Length ${rows.length} >>\nstream\n`),
      rows,
      Buffer.from('\nendstream'),
    ]),
  );
  const entry = (o: number) => `${String(o).padStart(10, '0')} 00000 n\r\n`;
  const table =
    `xref\n0 2\n0000000000 65535 f\r\n${entry(offsets.get(1)!)}4 1\n` +
    `${entry(offsets.get(4)!)}trailer\n<< /Size 7 /Root 1 0 R /XRefStm ${xrefStmAt} >>\nstartxref\n${at}\n%%EOF\n`;
  parts.push(Buffer.from(table));
  return new Uint8Array(Buffer.concat(parts));
}

/**
 * `pdf` (whose last cross-reference section is a classic table) with an incremental update appended, written here:
 * one new object, a stream of `bytes` random bytes that nothing refers to, in a table whose /Prev is the last one
 * (as an editor saving a large attachment would). qpdf --check accepts it.
 */
export function appendUpdate(pdf: Uint8Array, bytes: number): Uint8Array {
  return appendObjects(pdf, [(num) => streamObject(num, crypto.randomBytes(bytes))]);
}

/** The words a document time-stamp's dictionary holds, as a PDF's text may hold them too. */
const TIME_STAMP_WORDS =
  '<< /Type /DocTimeStamp /Filter /Adobe.PPKLite /SubFilter /ETSI.RFC3161 /ByteRange [0 10 20 30] /Contents <00> >>';

/**
 * `pdf` (a classic table last) with an update whose objects hold a document time-stamp's words but are no
 * time-stamp: a stream whose data is the text of a whole signature dictionary (`9 0 obj << /Type /DocTimeStamp
 * /SubFilter /ETSI.RFC3161 … >> endobj`, as a page's content or an attachment may hold it), a comment line with
 * the words, and a string of them (a document's title). qpdf --check accepts it.
 */
export function withTimeStampWords(pdf: Uint8Array): Uint8Array {
  return appendObjects(
    pdf,
    [
      (num) => streamObject(num, Buffer.from(`% a page about time-stamps\n9 0 obj\n${TIME_STAMP_WORDS}\nendobj\n`)),
      (num) => Buffer.from(`${num} 0 obj\n(${TIME_STAMP_WORDS.replace(/[()]/g, '')})\nendobj\n`),
    ],
    `% ${TIME_STAMP_WORDS}\n`,
  );
}

const streamObject = (num: number, data: Buffer): Buffer =>
  Buffer.concat([
    Buffer.from(`${num} 0 obj\n<< /Length ${data.length} >>\nstream\n`),
    data,
    Buffer.from('\nendstream\nendobj\n'),
  ]);

/** `pdf` with an incremental update of new objects (numbered from the last trailer's /Size on) that nothing refers
 * to, `comment` (comment lines) before them, in a table whose /Prev is the last one. */
function appendObjects(pdf: Uint8Array, objects: Array<(num: number) => Buffer>, comment = ''): Uint8Array {
  const text = Buffer.from(pdf).toString('latin1');
  const last = [...text.matchAll(/trailer\s*<<([\s\S]*?)>>\s*startxref\s+(\d+)\s+%%EOF/g)].at(-1);
  if (!last) throw new Error('appendUpdate: no classic trailer');
  const size = Number(/\/Size (\d+)/.exec(last[1]!)![1]);
  const root = /\/Root (\d+ \d+ R)/.exec(last[1]!)![1]!;
  const parts: Buffer[] = [Buffer.from(pdf), Buffer.from(`${text.endsWith('\n') ? '' : '\n'}${comment}`)];
  let at = parts[0]!.length + parts[1]!.length;
  const offsets: number[] = [];
  objects.forEach((make, i) => {
    const object = make(size + i);
    offsets.push(at);
    parts.push(object);
    at += object.length;
  });
  const entries = offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n\r\n`).join('');
  const table =
    `xref\n0 1\n0000000000 65535 f\r\n${size} ${objects.length}\n${entries}` +
    `trailer\n<< /Size ${size + objects.length} /Root ${root} /Prev ${last[2]} >>\nstartxref\n${at}\n%%EOF\n`;
  return new Uint8Array(Buffer.concat([...parts, Buffer.from(table)]));
}
