// Archive writes. Immutable daily artifacts and mutable files are different functions (docs/FORMAT.md §10):
// - writeImmutable: create if absent, accept if byte-identical, otherwise a hard error — published files
//   never change.
// - writeMutable: temp file + rename, for the few files that are replaced (checkpoint, index, status).
// Both write a temp file in the archive's own .tmp/ folder and rename it into place (one file system, so the
// rename is atomic), so a process killed at any point leaves either the old file or the complete new one, never
// a partial file; and what a killed writer left is found in that one folder, not by walking an archive of
// millions of files. Durability against power loss comes from one
// file-system barrier (syncArchive) before the build's commit point, instead of one fsync per file.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { threadId } from 'node:worker_threads';
import { TimesealError } from '../core/errors.ts';
import { alive } from './lock.ts';

/** The folder of temp files under an archive root; never part of the archive, never served. */
export const TEMP_DIR = '.tmp';
let tempCounter = 0;

/** A temp file name unique to this process and thread, in root's temp folder (made if missing). */
export function tempFile(root: string): string {
  const dir = path.join(root, TEMP_DIR);
  ensureDir(dir);
  return path.join(dir, `${process.pid}-${threadId}-${tempCounter++}`);
}

export class ConflictError extends TimesealError {
  constructor(message: string) {
    super('conflict', message);
    this.name = 'ConflictError';
  }
}

const madeDirs = new Set<string>();

/** mkdir -p, remembered: a build writes thousands of files into a few hundred folders. */
function ensureDir(dir: string): void {
  if (madeDirs.has(dir)) return;
  fs.mkdirSync(dir, { recursive: true });
  madeDirs.add(dir);
}

function writeTempAndRename(root: string, file: string, bytes: Uint8Array): void {
  ensureDir(path.dirname(file));
  const temp = tempFile(root);
  fs.writeFileSync(temp, bytes);
  fs.renameSync(temp, file);
}

function digest(bytes: Uint8Array): string {
  return crypto.hash('sha256', bytes, 'hex');
}

/**
 * Names present in a folder, listed once per folder and kept up to date by this process's own writes, so that
 * creating thousands of new files costs no failed open each. Valid because one process writes the archive at a
 * time (pipeline/lock.ts).
 */
const listings = new Map<string, Set<string>>();

function listing(dir: string): Set<string> {
  let names = listings.get(dir);
  if (names === undefined) {
    try {
      names = new Set(fs.readdirSync(dir));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      names = new Set();
    }
    listings.set(dir, names);
  }
  return names;
}

/** Returns true when the file was written, false when an identical file was already there. */
export function writeImmutable(root: string, rel: string, bytes: Uint8Array): boolean {
  const file = path.join(root, rel);
  const names = listing(path.dirname(file));
  let existing: Buffer | undefined;
  if (names.has(path.basename(file))) existing = fs.readFileSync(file);
  if (existing !== undefined) {
    if (Buffer.compare(existing, bytes) !== 0) {
      throw new ConflictError(
        `published file ${rel} differs from the rebuild: sha256 on disk ${digest(existing)} != rebuilt ${digest(bytes)}`,
      );
    }
    return false;
  }
  writeTempAndRename(root, file, bytes);
  names.add(path.basename(file));
  return true;
}

/** Whether two files hold the same bytes, read a few MB at a time. */
export function sameFileBytes(a: string, b: string): boolean {
  const fa = fs.openSync(a, 'r');
  const fb = fs.openSync(b, 'r');
  try {
    if (fs.fstatSync(fa).size !== fs.fstatSync(fb).size) return false;
    const ba = Buffer.alloc(1 << 22);
    const bb = Buffer.alloc(1 << 22);
    for (let position = 0; ;) {
      const na = fs.readSync(fa, ba, 0, ba.length, position);
      const nb = fs.readSync(fb, bb, 0, bb.length, position);
      if (na !== nb || ba.compare(bb, 0, nb, 0, na) !== 0) return false;
      if (na === 0) return true;
      position += na;
    }
  } finally {
    fs.closeSync(fa);
    fs.closeSync(fb);
  }
}

/**
 * writeImmutable for content produced in pieces (a day's ledger file of any size, never held whole): the pieces
 * go to a temp file as they come, which is renamed into place; a file already there must have exactly these bytes
 * (compared a few MB at a time) and is kept. Returns whether the file was written, and its size.
 */
export function writeImmutableChunks(
  root: string,
  rel: string,
  chunks: Iterable<Uint8Array>,
): { written: boolean; bytes: number } {
  const temp = tempFile(root);
  const fd = fs.openSync(temp, 'w');
  let bytes = 0;
  try {
    for (const chunk of chunks) {
      for (let done = 0; done < chunk.length;) done += fs.writeSync(fd, chunk, done, chunk.length - done);
      bytes += chunk.length;
    }
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(temp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  return { written: publishImmutableTemp(root, rel, temp), bytes };
}

/**
 * The end of writeImmutableChunks for a temp file (tempFile) written whole by other means: renamed into place as
 * `rel`, or, when a file is already there, compared with it a few MB at a time and removed (a published file is
 * never replaced: ConflictError when they differ). Returns whether the file was written.
 */
export function publishImmutableTemp(root: string, rel: string, temp: string): boolean {
  const file = path.join(root, rel);
  const names = listing(path.dirname(file));
  if (names.has(path.basename(file))) {
    const same = sameFileBytes(temp, file);
    const rebuilt = same ? '' : fileDigest(temp);
    fs.rmSync(temp, { force: true });
    if (!same) {
      throw new ConflictError(
        `published file ${rel} differs from the rebuild: sha256 on disk ${fileDigest(file)} != rebuilt ${rebuilt}`,
      );
    }
    return false;
  }
  ensureDir(path.dirname(file));
  fs.renameSync(temp, file);
  names.add(path.basename(file));
  return true;
}

/** SHA-256 of a file, read a few MB at a time. */
function fileDigest(file: string): string {
  const hash = crypto.createHash('sha256');
  const fd = fs.openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(1 << 22);
    for (let n; (n = fs.readSync(fd, buffer, 0, buffer.length, null)) > 0;) hash.update(buffer.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

export function writeMutable(root: string, rel: string, bytes: Uint8Array | string): void {
  const file = path.join(root, rel);
  writeTempAndRename(root, file, typeof bytes === 'string' ? Buffer.from(bytes) : bytes);
  listings.get(path.dirname(file))?.add(path.basename(file));
}

/** Forgets cached folder listings and made folders (after files or folders were removed by other means). */
export function forgetListings(): void {
  listings.clear();
  madeDirs.clear();
}

/** writeMutable for content produced in chunks (files too large to hold as one string). */
export function writeMutableChunks(root: string, rel: string, chunks: Iterable<string | Uint8Array>): number {
  const file = path.join(root, rel);
  ensureDir(path.dirname(file));
  const temp = tempFile(root);
  const fd = fs.openSync(temp, 'w');
  let bytes = 0;
  try {
    let pending: string[] = [];
    let pendingLength = 0;
    const flush = (): void => {
      if (pending.length === 0) return;
      bytes += fs.writeSync(fd, pending.join(''));
      pending = [];
      pendingLength = 0;
    };
    for (const chunk of chunks) {
      if (typeof chunk === 'string') {
        pending.push(chunk);
        pendingLength += chunk.length;
        if (pendingLength > 1 << 18) flush();
      } else {
        flush();
        bytes += fs.writeSync(fd, chunk);
      }
    }
    flush();
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temp, file);
  return bytes;
}

/** A file's bytes in order, a few MB at a time through one reused buffer (each piece is valid until the next is
 * asked for); undefined when the file does not exist. */
export function readPieces(root: string, rel: string): Iterable<Uint8Array> | undefined {
  let fd: number;
  try {
    fd = fs.openSync(path.join(root, rel), 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return (function* () {
    try {
      const buffer = Buffer.alloc(1 << 22);
      for (let n; (n = fs.readSync(fd, buffer, 0, buffer.length, null)) > 0;) yield buffer.subarray(0, n);
    } finally {
      fs.closeSync(fd);
    }
  })();
}

export function readOptional(root: string, rel: string): Uint8Array | undefined {
  try {
    return fs.readFileSync(path.join(root, rel));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Starts writing the archive's dirty pages to disk without waiting for it (`sync -f` in a child process, whose
 * end nobody waits for): a big build calls it once its largest file is written, so that the disk writes while
 * the build still hashes, and the barrier before the commit point (syncArchive) finds less to write. Not a
 * barrier itself; its failure changes nothing.
 */
export function startArchiveWriteback(root: string): void {
  try {
    const child = spawn('sync', ['-f', root], { stdio: 'ignore' });
    child.on('error', () => {});
    child.unref();
  } catch {
    // only a head start: syncArchive is the barrier
  }
}

/** Flushes the archive's file system to disk (coreutils `sync -f`, one syncfs call). */
export function syncArchive(root: string): void {
  spawnSync('sync', ['-f', root], { stdio: 'ignore' });
}

/** Removes temp files left by a killed writer (they are never part of the archive); those of a process that
 * still runs (another command writing its own files) are left alone. */
export function removeStaleTemps(root: string): number {
  const dir = path.join(root, TEMP_DIR);
  let removed = 0;
  for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    const pid = Number(name.split('-')[0]);
    if (pid !== process.pid && alive(pid)) continue;
    fs.rmSync(path.join(dir, name), { force: true });
    removed++;
  }
  return removed;
}
