// The order in which Vitest's two workers take the test files: longest first, by the wall times of a measured
// run kept in test/durations.json (written by `node scripts/test-durations.ts REPORT.json`). Vitest's own order
// uses its cache, which a fresh clone (CI) does not have, and falls back to file size; a long file that starts
// last then runs alone at the end while the other worker idles. Files not in the list (new ones) go first,
// larger first, since nothing is known of them.
import fs from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const DURATIONS = path.resolve(import.meta.dirname, '../durations.json');

/** Seconds per test file (path relative to the repository), or an empty map when the list is missing or bad. */
export function readDurations(file = DURATIONS): Map<string, number> {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    return new Map(Object.entries(parsed).filter((e): e is [string, number] => typeof e[1] === 'number' && e[1] >= 0));
  } catch {
    return new Map();
  }
}

/** `files` (repository-relative) in the order to run: unknown ones first (larger first), then longest first. */
export function longestFirst(
  files: readonly string[],
  durations: ReadonlyMap<string, number>,
  size: (file: string) => number,
): string[] {
  const known = (f: string) => durations.has(f);
  return [...files].sort((a, b) => {
    if (known(a) !== known(b)) return known(a) ? 1 : -1;
    if (!known(a)) return size(b) - size(a);
    return durations.get(b)! - durations.get(a)!;
  });
}

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const rel = (spec: TestSpecification) => path.relative(root, spec.moduleId).split(path.sep).join('/');
    const bySpec = new Map(files.map((spec) => [rel(spec), spec]));
    const size = (f: string) => {
      try {
        return fs.statSync(path.join(root, f)).size;
      } catch {
        return 0;
      }
    };
    return longestFirst([...bySpec.keys()], readDurations(), size).map((f) => bySpec.get(f)!);
  }
}
