// The folder engine of the archive store (archive-store.ts): today's archive folder, written by the same
// functions as the build (pipeline/files.ts), so its files are those of `ledgers/`, byte for byte. Create is
// writeImmutable (absent: temp file and rename; present: compared), createFromFile the same a few MB at a time
// (writeImmutableChunks), replace is writeMutable (temp file and rename). Cache classes are the server's
// business here: `timeseal serve` or nginx derive them from the path.
// An object's version is the SHA-256 of its bytes; a conditional replace compares and renames while holding a
// kernel lock (pipeline/lock.ts, `.replace-lock` at the root), so two processes cannot both pass the comparison.
// Names starting with a dot (locks, temp files) are no objects and are never listed. Remove deletes the file.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { TimesealError } from '../../core/errors.ts';
import {
  forgetListings,
  readOptional,
  readPieces,
  TEMP_DIR,
  writeImmutable,
  writeImmutableChunks,
  writeMutable,
} from '../files.ts';
import { withLock } from '../lock.ts';
import {
  checkListPrefix,
  checkObjectPath,
  checkRemovable,
  StaleVersionError,
  type ArchiveStore,
  type VersionedObject,
} from './archive-store.ts';

/** The lock held around a conditional replace, at the root of the folder. */
const REPLACE_LOCK = '.replace-lock';

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

  /** writeImmutableChunks of the file's pieces: copied to a temp file and renamed into place, or compared with
   * the file already there, a few MB at a time. */
  async createFromFile(rel: string, file: string): Promise<boolean> {
    checkObjectPath(rel);
    const pieces = readPieces(path.dirname(file), path.basename(file));
    if (pieces === undefined) throw new TimesealError('not-found', `${file}: no such file to store as ${rel}`);
    return writeImmutableChunks(this.root, rel, pieces).written;
  }

  async replace(rel: string, bytes: Uint8Array, expected?: string | null): Promise<string> {
    checkObjectPath(rel);
    if (expected === undefined) {
      writeMutable(this.root, rel, bytes);
      return contentVersion(bytes);
    }
    fs.mkdirSync(this.root, { recursive: true });
    return withLock(
      path.join(this.root, REPLACE_LOCK),
      () => {
        const current = this.readNow(rel);
        const found = current === undefined ? null : contentVersion(current);
        if (found !== expected)
          throw new StaleVersionError(
            `${path.join(this.root, rel)} is at version ${found ?? '(absent)'}, not ${expected ?? '(absent)'}: another writer changed it`,
          );
        writeMutable(this.root, rel, bytes);
        return contentVersion(bytes);
      },
      'conditional replace',
    );
  }

  async read(rel: string): Promise<Uint8Array | undefined> {
    checkObjectPath(rel);
    return this.readNow(rel);
  }

  async stream(rel: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    checkObjectPath(rel);
    try {
      const handle = await fs.promises.open(path.join(this.root, rel));
      if (!(await handle.stat()).isFile()) {
        await handle.close();
        return undefined;
      }
      return handle.createReadStream({ highWaterMark: 1 << 20 });
    } catch (err) {
      // A folder on the path is no object, as for read.
      if (['ENOENT', 'EISDIR', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '')) return undefined;
      throw err;
    }
  }

  async readVersioned(rel: string): Promise<VersionedObject | undefined> {
    const bytes = await this.read(rel);
    return bytes === undefined ? undefined : { bytes, version: contentVersion(bytes) };
  }

  private readNow(rel: string): Uint8Array | undefined {
    try {
      return readOptional(this.root, rel);
    } catch (err) {
      // A folder on the path (tile/0 when tile/0/000 exists) is no object, as on S3.
      if ((err as NodeJS.ErrnoException).code === 'EISDIR' || (err as NodeJS.ErrnoException).code === 'ENOTDIR')
        return undefined;
      throw err;
    }
  }

  async exists(rel: string): Promise<boolean> {
    const stat = await fs.promises
      .stat(path.join(this.root, checkObjectPath(rel)))
      .catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return undefined;
        throw err;
      });
    return stat?.isFile() ?? false;
  }

  async remove(rel: string): Promise<void> {
    fs.rmSync(path.join(this.root, checkRemovable(rel)), { force: true });
    // The build's cached folder listings (pipeline/files.ts) must not name it any more.
    forgetListings();
  }

  async list(prefix: string): Promise<string[]> {
    checkListPrefix(prefix);
    // Walk only the folder the prefix lies in, then keep the paths that start with it.
    const base = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    const found: string[] = [];
    const walk = async (rel: string): Promise<void> => {
      const entries = await fs.promises
        .readdir(path.join(this.root, rel), { withFileTypes: true })
        .catch((err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return [];
          throw err;
        });
      for (const entry of entries) {
        const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
        if (entry.name.startsWith('.') || (rel === '' && entry.name === TEMP_DIR)) continue;
        if (entry.isDirectory()) {
          if (`${child}/`.startsWith(prefix) || prefix.startsWith(`${child}/`)) await walk(child);
        } else if (entry.isFile() && child.startsWith(prefix)) found.push(child);
      }
    };
    await walk(base);
    return found.sort(byteOrder);
  }
}

/** A folder object's version: the SHA-256 of its bytes, hex. */
export function contentVersion(bytes: Uint8Array): string {
  return crypto.hash('sha256', bytes, 'hex');
}

/** Compares paths as S3 lists keys: by their UTF-8 bytes (object paths are ASCII, so by code unit). */
export function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
