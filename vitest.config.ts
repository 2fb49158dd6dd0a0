import os from 'node:os';
import path from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/support/sequencer.ts';
import { ALL, NEEDS_TEST_TOOLS, SHARED_WORKERS } from './test/support/tiers.ts';

// Node's compile cache for every Node process of the run, from its first module on: Vitest's workers, which
// inherit this environment, and what the tests start with node (the `timeseal` CLI turns it on by itself too).
process.env.NODE_COMPILE_CACHE ??= path.join(os.tmpdir(), 'node-compile-cache');

export default defineConfig({
  test: {
    // Three files share two cores, so a test may take longer than alone: the limits leave room for that.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // expect.poll gives up after 1 s by default. A browser verifying a bundle (two signatures, a Merkle proof, a
    // Bitcoin header) needed more than that while three files shared the two cores, and a stop failed on it. A
    // condition that never comes true still fails, after 30 s.
    expect: { poll: { timeout: 30_000 } },
    pool: 'forks',
    // Three files at a time on the 2-core machines this runs on (Vitest's default is one fewer than the cores).
    // With two, a fifth of the CPU stayed idle: files wait on their servers, on child processes and on time (a
    // lease's ttl, a lock race's start). The whole suite on a quiet machine: 802 s with two files, 727 s with
    // three (four were not measured alone). Every test owns its ports, folders and databases, so files never
    // share.
    maxWorkers: 3,
    // Longest files first, by the times in test/durations.json, so no worker is left with a long file at the end.
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      // The quick tier (`make check`): in-process files that share their workers and need no Debian package.
      {
        extends: true,
        test: {
          name: 'shared',
          include: SHARED_WORKERS,
          exclude: [...configDefaults.exclude, ...NEEDS_TEST_TOOLS],
          isolate: false,
        },
      },
      { extends: true, test: { name: 'shared-tools', include: NEEDS_TEST_TOOLS, isolate: false } },
      {
        extends: true,
        test: { name: 'isolated', include: ALL, exclude: [...configDefaults.exclude, ...SHARED_WORKERS] },
      },
    ],
  },
});
