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
import type { Context } from './context.ts';
import { startSchedule } from './schedule.ts';
import { releaseVerifier } from './verifier-release.ts';

export async function serve(c: Context, options: { demo: boolean }): Promise<void> {
  const logger = createLogger();
  const ingest = loadIngestConfig(c.config);
  if (options.demo) {
    const built = publishDemo(c);
    if (built !== null) logger.info({ days: built.map((d) => d.date) }, 'demonstration ledger published');
  }
  // Issue 7: the built offline verifier is listed with its SHA-256 in the archive and timestamped once.
  const verifier = path.join(ingest.site, 'offline-verifier.html');
  if (fs.existsSync(verifier)) {
    const { release, added } = releaseVerifier({ file: verifier, archive: c.config.archive, db: c.db(), now: c.clock() });
    if (added) logger.info({ sha256: release.sha256, ledgerDate: release.ledger_date }, 'offline verifier release recorded');
  }
  const app = await buildApp({ config: c.config, ingest, clock: c.clock, db: c.db(), mailer: createMailer(ingest, logger) }, logger);
  const stopped = new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  await listen(app, c.config.host, c.config.port);
  const schedule = startSchedule(c, logger);
  const signal = await stopped;
  logger.info({ signal }, 'shutting down: finishing requests in flight');
  await schedule.stop();
  await app.close();
  logger.info('stopped');
}

