// Anchoring settings from the environment (docs/OPERATIONS.md §2): the calendars, how many must
// answer, which calendars are trusted for upgrades, the Bitcoin header source and network, timeouts, and the
// bounds of one scheduled run.
import { UsageError } from '../../runtime/config.ts';
import { setting } from '../../runtime/settings.ts';
import type { BitcoinNetwork } from '../../core/bitcoin.ts';

/** The public OpenTimestamps calendar pool (the reference client's defaults, otsclient/args.py). */
export const DEFAULT_CALENDARS = [
  'https://a.pool.opentimestamps.org',
  'https://b.pool.opentimestamps.org',
  'https://a.pool.eternitywall.com',
  'https://ots.btc.catallaxy.com',
];

/**
 * Calendars trusted for upgrades besides the configured ones: the reference client's default whitelist
 * (otsclient/args.py). The pool servers answer with pending attestations that name the calendars behind them
 * (alice.btc.calendar.opentimestamps.org, finney.calendar.eternitywall.com, …), so upgrades must reach those.
 */
export const DEFAULT_TRUSTED_CALENDARS = [
  'https://*.calendar.opentimestamps.org',
  'https://*.calendar.eternitywall.com',
  'https://*.calendar.catallaxy.com',
];

export const DEFAULT_ESPLORA_URL = 'https://blockstream.info/api';

export type HeaderSourceConfig = { kind: 'esplora'; url: string } | { kind: 'rpc'; url: string };

export interface AnchorConfig {
  calendars: string[];
  /** m: how many calendars must answer a submission for the stamp to count. */
  minCalendars: number;
  /** Patterns (exact URLs, or `https://*.domain` for any subdomain) trusted for upgrades, configured calendars included. */
  trusted: string[];
  headerSource: HeaderSourceConfig;
  network: BitcoinNetwork;
  calendarTimeoutMs: number;
  bitcoinTimeoutMs: number;
  /** The schedule's runs (pipeline/anchor/backoff.ts): at most this many days stamped, and as many asked for
   * upgrades, in one run (ANCHOR_DAYS_PER_RUN), and no day started once a run has lasted runMs (ANCHOR_RUN_SECONDS). */
  daysPerRun: number;
  runMs: number;
}

/** Lower-cases scheme and host and drops a trailing slash: the form calendar URLs are compared in. */
export function normalizeCalendarUrl(raw: string, name = 'calendar URL'): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${name} is not a URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${name} must be http(s): ${raw}`);
  if (url.username || url.password || url.search || url.hash)
    throw new UsageError(`${name} must not carry credentials, a query or a fragment: ${raw}`);
  return `${url.protocol}//${url.host}${url.pathname}`.replace(/\/+$/, '');
}

/**
 * `stamping: false` is for commands that never submit to calendars (`timeseal ots verify`, `ots upgrade`): they
 * do not read OTS_MIN_CALENDARS, so a stamping setting that is wrong, or right only on the server, cannot stop
 * them; `minCalendars` is then 1.
 */
export function loadAnchorConfig(
  env: NodeJS.ProcessEnv = process.env,
  options: { stamping?: boolean } = {},
): AnchorConfig {
  const stamping = options.stamping ?? true;
  const calendars = [
    ...new Set(
      (setting(env, 'OTS_CALENDARS') ?? DEFAULT_CALENDARS).map((u) => normalizeCalendarUrl(u, 'OTS_CALENDARS entry')),
    ),
  ];
  const minCalendars = stamping ? setting(env, 'OTS_MIN_CALENDARS') : 1;
  if (stamping && minCalendars > calendars.length) {
    throw new UsageError(
      `OTS_MIN_CALENDARS is ${minCalendars} but OTS_CALENDARS names only ${calendars.length} calendar${calendars.length === 1 ? '' : 's'}`,
    );
  }
  const extra = setting(env, 'OTS_TRUSTED_CALENDARS') ?? DEFAULT_TRUSTED_CALENDARS;
  for (const p of extra) normalizeCalendarUrl(p.replace('*.', 'wildcard.'), 'OTS_TRUSTED_CALENDARS entry');
  const rpc = setting(env, 'BITCOIN_RPC_URL');
  const esplora = setting(env, 'BITCOIN_ESPLORA_URL');
  if (rpc !== undefined && esplora !== undefined)
    throw new UsageError('set BITCOIN_ESPLORA_URL or BITCOIN_RPC_URL, not both');
  const headerSource: HeaderSourceConfig =
    rpc === undefined ? { kind: 'esplora', url: esplora ?? DEFAULT_ESPLORA_URL } : { kind: 'rpc', url: rpc };
  return {
    calendars,
    minCalendars,
    trusted: [...calendars, ...extra],
    headerSource,
    network: setting(env, 'BITCOIN_NETWORK'),
    calendarTimeoutMs: setting(env, 'OTS_TIMEOUT_MS'),
    bitcoinTimeoutMs: setting(env, 'BITCOIN_TIMEOUT_MS'),
    daysPerRun: setting(env, 'ANCHOR_DAYS_PER_RUN'),
    runMs: 1000 * setting(env, 'ANCHOR_RUN_SECONDS'),
  };
}

/** Whether a pending attestation's calendar URI may be asked for upgrades. */
export function isTrustedCalendar(uri: string, trusted: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  const normalized = `${url.protocol}//${url.host}${url.pathname}`.replace(/\/+$/, '');
  for (const pattern of trusted) {
    const star = /^(https?:\/\/)\*\.(.+)$/.exec(pattern.toLowerCase());
    if (star) {
      const [, scheme, domain] = star;
      if (
        url.protocol === scheme!.slice(0, -2) &&
        url.host.endsWith(`.${domain!.replace(/\/+$/, '')}`) &&
        (url.pathname === '/' || url.pathname === '')
      )
        return true;
    } else if (normalized === pattern.replace(/\/+$/, '')) {
      return true;
    }
  }
  return false;
}
