// A status lookup and a batch's "already" check on a day of a million queued rows (Store.submissions.queued and
// submittedOn; on SQLite by the in-memory index of store/sqlite/queue-index.ts) cost about what they cost on an
// empty day, while beta submissions keep flowing beside them: the server's only thread is never held by one lookup
// reading the whole day. Timings are compared with the same requests on the empty day under the same load (a ratio with
// a floor, so a loaded machine slows both alike); a lookup that reads the day's rows takes ~100 ms per million
// (docs/BENCHMARKS.md, "Lookups on a day of a million rows") and fails the bound by far. A submitter chooses its
// hashes, so part of the day shares the looked-up hash's first 16 digits and part repeats it: an index of the
// prefix alone read all of those (~200 ms here) and failed the bound too.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { makeFixture, NOW, randomHash, removeTempDirs, TODAY, type Fixture } from './fixture.ts';

const DAY_ROWS = 1_000_000;
/** Of the day's rows, how many share the looked-up hash's first 16 hexadecimal digits, and how many repeat it. */
const SHARING_PREFIX = 200_000;
const REPEATS = 20_000;
const LOOKUPS = 15;
/** A lookup on the full day may take this many times its empty-day median, plus FLOOR_MS. */
const RATIO = 5;
const FLOOR_MS = 25;

let f: Fixture;
beforeAll(async () => {
  // The lookup budget is measured elsewhere (hash-status.test.ts); here the lookups' own cost.
  f = await makeFixture({ env: { STATUS_LOOKUP_RATE: '1000000/minute' } });
});
afterAll(async () => {
  await f.close();
  removeTempDirs();
});

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timed(work: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await work();
  return performance.now() - t;
}

/** Beta submissions from two loops until `stop` resolves: how many were answered, every one 201. */
async function flowUntil(stop: Promise<void>): Promise<number> {
  let done = false;
  void stop.then(() => (done = true));
  let answered = 0;
  const loop = async () => {
    while (!done) {
      const res = await f.app.inject({
        method: 'POST',
        url: '/api/v1/beta/timestamp',
        payload: { hash: randomHash() },
      });
      expect(res.statusCode, res.body).toBe(201);
      answered++;
    }
  };
  await Promise.all([loop(), loop()]);
  return answered;
}

/** LOOKUPS status lookups of `hash` and LOOKUPS 1-hash batches, one after the other, with submissions flowing. */
async function measure(hash: string): Promise<{ status: number; batch: number; submissionsPerSecond: number }> {
  const statusTimes: number[] = [];
  const batchTimes: number[] = [];
  let finish!: () => void;
  const stop = new Promise<void>((resolve) => (finish = resolve));
  const started = performance.now();
  const flow = flowUntil(stop);
  for (let i = 0; i < LOOKUPS; i++) {
    statusTimes.push(
      await timed(async () => {
        const res = await f.app.inject(`/api/status/${hash}`);
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json()).toMatchObject({ state: 'queued', queued: [{ ledgerDate: TODAY }] });
      }),
    );
    batchTimes.push(
      await timed(async () => {
        const res = await f.app.inject({
          method: 'POST',
          url: '/api/v1/beta/timestamps',
          payload: { hashes: [hash, randomHash()] },
        });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().results.map((r: { status: string }) => r.status)).toEqual(['already', 'accepted']);
      }),
    );
  }
  finish();
  const answered = await flow;
  return {
    status: median(statusTimes),
    batch: median(batchTimes),
    submissionsPerSecond: answered / ((performance.now() - started) / 1000),
  };
}

describe('lookups on a day of a million queued rows', () => {
  test('answer in about the time of an empty day, while submissions keep flowing', async () => {
    const hash = randomHash();
    const first = await f.app.inject({ method: 'POST', url: '/api/v1/beta/timestamp', payload: { hash } });
    expect(first.statusCode).toBe(201);
    const empty = await measure(hash);

    // A million rows for today in three statements: random hashes, hashes sharing the looked-up one's first 16
    // digits, and the looked-up hash again, later in the day.
    const insert = (rows: number, hashSql: string, at: string) =>
      f.db
        .prepare(
          `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @rows)
           INSERT INTO submissions (hash, submitted_at, ledger_date, file_name, source)
           SELECT ${hashSql}, @at, @day, NULL, 'import' FROM n`,
        )
        .run({ rows, at, day: TODAY, hash });
    insert(DAY_ROWS - SHARING_PREFIX - REPEATS, 'lower(hex(randomblob(32)))', NOW);
    insert(SHARING_PREFIX, 'substr(@hash, 1, 16) || lower(hex(randomblob(24)))', NOW);
    insert(REPEATS, '@hash', `${TODAY}T23:59:59.000Z`);
    const rows = f.db.prepare('SELECT COUNT(*) AS n FROM submissions WHERE ledger_date = ?').get(TODAY) as {
      n: number;
    };
    expect(rows.n).toBeGreaterThan(DAY_ROWS);

    const full = await measure(hash);
    const report = JSON.stringify({ empty, full });
    expect(full.status, report).toBeLessThan(RATIO * empty.status + FLOOR_MS);
    expect(full.batch, report).toBeLessThan(RATIO * empty.batch + FLOOR_MS);
    expect(full.submissionsPerSecond, report).toBeGreaterThan(empty.submissionsPerSecond / 3);
  });
});
