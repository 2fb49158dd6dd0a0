// The storage module's interface (docs/ARCHITECTURE.md): every table and every SQL statement of
// Timeseal sits behind `Store`, with two engines: SQLite (store/sqlite/, better-sqlite3, the embedded default)
// and PostgreSQL (store/postgres/, the pg package, for several ingest nodes). Callers (ingest/, pipeline/,
// cli/) use only this file's types; none of them sees SQL, a connection or an engine's error codes.
//
// Every method is asynchronous, because PostgreSQL's client is. Every method's doc comment states the guarantee
// it keeps on EVERY engine; store/test/contract.ts checks them and each engine runs that suite. Where a
// guarantee says "one transaction", an engine may use any means that gives the same result seen from outside
// (SQLite: a synchronous better-sqlite3 transaction with no await inside; PostgreSQL: a transaction on one
// client, with row locks or an UPSERT).
//
// Times are passed in by the caller (the injectable clock), never read from the engine's clock. Instants are
// `Date`s or ISO-8601 UTC texts with milliseconds (what Date#toISOString writes), UTC days 'YYYY-MM-DD',
// UTC months 'YYYY-MM'.

// ---------------------------------------------------------------------------------------------- errors

/**
 * What kept the storage from working, as each engine classifies its own errors (its errors.ts): 'full' (no
 * space or quota left), 'unreachable' (a database server that cannot be reached, refuses connections or
 * dropped the connection), 'io' (anything else at the storage). Callers word their answers by it alone.
 */
export type StorageKind = 'full' | 'io' | 'unreachable';

/**
 * The storage could not write or read because of the disk (full, quota, I/O error) or the database server
 * being unreachable: the caller answers 503 with Retry-After (ingest/errors.ts), never 500. `kind` says which
 * (StorageKind). `code` is the engine's own code, for the log only (SQLITE_FULL, ENOSPC, 53100, ECONNREFUSED…). `committed` is true when the write may have been committed but
 * is not known to be durable (an fdatasync failed after the commit): the answer must not say "nothing was
 * recorded".
 */
export class StorageUnavailableError extends Error {
  override readonly name = 'StorageUnavailableError';
  readonly kind: StorageKind;
  readonly code: string;
  readonly committed: boolean;
  constructor(
    kind: StorageKind,
    code: string,
    message: string,
    options: { committed?: boolean; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.code = code;
    this.committed = options.committed ?? false;
  }
}

/** A row would repeat a unique value: `field` names which (a user's 'username' or 'email'). */
export class UniqueViolationError extends Error {
  override readonly name = 'UniqueViolationError';
  readonly field: 'username' | 'email';
  constructor(field: 'username' | 'email', message: string) {
    super(message);
    this.field = field;
  }
}

/**
 * A submission of a UTC day that is closed (SubmissionStore.closeThrough): its ledger is being or has been
 * built, so the row would never be published. Nothing was stored; the caller refuses the submission (503,
 * never acknowledged). `date` is the row's day, `closedThrough` the last closed day.
 */
export class DayClosedError extends Error {
  override readonly name = 'DayClosedError';
  readonly date: string;
  constructor(date: string, message = `the day ${date} is closed: its ledger is built from the rows stored before`) {
    super(message);
    this.date = date;
  }
}

/**
 * `enqueueStream` stopped after it had committed the first `stored` of its `total` rows (in the stream's order;
 * SQLite copies a large stream in slices, each its own transaction): those are stored and durable, the rest are
 * not. `cause` is what stopped it (DayClosedError when the day closed meanwhile, StorageUnavailableError…).
 */
export class PartlyStoredError extends Error {
  override readonly name = 'PartlyStoredError';
  readonly stored: number;
  readonly total: number;
  constructor(stored: number, total: number, cause: unknown) {
    super(`${stored} of ${total} rows stored, then: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.stored = stored;
    this.total = total;
  }
}

/** The store was closed; nothing more is accepted. */
export class StoreClosedError extends Error {
  override readonly name = 'StoreClosedError';
  constructor() {
    super('the store is closed');
  }
}

// ----------------------------------------------------------------------------------------- submissions

export type SubmissionSource = 'web' | 'api_beta' | 'import' | 'account' | 'demo' | 'scitt';

export interface Submission {
  /** Lower-case 64-hex. */
  hash: string;
  submittedAt: Date;
  fileName?: string | null;
  source: SubmissionSource;
}

/** One submission row of a day as stored: [hash (64 lower-case hex), submittedAt (ISO text)]. */
export type DayRow = readonly [hash: string, submittedAt: string];

/**
 * Rows of a day packed into two strings instead of a pair each, which spares a reader of millions of rows two
 * strings and an array per row: row i's hash is hashes[64·i, 64·i + 64) and its submittedAt times[24·i, 24·i +
 * 24). An engine packs only rows whose hash is 64 characters and whose time is 24 (what Date#toISOString writes).
 */
export interface PackedDayRows {
  count: number;
  hashes: string;
  times: string;
}

/** A batch of a day's rows, as pairs or packed. `total` is the number of rows the whole stream will yield (the
 * same in every batch), so that a reader can allocate once. */
export interface DayBatch {
  total: number;
  rows: readonly DayRow[] | PackedDayRows;
}

/** The rows of a batch as pairs, whichever form it came in. */
export function dayRows(batch: DayBatch): DayRow[] {
  const { rows } = batch;
  if (!('count' in rows)) return [...rows];
  return Array.from({ length: rows.count }, (_, i): DayRow => [
    rows.hashes.slice(64 * i, 64 * i + 64),
    rows.times.slice(24 * i, 24 * i + 24),
  ]);
}

/** The number of rows in a batch. */
export function dayRowCount(batch: DayBatch): number {
  return 'count' in batch.rows ? batch.rows.count : batch.rows.length;
}

export interface SubmissionStore {
  /**
   * Stores one submission. Resolves only once the row is committed AND durable (survives kill -9 and power
   * loss); rejects when it is not (StorageUnavailableError on a full or failing disk, `committed` set when the
   * commit happened but its sync failed; DayClosedError, nothing stored, when the row's UTC day is closed).
   * Concurrent calls may share one commit (SQLite: group commit, one fdatasync per event-loop turn); a row that
   * fails alone never fails the others of its group.
   */
  write(row: Submission): Promise<void>;
  /** Stores every row in one transaction, all or none; resolves once committed and durable. Rejects with
   * DayClosedError (nothing stored) when any row's day is closed. That transaction may hold other rows too
   * (SQLite: the group commit of `write`, whose turn's rows and batches share one commit and one fdatasync); a
   * batch that fails never fails the others of its group, and none of its rows is stored without the others. */
  enqueue(rows: readonly Submission[]): Promise<void>;
  /**
   * Stores every row that `batches` yields, in their order, with memory bounded by a batch, not by the rows.
   * Nothing is stored, and no reader sees any row, until the source has ended: if iterating `batches` throws,
   * nothing is stored and that error is rethrown as it is. Resolves with the number of rows once committed and
   * durable. Rejects with DayClosedError (nothing stored) when the earliest row's day is closed when the rows
   * start to be stored. SQLite stages the rows in a temporary table on disk, then copies them into the queue in
   * slices of a bounded time, each its own transaction, so that other writers get SQLite's write lock between
   * them (docs/DECISIONS.md, "An import's copy in slices"): a failure or a crash during that copy leaves the
   * rows of the slices committed before it, a prefix in the stream's order (PartlyStoredError says how many).
   * PostgreSQL inserts each batch in one transaction on one connection, all rows or none: it holds up no other
   * insert, but closeThrough waits for it to end.
   */
  enqueueStream(batches: AsyncIterable<readonly Submission[]>): Promise<number>;
  /**
   * Closes every UTC day up to and including `date` to new rows (the ledger build does this before it reads a
   * day). When it resolves, every row of those days that will ever be stored is committed and visible to a
   * read that starts afterwards: inserts of them already under way were waited for, and every later insert of
   * such a day, by any path (write, enqueue, limits.submit), in any process or node, is refused in its own
   * transaction with DayClosedError. This is what makes a 2xx a promise even when a node's clock lags the
   * builder's or an insert stalls across midnight. Never moves back: an earlier `date` changes nothing.
   */
  closeThrough(date: string): Promise<void>;
  /** The last closed day, '' when none is. */
  closedThrough(): Promise<string>;
  /** Distinct dates with submissions strictly after `after` ('' for all) and strictly before `before`, ascending. */
  dates(after: string, before: string): Promise<string[]>;
  /** Number of submissions with a date strictly after `lastPublished` ('' counts all). */
  queueSize(lastPublished: string): Promise<number>;
  /**
   * Where a hash waits: for each date strictly after `lastPublished` ('' for all) on which it was submitted,
   * its earliest submission time there, dates ascending. Reads the hash's own rows only: its cost grows with
   * the log of the table at most, not with the day or with rows that share digits (PostgreSQL: an index of the
   * whole hash; SQLite: an index of the unpublished days in this process's memory, store/sqlite/queue-index.ts,
   * caught up with the rows committed since the last lookup, in slices between which the event loop runs).
   */
  queued(hash: string, lastPublished: string): Promise<Array<{ date: string; submittedAt: Date }>>;
  /**
   * Which of `hashes` (lower-case 64-hex) have a submission on the UTC day `date`, by any path: each with its
   * earliest submission time that day; a hash without a row that day is absent (an empty `hashes` gives an empty
   * map). Reads each hash's own rows by the hash index (as `queued`), never the day's others, seeing the rows
   * committed when it runs.
   */
  submittedOn(date: string, hashes: readonly string[]): Promise<Map<string, Date>>;
  /**
   * The rows of one UTC day, streamed in arrival order, in batches of at most `batchRows` (default 4,096):
   * never the whole day in one result. The stream is one consistent snapshot taken when iteration starts: rows
   * committed after that are not yielded, and no row is yielded twice or skipped, even while writers append to
   * the same day. A day without rows yields no batch.
   */
  readDay(date: string, options?: { batchRows?: number; part?: DayPart }): AsyncIterable<DayBatch>;
  /**
   * The snapshot readDay would take now, cut into at most `parts` parts of arrival order that separate
   * connections may read at once: `readDay(date, { part })` streams one of them (its batches' `total` is the
   * whole day's), and together they yield the day's rows exactly once. `sqliteFile` is the database that another
   * thread can open read-only to read a part there (store/day-part.ts readSplitPart); without it every part
   * is read through this store. Engines that read a day only as one stream leave it out.
   */
  splitDay?(date: string, parts: number): Promise<DaySplit>;
}

/** One part of a day's snapshot: the day's rows with an id in (after, last]; `total` is the whole day's rows. */
export interface DayPart {
  total: number;
  after: number;
  last: number;
}

/** A day's snapshot in parts (SubmissionStore.splitDay): none for a day without rows. */
export interface DaySplit {
  total: number;
  parts: DayPart[];
  sqliteFile?: string;
}

// ------------------------------------------------------------------------------------------------ limits

/** The caps the caller applies (ingest/limits.ts: the free tier and the Standard plan). */
export interface LimitCaps {
  freePerDay: number;
  standardPerMonth: number;
}

export interface LimitedSubmission {
  submission: Omit<Submission, 'source'>;
  /** The client's counting key (ingest/limits.ts clientKey: IPv4 address, or IPv6 /64). */
  clientKey: string;
  /** The logged-in user, if any: a paying one counts against the monthly quota instead. */
  userId?: string;
  caps: LimitCaps;
  /**
   * The submission's RFC 3161 receipt (a DER TimeStampResp, non-empty, genTime = submission.submittedAt),
   * signed before the call: stored with the submission, in the same transaction (ReceiptStore). Only the
   * site's submissions carry one (docs/DECISIONS.md).
   */
  receipt?: Uint8Array;
}

export type LimitOutcome =
  { allowed: true; tier: 'free' | 'standard'; count: number } | { allowed: false; tier: 'free' | 'standard' };

/** countWindow's `amount` as every engine checks it: a positive integer, 1 when not given. */
export function windowAmount(amount: number | undefined): number {
  const n = amount ?? 1;
  if (!Number.isSafeInteger(n) || n < 1)
    throw new RangeError(`countWindow: the amount must be a positive integer, not ${String(amount)}`);
  return n;
}

export interface LimitStore {
  /**
   * The site's submission under the limits, as ONE transaction: whether the user pays (subscription status
   * active or trialing), the check, the count and the rows. A paying user: accepted only while the user has
   * < caps.standardPerMonth in the submission's UTC month; the submission is stored with source 'account' and
   * in the user's history. Anyone else: accepted only while `clientKey` has < caps.freePerDay on the UTC day;
   * stored with source 'web'. Exact under concurrency, across processes and nodes: N concurrent calls never
   * admit more than the cap. A refused call stores and counts nothing; a failed one (rolled back) counts
   * nothing either (DayClosedError when the submission's day is closed, as for submissions.write). The
   * request's `receipt`, when given, is stored in the same transaction: kept exactly when the submission is
   * (an empty one is refused: the call rejects and nothing is stored or counted). Resolves once the rows are
   * committed and durable. `count` is the count after this one.
   */
  submit(request: LimitedSubmission): Promise<LimitOutcome>;
  /** The key's free-tier count on a UTC day (0 when none). */
  dailyUsed(clientKey: string, date: string): Promise<number>;
  /** The user's Standard count in a UTC month (0 when none). */
  monthlyUsed(userId: string, month: string): Promise<number>;
  /**
   * A fixed-window cap (the beta API's BETA_API_RATE): counts `amount` (default 1; a positive integer) for
   * (clientKey, window) unless the count would then pass `max`, and returns the count after it, or undefined
   * when refused (nothing counted; always when `amount` > `max`). Exact under concurrency across processes.
   * When the call creates the window's count (no earlier call counted in it), the key's windows whose names
   * sort in [prune.from, prune.before) are deleted. Window names never collide with the free tier's dates (the
   * caller prefixes them). A non-positive or fractional `amount` rejects with RangeError, nothing counted.
   */
  countWindow(
    clientKey: string,
    window: string,
    max: number,
    prune: { from: string; before: string },
    amount?: number,
  ): Promise<number | undefined>;
}

// ---------------------------------------------------------------------------------------------- receipts

/** The most receipts `receipts.forDay` returns: the earliest ones of the day. */
export const RECEIPTS_PER_DAY = 5;

/** The UTC day after `date` ('YYYY-MM-DD'): the end, excluded, of the day's ISO times (every engine's range). */
export const dayAfter = (date: string): string =>
  new Date(Date.parse(`${date}T00:00:00.000Z`) + 86_400_000).toISOString().slice(0, 10);

export interface ReceiptStore {
  /**
   * The stored receipts (DER TimeStampResp, byte for byte as given to limits.submit) of `hash` (lower-case
   * 64-hex) whose submission lies on the UTC day `date`: earliest submission first (equal times in the order
   * stored), at most RECEIPTS_PER_DAY; [] when none. Receipts are stored only with the site's submissions
   * (limits.submit), never by submissions.write or enqueue.
   */
  forDay(hash: string, date: string): Promise<Uint8Array[]>;
}

// -------------------------------------------------------------------------------------------- statements

/** A SCITT Signed Statement to register (POST /entries; core/signed-statement.ts). */
export interface StatementRegistration {
  /** Lower-case 64-hex: SHA-256 of `bytes`, the statement's log entry (the submission row's hash). */
  entry: string;
  /** The statement as the log holds it (core/signed-statement.ts ledgerBytes), non-empty. */
  bytes: Uint8Array;
  registeredAt: Date;
}

export interface StatementStore {
  /**
   * Registers a statement: its bytes and its submission row (hash = `entry`, source 'scitt', submittedAt =
   * registeredAt) in ONE transaction, both or neither. Resolves once committed and durable, as
   * submissions.write (StorageUnavailableError on a full or failing disk; DayClosedError, nothing stored, when
   * the UTC day of `registeredAt` is closed). Concurrent calls may share one commit (SQLite: with the
   * submissions.write of the same turn; PostgreSQL: one statement for the registrations that arrive together); one
   * that fails alone never fails the others of its group. The same statement registered again is one more row of
   * each.
   */
  register(statement: StatementRegistration): Promise<void>;
  /** The bytes of a registered statement (any day), or undefined when `entry` was never registered. */
  get(entry: string): Promise<Uint8Array | undefined>;
  /**
   * The statements registered on the UTC day `date`, one per entry (its earliest registration that day), in
   * the byte order of their entries (the order of the day's leaves); [] when none.
   */
  forDay(date: string): Promise<Array<{ entry: string; bytes: Uint8Array; registeredAt: Date }>>;
}

// ---------------------------------------------------------------------------------------------- throttle

/** One counted attempt's rows, to withdraw it later. Opaque to callers. */
export type ThrottleMark = readonly number[];

export interface ThrottleKey {
  scope: string;
  key: string;
}

/** Blocks when (scope, key) has >= max attempts in the window ending now, unless `unlessSeen` has at least one
 * attempt in its own window (a known owner's address). */
export interface ThrottleGuard extends ThrottleKey {
  max: number;
  windowMs: number;
  unlessSeen?: ThrottleKey & { windowMs: number };
}

/** An attempt to record: `windowMs` is its scope's window; rows of the scope older than the window may be
 * deleted (at most about once a minute per scope). */
export interface ThrottleRecord extends ThrottleKey {
  windowMs: number;
}

export interface ThrottleStore {
  /** Attempts of (scope, key) with a time in (nowMs - windowMs, nowMs]. */
  count(k: ThrottleKey, windowMs: number, nowMs: number): Promise<number>;
  /**
   * Checks every guard and, if none blocks, records one attempt at `nowMs` for each of `record`: ONE
   * transaction, so concurrent attempts (in any process) can never all pass a check before the first is
   * recorded; at most `max` attempts are ever counted in a window. Undefined (nothing recorded) when blocked.
   */
  attempt(
    guards: readonly ThrottleGuard[],
    record: readonly ThrottleRecord[],
    nowMs: number,
  ): Promise<ThrottleMark | undefined>;
  /** Records attempts whatever the counts; one transaction. */
  record(keys: readonly ThrottleRecord[], nowMs: number): Promise<ThrottleMark>;
  /** In ONE transaction: withdraws the marked attempts, forgets every attempt of the `clear` keys, then records
   * `record` at `nowMs`. */
  change(change: {
    withdraw?: readonly ThrottleMark[];
    clear?: readonly ThrottleKey[];
    record?: readonly ThrottleRecord[];
    nowMs: number;
  }): Promise<void>;
}

// ----------------------------------------------------------------------------------- users and sessions

export interface User {
  id: string;
  username: string;
  email: string;
  emailVerified: boolean;
}

export interface NewUser {
  id: string;
  username: string;
  email: string;
  passwordHash: string;
  newsletter: boolean;
  createdAt: Date;
  /** SHA-256 of the e-mail verification token, and its expiry. */
  verification: { tokenHash: string; expires: Date };
}

export interface UserStore {
  /** Creates the user with its verification token in one transaction. Usernames are unique without regard to
   * case, e-mails exactly: a repeat rejects with UniqueViolationError and stores nothing. */
  create(user: NewUser): Promise<void>;
  get(id: string): Promise<User | undefined>;
  /** The user whose username (any case) or e-mail (as lower-cased) is `name`, with the password hash. */
  forLogin(name: string): Promise<{ id: string; passwordHash: string } | undefined>;
  byEmail(email: string): Promise<{ id: string; username: string } | undefined>;
  /** Replaces the user's verification token (its SHA-256) and expiry; the token it replaces is kept as replaced. */
  setVerification(userId: string, tokenHash: string, expires: Date): Promise<void>;
  /** Marks the e-mail verified if a user holds this token unexpired at `now`, and clears the token and the
   * replaced one: single use under concurrency (exactly one of concurrent calls gets true). */
  verifyEmail(tokenHash: string, now: Date): Promise<boolean>;
  /** Whether this is the verification token (its SHA-256) that the last resend replaced, for a user whose e-mail is
   * not verified yet. */
  replacedVerification(tokenHash: string): Promise<boolean>;
  /** Replaces the user's password reset token (its SHA-256) and expiry. */
  setReset(userId: string, tokenHash: string, expires: Date): Promise<void>;
  /** The user holding this reset token unexpired at `now`. */
  forReset(tokenHash: string, now: Date): Promise<string | undefined>;
  /**
   * Sets the password (and marks the e-mail verified) only if the user still holds `tokenHash`, clears the
   * token and deletes every session of the user: one transaction, single use under concurrency (exactly one of
   * concurrent calls gets true).
   */
  resetPassword(userId: string, tokenHash: string, passwordHash: string): Promise<boolean>;
}

export interface SessionStore {
  /** Stores a session by the SHA-256 of its id. */
  create(idHash: string, userId: string, createdAt: Date, expiresAt: Date): Promise<void>;
  /** The session's user while it has not expired at `now` (an expired session is never honoured). */
  user(idHash: string, now: Date): Promise<User | undefined>;
  destroy(idHash: string): Promise<void>;
  destroyUser(userId: string): Promise<void>;
  /** Deletes sessions expired at `now`. */
  prune(now: Date): Promise<void>;
}

// --------------------------------------------------------------------------------- subscriptions, Stripe

export const PAYING_STATUSES = ['active', 'trialing'] as const;

/** Whether a subscription status is one of PAYING_STATUSES (every engine's quota check). */
export const isPayingStatus = (status: string | undefined): boolean =>
  status !== undefined && (PAYING_STATUSES as readonly string[]).includes(status);

export interface Subscription {
  status: string;
  priceId: string | null;
  periodEnd: string | null;
  cancelAtPeriodEnd: boolean;
  customerId: string | null;
}

export interface SubscriptionStore {
  get(userId: string): Promise<Subscription | undefined>;
  /** Whether the user's subscription status is active or trialing. */
  isPaying(userId: string): Promise<boolean>;
  /** Records the Stripe customer of a user (an 'inactive' row if none) unless one is already recorded, and
   * returns the recorded one: concurrent calls all get the same customer id. */
  setCustomer(userId: string, customerId: string): Promise<string>;
}

/** A subscription's state as Stripe reports it. */
export interface SubscriptionFields {
  customerId: string | null;
  subscriptionId: string;
  priceId: string | null;
  status: string;
  periodStart: string | null;
  periodEnd: string | null;
  cancelAtPeriodEnd: boolean;
}

/** What one Stripe event asks of the subscriptions (ingest/accounts/stripe.ts reads the event). */
export type StripeChange =
  /** checkout.session.completed: `fields` fetched from Stripe now ("fresh": applied whatever its age); null when
   * the checkout was not a subscription's. */
  | { kind: 'checkout'; userId: string | null; fields: SubscriptionFields | null }
  /** customer.subscription.*: the user is the one of the customer, else `userIdHint`. */
  | { kind: 'subscription'; userIdHint: string | null; fields: SubscriptionFields }
  /** invoice.payment_failed: a paying subscription of the customer becomes past_due. */
  | { kind: 'payment-failed'; customerId: string | null }
  /** Anything else: recorded, nothing changed. */
  | { kind: 'none'; outcome: string };

export interface StripeEventStore {
  /** Whether the event id was applied already. */
  seen(eventId: string): Promise<boolean>;
  /**
   * Records the event id and applies `change` in ONE transaction: each event id is applied at most once, even
   * when delivered concurrently to several processes (the others get undefined: a duplicate). Returns what was
   * done, for the log. Ordering rules (Stripe delivers out of order): a subscription row keeps the creation time
   * of the newest event applied; an older event is ignored (except a 'checkout', fresh); a canceled subscription
   * stays canceled; a late event about another subscription never turns a paying row into a non-paying one.
   */
  apply(
    event: { id: string; type: string; created: number; receivedAt: Date },
    change: StripeChange,
  ): Promise<string | undefined>;
}

// ------------------------------------------------------------------------------- forms and history

export interface FormStore {
  /** Adds to the professional waitlist; false (nothing changed) when the e-mail is already on it. Unique under
   * concurrency. */
  joinWaitlist(entry: { name: string; email: string; message: string; createdAt: Date }): Promise<boolean>;
  /** Stores a contact message; returns its id. */
  addContact(message: {
    name: string;
    email: string;
    subject: string;
    message: string;
    createdAt: Date;
  }): Promise<number>;
  /** Where the message's e-mail went (smtp:<id>, outbox:<file>, failed). */
  setContactDelivery(id: number, delivery: string): Promise<void>;
}

export interface HistoryEntry {
  id: number;
  fileName: string | null;
  submittedAt: string;
  hash: string;
  ledgerDate: string;
}

export interface HistoryStore {
  /** The user's newest 1,000 history entries, newest first (ties: higher id first). */
  list(userId: string): Promise<HistoryEntry[]>;
  /** One entry, only if it is the user's. */
  get(id: number, userId: string): Promise<HistoryEntry | undefined>;
}

// ------------------------------------------------------------------------------------------------ leases

export interface LeaseStore {
  /**
   * Takes or renews the lease `name` for `holder` until `nowMs + ttlMs`, in ONE atomic statement: succeeds
   * (true) when the lease is free, expired at `nowMs` (its expiry strictly before it) or already held by
   * `holder` (a renewal); otherwise false and nothing changes. Guarantee, on every engine and across processes
   * and nodes: at any instant of the callers' clocks at most one holder has an unexpired lease (callers' clocks
   * must agree to well within the ttl); a holder that dies stops renewing, and its lease can be taken by another
   * caller once `ttlMs` has passed since its last renewal. Times are the caller's (ms since the epoch).
   */
  acquire(name: string, holder: string, ttlMs: number, nowMs: number): Promise<boolean>;
  /** Gives the lease up if `holder` holds it (another holder's lease is left alone): free at once for others. */
  release(name: string, holder: string): Promise<void>;
}

// -------------------------------------------------------------------------------------------- the store

export interface Store {
  readonly engine: 'sqlite' | 'postgres';
  readonly submissions: SubmissionStore;
  readonly limits: LimitStore;
  /** The RFC 3161 receipts stored with the site's submissions (limits.submit). */
  readonly receipts: ReceiptStore;
  /** SCITT Signed Statements registered with their submission rows (POST /entries). */
  readonly statements: StatementStore;
  readonly throttle: ThrottleStore;
  readonly users: UserStore;
  readonly sessions: SessionStore;
  readonly subscriptions: SubscriptionStore;
  readonly stripeEvents: StripeEventStore;
  readonly forms: FormStore;
  readonly history: HistoryStore;
  /** Leases with expiry (the schedule's 'schedule' lease: one `timeseal serve` node runs it at a time). */
  readonly lease: LeaseStore;
  /**
   * The database server's clock (ms since the epoch), for the nodes' clock check (ingest/clock-check.ts);
   * undefined when the database is this process's own file (SQLite: the machine's clock is the node's).
   */
  databaseTime(): Promise<number | undefined>;
  /** Commits what is pending (pending writes resolve or reject), then closes; later calls reject with
   * StoreClosedError. */
  close(): Promise<void>;
}
