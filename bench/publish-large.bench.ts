// A large day published to an S3 store by publishWorkingCopy (pipeline/storage/publish.ts), alone in a process of
// its own, so that its peak RSS is the publication's. `--file FILE`: a working copy holding only FILE as the day's
// ledger (970 MB at 10,000,000 hashes, 9.25 GB at 100,000,000; hard-linked, so a sparse file stays sparse), the
// object's size checked and the object removed afterwards. `--folder DIR`: a whole built archive folder (a day's
// ledger, tiles, entry bundles, index segment, signatures; hard-linked into a working copy of its own), left in
// the bucket. Sent to a new prefix of the bucket TIMESEAL_BENCH_BUCKET (default `timeseal`) with the standard AWS
// variables (AWS_ENDPOINT_URL for a gateway such as scripts/ceph-rgw.sh's). `--code DIR` publishes with the
// checkout at DIR (another commit's code, for a before and after).
// Prints one JSON line: bytes, objects, seconds, peak RSS (process.resourceUsage, the same as GNU time's
// "Maximum resident set size"). Not run by `make bench` (it needs a gateway and a day of the size to measure).
// Usage: node bench/publish-large.bench.ts (--file FILE | --folder DIR) [--code DIR]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DeleteObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { ROOT } from './common.ts';

const { values } = parseArgs({
  options: { file: { type: 'string' }, folder: { type: 'string' }, code: { type: 'string', default: ROOT } },
});
if ((values.file === undefined) === (values.folder === undefined))
  throw new Error('usage: node bench/publish-large.bench.ts (--file FILE | --folder DIR) [--code DIR]');
const bucket = process.env.TIMESEAL_BENCH_BUCKET ?? 'timeseal';
const code = path.resolve(values.code);
const { openArchiveStore } = (await import(
  path.join(code, 'pipeline/storage/open.ts')
)) as typeof import('../pipeline/storage/open.ts');
const { publishWorkingCopy } = (await import(
  path.join(code, 'pipeline/storage/publish.ts')
)) as typeof import('../pipeline/storage/publish.ts');
const { s3Client } = await import('../pipeline/storage/s3.ts');

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-publish-large-'));
const copy = path.join(work, 'ledgers');
const rel = '2025-11-02.json';
if (values.file !== undefined) {
  fs.mkdirSync(copy);
  fs.linkSync(values.file, path.join(copy, rel));
} else {
  const copied = spawnSync('cp', ['-al', path.resolve(values.folder!), copy], { encoding: 'utf8' });
  if (copied.status !== 0) throw new Error(`cp -al: ${copied.stderr}`);
}
const prefix = `publish-large-${process.pid}-${Date.now()}`;
try {
  const store = await openArchiveStore(`s3://${bucket}/${prefix}`, process.env);
  const started = performance.now();
  const report = await publishWorkingCopy({ folder: copy, store, fence: async () => {} });
  const seconds = (performance.now() - started) / 1000;
  if (values.file !== undefined) {
    const client = s3Client(process.env);
    const size = fs.statSync(values.file).size;
    const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: `${prefix}/${rel}` }));
    if (head.ContentLength !== size) throw new Error(`stored ${head.ContentLength} bytes, not ${size}`);
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: `${prefix}/${rel}` }));
  }
  console.log(
    JSON.stringify({
      code,
      bytes: report.bytes,
      objects: report.created + report.replaced,
      seconds: Number(seconds.toFixed(1)),
      peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
    }),
  );
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
