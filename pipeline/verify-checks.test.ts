// The archive-wide checks of `timeseal verify` (pipeline/verify.ts), each run alone on a running state
// (verify-state.ts VerifyRun) over an archive held in memory: the states a build stopped after its commit point
// leaves (notes) against those no build leaves (problems). Through verifyArchive these need a whole signed archive
// with a hand-edited file, and only the first problem of a run shows; here each case is one file changed.
import { describe, expect, it } from 'vitest';
import {
  CHECKPOINT_PATH,
  cosignaturesPath,
  dayCheckpointPath,
  OTS_STATUS_PATH,
  type DaysFile,
} from '../core/archive.ts';
import { utf8 } from '../core/encoding.ts';
import { encodeIndexHead, INDEX_HEAD_PATH, type Segment } from '../core/index-segments.ts';
import { archiveStoreReader } from './storage/archive-store.ts';
import { checkIndexHead, checkLatestCheckpoint, checkOtsStatus } from './verify.ts';
import { VerifyRun } from './verify-state.ts';

/** Two published days: leaves [0, 10) and [10, 25). */
const DAYS: DaysFile = {
  origin: 'https://timeseal.test',
  days: [
    { date: '2025-11-02', firstIndex: 0, entryCount: 10, treeSize: 10, root: 'aa'.repeat(32), sha256: 'bb'.repeat(32) },
    {
      date: '2025-11-03',
      firstIndex: 10,
      entryCount: 15,
      treeSize: 25,
      root: 'cc'.repeat(32),
      sha256: 'dd'.repeat(32),
    },
  ],
};

/** An archive of the given files, read as a store's objects are (each whole). */
const memoryReader = (files: Record<string, string>) =>
  archiveStoreReader('memory', async (rel) => (rel in files ? utf8(files[rel]!) : undefined));

/** A run over `files` whose tree has been recomputed up to `size` leaves (the checks below read no key). */
function runOver(files: Record<string, string>, size = 25): VerifyRun {
  const run = new VerifyRun(memoryReader(files), { ecdsa: new Uint8Array(65), mldsa: new Uint8Array(1952) });
  run.size = size;
  return run;
}

const head = (treeSize: number, segments: Segment[]) => ({
  [INDEX_HEAD_PATH]: encodeIndexHead({ treeSize, segments }),
});

describe('checkIndexHead', () => {
  it('takes a head that covers the published leaves on day boundaries', async () => {
    const run = runOver(
      head(25, [
        { from: 0, to: 10 },
        { from: 10, to: 25 },
      ]),
    );
    expect(await checkIndexHead(run, DAYS, false)).toEqual({
      treeSize: 25,
      segments: [
        { from: 0, to: 10 },
        { from: 10, to: 25 },
      ],
    });
    expect(run.problems).toEqual([]);
    expect(run.notes).toEqual([]);
    expect(run.filesChecked).toBe(1);
  });

  it('names a segment that splits a day', async () => {
    const run = runOver(
      head(25, [
        { from: 0, to: 12 },
        { from: 12, to: 25 },
      ]),
    );
    expect(await checkIndexHead(run, DAYS, false)).toBeUndefined();
    expect(run.problems).toEqual([`${INDEX_HEAD_PATH}: segment 0-12 does not begin and end on day boundaries`]);
  });

  it('notes a head behind on a day boundary only while the checkpoint is behind too', async () => {
    const behind = runOver(head(10, [{ from: 0, to: 10 }]));
    expect(await checkIndexHead(behind, DAYS, true)).toBeDefined();
    expect(behind.problems).toEqual([]);
    expect(behind.notes).toEqual([
      `${INDEX_HEAD_PATH}: covers 10 of the 25 published leaves (the next build indexes the rest)`,
    ]);

    const checkpointCurrent = runOver(head(10, [{ from: 0, to: 10 }]));
    expect(await checkIndexHead(checkpointCurrent, DAYS, false)).toBeUndefined();
    expect(checkpointCurrent.problems).toEqual([`${INDEX_HEAD_PATH}: tree_size 10 != the published tree size 25`]);

    const offBoundary = runOver(head(12, [{ from: 0, to: 12 }]));
    expect(await checkIndexHead(offBoundary, DAYS, true)).toBeUndefined();
    expect(offBoundary.problems).toEqual([`${INDEX_HEAD_PATH}: tree_size 12 != the published tree size 25`]);
  });

  it('notes a missing head while the checkpoint is behind, and names it missing otherwise', async () => {
    const behind = runOver({});
    expect(await checkIndexHead(behind, DAYS, true)).toBeUndefined();
    expect(behind.problems).toEqual([]);
    expect(behind.notes).toEqual([
      `${INDEX_HEAD_PATH}: missing, not yet written for the published days (the next build writes it)`,
    ]);
    const current = runOver({});
    await checkIndexHead(current, DAYS, false);
    expect(current.problems).toEqual([`${INDEX_HEAD_PATH}: missing`]);
  });
});

describe('checkLatestCheckpoint', () => {
  const [first, last] = DAYS.days;
  const dayFiles = {
    [dayCheckpointPath(first!.date)]: 'checkpoint of the first day\n',
    [dayCheckpointPath(last!.date)]: 'checkpoint of the last day\n',
  };

  it("takes the last day's checkpoint, with its witnesses' cosignatures when there are", async () => {
    const plain = runOver({ ...dayFiles, [CHECKPOINT_PATH]: 'checkpoint of the last day\n' });
    expect(await checkLatestCheckpoint(plain, DAYS)).toBe(false);
    const cosigned = runOver({
      ...dayFiles,
      [cosignaturesPath(last!.date)]: '— witness cosignature\n',
      [CHECKPOINT_PATH]: 'checkpoint of the last day\n— witness cosignature\n',
    });
    expect(await checkLatestCheckpoint(cosigned, DAYS)).toBe(false);
    expect([...plain.problems, ...plain.notes, ...cosigned.problems, ...cosigned.notes]).toEqual([]);
  });

  it("notes an earlier day's checkpoint or none (a stopped build), and names any other", async () => {
    const earlier = runOver({ ...dayFiles, [CHECKPOINT_PATH]: 'checkpoint of the first day\n' });
    expect(await checkLatestCheckpoint(earlier, DAYS)).toBe(true);
    expect(earlier.problems).toEqual([]);
    expect(earlier.notes).toEqual([
      `${CHECKPOINT_PATH}: the checkpoint of ${first!.date}, not yet of the last published day ${last!.date} (a build stopped after its commit point; the next \`timeseal ledger build\` completes it)`,
    ]);

    const none = runOver(dayFiles);
    expect(await checkLatestCheckpoint(none, DAYS)).toBe(true);
    expect(none.notes[0]).toMatch(new RegExp(`^${CHECKPOINT_PATH}: missing, not yet of the last published day`));

    const other = runOver({ ...dayFiles, [CHECKPOINT_PATH]: 'checkpoint of another log\n' });
    expect(await checkLatestCheckpoint(other, DAYS)).toBe(false);
    expect(other.notes).toEqual([]);
    expect(other.problems).toEqual([`${CHECKPOINT_PATH}: is not the checkpoint of the last day ${last!.date}`]);
  });
});

describe('checkOtsStatus', () => {
  const status = (fields: Record<string, unknown>) => ({
    [OTS_STATUS_PATH]: JSON.stringify({
      latest_ots_ok: '2025-11-02',
      last_update: '2025-11-03T00:05:00.000Z',
      queue_size: 0,
      ...fields,
    }),
  });

  it('takes a status of the right form', async () => {
    for (const ok of [status({}), status({ latest_ots_ok: '' })]) {
      const run = runOver(ok);
      await checkOtsStatus(run);
      expect(run.problems).toEqual([]);
      expect(run.filesChecked).toBe(1);
    }
  });

  it('names each field of the wrong form, and text that is not JSON', async () => {
    for (const bad of [
      { latest_ots_ok: '2025-13-02' },
      { latest_ots_ok: null },
      { last_update: 'yesterday' },
      { last_update: 1 },
      { queue_size: 1.5 },
      { queue_size: '3' },
    ]) {
      const run = runOver(status(bad));
      await checkOtsStatus(run);
      expect(run.problems, JSON.stringify(bad)).toEqual([`${OTS_STATUS_PATH}: fields have the wrong form`]);
    }
    const run = runOver({ [OTS_STATUS_PATH]: '{"latest_ots_ok":' });
    await checkOtsStatus(run);
    expect(run.problems).toEqual([`${OTS_STATUS_PATH}: not valid JSON`]);
  });

  it('notes a missing status (a build killed before it) as no problem', async () => {
    const run = runOver({});
    await checkOtsStatus(run);
    expect(run.problems).toEqual([]);
    expect(run.notes).toEqual([
      `${OTS_STATUS_PATH}: missing, not yet written for the published days (the next build writes it)`,
    ]);
  });
});
