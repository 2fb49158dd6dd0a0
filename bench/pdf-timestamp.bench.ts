// Timestamped PDFs (core/pdf-timestamp.ts, docs/FORMAT.md §3c) on a 20 MB PDF: prepare (the trailer chain read,
// the update written, SHA-256 over the ByteRange) and complete (the token into /Contents, the DSS update), then
// the check every reader runs (core/pdf-check.ts: inspect, the token against its root), for a classic xref
// table and for the same file with xref and object streams (qpdf --object-streams=generate). The floor to
// compare with, in the same run: node:crypto's SHA-256 of the same 20 MB, and one copy of it. The token is one
// real answer of `openssl ts -reply` (test/support/openssl-tsa.ts), asked once before the timings. Median of
// BENCH_ROUNDS (7) rounds, the cases taking turns. Prints a Markdown section on stdout; progress on stderr.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { pemCertificates } from '../core/rfc3161.ts';
import { checkPdfTimeStamps } from '../core/pdf-check.ts';
import { complete, prepare, tokenCertificates } from '../core/pdf-timestamp.ts';
import { startTsa } from '../test/support/openssl-tsa.ts';
import { askTsa } from '../test/pdf/tools.ts';
import { machine } from './common.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const PAGES = 20;
const IMAGE = 1024 * 1024; // bytes of random image data per page: 20 pages, 20 MB
const log = (m: string) => process.stderr.write(`bench pdf: ${m}\n`);
const inflate = async (d: Uint8Array): Promise<Uint8Array> => new Uint8Array(zlib.inflateSync(d));

/** A 20-page PDF, each page one 1 MiB image of random bytes (incompressible), with a classic xref table. */
function bigPdf(): Uint8Array {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  const offsets: number[] = [];
  let at = parts[0]!.length;
  const obj = (body: Buffer | string) => {
    offsets.push(at);
    const b = Buffer.concat([
      Buffer.from(`${offsets.length} 0 obj\n`),
      Buffer.from(body as string, 'latin1'),
      Buffer.from('\nendobj\n'),
    ]);
    parts.push(b);
    at += b.length;
  };
  const kids = Array.from({ length: PAGES }, (_, i) => `${3 + 3 * i} 0 R`).join(' ');
  obj('<< /Type /Catalog /Pages 2 0 R >>');
  obj(`<< /Type /Pages /Kids [${kids}] /Count ${PAGES} >>`);
  for (let i = 0; i < PAGES; i++) {
    const page = 3 + 3 * i;
    obj(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im ${page + 2} 0 R >> >> /Contents ${page + 1} 0 R >>`,
    );
    const draw = 'q 512 0 0 512 50 140 cm /Im Do Q';
    obj(`<< /Length ${draw.length} >>\nstream\n${draw}\nendstream`);
    const data = crypto.randomBytes(IMAGE);
    obj(
      Buffer.concat([
        Buffer.from(
          `<< /Type /XObject /Subtype /Image /Width 512 /Height 682 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Length ${data.length} >>\nstream\n`,
        ),
        data,
        Buffer.from('\nendstream'),
      ]),
    );
  }
  const xref = at;
  let table = `xref\n0 ${offsets.length + 1}\n0000000000 65535 f\r\n`;
  for (const o of offsets) table += `${String(o).padStart(10, '0')} 00000 n\r\n`;
  parts.push(
    Buffer.from(`${table}trailer\n<< /Size ${offsets.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`),
  );
  return new Uint8Array(Buffer.concat(parts));
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-pdf-'));
const tsa = await startTsa('Bench PDF TSA');
try {
  const classic = bigPdf();
  fs.writeFileSync(path.join(dir, 'classic.pdf'), classic);
  execFileSync('qpdf', ['--object-streams=generate', path.join(dir, 'classic.pdf'), path.join(dir, 'streams.pdf')]);
  const streams = new Uint8Array(fs.readFileSync(path.join(dir, 'streams.pdf')));
  const root = pemCertificates(fs.readFileSync(tsa.caFile, 'utf8'));
  // One real token per file (its imprint must match for the check to pass), asked before the timings.
  const tokens = new Map<Uint8Array, Uint8Array>();
  for (const pdf of [classic, streams]) {
    const p = await prepare(pdf, { inflate });
    tokens.set(pdf, await askTsa(tsa.url, p.digest, dir));
  }
  const cases = { 'classic xref table': classic, 'xref + object streams': streams };
  const times: Record<string, { prepare: number[]; complete: number[]; cpu: number[]; check: number[] }> = {};
  const floor = { sha256: [] as number[], copy: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    log(`round ${round + 1} of ${ROUNDS}`);
    let t = process.hrtime.bigint();
    crypto.createHash('sha256').update(classic).digest();
    floor.sha256.push(ms(t));
    t = process.hrtime.bigint();
    Uint8Array.from(classic);
    floor.copy.push(ms(t));
    for (const [name, pdf] of Object.entries(cases)) {
      const r = (times[name] ??= { prepare: [], complete: [], cpu: [], check: [] });
      const cpu = process.cpuUsage();
      t = process.hrtime.bigint();
      const p = await prepare(pdf, { inflate });
      r.prepare.push(ms(t));
      const token = tokens.get(pdf)!;
      t = process.hrtime.bigint();
      const out = complete(p, token, { certificates: [...tokenCertificates(token), ...root] });
      r.complete.push(ms(t));
      const used = process.cpuUsage(cpu);
      r.cpu.push((used.user + used.system) / 1000);
      t = process.hrtime.bigint();
      const checked = await checkPdfTimeStamps(out, { inflate, authority: root });
      r.check.push(ms(t));
      if (checked.stamps.length !== 1 || checked.stamps[0]!.state !== 'valid')
        throw new Error(`${name}: the time-stamp does not check: ${checked.stamps[0]?.reason}`);
    }
  }
  const size = (b: Uint8Array) => `${(b.length / 1e6).toFixed(1)} MB`;
  const out = [
    '## Timestamped PDFs: prepare and complete on a 20 MB PDF',
    '',
    `core/pdf-timestamp.ts in one Node process (${process.version}) on ${machine()}: a 20-page PDF of random 1 MiB images (${size(classic)}; ${size(streams)} with object streams), median of ${ROUNDS} rounds. prepare reads the trailer chain, writes the update and hashes the ByteRange (Web Crypto, one copy of the ranges); "its CPU" is the process's user + system time for both (this machine is shared: the wall times wait for the cores, the load average was ${os.loadavg()[0]!.toFixed(1)} at the end of this run); complete writes the token and the DSS update (a copy of the file); the check is what every reader runs (core/pdf-check.ts: inspect, SHA-256 over the ByteRange again, the token and its chain with Web Crypto). The floor: node:crypto's SHA-256 of the same bytes, and one copy of them.`,
    '',
    '| file | prepare | complete | prepare + complete | its CPU | check |',
    '|---|---:|---:|---:|---:|---:|',
    ...Object.entries(times).map(
      ([name, r]) =>
        `| ${name} | ${median(r.prepare).toFixed(0)} ms | ${median(r.complete).toFixed(0)} ms | ${(median(r.prepare) + median(r.complete)).toFixed(0)} ms | ${median(r.cpu).toFixed(0)} ms | ${median(r.check).toFixed(0)} ms |`,
    ),
    '',
    `Floor: SHA-256 of ${size(classic)} with node:crypto ${median(floor.sha256).toFixed(0)} ms; one copy ${median(floor.copy).toFixed(0)} ms. What a browser adds to this (reading the dropped file, the request to POST /tsa, the download) is measured with the browser path.`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  await tsa.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
