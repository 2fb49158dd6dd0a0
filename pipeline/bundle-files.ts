// Entry bundles (tlog-tiles: tile/entries/N[.p/W]) of a day appended to the log: written on the build's
// worker thread with the index (index-worker.ts), since they need only the day's sorted hashes.
import { concatBytes } from '../core/encoding.ts';
import { TimesealError } from '../core/errors.ts';
import { encodeEntryBundle, entryBundlePath, parseEntryBundle, TILE_WIDTH } from '../core/tiles.ts';
import { readOptional, writeImmutable } from './files.ts';
import type { Written } from './segment-files.ts';

function readEntryBundle(archive: string, index: number, width: number): Uint8Array {
  const rel = entryBundlePath(index, width);
  const data = readOptional(archive, rel);
  if (data === undefined) throw new TimesealError('not-found', `${rel} is missing from the archive`);
  return data;
}

/** Entry bundles from the old size's partial bundle onwards; published ones must come out byte-identical. */
export function writeEntryBundles(archive: string, oldSize: number, entries: Uint8Array, written: Written): void {
  const firstBundle = Math.floor(oldSize / TILE_WIDTH);
  const carried = oldSize % TILE_WIDTH;
  const all =
    carried === 0
      ? entries
      : concatBytes(...parseEntryBundle(readEntryBundle(archive, firstBundle, carried), carried), entries);
  const count = all.length / 32;
  for (let start = 0; start < count; start += TILE_WIDTH) {
    const width = Math.min(TILE_WIDTH, count - start);
    const chunk = Array.from({ length: width }, (_, j) => all.subarray(32 * (start + j), 32 * (start + j + 1)));
    const bytes = encodeEntryBundle(chunk);
    if (writeImmutable(archive, entryBundlePath(firstBundle + start / TILE_WIDTH, width), bytes)) {
      written.files++;
      written.bytes += bytes.length;
    }
  }
}
