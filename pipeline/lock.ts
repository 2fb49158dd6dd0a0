// One writer at a time. The lock itself is a POSIX record lock that the kernel holds for the owning process:
// an SQLite database next to the pid file (`<file>.sqlite`), held in an exclusive transaction with
// locking_mode=EXCLUSIVE and a busy timeout of BUSY_WAIT_MS. A process that dies, however it dies, loses the
// lock with it, so there is no stale lock to detect or take over, and two processes can never both get in (a
// pid file taken over when its owner looked dead let two racing processes in). The pid file `<file>` is
// written only while the lock is held and says who holds it, for the refusal message. `withLock` guards
// synchronous work (the archive writes of a build or an anchoring step); `withLockAsync` guards a run that
// awaits (an anchoring run's network calls). `what` names the run in the refusal a second process gets.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { TimesealError } from '../core/errors.ts';

/** Whether a process with this id runs (a non-positive or non-integer id never does). */
export function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * How long a process waits for the lock before it is refused. Not 0: taking SQLite's exclusive lock passes
 * through a shared one, and processes that open the file at the same instant can each hold the shared lock
 * the others need to let go of; with no wait all of them were refused (2 rounds of 150 of the race
 * test), with a short one SQLite backs the losers off and one gets in. A run holds the lock for seconds, so
 * a second writer is still refused, 0.1 s later.
 */
const BUSY_WAIT_MS = 100;

interface Held {
  release(): void;
}

function acquire(file: string, what: string): Held {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(`${file}.sqlite`, { timeout: BUSY_WAIT_MS });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
    let owner = '?';
    try {
      owner = fs.readFileSync(file, 'utf8').trim() || '?';
    } catch {
      // the holder has not written its pid yet
    }
    throw new TimesealError('busy', `another ${what} holds ${file} (pid ${owner}); try again when it ends`);
  }
  try {
    fs.writeFileSync(file, String(process.pid));
  } catch (err) {
    db.close();
    throw err;
  }
  return {
    release() {
      // The pid file goes while the lock is still held, so it never removes the next holder's.
      try {
        fs.rmSync(file, { force: true });
      } finally {
        db.close();
      }
    },
  };
}

export function withLock<T>(file: string, fn: () => T, what = 'timeseal run'): T {
  const held = acquire(file, what);
  try {
    return fn();
  } finally {
    held.release();
  }
}

export async function withLockAsync<T>(file: string, fn: () => Promise<T>, what = 'timeseal run'): Promise<T> {
  const held = acquire(file, what);
  try {
    return await fn();
  } finally {
    held.release();
  }
}
