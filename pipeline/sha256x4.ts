// SHA-256 (FIPS 180-4 §6.2) of four independent messages at once on 128-bit WebAssembly SIMD lanes (the
// multi-buffer technique: lane k of each i32x4 holds message k's word), for the RFC 6962 leaves (0x00 ‖ 32 bytes,
// one block) and nodes (0x01 ‖ 64 bytes, two blocks) of a Merkle build. The module is written here, at load,
// byte by byte (the WebAssembly core specification's binary format; SIMD opcodes from the fixed-width SIMD proposal), with
// the 64 rounds unrolled; no binary is kept in the repository. Where the engine has no SIMD the module does not
// validate and sha256x4() returns null: the caller keeps small-sha256.ts's JavaScript.
import { IV, K, NODE_LAST_BLOCK } from './small-sha256.ts';

/** Hashes four messages a step; `count` is in messages, any number (idle lanes hash whatever follows). */
export interface Sha256x4 {
  /** SHA-256(0x00 ‖ entry) of `count` 32-byte entries src[at …) into out[outAt …), 32 bytes each. */
  leaves(src: Uint8Array, at: number, count: number, out: Uint8Array, outAt: number): void;
  /** The roots of `count` level-0 tiles, each the RFC 6962 tree of 256 leaf hashes, the first tile's at
   *  src[at … at + 8192), the next's after it, into out[outAt …), 32 bytes each. */
  tileRoots(src: Uint8Array, at: number, count: number, out: Uint8Array, outAt: number): void;
}

// The module's memory: the second block of a node, its schedule with constants added for each last byte (256 × 64
// words, small-sha256.ts NODE_LAST_BLOCK), at 0; then a buffer of CHUNK entries hashed in place; then four tiles.
const TABLE = 0;
const CHUNK = 8192;
const SLACK = 256;
const BUF = TABLE + NODE_LAST_BLOCK.length * 4 + 16;
const TILE = BUF + CHUNK * 32 + SLACK;
const TILE_BYTES = 256 * 32;
const PAGES = Math.ceil((TILE + 4 * TILE_BYTES + SLACK) / 65536);

// Opcodes (the binary format's instruction chapter) and the SIMD ones after the 0xfd prefix: v128.const, i8x16.shuffle, i32x4.splat,
// i32x4.replace_lane, v128.and/or/xor/bitselect, v128.store32_lane, i32x4.shl/shr_u/add.
const op = {
  block: 0x02,
  loop: 0x03,
  br: 0x0c,
  brIf: 0x0d,
  end: 0x0b,
  localGet: 0x20,
  localSet: 0x21,
  i32Load: 0x28,
  i32Load8u: 0x2d,
  i32Const: 0x41,
  i32Eqz: 0x45,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32Shl: 0x74,
} as const;
const simd = {
  v128Const: 0x0c,
  shuffle: 0x0d,
  splat: 0x11,
  replaceLane: 0x1c,
  and: 0x4e,
  or: 0x50,
  xor: 0x51,
  bitselect: 0x52,
  store32Lane: 0x5a,
  shl: 0xab,
  shrU: 0xad,
  add: 0xae,
} as const;
const I32 = 0x7f;
const V128 = 0x7b;

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    const b = n & 0x7f;
    n >>>= 7;
    out.push(n === 0 ? b : b | 0x80);
  } while (n !== 0);
  return out;
}

function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) return [...out, b];
    out.push(b | 0x80);
  }
}

const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const name = (s: string): number[] => vec([...Buffer.from(s)].map((b) => [b]));
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];

// Each function takes (src, dst, groups): p = src − 1 (a message's first word is its prefix byte and three of the
// entry's), q = dst. Locals: 4 i32 (a node's second-block row per lane), then v128: W[16], the working variables
// a…h, the hash value H[8], and t1.
const P = 0,
  Q = 1,
  N = 2,
  ROW = 3,
  W = 7,
  S = W + 16,
  H = S + 8,
  T1 = H + 8;

/** One function's code, emitted instruction by instruction. */
class Code {
  readonly bytes: number[] = [];
  emit(...b: number[]): this {
    this.bytes.push(...b);
    return this;
  }
  v(o: number, ...imm: number[]): this {
    return this.emit(0xfd, ...uleb(o), ...imm);
  }
  get(i: number): this {
    return this.emit(op.localGet, ...uleb(i));
  }
  set(i: number): this {
    return this.emit(op.localSet, ...uleb(i));
  }
  i32(n: number): this {
    return this.emit(op.i32Const, ...sleb(n | 0));
  }
  /** The i32x4 with `x` in every lane. */
  splat(x: number): this {
    const b = Buffer.alloc(16);
    for (let k = 0; k < 4; k++) b.writeInt32LE(x | 0, 4 * k);
    return this.v(simd.v128Const, ...b);
  }
  /** Reverses the bytes of each lane (the words are big-endian, FIPS 180-4 §3.1; memory is little-endian). */
  byteSwap(): this {
    return this.splat(0).v(simd.shuffle, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
  }
  /** ROTR^n(x) (FIPS 180-4 §3.2). */
  rotr(x: number, n: number): this {
    return this.get(x)
      .i32(n)
      .v(simd.shrU)
      .get(x)
      .i32(32 - n)
      .v(simd.shl)
      .v(simd.or);
  }
  /** ROTR^r0 ^ ROTR^r1 ^ (ROTR or SHR)^r2 of x: Σ0, Σ1, σ0, σ1 (FIPS 180-4 §4.1.2, (4.4)–(4.7)). */
  sigma(x: number, r0: number, r1: number, r2: number, shift: boolean): this {
    this.rotr(x, r0).rotr(x, r1).v(simd.xor);
    if (shift) this.get(x).i32(r2).v(simd.shrU);
    else this.rotr(x, r2);
    return this.v(simd.xor);
  }
  /** The i32x4 of the 32-bit words at p + offsets[k], byte-swapped. */
  loadWords(offsets: number[]): this {
    this.get(P)
      .emit(op.i32Load, 0, ...uleb(offsets[0]!))
      .v(simd.splat);
    for (let k = 1; k < 4; k++)
      this.get(P)
        .emit(op.i32Load, 0, ...uleb(offsets[k]!))
        .v(simd.replaceLane, k);
    return this.byteSwap();
  }
}

/** W[t] for t ≥ 16 into the ring W[t mod 16] (FIPS 180-4 §6.2.2 step 1). */
function scheduleWord(c: Code, t: number): void {
  const w = (i: number) => W + (i & 15);
  c.get(w(t - 16))
    .sigma(w(t - 15), 7, 18, 3, true)
    .v(simd.add);
  c.get(w(t - 7))
    .v(simd.add)
    .sigma(w(t - 2), 17, 19, 10, true)
    .v(simd.add)
    .set(w(t));
}

/** The 64 rounds (FIPS 180-4 §6.2.2 steps 2–4) from a..h = H, `kw(t)` pushing K[t] + W[t], then H += a..h. */
function rounds(c: Code, kw: (t: number) => void): void {
  for (let i = 0; i < 8; i++) c.get(H + i).set(S + i);
  // The variables are renamed instead of moved: role[j] is the local that holds the j-th of a…h.
  let role = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => S + i);
  for (let t = 0; t < 64; t++) {
    const [a, b, cc, d, e, f, g, h] = role as [number, number, number, number, number, number, number, number];
    // T1 = h + Σ1(e) + Ch(e, f, g) + K[t] + W[t]; Ch is a bit select of f and g by e.
    c.get(h).sigma(e, 6, 11, 25, false).v(simd.add).get(f).get(g).get(e).v(simd.bitselect).v(simd.add);
    kw(t);
    c.v(simd.add).set(T1);
    // e := d + T1; a := T1 + Σ0(a) + Maj(a, b, c), Maj being c where a and b differ, else b.
    c.get(d).get(T1).v(simd.add).set(d);
    c.get(T1).sigma(a, 2, 13, 22, false).v(simd.add);
    c.get(cc).get(b).get(a).get(b).v(simd.xor).v(simd.bitselect).v(simd.add).set(h);
    role = [h, a, b, cc, d, e, f, g];
  }
  for (let i = 0; i < 8; i++)
    c.get(H + i)
      .get(role[i]!)
      .v(simd.add)
      .set(H + i);
}

/** Block 1 from W[0…16) as loaded: the schedule computed as the rounds need it, from the initial hash value. */
function firstBlock(c: Code): void {
  for (let i = 0; i < 8; i++) c.splat(IV[i]!).set(H + i);
  rounds(c, (t) => {
    if (t >= 16) scheduleWord(c, t);
    c.get(W + (t & 15))
      .splat(K[t]!)
      .v(simd.add);
  });
}

/** H as 32 big-endian bytes a lane, lane k's at q + lane × k. */
function output(c: Code, lane: number): void {
  for (let i = 0; i < 8; i++) {
    c.get(H + i)
      .byteSwap()
      .set(T1);
    for (let k = 0; k < 4; k++)
      c.get(Q)
        .get(T1)
        .v(simd.store32Lane, 0, ...uleb(lane * k + 4 * i), k);
  }
}

/** A function looping `groups` times over `body`, p and q advancing by the given strides. */
function loopFunction(body: (c: Code) => void, inStride: number, outStride: number): number[] {
  const c = new Code();
  c.get(P).i32(1).emit(op.i32Sub).set(P);
  c.emit(op.block, 0x40, op.loop, 0x40);
  c.get(N).emit(op.i32Eqz, op.brIf, 1);
  body(c);
  c.get(P).i32(inStride).emit(op.i32Add).set(P);
  c.get(Q).i32(outStride).emit(op.i32Add).set(Q);
  c.get(N).i32(1).emit(op.i32Sub).set(N);
  c.emit(op.br, 0, op.end, op.end, op.end);
  const locals = vec([
    [4, I32],
    [16 + 8 + 8 + 1, V128],
  ]);
  return [...locals, ...c.bytes];
}

/** Four leaves, 0x00 ‖ 32 bytes: one block, W[8] = the entry's last byte ‖ 0x80, W[15] = 264 bits (§5.1.1). */
function leafGroup(c: Code): void {
  const at = (i: number) => [0, 1, 2, 3].map((k) => 32 * k + 4 * i);
  c.loadWords(at(0)).splat(0x00ffffff).v(simd.and).set(W);
  for (let i = 1; i < 8; i++) c.loadWords(at(i)).set(W + i);
  c.loadWords(at(8))
    .splat(0xff000000)
    .v(simd.and)
    .splat(0x00800000)
    .v(simd.or)
    .set(W + 8);
  for (let i = 9; i < 15; i++) c.splat(0).set(W + i);
  c.splat(33 * 8).set(W + 15);
  firstBlock(c);
  output(c, 32);
}

/** Four nodes, 0x01 ‖ 64 bytes, lane k's at p + 1 + inLane × k, its hash to q + outLane × k: block 1 from the
 *  message, block 2's K + W the table's row for the last byte. */
const nodeGroup = (inLane: number, outLane: number) => (c: Code) => {
  for (let k = 0; k < 4; k++)
    c.get(P)
      .emit(op.i32Load8u, 0, ...uleb(inLane * k + 64))
      .i32(8)
      .emit(op.i32Shl)
      .set(ROW + k);
  const at = (i: number) => [0, 1, 2, 3].map((k) => inLane * k + 4 * i);
  c.loadWords(at(0)).splat(0x00ffffff).v(simd.and).splat(0x01000000).v(simd.or).set(W);
  for (let i = 1; i < 16; i++) c.loadWords(at(i)).set(W + i);
  firstBlock(c);
  rounds(c, (t) => {
    c.get(ROW)
      .emit(op.i32Load, 2, ...uleb(TABLE + 4 * t))
      .v(simd.splat);
    for (let k = 1; k < 4; k++)
      c.get(ROW + k)
        .emit(op.i32Load, 2, ...uleb(TABLE + 4 * t))
        .v(simd.replaceLane, k);
  });
  output(c, outLane);
};

/** The module's bytes: memory and the functions (src, dst, groups) leaves (four consecutive entries a step),
 *  nodes (four consecutive nodes a step) and across (four tiles' nodes a step, lane k in the k-th tile). */
function moduleBytes(): Uint8Array<ArrayBuffer> {
  const params = [0x60, ...vec([[I32], [I32], [I32]]), ...vec([])];
  const bodies = [
    loopFunction(leafGroup, 128, 128),
    loopFunction(nodeGroup(64, 32), 256, 128),
    loopFunction(nodeGroup(TILE_BYTES, TILE_BYTES), 64, 32),
  ];
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec([params])),
    ...section(3, vec([[0], [0], [0]])),
    ...section(5, vec([[0x00, ...uleb(PAGES)]])),
    ...section(
      7,
      vec([
        [...name('memory'), 2, 0],
        [...name('leaves'), 0, 0],
        [...name('nodes'), 0, 1],
        [...name('across'), 0, 2],
      ]),
    ),
    ...section(10, vec(bodies.map((b) => [...uleb(b.length), ...b]))),
  ]);
}

/** The kernel, or null where WebAssembly SIMD is not available (`validate` answers whether it is). */
export function sha256x4(
  validate: (bytes: Uint8Array<ArrayBuffer>) => boolean = (b) => WebAssembly.validate(b),
): Sha256x4 | null {
  const bytes = moduleBytes();
  if (typeof WebAssembly === 'undefined' || !validate(bytes)) return null;
  const { exports } = new WebAssembly.Instance(new WebAssembly.Module(bytes));
  const memory = new Uint8Array((exports.memory as WebAssembly.Memory).buffer);
  const leaves = exports.leaves as (src: number, dst: number, groups: number) => void;
  const nodes = exports.nodes as (src: number, dst: number, groups: number) => void;
  const across = exports.across as (src: number, dst: number, groups: number) => void;
  const table = new DataView(memory.buffer, TABLE, NODE_LAST_BLOCK.length * 4);
  NODE_LAST_BLOCK.forEach((w, i) => table.setInt32(4 * i, w, true));
  return {
    leaves(src, at, count, out, outAt) {
      for (let done = 0; done < count; done += CHUNK) {
        const n = Math.min(CHUNK, count - done);
        memory.set(src.subarray(at + 32 * done, at + 32 * (done + n)), BUF);
        leaves(BUF, BUF, Math.ceil(n / 4));
        out.set(memory.subarray(BUF, BUF + 32 * n), outAt + 32 * done);
      }
    },
    tileRoots(src, at, count, out, outAt) {
      // Four tiles a step on the four lanes, each level in place: node i reads hashes 2i and 2i + 1 before it
      // writes hash i (measured 3–5 % faster than four consecutive nodes of one tile, whose last two levels
      // leave lanes idle).
      let t = 0;
      for (; t + 4 <= count; t += 4) {
        memory.set(src.subarray(at + t * TILE_BYTES, at + (t + 4) * TILE_BYTES), TILE);
        for (let width = 128; width >= 1; width /= 2) across(TILE, TILE, width);
        for (let k = 0; k < 4; k++)
          out.set(memory.subarray(TILE + k * TILE_BYTES, TILE + k * TILE_BYTES + 32), outAt + 32 * (t + k));
      }
      // The rest one tile at a time, four consecutive nodes a step: step j reads hashes 8j … 8j + 8 before it
      // writes 4j … 4j + 4.
      for (; t < count; t++) {
        memory.set(src.subarray(at + t * TILE_BYTES, at + (t + 1) * TILE_BYTES), TILE);
        for (let width = 128; width >= 1; width /= 2) nodes(TILE, TILE, Math.ceil(width / 4));
        out.set(memory.subarray(TILE, TILE + 32), outAt + 32 * t);
      }
    },
  };
}
