// Benchmark of the daily pipeline (issue 2): `timeseal ledger build` publishing one day of 1,000,000 hashes
// (goal ≤ 6 s, peak RSS ≤ 600 MB), and on a 10,000,000-hash archive the bytes one lookup reads from the
// sharded index plus its inclusion proof's tiles (goal ≤ 64 KB), next to the size of index-sha256.json.
// Prints a Markdown section. Usage: node bench/ledger.bench.ts [--hashes 1000000] [--archive-days 10]
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseCheckpoint } from '../core/checkpoint.ts';
import { fromUtf8 } from '../core/encoding.ts';
import { lookupShard, shardPath } from '../core/index-shard.ts';
import { parseNote } from '../core/note.ts';
import { tilePath, tilesForInclusion } from '../core/tiles.ts';
import { openDatabase } from '../pipeline/db.ts';
import { folderBytes, mb, run, timed } from './common.ts';

const { values } = parseArgs({ options: { hashes: { type: 'string', default: '1000000' }, 'archive-days': { type: 'string', default: '10' } } });
const perDay = Number(values.hashes);
const archiveDays = Number(values['archive-days']);

function project(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-'));
  run(['keys', 'init'], dir);
  return dir;
}

/** Enqueues `count` random hashes on `date` straight into SQLite (the import path is not what is measured). */
function enqueueRandom(dir: string, date: string, count: number): string[] {
  const db = openDatabase(path.join(dir, 'data/timeseal.db'));
  const insert = db.prepare("INSERT INTO submissions (hash, submitted_at, ledger_date, source) VALUES (?, ?, ?, 'import')");
  const sample: string[] = [];
  const base = Date.parse(`${date}T00:00:00.000Z`);
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const hash = crypto.randomBytes(32).toString('hex');
      if (i % 100_000 === 0) sample.push(hash);
      insert.run(hash, new Date(base + Math.floor((i / count) * 86_399_000)).toISOString(), date);
    }
  })();
  db.close();
  return sample;
}

const nextDay = (date: string, n = 1) => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

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
    `| wall time (tiles, ledger, both signatures, checkpoint, index shards, index-sha256.json, status) | ${m.seconds.toFixed(2)} s | ≤ 6 s |`,
    `| peak RSS | ${m.maxRssMb.toFixed(0)} MB | ≤ 600 MB |`,
    `| written | ${written.files.toLocaleString('en-US')} files, ${mb(written.bytes)} | — |`,
    '',
  );
  const check = timed(['verify', '--json'], dir);
  lines.push(`\`timeseal verify\` of that archive from scratch: ${check.seconds.toFixed(2)} s, peak RSS ${check.maxRssMb.toFixed(0)} MB.`, '');
  fs.rmSync(dir, { recursive: true, force: true });
}

// 2. An archive of archiveDays × perDay hashes: what one lookup reads.
{
  const dir = project();
  let date = '2025-11-02';
  let sample: string[] = [];
  const dayTimes: number[] = [];
  for (let d = 0; d < archiveDays; d++) {
    sample = enqueueRandom(dir, date, perDay);
    dayTimes.push(timed(['ledger', 'build'], dir, { TIMESEAL_NOW: `${nextDay(date)}T00:01:00Z` }).seconds);
    date = nextDay(date);
  }
  const archive = path.join(dir, 'ledgers');
  const checkpointText = fs.readFileSync(path.join(archive, 'checkpoint'));
  const size = parseCheckpoint(parseNote(fromUtf8(checkpointText)).text).size;
  let worst = 0;
  let total = 0;
  for (const hash of sample) {
    const shard = fs.readFileSync(path.join(archive, shardPath(hash, size)));
    const [record] = lookupShard(shard, hash);
    if (!record) throw new Error(`sample hash ${hash} not found`);
    const tiles = tilesForInclusion(record.leafIndex, size).map((t) => fs.statSync(path.join(archive, tilePath(t.level, t.index, t.width))).size);
    const bytes = checkpointText.length + shard.length + tiles.reduce((a, b) => a + b, 0);
    worst = Math.max(worst, bytes);
    total += bytes;
  }
  const index = fs.statSync(path.join(archive, 'index-sha256.json')).size;
  // The whole archive checked from scratch (exits non-zero, and so fails the bench, on any problem).
  const whole = timed(['verify', '--json'], dir);
  lines.push(
    `Archive of ${(archiveDays * perDay).toLocaleString('en-US')} hashes (${archiveDays} days of ${perDay.toLocaleString('en-US')}; each day's build took ${Math.min(...dayTimes).toFixed(1)}–${Math.max(...dayTimes).toFixed(1)} s):`,
    '',
    '| measure | result | goal |',
    '|---|---|---|',
    `| bytes read for one lookup (checkpoint + index shard + inclusion-proof tiles), worst of ${sample.length} | ${(worst / 1024).toFixed(1)} KB (mean ${(total / sample.length / 1024).toFixed(1)} KB) | ≤ 64 KB |`,
    `| index-sha256.json, for comparison | ${mb(index)} | — |`,
    '',
    `\`timeseal verify\` of the whole archive from scratch: ${whole.seconds.toFixed(1)} s, peak RSS ${whole.maxRssMb.toFixed(0)} MB.`,
    '',
  );
  fs.rmSync(dir, { recursive: true, force: true });
}

process.stdout.write(`${lines.join('\n')}\n`);
