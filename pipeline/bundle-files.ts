// Entry bundles (tlog-tiles: tile/entries/N[.p/W]) of a day appended to the log: written on the build's
// worker thread with the index (index-worker.ts), since they need only the day's sorted hashes.
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

/** Entry bundles from the old size's partial bundle onwards, the new entries (32 bytes each, back to back) in
 * batches read in order; published bundles must come out byte-identical. Holds one bundle's entries. */
export function writeEntryBundles(
  archive: string,
  oldSize: number,
  batches: Iterable<Uint8Array>,
  written: Written,
): void {
  let index = Math.floor(oldSize / TILE_WIDTH);
  const carried = oldSize % TILE_WIDTH;
  const bundle = new Uint8Array(32 * TILE_WIDTH);
  let n = 0;
  if (carried > 0) {
    for (const entry of parseEntryBundle(readEntryBundle(archive, index, carried), carried))
      bundle.set(entry, 32 * n++);
  }
  const write = (): void => {
    const entries = Array.from({ length: n }, (_, j) => bundle.subarray(32 * j, 32 * (j + 1)));
    const bytes = encodeEntryBundle(entries);
    if (writeImmutable(archive, entryBundlePath(index, n), bytes)) {
      written.files++;
      written.bytes += bytes.length;
    }
  };
  for (const hashes of batches) {
    for (let at = 0; at < hashes.length;) {
      const take = Math.min(hashes.length - at, 32 * (TILE_WIDTH - n));
      bundle.set(hashes.subarray(at, at + take), 32 * n);
      n += take / 32;
      at += take;
      if (n === TILE_WIDTH) {
        write();
        index++;
        n = 0;
      }
    }
  }
  if (n > 0) write();
}
