// What an index of the hash costs each SQLite commit, counted instead of timed: the pages a commit writes to the
// WAL (store/sqlite/submission-writer.ts commits the rows of one turn of the event loop together), on a day of
// BENCH_DAY_ROWS (1,000,000) queued rows, for commits of 1, 4 and 19 rows (19: the beta API at 32 connections,
// docs/BENCHMARKS.md "Reading these figures"), with no hash index (the schema before migration 10), with
// migration 10's index of the hash's first 16 hexadecimal digits, with an index of the whole hash, and with
// migration 13's (hash, ledger_date, submitted_at), which replaced migration 10's. Each
// database gets its day from inserts in random order, as a live one does (an index built in one go by CREATE
// INDEX has full leaves, which every insert then splits). Rows are random hashes, as SHA-256 values are, and
// once hashes sharing a 48-digit prefix with a counter (what bench/load.ts sent before: they all land in one
// leaf). Automatic checkpoints are off, so the WAL's size counts the frames (one page each) the commits wrote.
// Migration 14 dropped the hash index, so the schema as migrated is the first row (store/sqlite/queue-index.ts
// answers the lookups from memory). Counts do not move with the machine's load, unlike the times of
// day-lookups.bench.ts. Prints a Markdown section on stdout; progress on stderr.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../store/sqlite/db.ts';
import { submissionInserter } from '../store/sqlite/queue.ts';

const DAY_ROWS = Number(process.env.BENCH_DAY_ROWS ?? 1_000_000);
const COMMITS = 500;
const PAGE = 4096;
const FRAME = PAGE + 24; // sqlite.org/fileformat2.html#walformat: a 24-byte header, then the page
const log = (m: string) => process.stderr.write(`bench wal-pages: ${m}\n`);

const schemas: Array<{ name: string; index: string | null }> = [
  { name: 'no hash index (before migration 10)', index: null },
  {
    name: 'migration 10: `substr(hash, 1, 16)`',
    index: 'CREATE INDEX hash_index ON submissions (substr(hash, 1, 16))',
  },
  { name: 'the whole hash', index: 'CREATE INDEX hash_index ON submissions (hash)' },
  {
    name: 'migration 13: `(hash, ledger_date, submitted_at)`',
    index: 'CREATE INDEX hash_index ON submissions (hash, ledger_date, submitted_at)',
  },
];
const cases: Array<{ rows: number; shared: boolean }> = [
  { rows: 1, shared: false },
  { rows: 4, shared: false },
  { rows: 19, shared: false },
  { rows: 19, shared: true },
];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-wal-'));
const results: Array<{ schema: string; pages: number; frames: number[] }> = [];
try {
  for (const schema of schemas) {
    log(`${schema.name}: ${DAY_ROWS.toLocaleString('en-US')} rows`);
    const file = path.join(dir, `${results.length}.db`);
    const db = openDatabase(file);
    try {
      if (schema.index) db.exec(schema.index);
      const at = new Date().toISOString();
      db.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO submissions (hash, submitted_at, ledger_date, file_name, source)
         SELECT lower(hex(randomblob(32))), ?, ?, NULL, 'import' FROM n`,
      ).run(DAY_ROWS, at, at.slice(0, 10));
      db.pragma('wal_autocheckpoint = 0');
      db.pragma('synchronous = NORMAL'); // as the group-commit writer's connection
      const insert = submissionInserter(db);
      const now = new Date();
      const frames: number[] = [];
      for (const c of cases) {
        db.pragma('wal_checkpoint(TRUNCATE)');
        const prefix = crypto.randomBytes(24).toString('hex');
        let n = 0;
        const hash = () =>
          c.shared ? prefix + (n++).toString(16).padStart(16, '0') : crypto.randomBytes(32).toString('hex');
        for (let k = 0; k < COMMITS; k++)
          insert(
            Array.from({ length: c.rows }, () => ({ hash: hash(), submittedAt: now, source: 'api_beta' as const })),
          );
        frames.push((fs.statSync(`${file}-wal`).size - 32) / FRAME / COMMITS);
      }
      results.push({ schema: schema.name, pages: db.pragma('page_count', { simple: true }) as number, frames });
    } finally {
      db.close();
    }
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}

const head = cases.map((c) => `${c.rows} row${c.rows > 1 ? 's' : ''}${c.shared ? ', shared prefix' : ''}`);
const out = [
  '## What a hash index costs each SQLite commit: pages written to the WAL',
  '',
  `A day of ${DAY_ROWS.toLocaleString('en-US')} queued rows inserted in random order, then ${COMMITS} commits of each size on the group-commit writer's settings (synchronous=NORMAL); automatic checkpoints off, so the WAL's size counts the pages (${PAGE} B frames) each commit wrote. Rows are random hashes, except in the last column: hashes sharing a 48-digit prefix, as the benchmarks' load sent before 2026-12-02. Counts, not times: the machine's load does not move them.`,
  '',
  `| index | database pages | ${head.map((h) => `pages a commit of ${h}`).join(' | ')} |`,
  `|---|---|${head.map(() => '---|').join('')}`,
  ...results.map(
    (r) => `| ${r.schema} | ${r.pages.toLocaleString('en-US')} | ${r.frames.map((f) => f.toFixed(2)).join(' | ')} |`,
  ),
];
process.stdout.write(`${out.join('\n')}\n`);
