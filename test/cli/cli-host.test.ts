// The CLI host (test/support/cli-host.ts) stands in for the `timeseal` executable in most tests: the same command
// must give the same exit code, stdout and stderr in the host as in a process of its own, for a success, bad
// usage, bad input, a missing file and a failed verification, and what one command leaves in the host (environment, exit code,
// working folder) must not reach the next.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { canRunInHost, runInHost } from '../support/cli-host.ts';
import { BIN, makeHashes, NODE_BIN, removeTempProjects, tempProject, writeHashFile } from './helpers.ts';

afterAll(removeTempProjects);

function envOf(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TIMESEAL_') && k !== 'NODE_OPTIONS') env[k] = v;
  return { ...env, PATH: `${NODE_BIN}:${process.env.PATH ?? ''}`, ...extra };
}

function bothWays(cwd: string, args: string[], extra: Record<string, string> = {}) {
  const spawned = spawnSync(BIN, args, { cwd, env: envOf(extra), encoding: 'utf8' });
  const hosted = runInHost(cwd, args, envOf(extra));
  return {
    spawned: { code: spawned.status, stdout: spawned.stdout, stderr: spawned.stderr },
    hosted: { code: hosted.code, stdout: hosted.stdout, stderr: hosted.stderr },
  };
}

describe('the CLI host', () => {
  test('gives the exit code, stdout and stderr of the executable', () => {
    const dir = tempProject('host');
    const init = runInHost(dir, ['keys', 'init', '--json'], envOf());
    expect(init.code, init.stderr).toBe(0);
    expect(JSON.parse(init.stdout).created).toContain(path.join('keys', 'public.pem'));
    writeHashFile(dir, 'hashes.txt', makeHashes('host', 3));
    const at = { TIMESEAL_NOW: '2025-11-01T10:00:00.000Z' };
    for (const [args, extra, code] of [
      [['import', 'hashes.txt', '--json'], at, 0], // a success (the second run: nothing new)
      [['status', '--json'], at, 0],
      [['import', '/dev/null'], at, 1], // bad input: no hashes in it
      [['import', 'no-such-file.txt'], at, 3], // not found
      [['import'], at, 64], // bad usage: the file is missing
      [['no-such-command'], at, 64],
      [['verify', '--archive', 'no-such-folder'], at, 3], // no such archive
    ] as const) {
      const { spawned, hosted } = bothWays(dir, [...args], extra);
      expect(spawned.code, `${args.join(' ')}: ${spawned.stderr}`).toBe(code);
      expect(hosted, args.join(' ')).toEqual(spawned);
    }
  });

  test('leaves nothing of one command to the next: environment, exit code, working folder', () => {
    const a = tempProject('host-a');
    const b = tempProject('host-b');
    const before = process.cwd();
    expect(runInHost(a, ['keys', 'init'], envOf()).code).toBe(0);
    // TIMESEAL_ARCHIVE set for one run only: the next run's archive is the default again.
    const elsewhere = runInHost(a, ['status', '--json'], envOf({ TIMESEAL_ARCHIVE: 'elsewhere' }));
    expect(elsewhere.code, elsewhere.stderr).toBe(0);
    expect(JSON.parse(elsewhere.stdout).archive.path).toBe('elsewhere');
    const status = runInHost(a, ['status', '--json'], envOf());
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).archive.path).toBe('ledgers');
    expect(process.cwd()).toBe(before);
    // A day built; a verification that fails through the exit code (not an error), then one that passes.
    expect(runInHost(b, ['keys', 'init'], envOf()).code).toBe(0);
    writeHashFile(b, 'h.txt', makeHashes('listing', 2));
    expect(runInHost(b, ['import', 'h.txt'], envOf({ TIMESEAL_NOW: '2025-11-01T10:00:00.000Z' })).code).toBe(0);
    const build = envOf({ TIMESEAL_NOW: '2025-11-02T00:01:00.000Z' });
    expect(runInHost(b, ['ledger', 'build'], build).code).toBe(0);
    const day = path.join(b, 'ledgers', '2025-11-01.json');
    const bytes = fs.readFileSync(day);
    fs.writeFileSync(day, Buffer.concat([bytes.subarray(0, -2), Buffer.from(' \n')]));
    const failed = runInHost(b, ['verify'], build);
    expect(failed.code, failed.stdout).toBe(1);
    fs.writeFileSync(day, bytes);
    const passed = runInHost(b, ['verify'], build);
    expect(passed.code, passed.stdout + passed.stderr).toBe(0);
    // The archive folder removed by hand, then built again from the database: the build makes its folders anew
    // (this thread keeps no list of the folders it made, nor of their files, from one command to the next).
    fs.rmSync(path.join(b, 'ledgers'), { recursive: true });
    const rebuilt = runInHost(b, ['ledger', 'build'], build);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(fs.readFileSync(day)).toEqual(bytes);
  });

  test('is not used where a process is the point: stdin, serve, a planned kill, TIMESEAL_TEST_SPAWN=1', () => {
    const saved = process.env.TIMESEAL_TEST_SPAWN;
    delete process.env.TIMESEAL_TEST_SPAWN;
    try {
      expect(canRunInHost(['status'], {}, undefined)).toBe(true);
      expect(canRunInHost(['import', '-'], {}, undefined)).toBe(false);
      expect(canRunInHost(['import', 'x.txt'], {}, 'abc')).toBe(false);
      expect(canRunInHost(['serve'], {}, undefined)).toBe(false);
      expect(canRunInHost(['ledger', 'build'], { TIMESEAL_TEST_KILL_AT: 'tiles:1' }, undefined)).toBe(false);
      process.env.TIMESEAL_TEST_SPAWN = '1';
      expect(canRunInHost(['status'], {}, undefined)).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.TIMESEAL_TEST_SPAWN;
      else process.env.TIMESEAL_TEST_SPAWN = saved;
    }
  });
});
