// The ledger file written in two parts (pipeline/ledger-file.ts) is the file core/ledger.ts encodes in one, with
// the digests of its bytes, whichever thread writes the entries and wherever they come from (columns in shared
// memory, an external sort's files); a rebuild finds it identical or refuses a different one, and an abandoned
// or failed one leaves no file behind, in the archive or in its .tmp/.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeLedgerColumns } from '../core/ledger.ts';
import { mldsaPublicKey } from '../core/sig.ts';
import { messageDigests } from '../runtime/node-hash.ts';
import type { DayData } from './day-sort.ts';
import { startLedgerFile, type LedgerHead } from './ledger-file.ts';

const publicKey = mldsaPublicKey(new Uint8Array(32).fill(7));
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function archive(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ledger-file-'));
  dirs.push(dir);
  return dir;
}

const COUNT = 70_000; // more than one batch of dayBatches (65,536)
const head: LedgerHead = {
  origin: 'timeseal.example',
  date: '2025-11-02',
  firstIndex: 5,
  treeSize: 5 + COUNT,
  previous: { date: '2025-11-01', sha256: 'b'.repeat(64) },
};
const ROOT = 'c'.repeat(64);

/** COUNT sorted hashes and times on the day, in shared memory. */
function columns(): { hashes: Uint8Array; ms: Float64Array } {
  const hashes = new Uint8Array(new SharedArrayBuffer(32 * COUNT));
  const ms = new Float64Array(new SharedArrayBuffer(8 * COUNT));
  for (let i = 0; i < COUNT; i++) {
    hashes.set(crypto.randomBytes(28), 32 * i + 4);
    new DataView(hashes.buffer).setUint32(32 * i, i);
    ms[i] = Date.UTC(2025, 10, 2) + ((i * 7919) % 86_400_000);
  }
  return { hashes, ms };
}

/** The same entries as an external sort leaves them: a hashes file and a times file. */
function asFiles(dir: string, day: { hashes: Uint8Array; ms: Float64Array }): DayData {
  const files = { hashes: path.join(dir, 'sorted-hashes'), ms: path.join(dir, 'sorted-ms') };
  fs.writeFileSync(files.hashes, day.hashes);
  fs.writeFileSync(files.ms, new Uint8Array(day.ms.buffer));
  return { files, count: COUNT, batchEntries: 10_000 };
}

const tempFiles = (dir: string): string[] => fs.readdirSync(path.join(dir, '.tmp'));

describe('startLedgerFile', { timeout: 60_000 }, () => {
  const day = columns();
  const expected = Buffer.from(encodeLedgerColumns({ ...head, root: ROOT }, day.hashes, day.ms));
  const digests = messageDigests(publicKey);
  digests.update(expected);
  const { sha256, mu } = digests.digest();

  it.each([
    ['on a worker, columns in shared memory', true, false],
    ['on a worker, an external sort’s files', true, true],
    ['here, columns in shared memory', false, false],
    ['here, an external sort’s files', false, true],
  ])('%s: the bytes of encodeLedgerColumns and their SHA-256 and μ', (_name, onWorker, files) => {
    const dir = archive();
    const data = files ? asFiles(dir, day) : day;
    const ledger = startLedgerFile(dir, 'day.json', head, data, publicKey, { onWorker });
    const result = ledger.finish(ROOT);
    expect(result).toMatchObject({ written: true, bytes: expected.length });
    expect(fs.readFileSync(path.join(dir, 'day.json')).equals(expected)).toBe(true);
    expect(Buffer.from(result.sha256).equals(Buffer.from(sha256))).toBe(true);
    expect(Buffer.from(result.mu).equals(Buffer.from(mu))).toBe(true);
    expect(tempFiles(dir)).toEqual([]);
  });

  it('rebuilt: the same file is kept; a different one (another root) refused, the published one unchanged', () => {
    const dir = archive();
    expect(startLedgerFile(dir, 'day.json', head, day, publicKey, { onWorker: true }).finish(ROOT).written).toBe(true);
    expect(startLedgerFile(dir, 'day.json', head, day, publicKey, { onWorker: true }).finish(ROOT).written).toBe(false);
    const other = startLedgerFile(dir, 'day.json', head, day, publicKey, { onWorker: true });
    expect(() => other.finish('d'.repeat(64))).toThrow(
      /^published file day\.json differs from the rebuild: sha256 on disk [0-9a-f]{64} != rebuilt [0-9a-f]{64}$/,
    );
    expect(fs.readFileSync(path.join(dir, 'day.json')).equals(expected)).toBe(true);
    expect(tempFiles(dir)).toEqual([]);
  });

  it.each([true, false])('abandoned before its header (on a worker: %s): no file, no temp file', (onWorker) => {
    const dir = archive();
    const ledger = startLedgerFile(dir, 'day.json', head, day, publicKey, { onWorker });
    expect(tempFiles(dir)).toHaveLength(1);
    ledger.abandon();
    expect(tempFiles(dir)).toEqual([]);
    expect(fs.existsSync(path.join(dir, 'day.json'))).toBe(false);
  });

  it('entries out of order: the worker’s FormatError, and abandon leaves nothing', () => {
    const dir = archive();
    const swapped = columns();
    const first = swapped.hashes.slice(32 * 40_000, 32 * 40_001);
    swapped.hashes.copyWithin(32 * 40_000, 32 * 40_001, 32 * 40_002);
    swapped.hashes.set(first, 32 * 40_001);
    const ledger = startLedgerFile(dir, 'day.json', head, swapped, publicKey, { onWorker: true });
    expect(() => ledger.entriesWritten()).toThrow(/entries\[40001\]\.hash.*sorted/);
    ledger.abandon();
    expect(tempFiles(dir)).toEqual([]);
    expect(fs.existsSync(path.join(dir, 'day.json'))).toBe(false);
  });
});
