// What every key file of the archive shares (runtime/keys.ts, runtime/tsa-keys.ts, runtime/receipt-keys.ts): the
// two folders they live in, the refusal to overwrite one, and reading one with the file named in the error.
import fs from 'node:fs';
import { TimesealError, withContext } from '../core/errors.ts';

/** The served public keys folder and the private keys folder (mode 0700, files 0600). */
export interface KeyDirs {
  keys: string;
  privateKeys: string;
}

/** Throws (changing nothing) when any of `files` exists: a key is never overwritten. */
export function refuseExisting(files: string[]): void {
  const existing = files.filter((f) => fs.existsSync(f));
  if (existing.length > 0)
    throw new TimesealError('conflict', `keys already exist, refusing to overwrite: ${existing.join(', ')}`);
}

/** A key file's text; an error names the file, and `hint` (what to do) when given. */
export function readKeyText(file: string, hint?: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw withContext(`cannot read key ${file}${hint === undefined ? '' : ` (${hint})`}`, err);
  }
}

/** A key file's text, or undefined when there is no such file. */
export function readOptionalKeyText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw withContext(`cannot read key ${file}`, err);
  }
}
