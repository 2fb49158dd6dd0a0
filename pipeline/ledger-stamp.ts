// What `timeseal ledger build` knew of the last day's ledger file it wrote, kept beside the database (never
// published): the file's SHA-256 and ML-DSA-65 μ as the build computed them while writing it, and the file's
// identity on disk then (device, inode, size, modification and change times, in nanoseconds). The next build
// checks the day it extends against this instead of reading its ledger whole again (docs/DECISIONS.md, "What a
// build checks of the day it extends"): any write, rename over, copy or restore of the file gives it another
// inode or change time, which the kernel sets and no caller can set back, and the full check runs.
import fs from 'node:fs';
import path from 'node:path';
import { fromHex, toHex } from '../core/encoding.ts';
import { ledgerPath } from '../core/archive.ts';

export const LEDGER_STAMP_FILE = 'ledger-stamp.json';

export interface LedgerStamp {
  /** The archive folder, resolved. */
  archive: string;
  date: string;
  sha256: string;
  mu: string;
  size: number;
  /** The file's device, inode and times, as decimal strings (bigint nanoseconds). */
  identity: string;
}

function identityOf(file: string): { size: number; identity: string } | undefined {
  let s: fs.BigIntStats;
  try {
    s = fs.statSync(file, { bigint: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return { size: Number(s.size), identity: [s.dev, s.ino, s.size, s.mtimeNs, s.ctimeNs].join(' ') };
}

const stampFile = (db: string): string => path.join(path.dirname(path.resolve(db)), LEDGER_STAMP_FILE);

/** Records the day's ledger file as just written (or found byte-identical) with the digests computed over it. */
export function writeLedgerStamp(
  db: string,
  archive: string,
  date: string,
  digests: { sha256: Uint8Array; mu: Uint8Array },
): void {
  const found = identityOf(path.join(archive, ledgerPath(date)));
  if (found === undefined) return;
  const stamp: LedgerStamp = {
    archive: path.resolve(archive),
    date,
    sha256: toHex(digests.sha256),
    mu: toHex(digests.mu),
    ...found,
  };
  const file = stampFile(db);
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(stamp)}\n`);
  fs.renameSync(`${file}.tmp`, file);
}

/**
 * The digests of `date`'s ledger file in `archive` as the build that wrote it computed them, when the file is
 * still that very file (same device, inode, size and times) and its SHA-256 is the one days.json gives;
 * undefined otherwise (no stamp, another day, another archive, the file touched since): the caller reads it whole.
 */
export function stampedLedger(
  db: string,
  archive: string,
  date: string,
  sha256: string,
): { sha256: Uint8Array; mu: Uint8Array; size: number } | undefined {
  let stamp: LedgerStamp;
  try {
    stamp = JSON.parse(fs.readFileSync(stampFile(db), 'utf8')) as LedgerStamp;
  } catch {
    return undefined; // no stamp, or one cut short: the full check
  }
  if (stamp.archive !== path.resolve(archive) || stamp.date !== date || stamp.sha256 !== sha256) return undefined;
  const now = identityOf(path.join(archive, ledgerPath(date)));
  if (now === undefined || now.identity !== stamp.identity || now.size !== stamp.size) return undefined;
  if (!/^[0-9a-f]{64}$/.test(stamp.sha256) || !/^[0-9a-f]{128}$/.test(stamp.mu)) return undefined;
  return { sha256: fromHex(stamp.sha256), mu: fromHex(stamp.mu), size: stamp.size };
}
