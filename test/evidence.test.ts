// core/evidence.ts: what kind of evidence a file is, on real files of each kind — a proof bundle and a
// tlog-proof printed by `timeseal proof` on an archive made by the real pipeline, a timeseal-client proof file
// holding that bundle, an RFC 3161 answer of `openssl ts -reply` (test/support/openssl-tsa.ts), an .ots of the
// OpenTimestamps client (test/vectors/ots), a PDF with a document time-stamp (core/pdf-timestamp.ts over a
// qpdf-written PDF) and the same PDF without one, a COSE receipt of `timeseal proof --receipt` and a Transparent Statement carrying it — and the one sentence a reader gives for a kind it does not
// check, naming the readers that do. A PDF is searched whole, in pieces from its end back: a time-stamp followed by
// 300 KiB, one across two pieces, and a large PDF with none. A PDF whose objects hold a time-stamp's words (in a
// stream's data, a comment, a string) but no time-stamp's dictionary is a PDF without a time-stamp.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  notCheckedHere,
  READERS,
  sniffEvidence,
  sniffEvidenceAsync,
  sniffEvidenceSync,
  type EvidenceKind,
} from '../core/evidence.ts';
import { CborTag, encodeCbor } from '../core/cbor.ts';
import { utf8 } from '../core/encoding.ts';
import { complete, prepare } from '../core/pdf-timestamp.ts';
import { transparentStatement } from '../core/signed-statement.ts';
import { appendUpdate, askTsa, fixture, inflate, tool, withTimeStampWords } from './pdf/tools.ts';
import { startTsa, type LoopbackTsa } from './support/openssl-tsa.ts';
import { buildArchive, OTS_VECTORS, run, BIN, type TestArchive } from './verifier/helpers.ts';

let archive: TestArchive;
let tsa: LoopbackTsa;
const files = new Map<string, { name: string; bytes: Uint8Array }>();

beforeAll(async () => {
  archive = buildArchive();
  tsa = await startTsa();
  const bundle = fs.readFileSync(archive.bundle);
  files.set('proof-bundle', { name: 'proof.json', bytes: bundle });
  const tlog = run(archive.dir, BIN, ['proof', archive.documentHash, '--tlog-proof', '-'], {
    TIMESEAL_NOW: '2025-11-03T00:01:00.000Z',
  });
  files.set('tlog-proof', { name: 'contract.txt.tlog-proof', bytes: new TextEncoder().encode(tlog) });
  const cose = path.join(archive.dir, 'contract.txt.receipt.cose');
  run(archive.dir, BIN, ['proof', archive.documentHash, '--receipt', cose], {
    TIMESEAL_NOW: '2025-11-03T00:01:00.000Z',
  });
  files.set('cose-receipt', { name: 'contract.txt.receipt.cose', bytes: new Uint8Array(fs.readFileSync(cose)) });
  // A Transparent Statement (RFC 9943 §7): a statement with that receipt in its unprotected header (394), the
  // receipt's own vdp (396) within its first bytes.
  const statement = new CborTag(18, [
    encodeCbor(new Map([[1, -7]])),
    new Map(),
    utf8('{"sbom":1}'),
    new Uint8Array(64),
  ]);
  files.set('transparent-statement', {
    name: 'sbom.cose',
    bytes: transparentStatement(encodeCbor(statement), [files.get('cose-receipt')!.bytes]),
  });
  const client = {
    format: 'timeseal-client-proof/1',
    hash: archive.documentHash,
    file: 'contract.txt',
    server: 'https://timeseal.test',
    submittedAt: null,
    ledgerDate: null,
    receipt: null,
    bundle: JSON.parse(bundle.toString('utf8')) as unknown,
    consistency: null,
    headers: [],
    updatedAt: '2025-11-03T00:02:00.000Z',
  };
  files.set('client-proof', {
    name: 'contract.txt.timeseal.json',
    bytes: new TextEncoder().encode(JSON.stringify(client, null, 2)),
  });
  const prepared = await prepare(fixture('hello.pdf'), { inflate });
  const token = await askTsa(tsa.url, prepared.digest, archive.dir);
  files.set('receipt', { name: 'answer.tsr', bytes: token });
  files.set('timestamped-pdf', { name: 'hello.timestamped.pdf', bytes: complete(prepared, token) });
  files.set('ots', {
    name: 'hello-world.txt.ots',
    bytes: new Uint8Array(fs.readFileSync(path.join(OTS_VECTORS, 'opentimestamps-client/hello-world.txt.ots'))),
  });
}, 120_000);
afterAll(async () => {
  await tsa?.stop();
  if (archive) fs.rmSync(archive.dir, { recursive: true, force: true });
});

describe('sniffEvidence', () => {
  test.each([
    'proof-bundle',
    'tlog-proof',
    'client-proof',
    'receipt',
    'timestamped-pdf',
    'ots',
    'cose-receipt',
    'transparent-statement',
  ] as EvidenceKind[])('%s', (kind) => {
    const f = files.get(kind)!;
    expect(sniffEvidence(f.bytes, f.name)).toBe(kind);
    // Renamed, it is still what its bytes say.
    expect(sniffEvidence(f.bytes, 'download')).toBe(kind);
  });

  test('a PDF without a time-stamp, a text and an empty file are no evidence; a .receipt.cose is a COSE receipt', () => {
    expect(sniffEvidence(fixture('hello.pdf'), 'hello.pdf')).toBeNull();
    expect(sniffEvidence(new TextEncoder().encode('The original document.\n'), 'contract.txt')).toBeNull();
    expect(sniffEvidence(new Uint8Array(0))).toBeNull();
    expect(sniffEvidence(Uint8Array.of(0xa1, 0x01), 'contract.txt.receipt.cose')).toBe('cose-receipt');
  });
});

describe('a PDF is searched whole for its time-stamps', () => {
  const stamped = () => files.get('timestamped-pdf')!.bytes;
  const junk = (n: number) => new Uint8Array(crypto.randomBytes(n));

  test('300 KiB appended after the last time-stamp, as raw bytes or as an update: still a timestamped PDF', () => {
    for (const grown of [new Uint8Array([...stamped(), ...junk(300 * 1024)]), appendUpdate(stamped(), 300 * 1024)]) {
      expect(sniffEvidence(grown, 'contract.pdf')).toBe('timestamped-pdf');
      // Read in pieces as the client and the offline page read a large file: none over a MiB and a marker's length.
      const pieces: number[] = [];
      const kind = sniffEvidenceSync(grown.length, (at, n) => (pieces.push(n), grown.subarray(at, at + n)));
      expect(kind).toBe('timestamped-pdf');
      expect(Math.max(...pieces)).toBeLessThanOrEqual((1 << 20) + 12);
    }
  });

  test('a time-stamp across two pieces is found; a 3 MiB PDF with none is a document, read whole once', async () => {
    // A time-stamp's dictionary, its /DocTimeStamp across the boundary of two pieces (or at the file's start).
    const object = '7 0 obj\n<< /Type /DocTimeStamp /ByteRange [0 1 2 3] /Contents <00> >>\nendobj\n';
    const marker = new TextEncoder().encode(object);
    const size = 3 * (1 << 20);
    for (const start of [size - (1 << 20) - 5, size - 2 * (1 << 20) - 1, 100]) {
      const pdf = new Uint8Array(size).fill(0x20);
      pdf.set(new TextEncoder().encode('%PDF-1.7\n'));
      pdf.set(marker, start - object.indexOf('/DocTimeStamp'));
      expect(sniffEvidence(pdf), `marker at ${start}`).toBe('timestamped-pdf');
      const read = async (at: number, n: number) => pdf.subarray(at, at + n);
      expect(await sniffEvidenceAsync(pdf.length, read, 'scan.pdf')).toBe('timestamped-pdf');
    }
    const plain = new Uint8Array([...fixture('hello.pdf'), ...junk(size)]);
    let read = 0;
    expect(sniffEvidenceSync(plain.length, (at, n) => ((read += n), plain.subarray(at, at + n)))).toBeNull();
    expect(read).toBeLessThan(plain.length + 65_536 + 4 * 12);
    expect(read).toBeGreaterThanOrEqual(plain.length);
  });
});

describe('a PDF is timestamped only when one of its objects is a time-stamp', () => {
  const read = (pdf: Uint8Array) => ({
    sync: (at: number, n: number) => pdf.subarray(at, at + n),
    async: async (at: number, n: number) => pdf.subarray(at, at + n),
  });

  test("a PDF with a time-stamp's words in a stream's data, a comment and a string is a PDF without a time-stamp", async () => {
    const words = withTimeStampWords(fixture('hello.pdf'));
    const text = Buffer.from(words).toString('latin1');
    for (const w of ['/DocTimeStamp', '/ETSI.RFC3161', '9 0 obj\n<< /Type /DocTimeStamp']) expect(text).toContain(w);
    const file = path.join(archive.dir, 'words.pdf');
    fs.writeFileSync(file, words);
    expect(tool('qpdf', ['--check', file]).code).toBe(0);
    expect(sniffEvidence(words, 'words.pdf')).toBeNull();
    expect(sniffEvidenceSync(words.length, read(words).sync, 'words.pdf')).toBeNull();
    expect(await sniffEvidenceAsync(words.length, read(words).async, 'words.pdf')).toBeNull();
    // Behind 2 MiB of an update, read in pieces: the same.
    const grown = withTimeStampWords(appendUpdate(fixture('hello.pdf'), 2 << 20));
    expect(sniffEvidenceSync(grown.length, read(grown).sync)).toBeNull();
    // A timestamped PDF with the words after its time-stamp is still one.
    const stamped = withTimeStampWords(files.get('timestamped-pdf')!.bytes);
    expect(sniffEvidence(stamped)).toBe('timestamped-pdf');
    expect(await sniffEvidenceAsync(stamped.length, read(stamped).async)).toBe('timestamped-pdf');
  });

  test('a dictionary with the words but no /ByteRange and /Contents is not a time-stamp', () => {
    const pdf = new TextEncoder().encode(
      '%PDF-1.7\n1 0 obj\n<< /Type /DocTimeStamp /SubFilter /ETSI.RFC3161 >>\nendobj\n',
    );
    expect(sniffEvidence(pdf)).toBeNull();
  });
});

describe('notCheckedHere', () => {
  test('the Verify page names the readers that check a proof bundle, in one sentence', () => {
    expect(READERS['proof-bundle']).not.toContain('verify-page');
    const s = notCheckedHere('proof-bundle', 'verify-page');
    expect(s).toBe(
      'This is a Timeseal proof bundle (timeseal-proof), which this page does not check: check it with the offline verifier (/offline-verifier.html).',
    );
    expect(s.match(/[.!?](\s|$)/g)).toHaveLength(1);
  });

  test('a card of the Verify page names every reader, the page itself included', () => {
    expect(notCheckedHere('receipt', null)).toContain("the Verify page's “Check a receipt” (/verify)");
    expect(notCheckedHere('proof-bundle', null)).toBe(
      'This is a Timeseal proof bundle (timeseal-proof), which this card does not check: check it with the offline verifier (/offline-verifier.html).',
    );
  });
});
