import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/support/sequencer.ts';

// Node's compile cache for every Node process of the run, from its first module on: Vitest's workers, which
// inherit this environment, and what the tests start with node (the `timeseal` CLI turns it on by itself too).
process.env.NODE_COMPILE_CACHE ??= path.join(os.tmpdir(), 'node-compile-cache');

export default defineConfig({
  test: {
    include: ['{core,store,runtime,pipeline,ingest,cli,site,test}/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two files at a time: Vitest's default is one fewer than the machine's cores, which is one on the
    // 2-core machines this runs on. Every test owns its ports, folders and databases, so files never share.
    maxWorkers: 2,
    // Longest files first, by the times in test/durations.json, so neither worker is left with a long file at the end.
    sequence: { sequencer: LongestFirstSequencer },
  },
});
