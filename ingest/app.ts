// The Timeseal web application as a Fastify plugin (the app is a plugin, server.ts only listens, tests build
// the same app and call inject()). It serves the public API (docs/API.md), the built site,
// the archive under /ledgers/ and the public keys.
//
// Layout of the encapsulation contexts:
//   root (this plugin, not encapsulated): JSON body parser, error handlers, 404, security headers,
//     compression, OpenAPI, request logging
//   ├─ publicRoutes   every anonymous API route (routes/*.ts), one context
//   ├─ accountRoutes  accounts (accounts/routes.ts): its own CSRF and session hook, a member context
//   │                 that requires a session, and the Stripe webhook with its raw-body parser
//   └─ staticRoutes   site, /ledgers/*, /keys/*
import fp from 'fastify-plugin';
import compress from '@fastify/compress';
import swagger from '@fastify/swagger';
import path from 'node:path';
import Fastify, {
  LogController,
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyServerOptions,
} from 'fastify';
import type { Logger } from 'pino';
import { loadAccountsConfig, type AccountsConfig } from './accounts/config.ts';
import { accountRoutes } from './accounts/routes.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Config } from '../runtime/config.ts';
import type { Store } from '../store/store.ts';
import { loadPublicKeys, type PublicKeys } from '../runtime/keys.ts';
import { createArchiveView } from './archive-view.ts';
import type { IngestConfig } from './config.ts';
import { BODY_LIMIT, errorHandler, formatSchemaErrors, handleFrameworkError, parseJsonBody } from './errors.ts';
import { addErrorMessage } from './error-message.ts';
import { lazySchemaController } from './lazy-schemas.ts';
import { devOriginRedirect } from './dev-origin.ts';
import type { Mailer } from './mail.ts';
import { betaRoutes } from './routes/beta.ts';
import { betaBatchRoutes } from './routes/beta-batch.ts';
import { certificateRoutes } from './routes/certificate.ts';
import { formRoutes } from './routes/forms.ts';
import { proofRoutes } from './routes/proof.ts';
import { coseReceiptRoutes } from './routes/cose-receipt.ts';
import { scittEntryRoutes } from './routes/scitt-entries.ts';
import { scittKeyRoutes } from './routes/scitt-keys.ts';
import { statusRoutes } from './routes/status.ts';
import { submitRoutes } from './routes/submit.ts';
import { sigstoreTimestampRoutes } from './routes/sigstore-timestamp.ts';
import { tsaRoutes } from './routes/tsa-authority.ts';
import { crawlerRoutes } from './routes/crawlers.ts';
import { verifyPreviewRoutes } from './routes/verify-preview.ts';
import { feedRoutes } from './routes/feed.ts';
import { hashStatusRoutes } from './routes/hash-status.ts';
import type { Metrics } from './metrics.ts';
import { siteConfigRoutes } from './routes/site-config.ts';
import type { ArchiveAccess, Services } from './services.ts';
import { createClockCheck } from './clock-check.ts';
import { createSubmissionGate } from './submission-gate.ts';
import { registerRequestLog } from './request-log.ts';
import { httpLimits, httpServerFactory, type HttpLimits } from './server.ts';
import { API_HELMET_OPTIONS, SITE_HELMET_OPTIONS, securityHeaders } from './security-headers.ts';
import { sendNotFoundPage } from './site-files.ts';
import { staticRoutes } from './static.ts';

export interface AppOptions {
  config: Config;
  ingest: IngestConfig;
  clock: Clock;
  /** The database, made by the composer (cli/, tests: store/index.ts openStore); closing the app closes it
   * (pending submissions are committed first). */
  store: Store;
  mailer: Mailer;
  /** The published archive, read through the pipeline's readers (cli/archive-access.ts). */
  archiveAccess: ArchiveAccess;
  /** Accounts and Stripe settings; default: read from the environment (accounts/config.ts). */
  accounts?: AccountsConfig;
  /** How long a request for the first index-sha256.json waits for it (ingest/index-json.ts READY_WAIT_MS). */
  indexJsonWaitMs?: number;
  /** Check this node's clock against the database's (clock-check.ts): `timeseal serve` on PostgreSQL with the
   * system clock. Measured once before the server is ready, then every CHECK_EVERY_MS. */
  checkClock?: boolean;
  /** When given, the app counts its answers (metrics.ts) and hands the metrics here (`serve` with METRICS_LISTEN). */
  metrics?: (metrics: Metrics) => void;
}

/**
 * Fastify `trustProxy` from TRUST_PROXY. A hop count n trusts the n nearest hops (the socket's peer first), as
 * Express does: the client is the address the outermost trusted proxy saw. Fastify 5 makes bare numbers
 * fail closed (a directly reachable server would let clients forge the header), so the count is given as a
 * function; setting a count asserts that the server is reachable only through the proxy (ingest/README.md).
 */
function trustProxyOption(value: NonNullable<IngestConfig['trustProxy']>): FastifyServerOptions['trustProxy'] {
  return typeof value === 'number' ? (_address: string, hop: number) => hop < value : value;
}

/**
 * Server options that must be given to the Fastify factory (they cannot be set by a plugin), among them the
 * HTTP server with its timeouts and connection cap (server.ts; default: from the environment).
 */
export function serverOptions(
  ingest: IngestConfig,
  logger?: Logger,
  limits: HttpLimits = httpLimits(),
): FastifyServerOptions {
  return {
    ...(logger ? { loggerInstance: logger } : { logger: false }),
    serverFactory: httpServerFactory(limits, logger),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    ...(ingest.trustProxy === undefined ? {} : { trustProxy: trustProxyOption(ingest.trustProxy) }),
    // Unknown fields are rejected rather than dropped, and types are never coerced.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: false } },
    schemaController: lazySchemaController(),
    schemaErrorFormatter: formatSchemaErrors,
    frameworkErrors: handleFrameworkError,
    return503OnClosing: true,
  };
}

/** Every anonymous API route, in one encapsulated context. */
export const publicRoutes: FastifyPluginAsync<Services> = async (app, services) => {
  for (const routes of [
    submitRoutes,
    betaRoutes,
    betaBatchRoutes,
    statusRoutes,
    certificateRoutes,
    formRoutes,
    proofRoutes,
    coseReceiptRoutes,
    scittKeyRoutes,
    scittEntryRoutes,
    siteConfigRoutes,
    tsaRoutes,
    sigstoreTimestampRoutes,
    feedRoutes,
    hashStatusRoutes,
    crawlerRoutes,
    verifyPreviewRoutes,
  ]) {
    await app.register(routes, services);
  }
};

const appPlugin: FastifyPluginAsync<AppOptions> = async (fastify, options) => {
  const { config, ingest } = options;
  let keys: PublicKeys | undefined;
  const publicKeys = (): PublicKeys => (keys ??= loadPublicKeys(config.keys));
  const store = options.store;
  const cache = path.join(path.dirname(path.resolve(config.db)), 'cache');
  const clockCheck = options.checkClock
    ? createClockCheck({ databaseTime: async () => (await store.databaseTime()) ?? Date.now(), log: fastify.log })
    : undefined;
  const services: Services = {
    config,
    ingest,
    clock: options.clock,
    store: options.store,
    archive: createArchiveView(config.archive, options.archiveAccess, publicKeys, cache),
    publicKeys,
    mailer: options.mailer,
    gate: createSubmissionGate({ archive: config.archive, log: fastify.log, ...(clockCheck ? { clockCheck } : {}) }),
  };
  if (clockCheck) {
    await clockCheck.measure();
    fastify.addHook('onClose', async () => clockCheck.stop());
  }

  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, parseJsonBody);
  // A full disk is reported to the gate (queue-stats, one log line a minute), not logged per request.
  fastify.setErrorHandler(errorHandler(services.gate));
  // Every answer's Date header is this server's clock (a development clock moves it: runtime/clock.ts), so the
  // client and the site take their countdowns and retry times from the server, not from their own clocks.
  fastify.addHook('onSend', async (_request, reply, payload) => {
    reply.header('date', services.clock().toUTCString());
    return payload;
  });
  // Every JSON error body carries `message` beside `error` (docs/API.md).
  fastify.addHook('preSerialization', addErrorMessage);
  // Without TIMESEAL_ORIGIN, a browser on 127.0.0.1 is sent to the origin's address (one origin for sessions).
  if (ingest.defaultOrigin) fastify.addHook('onRequest', devOriginRedirect(config.origin));
  fastify.setNotFoundHandler(async (request, reply) => {
    if (request.url.startsWith('/api/'))
      return reply
        .code(404)
        .send({ error: `No API endpoint ${request.method} ${request.url.split('?')[0]!.slice(0, 200)}` });
    return sendNotFoundPage(ingest.site, reply);
  });
  registerRequestLog(fastify);
  if (options.metrics) {
    // prom-client is loaded only by a node that serves metrics (METRICS_LISTEN).
    const { createMetrics } = await import('./metrics.ts');
    const metrics = createMetrics({ store: services.store, archive: services.archive, clock: services.clock });
    metrics.observe(fastify);
    options.metrics(metrics);
  }
  fastify.addHook('onClose', async () => {
    await services.store.close();
    services.mailer.close();
  });

  await fastify.register(securityHeaders, { site: SITE_HELMET_OPTIONS, api: API_HELMET_OPTIONS });
  await fastify.register(compress, { global: true, threshold: 1024 });
  await fastify.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Timeseal beta API',
        version: '1.0.0-beta',
        description:
          'Free beta API: timestamp a SHA-256 hash. No authentication and no rate limit during the beta; no SLA.',
      },
      servers: [{ url: config.origin.replace(/\/+$/, '') }],
    },
    // The beta API, and the routes that say `hide: false`: every public route a program may call (the site's
    // submission, the status lookups and ledger lists, proofs and COSE receipts, the receipt keys, the certificate,
    // the feed, POST /tsa and its certificates); no account route. ingest/test/api.test.ts holds it to the routes.
    transform: ({ schema, url }) => ({
      schema: {
        ...(schema as object),
        hide: (schema as { hide?: boolean } | undefined)?.hide === false ? false : !url.startsWith('/api/v1/'),
      } as typeof schema,
      url,
    }),
  });
  fastify.get('/api/openapi.json', { schema: { hide: true } }, async () => fastify.swagger());

  await fastify.register(publicRoutes, services);
  await fastify.register(accountRoutes, {
    ...services,
    accounts: options.accounts ?? loadAccountsConfig(config.origin),
  });
  await fastify.register(staticRoutes, {
    site: ingest.site,
    archive: config.archive,
    keys: config.keys,
    cache,
    index: options.archiveAccess,
    ...(options.indexJsonWaitMs !== undefined ? { indexJsonWaitMs: options.indexJsonWaitMs } : {}),
  });
};
// Not encapsulated (fastify-plugin): the parser, error and 404 handlers above apply to the whole server.
export const app = fp(appPlugin, { name: 'timeseal-app' });

/** A Fastify instance with the app registered: used by server.ts, the tests and the benchmark. */
export async function buildApp(options: AppOptions, logger?: Logger): Promise<FastifyInstance> {
  const fastify = Fastify(serverOptions(options.ingest, logger));
  await fastify.register(app, options);
  return fastify;
}
