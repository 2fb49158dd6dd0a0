import os from 'node:os';
import path from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/support/sequencer.ts';

// Node's compile cache for every Node process of the run, from its first module on: Vitest's workers, which
// inherit this environment, and what the tests start with node (the `timeseal` CLI turns it on by itself too).
process.env.NODE_COMPILE_CACHE ??= path.join(os.tmpdir(), 'node-compile-cache');

const ALL = ['{core,store,runtime,pipeline,ingest,cli,site,test}/**/*.test.ts'];

/**
 * Files that leave nothing behind in their process: no module replaced (vi.mock: not
 * store/sqlite/test/writer-storage.test.ts), no change to process.env, no fake timers, no global. They share
 * their workers (isolate: false), so what they load — Fastify and its schemas, noble, the pipeline — is loaded
 * and optimized once per worker instead of once per file: these 77 files alone took 95 s (183 s of CPU) in
 * processes of their own, 62 s (117 s of CPU) sharing. Every other file gets a fresh process, as Vitest does by default.
 */
const SHARED_WORKERS = [
  'core/*.test.ts',
  'runtime/*.test.ts',
  'ingest/test/*.test.ts',
  'ingest/accounts/test/*.test.ts',
  'store/*.test.ts',
  'store/sqlite/*.test.ts',
  'store/sqlite/test/writer.test.ts',
  'store/test/sqlite.test.ts',
  'pipeline/*.test.ts',
  'test/sequencer.test.ts',
  'test/witness-policy-readers.test.ts',
  'test/storage/{folder,open}.test.ts',
  'test/verifier/checks.test.ts',
  'test/site/{verified-search,build-output}.test.ts',
  'test/anchor/{network,proof-route}.test.ts',
];

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
      { extends: true, test: { name: 'shared', include: SHARED_WORKERS, isolate: false } },
      {
        extends: true,
        test: { name: 'isolated', include: ALL, exclude: [...configDefaults.exclude, ...SHARED_WORKERS] },
      },
    ],
  },
});
