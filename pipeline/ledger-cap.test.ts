// ledgerStreamCap and streamLedger (pipeline/archive-reader.ts) against core/ledger.ts's own encoder: the bound
// a day's signed entry count gives is never below the canonical ledger of that many entries, whatever its
// origin, numbers and previous day, and at most 140 bytes above it; a ledger one byte over it is refused, and
// one within it passes whole, its SHA-256 and size those of the file.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { encodeLedgerColumns, type LedgerHeader } from '../core/ledger.ts';
import { LedgerPass } from '../core/day.ts';
import { messageDigests } from '../runtime/node-hash.ts';
import { folderReader, LedgerTooLargeError, ledgerStreamCap, streamLedger } from './archive-reader.ts';

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
] as const)('%s: canonical size <= ledgerStreamCap <= canonical size + 140', (_what, origin, first, n, previous) => {
  const bytes = ledger(origin, first, n, previous);
  const cap = ledgerStreamCap(origin, n);
  expect(bytes.length).toBeLessThanOrEqual(cap);
  expect(cap - bytes.length).toBeLessThanOrEqual(140);
});

/** `rel` streamed from the test's folder as a ledger of 20 entries: its size and SHA-256, or false when absent. */
async function streamed(rel: string): Promise<{ size: number; sha256: string } | false> {
  const pass = new LedgerPass(new Uint8Array(1952), messageDigests);
  if (!(await streamLedger(folderReader(dir), rel, 'localhost:8080', 20, pass))) return false;
  const digested = pass.digested();
  return { size: digested.size, sha256: Buffer.from(digested.sha256).toString('hex') };
}

it('streamLedger: a ledger within its cap passes whole with its SHA-256; one byte more is refused', async () => {
  const bytes = ledger('localhost:8080', 0, 20, null);
  fs.writeFileSync(path.join(dir, 'ok.json'), bytes);
  expect(await streamed('ok.json')).toEqual({
    size: bytes.length,
    sha256: crypto.createHash('sha256').update(bytes).digest('hex'),
  });

  const cap = ledgerStreamCap('localhost:8080', 20);
  fs.writeFileSync(path.join(dir, 'long.json'), Buffer.concat([bytes, Buffer.alloc(cap - bytes.length + 1, 0x20)]));
  const refused = await streamed('long.json').catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(LedgerTooLargeError);
  expect((refused as Error).message).toBe(
    `long.json: more than ${cap} bytes, the most a ledger of 20 entries can hold (docs/FORMAT.md §3): refused before the rest was read`,
  );
  fs.writeFileSync(path.join(dir, 'exact.json'), Buffer.alloc(cap, 0x20));
  expect(await streamed('exact.json')).toMatchObject({ size: cap });
  expect(await streamed('absent.json')).toBe(false);
});
