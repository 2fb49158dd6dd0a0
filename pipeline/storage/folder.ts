// The folder engine of the archive store (archive-store.ts): today's archive folder, written by the same
// functions as the build (pipeline/files.ts), so its files are those of `ledgers/`, byte for byte. Create is
// writeImmutable (absent: temp file and rename; present: compared), replace is writeMutable (temp file and
// rename). Cache classes are the server's business here: `timeseal serve` or nginx derive them from the path.
import fs from 'node:fs';
import path from 'node:path';
import { readOptional, TEMP_DIR, writeImmutable, writeMutable } from '../files.ts';
import { checkListPrefix, checkObjectPath, type ArchiveStore } from './archive-store.ts';

export class FolderArchiveStore implements ArchiveStore {
  readonly location: string;
  private readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
    this.location = this.root;
  }

  async create(rel: string, bytes: Uint8Array): Promise<boolean> {
    return writeImmutable(this.root, checkObjectPath(rel), bytes);
  }

  async replace(rel: string, bytes: Uint8Array): Promise<void> {
    writeMutable(this.root, checkObjectPath(rel), bytes);
  }

  async read(rel: string): Promise<Uint8Array | undefined> {
    checkObjectPath(rel);
    try {
      return readOptional(this.root, rel);
    } catch (err) {
      // A folder on the path (tile/0 when tile/0/000 exists) is no object, as on S3.
      if ((err as NodeJS.ErrnoException).code === 'EISDIR' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
      throw err;
    }
  }

  async exists(rel: string): Promise<boolean> {
    const stat = await fs.promises.stat(path.join(this.root, checkObjectPath(rel))).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return undefined;
      throw err;
    });
    return stat?.isFile() ?? false;
  }

  async list(prefix: string): Promise<string[]> {
    checkListPrefix(prefix);
    // Walk only the folder the prefix lies in, then keep the paths that start with it.
    const base = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    const found: string[] = [];
    const walk = async (rel: string): Promise<void> => {
      const entries = await fs.promises.readdir(path.join(this.root, rel), { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return [];
        throw err;
      });
      for (const entry of entries) {
        const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
        if (rel === '' && entry.name === TEMP_DIR) continue;
        if (entry.isDirectory()) {
          if (`${child}/`.startsWith(prefix) || prefix.startsWith(`${child}/`)) await walk(child);
        }
        else if (entry.isFile() && child.startsWith(prefix)) found.push(child);
      }
    };
    await walk(base);
    return found.sort(byteOrder);
  }
}

/** Compares paths as S3 lists keys: by their UTF-8 bytes (object paths are ASCII, so by code unit). */
export function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
