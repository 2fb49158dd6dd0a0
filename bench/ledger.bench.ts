// Benchmark of the daily pipeline: `timeseal ledger build` publishing one day of 1,000,000 hashes (goal:
// ≤ 6 s, peak RSS ≤ 600 MB), then the archive's growth over 30 days of a million hashes (goal: the
// cost of a day must not grow with the archive), with the bytes of one lookup, index-sha256.json made by
// `timeseal index-json`, and `timeseal verify` along the way.
// Prints a Markdown section. Usage: node bench/ledger.bench.ts [--hashes 1000000] [--days 30]
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseCheckpoint } from '../core/checkpoint.ts';
import { fromUtf8 } from '../core/encoding.ts';
import { INDEX_HEAD_PATH, parseIndexHead, shardOf } from '../core/index-segments.ts';
import { lookupShard } from '../core/index-shard.ts';
import { parseNote } from '../core/note.ts';
import { tilePath, tilesForInclusion } from '../core/tiles.ts';
import { openDatabase } from '../store/sqlite/db.ts';
import { SegmentFile } from '../pipeline/segment-files.ts';
import { folderBytes, mb, run, timed } from './common.ts';

const { values } = parseArgs({
  options: {
    hashes: { type: 'string', default: '1000000' },
    days: { type: 'string', default: '30' },
    gap: { type: 'string', default: '65' },
  },
});
const perDay = Number(values.hashes);
const days = Number(values.days);
// Seconds between the end of one day's build and the start of the next (bench/NOTES.md: this file system makes
// file creation slow for about a minute after mass deletions; in production builds are a day apart).
const gap = Number(values.gap);

function project(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-'));
  run(['keys', 'init'], dir);
  return dir;
}

/** Enqueues `count` random hashes on `date` straight into SQLite (the import path is not what is measured). */
function enqueueRandom(dir: string, date: string, count: number): string[] {
  const db = openDatabase(path.join(dir, 'data/timeseal.db'));
  const insert = db.prepare(
    "INSERT INTO submissions (hash, submitted_at, ledger_date, source) VALUES (?, ?, ?, 'import')",
  );
  const sample: string[] = [];
  const base = Date.parse(`${date}T00:00:00.000Z`);
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const hash = crypto.randomBytes(32).toString('hex');
      if (i % Math.max(1, Math.floor(count / 20)) === 0) sample.push(hash);
      insert.run(hash, new Date(base + Math.floor((i / count) * 86_399_000)).toISOString(), date);
    }
  })();
  db.close();
  return sample;
}

const nextDay = (date: string, n = 1) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

const lines: string[] = ['## Daily ledger build (`timeseal ledger build`)', ''];

// 1. One day of `perDay` hashes into an empty archive.
{
  const dir = project();
  enqueueRandom(dir, '2025-11-02', perDay);
  const m = timed(['ledger', 'build', '--json'], dir, { TIMESEAL_NOW: '2025-11-03T00:01:00Z' });
  const written = folderBytes(path.join(dir, 'ledgers'));
  lines.push(
    `One day of ${perDay.toLocaleString('en-US')} hashes, empty archive (\`node bench/ledger.bench.ts\`):`,
    '',
    '| measure | result | goal |',
    '|---|---|---|',
    `| wall time (tiles, ledger, both signatures, checkpoint, index segment and head, status) | ${m.seconds.toFixed(2)} s | ≤ 6 s |`,
    `| peak RSS | ${m.maxRssMb.toFixed(0)} MB | ≤ 600 MB |`,
    `| written | ${written.files.toLocaleString('en-US')} files, ${mb(written.bytes)} | — |`,
    '',
  );
  const check = timed(['verify', '--json'], dir);
  lines.push(
    `\`timeseal verify\` of that archive from scratch: ${check.seconds.toFixed(2)} s, peak RSS ${check.maxRssMb.toFixed(0)} MB.`,
    '',
  );
  fs.rmSync(dir, { recursive: true, force: true });
}

// 2. Growth: `days` days of `perDay` hashes, one build per day. Per day: the time until the day is
//    published (ledger, signatures, tiles, checkpoint, its index segment, the head), the index upkeep after it
//    (merges, removals), bytes and files written, the process's peak RSS. Goals as ratios within this run.
{
  const dir = project();
  let date = '2025-11-02';
  interface Row {
    day: number;
    publish: number;
    upkeep: number;
    process: number;
    files: number;
    bytes: number;
    upkeepBytes: number;
    rss: number;
    segments: number;
  }
  const rows: Row[] = [];
  const extra: string[] = [];
  let lastEnd = 0;
  for (let d = 1; d <= days; d++) {
    const sample = enqueueRandom(dir, date, perDay);
    const wait = lastEnd + gap * 1000 - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const m = timed(['ledger', 'build', '--json'], dir, { TIMESEAL_NOW: `${nextDay(date)}T00:01:00Z` });
    const out = JSON.parse(m.stdout) as {
      days: { seconds: number; filesWritten: number; bytesWritten: number }[];
      index: { seconds: number; filesWritten: number; bytesWritten: number; segments: number };
    };
    const day = out.days[0]!;
    rows.push({
      day: d,
      publish: day.seconds,
      upkeep: out.index.seconds,
      process: m.seconds,
      files: day.filesWritten + out.index.filesWritten,
      bytes: day.bytesWritten,
      upkeepBytes: out.index.bytesWritten,
      rss: m.maxRssMb,
      segments: out.index.segments,
    });
    lastEnd = Date.now();
    process.stderr.write(
      `day ${d}: publish ${day.seconds.toFixed(2)} s, upkeep ${out.index.seconds.toFixed(2)} s, ${mb(day.bytesWritten + out.index.bytesWritten)}, RSS ${m.maxRssMb.toFixed(0)} MB, ${out.index.segments} segments\n`,
    );
    if (d === 10 || d === days) {
      const archive = path.join(dir, 'ledgers');
      const lookups = lookupBytes(archive, sample);
      const json = timed(['index-json', '--json', '--out', path.join(dir, 'index-sha256.json')], dir);
      const jsonBytes = fs.statSync(path.join(dir, 'index-sha256.json')).size;
      fs.rmSync(path.join(dir, 'index-sha256.json'));
      extra.push(
        `- At ${(d * perDay).toLocaleString('en-US')} hashes (${rows.at(-1)!.segments} segments): one lookup (checkpoint + index head + a shard of each segment + inclusion-proof tiles) reads ${(lookups.worst / 1024).toFixed(1)} KB at worst of ${lookups.count} present hashes (mean ${(lookups.mean / 1024).toFixed(1)} KB); \`timeseal index-json\` writes index-sha256.json (${mb(jsonBytes)}) in ${json.seconds.toFixed(1)} s, peak RSS ${json.maxRssMb.toFixed(0)} MB.`,
      );
      if (d === 10) {
        const whole = timed(['verify', '--json'], dir);
        extra.push(
          `- \`timeseal verify\` of the whole ${(d * perDay).toLocaleString('en-US')}-hash archive from scratch (index segments included): ${whole.seconds.toFixed(1)} s, peak RSS ${whole.maxRssMb.toFixed(0)} MB.`,
        );
      }
    }
    date = nextDay(date);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const firstTen = rows.slice(0, Math.min(10, rows.length));
  const lastTen = rows.slice(-Math.min(10, rows.length));
  const written = (r: Row) => r.bytes + r.upkeepBytes;
  const largest = rows.reduce((a, b) => (written(b) > written(a) ? b : a));
  lines.push(
    `Growth: ${days} days of ${perDay.toLocaleString('en-US')} random hashes, one \`timeseal ledger build\` a day (\`node bench/ledger.bench.ts --days ${days}\`), the builds ${gap} s apart (bench/NOTES.md). "publish" is the time until the day is published (ledger, signatures, tiles, checkpoint, its index segment and the index head); "upkeep" the index merges and removals that follow in the same run; "process" the whole command.`,
    '',
    '| day | publish | upkeep | process | written (day + upkeep) | files | peak RSS | segments |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.day} | ${r.publish.toFixed(2)} s | ${r.upkeep.toFixed(2)} s | ${r.process.toFixed(1)} s | ${mb(r.bytes)} + ${mb(r.upkeepBytes)} | ${r.files.toLocaleString('en-US')} | ${r.rss.toFixed(0)} MB | ${r.segments} |`,
    ),
    '',
    '| goal | result |',
    '|---|---|',
    `| publication time, day ${rows.at(-1)!.day} ÷ day 1 ≤ 1.25 | ${(rows.at(-1)!.publish / rows[0]!.publish).toFixed(2)} (mean of the last 5 ÷ mean of the first 5: ${(mean(rows.slice(-5).map((r) => r.publish)) / mean(rows.slice(0, 5).map((r) => r.publish))).toFixed(2)}) |`,
    `| bytes written a day including merges, mean of days ${lastTen[0]!.day}–${lastTen.at(-1)!.day} ÷ mean of days 1–${firstTen.length} ≤ 2 | ${(mean(lastTen.map(written)) / mean(firstTen.map(written))).toFixed(2)} |`,
    `| peak RSS ≤ 600 MB every day | largest ${Math.max(...rows.map((r) => r.rss)).toFixed(0)} MB |`,
    `| largest single day | day ${largest.day}: ${mb(written(largest))}, ${largest.publish.toFixed(1)} s + ${largest.upkeep.toFixed(1)} s upkeep |`,
    '',
    ...extra,
    '',
  );
  fs.rmSync(dir, { recursive: true, force: true });
}

/** What a verified lookup of each sample hash reads, from the files themselves: the checkpoint, the index head,
 * the one shard of every segment it names (and its two fan-out entries), and the tiles of the inclusion proof. */
function lookupBytes(archive: string, sample: string[]): { worst: number; mean: number; count: number } {
  const checkpointText = fs.readFileSync(path.join(archive, 'checkpoint'));
  const size = parseCheckpoint(parseNote(fromUtf8(checkpointText)).text).size;
  const headBytes = fs.readFileSync(path.join(archive, INDEX_HEAD_PATH));
  const head = parseIndexHead(fromUtf8(headBytes));
  let worst = 0;
  let total = 0;
  for (const hash of sample) {
    let bytes = checkpointText.length + headBytes.length;
    let leaf: number | undefined;
    for (const segment of head.segments) {
      // Two byte ranges of the segment file: the shard's two fan-out entries, then its records.
      const file = new SegmentFile(archive, segment);
      const shard = file.shard(shardOf(segment, hash));
      file.close();
      bytes += 8 + shard.length;
      leaf ??= lookupShard(shard, hash)[0]?.leafIndex;
    }
    if (leaf === undefined) throw new Error(`sample hash ${hash} not found`);
    for (const t of tilesForInclusion(leaf, size))
      bytes += fs.statSync(path.join(archive, tilePath(t.level, t.index, t.width))).size;
    worst = Math.max(worst, bytes);
    total += bytes;
  }
  return { worst, mean: total / sample.length, count: sample.length };
}

process.stdout.write(`${lines.join('\n')}\n`);
