// Wide OpenTimestamps proofs: the depth of a proof was capped, its breadth was not. A 964 KB `.ots`
// of 60,000 leaves made `timeseal ots info` run for minutes and die out of memory. A proof holds at most
// MAX_TIMESTAMP_NODES operations and attestations; more is refused at once, without building the tree.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { concatBytes, equalBytes, fromHex, toHex } from './encoding.ts';
import {
  addAttestation,
  addOp,
  appendOp,
  bitcoinAttestation,
  BITCOIN_TAG,
  formatDetached,
  PENDING_TAG,
  HEADER_MAGIC,
  MAX_TIMESTAMP_NODES,
  newDetached,
  OtsFormatError,
  parseDetached,
  parseTimestamp,
  serializeDetached,
  SHA256_OP,
  walkAttestations,
} from './ots.ts';
import { readOtsVector } from '../test/ots-vectors.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const DIGEST = fromHex('03ba204e50d126e4674c005e04d82e84c21366780af1f43bd54a37816b6ab340');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-ots-breadth-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

const leafArgument = (i: number) => Uint8Array.of(i >> 8, i & 0xff);

/**
 * The shape of the file, byte by byte: the file digest, one append of `padding` bytes (so that every
 * later message is that long), then a fork of `leaves` branches `append <2 bytes>` each ending in a Bitcoin
 * attestation: 2 operations and attestations per leaf, 16 bytes each. `reversed` writes the branches in
 * descending order (the reference writes them ascending).
 */
function wideProof(leaves: number, padding = 0, reversed = false): Uint8Array {
  const out = new Uint8Array(HEADER_MAGIC.length + 2 + 32 + (padding ? 3 + padding : 0) + leaves * 16);
  out.set(HEADER_MAGIC);
  let at = HEADER_MAGIC.length;
  out.set([1, 0x08], at);
  out.set(DIGEST, (at += 2));
  at += 32;
  if (padding) {
    out.set([0xf0, (padding & 0x7f) | 0x80, padding >> 7], at);
    out.fill(0x61, at + 3, at + 3 + padding);
    at += 3 + padding;
  }
  for (let k = 0; k < leaves; k++) {
    const i = reversed ? leaves - 1 - k : k;
    if (k < leaves - 1) out[at++] = 0xff;
    out.set([0xf0, 2, ...leafArgument(i), 0x00, ...BITCOIN_TAG, 1, 5], at);
    at += 15;
  }
  return out.subarray(0, at);
}

/** The same tree through the building API (canonical order). */
function builtProof(leaves: number) {
  const d = newDetached('sha256', DIGEST);
  for (let i = 0; i < leaves; i++) addAttestation(addOp(d.timestamp, appendOp(leafArgument(i))), bitcoinAttestation(5));
  return d;
}

/**
 * Runs `fn`; the CPU time the process spent meanwhile and how far the resident set grew. CPU time, not wall time:
 * on a machine shared by other work a wall-time bound fails when the process waits for a core, while what these
 * bounds catch (a tree built past the limit, a sort by insertion, hex built byte by byte) costs the CPU 10 to
 * 400 times more.
 */
function measure<T>(fn: () => T): { result: T | Error; cpuMs: number; rssGrowthMb: number } {
  const rss = process.memoryUsage().rss;
  let peak = rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const start = process.cpuUsage();
  let result: T | Error;
  try {
    result = fn();
  } catch (err) {
    result = err as Error;
  }
  const used = process.cpuUsage(start);
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  return { result, cpuMs: (used.user + used.system) / 1000, rssGrowthMb: (peak - rss) / 1e6 };
}

describe('a proof holds at most MAX_TIMESTAMP_NODES operations and attestations', () => {
  it('is far above real proofs: the largest vector holds 101', () => {
    expect(MAX_TIMESTAMP_NODES).toBe(10_000);
    const count = (t: { attestations: readonly unknown[]; ops: readonly { timestamp: never }[] }): number =>
      t.attestations.length + t.ops.reduce((n, b) => n + 1 + count(b.timestamp), 0);
    expect(count(parseDetached(readOtsVector('opentimestamps-client/bitcoin.pdf.ots')).timestamp as never)).toBe(101);
    const hello = parseDetached(readOtsVector('opentimestamps-client/hello-world.txt.ots'));
    expect(walkAttestations(hello.timestamp).map((a) => a.attestation)).toEqual([{ kind: 'bitcoin', height: 358391 }]);
    expect(toHex(serializeDetached(hello))).toBe(toHex(readOtsVector('opentimestamps-client/hello-world.txt.ots')));
  });

  it('refuses the 964 KB proof of 60,000 leaves at once, in bounded memory', () => {
    const bytes = wideProof(60_000, 4000);
    expect(bytes.length).toBe(964_067);
    // At once: about what reading a proof at the limit costs (its first 10,000 items are the same work); building
    // the whole tree of 60,000 leaves took 195 s and 4.6 GB.
    const atLimit = wideProof(MAX_TIMESTAMP_NODES / 2 - 1, 4000);
    const reading = Math.min(...[0, 1, 2].map(() => measure(() => parseDetached(atLimit)).cpuMs));
    const parsers: Array<() => unknown> = [
      () => parseDetached(bytes),
      () => parseTimestamp(bytes.subarray(HEADER_MAGIC.length + 2 + 32), DIGEST),
    ];
    for (const parse of parsers) {
      const { result, cpuMs, rssGrowthMb } = measure(parse);
      expect(result).toBeInstanceOf(OtsFormatError);
      expect((result as Error).message).toBe(
        'timestamp: more than 10000 operations and attestations (the most a proof may hold here)',
      );
      expect(cpuMs, `refused in ${cpuMs} ms of CPU, a proof at the limit read in ${reading}`).toBeLessThan(
        3 * reading + 200,
      );
      expect(rssGrowthMb).toBeLessThan(300);
    }
  });

  it('reads exactly the limit, written in any order, in canonical order; one more is refused', () => {
    const atLimit = MAX_TIMESTAMP_NODES / 2;
    const canonical = serializeDetached(builtProof(atLimit));
    expect(equalBytes(canonical, wideProof(atLimit))).toBe(true);
    // Written in reverse, it costs about what the canonical order costs (one sort, not an insertion per item).
    const inOrder = Math.min(...[0, 1, 2].map(() => measure(() => parseDetached(canonical)).cpuMs));
    const { result, cpuMs } = measure(() => parseDetached(wideProof(atLimit, 0, true)));
    expect(cpuMs, `reversed ${cpuMs} ms of CPU, in order ${inOrder}`).toBeLessThan(3 * inOrder + 200);
    expect(equalBytes(serializeDetached(result as ReturnType<typeof parseDetached>), canonical)).toBe(true);
    expect(() => parseDetached(wideProof(atLimit + 1, 0, true))).toThrow(/more than 10000 operations and attestations/);
  });

  it('merges a repeated op into its twin and counts what it merges', () => {
    // sha256 twice at the root, each with its own leaves (and one leaf in both): one branch, 3 leaves.
    const leaf = (i: number) =>
      concatBytes(Uint8Array.of(0xf0, 2), leafArgument(i), Uint8Array.of(0x00), BITCOIN_TAG, Uint8Array.of(1, 5));
    const branch = (...leaves: number[]) =>
      concatBytes(
        Uint8Array.of(0x08),
        ...leaves.flatMap((i, k) => (k < leaves.length - 1 ? [Uint8Array.of(0xff), leaf(i)] : [leaf(i)])),
      );
    const twins = concatBytes(
      HEADER_MAGIC,
      Uint8Array.of(1, 0x08),
      DIGEST,
      Uint8Array.of(0xff),
      branch(2, 1),
      branch(1, 0),
    );
    const expected = newDetached('sha256', DIGEST);
    const hashed = addOp(expected.timestamp, SHA256_OP);
    for (const i of [0, 1, 2]) addAttestation(addOp(hashed, appendOp(leafArgument(i))), bitcoinAttestation(5));
    expect(toHex(serializeDetached(parseDetached(twins)))).toBe(toHex(serializeDetached(expected)));
    // 2 x (1 + 2,499 x 2) = 9,998 read, but the second half merged into the first adds 4,998 more.
    const half = Array.from({ length: 2499 }, (_, i) => i);
    const doubled = concatBytes(
      HEADER_MAGIC,
      Uint8Array.of(1, 0x08),
      DIGEST,
      Uint8Array.of(0xff),
      branch(...half),
      branch(...half.map((i) => i + 2499)),
    );
    expect(() => parseDetached(doubled)).toThrow(/more than 10000 operations and attestations/);
  });

  it('is never written beyond the limit, so every proof written can be read back', () => {
    expect(() => serializeDetached(builtProof(MAX_TIMESTAMP_NODES / 2 + 1))).toThrow(
      /more than 10000 operations and attestations/,
    );
  });

  it('shows a proof at the limit with messages of 4 KB in bounded time and memory', () => {
    const d = parseDetached(wideProof(MAX_TIMESTAMP_NODES / 2 - 1, 4000));
    // Each leaf's line `# Bitcoin block merkle root <8 KB of hex>`: hex built byte by byte took seconds here.
    const { result, cpuMs, rssGrowthMb } = measure(() => formatDetached(d));
    expect((result as string).length).toBe(40_804_941);
    // ~0.4 s of CPU here; hex built byte by byte (a rope of a node per byte) took 3 s.
    expect(cpuMs, `formatted in ${cpuMs} ms of CPU`).toBeLessThan(1500);
    expect(rssGrowthMb).toBeLessThan(300);
  });
});

describe('timeseal ots info', () => {
  /** `timeseal ots info FILE` with a heap of `heapMb` (the old code needed gigabytes for these files). */
  const cli = (file: string, heapMb: number) => {
    const started = performance.now();
    const out = path.join(work, 'stdout');
    const fd = fs.openSync(out, 'w');
    const r = spawnSync(
      process.execPath,
      [`--max-old-space-size=${heapMb}`, path.join(ROOT, 'cli/cli.ts'), 'ots', 'info', file],
      {
        stdio: ['ignore', fd, 'pipe'],
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    fs.closeSync(fd);
    return {
      code: r.status,
      stderr: r.stderr,
      stdoutBytes: fs.statSync(out).size,
      stdout: () => fs.readFileSync(out, 'utf8'),
      ms: performance.now() - started,
    };
  };

  it('refuses the 60,000-leaf proof with the limit named, in seconds', () => {
    const file = path.join(work, 'wide.ots');
    fs.writeFileSync(file, wideProof(60_000, 4000));
    const r = cli(file, 192);
    expect(r.stderr).toContain(`${file}: timestamp: more than 10000 operations and attestations`);
    expect(r.code).toBe(1);
    expect(r.ms).toBeLessThan(10_000);
  });

  it('prints a proof at the limit with messages of 4 KB in a heap of 192 MB (hex strings built byte by byte needed GBs)', () => {
    const file = path.join(work, 'limit.ots');
    fs.writeFileSync(file, wideProof(MAX_TIMESTAMP_NODES / 2 - 1, 4000));
    const r = cli(file, 192);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdoutBytes).toBe(40_804_941);
    expect(r.ms).toBeLessThan(15_000);
  });

  it('builds the JSON (each attestation with its message in hex) only with --json', () => {
    // 9,998 pending attestations on one 4 KB message: the tree prints none of the message, the JSON repeats its
    // 8 KB of hex for each (80 MB); built anyway, it did not fit a heap of 96 MB. Shown here in 64 MB.
    const pending = (i: number) => {
      const uri = new TextEncoder().encode(`https://a.example/${String(i).padStart(4, '0')}`);
      return concatBytes(Uint8Array.of(0x00), PENDING_TAG, Uint8Array.of(uri.length + 1, uri.length), uri);
    };
    const n = MAX_TIMESTAMP_NODES - 2;
    const items = Array.from({ length: n }, (_, i) =>
      concatBytes(...(i < n - 1 ? [Uint8Array.of(0xff)] : []), pending(i)),
    );
    const file = path.join(work, 'pending.ots');
    fs.writeFileSync(
      file,
      concatBytes(
        HEADER_MAGIC,
        Uint8Array.of(1, 0x08),
        DIGEST,
        Uint8Array.of(0xf0, 0xa0, 0x1f),
        new Uint8Array(4000).fill(0x61),
        ...items,
      ),
    );
    const r = cli(file, 64);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout().match(/^verify PendingAttestation\('https:\/\/a\.example\/\d{4}'\)$/gm)).toHaveLength(n);
  });
});
