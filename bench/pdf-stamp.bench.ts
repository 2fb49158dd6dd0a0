// `make bench` (bench/run.ts): a PDF of 20 MiB time-stamped in the browser (the drop zone's "Timestamp this PDF",
// site/src/lib/pdf-stamp.ts), in Debian's headless Chromium against the real server (`timeseal serve`) and the
// built site: the time from giving the file to the /proof drop zone to the download of
// `<name>.timestamped.pdf`, the button pressed as soon as it shows. The file is made with qpdf
// (test/support/big-pdf.ts); the drop zone also hashes and submits the file meanwhile, as it does for a
// visitor. Three runs in fresh pages; the median and the fastest. Prints a Markdown section on stdout.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeBigPdf } from '../test/support/big-pdf.ts';
import { createProject, ensureBuilt, launchBrowser, removeProject, startServer } from '../test/site/helpers.ts';

const SIZE = 20 * 2 ** 20;
const RUNS = 3;

const log = (message: string) => process.stderr.write(`pdf-stamp.bench: ${message}\n`);

ensureBuilt();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-pdf-bench-'));
const project = createProject();
project.env.FREE_TIER_DAILY_LIMIT = '100';
project.env.TIMESEAL_ORIGIN = 'http://localhost';
const server = await startServer(project);
const browser = await launchBrowser();
const file = path.join(tmp, 'scan.pdf');
writeBigPdf(file, SIZE);
const size = fs.statSync(file).size;
const times: number[] = [];
let outSize = 0;
let tsaBody = 0;
try {
  for (let run = 0; run < RUNS; run++) {
    const context = await browser.newContext({ baseURL: server.url, acceptDownloads: true });
    const page = await context.newPage();
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/tsa') tsaBody = r.postDataBuffer()?.length ?? 0;
    });
    await page.goto('/proof');
    await page.waitForFunction(() => {
      const island = document.querySelector('#proof-dropzone-input')?.closest('astro-island');
      return !!island && !island.hasAttribute('ssr');
    });
    const started = performance.now();
    await page.setInputFiles('#proof-dropzone-input', file);
    const button = page.getByRole('button', { name: 'Timestamp this PDF' });
    await button.click();
    const link = page.getByRole('link', { name: 'Download timestamped PDF' });
    await link.waitFor({ timeout: 120_000 });
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    const saved = path.join(tmp, `out-${run}.pdf`);
    await download.saveAs(saved);
    times.push(performance.now() - started);
    outSize = fs.statSync(saved).size;
    log(`run ${run + 1}: ${(times.at(-1)! / 1000).toFixed(2)} s`);
    await context.close();
  }
} finally {
  await browser.close();
  await server.stop();
  removeProject(project);
  fs.rmSync(tmp, { recursive: true, force: true });
}
const sorted = [...times].sort((a, b) => a - b);
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const load = os
  .loadavg()
  .map((l) => l.toFixed(1))
  .join(', ');
process.stdout.write(
  [
    '## A 20 MiB PDF time-stamped in the browser',
    '',
    `From giving a ${(size / 2 ** 20).toFixed(1)} MiB PDF (qpdf, one page, an unfiltered image) to the /proof drop zone,`,
    "pressing 'Timestamp this PDF' at once, to the download of the timestamped PDF, in headless Chromium against",
    `\`timeseal serve\` on this machine (${RUNS} runs in fresh pages). \`make bench\` runs it with the others;`,
    `alone: \`nice -n 10 node bench/run.ts --only pdf-stamp\`. Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC;`,
    `load average at its end ${load} (1, 5, 15 min) on ${os.cpus().length} cores shared with other sessions.`,
    '',
    '| median | fastest | output | sent to POST /tsa |',
    '|---|---|---|---|',
    `| ${s(sorted[Math.floor(RUNS / 2)]!)} | ${s(sorted[0]!)} | ${(outSize / 2 ** 20).toFixed(2)} MiB (+${(outSize - size).toLocaleString('en-US')} B) | ${tsaBody} B |`,
    '',
  ].join('\n'),
);
