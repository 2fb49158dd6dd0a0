// A large real PDF made on the spot, for the browser time-stamp test and its benchmark
// (test/site/pdf-stamp.browser.test.ts, bench/pdf-stamp.bench.ts): one page drawing a grey image of random bytes,
// unfiltered (so the file is as large as asked), written out by qpdf, which lays out the cross-reference table
// and must then pass its own `qpdf --check`.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';

/** Writes a one-page PDF of a little over `bytes` (rounded up to a 4096-byte row) to `file`. */
export function writeBigPdf(file: string, bytes: number): void {
  const w = 4096;
  const h = Math.ceil(bytes / w);
  const image = crypto.randomBytes(w * h);
  const content = 'q 400 0 0 500 100 100 cm /Im1 Do Q\n';
  const raw = Buffer.concat([
    Buffer.from(
      '%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n' +
        '2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n' +
        '3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im1 5 0 R >> >> /Contents 4 0 R >>\nendobj\n' +
        `4 0 obj\n<< /Length ${content.length} >>\nstream\n${content}endstream\nendobj\n` +
        `5 0 obj\n<< /Type /XObject /Subtype /Image /Width ${w} /Height ${h} /ColorSpace /DeviceGray /BitsPerComponent 8 /Length ${image.length} >>\nstream\n`,
      'latin1',
    ),
    image,
    Buffer.from('\nendstream\nendobj\ntrailer\n<< /Size 6 /Root 1 0 R >>\n%%EOF\n', 'latin1'),
  ]);
  const src = `${file}.src`;
  fs.writeFileSync(src, raw);
  try {
    // No xref table in the source: qpdf rebuilds it (exit 3: warnings), then the output must pass its own check.
    const write = spawnSync('qpdf', ['--compress-streams=n', src, file], { encoding: 'utf8' });
    if (write.status !== 0 && write.status !== 3) throw new Error(`qpdf: ${write.stderr}`);
    const check = spawnSync('qpdf', ['--check', file], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`qpdf --check ${file}: ${check.stdout}${check.stderr}`);
  } finally {
    fs.rmSync(src, { force: true });
  }
}
