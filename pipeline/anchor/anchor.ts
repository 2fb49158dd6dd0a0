// Anchoring the archive's days to Bitcoin through OpenTimestamps calendars (docs/FORMAT.md §7, docs/OPERATIONS.md §2–§3):
// - stamp: submit each day's commitment C = SHA-256(R || F) to every configured calendar in parallel; the
//   stamp counts when at least m answered, and every answer is kept. The day's proof `D.json.ots` (starting
//   at F) is then written. Fewer than m answers: nothing is written, the day stays "not stamped" with the
//   reason in block_info.json, and the next run (00:02 or any hourly upgrade) tries again.
// - upgrade: for each day not yet confirmed, ask every trusted calendar named by a pending attestation for its
//   upgrade (404 = still pending, its text kept for the status; 200 = merged into the day's proof), then check
//   every Bitcoin attestation against a verified block header. A day is confirmed once one verifies; its
//   confirmations (tip − height + 1) are refreshed every run, and its header re-checked while fewer than 6.
// The day's `.ots` stays mutable (replaced atomically) until the day is confirmed; then it is no longer
// touched. Network calls happen under the anchoring lock only; the writes take the archive lock as well and
// merge into the file as it is then, so a concurrent writer never loses an answer.
// By hand, every day is tried at once. The schedule's runs (AnchorContext.schedule) retry with a per-day backoff
// instead, newest days first, at most ANCHOR_DAYS_PER_RUN days stamped and as many asked for upgrades, within
// ANCHOR_RUN_SECONDS, and stop after two days in a row failed (pipeline/anchor/backoff.ts); the records are
// `<database folder>/anchor-retry.json`.
import path from 'node:path';
import { ledgerOtsPath, type DayRecord } from '../../core/archive.ts';
import { fromHex, toHex } from '../../core/encoding.ts';
import { FormatError, MismatchError } from '../../core/errors.ts';
import { calendarTreeOf, dayCommitment, ledgerTimestamp } from '../../core/ots-path.ts';
import {
  mergeTimestamps,
  newTimestamp,
  parseDetached,
  serializeDetached,
  walkAttestations,
  type DetachedTimestampFile,
  type Timestamp,
} from '../../core/ots.ts';
import { readState } from '../archive-state.ts';
import type { Clock } from '../../runtime/clock.ts';
import { UsageError, type Config } from '../../runtime/config.ts';
import { readOptional, writeMutable } from '../files.ts';
import { withLock, withLockAsync } from '../lock.ts';
import { retryRun, RetryBook, stateDir, STOP_AFTER_FAILURES, type RunBounds, type ScheduledRun } from './backoff.ts';
import { fetchUpgrade, submitDigest } from './calendar.ts';
import { isTrustedCalendar, loadAnchorConfig, type AnchorConfig } from './config.ts';
import { headerSourceFor, verifyAttestation, type HeaderSource } from './headers.ts';
import { readBlockInfo, writeAnchorStatus, type LedgerBlock, type PendingInfo } from './status.ts';

/** Below this many confirmations a confirmed day's block header is re-checked every run (reorg guard). */
export const RECHECK_BELOW_CONFIRMATIONS = 6;

export interface AnchorContext {
  config: Config;
  anchor: AnchorConfig;
  clock: Clock;
  /** Defaults to the configured source (BITCOIN_ESPLORA_URL / BITCOIN_RPC_URL). */
  headers?: HeaderSource;
  progress?: (message: string) => void;
  /** Set by the schedule: retry with the backoff and run bounds of pipeline/anchor/backoff.ts (absent: by hand). */
  schedule?: ScheduledRun;
}

export interface StampResult {
  date: string;
  commitment: string;
  outcome: 'stamped' | 'already-stamped' | 'failed';
  answered: string[];
  failures: Array<{ calendar: string; error: string }>;
  reason?: string;
  /** A failed stamp of a scheduled run: when it is tried again (ISO time). */
  next_attempt?: string;
}

export type DayState = 'confirmed' | PendingInfo['state'];

export interface DayReport {
  date: string;
  state: DayState;
  block_height?: number;
  confirmations?: number;
  reason?: string;
  /** A day not stamped because its stamp failed (scheduled runs): when the stamp is tried again (ISO time). */
  next_attempt?: string;
  upgraded_from: string[];
}

export interface UpgradeReport {
  stamps: StampResult[];
  days: DayReport[];
  tip_height: number | null;
}

const archiveLockOf = (config: Config) => path.join(path.dirname(path.resolve(config.db)), 'archive.lock');
const anchorLockOf = (config: Config) => path.join(path.dirname(path.resolve(config.db)), 'anchor.lock');
/** The schedule's retry records of stamps (`stamp YYYY-MM-DD`) and upgrade requests (`upgrade YYYY-MM-DD`). */
export const ANCHOR_RETRY_FILE = 'anchor-retry.json';
const retryBookOf = (ctx: AnchorContext): RetryBook | undefined =>
  ctx.schedule ? new RetryBook(path.join(stateDir(ctx.config), ANCHOR_RETRY_FILE)) : undefined;
const boundsOf = (anchor: AnchorConfig): RunBounds => ({
  days: anchor.daysPerRun,
  runMs: anchor.runMs,
  stopAfterFailures: STOP_AFTER_FAILURES,
});

function readLedgerProof(archive: string, day: DayRecord): DetachedTimestampFile | undefined {
  const raw = readOptional(archive, ledgerOtsPath(day.date));
  if (raw === undefined) return undefined;
  const proof = parseDetached(raw);
  calendarTreeOf(proof, fromHex(day.root), fromHex(day.sha256)); // it must be this day's proof
  return proof;
}

/** `timeseal anchor [--date D]`: stamps day D, or every published day without a calendar proof. */
export async function anchorDays(ctx: AnchorContext, options: { date?: string } = {}): Promise<StampResult[]> {
  return withLockAsync(
    anchorLockOf(ctx.config),
    async () => {
      const { days } = readState(ctx.config.archive, ctx.config.logOrigin);
      let targets: DayRecord[];
      if (options.date !== undefined) {
        const day = days.find((d) => d.date === options.date);
        if (!day)
          throw new UsageError(`${options.date} is not a published day (build it first: timeseal ledger build)`);
        targets = [day];
      } else {
        targets = days.filter((d) => readOptional(ctx.config.archive, ledgerOtsPath(d.date)) === undefined);
      }
      const book = options.date === undefined ? retryBookOf(ctx) : undefined;
      const { results, pending } = await stampDays(ctx, targets, book);
      withLock(archiveLockOf(ctx.config), () => {
        writeStamps(ctx, results);
        writeAnchorStatus(ctx.config.archive, readState(ctx.config.archive, ctx.config.logOrigin).days, ctx.clock(), {
          pending,
        });
      });
      book?.save();
      return results.map((r) => r.result);
    },
    'anchoring run',
  );
}

interface StampOutcome {
  result: StampResult;
  day: DayRecord;
  proof?: DetachedTimestampFile;
}

/**
 * Stamps `targets` (days without a calendar proof): each of them, or with `book` (the schedule's runs) the due
 * ones newest first within the run's bounds; a failed day's reason then says when it is tried again.
 */
async function stampDays(
  ctx: AnchorContext,
  targets: DayRecord[],
  book?: RetryBook,
): Promise<{ results: StampOutcome[]; pending: Record<string, PendingInfo> }> {
  const results: StampOutcome[] = [];
  const pending: Record<string, PendingInfo> = {};
  const now = ctx.clock().toISOString();
  const stampOne = async (day: DayRecord): Promise<StampResult> => {
    const root = fromHex(day.root);
    const ledgerSha256 = fromHex(day.sha256);
    const c = dayCommitment(root, ledgerSha256);
    const base = { date: day.date, commitment: toHex(c) };
    if (readOptional(ctx.config.archive, ledgerOtsPath(day.date)) !== undefined) {
      const result: StampResult = { ...base, outcome: 'already-stamped', answered: [], failures: [] };
      results.push({ day, result });
      return result;
    }
    ctx.progress?.(`${day.date}: submitting ${toHex(c)} to ${ctx.anchor.calendars.length} calendars`);
    const settled = await Promise.allSettled(
      ctx.anchor.calendars.map((cal) => submitDigest(cal, c, ctx.anchor.calendarTimeoutMs)),
    );
    const answered: string[] = [];
    const failures: StampResult['failures'] = [];
    const tree = newTimestamp(c);
    settled.forEach((s, i) => {
      const calendar = ctx.anchor.calendars[i]!;
      if (s.status === 'fulfilled') {
        mergeTimestamps(tree, s.value);
        answered.push(calendar);
      } else {
        failures.push({ calendar, error: (s.reason as Error).message });
      }
    });
    if (answered.length >= ctx.anchor.minCalendars) {
      const proof = ledgerTimestamp(root, ledgerSha256, tree);
      const note = failures.length ? `; no answer from ${failures.map((f) => f.error).join('; ')}` : '';
      pending[day.date] = {
        state: 'pending',
        reason: `submitted to ${answered.length} calendar${answered.length === 1 ? '' : 's'}; waiting for Bitcoin confirmation${note}`,
        checked_at: now,
      };
      const result: StampResult = { ...base, outcome: 'stamped', answered, failures };
      results.push({ day, proof, result });
      return result;
    }
    const reason = `stamp failed: ${answered.length} of ${ctx.anchor.calendars.length} calendars answered (${ctx.anchor.minCalendars} needed): ${failures.map((f) => f.error).join('; ')}`;
    pending[day.date] = { state: 'not-stamped', reason, checked_at: now };
    const result: StampResult = { ...base, outcome: 'failed', answered, failures, reason };
    results.push({ day, result });
    return result;
  };
  if (book === undefined || ctx.schedule === undefined) {
    for (const day of targets) await stampOne(day);
    return { results, pending };
  }
  const keys = new Set(targets.map((d) => `stamp ${d.date}`));
  const run = await retryRun(
    book,
    targets.map((day) => ({ key: `stamp ${day.date}`, date: day.date, day })),
    boundsOf(ctx.anchor),
    ctx.schedule,
    'anchoring',
    async ({ day }) => {
      const result = await stampOne(day);
      return result.outcome === 'failed' ? result.reason! : null;
    },
  );
  for (const [key, next] of run.delayed) {
    const date = key.slice('stamp '.length);
    const info = pending[date];
    if (info) info.reason += `; next attempt at ${next.toISOString()}`;
    const failed = results.find((r) => r.day.date === date && r.result.outcome === 'failed');
    if (failed) failed.result.next_attempt = next.toISOString();
  }
  book.retain((key) => !key.startsWith('stamp ') || keys.has(key));
  return { results, pending };
}

/** Writes new stamps; a proof another run wrote meanwhile is kept and this run's answers merged into it. */
function writeStamps(ctx: AnchorContext, results: StampOutcome[]): void {
  for (const { day, proof } of results) {
    if (!proof) continue;
    const current = readLedgerProof(ctx.config.archive, day);
    if (current) {
      mergeTimestamps(current.timestamp, calendarTreeOf(proof, fromHex(day.root), fromHex(day.sha256)));
      writeMutable(ctx.config.archive, ledgerOtsPath(day.date), serializeDetached(current));
    } else {
      writeMutable(ctx.config.archive, ledgerOtsPath(day.date), serializeDetached(proof));
    }
  }
}

/** Asks trusted calendars for the upgrades of every pending attestation in `t`. */
export async function collectUpgrades(
  t: Timestamp,
  trusted: readonly string[],
  timeoutMs: number,
): Promise<{
  upgrades: Array<{ calendar: string; timestamp: Timestamp }>;
  notes: string[];
  asked: number;
  failed: number;
}> {
  const seen = new Set<string>();
  const asks: Array<{ calendar: string; message: Uint8Array }> = [];
  const notes: string[] = [];
  for (const { message, attestation } of walkAttestations(t)) {
    if (attestation.kind !== 'pending') continue;
    const key = `${attestation.uri} ${toHex(message)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (!isTrustedCalendar(attestation.uri, trusted))
      notes.push(`${attestation.uri}: not a trusted calendar (OTS_CALENDARS, OTS_TRUSTED_CALENDARS); not asked`);
    else asks.push({ calendar: attestation.uri.replace(/\/+$/, ''), message });
  }
  const answers = await Promise.allSettled(asks.map((a) => fetchUpgrade(a.calendar, a.message, timeoutMs)));
  const upgrades: Array<{ calendar: string; timestamp: Timestamp }> = [];
  let failed = 0;
  answers.forEach((s, i) => {
    const { calendar } = asks[i]!;
    if (s.status === 'rejected') {
      failed++;
      notes.push((s.reason as Error).message);
    } else if (s.value.kind === 'pending') notes.push(`${calendar}: ${s.value.text}`);
    else upgrades.push({ calendar, timestamp: s.value.timestamp });
  });
  /** asked: calendars asked; failed: those that gave no answer (an error, not "pending"). */
  return { upgrades, notes, asked: asks.length, failed };
}

/** Every Bitcoin attestation of `t` checked against the header source: the verified ones and the problems. */
export async function checkBitcoinAttestations(
  t: Timestamp,
  ctx: { headers: HeaderSource; network: AnchorConfig['network'] },
) {
  const verified: Array<{ height: number; time: number; blockHash: string; merkleRoot: string }> = [];
  const problems: string[] = [];
  let rejected = 0;
  for (const { message, attestation } of walkAttestations(t)) {
    if (attestation.kind !== 'bitcoin') continue;
    try {
      verified.push(await verifyAttestation(ctx.headers, message, attestation.height, ctx.network));
    } catch (err) {
      if (err instanceof MismatchError || err instanceof FormatError) rejected++;
      problems.push(`Bitcoin attestation at height ${attestation.height}: ${(err as Error).message}`);
    }
  }
  verified.sort((a, b) => a.height - b.height);
  /** rejected: attestations whose header was obtained and failed a check (as opposed to a source failure). */
  return { verified, problems, rejected, bitcoinCount: verified.length + problems.length };
}

/**
 * `timeseal upgrade` and the hourly step: stamps days that have no calendar proof yet, fetches upgrades for
 * days not yet confirmed, verifies Bitcoin attestations, refreshes confirmations, rewrites the status files.
 */
export async function upgradeDays(ctx: AnchorContext): Promise<UpgradeReport> {
  return withLockAsync(
    anchorLockOf(ctx.config),
    async () => {
      const archive = ctx.config.archive;
      const headers = ctx.headers ?? headerSourceFor(ctx.anchor.headerSource, ctx.anchor.bitcoinTimeoutMs);
      const now = ctx.clock().toISOString();
      const { days } = readState(archive, ctx.config.logOrigin);
      const stored = readBlockInfo(archive);
      const unstamped = days.filter((d) => readOptional(archive, ledgerOtsPath(d.date)) === undefined);
      const book = retryBookOf(ctx);
      const stamping = await stampDays(ctx, unstamped, book);
      const pending: Record<string, PendingInfo> = { ...stamping.pending };
      // The calendars are asked for the upgrades of every stamped day not yet confirmed (by the schedule: the due
      // ones, newest first, within the run's bounds); the answers are merged below.
      const proofs = new Map<string, DetachedTimestampFile>();
      const toAsk: DayRecord[] = [];
      for (const day of days) {
        const proof = stamping.results.find((r) => r.day.date === day.date)?.proof ?? readLedgerProof(archive, day);
        if (!proof) continue;
        proofs.set(day.date, proof);
        if (!stored.ledgers[day.date]) toAsk.push(day);
      }
      const asked = new Map<string, Awaited<ReturnType<typeof collectUpgrades>>>();
      const ask = async (day: DayRecord) => {
        ctx.progress?.(`${day.date}: asking the calendars for upgrades`);
        const got = await collectUpgrades(
          proofs.get(day.date)!.timestamp,
          ctx.anchor.trusted,
          ctx.anchor.calendarTimeoutMs,
        );
        asked.set(day.date, got);
        return got;
      };
      let askDelayed = new Map<string, Date>();
      if (book === undefined || ctx.schedule === undefined) {
        for (const day of toAsk) await ask(day);
      } else {
        const keys = new Set(toAsk.map((d) => `upgrade ${d.date}`));
        const run = await retryRun(
          book,
          toAsk.map((day) => ({ key: `upgrade ${day.date}`, date: day.date, day })),
          boundsOf(ctx.anchor),
          ctx.schedule,
          'anchoring',
          async ({ day }) => {
            const got = await ask(day);
            // "Pending" is an answer; only a day that no calendar answered at all counts as a failure.
            return got.asked > 0 && got.failed === got.asked
              ? `no calendar answered the upgrade request: ${got.notes.join('; ')}`
              : null;
          },
        );
        askDelayed = new Map([...run.delayed].map(([key, next]) => [key.slice('upgrade '.length), next]));
        book.retain((key) => !key.startsWith('upgrade ') || keys.has(key));
      }
      const confirmed: Record<string, LedgerBlock> = {};
      const reports = new Map<string, DayReport>();
      const merges = new Map<string, Timestamp[]>();
      let tip: number | null = null;
      let tipError = '';
      const tipHeight = async (): Promise<number | null> => {
        if (tip === null && tipError === '') {
          try {
            tip = await headers.tipHeight();
          } catch (err) {
            tipError = (err as Error).message;
          }
        }
        return tip;
      };
      for (const day of days) {
        const known = stored.ledgers[day.date];
        const proof = proofs.get(day.date);
        if (!proof) {
          // A retry record whose time is still to come: its stamp failed (this run or before) and waits out its
          // backoff (a day due but left for a later run by the run's bounds has none).
          const retry = book?.get(`stamp ${day.date}`)?.next;
          const next = retry !== undefined && Date.parse(retry) > ctx.schedule!.now().getTime() ? retry : undefined;
          reports.set(day.date, {
            date: day.date,
            state: 'not-stamped',
            reason: pending[day.date]?.reason ?? stored.pending[day.date]?.reason,
            ...(next === undefined ? {} : { next_attempt: next }),
            upgraded_from: [],
          });
          continue;
        }
        if (known && known.confirmations >= RECHECK_BELOW_CONFIRMATIONS) {
          const t = await tipHeight();
          const confirmations =
            t === null ? known.confirmations : Math.max(known.confirmations, t - known.block_height + 1);
          confirmed[day.date] = { block_height: known.block_height, confirmations };
          reports.set(day.date, { date: day.date, state: 'confirmed', ...confirmed[day.date], upgraded_from: [] });
          continue;
        }
        const upgradedFrom: string[] = [];
        const notes: string[] = [];
        const got = asked.get(day.date);
        /** Not asked in this scheduled run (waiting out its backoff, or left for a later run). */
        const notAsked = !known && got === undefined;
        if (got) {
          for (const u of got.upgrades) {
            mergeTimestamps(proof.timestamp, u.timestamp);
            upgradedFrom.push(u.calendar);
          }
          if (got.upgrades.length)
            merges.set(
              day.date,
              got.upgrades.map((u) => u.timestamp),
            );
          notes.push(...got.notes);
        }
        const checked = await checkBitcoinAttestations(proof.timestamp, { headers, network: ctx.anchor.network });
        const best = checked.verified[0];
        if (!best && known && checked.rejected === 0) {
          // The header source failed this run; a confirmed day stays confirmed until a check actually fails.
          confirmed[day.date] = known;
          reports.set(day.date, {
            date: day.date,
            state: 'confirmed',
            ...known,
            reason: checked.problems.join('; '),
            upgraded_from: [],
          });
        } else if (best) {
          const t = await tipHeight();
          const confirmations = t === null ? Math.max(known?.confirmations ?? 1, 1) : Math.max(t - best.height + 1, 1);
          confirmed[day.date] = { block_height: best.height, confirmations };
          reports.set(day.date, {
            date: day.date,
            state: 'confirmed',
            ...confirmed[day.date],
            upgraded_from: upgradedFrom,
          });
        } else if (checked.bitcoinCount === 0 && notAsked) {
          // What the last request (or this run's stamp) found stays the day's status until the calendars are asked.
          const last = pending[day.date] ?? stored.pending[day.date];
          const info: PendingInfo =
            last?.state === 'pending'
              ? last
              : {
                  state: 'pending',
                  reason: 'waiting for Bitcoin confirmation; the calendars are asked at a later run',
                  checked_at: now,
                };
          pending[day.date] = info;
          reports.set(day.date, { date: day.date, state: 'pending', reason: info.reason, upgraded_from: [] });
        } else {
          const state = checked.bitcoinCount > 0 ? 'unverified' : 'pending';
          const next = askDelayed.get(day.date);
          const reason =
            state === 'unverified'
              ? checked.problems.join('; ')
              : `waiting for Bitcoin confirmation: ${notes.join('; ') || 'no trusted calendar to ask'}${next ? `; next attempt at ${next.toISOString()}` : ''}`;
          pending[day.date] = { state, reason, checked_at: now };
          reports.set(day.date, { date: day.date, state, reason, upgraded_from: upgradedFrom });
        }
      }
      withLock(archiveLockOf(ctx.config), () => {
        writeStamps(ctx, stamping.results);
        for (const [date, answers] of merges) {
          const day = days.find((d) => d.date === date)!;
          const current = readLedgerProof(archive, day);
          if (!current) continue;
          for (const a of answers) mergeTimestamps(current.timestamp, a);
          writeMutable(archive, ledgerOtsPath(date), serializeDetached(current));
        }
        const latestDays = readState(archive, ctx.config.logOrigin).days;
        writeAnchorStatus(archive, latestDays, ctx.clock(), {
          confirmed,
          pending,
          ...(tip === null ? {} : { tipHeight: tip }),
        });
      });
      book?.save();
      return { stamps: stamping.results.map((r) => r.result), days: [...reports.values()], tip_height: tip };
    },
    'anchoring run',
  );
}

/** The anchoring context of a CLI or server context (reads OTS_* and BITCOIN_* from the environment). */
export function anchorContextOf(
  c: { config: Config; clock: Clock; progress(message: string): void },
  env: NodeJS.ProcessEnv = process.env,
): AnchorContext {
  return { config: c.config, anchor: loadAnchorConfig(env), clock: c.clock, progress: c.progress };
}
