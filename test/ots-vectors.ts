// Loader for the OpenTimestamps vectors in test/vectors/ots (their provenance is in that folder's README.md).
// Throws when it finds nothing, so a moved or empty folder fails the run instead of passing vacuously.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fromHex } from '../core/encoding.ts';

export const OTS_VECTORS_DIR = fileURLToPath(new URL('./vectors/ots/', import.meta.url));

export interface OtsVector {
  /** Path relative to test/vectors/ots, e.g. `opentimestamps-client/hello-world.txt.ots`. */
  readonly name: string;
  readonly path: string;
  readonly bytes: Uint8Array;
}

/** Every `.ots` file under the folder, sorted by name. */
export function loadOtsVectors(): OtsVector[] {
  const out: OtsVector[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ots')) {
        out.push({ name: relative(OTS_VECTORS_DIR, path), path, bytes: new Uint8Array(readFileSync(path)) });
      }
    }
  };
  walk(OTS_VECTORS_DIR);
  if (out.length === 0) throw new Error(`no .ots vectors found under ${OTS_VECTORS_DIR}`);
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** Proofs that must be rejected: the `invalid/` folder and the one that needs keccak256. */
export function isRejectedVector(name: string): boolean {
  return name.includes('invalid/') || name.endsWith('different-blockchains.txt.ots');
}

export function readOtsVector(name: string): Uint8Array {
  const path = join(OTS_VECTORS_DIR, name);
  if (!existsSync(path)) throw new Error(`missing vector ${name}`);
  return new Uint8Array(readFileSync(path));
}

/** The 80-byte block header at height 358391. */
export function block358391Header(): Uint8Array {
  const hex = readFileSync(join(OTS_VECTORS_DIR, 'headers/block-358391-header.hex'), 'utf8').trim();
  return fromHex(hex, 'block-358391-header.hex');
}
