// Per-hash OpenTimestamps proofs from the archive: the day's ledger proof `D.json.ots` holds the calendar tree
// at the day's commitment C; the per-hash proof is the hash's inclusion path to R, then append F, sha256, then
// that same tree (core/ots-path.ts). Nothing is stored per hash: every proof is derived on request.
import { ledgerOtsPath, type DayRecord } from '../../core/archive.ts';
import { fromHex } from '../../core/encoding.ts';
import { calendarTreeOf, perHashTimestamp } from '../../core/ots-path.ts';
import { parseDetached, serializeDetached } from '../../core/ots.ts';
import { withContext } from '../../core/errors.ts';
import { readOptional } from '../files.ts';

/** The per-hash `.ots` bytes, or null while the day has no calendar proof yet. */
export function perHashOts(
  archive: string,
  day: DayRecord,
  hash: Uint8Array,
  leafIndex: number,
  path: readonly Uint8Array[],
): Uint8Array | null {
  const raw = readOptional(archive, ledgerOtsPath(day.date));
  if (raw === undefined) return null;
  try {
    const root = fromHex(day.root);
    const ledgerSha256 = fromHex(day.sha256);
    const calendar = calendarTreeOf(parseDetached(raw), root, ledgerSha256);
    return serializeDetached(
      perHashTimestamp({ hash, leafIndex, treeSize: day.treeSize, path, root, ledgerSha256 }, calendar),
    );
  } catch (err) {
    throw withContext(ledgerOtsPath(day.date), err);
  }
}
