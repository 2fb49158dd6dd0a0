// The published archive's state: days.json read and checked against the configured log origin. Read by the
// build, the cosigning and time-stamping steps, anchoring, proofs, the CLI's status and import, and the server's
// archive access; its own module so that none of them imports the builder for it.
import { DAYS_PATH, parseDays, type DayRecord } from '../core/archive.ts';
import { fromUtf8 } from '../core/encoding.ts';
import { MismatchError } from '../core/errors.ts';
import { readOptional } from './files.ts';

export interface ArchiveState {
  origin: string;
  days: DayRecord[];
}

/** days.json of `archive` (no days when it does not exist yet); refuses an archive of another log origin. */
export function readState(archive: string, origin: string): ArchiveState {
  const raw = readOptional(archive, DAYS_PATH);
  if (raw === undefined) return { origin, days: [] };
  const state = parseDays(fromUtf8(raw, DAYS_PATH));
  if (state.origin !== origin) {
    throw new MismatchError(
      `log origin of ${archive} (an archive's origin never changes; check TIMESEAL_ORIGIN)`,
      state.origin,
      origin,
    );
  }
  return state;
}
