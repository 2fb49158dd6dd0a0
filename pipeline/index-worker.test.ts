// The index worker: writes the entry bundles and the day's index segment on its own thread, and the build's synchronous
// wait() returns what it wrote or throws what failed there.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { INDEX_HEAD_PATH, parseSegmentHeader, segmentPath } from '../core/index-segments.ts';
import { TimesealError } from '../core/errors.ts';
import { writeEntryBundles } from './bundle-files.ts';
import { startHashFilesJob, WORKER_FROM_HASHES } from './index-worker.ts';
import { writeDaySegment, writeMergedSegment } from './segment-files.ts';
import { sortedOrder } from '../store/sort-keys.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
function archive(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-index-'));
  dirs.push(dir);
  return dir;
}

/** n sorted random hashes and times, in shared memory as dayColumns gives them. */
function day(n: number): { hashes: Uint8Array; ms: Float64Array } {
  const raw = crypto.randomBytes(32 * n);
  const order = sortedOrder(raw, n);
  const hashes = new Uint8Array(new SharedArrayBuffer(32 * n));
  order.forEach((i, k) => hashes.set(raw.subarray(32 * i, 32 * i + 32), 32 * k));
  const ms = new Float64Array(new SharedArrayBuffer(8 * n)).map((_, i) => Date.parse('2026-11-21T00:00:00.000Z') + i);
  return { hashes, ms };
}

function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile())
      out[path.relative(dir, path.join(e.parentPath, e.name))] = crypto.hash(
        'sha256',
        fs.readFileSync(path.join(e.parentPath, e.name)),
        'hex',
      );
  }
  return out;
}

describe('startHashFilesJob', () => {
  it('writes the same files as writing in this thread, and wait() reports them (twice the same)', () => {
    const d = day(3000);
    const inThread = archive();
    const expected = { files: 0, bytes: 0 };
    writeDaySegment(inThread, 0, 3000, [d], expected);
    writeEntryBundles(inThread, 0, [d.hashes], expected);
    const onWorker = archive();
    const job = startHashFilesJob(onWorker, 0, d, { index: true, onWorker: true });
    const written = job.wait();
    expect(written).toEqual(expected);
    expect(job.wait()).toBe(written);
    expect(tree(onWorker)).toEqual(tree(inThread));
    // 3,000 records: one file of 64 shards (6 bits) of at most 64 records on average, after a table of 65 entries.
    const file = fs.readFileSync(path.join(onWorker, segmentPath({ from: 0, to: 3000 })));
    expect(file.length).toBe(4 + 4 * 65 + 44 * 3000);
    expect(parseSegmentHeader({ from: 0, to: 3000 }, file).length).toBe(65);
    expect(fs.readdirSync(path.join(onWorker, 'index'))).toEqual(['0-3000.idx']);
    expect(fs.existsSync(path.join(onWorker, INDEX_HEAD_PATH))).toBe(false);
  });

  it('copies columns that are not in shared memory, and leaves the caller’s arrays intact', () => {
    const d = day(100);
    const hashes = Buffer.from(d.hashes);
    const ms = Float64Array.from(d.ms);
    startHashFilesJob(archive(), 0, { hashes, ms }, { index: true, onWorker: true }).wait();
    expect(hashes.length).toBe(3200);
    expect(Buffer.compare(hashes, Buffer.from(d.hashes))).toBe(0);
    expect(Array.from(ms)).toEqual(Array.from(d.ms));
  });

  it('a failure on the worker, or on this thread, is thrown by wait()', () => {
    for (const onWorker of [true, false]) {
      const dir = archive();
      fs.mkdirSync(path.join(dir, segmentPath({ from: 0, to: 10 })), { recursive: true });
      expect(() => startHashFilesJob(dir, 0, day(10), { index: true, onWorker }).wait()).toThrow(
        /published file index\/0-10.idx differs from the rebuild/,
      );
    }
  });

  it('the bundles and the segment are written on a worker each: the segment’s failure is thrown, and every bundle is written', () => {
    // The segment's worker fails at once (segments to merge with that do not end at the day's first leaf); the
    // bundles' worker, apart from it, writes all 400 bundles, as this thread writes them. (That wait() waits for
    // every worker before it throws is not shown here: a worker's start takes longer than these bundles.)
    const dir = archive();
    const d = day(400 * 256);
    const job = startHashFilesJob(dir, 768, d, { index: true, mergeWith: [{ from: 0, to: 512 }], onWorker: true });
    expect(() => job.wait()).toThrow(/do not end there/);
    expect(fs.readdirSync(path.join(dir, '.tmp'))).toEqual([]);
    const other = archive();
    startHashFilesJob(other, 768, d, { index: false, onWorker: false }).wait();
    const bundles = (root: string) => Object.entries(tree(root)).filter(([rel]) => rel.startsWith('tile/entries/'));
    expect(bundles(dir)).toHaveLength(400);
    expect(bundles(dir)).toEqual(bundles(other));
  });

  it(`a day under ${WORKER_FROM_HASHES} hashes is written on this thread: its files are there before wait(), the same as the worker's`, () => {
    const d = day(WORKER_FROM_HASHES - 1);
    const here = archive();
    const job = startHashFilesJob(here, 0, d, { index: true });
    expect(fs.readdirSync(path.join(here, 'index'))).toEqual([`0-${WORKER_FROM_HASHES - 1}.idx`]);
    const onWorker = archive();
    expect(job.wait()).toEqual(startHashFilesJob(onWorker, 0, d, { index: true, onWorker: true }).wait());
    expect(tree(here)).toEqual(tree(onWorker));
  });

  it('without the index, writes only the bundles; a published bundle that differs is a conflict, typed', () => {
    const dir = archive();
    const d = day(300);
    expect(startHashFilesJob(dir, 0, d, { index: false }).wait()).toEqual({ files: 2, bytes: 300 * 34 });
    expect(fs.existsSync(path.join(dir, 'index'))).toBe(false);
    expect(startHashFilesJob(dir, 0, d, { index: false }).wait()).toEqual({ files: 0, bytes: 0 });
    const other = day(300);
    let failure: unknown;
    try {
      startHashFilesJob(dir, 0, other, { index: false }).wait();
    } catch (err) {
      failure = err;
    }
    expect(failure).toBeInstanceOf(TimesealError);
    expect((failure as TimesealError).code).toBe('conflict');
    expect((failure as Error).message).toMatch(/differs from the rebuild/);
  });

  it('a day merged at once with older segments: the same files as its own segment merged after, on either thread', () => {
    // Two older segments of 5,120 and 2,816 leaves and a day of 4,000 (sorted like every day), merged into [0, 11,936);
    // the day starts on a bundle's boundary, so its bundles need no earlier leaves.
    const older = [day(5120), day(2816)];
    const d = day(4000);
    const twoSteps = archive();
    const segments = [
      writeDaySegment(twoSteps, 0, 5120, [older[0]!], { files: 0, bytes: 0 }),
      writeDaySegment(twoSteps, 5120, 2816, [older[1]!], { files: 0, bytes: 0 }),
    ];
    const own = { files: 0, bytes: 0 };
    writeEntryBundles(twoSteps, 7936, [d.hashes], own);
    segments.push(writeDaySegment(twoSteps, 7936, 4000, [d], own));
    writeMergedSegment(twoSteps, segments, { files: 0, bytes: 0 });
    fs.rmSync(path.join(twoSteps, segmentPath({ from: 7936, to: 11936 })));
    for (const onWorker of [true, false]) {
      const direct = archive();
      writeDaySegment(direct, 0, 5120, [older[0]!], { files: 0, bytes: 0 });
      writeDaySegment(direct, 5120, 2816, [older[1]!], { files: 0, bytes: 0 });
      const written = startHashFilesJob(direct, 7936, d, {
        index: true,
        mergeWith: segments.slice(0, 2),
        onWorker,
      }).wait();
      expect(tree(direct), `onWorker ${onWorker}`).toEqual(tree(twoSteps));
      // The bundles and the merged file only: 16 bundles of 4,000 entries and a segment of 11,936 records.
      const merged = fs.statSync(path.join(direct, segmentPath({ from: 0, to: 11936 }))).size;
      expect(written).toEqual({ files: 17, bytes: 4000 * 34 + merged });
      expect(fs.existsSync(path.join(direct, segmentPath({ from: 7936, to: 11936 })))).toBe(false);
    }
  });

  it('segments to merge with that do not end at the day’s first leaf are refused before any segment is written', () => {
    const dir = archive();
    writeDaySegment(dir, 0, 512, [day(512)], { files: 0, bytes: 0 });
    expect(() =>
      startHashFilesJob(dir, 768, day(100), { index: true, mergeWith: [{ from: 0, to: 512 }], onWorker: false }).wait(),
    ).toThrow(/the segments to merge with the day at leaf 768 do not end there/);
    expect(fs.readdirSync(path.join(dir, 'index'))).toEqual(['0-512.idx']);
  });
});
