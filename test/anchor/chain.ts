// A synthetic Bitcoin chain at regtest difficulty (nBits 0x207fffff, Bitcoin Core's regtest genesis target)
// with real proof of work: every header is mined until its double SHA-256, read as a little-endian number,
// is at most the target. Written on node:crypto only, independent of core/bitcoin.ts.
import crypto from 'node:crypto';

export const REGTEST_BITS = 0x207fffff;
const TARGET = 0x7fffffn << 232n;

export const sha256d = (b: Uint8Array): Buffer =>
  crypto.createHash('sha256').update(crypto.createHash('sha256').update(b).digest()).digest();
/** Explorer order: byte-reversed hex. */
export const explorerHex = (b: Uint8Array): string => Buffer.from(b).reverse().toString('hex');
const workOf = (header: Buffer): bigint => BigInt(`0x${explorerHex(sha256d(header))}`);

export interface Block {
  height: number;
  header: Buffer;
  /** Explorer-order hex of the double SHA-256. */
  hash: string;
  merkleRoot: Buffer;
  time: number;
}

export class SyntheticChain {
  readonly blocks: Block[] = [];

  constructor(startTime = 1_760_000_000) {
    this.mine(crypto.randomBytes(32), startTime);
  }

  get tip(): Block {
    return this.blocks.at(-1)!;
  }

  /** Appends a block whose header carries `merkleRoot` (header byte order) and meets the regtest target. */
  mine(merkleRoot: Uint8Array, time = (this.blocks.at(-1)?.time ?? 1_760_000_000) + 600): Block {
    const prev = this.blocks.at(-1);
    const header = Buffer.alloc(80);
    header.writeInt32LE(0x20000000, 0);
    if (prev) sha256d(prev.header).copy(header, 4);
    Buffer.from(merkleRoot).copy(header, 36);
    header.writeUInt32LE(time, 68);
    header.writeUInt32LE(REGTEST_BITS, 72);
    for (let nonce = 0; ; nonce++) {
      header.writeUInt32LE(nonce, 76);
      if (workOf(header) <= TARGET) break;
    }
    const block = {
      height: this.blocks.length,
      header,
      hash: explorerHex(sha256d(header)),
      merkleRoot: Buffer.from(merkleRoot),
      time,
    };
    this.blocks.push(block);
    return block;
  }

  /** Appends `n` blocks with random merkle roots. */
  extend(n: number): void {
    for (let i = 0; i < n; i++) this.mine(crypto.randomBytes(32));
  }

  /** A header with the same fields as block `height` but a nonce whose hash misses the target: no proof of work. */
  forgeWithoutWork(height: number): Buffer {
    const header = Buffer.from(this.blocks[height]!.header);
    for (let nonce = 0; ; nonce++) {
      header.writeUInt32LE(nonce, 76);
      if (workOf(header) > TARGET) return header;
    }
  }
}
