// `make bench` (bench/run.ts; alone: node bench/run.ts --only publish-scan): what finding a day's changes costs the
// writer's publication (pipeline/storage/publish.ts) on a working copy of 10 days against one of 3,650 days — it
// must cost the same on day 3,650 as on day 10. The copies are synthetic (no build: 3,650 builds would take an
// hour): per day the eight files of the archive's root (ledger, both signatures, their metadata, the day
// checkpoint, one RFC 3161 token, the `.ots` proof and the cosignatures), four full level-0 tiles and four entry
// bundles, about a thousand entries a day; plus days.json, the checkpoint, the index head and the status files,
// rewritten every day. Publication goes to a folder store (pipeline/storage/folder.ts) so that only the scan and the
// writes differ, not a network. Each size: the first publication (no record: every file), then ROUNDS times one more
// day and its publication; the median of those. Prints a Markdown section on stdout.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CHECKPOINT_PATH,
  DAYS_PATH,
  OTS_STATUS_PATH,
  BLOCK_INFO_PATH,
  cosignaturesPath,
  dayCheckpointPath,
  ecdsaSignaturePath,
  ledgerOtsPath,
  ledgerPath,
  mldsaSignaturePath,
  signaturesMetaPath,
  tsrPath,
} from '../core/archive.ts';
import { encodeIndexHead, INDEX_HEAD_PATH } from '../core/index-segments.ts';
import { entryBundlePath, tilePath } from '../core/tiles.ts';
import { writeImmutable, writeMutable } from '../pipeline/files.ts';
import { FolderArchiveStore } from '../pipeline/storage/folder.ts';
import { publishRecordPath, publishWorkingCopy, type PublishReport } from '../pipeline/storage/publish.ts';

const SIZES = [10, 3650] as const;
const ROUNDS = 7;
const TILES_A_DAY = 4;

const log = (message: string): void => void process.stderr.write(`publish-scan.bench: ${message}\n`);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const dateOf = (n: number): string => new Date(Date.UTC(2016, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);
const filler = (size: number, seed: number): Uint8Array =>
  Uint8Array.from({ length: size }, (_, i) => (i * 31 + seed) & 0xff);

/** Day n's files in the copy, as a build, the anchoring and the witnesses would leave them. */
function writeDay(copy: string, n: number): void {
  const date = dateOf(n);
  writeImmutable(copy, ledgerPath(date), filler(4096, n));
  writeImmutable(copy, ecdsaSignaturePath(date), filler(72, n));
  writeImmutable(copy, mldsaSignaturePath(date), filler(3309, n));
  writeImmutable(copy, signaturesMetaPath(date), filler(300, n));
  writeImmutable(copy, dayCheckpointPath(date), filler(400, n));
  writeImmutable(copy, tsrPath(date, 0), filler(1500, n));
  writeMutable(copy, ledgerOtsPath(date), filler(800, n));
  writeMutable(copy, cosignaturesPath(date), filler(120, n));
  for (let k = 0; k < TILES_A_DAY; k++) {
    writeImmutable(copy, tilePath(0, n * TILES_A_DAY + k, 256), filler(8192, n + k));
    writeImmutable(copy, entryBundlePath(n * TILES_A_DAY + k, 256), filler(9000, n + k));
  }
  for (const rel of [DAYS_PATH, CHECKPOINT_PATH, INDEX_HEAD_PATH, OTS_STATUS_PATH, BLOCK_INFO_PATH]) {
    writeMutable(
      copy,
      rel,
      rel === INDEX_HEAD_PATH ? encodeIndexHead({ treeSize: 0, segments: [] }) : `${rel} after day ${n}\n`,
    );
  }
}

interface Result {
  days: number;
  files: number;
  first: PublishReport;
  recordBytes: number;
  ms: number[];
  looked: number[];
  sent: number[];
}

async function measure(days: number): Promise<Result> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `timeseal-publish-scan-${days}-`));
  try {
    const copy = path.join(dir, 'copy');
    const store = new FolderArchiveStore(path.join(dir, 'store'));
    for (let n = 0; n < days; n++) writeDay(copy, n);
    const fence = async (): Promise<void> => {};
    const first = await publishWorkingCopy({ folder: copy, store, fence });
    const files = first.looked;
    const ms: number[] = [];
    const looked: number[] = [];
    const sent: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      // Change times are compared with the last publication's start, less two seconds: a day's files come later.
      await new Promise((resolve) => setTimeout(resolve, 2100));
      writeDay(copy, days + r);
      const started = performance.now();
      const report = await publishWorkingCopy({ folder: copy, store, fence });
      ms.push(performance.now() - started);
      looked.push(report.looked);
      sent.push(report.created + report.replaced);
    }
    return { days, files, first, recordBytes: fs.statSync(publishRecordPath(copy)).size, ms, looked, sent };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const results: Result[] = [];
for (const days of SIZES) {
  log(`${days} days`);
  results.push(await measure(days));
}

const out: string[] = [];
out.push("## Finding a day's changes to publish (bench/publish-scan.bench.ts)");
out.push('');
out.push(
  `The writer's publication (\`publishWorkingCopy\`) on a synthetic working copy of 10 and of 3,650 days (${8 + 2 * TILES_A_DAY} files a day: the eight of the root, ${TILES_A_DAY} level-0 tiles and ${TILES_A_DAY} entry bundles; the mutable files rewritten every day), into a folder store. After the first publication (no record, so every file is offered), one more day is written and published, ${ROUNDS} times; the median. Before the change times were used (2026-11-28), every publication listed every file of the copy, read every mutable one (each day's \`.ots\` and cosignatures) and rewrote a record of every path it had sent: on these copies 45 ms and 218 ms a day, with a record of 3.6 KB and 1,132 KB (measured once by hand, 2026-11-28, the code before this benchmark on the same copies); the walk of every file grows with the tiles too, ~7,800 a day for a day of 1,000,000 hashes.`,
);
out.push('');
out.push(
  "| days in the copy | files at the start | first publication (every file) | a day's publication | files looked at | objects sent | record (`.published.json`) |",
);
out.push('|---|---|---|---|---|---|---|');
for (const r of results) {
  out.push(
    `| ${r.days.toLocaleString('en')} | ${r.files.toLocaleString('en')} | ${r.first.seconds.toFixed(2)} s | ${median(r.ms).toFixed(1)} ms | ${median(r.looked).toLocaleString('en')} | ${median(r.sent)} | ${(r.recordBytes / 1024).toFixed(1)} KB |`,
  );
}
const [small, large] = results as [Result, Result];
out.push('');
out.push(
  `3,650 days ÷ 10 days: a day's publication ${(median(large.ms) / median(small.ms)).toFixed(2)}×, files looked at ${(median(large.looked) / median(small.looked)).toFixed(1)}× (the root's files: each is looked at, so that a file edited in place is seen), objects sent ${(median(large.sent) / median(small.sent)).toFixed(2)}×; the copy holds ${(large.files / small.files).toFixed(0)}× the files.`,
);
process.stdout.write(`${out.join('\n')}\n`);
