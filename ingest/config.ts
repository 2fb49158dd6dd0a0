// The ingest service's own settings, read from the environment beside runtime/config.ts (which it does not
// extend): where the built site lives, whether a reverse proxy's X-Forwarded-For is trusted, and how e-mail
// leaves the machine (SMTP_URL / MAIL_FROM, otherwise an outbox folder; docs/CONFIGURATION.md), and the operator's
// optional cap on the beta API (BETA_API_RATE; the product spec sets none during the beta).
import path from 'node:path';
import { isLoopbackOrigin, UsageError, type Config } from '../runtime/config.ts';
import type { Rate } from '../runtime/setting-parsers.ts';
import { setting } from '../runtime/settings.ts';
import { loadAccountsConfig } from './accounts/config.ts';
import { FREE_PER_DAY } from './limits.ts';

export interface IngestConfig {
  /** The built site (Astro's dist/site). May be absent: the server then answers with built-in pages only. */
  site: string;
  /**
   * Fastify `trustProxy`: undefined = use the socket's address (X-Forwarded-For is ignored); a number = trust
   * that many proxy hops; a string = comma-separated trusted proxy addresses/CIDRs. Never "trust every hop":
   * with it the leftmost X-Forwarded-For entry, which any client writes, would be its address.
   */
  trustProxy: number | string | undefined;
  /** SMTP connection URL (smtp:// or smtps://); undefined writes each e-mail to `outbox` instead. */
  smtpUrl: string | undefined;
  mailFrom: string;
  /** Where contact-form messages go. */
  contactTo: string;
  outbox: string;
  /** BETA_API_RATE: a cap on beta-API submissions per client address, or undefined (the default: no cap). */
  betaApiRate: Rate | undefined;
  /** STATUS_LOOKUP_RATE: the per-address budget of GET /api/status/<hash> (lookup-budget.ts; default 120/minute). */
  statusLookupRate: Rate;
  /** Whether Stripe is configured (the rule of accounts/config.ts): the free tier's 429 offers the upgrade only then. */
  paymentsAvailable: boolean;
  /** DONATION_URL: the card-payment donation page the /beta-api page links to (GET /api/site-config); unset, no link. */
  donationUrl: string | undefined;
  /** The free tier's daily cap: 2 (docs/API.md), or FREE_TIER_DAILY_LIMIT on a local development server. */
  freePerDay: number;
  /** TIMESEAL_ORIGIN is unset (a development server): page visits on a loopback address go to the origin (dev-origin.ts). */
  defaultOrigin: boolean;
  /** METRICS_LISTEN: where `serve` answers GET /metrics (metrics.ts), or undefined (the default: no metrics). */
  metricsListen: { host: string; port: number } | undefined;
  /** SCITT_ISSUER_KEYS: the JSON file of the keys each SCITT `iss` may sign with (runtime/statement-policy.ts), or undefined. */
  scittIssuerKeys: string | undefined;
}

/**
 * The start-up warning of `timeseal serve` when TRUST_PROXY is a hop count and HOST is not a loopback address:
 * a hop count trusts X-Forwarded-For from whatever peer connects, so a client that reaches the port directly,
 * not through the proxy, writes its own address into the header and gets a fresh per-address limit with each
 * value. Proxy addresses trust the header only from those peers. Undefined when there is nothing to say.
 */
export function trustProxyWarning(host: string, trustProxy: IngestConfig['trustProxy']): string | undefined {
  if (typeof trustProxy !== 'number' || isLoopbackHost(host)) return undefined;
  return `TRUST_PROXY=${trustProxy} is a hop count and HOST=${host} is not a loopback address: a client that reaches this port directly, not through the proxy, chooses its own address in X-Forwarded-For and passes every per-address limit. Set TRUST_PROXY to the proxies' addresses (like TRUST_PROXY=10.0.0.5), or listen on 127.0.0.1 behind a proxy on the same machine (docs/OPERATIONS.md §5, "Behind a proxy").`;
}

function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h) || /^::ffff:127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * FREE_TIER_DAILY_LIMIT: every test on a local server comes from 127.0.0.1 and shares its free-tier
 * count, so a development server may raise it. Honoured only without TIMESEAL_ORIGIN or with a loopback one
 * (localhost, 127.x, [::1]); a public server refuses to start with it — its free tier is 2 a day (docs/API.md).
 */
function freeTierLimit(env: NodeJS.ProcessEnv): number {
  const n = setting(env, 'FREE_TIER_DAILY_LIMIT');
  if (n === undefined) return FREE_PER_DAY;
  const origin = setting(env, 'TIMESEAL_ORIGIN');
  if (origin !== undefined && !isLoopbackOrigin(origin)) {
    throw new UsageError(
      `FREE_TIER_DAILY_LIMIT is for a local development server only (TIMESEAL_ORIGIN unset or on localhost); this one is ${origin}, whose free tier stays ${FREE_PER_DAY} a day`,
    );
  }
  return n;
}

export function loadIngestConfig(config: Config, env: NodeJS.ProcessEnv = process.env): IngestConfig {
  const host = new URL(config.origin).hostname;
  const mailFrom =
    setting(env, 'MAIL_FROM') ?? `Timeseal <noreply@${host.includes('.') ? host : `${host}.localdomain`}>`;
  const smtpUrl = setting(env, 'SMTP_URL');
  if (smtpUrl !== undefined && !/^smtps?:\/\//.test(smtpUrl))
    throw new UsageError(`SMTP_URL must start with smtp:// or smtps://`);
  return {
    site: setting(env, 'TIMESEAL_SITE'),
    trustProxy: setting(env, 'TRUST_PROXY'),
    smtpUrl,
    mailFrom,
    contactTo: setting(env, 'CONTACT_TO') ?? mailFrom,
    outbox: setting(env, 'TIMESEAL_OUTBOX') ?? path.join(path.dirname(config.db), 'outbox'),
    betaApiRate: setting(env, 'BETA_API_RATE'),
    statusLookupRate: setting(env, 'STATUS_LOOKUP_RATE'),
    metricsListen: setting(env, 'METRICS_LISTEN'),
    paymentsAvailable: loadAccountsConfig(config.origin, env).stripe !== undefined,
    donationUrl: setting(env, 'DONATION_URL')?.href,
    freePerDay: freeTierLimit(env),
    defaultOrigin: setting(env, 'TIMESEAL_ORIGIN') === undefined,
    scittIssuerKeys: setting(env, 'SCITT_ISSUER_KEYS'),
  };
}
