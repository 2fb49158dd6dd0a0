// Files that must survive a power loss from the moment they are written: the signing keys (runtime/keys.ts,
// runtime/receipt-keys.ts), made once and never again. A file's data is durable only after fsync(2) of the file,
// and its name only after fsync(2) of the folder that holds it (POSIX leaves a new directory entry to the file
// system otherwise; ext4 and XFS may lose it). The archive writer makes many files and syncs them all with one
// barrier before its commit point (pipeline/files.ts syncArchive); a key is one file at a time, synced at once.
import fs from 'node:fs';
import path from 'node:path';

/** fsync(2) of the folder `dir` (its entries: names made, renamed or removed in it). */
export function syncFolder(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * mkdir -p `dir` (with `mode` for what it makes), every folder it made and the one above them synced, so that
 * the new folders' names are durable too.
 */
export function makeFolderDurably(dir: string, mode?: number): void {
  const first = fs.mkdirSync(dir, { recursive: true, ...(mode === undefined ? {} : { mode }) });
  if (first === undefined) return;
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    syncFolder(d);
    if (d === path.resolve(first)) break;
  }
  syncFolder(path.dirname(path.resolve(first)));
}

/**
 * Creates `file` with `data` (refusing one that exists: flag wx, as a key is never overwritten), the data and
 * its folder's entry synced before it returns. `mode` for a private key: 0o600.
 */
export function writeNewFileDurably(file: string, data: string | Uint8Array, mode?: number): void {
  const fd = fs.openSync(file, 'wx', mode);
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  syncFolder(path.dirname(file));
}

/** Replaces `file` with `data` through `file`.tmp and a rename, the data synced before and the folder after. */
export function replaceFileDurably(file: string, data: string | Uint8Array): void {
  const temp = `${file}.tmp`;
  const fd = fs.openSync(temp, 'w');
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temp, file);
  syncFolder(path.dirname(file));
}
