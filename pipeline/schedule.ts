// The built-in daily schedule (docs/OPERATIONS.md §1; docs/ARCHITECTURE.md), run inside `timeseal serve`: at 00:01 UTC build and dual-sign
// every finished day. On start, missed runs are caught up in order. The build runs as a child process (the
// `timeseal ledger build` command itself, started by the launcher the caller gives: cli/launcher.ts for `timeseal
// serve`): it is synchronous and, with its index merges, can take minutes
// (docs/BENCHMARKS.md), which in this process would stop the server answering. Steps are idempotent and run in
// two lanes: the build alone in its own, so that it never waits behind a slow calendar, witness or time-stamp
// authority; the other steps one at a time in the second lane, each starting after a build under way has ended
// (they publish proofs of what the build published, and share its archive lock). The archive and anchoring
// locks keep other processes out. 00:02 anchor: stamp
// every published day without a calendar proof; hourly at :03: the witnesses' cosignatures of the latest
// checkpoint (pipeline/witness.ts); hourly at :04: RFC 3161 tokens of the ledger files (pipeline/tsa-client.ts);
// hourly at :05: upgrade, verify, refresh block information.
//
// After downtime the build still catches up every missed day, in order. The steps that ask outside services
// (calendars, TSAs, witnesses) do not retry every day every run: a day that failed waits
// min(1 h · 2^(failures − 1), 24 h) before its next attempt, a run takes the due days newest first and at most
// ANCHOR_DAYS_PER_RUN / TSA_DAYS_PER_RUN of them within ANCHOR_RUN_SECONDS / TSA_RUN_SECONDS, and a calendar run
// stops after two days in a row failed (pipeline/anchor/backoff.ts; docs/OPERATIONS.md "Retries after
// failures"). Each delayed day is one log line, "anchoring delayed: <day>: <reason>, retrying at <time>".
//
// Several nodes (store/README.md, "The schedule lease"): N `timeseal serve` processes may share one PostgreSQL and one archive folder;
// exactly one of them runs the schedule at a time. Each node holds lease 'schedule' in the store (Store.lease,
// holder `hostname:pid:random`, ttl TIMESEAL_SCHEDULE_LEASE_SECONDS, default 90 s): it takes or renews it
// before each step and every ttl/3 on a timer (also while a step runs); a node without it skips its steps.
// When a node newly takes the lease (its holder died or stopped), it runs the catch-up at once. Takeover bound:
// ttl + ttl/3 after the holder's last renewal. On SQLite (one host) the lease works the same, harmlessly.
// On an s3:// archive a node without the lease follows the writer: at each lease check (every ttl/3) it brings
// its working copy up to date from the store (pipeline/archive-publish.ts followArchiveStore: one read of days.json
// when nothing changed, else the verified pull of what was published since), so what it serves is at most about
// ttl/3 behind the store.
import crypto from 'node:crypto';
import os from 'node:os';
import type { Clock } from '../runtime/clock.ts';
import type { Config } from '../runtime/config.ts';
import { anchorContextOf, anchorDays, upgradeDays } from './anchor/anchor.ts';
import type { ScheduledRun } from './anchor/backoff.ts';
import {
  followArchiveStore,
  SCHEDULE_HOLDER_ENV,
  withPublishedArchive,
  type WriterContext,
} from './archive-publish.ts';
import { SCHEDULE_LEASE, scheduleLeaseMs } from './schedule-lease.ts';
import { cosignLatest, witnessContextOf } from './witness.ts';
import { stampLedgers, tsaContextOf } from './tsa-client.ts';

/**
 * Runs a `timeseal` command in a child process with this process's environment and folder and `env` added;
 * resolves to its --json output, rejects with the last line it wrote on stderr (cli/launcher.ts launchTimeseal
 * is the real one).
 */
export type CommandLauncher = (args: readonly string[], env: Readonly<Record<string, string>>) => Promise<unknown>;

/** What the schedule needs of its node: an archive writer's context (the `timeseal` command's, cli/context.ts),
 * with the clock the steps' due times follow and the configuration its steps read. */
export interface ScheduleContext extends WriterContext {
  config: Config;
  clock: Clock;
}

export interface ScheduleLog {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  /** Days delayed by the backoff (info when absent). */
  warn?(obj: object, msg: string): void;
}

export interface ScheduledStep {
  name: string;
  /** 'build': the build's own lane; 'proofs': the lane of the steps that add proofs to published days. */
  lane: 'build' | 'proofs';
  /** Minutes past the hour when it runs, and whether only in hour 0 (daily) or every hour. */
  minute: number;
  daily: boolean;
  /** `run`: the schedule's log and clock for the steps' retries (pipeline/anchor/backoff.ts); `holder`: the
   * schedule lease's holder, which the step's publication of an s3:// archive renews (pipeline/archive-publish.ts). */
  run(ctx: ScheduleContext, run: ScheduledRun, holder: string): unknown;
}

/** The schedule's steps; the build is a `timeseal ledger build` started by `launch`. */
export const scheduledSteps = (launch: CommandLauncher): ScheduledStep[] => [
  {
    // Hourly, not only at 00:01: a build that failed or was killed (OOM, a restart) is retried within the
    // hour, not the next night; a run with nothing to publish completes what a killed run left, and removes
    // the index segments an earlier run's merge retired, an hour or more after they were retired.
    name: 'ledger build',
    lane: 'build',
    minute: 1,
    daily: false,
    // `timeseal ledger build` says when the clock is behind the archive: an error in the log, not a quiet "done".
    // On an s3:// archive the build publishes what it built under this node's lease (pipeline/archive-publish.ts).
    run: (_ctx, _run, holder) => launch(['ledger', 'build', '--json'], { [SCHEDULE_HOLDER_ENV]: holder }),
  },
  {
    name: 'anchor',
    lane: 'proofs',
    minute: 2,
    daily: true,
    run: (ctx, run, holder) => published(ctx, holder, () => anchorDays({ ...anchorContextOf(ctx), schedule: run })),
  },
  {
    name: 'upgrade and block refresh',
    lane: 'proofs',
    minute: 5,
    daily: false,
    run: (ctx, run, holder) => published(ctx, holder, () => upgradeDays({ ...anchorContextOf(ctx), schedule: run })),
  },
  {
    // Hourly, after the build's hourly retry: the latest checkpoint goes to the witnesses until the quorum has
    // cosigned it (nothing to do without TIMESEAL_WITNESSES, or once it has). A witness that is down delays
    // nothing, and is asked again after its backoff.
    name: 'witness cosign',
    lane: 'proofs',
    minute: 3,
    daily: false,
    run: (ctx, run, holder) => published(ctx, holder, () => cosignLatest({ ...witnessContextOf(ctx), schedule: run })),
  },
  {
    // Hourly: an RFC 3161 token for every published ledger file without one (nothing to do without TSA_URLS);
    // a TSA that is down or answers wrongly delays nothing, and the day is asked again after its backoff.
    name: 'tsa stamp',
    lane: 'proofs',
    minute: 4,
    daily: false,
    run: (ctx, run, holder) => published(ctx, holder, () => stampLedgers({ ...tsaContextOf(ctx), schedule: run })),
  },
];

/** A proofs step's result; on an s3:// archive, with what its publication did (pipeline/archive-publish.ts). */
async function published<T>(ctx: ScheduleContext, holder: string, step: () => Promise<T>): Promise<unknown> {
  const { result, archive } = await withPublishedArchive(ctx, step, { holder });
  return archive === undefined ? result : { result, archive };
}

/** A step's own report, out of the S3 publication's `{result, archive}` when it is wrapped in it. */
function reportOf(result: unknown): unknown {
  return (result as { result?: unknown } | null)?.result ?? result;
}

/** The earliest of ISO times (they sort as text); undefined for none. */
function earliest(times: readonly string[]): string | undefined {
  return [...times].sort()[0];
}

/**
 * The days a step's report says failed: the anchoring and RFC 3161 runs report one `{date, outcome}` a day (the
 * upgrade its `stamps`), possibly wrapped with the S3 publication (`{result, archive}`). A run whose days failed
 * is not "done" in the log. `next`: the earliest time a failed day is tried again, when the report gives one (the
 * schedule's runs do).
 */
export function failedDays(result: unknown): { failed: string[]; of: number; next?: string } {
  const inner = reportOf(result);
  const list = Array.isArray(inner) ? inner : (inner as { stamps?: unknown } | null)?.stamps;
  if (!Array.isArray(list)) return { failed: [], of: 0 };
  const days = list.filter(
    (d): d is { date: string; outcome: string; next_attempt?: unknown } =>
      typeof d?.date === 'string' && typeof d?.outcome === 'string',
  );
  const failed = days.filter((d) => d.outcome === 'failed');
  const next = earliest(failed.map((d) => d.next_attempt).filter((t): t is string => typeof t === 'string'));
  return { failed: failed.map((d) => d.date), of: days.length, ...(next === undefined ? {} : { next }) };
}

/**
 * The days of an anchoring report (the upgrade's `days`) not stamped because their stamp failed, with when each
 * is tried again: a run after a failed anchoring is not "done" either.
 */
function retryingDays(result: unknown): Array<{ date: string; next: string }> {
  const days = (reportOf(result) as { days?: unknown } | null)?.days;
  if (!Array.isArray(days)) return [];
  return days
    .filter(
      (d): d is { date: string; state: string; next_attempt: string } =>
        d?.state === 'not-stamped' && typeof d.date === 'string' && typeof d.next_attempt === 'string',
    )
    .map((d) => ({ date: d.date, next: d.next_attempt }));
}

/**
 * A step's report as its last log line carries it: without the raw errors of the days that failed (a failed
 * stamp's `reason` and `failures`, the `reason` of a day whose stamp waits for its next attempt), which their
 * "… delayed: <day>: <reason>" line gave once already.
 */
function loggedResult(result: unknown): unknown {
  const day = (d: unknown): unknown => {
    if (d === null || typeof d !== 'object') return d;
    const entry = d as Record<string, unknown>;
    if (entry.outcome !== 'failed' && !(entry.state === 'not-stamped' && 'next_attempt' in entry)) return d;
    return Object.fromEntries(Object.entries(entry).filter(([k]) => k !== 'reason' && k !== 'failures'));
  };
  const report = (r: unknown): unknown => {
    if (Array.isArray(r)) return r.map(day);
    if (r === null || typeof r !== 'object') return r;
    const o = r as Record<string, unknown>;
    return {
      ...o,
      ...(Array.isArray(o.stamps) ? { stamps: o.stamps.map(day) } : {}),
      ...(Array.isArray(o.days) ? { days: o.days.map(day) } : {}),
    };
  };
  const wrapped = result as { result?: unknown; archive?: unknown } | null;
  return wrapped !== null && typeof wrapped === 'object' && 'archive' in wrapped && 'result' in wrapped
    ? { ...wrapped, result: report(wrapped.result) }
    : report(result);
}

/** The days a `ledger build --json` report says it published (not those it only re-checked). */
function builtDays(result: unknown): Array<{ entryCount: number }> {
  const days = (result as { days?: unknown } | null)?.days;
  if (!Array.isArray(days)) return [];
  return days.filter(
    (d): d is { entryCount: number; alreadyPublished: boolean } =>
      typeof d?.entryCount === 'number' && d.alreadyPublished === false,
  );
}

export interface Schedule {
  /** Runs every step once now (catch-up), in order within each lane. */
  runAll(): Promise<void>;
  /** Queues the step named `name` in its lane now (as its timer does); resolves when it has run. */
  run(name: string): Promise<void>;
  stop(): Promise<void>;
}

/** Next instant (ms) strictly after `now` at which `step` is due. */
export function nextRun(step: ScheduledStep, now: number): number {
  const d = new Date(now);
  const candidate = Date.UTC(
    d.getUTCFullYear(),
    d.getUTCMonth(),
    d.getUTCDate(),
    step.daily ? 0 : d.getUTCHours(),
    step.minute,
  );
  if (candidate > now) return candidate;
  return candidate + (step.daily ? 86_400_000 : 3_600_000);
}

/** What the schedule reports to the node's metrics (ingest/metrics.ts has them), when `serve` has them. */
export interface ScheduleMetrics {
  stepFinished(step: string, ok: boolean, seconds: number): void;
  buildFinished(report: { days: number; entries: number; seconds: number }): void;
}

/**
 * Starts the schedule: catches up at once, then sleeps until the next due step. Due times are the system clock's,
 * or the development clock's when the context's clock is one (re-armed when `timeseal clock` moves it); a fixed
 * TIMESEAL_NOW means the steps run once at start (catch-up) and then at the system clock's due times.
 * A step runs only while this node holds the schedule lease (see the module comment); the lease's times are
 * the real clock's too (a fixed TIMESEAL_NOW would never let a lease expire), and so are the waits of the
 * steps' retries (`options.now` replaces that clock for the retries only: tests simulate hours with it).
 * `steps`: scheduledSteps(launch) with the launcher of `timeseal` commands.
 */
export function startSchedule(
  ctx: ScheduleContext,
  log: ScheduleLog,
  steps: ScheduledStep[],
  options: { leaseMs?: number; now?: () => Date; metrics?: ScheduleMetrics } = {},
): Schedule {
  // The two lanes (see the module comment): the build's, and the proofs' steps one after the other.
  let buildLane: Promise<void> = Promise.resolve();
  let proofsLane: Promise<void> = Promise.resolve();
  let stopped = false;
  const timers = new Set<NodeJS.Timeout>();
  const leaseMs = options.leaseMs ?? scheduleLeaseMs();
  const holder = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  // Due times: the system clock's, or the development clock's (runtime/clock.ts), which `timeseal clock` moves at
  // any time: within a second of a move every waiting step is armed again at its next time on the moved clock.
  // Steps whose times were jumped over do not run (a moved clock is not time that passed; `timeseal ledger build`
  // closes a day at once). A step's retry times (`run.now`: "next try 20:36 UTC") are on the same clock.
  const development = ctx.clock?.development === true;
  const dueNow = (): number => (development ? ctx.clock().getTime() : Date.now());
  const now = options.now ?? (() => new Date(dueNow()));
  const runOf = (step: ScheduledStep): ScheduledRun => ({
    warn: (fields, msg) =>
      log.warn ? log.warn({ step: step.name, ...fields }, msg) : log.info({ step: step.name, ...fields }, msg),
    info: (fields, msg) => log.info({ step: step.name, ...fields }, msg),
    now,
  });
  let held = false;
  let saidHeldElsewhere = false;
  /** Takes or renews the lease; true while this node holds it. `newly` when it was not held before. */
  const checkLease = async (): Promise<{ held: boolean; newly: boolean }> => {
    let ok = false;
    try {
      ok = await (await ctx.store()).lease.acquire(SCHEDULE_LEASE, holder, leaseMs, Date.now());
    } catch (err) {
      // Not "another node runs it": nobody may hold it while the database is out of reach.
      log.error(
        { lease: SCHEDULE_LEASE, err: (err as Error).message },
        'the schedule lease could not be checked (the database did not answer); no step runs on this node until it can',
      );
      held = false;
      return { held: false, newly: false };
    }
    const newly = ok && !held;
    if (newly) {
      saidHeldElsewhere = false;
      log.info(
        { lease: SCHEDULE_LEASE, holder, ttlSeconds: leaseMs / 1000 },
        'schedule lease taken: this node runs the schedule',
      );
    } else if (!ok && held) {
      log.info({ lease: SCHEDULE_LEASE, holder }, 'schedule lease lost: another node runs the schedule');
      saidHeldElsewhere = true;
    } else if (!ok && !saidHeldElsewhere) {
      saidHeldElsewhere = true;
      log.info(
        { lease: SCHEDULE_LEASE, ttlSeconds: leaseMs / 1000 },
        'schedule held by another node: this node skips its steps',
      );
    }
    held = ok;
    return { held: ok, newly };
  };
  const runStep = (step: ScheduledStep): Promise<void> => {
    const run = async (): Promise<void> => {
      if (stopped) return;
      if (!(await checkLease()).held) return;
      const started = performance.now();
      const seconds = () => (performance.now() - started) / 1000;
      try {
        const result = await step.run(ctx, runOf(step), holder);
        const { failed, of, next: nextTry } = failedDays(result);
        const retrying = retryingDays(result);
        const logged = loggedResult(result);
        const listed = (dates: string[]) => `${dates.slice(0, 3).join(', ')}${dates.length > 3 ? ', …' : ''}`;
        if (failed.length > 0)
          runOf(step).warn(
            { result: logged, failed },
            `scheduled ${step.name} failed for ${failed.length} of ${of} day${of === 1 ? '' : 's'} (${listed(failed)}); ${nextTry === undefined ? 'each is tried again after its wait' : `next try ${nextTry}`}`,
          );
        else if (retrying.length > 0) {
          const n = retrying.length;
          const next = earliest(retrying.map((d) => d.next))!;
          runOf(step).warn(
            { result: logged, retrying: retrying.map((d) => d.date), next_attempt: next },
            `scheduled ${step.name}: ${n} day${n === 1 ? '' : 's'} not anchored yet, ${n === 1 ? 'its stamp' : 'their stamps'} failed (${listed(retrying.map((d) => d.date))}); next try ${next}`,
          );
        } else log.info({ step: step.name, result: logged }, `scheduled ${step.name} done`);
        options.metrics?.stepFinished(step.name, true, seconds());
        const built = step.lane === 'build' ? builtDays(result) : [];
        if (built.length > 0)
          options.metrics?.buildFinished({
            days: built.length,
            entries: built.reduce((n, d) => n + d.entryCount, 0),
            seconds: seconds(),
          });
      } catch (err) {
        log.error(
          { step: step.name, err: (err as Error).message },
          `scheduled ${step.name} failed; the next run retries`,
        );
        options.metrics?.stepFinished(step.name, false, seconds());
      }
    };
    if (step.lane === 'build') return (buildLane = buildLane.then(run));
    // A proofs step waits for the build under way when it starts (never the other way round).
    return (proofsLane = proofsLane.then(async () => {
      await buildLane;
      await run();
    }));
  };
  const waiting = new Map<ScheduledStep, NodeJS.Timeout>();
  const arm = (step: ScheduledStep): void => {
    if (stopped) return;
    const now = dueNow();
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        waiting.delete(step);
        void runStep(step).then(() => arm(step));
      },
      Math.min(nextRun(step, now) - now, 2 ** 31 - 1),
    );
    timer.unref();
    timers.add(timer);
    waiting.set(step, timer);
  };
  let offset = dueNow() - Date.now();
  const clockWatch = development
    ? setInterval(() => {
        const next = dueNow() - Date.now();
        if (Math.abs(next - offset) < 1000) return;
        offset = next;
        log.info({ clock: new Date(dueNow()).toISOString() }, 'the development clock moved: the schedule re-armed');
        for (const [step, timer] of [...waiting]) {
          clearTimeout(timer);
          timers.delete(timer);
          waiting.delete(step);
          arm(step);
        }
      }, 1000)
    : undefined;
  clockWatch?.unref();
  const runAll = async (): Promise<void> => {
    await Promise.all(steps.map(runStep));
  };
  // The lease timer: renews every ttl/3 (also while a step runs: it does not wait for the chain); a node that
  // newly takes the lease (the holder died) catches up at once instead of at the next due step.
  let following: Promise<void> | undefined;
  const follow = (): void => {
    if (stopped || following !== undefined || ctx.config.archiveStore === undefined) return;
    following = followArchiveStore(ctx)
      .then((state) => {
        if (state === 'pulled')
          log.info(
            { archive: ctx.config.archiveStore },
            'working copy brought up to date from the archive (another node publishes it)',
          );
      })
      .catch((err: unknown) =>
        log.error(
          { archive: ctx.config.archiveStore, err: (err as Error).message },
          'the working copy could not be brought up to date from the archive; it serves what it holds, and the next lease check tries again',
        ),
      )
      .finally(() => (following = undefined));
  };
  let renewing = false;
  const renewal = setInterval(
    () => {
      if (stopped || renewing) return;
      renewing = true;
      void checkLease()
        .then(({ held: holds, newly }) => {
          if (newly && !stopped) void runAll();
          else if (!holds) follow();
        })
        .finally(() => (renewing = false));
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  renewal.unref();
  void runAll().then(() => {
    steps.forEach(arm);
    if (!held) follow();
  });
  return {
    runAll,
    run(name) {
      const step = steps.find((s) => s.name === name);
      if (step === undefined) return Promise.reject(new Error(`no scheduled step ${name}`));
      return runStep(step);
    },
    async stop() {
      stopped = true;
      clearInterval(renewal);
      clearInterval(clockWatch);
      for (const t of timers) clearTimeout(t);
      await Promise.all([buildLane, proofsLane, following]);
      // Free the lease at once so that another node takes over without waiting for the ttl.
      if (held) {
        held = false;
        await (await ctx.store()).lease.release(SCHEDULE_LEASE, holder).catch(() => undefined);
      }
    },
  };
}
