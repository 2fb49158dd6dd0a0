// RFC 3161 time-stamps of the published ledger files (docs/FORMAT.md §3a). For every published
// day without a token, the SHA-256 of `YYYY-MM-DD.json` (days.json's `sha256`) is sent to each TSA of TSA_URLS
// (RFC 3161 §3.4: POST application/timestamp-query) with a fresh nonce; every answer is checked (runtime/tsa-client.ts)
// before anything is written, and only when at least TSA_MIN answers are good are they published, once:
// `YYYY-MM-DD.json.tsr` (the first good answer in TSA_URLS order), `YYYY-MM-DD.json.2.tsr`, … (the others). A day
// short of good answers gets nothing and is asked again by the next run (hourly under `timeseal serve`). Anyone
// checks a token with stock OpenSSL: `openssl ts -verify -data D.json -in D.json.tsr -CAfile <chain>`.
// By hand, the days are asked oldest first; the schedule's runs (TsaContext.schedule) ask the due days newest
// first and give a day that failed a per-day backoff (pipeline/anchor/backoff.ts; records in
// `<database folder>/tsa-retry.json`). Both are bounded by TSA_DAYS_PER_RUN and TSA_RUN_SECONDS.
import crypto from 'node:crypto';
import path from 'node:path';
import { MAX_TSAS, tsrPath, type DayRecord } from '../core/archive.ts';
import { fromHex } from '../core/encoding.ts';
import { pemCertificates } from '../core/rfc3161.ts';
import { timeStampRequest } from '../core/tsa-client.ts';
import { checkTimeStamp, TsaAnswerError, type TokenFacts } from '../runtime/tsa-client.ts';
import type { Clock } from '../runtime/clock.ts';
import { UsageError, type Config } from '../runtime/config.ts';
import { setting } from '../runtime/settings.ts';
import { retryRun, RetryBook, stateDir, type ScheduledRun } from './anchor/backoff.ts';
import type { ArchiveReader } from './archive-reader.ts';
import { readState } from './archive-state.ts';
import { readOptional, writeImmutable } from './files.ts';
import { boundedFetch, NetworkError, type BoundedResponse } from './http.ts';
import { withLock } from './lock.ts';

/** The CA chain an operator may publish in keys/ so that readers can check tokens against it. */
export const TSA_CA_FILE = 'tsa-ca.pem';

export interface TsaConfig {
  urls: string[];
  min: number;
  timeoutMs: number;
  /** At most this many days asked for in one run; the rest wait for the next run. */
  daysPerRun: number;
  /** No day is started once a run has lasted this long (ms): a slow TSA never holds a run for hours. */
  runMs: number;
}

/**
 * TSA_URLS (comma-separated; empty: no time-stamps), TSA_MIN (default 1), TSA_TIMEOUT_MS (default 30000),
 * TSA_DAYS_PER_RUN (default 24) and TSA_RUN_SECONDS (default 600).
 */
export function loadTsaConfig(env: NodeJS.ProcessEnv = process.env): TsaConfig {
  const urls = setting(env, 'TSA_URLS') ?? [];
  for (const url of urls)
    if (!/^https?:\/\/[^\s/]+/.test(url))
      throw new UsageError(`TSA_URLS: each entry must be an http:// or https:// URL, got ${JSON.stringify(url)}`);
  if (new Set(urls).size !== urls.length) throw new UsageError('TSA_URLS names a TSA twice');
  if (urls.length > MAX_TSAS) throw new UsageError(`TSA_URLS names ${urls.length} TSAs, at most ${MAX_TSAS}`);
  const min = setting(env, 'TSA_MIN') ?? Math.min(1, urls.length);
  if (min > urls.length) {
    throw new UsageError(
      `TSA_MIN must be a whole number from 1 to the ${urls.length} TSAs of TSA_URLS, got ${JSON.stringify(String(min))}`,
    );
  }
  return {
    urls,
    min,
    timeoutMs: setting(env, 'TSA_TIMEOUT_MS'),
    daysPerRun: setting(env, 'TSA_DAYS_PER_RUN'),
    runMs: 1000 * setting(env, 'TSA_RUN_SECONDS'),
  };
}

export interface TsaContext {
  config: Config;
  tsa: TsaConfig;
  clock: Clock;
  progress?: (message: string) => void;
  /** Set by the schedule: newest days first, with the per-day backoff of pipeline/anchor/backoff.ts. */
  schedule?: ScheduledRun;
}

/** The schedule's retry records of RFC 3161 stamping, by day, next to the database file. */
export const TSA_RETRY_FILE = 'tsa-retry.json';

export function tsaContextOf(
  c: { config: Config; clock: Clock; progress(message: string): void },
  env: NodeJS.ProcessEnv = process.env,
): TsaContext {
  return { config: c.config, tsa: loadTsaConfig(env), clock: c.clock, progress: c.progress };
}

export interface TsaDayResult {
  date: string;
  outcome: 'stamped' | 'failed';
  /** Good answers, in TSA_URLS order, each with what it states and the file it went to. */
  tokens: Array<{ tsa: string; file: string; genTime: string; tsaName: string }>;
  failures: Array<{ tsa: string; reason: string }>;
  reason?: string;
  /** A failed day of a scheduled run: when it is asked again (ISO time). */
  next_attempt?: string;
}

/**
 * Asks the TSAs for the published days without a token, oldest first (the schedule's runs: the due days newest
 * first; see the file's head): at most TSA_DAYS_PER_RUN days, and none started after TSA_RUN_SECONDS, so that a
 * slow or silent TSA bounds a run (the schedule's build never waits for it anyway: pipeline/schedule.ts); the other
 * days wait for the next run.
 */
export async function stampLedgers(
  ctx: TsaContext,
  now: () => number = () => performance.now(),
): Promise<TsaDayResult[]> {
  const { config, tsa } = ctx;
  if (tsa.urls.length === 0) return [];
  const days = readState(config.archive, config.logOrigin).days.filter(
    (d) => readOptional(config.archive, tsrPath(d.date, 0)) === undefined,
  );
  const results: TsaDayResult[] = [];
  if (ctx.schedule) {
    const book = new RetryBook(path.join(stateDir(config), TSA_RETRY_FILE));
    const bounds = { days: tsa.daysPerRun, runMs: tsa.runMs, stopAfterFailures: Infinity };
    const run = await retryRun(
      book,
      days.map((day) => ({ key: day.date, date: day.date, day })),
      bounds,
      { ...ctx.schedule, elapsed: ctx.schedule.elapsed ?? now },
      'time-stamping',
      async ({ day }) => {
        const result = await stampDay(ctx, day);
        results.push(result);
        if (result.outcome === 'stamped') return null;
        return `fewer than TSA_MIN (${tsa.min}) good answers: ${result.failures.map((f) => `${f.tsa}: ${f.reason}`).join('; ')}`;
      },
    );
    for (const r of results) {
      const next = run.delayed.get(r.date);
      if (next) {
        r.reason = `${r.reason!.replace(/, asked again at the next run$/, '')}; next attempt at ${next.toISOString()}`;
        r.next_attempt = next.toISOString();
      }
    }
    const waiting = new Set(days.map((d) => d.date));
    book.retain((key) => waiting.has(key));
    book.save();
    return results;
  }
  const started = now();
  for (const day of days.slice(0, tsa.daysPerRun)) {
    if (now() - started >= tsa.runMs) break;
    results.push(await stampDay(ctx, day));
  }
  if (results.length < days.length)
    ctx.progress?.(
      `${days.length - results.length} more day${days.length - results.length === 1 ? '' : 's'} without a token: asked at the next run`,
    );
  return results;
}

async function stampDay(ctx: TsaContext, day: DayRecord): Promise<TsaDayResult> {
  const digest = fromHex(day.sha256, 'ledger sha256');
  const answers = await Promise.all(ctx.tsa.urls.map((url) => ask(url, digest, ctx.tsa.timeoutMs)));
  const good = answers.filter((a): a is Extract<typeof a, { der: Uint8Array }> => 'der' in a);
  const failures = answers
    .filter((a): a is Extract<typeof a, { reason: string }> => 'reason' in a)
    .map((a) => ({ tsa: a.url, reason: a.reason }));
  if (good.length < ctx.tsa.min) {
    const reason = `${good.length} good answer${good.length === 1 ? '' : 's'}, TSA_MIN is ${ctx.tsa.min}; nothing published, asked again at the next run`;
    ctx.progress?.(`${day.date}: not time-stamped — ${reason}`);
    return { date: day.date, outcome: 'failed', tokens: [], failures, reason };
  }
  const tokens = good.map((a, n) => ({
    tsa: a.url,
    file: tsrPath(day.date, n),
    genTime: a.facts.genTime.toISOString(),
    tsaName: a.facts.tsaName,
  }));
  withLock(path.join(path.dirname(path.resolve(ctx.config.db)), 'archive.lock'), () => {
    // In order: a run killed between two files leaves the first tokens (each complete: temp file and rename);
    // the day then counts as time-stamped, with fewer tokens than the others got.
    good.forEach((a, n) => writeImmutable(ctx.config.archive, tsrPath(day.date, n), a.der));
  });
  ctx.progress?.(`${day.date}: time-stamped by ${tokens.map((t) => `${t.tsaName} at ${t.genTime}`).join('; ')}`);
  return { date: day.date, outcome: 'stamped', tokens, failures };
}

/** The most an answer may be: a TimeStampResp with its certificates is a few KB. */
const MAX_TSA_ANSWER = 1 << 20;

/** One request to one TSA: the checked answer, or why there is none. */
async function ask(
  url: string,
  digest: Uint8Array,
  timeoutMs: number,
): Promise<{ url: string; der: Uint8Array; facts: TokenFacts } | { url: string; reason: string }> {
  const nonce = crypto.randomBytes(8);
  let res: BoundedResponse;
  try {
    res = await boundedFetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' },
      body: timeStampRequest(digest, nonce),
      timeoutMs,
      maxBytes: MAX_TSA_ANSWER,
    });
  } catch (err) {
    if (!(err instanceof NetworkError)) throw err;
    const reason =
      err.reason === 'timeout'
        ? `no answer within ${timeoutMs} ms`
        : err.reason === 'unreachable'
          ? `no answer (${err.detail})`
          : err.detail;
    return { url, reason };
  }
  if (res.status !== 200) return { url, reason: `HTTP ${res.status} ${res.statusText}` };
  try {
    return { url, der: res.body, facts: await checkTimeStamp(res.body, digest, { nonce }) };
  } catch (err) {
    if (err instanceof TsaAnswerError) return { url, reason: err.message };
    throw err;
  }
}

/**
 * For `timeseal verify`: every published token of every day checked against the day's ledger digest, and, when
 * the operator publishes keys/tsa-ca.pem, against that chain. A day's tokens are numbered without gaps.
 */
export async function checkTimeStamps(
  reader: ArchiveReader,
  caPem: string | undefined,
  days: readonly DayRecord[],
): Promise<{ problems: string[]; checked: number; notes: string[] }> {
  const problems: string[] = [];
  const notes: string[] = [];
  let checked = 0;
  const trusted = caPem === undefined ? [] : pemCertificates(caPem);
  for (const day of days) {
    let missing: string | undefined;
    for (let n = 0; n < MAX_TSAS; n++) {
      const rel = tsrPath(day.date, n);
      const der = await reader.read(rel);
      if (der === undefined) {
        missing ??= rel;
        continue;
      }
      // Tokens are numbered from the first without gaps: a later one without an earlier means one was removed.
      if (missing !== undefined) problems.push(`${missing}: missing, but ${rel} exists`);
      checked++;
      try {
        await checkTimeStamp(der, fromHex(day.sha256, 'ledger sha256'), trusted.length > 0 ? { trusted } : {});
      } catch (err) {
        problems.push(`${rel}: ${(err as Error).message}`);
      }
    }
  }
  if (checked > 0 && trusted.length === 0)
    notes.push(
      `${checked} RFC 3161 token${checked === 1 ? '' : 's'} checked without a CA chain (publish keys/${TSA_CA_FILE} to check the TSA's chain too)`,
    );
  return { problems, checked, notes };
}
