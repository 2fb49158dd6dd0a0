// The ingest service's own settings, read from the environment beside runtime/config.ts (which it does not
// extend): where the built site lives, whether a reverse proxy's X-Forwarded-For is trusted, and how e-mail
// leaves the machine (SMTP_URL / MAIL_FROM, otherwise an outbox folder; docs/CONFIGURATION.md), and the operator's
// optional cap on the beta API (BETA_API_RATE; the product spec sets none during the beta).
import { isIP } from 'node:net';
import path from 'node:path';
import { isLoopbackOrigin, UsageError, type Config } from '../runtime/config.ts';
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
}

/** METRICS_LISTEN: unset or "" = off; "PORT" (on 127.0.0.1) or "HOST:PORT" ("[::1]:9464" for IPv6). */
export function parseListen(name: string, value: string | undefined): { host: string; port: number } | undefined {
  const v = value?.trim();
  if (v === undefined || v === '') return undefined;
  const m = /^(?:(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(v);
  const port = Number(m?.[2]);
  if (m === null || port < 1 || port > 65535) {
    throw new UsageError(
      `${name} must be a port (on 127.0.0.1) or HOST:PORT, like ${name}=127.0.0.1:9464, not ${JSON.stringify(v.slice(0, 60))}`,
    );
  }
  return { host: m[1]?.replace(/^\[|\]$/g, '') ?? '127.0.0.1', port };
}

/** A count per fixed, clock-aligned window (a UTC second, minute, hour or day). */
export interface Rate {
  count: number;
  unit: RateUnit;
  windowMs: number;
}

export type RateUnit = 'second' | 'minute' | 'hour' | 'day';
const UNIT_MS: Record<RateUnit, number> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** BETA_API_RATE: unset or "" = no cap; else "COUNT/UNIT" with UNIT second, minute, hour or day ("600/hour"). */
export function parseRate(name: string, value: string | undefined): Rate | undefined {
  const v = value?.trim();
  if (v === undefined || v === '') return undefined;
  const m = /^(\d{1,9})\s*\/\s*(second|minute|hour|day)$/.exec(v);
  if (m === null || Number(m[1]) < 1) {
    throw new UsageError(
      `${name} must be a count per second, minute, hour or day, like ${name}=600/hour or ${name}=10/minute (leave it unset for no limit), not ${JSON.stringify(v.slice(0, 60))}`,
    );
  }
  const unit = m[2] as RateUnit;
  return { count: Number(m[1]), unit, windowMs: UNIT_MS[unit] };
}

/** The status lookup's budget per address when STATUS_LOOKUP_RATE is unset (ingest/lookup-budget.ts). */
export const DEFAULT_STATUS_LOOKUP_RATE: Rate = { count: 120, unit: 'minute', windowMs: 60_000 };

/** STATUS_LOOKUP_RATE: unset or "" = the default (120/minute); else "COUNT/UNIT" as BETA_API_RATE. */
export function parseStatusLookupRate(value: string | undefined): Rate {
  const v = value?.trim();
  if (v === undefined || v === '') return DEFAULT_STATUS_LOOKUP_RATE;
  const m = /^(\d{1,9})\s*\/\s*(second|minute|hour|day)$/.exec(v);
  if (m === null || Number(m[1]) < 1) {
    throw new UsageError(
      `STATUS_LOOKUP_RATE must be a count per second, minute, hour or day, like STATUS_LOOKUP_RATE=120/minute (the default), not ${JSON.stringify(v.slice(0, 60))}`,
    );
  }
  const unit = m[2] as RateUnit;
  return { count: Number(m[1]), unit, windowMs: UNIT_MS[unit] };
}

/** TRUST_PROXY: unset, "", "0" or "false" = off; an integer = hops; else the proxies' addresses/CIDRs. */
export function parseTrustProxy(value: string | undefined): IngestConfig['trustProxy'] {
  const v = value?.trim();
  if (v === undefined || v === '' || v === '0' || v.toLowerCase() === 'false') return undefined;
  if (v.toLowerCase() === 'true') {
    throw new UsageError(
      'TRUST_PROXY=true would let every client choose its own address (X-Forwarded-For). Set the number of proxies in front of the server (TRUST_PROXY=1 behind one nginx) or their addresses (TRUST_PROXY=10.0.0.5,10.0.0.6).',
    );
  }
  if (/^\d+$/.test(v)) {
    // A count larger than the real number of proxies trusts addresses the client wrote, like `true`.
    if (Number(v) > MAX_PROXY_HOPS)
      throw new UsageError(
        `TRUST_PROXY=${v}: at most ${MAX_PROXY_HOPS} proxies in front of the server; set the number of proxies that really are there (TRUST_PROXY=1 behind one nginx).`,
      );
    return Number(v);
  }
  if (!/^[0-9a-fA-F.:/, ]+$/.test(v))
    throw new UsageError(`TRUST_PROXY must be a hop count or the proxies' addresses: ${v}`);
  for (const entry of v
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== ''))
    checkProxyAddress(entry);
  return v;
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

/** The most proxy hops TRUST_PROXY may name (a CDN and a load balancer in front of nginx is three). */
export const MAX_PROXY_HOPS = 5;

/**
 * One TRUST_PROXY address or CIDR range: a valid address, and a range no wider than a /8 (IPv4) or a /16
 * (IPv6) — wider ranges (0.0.0.0/1 and 128.0.0.0/1 together are everyone) would trust the addresses clients
 * write, as `true` would.
 */
function checkProxyAddress(entry: string): void {
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address!);
  const bits = prefix === undefined ? (family === 4 ? 32 : 128) : /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN;
  if (family === 0 || rest.length > 0 || !(bits <= (family === 4 ? 32 : 128))) {
    throw new UsageError(`TRUST_PROXY: "${entry}" is not an IP address or CIDR range (like 10.0.0.5 or 10.0.0.0/24)`);
  }
  if (bits < (family === 4 ? 8 : 16)) {
    throw new UsageError(
      `TRUST_PROXY: "${entry}" trusts far more than your proxies (at most a /${family === 4 ? 8 : 16} range); list the proxies' own addresses.`,
    );
  }
}

/** DONATION_URL: an absolute http(s) URL without credentials, or unset/empty. */
export function parseDonationUrl(value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new UsageError(`DONATION_URL is not a URL: ${value}`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password) {
    throw new UsageError(`DONATION_URL must be an http(s) URL without credentials: ${value}`);
  }
  return url.href;
}

/**
 * FREE_TIER_DAILY_LIMIT: every test on a local server comes from 127.0.0.1 and shares its free-tier
 * count, so a development server may raise it. Honoured only without TIMESEAL_ORIGIN or with a loopback one
 * (localhost, 127.x, [::1]); a public server refuses to start with it — its free tier is 2 a day (docs/API.md).
 */
export function parseFreeTierLimit(value: string | undefined, origin: string | undefined): number {
  if (value === undefined || value.trim() === '') return FREE_PER_DAY;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1 || n > 1_000_000)
    throw new UsageError(`FREE_TIER_DAILY_LIMIT must be a whole number from 1 to 1000000: ${value}`);
  if (origin !== undefined && !isLoopbackOrigin(origin)) {
    throw new UsageError(
      `FREE_TIER_DAILY_LIMIT is for a local development server only (TIMESEAL_ORIGIN unset or on localhost); this one is ${origin}, whose free tier stays ${FREE_PER_DAY} a day`,
    );
  }
  return n;
}

export function loadIngestConfig(config: Config, env: NodeJS.ProcessEnv = process.env): IngestConfig {
  const host = new URL(config.origin).hostname;
  const mailFrom = env.MAIL_FROM || `Timeseal <noreply@${host.includes('.') ? host : `${host}.localdomain`}>`;
  const smtpUrl = env.SMTP_URL || undefined;
  if (smtpUrl !== undefined && !/^smtps?:\/\//.test(smtpUrl))
    throw new UsageError(`SMTP_URL must start with smtp:// or smtps://`);
  return {
    site: env.TIMESEAL_SITE || 'dist/site',
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    smtpUrl,
    mailFrom,
    contactTo: env.CONTACT_TO || mailFrom,
    outbox: env.TIMESEAL_OUTBOX || path.join(path.dirname(config.db), 'outbox'),
    betaApiRate: parseRate('BETA_API_RATE', env.BETA_API_RATE),
    statusLookupRate: parseStatusLookupRate(env.STATUS_LOOKUP_RATE),
    metricsListen: parseListen('METRICS_LISTEN', env.METRICS_LISTEN),
    paymentsAvailable: loadAccountsConfig(config.origin, env).stripe !== undefined,
    donationUrl: parseDonationUrl(env.DONATION_URL),
    freePerDay: parseFreeTierLimit(env.FREE_TIER_DAILY_LIMIT, env.TIMESEAL_ORIGIN),
    defaultOrigin: env.TIMESEAL_ORIGIN === undefined,
  };
}
