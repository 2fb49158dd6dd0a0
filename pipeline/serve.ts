// `timeseal serve [--demo]`: the web server (ingest/) on HOST:PORT with the built-in daily schedule
// (pipeline/schedule.ts), loaded only by that command so the others start without Fastify. SIGTERM or
// SIGINT: stop the schedule, stop accepting connections, finish the requests in flight, then return so the
// CLI closes the database and exits 0.
import fs from 'node:fs';
import path from 'node:path';
import { buildApp } from '../ingest/app.ts';
import { loadIngestConfig } from '../ingest/config.ts';
import { publishDemo } from '../ingest/demo.ts';
import { createLogger } from '../ingest/logger.ts';
import { createMailer } from '../ingest/mail.ts';
import { listen } from '../ingest/server.ts';
import { UsageError } from './config.ts';
import type { Context } from './context.ts';
import { checkDatabase } from './db.ts';
import { startSchedule } from './schedule.ts';
import { releaseVerifier } from './verifier-release.ts';

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
 * What must hold before the server accepts a request, checked at start so a broken installation refuses to
 * start with one clear line (issue 16) instead of answering 500 to the requests that need the missing part: the
 * public keys load and match, and the database passes SQLite's quick check.
 */
function checkBeforeServing(c: Context): void {
  try {
    c.publicKeys();
  } catch (err) {
    throw new UsageError(`cannot serve without the public keys in ${c.config.keys}: ${(err as Error).message}. Run \`timeseal keys init\` for a new installation, or restore the keys folder.`);
  }
  checkDatabase(c.db(), c.config.db);
}

export async function serve(c: Context, options: { demo: boolean }): Promise<void> {
  const logger = createLogger();
  const ingest = loadIngestConfig(c.config);
  checkBeforeServing(c);
  // The server never needs to write the archive to serve it: on a read-only archive (a node that only serves
  // what another machine writes) it neither records the verifier release nor runs the schedule's writing steps.
  const writable = archiveWritable(c.config.archive);
  if (!writable) logger.warn({ archive: c.config.archive }, 'the archive is read-only here: serving it, recording no verifier release and running no schedule');
  if (options.demo && writable) {
    const built = publishDemo(c);
    if (built !== null) logger.info({ days: built.map((d) => d.date) }, 'demonstration ledger published');
  }
  // Issue 7: the built offline verifier is listed with its SHA-256 in the archive and timestamped once.
  const verifier = path.join(ingest.site, 'offline-verifier.html');
  if (writable && fs.existsSync(verifier)) {
    const { release, added } = releaseVerifier({ file: verifier, archive: c.config.archive, db: c.db(), now: c.clock() });
    if (added) logger.info({ sha256: release.sha256, ledgerDate: release.ledger_date }, 'offline verifier release recorded');
  }
  const app = await buildApp({ config: c.config, ingest, clock: c.clock, db: c.db(), mailer: createMailer(ingest, logger) }, logger);
  const stopped = new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  await listen(app, c.config.host, c.config.port);
  const schedule = writable ? startSchedule(c, logger) : { stop: async () => {} };
  const signal = await stopped;
  logger.info({ signal }, 'shutting down: finishing requests in flight');
  await schedule.stop();
  await app.close();
  logger.info('stopped');
}

