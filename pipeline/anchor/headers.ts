// Bitcoin block headers for verifying OpenTimestamps Bitcoin attestations, from one of two sources behind one
// interface: an Esplora REST server (BITCOIN_ESPLORA_URL: /block-height/:h, /block/:hash/header,
// /blocks/tip/height) or bitcoind's JSON-RPC (BITCOIN_RPC_URL: getblockhash, getblockheader, getblockcount).
// A header is accepted only when its double SHA-256 is the block hash the source names for the height, its
// proof of work meets its nBits within the network's limit (core/bitcoin.ts), and, on mainnet, its difficulty
// is plausible for its height (below). A lying source can thus at worst withhold headers or name another
// block; it cannot make a forged merkle root verify without doing the proof of work.
import {
  blockHash,
  checkProofOfWork,
  POW_LIMIT,
  targetFromBits,
  parseBlockHeader,
  verifyBitcoinAttestation,
  type BitcoinNetwork,
  type VerifiedAttestation,
} from '../../core/bitcoin.ts';
import { fromHex } from '../../core/encoding.ts';
import { FormatError, MismatchError, NotFoundError, TimesealError } from '../../core/errors.ts';
import type { HeaderSourceConfig } from './config.ts';
import { bodyExcerpt, boundedFetch } from '../http.ts';

/**
 * Contract: `blockHashAt(h)` is the hash (explorer order, lower-case hex) of the block the source has at height
 * h on its best chain, or a NotFoundError when the chain is shorter; `header(hash)` the 80 raw header bytes of
 * that block; `tipHeight()` the height of the best chain's tip. Every call has a timeout; failures throw.
 */
export interface HeaderSource {
  readonly name: string;
  blockHashAt(height: number): Promise<string>;
  header(hash: string): Promise<Uint8Array>;
  tipHeight(): Promise<number>;
}

const MAX_REST_ANSWER = 1024;
const MAX_RPC_ANSWER = 64 * 1024;
const HASH_HEX = /^[0-9a-f]{64}$/;

/**
 * Plausible mainnet difficulty: from each height on, the least difficulty a real block can have. Each value is
 * the real difficulty at that height (bitcoind `getblockheader`) divided by 16, a margin far wider than any
 * drop Bitcoin has seen, so a header with less work than this at that height is a forgery made cheaply.
 */
const MAINNET_MIN_DIFFICULTY: ReadonlyArray<readonly [height: number, difficulty: bigint]> = [
  [100_000, 900n], // 14,484
  [200_000, 170_000n], // 2,864,140
  [300_000, 500_000_000n], // 8,000,872,135
  [400_000, 10_000_000_000n], // 163,491,654,908
  [500_000, 100_000_000_000n], // 1,873,105,475,221
  [600_000, 800_000_000_000n], // 13,691,480,038,694
  [700_000, 1_000_000_000_000n], // 18,415,156,832,118
  [800_000, 3_000_000_000_000n], // 53,911,173,001,054
];

/** On mainnet: a MismatchError when the header's difficulty is implausibly low for `height`. */
export function checkPlausibleDifficulty(header: Uint8Array, height: number, network: BitcoinNetwork): void {
  if (network !== 'mainnet') return;
  let min = 1n;
  for (const [from, difficulty] of MAINNET_MIN_DIFFICULTY) if (height >= from) min = difficulty;
  const maxTarget = POW_LIMIT.mainnet / min;
  const target = targetFromBits(parseBlockHeader(header).bits);
  if (target > maxTarget) {
    throw new MismatchError(
      `block header at height ${height}: difficulty implausibly low for mainnet`,
      `difficulty >= ${min}`,
      `difficulty ${POW_LIMIT.mainnet / target}`,
    );
  }
}

/** The header at `height`, accepted only after the checks in this module's opening comment. */
export async function fetchVerifiedHeader(
  source: HeaderSource,
  height: number,
  network: BitcoinNetwork,
): Promise<{ header: Uint8Array; hash: string }> {
  const hash = await source.blockHashAt(height);
  const header = await source.header(hash);
  const actual = blockHash(header);
  if (actual !== hash)
    throw new MismatchError(`${source.name}: header of block ${height} hashes to another block`, hash, actual);
  checkProofOfWork(header, network);
  checkPlausibleDifficulty(header, height, network);
  return { header, hash };
}

/** Verifies one Bitcoin attestation (message = merkle root, header byte order) against the source. */
export async function verifyAttestation(
  source: HeaderSource,
  message: Uint8Array,
  height: number,
  network: BitcoinNetwork,
): Promise<VerifiedAttestation> {
  const { header, hash } = await fetchVerifiedHeader(source, height, network);
  return verifyBitcoinAttestation(message, height, header, hash, network);
}

export function headerSourceFor(config: HeaderSourceConfig, timeoutMs: number): HeaderSource {
  return config.kind === 'rpc' ? rpcSource(config.url, timeoutMs) : esploraSource(config.url, timeoutMs);
}

function checkHeight(height: number): void {
  if (!Number.isSafeInteger(height) || height < 0) throw new FormatError('block height', `not a height: ${height}`);
}

function parseHash(text: string, what: string): string {
  const hash = text.trim().toLowerCase();
  if (!HASH_HEX.test(hash))
    throw new FormatError(what, `expected a 64-hex block hash, got ${JSON.stringify(text.slice(0, 80))}`);
  return hash;
}

function parseHeaderHex(text: string, what: string): Uint8Array {
  const hex = text.trim();
  if (!/^[0-9a-fA-F]{160}$/.test(hex)) throw new FormatError(what, 'expected 160 hex digits (an 80-byte header)');
  return fromHex(hex, what);
}

/** Esplora REST (github.com/Blockstream/esplora API.md). */
export function esploraSource(baseUrl: string, timeoutMs: number): HeaderSource {
  const base = baseUrl.replace(/\/+$/, '');
  const get = async (path: string): Promise<{ status: number; text: string }> => {
    const res = await boundedFetch(`${base}${path}`, { timeoutMs, maxBytes: MAX_REST_ANSWER });
    return { status: res.status, text: new TextDecoder().decode(res.body) };
  };
  const ok = (r: { status: number; text: string }, path: string): string => {
    if (r.status !== 200)
      throw new TimesealError(
        'io',
        `${base}${path}: HTTP ${r.status} ${bodyExcerpt(new TextEncoder().encode(r.text))}`.trim(),
      );
    return r.text;
  };
  return {
    name: `Esplora ${base}`,
    async blockHashAt(height) {
      checkHeight(height);
      const path = `/block-height/${height}`;
      const r = await get(path);
      if (r.status === 404) throw new NotFoundError(`${base}: no block at height ${height} yet`);
      return parseHash(ok(r, path), `${base}${path}`);
    },
    async header(hash) {
      const path = `/block/${parseHash(hash, 'block hash')}/header`;
      return parseHeaderHex(ok(await get(path), path), `${base}${path}`);
    },
    async tipHeight() {
      const path = '/blocks/tip/height';
      const text = ok(await get(path), path).trim();
      if (!/^(0|[1-9][0-9]{0,15})$/.test(text))
        throw new FormatError(`${base}${path}`, `expected a height, got ${JSON.stringify(text.slice(0, 40))}`);
      return Number(text);
    },
  };
}

/** bitcoind JSON-RPC; credentials may be given in the URL (http://user:password@host:8332/). */
export function rpcSource(rawUrl: string, timeoutMs: number): HeaderSource {
  const url = new URL(rawUrl);
  const auth = url.username
    ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
    : undefined;
  url.username = '';
  url.password = '';
  const endpoint = url.toString();
  const shown = `${url.protocol}//${url.host}`;
  let id = 0;
  const call = async (method: string, params: unknown[]): Promise<unknown> => {
    const res = await boundedFetch(endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(auth ? { Authorization: auth } : {}) },
      body: JSON.stringify({ jsonrpc: '1.0', id: ++id, method, params }),
      timeoutMs,
      maxBytes: MAX_RPC_ANSWER,
    });
    let parsed: { result?: unknown; error?: { code?: number; message?: string } | null };
    try {
      parsed = JSON.parse(new TextDecoder().decode(res.body));
    } catch {
      throw new TimesealError('io', `bitcoind ${shown} ${method}: HTTP ${res.status} ${bodyExcerpt(res.body)}`.trim());
    }
    if (parsed.error) {
      if (parsed.error.code === -8 && method === 'getblockhash')
        throw new NotFoundError(`bitcoind ${shown}: no block at height ${String(params[0])} yet`);
      throw new TimesealError(
        'io',
        `bitcoind ${shown} ${method}: ${parsed.error.message ?? 'error'} (code ${parsed.error.code})`,
      );
    }
    if (res.status !== 200) throw new TimesealError('io', `bitcoind ${shown} ${method}: HTTP ${res.status}`);
    return parsed.result;
  };
  return {
    name: `bitcoind ${shown}`,
    async blockHashAt(height) {
      checkHeight(height);
      return parseHash(String(await call('getblockhash', [height])), 'getblockhash');
    },
    async header(hash) {
      return parseHeaderHex(
        String(await call('getblockheader', [parseHash(hash, 'block hash'), false])),
        'getblockheader',
      );
    },
    async tipHeight() {
      const n = await call('getblockcount', []);
      if (!Number.isSafeInteger(n) || (n as number) < 0)
        throw new FormatError('getblockcount', `expected a height, got ${JSON.stringify(n)}`);
      return n as number;
    },
  };
}
