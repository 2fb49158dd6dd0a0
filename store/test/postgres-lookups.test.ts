// Finding a hash on PostgreSQL (Store.submissions.queued and submittedOn, by the index of migration 8) costs
// about the same on a day of DAY_ROWS queued rows as on an empty one, with the statistics as a live server has
// them: the day's rows newer than the last ANALYZE, so the planner believes today holds few rows and would
// happily read the date index's entries for all of them (64 ms at 300,000 rows, measured). Timings are
// compared with the same calls on the empty day (a ratio with a floor, so a loaded machine slows both alike).
// Part of the day shares the hash's first 16 digits (a submitter chooses its hashes), which migration 5's index
// of the prefix alone read in full.
// The SQLite side, through the server with a million rows: ingest/test/day-lookups.test.ts.
import crypto from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresForSuite } from '../../test/support/postgres.ts';
import { openStore } from '../index.ts';
import type { Store } from '../store.ts';

const server = postgresForSuite();
const DAY = '2026-03-10';
const DAY_ROWS = 300_000;
const SHARING_PREFIX = 100_000;
const CALLS = 15;
const RATIO = 5;
const FLOOR_MS = 20;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timings(store: Store, hash: string): Promise<{ queued: number; submittedOn: number }> {
  const queued: number[] = [];
  const submittedOn: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    let t = performance.now();
    expect((await store.submissions.queued(hash, '')).map((q) => q.date)).toEqual([DAY]);
    queued.push(performance.now() - t);
    t = performance.now();
    const other = crypto.randomBytes(32).toString('hex');
    expect([...(await store.submissions.submittedOn(DAY, [hash, other])).keys()]).toEqual([hash]);
    submittedOn.push(performance.now() - t);
  }
  return { queued: median(queued), submittedOn: median(submittedOn) };
}

describe('PostgreSQL: a hash found on a large day', () => {
  it('costs about what it costs on an empty day', async () => {
    const store = await openStore({ db: '', databaseUrl: server.url });
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      const hash = crypto.randomBytes(32).toString('hex');
      await store.submissions.enqueue([{ hash, submittedAt: new Date(`${DAY}T09:00:00.000Z`), source: 'import' }]);
      await client.query('ANALYZE submissions'); // the statistics of a day with one row
      const empty = await timings(store, hash);
      await client.query(
        `INSERT INTO submissions (hash, submitted_at, ledger_date, file_name, source)
         SELECT CASE WHEN i <= $4 THEN substr($5, 1, 16) || substr(md5(random()::text || i) || md5(random()::text || i), 1, 48)
                ELSE md5(random()::text || i) || md5(random()::text || i) END, $2, $3, NULL, 'import'
         FROM generate_series(1, $1::int) AS i`,
        [DAY_ROWS, `${DAY}T10:00:00.000Z`, DAY, SHARING_PREFIX, hash],
      );
      const full = await timings(store, hash);
      const report = JSON.stringify({ empty, full });
      expect(full.queued, report).toBeLessThan(RATIO * empty.queued + FLOOR_MS);
      expect(full.submittedOn, report).toBeLessThan(RATIO * empty.submittedOn + FLOOR_MS);
    } finally {
      await client.end();
      await store.close();
    }
  });
});
