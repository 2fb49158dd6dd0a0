// Security headers for every answer (CSP, nosniff, frame-ancestors, referrer policy, HSTS …), computed by
// helmet once at start-up and set on each reply as one precomputed object: pages get the site's set, JSON
// answers a smaller set made for data.
//
// Why not @fastify/helmet: its onRequest hook calls helmet(options) again for every request, re-parsing the
// CSP directives each time; on the beta API that was about 12 % of the server's CPU per submission
// (`node --cpu-prof`, bench/ingest.bench.ts). Our headers do not depend on the request (no nonces), so they
// are computed once. The offline verifier page sets its own CSP (site-files.ts), which is kept.
//
// Cross-origin access (ingest/README.md, "Cross-origin") is decided here too, by route: the public, unauthenticated reads and
// the beta API answer any origin (CORS `*`, CORP cross-origin, never credentials), every other route none.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';

/** The headers helmet sets for `options`, captured once (helmet writes them with setHeader). */
export function helmetHeaders(options: Readonly<HelmetOptions>): Record<string, string> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  let failure: unknown;
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, (err?: unknown) => {
    failure = err;
  });
  if (failure) throw failure;
  return headers;
}

/** The site's CSP. Astro inlines small hydration scripts, hence 'unsafe-inline' for scripts (ingest/README.md). */
export const CSP_DIRECTIVES = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'", "'unsafe-inline'", "'wasm-unsafe-eval'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  frameAncestors: ["'none'"],
  objectSrc: ["'none'"],
  baseUri: ["'self'"],
};

/**
 * The offline verifier page (site/offline-verifier/) carries its own strict policy; served from the site it must also be
 * allowed the one request a person can ask for: fetching a block header from an Esplora URL they type.
 */
export const VERIFIER_PAGE = 'offline-verifier.html';
export const VERIFIER_CSP =
  "default-src 'none'; script-src 'unsafe-inline' 'wasm-unsafe-eval'; style-src 'unsafe-inline'; img-src data:; connect-src https: http:; manifest-src 'self'; worker-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Pages and other documents: the site's policy (helmet's full set). */
export const SITE_HELMET_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: { useDefaults: false, directives: CSP_DIRECTIVES },
  referrerPolicy: { policy: 'strict-origin-when-cross-origin' },
  frameguard: { action: 'deny' },
};

/**
 * JSON answers: the headers that mean something for data (OWASP REST Security Cheat Sheet): a policy that
 * allows nothing (`default-src 'none'; frame-ancestors 'none'`), nosniff, no framing, the referrer policy and
 * HSTS. The document-only headers (COOP, Origin-Agent-Cluster, X-DNS-Prefetch-Control, X-Download-Options,
 * X-Permitted-Cross-Domain-Policies, X-XSS-Protection, CORP) are left out: about 400 bytes less on every
 * API answer, and CORP same-origin would only get in the way of the public API's cross-origin users.
 */
export const API_HELMET_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  referrerPolicy: { policy: 'strict-origin-when-cross-origin' },
  frameguard: { action: 'deny' },
  crossOriginOpenerPolicy: false,
  crossOriginResourcePolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
};

const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json\b/;

const READ = ['GET', 'HEAD'] as const;
/** Request headers a cross-origin reader may send: conditional and range requests of the archive. */
const READ_HEADERS = 'Range, If-None-Match, If-Modified-Since, If-Range';

/**
 * Routes (Fastify route patterns) that any web page may call, with their methods: the archive, the public
 * keys, proofs, the public status and verification reads (docs/API.md) and the beta API. Anything not
 * listed never answers CORS, whatever a route sets: the accounts, `/api/submit` and `/api/certificate.php`
 * (which read the session cookie), the contact and waitlist forms, Stripe, and the site's pages.
 */
export const PUBLIC_ROUTES: Readonly<Record<string, readonly string[]>> = {
  '/ledgers/*': READ,
  '/keys/*': READ,
  '/keys/sigstore-trusted-root.json': READ,
  '/api/proof/:hash': READ,
  '/api/proof/:hash.ots': READ,
  '/api/queue-stats.php': READ,
  '/api/ledgers.php': READ,
  '/api/ots-block-info.php': READ,
  '/api/verify-quantum.php': READ,
  '/api/openapi.json': READ,
  '/api/v1/beta/timestamp': ['POST'],
  '/api/v1/beta/timestamps': ['POST'],
  // Sigstore's timestamp API, open to any origin as the reference's (rs/cors' defaults) is.
  '/api/v1/timestamp': ['POST'],
  '/api/v1/timestamp/certchain': READ,
  '/api/status/:hash': READ,
  '/api/ledgers-calendar.php': READ,
};

/** Headers of a public route's answer: any origin, no credentials, readable by a page of any origin. */
const PUBLIC_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'ETag, Content-Range, Accept-Ranges, Retry-After, Date',
  'cross-origin-resource-policy': 'cross-origin',
};

/**
 * Sets the headers on every answer when it is sent, by what it is: JSON gets the API set, anything else the
 * site set. A Content-Security-Policy a route set itself (the offline verifier page) is kept. Then by route:
 * the PUBLIC_ROUTES get the cross-origin headers (over the site set's CORP same-origin), every other route
 * loses any it set. Also answers the public routes' CORS preflights.
 */
const securityHeadersPlugin: FastifyPluginAsync<{ site: HelmetOptions; api: HelmetOptions }> = async (
  fastify,
  options,
) => {
  const site = helmetHeaders(options.site);
  const api = helmetHeaders(options.api);
  const { 'content-security-policy': siteCsp, ...siteRest } = site;
  fastify.addHook('onSend', (request, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && JSON_TYPE.test(type)) reply.headers(api);
    else {
      if (!reply.hasHeader('content-security-policy') && siteCsp !== undefined)
        reply.header('content-security-policy', siteCsp);
      reply.headers(siteRest);
    }
    const route = request.routeOptions.url;
    if (route !== undefined && Object.hasOwn(PUBLIC_ROUTES, route)) reply.headers(PUBLIC_HEADERS);
    else {
      reply.removeHeader('access-control-allow-origin');
      reply.removeHeader('access-control-allow-credentials');
      // Everything else is for our own pages only: JSON answers too (the API set leaves CORP out for the
      // public routes' sake), so a session route's answer cannot be embedded by another site either.
      reply.header('cross-origin-resource-policy', 'same-origin');
    }
    done(null, payload);
  });
  // The preflight a browser sends before a cross-origin call that is not "simple": the beta API's POST with
  // Content-Type: application/json, or a read with If-Range. Cached by the browser for a day.
  for (const [route, methods] of Object.entries(PUBLIC_ROUTES)) {
    const allowHeaders = methods.includes('POST') ? 'Content-Type' : READ_HEADERS;
    fastify.options(route, { schema: { hide: true } }, async (_request, reply) => {
      await reply
        .code(204)
        .header('access-control-allow-methods', [...methods, 'OPTIONS'].join(', '))
        .header('access-control-allow-headers', allowHeaders)
        .header('access-control-max-age', '86400')
        .send();
    });
  }
};
// Not encapsulated (fastify-plugin): the headers apply to every route of the server.
export const securityHeaders = fp(securityHeadersPlugin, { name: 'timeseal-security-headers' });
