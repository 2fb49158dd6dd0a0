// The readers of settings' texts (runtime/settings.ts names which variable each one reads). Each takes the
// variable's text, never empty (an empty variable is an unset one), and the variable's name, and returns the
// value or throws a UsageError whose sentence names the variable, says what it must be, and shows what it got.
import { isIP } from 'node:net';
import { UsageError } from './usage-error.ts';

export type Parser<T> = (text: string, name: string) => T;

const got = (text: string) => JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);

/** The text as it is (a path, a key, an address the loader or a library checks). */
export const asText: Parser<string> = (text) => text;

/** Set to anything: true. */
export const asFlag: Parser<boolean> = () => true;

/** A whole number of `unit` from `min` (to `max`). */
export function wholeNumber(unit: string, min: number, max?: number): Parser<number> {
  return (text, name) => {
    const n = Number(text.trim());
    if (!/^\d+$/.test(text.trim()) || n < min || (max !== undefined && n > max)) {
      const range = max === undefined ? `at least ${min}` : `from ${min} to ${max}`;
      throw new UsageError(`${name} must be a whole number of ${unit}, ${range}, got ${got(text)}`);
    }
    return n;
  };
}

/** A number of seconds (decimals allowed) above 0, or at least `min`: the value in milliseconds. */
export function seconds(min?: number): Parser<number> {
  return (text, name) => {
    const n = Number(text.trim());
    if (!/^\d+(\.\d+)?$/.test(text.trim()) || (min === undefined ? n <= 0 : n < min)) {
      const range = min === undefined ? 'above 0' : `at least ${min}`;
      throw new UsageError(`${name} must be a number of seconds ${range}, got ${got(text)}`);
    }
    return Math.round(n * 1000);
  };
}

/** A TCP port, 0 to 65535 (0: any free port). */
export const port: Parser<number> = (text, name) => {
  const n = Number(text.trim());
  if (!/^\d{1,5}$/.test(text.trim()) || n > 65535) throw new UsageError(`${name} is not a port number: ${text}`);
  return n;
};

/** One of `values`, exactly. */
export function oneOf<const V extends string>(values: readonly V[]): Parser<V> {
  return (text, name) => {
    if ((values as readonly string[]).includes(text)) return text as V;
    const choices = `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;
    throw new UsageError(`${name} must be ${choices}, got ${got(text)}`);
  };
}

/** Comma-separated entries, each trimmed, empty ones dropped. */
export const commaList: Parser<string[]> = (text) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** An absolute http(s) URL; with `credentials: false`, one without a user name or password. */
export function httpUrl(options: { credentials: boolean } = { credentials: true }): Parser<URL> {
  return (text, name) => {
    let url: URL;
    try {
      url = new URL(text.trim());
    } catch {
      throw new UsageError(`${name} is not a URL: ${text}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${name} must be http(s): ${text}`);
    if (!options.credentials && (url.username || url.password))
      throw new UsageError(`${name} must be an http(s) URL without credentials: ${text}`);
    return url;
  };
}

/** An absolute http(s) URL, kept as written (a base that paths are appended to). */
export const httpUrlText: Parser<string> = (text, name) => {
  httpUrl()(text, name);
  return text.trim();
};

/** A folder on this machine, not an `s3://` URL. */
export const folder: Parser<string> = (text, name) => {
  if (text.startsWith('s3://')) throw new UsageError(`${name} must be a folder: ${text}`);
  return text;
};

/** A count per fixed, clock-aligned window (a UTC second, minute, hour or day). */
export interface Rate {
  count: number;
  unit: RateUnit;
  windowMs: number;
}

export type RateUnit = 'second' | 'minute' | 'hour' | 'day';
const UNIT_MS: Record<RateUnit, number> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** "COUNT/UNIT" with UNIT second, minute, hour or day ("600/hour"); `examples` are shown in the refusal. */
export function rate(examples: string): Parser<Rate> {
  return (text, name) => {
    const m = /^(\d{1,9})\s*\/\s*(second|minute|hour|day)$/.exec(text.trim());
    if (m === null || Number(m[1]) < 1) {
      throw new UsageError(
        `${name} must be a count per second, minute, hour or day, like ${examples}, not ${got(text.trim())}`,
      );
    }
    const unit = m[2] as RateUnit;
    return { count: Number(m[1]), unit, windowMs: UNIT_MS[unit] };
  };
}

/** "PORT" (on 127.0.0.1) or "HOST:PORT" ("[::1]:9464" for IPv6). */
export const listenAddress: Parser<{ host: string; port: number }> = (text, name) => {
  const v = text.trim();
  const m = /^(?:(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(v);
  const n = Number(m?.[2]);
  if (m === null || n < 1 || n > 65535) {
    throw new UsageError(
      `${name} must be a port (on 127.0.0.1) or HOST:PORT, like ${name}=127.0.0.1:9464, not ${got(v)}`,
    );
  }
  return { host: m[1]?.replace(/^\[|\]$/g, '') ?? '127.0.0.1', port: n };
};

/** The most proxy hops TRUST_PROXY may name (a CDN and a load balancer in front of nginx is three). */
export const MAX_PROXY_HOPS = 5;

/**
 * TRUST_PROXY, as Fastify's `trustProxy`: undefined for "0" or "false" (the socket's address; X-Forwarded-For
 * ignored), a number of proxy hops, or the proxies' addresses/CIDRs (a string). Never "trust every hop": with it
 * the leftmost X-Forwarded-For entry, which any client writes, would be its address.
 */
export const trustProxy: Parser<number | string | undefined> = (text) => {
  const v = text.trim();
  if (v === '' || v === '0' || v.toLowerCase() === 'false') return undefined;
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
  for (const entry of commaList(v, 'TRUST_PROXY')) checkProxyAddress(entry);
  return v;
};

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
