// What the site's build reads, as one fingerprint, so that `make start` rebuilds dist/ only when one of them
// changed (scripts/build.ts --if-changed): the site's sources, core/ (the islands and the offline verifier bundle
// it), the sealed document, the build's configuration and lock file, and every key file the offline verifier
// embeds (of TIMESEAL_KEYS, default keys/; site/offline-verifier/key-files.ts names them). Each file counts by
// its path, size and modification time.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { VERIFIER_KEY_FILES } from '../site/offline-verifier/key-files.ts';

/** Folders and files under the repository root that the build reads. */
export const BUILD_INPUTS = [
  'site',
  'core',
  'docs/sealed-disclosure.md',
  'astro.config.mjs',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'scripts/build.ts',
];

/** The key files the offline verifier may embed (site/offline-verifier/build.ts reads each by this name). */
const KEY_FILES = Object.values(VERIFIER_KEY_FILES);

function walk(root: string, rel: string, out: string[]): void {
  const full = path.join(root, rel);
  const st = fs.statSync(full, { throwIfNoEntry: false });
  if (!st) return;
  if (st.isDirectory()) {
    for (const name of fs.readdirSync(full).sort()) if (name !== 'node_modules') walk(root, path.join(rel, name), out);
  } else out.push(`${rel}\0${st.size}\0${st.mtimeMs}`);
}

/** The fingerprint of the build's inputs under `root`, with the keys of `keysDir`. */
export function buildFingerprint(root: string, keysDir: string): string {
  const lines: string[] = [];
  for (const rel of BUILD_INPUTS) walk(root, rel, lines);
  for (const name of KEY_FILES) walk(path.resolve(root, keysDir), name, lines);
  return crypto.createHash('sha256').update(lines.join('\n')).digest('hex');
}
