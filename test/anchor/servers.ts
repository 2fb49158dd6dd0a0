// Loopback stand-ins for the external services of anchoring, speaking their real protocols:
// - LoopbackCalendar: opentimestamps-server (otsserver/rpc.py): POST /digest → 200 and a bare timestamp ending
//   in a pending attestation; GET /timestamp/<hex> → 404 "Pending confirmation in Bitcoin blockchain" until
//   `mine()` puts its pending commitments into a block of the synthetic chain, then 200 with the path to the
//   block's merkle root and a Bitcoin attestation. Built on the project's own OTS codec.
//   Faults on demand: HTTP errors, a hang (for timeouts), an oversized or malformed answer.
// - LoopbackEsplora: Esplora REST (/block-height/:h, /block/:hash/header, /blocks/tip/height) over a chain,
//   with headers that can be replaced by forgeries.
// - LoopbackBitcoind: bitcoind JSON-RPC 1.0 (getblockhash, getblockheader, getblockcount) with basic auth.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  addAttestation,
  addOp,
  appendOp,
  bitcoinAttestation,
  newTimestamp,
  pendingAttestation,
  prependOp,
  serializeTimestamp,
  SHA256_OP,
  type Timestamp,
} from '../../core/ots.ts';
import type { SyntheticChain } from './chain.ts';

abstract class LoopbackServer {
  private server?: http.Server;
  private readonly sockets = new Set<import('node:net').Socket>();
  url = '';
  requests: string[] = [];

  protected abstract handle(req: http.IncomingMessage, body: Buffer, res: http.ServerResponse): void;

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.requests.push(`${req.method} ${req.url}`);
        this.handle(req, Buffer.concat(chunks), res);
      });
    });
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

const text = (res: http.ServerResponse, status: number, body: string): void => {
  res.writeHead(status, { 'Content-Type': 'text/plain' });
  res.end(body);
};

export type CalendarFault = 'none' | 'http400' | 'http500' | 'hang' | 'oversized' | 'garbage';

export class LoopbackCalendar extends LoopbackServer {
  fault: CalendarFault = 'none';
  /** URI written into pending attestations; defaults to the calendar's own URL. */
  pendingUri?: string;
  private readonly pending = new Map<string, Uint8Array>();
  private readonly complete = new Map<string, Timestamp>();

  get pendingCount(): number {
    return this.pending.size;
  }

  protected handle(req: http.IncomingMessage, body: Buffer, res: http.ServerResponse): void {
    if (this.fault === 'hang') return; // never answers; the client must time out
    if (this.fault === 'http500') return text(res, 500, 'Internal Server Error');
    if (this.fault === 'oversized') {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      res.end(crypto.randomBytes(20_000));
      return;
    }
    if (this.fault === 'garbage') {
      res.writeHead(200);
      res.end(Buffer.from([0x00, 0x01, 0x02, 0x03]));
      return;
    }
    if (req.method === 'POST' && req.url === '/digest') {
      if (this.fault === 'http400') return text(res, 400, 'digest too long');
      if (body.length < 1 || body.length > 64) return text(res, 400, 'digest too long');
      const t = newTimestamp(body);
      const time = Buffer.alloc(4);
      time.writeUInt32BE(Math.floor(Date.now() / 1000));
      const leaf = addOp(
        addOp(addOp(addOp(t, appendOp(crypto.randomBytes(16))), SHA256_OP), prependOp(time)),
        appendOp(crypto.randomBytes(8)),
      );
      addAttestation(leaf, pendingAttestation(this.pendingUri ?? this.url));
      this.pending.set(Buffer.from(leaf.message).toString('hex'), leaf.message);
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      res.end(serializeTimestamp(t));
      return;
    }
    const m = /^\/timestamp\/([0-9a-f]*)$/.exec(req.url ?? '');
    if (req.method === 'GET' && m) {
      if (this.fault === 'http400' || m[1]!.length === 0 || m[1]!.length % 2 !== 0)
        return text(res, 400, 'Invalid commitment');
      const done = this.complete.get(m[1]!);
      if (done) {
        res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
        res.end(serializeTimestamp(done));
        return;
      }
      return text(res, 404, this.pending.has(m[1]!) ? 'Pending confirmation in Bitcoin blockchain' : 'Not found');
    }
    text(res, 404, 'Not found');
  }

  /**
   * Commits every pending commitment to one block: a Merkle tree over them (sha256 of each, pairs hashed with
   * sha256), a transaction carrying the tree's root, and a two-transaction block whose merkle root is
   * sha256d(coinbase txid || our txid). Returns the block's height.
   */
  mine(chain: SyntheticChain): number {
    const commitments = [...this.pending.values()];
    if (commitments.length === 0) throw new Error('nothing to mine');
    const nodes = commitments.map((c) => {
      const t = newTimestamp(c);
      return { root: t, tip: addOp(t, SHA256_OP) };
    });
    let level = nodes.map((n) => ({ tips: [n.tip], message: n.tip.message }));
    while (level.length > 1) {
      const next: typeof level = [];
      for (let i = 0; i < level.length; i += 2) {
        const left = level[i]!;
        const right = level[i + 1] ?? left;
        const newTips: Timestamp[] = [];
        for (const tip of left.tips) newTips.push(addOp(addOp(tip, appendOp(right.message)), SHA256_OP));
        if (right !== left)
          for (const tip of right.tips) newTips.push(addOp(addOp(tip, prependOp(left.message)), SHA256_OP));
        next.push({ tips: newTips, message: newTips[0]!.message });
      }
      level = next;
    }
    const coinbaseTxid = crypto.randomBytes(32);
    const prefix = Buffer.concat([
      Buffer.from('0100000001', 'hex'),
      crypto.randomBytes(36),
      Buffer.from('00ffffffff01000000000000000022006a20', 'hex'),
    ]);
    const suffix = Buffer.from('00000000', 'hex');
    let merkleRoot: Uint8Array | undefined;
    const tops: Timestamp[] = [];
    for (const tip of level[0]!.tips) {
      const txid = addOp(addOp(addOp(addOp(tip, prependOp(prefix)), appendOp(suffix)), SHA256_OP), SHA256_OP);
      const top = addOp(addOp(addOp(txid, prependOp(coinbaseTxid)), SHA256_OP), SHA256_OP);
      merkleRoot = top.message;
      tops.push(top);
    }
    const block = chain.mine(merkleRoot!);
    for (const top of tops) addAttestation(top, bitcoinAttestation(block.height));
    for (const n of nodes) {
      const key = Buffer.from(n.root.message).toString('hex');
      this.complete.set(key, n.root);
      this.pending.delete(key);
    }
    return block.height;
  }
}

export class LoopbackEsplora extends LoopbackServer {
  down = false;
  /** height → header served instead of the chain's (its hash is served for /block-height too). */
  readonly forged = new Map<number, Buffer>();
  private readonly chain: { blocks: Array<{ header: Buffer }> } | null;
  private readonly extra: Map<number, Buffer>;
  /** Serves `chain`'s headers, plus `extra` ones at given heights (e.g. a real mainnet header). */
  constructor(chain: { blocks: Array<{ header: Buffer }> } | null, extra = new Map<number, Buffer>()) {
    super();
    this.chain = chain;
    this.extra = extra;
  }

  private headerAt(height: number): Buffer | undefined {
    return this.forged.get(height) ?? this.extra.get(height) ?? this.chain?.blocks[height]?.header;
  }

  private tip(): number {
    return Math.max(this.chain ? this.chain.blocks.length - 1 : 0, ...this.extra.keys());
  }

  protected handle(req: http.IncomingMessage, _body: Buffer, res: http.ServerResponse): void {
    if (this.down) return text(res, 503, 'Service Unavailable');
    const url = req.url ?? '';
    let m: RegExpExecArray | null;
    if (url === '/blocks/tip/height') return text(res, 200, String(this.tip()));
    if ((m = /^\/block-height\/(\d+)$/.exec(url))) {
      const h = this.headerAt(Number(m[1]));
      return h
        ? text(res, 200, Buffer.from(sha256dOf(h)).reverse().toString('hex'))
        : text(res, 404, 'Block not found');
    }
    if ((m = /^\/block\/([0-9a-f]{64})\/header$/.exec(url))) {
      for (let height = 0; height <= this.tip(); height++) {
        const h = this.headerAt(height);
        if (h && Buffer.from(sha256dOf(h)).reverse().toString('hex') === m[1]) return text(res, 200, h.toString('hex'));
      }
      return text(res, 404, 'Block not found');
    }
    text(res, 404, 'Not found');
  }
}

const sha256dOf = (b: Uint8Array): Buffer =>
  crypto.createHash('sha256').update(crypto.createHash('sha256').update(b).digest()).digest();

export class LoopbackBitcoind extends LoopbackServer {
  private readonly chain: SyntheticChain;
  private readonly user: string;
  private readonly password: string;
  constructor(chain: SyntheticChain, user: string, password: string) {
    super();
    this.chain = chain;
    this.user = user;
    this.password = password;
  }

  protected handle(req: http.IncomingMessage, body: Buffer, res: http.ServerResponse): void {
    const expected = `Basic ${Buffer.from(`${this.user}:${this.password}`).toString('base64')}`;
    if (req.headers.authorization !== expected) return text(res, 401, '');
    const call = JSON.parse(body.toString()) as { id: number; method: string; params: unknown[] };
    const reply = (status: number, result: unknown, error: { code: number; message: string } | null) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ result, error, id: call.id }));
    };
    if (call.method === 'getblockcount') return reply(200, this.chain.blocks.length - 1, null);
    if (call.method === 'getblockhash') {
      const b = this.chain.blocks[call.params[0] as number];
      return b ? reply(200, b.hash, null) : reply(500, null, { code: -8, message: 'Block height out of range' });
    }
    if (call.method === 'getblockheader') {
      const b = this.chain.blocks.find((x) => x.hash === call.params[0]);
      return b
        ? reply(200, call.params[1] === false ? b.header.toString('hex') : { hash: b.hash }, null)
        : reply(500, null, { code: -5, message: 'Block not found' });
    }
    reply(404, null, { code: -32601, message: 'Method not found' });
  }
}
