// Bitcoin block headers, as far as verifying an OpenTimestamps Bitcoin attestation needs them: the 80-byte
// header layout, the block hash (double SHA-256), the compact nBits target and the proof-of-work check of
// Bitcoin Core (src/arith_uint256.cpp SetCompact, src/pow.cpp CheckProofOfWork), and the rule of the reference
// OpenTimestamps verifier (notary.py verify_against_blockheader): the attested message is the merkle root.
// Hashes are kept in header byte order; explorers print them byte-reversed (see reversedHex).
import { sha256 } from '@noble/hashes/sha2.js';
import { equalBytes, toHex } from './encoding.ts';
import { FormatError, MismatchError } from './errors.ts';

export type BitcoinNetwork = 'mainnet' | 'regtest';

/** Size of a serialized block header (Bitcoin Core src/primitives/block.h CBlockHeader). */
export const BLOCK_HEADER_SIZE = 80;

/**
 * The easiest target each network accepts. Mainnet: the target of nBits 0x1d00ffff (the genesis block's,
 * difficulty 1), a little under Core's powLimit 00000000ffff…ff, and no real block was ever easier.
 * Regtest: the target of nBits 0x207fffff (Core's regtest genesis), just under its powLimit 7fff…ff.
 */
export const POW_LIMIT: Record<BitcoinNetwork, bigint> = {
  mainnet: 0xffffn << 208n,
  regtest: 0x7fffffn << 232n,
};

export interface BlockHeader {
  readonly version: number;
  /** Hash of the previous block, header byte order. */
  readonly prevBlockHash: Uint8Array;
  /** Merkle root, header byte order (the order OpenTimestamps messages use). */
  readonly merkleRoot: Uint8Array;
  /** nTime: seconds since 1970-01-01T00:00:00Z, as the miner set it. */
  readonly time: number;
  readonly bits: number;
  readonly nonce: number;
}

export interface VerifiedAttestation {
  readonly height: number;
  /** nTime of the block. */
  readonly time: number;
  /** Block hash as explorers print it (byte-reversed hex). */
  readonly blockHash: string;
  /** Merkle root as explorers print it (byte-reversed hex). */
  readonly merkleRoot: string;
}

/** Bytes as explorers print Bitcoin hashes: reversed, lower-case hex. */
export function reversedHex(bytes: Uint8Array): string {
  return toHex(bytes.slice().reverse());
}

export function parseBlockHeader(header: Uint8Array): BlockHeader {
  checkHeaderSize(header);
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  return {
    version: view.getInt32(0, true),
    prevBlockHash: header.slice(4, 36),
    merkleRoot: header.slice(36, 68),
    time: view.getUint32(68, true),
    bits: view.getUint32(72, true),
    nonce: view.getUint32(76, true),
  };
}

/** The block hash, double SHA-256 of the header, as explorers print it (byte-reversed hex). */
export function blockHash(header: Uint8Array): string {
  checkHeaderSize(header);
  return reversedHex(sha256(sha256(header)));
}

/**
 * The 256-bit target encoded by compact nBits (Core's SetCompact). Negative, zero and overflowing encodings
 * are FormatErrors: Core's CheckProofOfWork rejects each of them.
 */
export function targetFromBits(bits: number): bigint {
  if (!Number.isInteger(bits) || bits < 0 || bits > 0xffffffff) {
    throw new FormatError('nBits', `not a 32-bit unsigned integer: ${bits}`);
  }
  const exponent = bits >>> 24;
  const mantissa = bits & 0x007fffff;
  if (mantissa !== 0 && (bits & 0x00800000) !== 0) throw new FormatError('nBits', `negative target (${hex32(bits)})`);
  const overflow =
    mantissa !== 0 && (exponent > 34 || (mantissa > 0xff && exponent > 33) || (mantissa > 0xffff && exponent > 32));
  if (overflow) throw new FormatError('nBits', `target overflows 256 bits (${hex32(bits)})`);
  const target =
    exponent <= 3 ? BigInt(mantissa >>> (8 * (3 - exponent))) : BigInt(mantissa) << BigInt(8 * (exponent - 3));
  if (target === 0n) throw new FormatError('nBits', `zero target (${hex32(bits)})`);
  return target;
}

/**
 * Core's CheckProofOfWork: the header's hash, read as a little-endian number, is at most the target of its
 * nBits, and that target is no easier than the network allows. Throws MismatchError or FormatError.
 */
export function checkProofOfWork(header: Uint8Array, network: BitcoinNetwork): void {
  const { bits } = parseBlockHeader(header);
  const target = targetFromBits(bits);
  if (!Object.hasOwn(POW_LIMIT, network))
    throw new FormatError('network', `unknown Bitcoin network ${String(network)}`);
  const limit = POW_LIMIT[network];
  if (target > limit) {
    throw new MismatchError(`nBits ${hex32(bits)}: target above the ${network} limit`, hex256(limit), hex256(target));
  }
  const hash = blockHash(header);
  if (BigInt(`0x${hash}`) > target) {
    throw new MismatchError(`block ${hash}: proof of work does not meet its target`, `<= ${hex256(target)}`, hash);
  }
}

/**
 * Verifies a Bitcoin attestation at `height` whose message is `message` against the block header found at
 * that height: the header has valid proof of work, hashes to `expectedBlockHash` when given (explorer order),
 * and its merkle root (bytes 36..68) equals the message. Returns the block's time and hash.
 */
export function verifyBitcoinAttestation(
  message: Uint8Array,
  height: number,
  header: Uint8Array,
  expectedBlockHash?: string,
  network: BitcoinNetwork = 'mainnet',
): VerifiedAttestation {
  const parsed = parseBlockHeader(header);
  const hash = blockHash(header);
  if (expectedBlockHash !== undefined && hash !== expectedBlockHash.toLowerCase()) {
    throw new MismatchError(`block header at height ${height}: block hash`, expectedBlockHash.toLowerCase(), hash);
  }
  checkProofOfWork(header, network);
  if (message.length !== 32 || !equalBytes(message, parsed.merkleRoot)) {
    throw new MismatchError(
      `Bitcoin attestation at height ${height}: merkle root of block ${hash}`,
      reversedHex(parsed.merkleRoot),
      reversedHex(message),
    );
  }
  return { height, time: parsed.time, blockHash: hash, merkleRoot: reversedHex(parsed.merkleRoot) };
}

/**
 * When `bytes` parse as a whole Bitcoin transaction (with or without witness), its double SHA-256 in explorer
 * order, as the reference's `ots info` prints beside calendar transactions; otherwise undefined.
 */
export function bitcoinTransactionId(bytes: Uint8Array): string | undefined {
  let offset = 0;
  const take = (n: number): boolean => {
    if (n > bytes.length - offset) return false;
    offset += n;
    return true;
  };
  const compactSize = (): number | undefined => {
    if (offset >= bytes.length) return undefined;
    const first = bytes[offset++]!;
    const size = first < 0xfd ? 0 : first === 0xfd ? 2 : first === 0xfe ? 4 : 8;
    if (size === 0) return first;
    if (size > bytes.length - offset) return undefined;
    let value = 0;
    for (let i = size - 1; i >= 0; i--) value = value * 256 + bytes[offset + i]!;
    offset += size;
    return value;
  };
  const varBytes = (): boolean => {
    const n = compactSize();
    return n !== undefined && take(n);
  };
  const vector = (item: () => boolean): number | undefined => {
    const n = compactSize();
    if (n === undefined || n > bytes.length - offset) return undefined;
    for (let i = 0; i < n; i++) if (!item()) return undefined;
    return n;
  };
  const txIn = () => take(36) && varBytes() && take(4);
  const txOut = () => take(8) && varBytes();
  if (!take(4)) return undefined;
  const witness = bytes.length >= 6 && bytes[4] === 0 && bytes[5] === 1;
  if (witness) offset += 2;
  const inputs = vector(txIn);
  if (inputs === undefined || vector(txOut) === undefined) return undefined;
  if (witness) for (let i = 0; i < inputs; i++) if (vector(varBytes) === undefined) return undefined;
  if (!take(4) || offset !== bytes.length) return undefined;
  return reversedHex(sha256(sha256(bytes)));
}

function checkHeaderSize(header: Uint8Array): void {
  if (header.length !== BLOCK_HEADER_SIZE) {
    throw new FormatError('block header', `expected ${BLOCK_HEADER_SIZE} bytes, got ${header.length}`);
  }
}

function hex32(n: number): string {
  return `0x${n.toString(16).padStart(8, '0')}`;
}

function hex256(n: bigint): string {
  return n.toString(16).padStart(64, '0');
}
