// One anchoring run at a time (anchor, upgrade, and the schedule's steps, across processes): an exclusive lock
// file holding the owner's pid, held across the run's network calls. A lock left by a process that no longer
// runs is stale and taken over. Archive writes additionally take the build's archive lock (pipeline/lock.ts),
// held only for the short synchronous write phase, so anchoring never writes while a build does.
import fs from 'node:fs';
import path from 'node:path';
import { TimesealError } from '../../core/errors.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function withAnchorLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
      const owner = Number(fs.readFileSync(file, 'utf8'));
      if (Number.isInteger(owner) && owner > 0 && alive(owner)) {
        throw new TimesealError('conflict', `another anchoring run holds ${file} (pid ${owner}); try again when it ends`);
      }
      fs.rmSync(file, { force: true });
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(file, { force: true });
  }
}
