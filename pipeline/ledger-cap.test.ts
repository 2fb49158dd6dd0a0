// ledgerFileCap and readLedger (pipeline/archive-reader.ts) against core/ledger.ts's own encoder: the bound a
// day's signed entry count gives is never below the canonical ledger of that many entries, whatever its origin,
// numbers and previous day, and at most 140 bytes above it; a ledger one byte over it is refused from a folder
// as from a stream, and one within it comes back whole with its SHA-256.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { encodeLedgerColumns, type LedgerHeader } from '../core/ledger.ts';
import { folderReader, LedgerTooLargeError, ledgerFileCap, readLedger } from './archive-reader.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-ledger-cap-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The canonical ledger of `n` sorted random entries on 2025-11-02. */
function ledger(origin: string, firstIndex: number, n: number, previous: LedgerHeader['previous']): Uint8Array {
  const hashes = Buffer.concat(Array.from({ length: n }, () => crypto.randomBytes(32)).sort(Buffer.compare));
  const day = Date.parse('2025-11-02T00:00:00.000Z');
  const times = Float64Array.from({ length: n }, (_, i) => day + i * 1000);
  return encodeLedgerColumns(
    { origin, date: '2025-11-02', firstIndex, treeSize: firstIndex + n, root: '0'.repeat(64), previous },
    new Uint8Array(hashes),
    times,
  );
}

const PREVIOUS = { date: '2025-11-01', sha256: 'f'.repeat(64) };
it.each([
  ['the first day, no entry', 'localhost:8080', 0, 0, null],
  ['the first day, one entry', 'localhost:8080', 0, 1, null],
  ['a day of 20', 'timeseal.example', 37, 20, PREVIOUS],
  ['a day of 5,000 far into the log', 'log.example/timeseal', 9_007_199_254_000_000, 5_000, PREVIOUS],
  ['an origin with escapes and non-ASCII', 'zürich.example/"log"\\1', 12, 3, PREVIOUS],
] as const)('%s: canonical size <= ledgerFileCap <= canonical size + 140', (_what, origin, first, n, previous) => {
  const bytes = ledger(origin, first, n, previous);
  const cap = ledgerFileCap(origin, n);
  expect(bytes.length).toBeLessThanOrEqual(cap);
  expect(cap - bytes.length).toBeLessThanOrEqual(140);
});

it('readLedger: a ledger within its cap comes back whole with its SHA-256; one byte more is refused', async () => {
  const bytes = ledger('localhost:8080', 0, 20, null);
  fs.writeFileSync(path.join(dir, 'ok.json'), bytes);
  const read = await readLedger(folderReader(dir), 'ok.json', 'localhost:8080', 20);
  expect(Buffer.from(read!.bytes).equals(Buffer.from(bytes))).toBe(true);
  expect(Buffer.from(read!.sha256).toString('hex')).toBe(crypto.createHash('sha256').update(bytes).digest('hex'));

  const cap = ledgerFileCap('localhost:8080', 20);
  fs.writeFileSync(path.join(dir, 'long.json'), Buffer.concat([bytes, Buffer.alloc(cap - bytes.length + 1, 0x20)]));
  const refused = await readLedger(folderReader(dir), 'long.json', 'localhost:8080', 20).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(LedgerTooLargeError);
  expect((refused as Error).message).toBe(
    `long.json: more than ${cap} bytes, the most a ledger of 20 entries can hold (docs/FORMAT.md §3): refused before the rest was read`,
  );
  fs.writeFileSync(path.join(dir, 'exact.json'), Buffer.alloc(cap, 0x20));
  expect((await readLedger(folderReader(dir), 'exact.json', 'localhost:8080', 20))!.bytes.length).toBe(cap);
  expect(await readLedger(folderReader(dir), 'absent.json', 'localhost:8080', 20)).toBeUndefined();
});
