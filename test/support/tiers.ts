// Which test files run in which Vitest project (vitest.config.ts reads these lists; test/tiers.test.ts holds
// their promises). test/README.md says what each tier is for.

/** Every test file of the repository. */
export const ALL = ['{core,store,runtime,pipeline,ingest,cli,site,test}/**/*.test.ts'];

/**
 * Files that leave nothing behind in their process: no module replaced (vi.mock: not
 * store/sqlite/test/writer-storage.test.ts), no change to process.env, no fake timers, no global. They share
 * their workers (isolate: false), so what they load — Fastify and its schemas, noble, the pipeline — is loaded
 * and optimized once per worker instead of once per file: 77 such files alone took 95 s (183 s of CPU) in
 * processes of their own, 62 s (117 s of CPU) sharing. Every other file gets a fresh process, as Vitest does by
 * default.
 */
export const SHARED_WORKERS = [
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
  'test/tiers.test.ts',
  'test/witness-policy-readers.test.ts',
  'test/storage/{folder,open}.test.ts',
  'test/verifier/checks.test.ts',
  'test/site/{verified-search,build-output,ledgers-data}.test.ts',
  'test/anchor/{network,proof-route}.test.ts',
];

/**
 * Files of SHARED_WORKERS that run a Debian package's program which a fresh machine does not have (poppler-utils'
 * pdftotext and pdfdetach read the PDF certificates): they share workers in their own project, `shared-tools`,
 * so that the quick tier (`shared`, `make check`) needs nothing beyond npm's packages and the base system
 * (node, openssl, python3, util-linux).
 */
export const NEEDS_TEST_TOOLS = [
  'ingest/test/certificate-pdf.test.ts',
  'ingest/test/tsa-display.test.ts',
  'ingest/test/receipt-kept.test.ts',
  'runtime/durable-keys.test.ts',
  'test/anchor/proof-route.test.ts',
];

/** Programs of the base system that a quick-tier file may run. */
export const BASE_PROGRAMS = ['node', 'openssl', 'python3', 'unshare', 'sh'];

/**
 * Programs from the Debian packages that scripts/ensure-test-tools.sh installs (and the test helpers that start
 * them): a quick-tier file that names one is in the wrong tier.
 */
export const TEST_TOOLS = [
  'pdftotext',
  'pdfdetach',
  'pdfinfo',
  'pdfsig',
  'pdftoppm',
  'qpdf',
  'java',
  'javac',
  'jarsigner',
  'keytool',
  'nginx',
  'chromium',
  'chromium-headless-shell',
  'initdb',
  'pg_ctl',
  'psql',
  'postgres',
  'radosgw',
  'ceph',
  'ceph-mon',
  'ceph-osd',
  'faketime',
  'strace',
  'osslsigncode',
  'curl',
];
/** Test helpers that start such programs. */
export const TEST_TOOL_HELPERS = ['support/chromium', 'support/postgres', 'support/ceph-rgw', 'support/nginx'];

/**
 * Test functions that run a Debian package's program for the caller, with that package: `referenceRead` runs the
 * OpenTimestamps reference client (python3-opentimestamps; python3 itself is of the base system).
 */
export const TEST_TOOL_CALLS: ReadonlyArray<[string, string]> = [['referenceRead', 'python3-opentimestamps']];
