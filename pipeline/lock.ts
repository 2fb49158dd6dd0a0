// One writer at a time: an exclusive lock file holding the owner's pid. A lock left by a process that no
// longer runs (killed mid-run) is stale and taken over. `withLock` guards synchronous work (the archive
// writes of a build or an anchoring step); `withLockAsync` guards a run that awaits (an anchoring run's
// network calls). `what` names the run in the refusal a second process gets.
import fs from 'node:fs';
import path from 'node:path';
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

function acquire(file: string, what: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
      const owner = Number(fs.readFileSync(file, 'utf8'));
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner)) {
        throw new TimesealError('conflict', `another ${what} holds ${file} (pid ${owner}); try again when it ends`);
      }
      fs.rmSync(file, { force: true });
    }
  }
}

export function withLock<T>(file: string, fn: () => T, what = 'timeseal run'): T {
  acquire(file, what);
  try {
    return fn();
  } finally {
    fs.rmSync(file, { force: true });
  }
}

export async function withLockAsync<T>(file: string, fn: () => Promise<T>, what = 'timeseal run'): Promise<T> {
  acquire(file, what);
  try {
    return await fn();
  } finally {
    fs.rmSync(file, { force: true });
  }
}
