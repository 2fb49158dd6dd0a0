import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ["{core,store,runtime,pipeline,ingest,cli,site,test}/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two files at a time: Vitest's default is one fewer than the machine's cores, which is one on the
    // 2-core machines this runs on. Every test owns its ports, folders and databases, so files never share.
    maxWorkers: 2,
  },
});
