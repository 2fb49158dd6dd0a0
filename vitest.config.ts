import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ["{core,store,runtime,pipeline,ingest,cli,site,test}/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
