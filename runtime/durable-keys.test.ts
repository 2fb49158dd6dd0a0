// Key files are durable once written (runtime/durable-file.ts): `timeseal keys init`'s initKeys, run under
// strace(1), fsyncs every key file it creates before closing it, then the folder that names it, and the folders
// it made; renameCheckpointKeys' replacement of the two vkeys likewise (its temp file synced, then the folder
// after the rename). strace watches the real system calls of a real node process: nothing is mocked.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
// The Node these tests run on: the one `make install` put in .tools/, or the machine's own when it is new enough.
const NODE = process.execPath;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-durable-keys-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * The paths fsynced, in order, by the traced process. strace's -y prints each descriptor with the path it names
 * (`fsync(23</tmp/…/keys>)`), so a call split across lines by another thread's (`<unfinished …>`, then
 * `<… fsync resumed>) = 0`) still names its file: following an fd from its openat to its close missed those.
 */
function fsyncedPaths(trace: string): string[] {
  const synced: string[] = [];
  for (const line of trace.split('\n')) {
    const sync = /\bfsync\(\d+<([^>]+)>/.exec(line);
    if (sync) synced.push(sync[1]!);
  }
  return synced;
}

it('initKeys and renameCheckpointKeys fsync each key file, then its folder, and the folders they made', () => {
  const keys = path.join(dir, 'new/keys');
  const privateKeys = path.join(dir, 'new/data/private-keys');
  const script = [
    `import { initKeys, loadSigningKeys, renameCheckpointKeys } from ${JSON.stringify(path.join(ROOT, 'runtime/keys.ts'))};`,
    `const dirs = { keys: ${JSON.stringify(keys)}, privateKeys: ${JSON.stringify(privateKeys)} };`,
    `const files = initKeys(dirs, 'timeseal.test/log');`,
    `renameCheckpointKeys(dirs.keys, loadSigningKeys(dirs), 'timeseal.example/log');`,
    `process.stdout.write(JSON.stringify(files));`,
  ].join('\n');
  const out = path.join(dir, 'trace');
  const run = spawnSync(
    'strace',
    ['-f', '-qq', '-y', '-o', out, '-e', 'trace=fsync', NODE, '--input-type=module', '-e', script],
    { encoding: 'utf8' },
  );
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  const files = JSON.parse(run.stdout) as string[];
  // The ECDSA and ML-DSA-65 pairs, the checkpoint, TSA and receipt keys: every file `timeseal keys init` makes.
  expect(files.length).toBeGreaterThanOrEqual(15);
  const synced = fsyncedPaths(fs.readFileSync(out, 'utf8'));
  for (const file of files) {
    const at = synced.indexOf(file);
    expect(at, `${file} fsynced`).toBeGreaterThanOrEqual(0);
    expect(synced.indexOf(path.dirname(file), at), `${path.dirname(file)} fsynced after ${file}`).toBeGreaterThan(at);
  }
  // The folders made for them, and the folder that names the first one made.
  for (const folder of [keys, path.dirname(keys), privateKeys, path.dirname(privateKeys), dir])
    expect(synced, folder).toContain(folder);
  // The renamed vkeys: each temp file synced, then the keys folder after it.
  const temps = files.filter((f) => f.endsWith('.vkey')).map((f) => `${f}.tmp`);
  expect(temps).toHaveLength(2);
  for (const temp of temps) {
    expect(synced.lastIndexOf(keys), temp).toBeGreaterThan(synced.indexOf(temp));
    expect(synced.indexOf(temp), temp).toBeGreaterThanOrEqual(0);
  }
});
