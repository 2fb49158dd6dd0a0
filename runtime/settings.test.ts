// The settings table's readings (runtime/settings.ts, runtime/setting-parsers.ts): a table of texts each parser
// takes, with the value it gives, and of texts it refuses, with the sentence that names the variable; an unset,
// empty or blank variable gives the default.
import { describe, expect, it } from 'vitest';
import { UsageError } from './usage-error.ts';
import { setting, SETTINGS, type SettingName } from './settings.ts';

const read = (name: SettingName, text: string | undefined) => setting({ [name]: text }, name);

describe('setting', () => {
  it('an unset, empty or blank variable is its default (undefined without one)', () => {
    for (const text of [undefined, '', '   ']) {
      expect(read('OTS_TIMEOUT_MS', text)).toBe(10_000);
      expect(read('HTTP_IDLE_TIMEOUT', text)).toBe(120_000);
      expect(read('STATUS_LOOKUP_RATE', text)).toEqual({ count: 120, unit: 'minute', windowMs: 60_000 });
      expect(read('TSA_MIN', text)).toBeUndefined();
      expect(read('TIMESEAL_DEBUG', text)).toBeUndefined();
    }
  });

  it('every default is a text its own parser takes', () => {
    for (const [name, entry] of Object.entries(SETTINGS) as Array<[SettingName, { default?: string }]>)
      if (entry.default !== undefined) expect(() => setting({}, name), name).not.toThrow();
  });

  it.each([
    ['TIMESEAL_DATABASE_POOL', '1000', 1000],
    ['TSA_DAYS_PER_RUN', ' 7 ', 7],
    ['HTTP_HEADERS_TIMEOUT', '2.5', 2500],
    ['TIMESEAL_SCHEDULE_LEASE_SECONDS', '1.5', 1500],
    ['PORT', '0', 0],
    ['TSA_URLS', ' https://a.example , ,https://b.example', ['https://a.example', 'https://b.example']],
    ['BITCOIN_ESPLORA_URL', 'http://127.0.0.1:3002', 'http://127.0.0.1:3002'],
    ['BITCOIN_NETWORK', 'regtest', 'regtest'],
    ['TIMESEAL_S3_ACCEPT_PLAIN_PUTS', '1', '1'],
    ['BETA_API_RATE', '10 / minute', { count: 10, unit: 'minute', windowMs: 60_000 }],
    ['METRICS_LISTEN', '[::1]:9464', { host: '::1', port: 9464 }],
    ['TRUST_PROXY', 'false', undefined],
    ['TRUST_PROXY', '2', 2],
    ['TIMESEAL_DEBUG', '1', true],
  ] as const)('%s=%j reads as %j', (name, text, value) => {
    expect(read(name, text)).toEqual(value);
  });

  it.each([
    [
      'TIMESEAL_DATABASE_POOL',
      '1001',
      /^TIMESEAL_DATABASE_POOL must be a whole number of connections, from 1 to 1000, got "1001"$/,
    ],
    ['OTS_TIMEOUT_MS', '1e4', /^OTS_TIMEOUT_MS must be a whole number of milliseconds, at least 1, got "1e4"$/],
    ['ANCHOR_DAYS_PER_RUN', '0', /^ANCHOR_DAYS_PER_RUN must be a whole number of days, at least 1, got "0"$/],
    ['HTTP_REQUEST_TIMEOUT', '0', /^HTTP_REQUEST_TIMEOUT must be a number of seconds above 0, got "0"$/],
    [
      'TIMESEAL_SCHEDULE_LEASE_SECONDS',
      '0.5',
      /^TIMESEAL_SCHEDULE_LEASE_SECONDS must be a number of seconds at least 1/,
    ],
    ['PORT', '65536', /^PORT is not a port number: 65536$/],
    ['BITCOIN_NETWORK', 'testnet', /^BITCOIN_NETWORK must be mainnet or regtest, got "testnet"$/],
    ['LOG_LEVEL', 'verbose', /^LOG_LEVEL must be fatal, error, warn, info, debug, trace or silent, got "verbose"$/],
    ['TIMESEAL_S3_ACCEPT_PLAIN_PUTS', 'yes', /^TIMESEAL_S3_ACCEPT_PLAIN_PUTS must be 1 or 0, got "yes"$/],
    ['BITCOIN_RPC_URL', 'ftp://node', /^BITCOIN_RPC_URL must be http\(s\): ftp:\/\/node$/],
    ['DONATION_URL', 'https://u:p@donate.example', /^DONATION_URL must be an http\(s\) URL without credentials/],
    ['STRIPE_API_BASE', 'not a url', /^STRIPE_API_BASE is not a URL: not a url$/],
    ['TIMESEAL_ARCHIVE_CACHE', 's3://other', /^TIMESEAL_ARCHIVE_CACHE must be a folder: s3:\/\/other$/],
    ['STATUS_LOOKUP_RATE', 'lots', /^STATUS_LOOKUP_RATE must be a count per second, minute, hour or day/],
    ['METRICS_LISTEN', 'localhost:0', /^METRICS_LISTEN must be a port \(on 127\.0\.0\.1\) or HOST:PORT/],
    ['TRUST_PROXY', 'true', /^TRUST_PROXY=true would let every client choose its own address/],
  ] as const)('%s=%j is refused, naming it', (name, text, message) => {
    expect(() => read(name, text)).toThrow(UsageError);
    expect(() => read(name, text)).toThrow(message);
  });
});
