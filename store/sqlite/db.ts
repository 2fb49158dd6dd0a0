// The SQLite database shared by the ingest service and the pipeline (better-sqlite3, WAL). Migrations are
// numbered and applied in order inside a transaction; PRAGMA user_version records the last one applied, so
// later issues only append to MIGRATIONS. Tables hold the service's entities (submissions, users, subscriptions, rate limits, forms, receipts), plus the submission queue.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { TimesealError } from '../../core/errors.ts';

export type DB = Database.Database;

export const MIGRATIONS: string[] = [
  // 1: the submission queue and the spec's entities.
  `
  CREATE TABLE submissions (
    id INTEGER PRIMARY KEY,
    hash TEXT NOT NULL CHECK (length(hash) = 64 AND hash NOT GLOB '*[^0-9a-f]*'),
    submitted_at TEXT NOT NULL,
    ledger_date TEXT NOT NULL,
    file_name TEXT,
    source TEXT NOT NULL
  );
  CREATE INDEX submissions_by_day ON submissions (ledger_date, hash, submitted_at);

  CREATE TABLE users (
    id TEXT PRIMARY KEY,
    username TEXT NOT NULL UNIQUE,
    email TEXT NOT NULL UNIQUE,
    password TEXT NOT NULL,
    email_verified INTEGER NOT NULL DEFAULT 0,
    verification_token TEXT,
    password_reset_token TEXT,
    password_reset_expires TEXT,
    newsletter_subscribed INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
  );

  CREATE TABLE subscriptions (
    id INTEGER PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id),
    stripe_customer_id TEXT,
    stripe_subscription_id TEXT,
    stripe_price_id TEXT,
    status TEXT NOT NULL DEFAULT 'inactive',
    current_period_start TEXT,
    current_period_end TEXT,
    cancel_at_period_end INTEGER NOT NULL DEFAULT 0
  );

  CREATE TABLE quota_usage (
    id INTEGER PRIMARY KEY,
    user_id TEXT REFERENCES users (id),
    ip_address TEXT,
    month TEXT NOT NULL,
    count INTEGER NOT NULL DEFAULT 0,
    last_reset TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
  );

  CREATE TABLE ip_rate_limit (
    id INTEGER PRIMARY KEY,
    ip_address TEXT NOT NULL,
    date TEXT NOT NULL,
    count INTEGER NOT NULL DEFAULT 0,
    UNIQUE (ip_address, date)
  );

  CREATE TABLE timestamps (
    id INTEGER PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id),
    hash TEXT NOT NULL,
    submitted_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    ledger_date TEXT,
    file_name TEXT
  );

  CREATE TABLE professional_waitlist (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL CHECK (length(name) <= 255),
    email TEXT NOT NULL UNIQUE,
    message TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
  );
  `,
  // 2 (ingest): messages of the contact form (POST /api/contact), kept whether or not the e-mail went out;
  // `delivery` says where it went (smtp:<message id>, outbox:<file>, failed).
  `
  CREATE TABLE contact_messages (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL CHECK (length(name) BETWEEN 2 AND 255),
    email TEXT NOT NULL CHECK (length(email) <= 254),
    subject TEXT NOT NULL CHECK (subject IN ('general', 'enterprise', 'support', 'billing')),
    message TEXT NOT NULL CHECK (length(message) BETWEEN 10 AND 5000),
    created_at TEXT NOT NULL,
    delivery TEXT
  );
  `,
  // 3 (accounts, ingest/accounts/): server-side sessions (SHA-256 of the cookie's id), processed Stripe events (webhook
  // idempotency), an expiry for verification tokens, one subscription row per user, one quota row per user and
  // month (the atomic monthly count's UPSERT target), case-insensitive usernames, and history by user.
  `
  CREATE TABLE sessions (
    id_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
  );
  CREATE INDEX sessions_by_user ON sessions (user_id);

  CREATE TABLE stripe_events (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    received_at TEXT NOT NULL
  );

  ALTER TABLE users ADD COLUMN verification_expires TEXT;
  CREATE UNIQUE INDEX users_username_nocase ON users (lower(username));
  CREATE INDEX users_verification_token ON users (verification_token);
  CREATE INDEX users_reset_token ON users (password_reset_token);
  CREATE UNIQUE INDEX subscriptions_by_user ON subscriptions (user_id);
  CREATE INDEX subscriptions_by_customer ON subscriptions (stripe_customer_id);
  CREATE UNIQUE INDEX quota_usage_by_user_month ON quota_usage (user_id, month);
  CREATE INDEX timestamps_by_user ON timestamps (user_id, submitted_at);
  `,
  // Submissions are indexed by date only: an insert then appends to the right edge of the index instead of
  // writing a random page of a (date, hash) index, about six times cheaper on a day that already holds
  // 500,000 rows (a build sorts the day in memory, store/sort-keys.ts).
  `
  DROP INDEX submissions_by_day;
  CREATE INDEX submissions_by_date ON submissions (ledger_date);
  `,
  // Stripe does not deliver webhook events in order: the creation time (Unix seconds) of the newest event
  // applied to a subscription row, so that an older event arriving late cannot undo a newer one.
  `
  ALTER TABLE subscriptions ADD COLUMN stripe_event_created INTEGER;
  `,
  // Attempt throttling (ingest/throttle.ts: login, reset, account e-mails, sign-ups, contact messages) in the
  // database instead of one process's memory: one row per counted attempt, pruned once it leaves its window.
  `
  CREATE TABLE auth_throttle (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    at_ms INTEGER NOT NULL
  );
  CREATE INDEX auth_throttle_by_key ON auth_throttle (scope, key, at_ms);
  CREATE INDEX auth_throttle_by_time ON auth_throttle (scope, at_ms);
  `,
  // 7: leases with expiry (Store.lease): the schedule's 'schedule' lease, so that one of several
  // `timeseal serve` nodes runs the daily schedule at a time (harmless on SQLite's single host).
  // expires_at: ms since the epoch, the caller's clock.
  `
  CREATE TABLE schedule_lease (
    name TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  );
  `,
  // 8: closed days (Store.submissions.closeThrough). The ledger build records the last closed day before it
  // reads a day; every insert of a submission on or before it is refused inside its own transaction by the
  // trigger, so no row can commit after the build has read its day. SQLite runs one write transaction at a
  // time (across processes), so an insert either committed before the close, and the build reads it, or
  // starts after it and is refused.
  `
  CREATE TABLE ledger_close (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    through TEXT NOT NULL
  );
  CREATE TRIGGER submissions_day_open BEFORE INSERT ON submissions
  WHEN NEW.ledger_date <= (SELECT through FROM ledger_close WHERE id = 1)
  BEGIN
    SELECT RAISE(ABORT, 'timeseal: day closed');
  END;
  `,
  // 9: the RFC 3161 receipts of the site's submissions (Store.receipts), stored by limits.submit in the
  // transaction of their submission row (docs/DECISIONS.md: the other routes' tokens are not kept). A table of
  // its own, with no trigger or index on submissions: submissions.write's inserts are unchanged.
  `
  CREATE TABLE receipts (
    id INTEGER PRIMARY KEY,
    hash TEXT NOT NULL CHECK (length(hash) = 64 AND hash NOT GLOB '*[^0-9a-f]*'),
    submitted_at TEXT NOT NULL,
    der BLOB NOT NULL CHECK (typeof(der) = 'blob' AND length(der) > 0)
  );
  CREATE INDEX receipts_by_hash ON receipts (hash, submitted_at);
  `,
  // 10: submissions found by hash (Store.submissions.queued, submittedOn): the status lookup and a batch's
  // "already" check read the few rows of their hashes instead of every row of the day. The index holds the
  // hash's first 16 hexadecimal digits (64 bits; the queries compare the whole hash too), a third of the whole
  // hash's size, so it stays small enough for the page cache and an insert dirties one more small page
  // (docs/BENCHMARKS.md, "Lookups on a day of a million rows": its cost on the insert path). Building it on an
  // existing database reads every row once, at the first start after the upgrade.
  `
  CREATE INDEX submissions_by_hash_prefix ON submissions (substr(hash, 1, 16));
  `,
  // 11: SCITT Signed Statements (Store.statements, POST /entries): the statement as the log holds it, stored by
  // statements.register in the transaction of its submission row (hash = entry). A table of its own, with no
  // trigger or index on submissions: the other routes' inserts are unchanged.
  `
  CREATE TABLE statements (
    id INTEGER PRIMARY KEY,
    entry TEXT NOT NULL CHECK (length(entry) = 64 AND entry NOT GLOB '*[^0-9a-f]*'),
    registered_at TEXT NOT NULL,
    ledger_date TEXT NOT NULL,
    statement BLOB NOT NULL CHECK (typeof(statement) = 'blob' AND length(statement) > 0)
  );
  CREATE INDEX statements_by_entry ON statements (entry);
  CREATE INDEX statements_by_date ON statements (ledger_date, entry);
  `,
  // 12: the verification token a resend replaced (its SHA-256), kept until the address is verified, so that the
  // older e-mail's link says a newer one replaced it, in any browser (UserStore.replacedVerification).
  `
  ALTER TABLE users ADD COLUMN replaced_verification_token TEXT;
  CREATE INDEX users_replaced_verification_token ON users (replaced_verification_token);
  `,
  // 13: submissions found by the whole hash, with the day and the time beside it: migration 10's index of the
  // first 16 digits let anyone make a lookup cost the whole day again, since a submitter chooses its hashes (200,000
  // rows sharing 16 digits took a status lookup of one more such hash 204 ms, against 0.1 ms for another hash).
  // With (hash, ledger_date, submitted_at) a day's earliest time of a hash is the first entry of its range,
  // however many rows share its digits or repeat it. Like the prefix it costs each insert a leaf of its own, in
  // a larger index (docs/BENCHMARKS.md, "What a hash index costs each SQLite commit": 36.7 pages for 19 rows
  // against 28.6).
  `
  DROP INDEX submissions_by_hash_prefix;
  CREATE INDEX submissions_by_hash ON submissions (hash, ledger_date, submitted_at);
  `,
  // 14: no index of the hash on submissions: a commit of random hashes wrote a random leaf of it per row (36.7
  // WAL pages for 19 rows against 5 without). The lookups use an index of the unpublished days' hashes in the
  // serving process's memory instead, caught up from the table by id (store/sqlite/queue-index.ts).
  `
  DROP INDEX submissions_by_hash;
  `,
];

/**
 * Opens the database file, creating it when it does not exist, and applies pending migrations. A file that
 * exists but is empty is refused: SQLite would take it as a new database and the service would
 * start with none of its accounts, submissions or quotas, which is what a truncated or lost file looks like.
 * A file that is not a SQLite database is refused with the same kind of message.
 */
export function openDatabase(file: string): DB {
  if (file !== ':memory:') {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const size = fileSize(file);
    if (size === 0) {
      throw new TimesealError(
        'format',
        `the database file ${file} is empty (0 bytes): it is not a Timeseal database. Restore it from a backup, or, for a new installation, delete the empty file and start again.`,
      );
    }
  }
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
  } catch (err) {
    db.close();
    throw new TimesealError(
      'format',
      `the database file ${file} cannot be opened: ${(err as Error).message}. Restore it from a backup.`,
    );
  }
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  return db;
}

function fileSize(file: string): number | undefined {
  try {
    return fs.statSync(file).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * SQLite's `PRAGMA quick_check` (every page and record well-formed; indexes not compared with their tables):
 * `timeseal serve` runs it before it accepts anything, so a damaged file is found at start, not by the request
 * that reaches the damaged page. It reads the whole file (docs/OPERATIONS.md gives its time per size).
 */
export function checkDatabase(db: DB, file: string): void {
  let rows: Array<{ quick_check: string }>;
  try {
    rows = db.pragma('quick_check(3)') as Array<{ quick_check: string }>;
  } catch (err) {
    throw new TimesealError(
      'format',
      `the database file ${file} is damaged: ${(err as Error).message}. Restore it from a backup.`,
    );
  }
  const problems = rows
    .map((r) => r.quick_check)
    .filter((m) => m !== 'ok')
    .map((m) => m.replace(/\s*\n\s*/g, ' '));
  if (problems.length > 0) {
    throw new TimesealError(
      'format',
      `the database file ${file} is damaged (PRAGMA quick_check: ${problems.join('; ')}). Restore it from a backup.`,
    );
  }
}

export function migrate(db: DB): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`database schema version ${current} is newer than this program (${MIGRATIONS.length})`);
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
