// `timeseal serve [--demo]`: the web server (ingest/) on HOST:PORT with the built-in daily schedule
// (pipeline/schedule.ts), loaded only by that command so the others start without Fastify. SIGTERM or
// SIGINT: stop the schedule, stop accepting connections, finish the requests in flight, then return so the
// CLI closes the database and exits 0.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { archiveAccess } from './archive-access.ts';
import { buildApp } from '../ingest/app.ts';
import type { Metrics } from '../ingest/metrics.ts';
import { loadIngestConfig, trustProxyWarning } from '../ingest/config.ts';
import { publishDemo } from './demo.ts';
import { startBanner } from './start-banner.ts';
import { createLogger, logFormat } from '../runtime/logger.ts';
import { createMailer } from '../ingest/mail.ts';
import { listen } from '../ingest/server.ts';
import { TimesealError } from '../core/errors.ts';
import { loadTsaKeys, PUBLIC_TSA_CHAIN_PEM, PUBLIC_TSA_ROOT_PEM } from '../runtime/keys.ts';
import type { Context } from './context.ts';
import { checkDatabase } from '../store/sqlite/db.ts';
import { scheduledSteps, startSchedule } from '../pipeline/schedule.ts';
import { launchTimeseal } from './launcher.ts';
import { releaseVerifier } from '../pipeline/verifier-release.ts';
import { clockBehindArchive, readLastPublishedDay } from '../runtime/clock-guard.ts';
import { devClockPath } from '../runtime/clock.ts';
import { setting } from '../runtime/settings.ts';
import { utcDate } from '../core/ledger.ts';
import { DayClosedError, type Store } from '../store/store.ts';

/** Whether this process may write the archive folder (false on a read-only mount or without permission). */
function archiveWritable(archive: string): boolean {
  try {
    fs.accessSync(archive, fs.constants.W_OK);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    return false;
  }
}

/**
 * `serve`'s refusal to start on a part of the installation, with the code of what is wrong in the one exit-code
 * table (core/exit-codes.ts): a setting is bad usage (64), a file that is not there is not found (3), a damaged or
 * unfit key or certificate is a failure (1).
 */
function startRefusal(message: string, err: unknown): TimesealError {
  const code = err instanceof TimesealError ? err.code : 'format';
  const missing = (err as { cause?: NodeJS.ErrnoException } | undefined)?.cause?.code === 'ENOENT';
  return new TimesealError(code === 'io' && missing ? 'not-found' : code, message, { cause: err });
}

/**
 * What must hold before the server accepts a request, checked at start so a broken installation refuses to
 * start with one clear line instead of answering 500 to the requests that need the missing part: the
 * public keys load and match, the time-stamp authority's key and chain (when the archive has them, or the
 * operator configured them) pass runtime/keys.ts loadTsaKeys's checks, and the database passes SQLite's quick
 * check.
 */
function checkBeforeServing(c: Context, log: { warn(obj: object, msg: string): void }): void {
  try {
    c.publicKeys();
  } catch (err) {
    throw startRefusal(
      `cannot serve without the public keys in ${c.config.keys}: ${(err as Error).message}. Run \`timeseal keys init\` for a new installation, or restore the keys folder.`,
      err,
    );
  }
  checkTsaKeys(c, log);
  // SQLite's own check; on PostgreSQL (TIMESEAL_DATABASE_URL) the server keeps its data safe itself, and no
  // SQLite file is opened (several nodes sharing a data folder would race to create one).
  if (c.config.databaseUrl !== undefined) return;
  const db = c.db();
  const size = fs.statSync(c.config.db).size;
  if (size <= START_CHECK_MAX_BYTES) checkDatabase(db, c.config.db);
  else
    log.warn(
      { db: c.config.db, bytes: size },
      `the database is larger than ${START_CHECK_MAX_BYTES / 2 ** 20} MiB: its full check is not run at start (it reads the whole file); run \`timeseal db check\` after backups and upgrades`,
    );
}

/**
 * POST /tsa's key and chain (docs/OPERATIONS.md "Your own TSA certificate"): any failure of loadTsaKeys's checks
 * refuses the start, naming the problem and the file. An archive with no TSA key starts (POST /tsa answers 503).
 * With an operator's own chain, the copy in the keys folder that readers fetch should be that chain.
 */
function checkTsaKeys(c: Context, log: { warn(obj: object, msg: string): void }): void {
  let tsa: ReturnType<typeof loadTsaKeys>;
  try {
    tsa = loadTsaKeys(c.config);
  } catch (err) {
    throw startRefusal(`cannot serve the time-stamp authority: ${(err as Error).message}`, err);
  }
  if (tsa === undefined || c.config.tsaChainFile === undefined) return;
  const published = path.join(c.config.keys, PUBLIC_TSA_CHAIN_PEM);
  let text: string | undefined;
  try {
    text = fs.readFileSync(published, 'utf8');
  } catch {
    text = undefined;
  }
  if (text !== undefined && text !== tsa.chainPem) {
    log.warn(
      { published, configured: c.config.tsaChainFile },
      `${published} is not the configured TSA chain (TIMESEAL_TSA_CHAIN_FILE): readers who fetch it get another chain than the tokens carry; copy the configured chain there, and its root to ${path.join(c.config.keys, PUBLIC_TSA_ROOT_PEM)}`,
    );
  }
}

/**
 * The quick check reads the whole file: 428 MB (3 M submissions) took 12.7 s from a cold cache and 3.4 s from
 * a warm one here, so a start checks files up to this size (a few seconds) and leaves larger ones to
 * `timeseal db check`. An empty or unreadable file is refused at any size (openDatabase).
 */
export const START_CHECK_MAX_BYTES = 256 * 2 ** 20;

/** How often a server whose clock's day is closed tries again to record the offline verifier's release. */
export const RELEASE_RETRY_MS = 60_000;

/**
 * The built offline verifier is listed with its SHA-256 in the archive and its hash enqueued once
 * (pipeline/verifier-release.ts), at the server's clock. While that clock's UTC day is closed (on or before the
 * last published day: a node restarted just after midnight with a lagging clock, a demonstration clock) nothing
 * can be enqueued for it, so the server starts without the release, says so once, and tries again every
 * RELEASE_RETRY_MS until a day is open; meanwhile submissions are answered 503 (ingest/submission-gate.ts).
 */
async function recordVerifierRelease(
  c: Context,
  store: Store,
  file: string,
  log: ReturnType<typeof createLogger>,
): Promise<{ stop(): void }> {
  let warned = false;
  const attempt = async (): Promise<boolean> => {
    const now = c.clock();
    const today = utcDate(now);
    const lastPublished = readLastPublishedDay(c.config.archive);
    try {
      if (clockBehindArchive(today, lastPublished)) throw new DayClosedError(today);
      const { release, added } = await releaseVerifier({ file, archive: c.config.archive, store, now });
      if (added)
        log.info({ sha256: release.sha256, ledgerDate: release.ledger_date }, 'offline verifier release recorded');
      return true;
    } catch (err) {
      if (!(err instanceof DayClosedError)) throw err;
      if (!warned)
        log.warn(
          { today, lastPublished },
          `the offline verifier release is not recorded yet: the clock's day ${today} is closed (its ledger is published or being built); it is recorded once the clock reaches an open day`,
        );
      warned = true;
      return false;
    }
  };
  if (await attempt()) return { stop: () => {} };
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    attempt().then(
      (done) => {
        busy = false;
        if (done) clearInterval(timer);
      },
      (err: unknown) => {
        busy = false;
        log.error({ err }, 'recording the offline verifier release failed');
      },
    );
  }, RELEASE_RETRY_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/**
 * GET /metrics (ingest/metrics.ts) on its own address, apart from the public site: operators scrape it from
 * their network; nothing else is answered there.
 */
async function serveMetrics(
  metrics: Metrics,
  at: { host: string; port: number },
  log: { info(obj: object, msg: string): void },
): Promise<http.Server> {
  const server = http.createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
        .end('Only GET /metrics is served here.\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) =>
        response
          .writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' })
          .end(text),
      (err: Error) =>
        response
          .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
          .end(`metrics failed: ${err.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(
        new TimesealError('io', `cannot listen for metrics on ${at.host}:${at.port} (METRICS_LISTEN): ${err.message}`, {
          cause: err,
        }),
      ),
    );
    server.listen(at.port, at.host, resolve);
  });
  const address = server.address() as { address: string; port: number };
  log.info(
    { host: address.address, port: address.port },
    `metrics on http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}/metrics`,
  );
  return server;
}

export async function serve(command: Context, options: { demo: boolean }): Promise<void> {
  const logger = createLogger();
  // The steps' progress lines ("2026-12-01: 5 hashes", "… submitting … to 4 calendars"), which a command prints on
  // a terminal, are log records at debug here: on a terminal they fell between the log's lines, untimed.
  const c: Context = { ...command, progress: (message) => logger.debug(message) };
  const ingest = loadIngestConfig(c.config);
  checkBeforeServing(c, logger);
  const proxyWarning = trustProxyWarning(c.config.host, ingest.trustProxy);
  if (proxyWarning !== undefined) logger.warn({ host: c.config.host, trustProxy: ingest.trustProxy }, proxyWarning);
  // The server never needs to write the archive to serve it: on a read-only archive (a node that only serves
  // what another machine writes) it neither records the verifier release nor runs the schedule's writing steps.
  const writable = archiveWritable(c.config.archive);
  if (!writable)
    logger.warn(
      { archive: c.config.archive },
      'the archive is read-only here: serving it, recording no verifier release and running no schedule',
    );
  let demoDays: string[] = [];
  if (options.demo && writable) {
    const built = await publishDemo(c);
    if (built !== null) logger.info({ days: built.map((d) => d.date) }, 'demonstration ledger published');
    if (built !== null) demoDays = built.map((d) => d.date);
  }
  const store = await c.store();
  const verifier = path.join(ingest.site, 'offline-verifier.html');
  const release =
    writable && fs.existsSync(verifier) ? await recordVerifierRelease(c, store, verifier, logger) : undefined;
  // A node on PostgreSQL checks its clock against the database server's (not with TIMESEAL_NOW or the development
  // clock, which move the clock on purpose; on SQLite the database is this machine's own file).
  const checkClock =
    store.engine === 'postgres' &&
    setting(process.env, 'TIMESEAL_NOW') === undefined &&
    !fs.existsSync(devClockPath(c.config));
  let metrics: Metrics | undefined;
  const app = await buildApp(
    {
      config: c.config,
      ingest,
      clock: c.clock,
      store,
      mailer: createMailer(ingest, logger),
      archiveAccess: archiveAccess(c.config.archive, c.config.logOrigin),
      checkClock,
      ...(ingest.metricsListen ? { metrics: (m: Metrics) => (metrics = m) } : {}),
    },
    logger,
  );
  const metricsServer =
    ingest.metricsListen && metrics ? await serveMetrics(metrics, ingest.metricsListen, logger) : undefined;
  const stopped = new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  const listening = await listen(app, c.config.host, c.config.port);
  if (process.stderr.isTTY && logFormat(process.env, true) === 'pretty') {
    const days = archiveAccess(c.config.archive, c.config.logOrigin).days();
    const banner = startBanner({
      origin: c.config.origin,
      listening,
      smtpUrl: ingest.smtpUrl,
      outbox: ingest.outbox,
      demoDays,
      lastDay: days.at(-1)?.date,
      publishedDays: days.length,
    });
    process.stderr.write(`${banner.join('\n')}\n`);
  }
  const schedule = writable
    ? startSchedule(c, logger, scheduledSteps(launchTimeseal), metrics ? { metrics } : {})
    : { stop: async () => {} };
  const signal = await stopped;
  logger.info({ signal }, 'shutting down: finishing requests in flight');
  release?.stop();
  await schedule.stop();
  metricsServer?.close();
  await app.close();
  logger.info('stopped');
}
