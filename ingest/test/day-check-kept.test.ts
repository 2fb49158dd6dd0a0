// A day's check is kept between runs of the server (ingest/archive-view.ts, cache/day-checks/<date>.json beside
// the database): a restarted server answers /api/verify-quantum.php from it without reading the day's ledger
// again, which at 100,000,000 hashes a day is 9.7 GB a ledger and 60 ledgers for the first page of /ledgers.
// What is kept is tied to the files as they are on disk: a ledger changed in place, even with its size and
// modification time put back, has a new change time, and the next server checks it again (and finds it broken).
// On the code before, every new server read the ledger again (the first test fails: the ledger was opened).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import { ledgerPath } from '../../core/archive.ts';
import { buildApp } from '../app.ts';
import { DAY, fixtureAppOptions, makeFixture, removeTempDirs, type Fixture } from './fixture.ts';

let f: Fixture;
let ledger: string;
beforeAll(async () => {
  f = await makeFixture();
  ledger = path.join(f.config.archive, ledgerPath(DAY));
});
afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(async () => {
  await f.close();
  removeTempDirs();
});

/** A new server on the same database, archive and cache (a restart): its answer for the day, and how many times
 * it opened the day's ledger to give it. */
const askNewServer = async (): Promise<{ body: Record<string, unknown>; ledgerOpens: number }> => {
  const real = fs.promises.open;
  let ledgerOpens = 0;
  vi.spyOn(fs.promises, 'open').mockImplementation(((file: fs.PathLike, ...rest: unknown[]) => {
    if (path.resolve(String(file)) === ledger) ledgerOpens++;
    return (real as (...a: unknown[]) => Promise<fs.promises.FileHandle>)(file, ...rest);
  }) as typeof fs.promises.open);
  const app = await buildApp(fixtureAppOptions(f));
  try {
    const res = await app.inject({ method: 'GET', url: `/api/verify-quantum.php?date=${DAY}` });
    expect(res.statusCode, res.body).toBe(200);
    return { body: res.json() as Record<string, unknown>, ledgerOpens };
  } finally {
    await app.close();
    vi.restoreAllMocks();
  }
};

it("a restarted server answers a day's check from the kept result, without reading the ledger", async () => {
  const first = await f.app.inject({ method: 'GET', url: `/api/verify-quantum.php?date=${DAY}` });
  expect(first.statusCode, first.body).toBe(200);
  expect(first.json()).toMatchObject({ dual_signature: true, quantum_shield: true });
  const kept = path.join(path.dirname(f.config.db), 'cache', 'day-checks', `${DAY}.json`);
  expect(fs.existsSync(kept), kept).toBe(true);
  const again = await askNewServer();
  expect(again.body).toMatchObject({ dual_signature: true, quantum_shield: true });
  expect(again.ledgerOpens).toBe(0);
});

it('a ledger changed in place with its size and modification time put back is checked again, and fails', async () => {
  const before = fs.statSync(ledger, { bigint: true });
  // The ledger's times, to the nanosecond, on a file of their own (touch -r copies them back exactly).
  const times = `${ledger}.times`;
  execFileSync('touch', ['-r', ledger, times]);
  const bytes = fs.readFileSync(ledger);
  // One byte of the last entry's hash, written into the same file (same inode, same size).
  const at = bytes.lastIndexOf('"]') - 3;
  const fd = fs.openSync(ledger, 'r+');
  fs.writeSync(fd, Buffer.from([bytes[at] === 0x30 ? 0x31 : 0x30]), 0, 1, at);
  fs.closeSync(fd);
  execFileSync('touch', ['-r', times, ledger]);
  const after = fs.statSync(ledger, { bigint: true });
  expect([after.ino, after.size, after.mtimeNs]).toEqual([before.ino, before.size, before.mtimeNs]);
  const changed = await askNewServer();
  expect(changed.ledgerOpens).toBeGreaterThan(0);
  expect(changed.body).toMatchObject({ dual_signature: false });
  // Put back as it was (a new change time again): checked once more, and whole.
  fs.writeFileSync(ledger, bytes);
  fs.rmSync(times);
  const restored = await askNewServer();
  expect(restored.ledgerOpens).toBeGreaterThan(0);
  expect(restored.body).toMatchObject({ dual_signature: true });
  expect((await askNewServer()).ledgerOpens).toBe(0);
});
