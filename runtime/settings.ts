// Every setting of `timeseal` (the service, the operator CLI and the build scripts) is an environment variable,
// and this table is the one list of them: for each, its part of docs/CONFIGURATION.md, its default, the parser
// that reads its text (runtime/setting-parsers.ts) and what it means. The loaders (runtime/config.ts,
// ingest/config.ts, pipeline/…, cli/…) read the environment only through `setting`, so each variable has one
// reading and a bad value is refused with a sentence naming it; rules between variables (TSA_MIN against
// TSA_URLS, both TSA files or neither) stay with the loader that reads both. An empty variable (or one of
// spaces only) is an unset one.
// docs/CONFIGURATION.md's tables are written from this one (`node scripts/configuration-doc.ts`), and
// test/configuration.test.ts checks the page against it and that no source reads a variable outside it.
import {
  asFlag,
  asText,
  commaList,
  folder,
  httpUrl,
  httpUrlText,
  listenAddress,
  oneOf,
  port,
  rate,
  seconds,
  trustProxy,
  wholeNumber,
  type Parser,
} from './setting-parsers.ts';

/** The parts of docs/CONFIGURATION.md, by the title of each. */
export const SECTIONS = {
  where: 'Where things are',
  s3: 'The S3 archive',
  server: 'The server',
  outside: 'Outside services of the daily schedule',
  tests: 'The clock, and what is for tests',
} as const;

export interface Setting<T> {
  section: keyof typeof SECTIONS;
  /** The text read in place of an unset (or empty) variable, by `parse` as the variable's own would be. */
  default?: string;
  /** Where there is no such text (the default follows other settings, or nothing is used): what the page says. */
  defaultText?: string;
  parse: Parser<T>;
  /** What it means: one cell of docs/CONFIGURATION.md's table (Markdown). */
  text: string;
}

const MS = wholeNumber('milliseconds', 1);

export const SETTINGS = {
  TIMESEAL_DB: {
    section: 'where',
    default: 'data/timeseal.db',
    parse: asText,
    text: 'SQLite database (WAL)',
  },
  TIMESEAL_ARCHIVE: {
    section: 'where',
    default: 'ledgers',
    parse: asText,
    text: 'the public archive folder, or `s3://BUCKET/PREFIX`: an archive in an S3 bucket, which the commands that write the archive publish to from a local working copy under the schedule lease (docs/OPERATIONS.md §8)',
  },
  TIMESEAL_ARCHIVE_CACHE: {
    section: 'where',
    defaultText: '`archive-cache` beside `TIMESEAL_DB`',
    parse: folder,
    text: "with an `s3://` archive: the writer's working copy, a folder the commands read and write as they would the archive folder; `<it>.published.json` and `<it>.versions.json` record what the bucket holds",
  },
  TIMESEAL_KEYS: {
    section: 'where',
    default: 'keys',
    parse: asText,
    text: 'public keys (served, and built into the offline verifier by `make build`)',
  },
  TIMESEAL_PRIVATE_KEYS: {
    section: 'where',
    default: 'data/private-keys',
    parse: asText,
    text: 'private keys, mode 0600, never served',
  },
  TIMESEAL_TSA_KEY_FILE: {
    section: 'where',
    defaultText: '(unset: `data/private-keys/tsa_private.pem`)',
    parse: asText,
    text: 'with `TIMESEAL_TSA_CHAIN_FILE` (both or neither): the PEM private key (ECDSA P-256) that `POST /tsa` signs with; `timeseal serve` checks the pair at start (docs/OPERATIONS.md, "Your own TSA certificate")',
  },
  TIMESEAL_TSA_CHAIN_FILE: {
    section: 'where',
    defaultText: '(unset: `keys/timeseal-tsa.pem`)',
    parse: asText,
    text: 'with `TIMESEAL_TSA_KEY_FILE`: the PEM certificate chain of that key (the TSA certificate first, up to and including the root), e.g. issued by a public CA',
  },
  TIMESEAL_SITE: {
    section: 'where',
    default: 'dist/site',
    parse: asText,
    text: 'the built site that `timeseal serve` serves',
  },
  TIMESEAL_DATABASE_URL: {
    section: 'where',
    defaultText: '(unset: SQLite at `TIMESEAL_DB`)',
    parse: asText,
    text: 'a PostgreSQL URL (`postgres://user:pass@host/db`): the database several `timeseal serve` nodes share (docs/DEPLOY.md); `timeseal db migrate` prepares it',
  },
  TIMESEAL_DATABASE_POOL: {
    section: 'where',
    default: '10',
    parse: wholeNumber('connections', 1, 1000),
    text: 'with PostgreSQL: connections per process, 1 to 1000; each node holds up to this many',
  },
  TIMESEAL_BUILD_MEMORY_MB: {
    section: 'where',
    default: '512',
    parse: wholeNumber('megabytes', 1, 1_048_576),
    text: "what `timeseal ledger build` may hold of a day's rows while it sorts them (40 bytes a row: a day of up to ~13.4 million rows at the default, read into memory and sorted there); a larger day is sorted by an external merge: sorted runs spilled to the archive's `.tmp/` folder, then merged, removed when the build ends (docs/OPERATIONS.md, \"Big days\"); on SQLite such a day is read and sorted on two threads, each within half of this budget; whole megabytes, 1 to 1048576. The day's files are the same bytes either way",
  },

  AWS_ENDPOINT_URL: {
    section: 's3',
    defaultText: '(unset: AWS)',
    parse: asText,
    text: "the endpoint of an `s3://` archive's store other than AWS (e.g. Ceph RGW or MinIO), addressed path-style",
  },
  AWS_ENDPOINT_URL_S3: {
    section: 's3',
    defaultText: '(unset)',
    parse: asText,
    text: "the AWS SDK's own alternative to `AWS_ENDPOINT_URL`; it wins when both are set",
  },
  AWS_REGION: {
    section: 's3',
    defaultText: '`us-east-1` with an endpoint',
    parse: asText,
    text: "the store's region; without an endpoint (AWS) it must be set",
  },
  AWS_DEFAULT_REGION: {
    section: 's3',
    defaultText: '(unset)',
    parse: asText,
    text: "the AWS SDK's own alternative to `AWS_REGION`, used when that is unset",
  },
  AWS_ACCESS_KEY_ID: {
    section: 's3',
    defaultText: "(unset: the SDK's chain)",
    parse: asText,
    text: "with `AWS_SECRET_ACCESS_KEY` (both or neither): the store's keys; without them the AWS SDK's usual chain (profiles, instance roles)",
  },
  AWS_SECRET_ACCESS_KEY: {
    section: 's3',
    defaultText: "(unset: the SDK's chain)",
    parse: asText,
    text: 'the secret of `AWS_ACCESS_KEY_ID`',
  },
  AWS_SESSION_TOKEN: {
    section: 's3',
    defaultText: '(unset)',
    parse: asText,
    text: 'with temporary keys: their session token',
  },
  TIMESEAL_S3_ACCEPT_PLAIN_PUTS: {
    section: 's3',
    default: '0',
    parse: oneOf(['1', '0']),
    text: '`1` accepts an S3 store that ignores create-only writes (`If-None-Match: *`), which is otherwise refused at start; each object is then read before it is written (one writer only)',
  },

  TIMESEAL_ORIGIN: {
    section: 'server',
    defaultText: '`http://localhost:PORT` for links, log origin `localhost:8080`',
    parse: asText,
    text: "public base URL; without its scheme it is the log origin, fixed for the life of an archive (unset, links follow `PORT` and the log origin stays `localhost:8080`; a browser's page visit on `127.0.0.1:PORT` is then redirected to `http://localhost:PORT`, so sessions and e-mail links share one origin — the one `make start` prints)",
  },
  TIMESEAL_SCHEDULE_LEASE_SECONDS: {
    section: 'server',
    default: '90',
    parse: seconds(1),
    text: "the schedule lease's ttl: one of several `timeseal serve` nodes runs the schedule; a dead holder is replaced within ttl + ttl/3 (docs/OPERATIONS.md §1)",
  },
  HOST: {
    section: 'server',
    default: '127.0.0.1',
    parse: asText,
    text: 'the address `timeseal serve` listens on',
  },
  PORT: {
    section: 'server',
    default: '8080',
    parse: port,
    text: 'the port `timeseal serve` listens on (`0`: any free one)',
  },
  TRUST_PROXY: {
    section: 'server',
    defaultText: '(unset)',
    parse: trustProxy,
    text: 'trust X-Forwarded-For from this many proxies (`1` behind one nginx, at most 5) or from these proxy addresses; `true` is refused (docs/OPERATIONS.md, "Behind a proxy")',
  },
  METRICS_LISTEN: {
    section: 'server',
    defaultText: '(unset: no metrics)',
    parse: listenAddress,
    text: '`PORT` (on 127.0.0.1) or `HOST:PORT` where `serve` answers `GET /metrics` (Prometheus text format; docs/OPERATIONS.md §7), apart from the public port',
  },
  BETA_API_RATE: {
    section: 'server',
    defaultText: '(unset: no limit)',
    parse: rate('BETA_API_RATE=600/hour or BETA_API_RATE=10/minute (leave it unset for no limit)'),
    text: 'optional cap per client address (IPv6 per /64) on the hashes of `POST /api/v1/beta/timestamp`, `/api/v1/beta/timestamps` (a batch counts its hashes) and `POST /tsa`: `COUNT/UNIT`, UNIT `second`, `minute`, `hour` or `day`, e.g. `600/hour`; shared by every process on the database; past it `429` with `Retry-After`',
  },
  STATUS_LOOKUP_RATE: {
    section: 'server',
    default: '120/minute',
    parse: rate('STATUS_LOOKUP_RATE=120/minute (the default)'),
    text: "the budget per client address (IPv6 per /64) of `GET /api/status/<hash>`: `COUNT/UNIT` as `BETA_API_RATE`; counted in each process's memory (docs/OPERATIONS.md, the limits table); past it `429` with `Retry-After`",
  },
  SCITT_ISSUER_KEYS: {
    section: 'server',
    defaultText: '(unset: statements need an `x5chain`)',
    parse: asText,
    text: 'a JSON file `{"<iss>": [<key>, …]}`, each key a JWK object (RFC 7517) or an SPKI PEM text: the keys a SCITT Signed Statement with that `iss` may be signed with (`POST /entries`, docs/API.md); read at start, a bad file stops the server with the member named; `timeseal verify` checks every published statement’s signature with them again (a statement with neither an `x5chain` nor a key here is named in a note as not checked)',
  },
  HTTP_HEADERS_TIMEOUT: {
    section: 'server',
    default: '15',
    parse: seconds(),
    text: "seconds to receive a request's headers; at most `HTTP_REQUEST_TIMEOUT` (docs/OPERATIONS.md §5)",
  },
  HTTP_REQUEST_TIMEOUT: {
    section: 'server',
    default: '30',
    parse: seconds(),
    text: 'seconds to receive a whole request, headers and body',
  },
  HTTP_KEEPALIVE_TIMEOUT: {
    section: 'server',
    default: '10',
    parse: seconds(),
    text: 'seconds after which an idle keep-alive connection is closed',
  },
  HTTP_IDLE_TIMEOUT: {
    section: 'server',
    default: '120',
    parse: seconds(),
    text: 'seconds after which a connection on which nothing moves is closed, answer under way or not',
  },
  HTTP_MAX_CONNECTIONS: {
    section: 'server',
    defaultText: '4096, or fewer when the open-files limit leaves less beside 256',
    parse: wholeNumber('connections', 1),
    text: 'open connections at most; further ones are closed at once, unanswered',
  },
  SMTP_URL: {
    section: 'server',
    defaultText: '(unset: the outbox)',
    parse: asText,
    text: '`smtp://` or `smtps://` URL e-mail is sent through; without it each message is written to the outbox folder and its path logged',
  },
  MAIL_FROM: {
    section: 'server',
    defaultText: '`Timeseal <noreply@HOST>` of `TIMESEAL_ORIGIN`',
    parse: asText,
    text: 'the sender of the e-mails',
  },
  CONTACT_TO: {
    section: 'server',
    defaultText: '`MAIL_FROM`',
    parse: asText,
    text: 'where contact-form messages go',
  },
  TIMESEAL_OUTBOX: {
    section: 'server',
    defaultText: '`outbox` beside `TIMESEAL_DB`',
    parse: asText,
    text: 'without `SMTP_URL`: the folder each e-mail is written to',
  },
  FREE_TIER_DAILY_LIMIT: {
    section: 'server',
    defaultText: '(unset: 2)',
    parse: wholeNumber('submissions', 1, 1_000_000),
    text: "a local development server only (`TIMESEAL_ORIGIN` unset or on localhost): the free tier's daily cap per address, since every test from this machine is 127.0.0.1 and shares one count; a public server refuses it (its free tier is 2 a day, docs/API.md)",
  },
  DONATION_URL: {
    section: 'server',
    defaultText: '(unset)',
    parse: httpUrl({ credentials: false }),
    text: 'the card-payment donation page the `/beta-api` page links to ("Donate by card"; served by `GET /api/site-config`); unset, no link',
  },
  LOG_LEVEL: {
    section: 'server',
    default: 'info',
    parse: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    text: "the server log's level (pino)",
  },
  LOG_FORMAT: {
    section: 'server',
    defaultText: '`pretty` on a terminal, else `json`',
    parse: oneOf(['json', 'pretty']),
    text: '`json` for JSON lines, `pretty` for one short line per event (on a terminal `timeseal serve` also prints a start banner: the address to open, where e-mail goes, the archive)',
  },
  STRIPE_SECRET_KEY: {
    section: 'server',
    defaultText: '(unset)',
    parse: asText,
    text: 'with both price ids: the Standard plan; without them the payment endpoints answer 503 and the pricing page says payments are unavailable',
  },
  STRIPE_WEBHOOK_SECRET: {
    section: 'server',
    defaultText: '(unset)',
    parse: asText,
    text: 'the secret Stripe signs its webhooks with; without it webhooks are refused (503)',
  },
  STRIPE_PRICE_MONTHLY: {
    section: 'server',
    defaultText: '(unset)',
    parse: asText,
    text: 'the Stripe price id of the monthly Standard plan',
  },
  STRIPE_PRICE_ANNUAL: {
    section: 'server',
    defaultText: '(unset)',
    parse: asText,
    text: 'the Stripe price id of the annual Standard plan',
  },

  TSA_URLS: {
    section: 'outside',
    defaultText: '(unset: none)',
    parse: commaList,
    text: 'RFC 3161 time-stamp authorities for the ledger files, comma-separated URLs (docs/OPERATIONS.md, "RFC 3161 time-stamps")',
  },
  TSA_MIN: {
    section: 'outside',
    defaultText: '1 (0 without `TSA_URLS`)',
    parse: wholeNumber('good answers', 1),
    text: 'how many good answers a day needs, at most the number of `TSA_URLS`',
  },
  TSA_TIMEOUT_MS: {
    section: 'outside',
    default: '30000',
    parse: MS,
    text: "one request's limit, ms",
  },
  TSA_DAYS_PER_RUN: {
    section: 'outside',
    default: '24',
    parse: wholeNumber('days', 1),
    text: 'at most this many days asked for in one run; the others wait for the next',
  },
  TSA_RUN_SECONDS: {
    section: 'outside',
    default: '600',
    parse: wholeNumber('seconds', 1),
    text: 'no day is started once a run has lasted this long',
  },
  TIMESEAL_WITNESSES: {
    section: 'outside',
    defaultText: '(unset: none)',
    parse: commaList,
    text: 'witnesses that cosign the checkpoints: comma-separated `<vkey> <URL>` (c2sp.org/tlog-witness; docs/OPERATIONS.md, "Witnesses")',
  },
  TIMESEAL_WITNESS_QUORUM: {
    section: 'outside',
    defaultText: 'all of them',
    parse: wholeNumber('witnesses', 1),
    text: 'how many of `TIMESEAL_WITNESSES` must cosign',
  },
  TIMESEAL_WITNESS_TIMEOUT_MS: {
    section: 'outside',
    default: '10000',
    parse: MS,
    text: "one witness request's limit, ms",
  },
  OTS_CALENDARS: {
    section: 'outside',
    defaultText: 'the public pool',
    parse: commaList,
    text: 'OpenTimestamps calendars to stamp with, comma-separated URLs (docs/OPERATIONS.md §2)',
  },
  OTS_TRUSTED_CALENDARS: {
    section: 'outside',
    defaultText: "the reference client's whitelist",
    parse: commaList,
    text: 'calendars upgrades are accepted from besides `OTS_CALENDARS`: URLs, or `https://*.domain` for any subdomain',
  },
  OTS_MIN_CALENDARS: {
    section: 'outside',
    default: '2',
    parse: wholeNumber('calendars', 1),
    text: 'how many calendars must answer a submission, at most the number of `OTS_CALENDARS`',
  },
  OTS_TIMEOUT_MS: {
    section: 'outside',
    default: '10000',
    parse: MS,
    text: "one calendar request's limit, ms",
  },
  ANCHOR_DAYS_PER_RUN: {
    section: 'outside',
    default: '24',
    parse: wholeNumber('days', 1),
    text: 'days stamped (and days asked for upgrades) in one scheduled anchoring or upgrade run; a day that failed is retried after 1 h, 2 h, 4 h, … at most 24 h, newest days first (docs/OPERATIONS.md, "Retries after failures")',
  },
  ANCHOR_RUN_SECONDS: {
    section: 'outside',
    default: '600',
    parse: wholeNumber('seconds', 1),
    text: 'no day is started once such a run has lasted this long',
  },
  BITCOIN_ESPLORA_URL: {
    section: 'outside',
    defaultText: '`https://blockstream.info/api`',
    parse: httpUrlText,
    text: 'the Esplora API block headers come from; not with `BITCOIN_RPC_URL`',
  },
  BITCOIN_RPC_URL: {
    section: 'outside',
    defaultText: '(unset)',
    parse: httpUrlText,
    text: 'a Bitcoin Core JSON-RPC URL to take block headers from instead',
  },
  BITCOIN_NETWORK: {
    section: 'outside',
    default: 'mainnet',
    parse: oneOf(['mainnet', 'regtest']),
    text: 'the chain the headers are of; `regtest` only for tests',
  },
  BITCOIN_TIMEOUT_MS: {
    section: 'outside',
    default: '10000',
    parse: MS,
    text: "one block-header request's limit, ms",
  },

  TIMESEAL_NOW: {
    section: 'tests',
    defaultText: '(system clock)',
    parse: asText,
    text: `an ISO-8601 instant replacing one process's clock, fixed, for tests; to move a running local installation's clock use \`timeseal clock\` (docs/OPERATIONS.md, "The development clock")`,
  },
  TIMESEAL_DEBUG: {
    section: 'tests',
    defaultText: '(unset)',
    parse: asFlag,
    text: "set: a failing command prints the error's stack after its one-line message",
  },
  TIMESEAL_SCHEDULE_HOLDER: {
    section: 'tests',
    defaultText: '(set by `serve`)',
    parse: asText,
    text: "the schedule lease's holder, handed by `timeseal serve` to the build it runs as a child; never set it by hand",
  },
  STRIPE_API_BASE: {
    section: 'tests',
    defaultText: '(unset: Stripe)',
    parse: httpUrl(),
    text: 'points the Stripe SDK at a stand-in (its host, port and protocol); tests only',
  },
  TIMESEAL_TEST_PAUSE_AT: {
    section: 'tests',
    defaultText: '(unset)',
    parse: asText,
    text: 'tests only: stop a publication at a named point (`PHASE:N`), so a test can take over there',
  },
  TIMESEAL_TEST_KILL_AT: {
    section: 'tests',
    defaultText: '(unset)',
    parse: asText,
    text: 'tests only: kill a build at a named point, so a test can crash it there',
  },
} as const satisfies Record<string, Setting<unknown>>;

export type SettingName = keyof typeof SETTINGS;

type Parsed<N extends SettingName> = ReturnType<(typeof SETTINGS)[N]['parse']>;

/** A setting's value: its parser's result, or undefined for an unset variable without a default. */
export type SettingValue<N extends SettingName> = (typeof SETTINGS)[N] extends { default: string }
  ? Parsed<N>
  : Parsed<N> | undefined;

/** The environment a loader reads (process.env, or a test's own object). */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * The variable `name` of `env`, read by its parser: unset or empty (spaces only), its default's text read the
 * same way (or undefined without one). A bad value throws the parser's UsageError, which names the variable.
 */
export function setting<N extends SettingName>(env: Environment, name: N): SettingValue<N> {
  const entry: Setting<unknown> = SETTINGS[name];
  const own = env[name];
  const text = own === undefined || own.trim() === '' ? entry.default : own;
  return (text === undefined ? undefined : entry.parse(text, name)) as SettingValue<N>;
}
