// One archive writer at a time: an exclusive lock file holding the owner's pid. A lock left by a process
// that no longer runs (killed mid-build) is stale and taken over.
import fs from 'node:fs';
import path from 'node:path';
import { TimesealError } from '../core/errors.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function withLock<T>(file: string, fn: () => T): T {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
      const owner = Number(fs.readFileSync(file, 'utf8'));
      if (Number.isInteger(owner) && owner !== process.pid && alive(owner)) {
        throw new TimesealError('conflict', `another timeseal run holds ${file} (pid ${owner}); try again when it ends`);
      }
      fs.rmSync(file, { force: true });
    }
  }
  try {
    return fn();
  } finally {
    fs.rmSync(file, { force: true });
  }
}
