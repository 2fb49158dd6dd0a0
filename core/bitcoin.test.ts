// Bitcoin header checks against the real block 358391 (test/vectors/ots/headers) and the real proofs that
// point at it; forged headers (wrong merkle root, too little work, an easy nBits) must be refused.
import { describe, expect, it } from 'vitest';
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes, fromHex, toHex } from './encoding.ts';
import { FormatError, MismatchError, TimesealError } from './errors.ts';
import {
  bitcoinTransactionId,
  blockHash,
  checkProofOfWork,
  parseBlockHeader,
  POW_LIMIT,
  reversedHex,
  targetFromBits,
  verifyBitcoinAttestation,
} from './bitcoin.ts';
import { parseDetached, walkAttestations, type Timestamp } from './ots.ts';
import { block358391Header, readOtsVector } from '../test/ots-vectors.ts';

const HEADER = block358391Header();
const BLOCK_HASH = '000000000000000003e892881a8cdcdc117c06d444057c98b6f04a9ee75a2319';
const HELLO_MESSAGE = fromHex('007ee445d23ad061af4a36b809501fab1ac4f2d7e7a739817dd0cbb7ec661b8a');

function bitcoinMessage(name: string, height: number): Uint8Array {
  const t: Timestamp = parseDetached(readOtsVector(`opentimestamps-client/${name}`)).timestamp;
  const found = walkAttestations(t).filter((x) => x.attestation.kind === 'bitcoin' && x.attestation.height === height);
  expect(found).toHaveLength(1);
  return found[0]!.message;
}

function withField(header: Uint8Array, offset: number, value: number): Uint8Array {
  const out = header.slice();
  new DataView(out.buffer).setUint32(offset, value, true);
  return out;
}

/** A header over `merkleRoot` at nBits 0x207fffff (regtest difficulty), its nonce ground until it meets it. */
function regtestHeader(merkleRoot: Uint8Array): Uint8Array {
  const header = concatBytes(HEADER.subarray(0, 36), merkleRoot, HEADER.subarray(68, 80));
  const view = new DataView(header.buffer);
  view.setUint32(72, 0x207fffff, true);
  for (let nonce = 0; ; nonce++) {
    view.setUint32(76, nonce, true);
    if (BigInt(`0x${blockHash(header)}`) <= targetFromBits(0x207fffff)) return header;
  }
}

describe('block header', () => {
  it('parses the fields of block 358391', () => {
    expect(HEADER.length).toBe(80);
    const h = parseBlockHeader(HEADER);
    expect(h.version).toBe(2);
    expect(reversedHex(h.prevBlockHash)).toBe('0000000000000000040238cb61fda1452649edc9d18f435f7e1b285a589463b9');
    expect(toHex(h.merkleRoot)).toBe(toHex(HELLO_MESSAGE));
    expect(reversedHex(h.merkleRoot)).toBe('8a1b66ecb7cbd07d8139a7e7d7f2c41aab1f5009b8364aaf61d03ad245e47e00');
    expect(h.time).toBe(1432827678);
    expect(new Date(h.time * 1000).toISOString()).toBe('2015-05-28T15:41:18.000Z');
    expect(h.bits).toBe(0x181686f5);
    expect(h.nonce).toBe(0xf6de7262);
  });

  it('hashes to the block hash explorers print', () => {
    expect(blockHash(HEADER)).toBe(BLOCK_HASH);
    expect(toHex(sha256(sha256(HEADER)))).toBe(reversedHex(fromHex(BLOCK_HASH)));
  });

  it('refuses a header that is not 80 bytes', () => {
    expect(() => parseBlockHeader(HEADER.subarray(0, 79))).toThrow(FormatError);
    expect(() => blockHash(concatBytes(HEADER, Uint8Array.of(0)))).toThrow(/expected 80 bytes, got 81/);
  });
});

describe('compact targets (Bitcoin Core SetCompact)', () => {
  it.each([
    [0x1d00ffff, 0xffffn << 208n],
    [0x181686f5, 0x1686f5n << 168n],
    [0x207fffff, 0x7fffffn << 232n],
    [0x01123456, 0x12n],
    [0x02123456, 0x1234n],
    [0x03123456, 0x123456n],
    [0x04123456, 0x12345600n],
    [0x05009234, 0x92340000n],
  ])('nBits %i', (bits, target) => {
    expect(targetFromBits(bits)).toBe(target);
  });

  it.each([
    [0x04923456, /negative/],
    [0xff123456, /overflows/],
    [0x00000000, /zero/],
    [0x01003456, /zero/],
    [2 ** 32, /32-bit/],
  ])('refuses nBits %i', (bits, reason) => {
    expect(() => targetFromBits(bits)).toThrow(reason);
  });

  it('uses the genesis targets as network limits', () => {
    expect(POW_LIMIT.mainnet.toString(16).padStart(64, '0')).toBe(`00000000ffff${'0'.repeat(52)}`);
    expect(POW_LIMIT.regtest.toString(16).padStart(64, '0')).toBe(`7fffff${'0'.repeat(58)}`);
  });
});

describe('proof of work', () => {
  it('accepts the real header on mainnet (and on regtest, whose limit is easier)', () => {
    expect(() => checkProofOfWork(HEADER, 'mainnet')).not.toThrow();
    expect(() => checkProofOfWork(HEADER, 'regtest')).not.toThrow();
  });

  it('refuses the real header with its nonce changed', () => {
    const forged = withField(HEADER, 76, parseBlockHeader(HEADER).nonce ^ 1);
    expect(() => checkProofOfWork(forged, 'mainnet')).toThrow(MismatchError);
    expect(() => checkProofOfWork(forged, 'mainnet')).toThrow(/proof of work does not meet its target/);
  });

  it('refuses on mainnet a header that met a regtest target, and accepts it on regtest', () => {
    const forged = regtestHeader(HELLO_MESSAGE);
    expect(() => checkProofOfWork(forged, 'regtest')).not.toThrow();
    expect(() => checkProofOfWork(forged, 'mainnet')).toThrow(/target above the mainnet limit/);
  });

  it('refuses nBits just above difficulty 1 on mainnet', () => {
    const easier = withField(HEADER, 72, 0x1d010000);
    expect(() => checkProofOfWork(easier, 'mainnet')).toThrow(/above the mainnet limit/);
  });
});

describe('Bitcoin attestations', () => {
  it('hello-world.txt verifies against block 358391 at 2015-05-28T15:41:18Z', () => {
    const message = bitcoinMessage('hello-world.txt.ots', 358391);
    const result = verifyBitcoinAttestation(message, 358391, HEADER, BLOCK_HASH);
    expect(result).toEqual({
      height: 358391,
      time: 1432827678,
      blockHash: BLOCK_HASH,
      merkleRoot: '8a1b66ecb7cbd07d8139a7e7d7f2c41aab1f5009b8364aaf61d03ad245e47e00',
    });
    expect(new Date(result.time * 1000).toISOString()).toBe('2015-05-28T15:41:18.000Z');
    expect(verifyBitcoinAttestation(message, 358391, HEADER, BLOCK_HASH.toUpperCase()).time).toBe(1432827678);
    expect(verifyBitcoinAttestation(message, 358391, HEADER).blockHash).toBe(BLOCK_HASH);
  });

  it('bad-stamp.txt fails: its message is not the merkle root of block 358391', () => {
    const message = bitcoinMessage('bad-stamp.txt.ots', 358391);
    expect(() => verifyBitcoinAttestation(message, 358391, HEADER, BLOCK_HASH)).toThrow(MismatchError);
    expect(() => verifyBitcoinAttestation(message, 358391, HEADER)).toThrow(
      /merkle root of block 0{17}3e89.*expected 8a1b66ec.*got 1bb49db8/,
    );
  });

  it('refuses a header whose hash is not the expected one', () => {
    const other = `${BLOCK_HASH.slice(0, -1)}8`;
    expect(() => verifyBitcoinAttestation(HELLO_MESSAGE, 358391, HEADER, other)).toThrow(/block hash/);
  });

  it('refuses a forged header with the right merkle root but not enough work', () => {
    const badNonce = withField(HEADER, 76, 0);
    expect(() => verifyBitcoinAttestation(HELLO_MESSAGE, 358391, badNonce)).toThrow(/proof of work/);
    const easy = regtestHeader(HELLO_MESSAGE);
    expect(() => verifyBitcoinAttestation(HELLO_MESSAGE, 358391, easy)).toThrow(/mainnet limit/);
    const onRegtest = verifyBitcoinAttestation(HELLO_MESSAGE, 1, easy, undefined, 'regtest');
    expect(onRegtest.blockHash).toBe(blockHash(easy));
    expect(onRegtest.time).toBe(1432827678);
  });

  it('every failure is a TimesealError', () => {
    const attempts: (() => unknown)[] = [
      () => verifyBitcoinAttestation(HELLO_MESSAGE.subarray(1), 358391, HEADER),
      () => verifyBitcoinAttestation(HELLO_MESSAGE, 358391, HEADER.subarray(1)),
      () => verifyBitcoinAttestation(HELLO_MESSAGE, 358391, withField(HEADER, 72, 0x04923456)),
    ];
    for (const attempt of attempts) expect(attempt).toThrow(TimesealError);
  });
});

describe('calendar transactions', () => {
  it("names the transaction in hello-world.txt's proof", () => {
    let t = parseDetached(readOtsVector('opentimestamps-client/hello-world.txt.ots')).timestamp;
    const ids: string[] = [];
    while (t.ops.length > 0) {
      const id = bitcoinTransactionId(t.message);
      if (id !== undefined) ids.push(id);
      t = t.ops[0]!.timestamp;
    }
    expect(ids).toEqual(['7e9f0f7d9daa2d9e51b2e22f4abe814c3f90539afa778a9bef88dc64627cb2ec']);
  });

  it('does not take a hash for a transaction', () => {
    expect(bitcoinTransactionId(HELLO_MESSAGE)).toBeUndefined();
    expect(bitcoinTransactionId(new Uint8Array(0))).toBeUndefined();
  });
});
