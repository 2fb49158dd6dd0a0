// What the commands share: the options every command takes, the trust store's place and its saving, the server
// and network named, how paths are shown, and output (one JSON object a line with --json, notes on stderr).
import os from 'node:os';
import path from 'node:path';
import { TimesealClientError } from '../errors.ts';
import { normalizeServer, type HttpOptions } from '../http.ts';
import { parseProofFile, stageOf } from '../proof-file.ts';
import { emptyTrust, encodeTrust, parseTrust } from '../trust.ts';
import type { BitcoinNetwork, ProofFile, TrustData } from '../types.ts';
import { controller } from './exit.ts';
import { readIfExists, writeAtomic } from './files.ts';

export interface Common {
  server?: string;
  trust?: string;
  json?: boolean;
  outDir?: string;
  network?: string;
  timeout: string;
  all?: boolean;
  exclude: string[];
}

export function trustPath(opts: Common): string {
  if (opts.trust !== undefined) return path.resolve(opts.trust);
  if (process.env.TIMESEAL_TRUST) return path.resolve(process.env.TIMESEAL_TRUST);
  const config = process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(config, 'timeseal-client', 'trust.json');
}

export function loadTrust(file: string): TrustData {
  const text = readIfExists(file);
  return text === undefined ? emptyTrust() : parseTrust(text);
}

/** Saves the trust store, merging what another run may have written meanwhile (its pins and checkpoints). */
export function saveTrust(file: string, trust: TrustData): void {
  const onDisk = readIfExists(file);
  if (onDisk !== undefined) {
    try {
      const other = parseTrust(onDisk);
      for (const [url, s] of Object.entries(other.servers)) trust.servers[url] ??= s;
      for (const [origin, log] of Object.entries(other.logs)) {
        const mine = (trust.logs[origin] ??= { checkpoints: [], latest: null });
        for (const c of log.checkpoints) if (!mine.checkpoints.some((x) => x.size === c.size)) mine.checkpoints.push(c);
        mine.checkpoints.sort((a, b) => a.size - b.size);
        mine.latest ??= log.latest;
      }
    } catch {
      // an unreadable store is replaced by this one
    }
  }
  writeAtomic(file, encodeTrust(trust));
}

export function serverOf(opts: Common, required: boolean): string | undefined {
  const s = opts.server ?? process.env.TIMESEAL_SERVER;
  if (s === undefined || s === '') {
    if (required) throw new TimesealClientError('usage', 'no server: give --server URL or set TIMESEAL_SERVER');
    return undefined;
  }
  return normalizeServer(s);
}

export function networkOf(opts: Common): BitcoinNetwork {
  const n = opts.network ?? process.env.TIMESEAL_BITCOIN_NETWORK ?? 'mainnet';
  if (n !== 'mainnet' && n !== 'regtest')
    throw new TimesealClientError('usage', `--network must be mainnet or regtest, got ${JSON.stringify(n)}`);
  return n;
}

export function httpOf(opts: Common): HttpOptions {
  const timeoutMs = Number(opts.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
    throw new TimesealClientError(
      'usage',
      `--timeout must be a whole number of milliseconds, got ${JSON.stringify(opts.timeout)}`,
    );
  return { signal: controller.signal, timeoutMs };
}

const cwd = process.cwd();
/** A path as shown: relative to the working folder when under it. */
export const shown = (abs: string): string => {
  const rel = path.relative(cwd, abs);
  return rel === '' ? '.' : rel.startsWith('..') || path.isAbsolute(rel) ? abs : rel;
};

export function printer(json: boolean) {
  return {
    record(obj: Record<string, unknown>, human: () => string[]): void {
      if (json) process.stdout.write(`${JSON.stringify(obj)}\n`);
      else for (const line of human()) process.stdout.write(`${line}\n`);
    },
    note(text: string): void {
      process.stderr.write(`timeseal-client: ${text}\n`);
    },
  };
}

export function readProof(file: string): ProofFile {
  const text = readIfExists(file);
  if (text === undefined) throw new TimesealClientError('not-found', `${shown(file)}: no such proof file`);
  try {
    return parseProofFile(text);
  } catch (err) {
    throw new TimesealClientError('invalid', `${shown(file)}: ${(err as Error).message}`, { cause: err });
  }
}

export const isComplete = (p: ProofFile) => stageOf(p) === 'anchored' && p.consistency !== null;
