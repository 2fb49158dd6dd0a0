import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signCheckpoint } from './checkpoint.ts';
import { fromBase64, toBase64, toHex } from './encoding.ts';
import { TimesealError } from './errors.ts';
import { sha256 } from './hash.ts';
import { inclusionProof, leafHash, nodeHash, treeHash, type HashReader } from './merkle.ts';
import { ecdsaNoteSigner, mldsaNoteSigner } from './note.ts';
import { ecdsaKeygen, mldsaKeygen } from './sig.ts';
import { encodeTlogProof, parseTlogProof, TLOG_PROOF_HEADER, verifyTlogProof, type TlogProof } from './tlog-proof.ts';

const ecdsa = ecdsaKeygen(new Uint8Array(48).fill(7));
const mldsa = mldsaKeygen(new Uint8Array(32).fill(9));
const keys = { ecdsa: ecdsa.publicKey, mldsa: mldsa.publicKey };
const origin = 'timeseal.example';
const VECTORS = path.resolve(import.meta.dirname, '../test/vectors/tlog-proof');

/** A log of 12 leaves built with core alone, signed with both keys; the proof is for leaf 8. */
function makeLog() {
  const hashes = Array.from({ length: 12 }, (_, i) => sha256(Uint8Array.of(0x74, i)));
  const memo = new Map<string, Uint8Array>();
  const read: HashReader = (level, index) => {
    const key = `${level}/${index}`;
    let h = memo.get(key);
    if (!h)
      memo.set(
        key,
        (h =
          level === 0
            ? leafHash(hashes[index]!)
            : nodeHash(read(level - 1, 2 * index), read(level - 1, 2 * index + 1))),
      );
    return h;
  };
  const size = hashes.length;
  const root = treeHash(size, read);
  const signers = [
    ecdsaNoteSigner(origin, ecdsa.secretKey, ecdsa.publicKey),
    mldsaNoteSigner(origin, mldsa.seed, mldsa.publicKey),
  ];
  const proof: TlogProof = {
    extra: hashes[8]!,
    index: 8,
    proof: inclusionProof(8, size, read),
    checkpoint: signCheckpoint({ origin, size, root }, signers),
  };
  return { hashes, root, size, proof };
}

const log = makeLog();
const text = encodeTlogProof(log.proof);

describe('c2sp.org/tlog-proof@v1 (FORMAT.md §8a)', () => {
  it('is the header, the extra line with the hash, the index, the path, an empty line and the checkpoint', () => {
    const lines = text.split('\n');
    expect(lines[0]).toBe(TLOG_PROOF_HEADER);
    expect(lines[1]).toBe(`extra ${toBase64(log.hashes[8]!)}`);
    expect(lines[2]).toBe('index 8');
    expect(lines.slice(3, 3 + log.proof.proof.length)).toEqual(log.proof.proof.map(toBase64));
    expect(lines[3 + log.proof.proof.length]).toBe('');
    expect(text.endsWith(`\n\n${log.proof.checkpoint}`)).toBe(true);
  });

  it('round-trips: parse(encode(p)) = p, for any extra, index and path', () => {
    const bytes = (n: number) => fc.uint8Array({ minLength: n, maxLength: n });
    fc.assert(
      fc.property(
        fc.option(fc.uint8Array({ minLength: 1, maxLength: 80 }), { nil: null }),
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        fc.array(bytes(32), { maxLength: 63 }),
        (extra, index, proof) => {
          const p: TlogProof = { extra, index, proof, checkpoint: log.proof.checkpoint };
          const encoded = encodeTlogProof(p);
          expect(parseTlogProof(encoded)).toEqual(p);
          expect(parseTlogProof(new TextEncoder().encode(encoded))).toEqual(p);
          expect(encodeTlogProof(parseTlogProof(encoded))).toBe(encoded);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('verifies with the two public keys, from the extra line or from the hash the person holds', () => {
    const parsed = parseTlogProof(text);
    const expected = { hash: toHex(log.hashes[8]!), index: 8, origin, treeSize: 12, root: toHex(log.root) };
    expect(verifyTlogProof(parsed, keys)).toEqual({ ...expected, hashFrom: 'extra' });
    expect(verifyTlogProof(parsed, keys, { hash: log.hashes[8]!, origin })).toEqual({ ...expected, hashFrom: 'given' });
    // Without the extra line (as other logs write them), the hash must be given.
    const bare = parseTlogProof(encodeTlogProof({ ...log.proof, extra: null }));
    expect(verifyTlogProof(bare, keys, { hash: log.hashes[8]! }).hash).toBe(expected.hash);
    expect(() => verifyTlogProof(bare, keys)).toThrow(/no extra line names the hash/);
  });

  it('rejects another hash, another leaf, another origin and other keys, saying which', () => {
    const parsed = parseTlogProof(text);
    expect(() => verifyTlogProof(parsed, keys, { hash: log.hashes[7]! })).toThrow(
      /hash \(yours vs the one the proof names\): expected/,
    );
    const bare = parseTlogProof(encodeTlogProof({ ...log.proof, extra: null }));
    expect(() => verifyTlogProof(bare, keys, { hash: log.hashes[7]! })).toThrow(
      /tlog-proof inclusion proof: .*root: expected/,
    );
    expect(() => verifyTlogProof({ ...parsed, extra: log.hashes[9]! }, keys)).toThrow(/tlog-proof inclusion proof/);
    expect(() => verifyTlogProof({ ...parsed, index: 12 }, keys)).toThrow(/tlog-proof inclusion proof: .*12/);
    expect(() => verifyTlogProof(parsed, keys, { origin: 'other.example' })).toThrow(
      /checkpoint origin: expected other.example/,
    );
    const otherMldsa = mldsaKeygen(new Uint8Array(32).fill(1)).publicKey;
    expect(() => verifyTlogProof(parsed, { ...keys, mldsa: otherMldsa })).toThrow(
      /tlog-proof checkpoint: .*no ML-DSA-65 line/,
    );
    expect(() => verifyTlogProof({ ...parsed, extra: new Uint8Array(31) }, keys)).toThrow(/extra: 31 bytes/);
  });

  it('ignores signature lines of keys it does not know (witness cosignatures, other algorithms)', () => {
    const witness = `\u2014 witness.example ${toBase64(new Uint8Array(72).fill(3))}\n`;
    const sameNameOtherKey = `\u2014 ${origin} ${toBase64(new Uint8Array(68).fill(5))}\n`;
    const cosigned = `${log.proof.checkpoint}${witness}${sameNameOtherKey}`;
    const p = parseTlogProof(encodeTlogProof({ ...log.proof, checkpoint: cosigned }));
    expect(verifyTlogProof(p, keys).root).toBe(toHex(log.root));
  });

  it('rejects a flipped bit in every byte outside the ML-DSA-65 signature, and in a sample of it, with a reason', () => {
    const bytes = new TextEncoder().encode(text);
    const mldsaLine = text.lastIndexOf('\u2014 ');
    const mldsaStart = new TextEncoder().encode(text.slice(0, mldsaLine)).length;
    const lines = text.split('\n');
    // Where each region ends (byte offsets; everything before the checkpoint is ASCII).
    const headerEnd = lines[0]!.length + 1;
    const extraEnd = headerEnd + lines[1]!.length + 1;
    const indexEnd = extraEnd + lines[2]!.length + 1;
    const pathEnd = text.indexOf('\n\n') + 2;
    // A flipped newline joins two lines: any reason will do.
    const reasonAt = (i: number): RegExp =>
      bytes[i] === 0x0a
        ? /./
        : i < headerEnd - 1
          ? /tlog-proof line 1: expected "c2sp\.org\/tlog-proof@v1"/
          : i < extraEnd - 1
            ? /line 2 \(extra\)|expected "index N"|tlog-proof inclusion proof|extra: \d+ bytes/
            : i < indexEnd - 1
              ? /line 3: expected "index N"|tlog-proof inclusion proof/
              : i < pathEnd - 2
                ? /proof hash \d|tlog-proof inclusion proof/
                : i >= pathEnd
                  ? /tlog-proof checkpoint/
                  : /./;
    const positions = [
      ...Array(mldsaStart).keys(),
      ...Array.from({ length: 60 }, (_, k) => mldsaStart + Math.floor((k * (bytes.length - 1 - mldsaStart)) / 59)),
    ];
    for (const i of positions) {
      const copy = bytes.slice();
      copy[i] = copy[i]! ^ 0x01;
      let error: unknown;
      try {
        verifyTlogProof(parseTlogProof(copy), keys);
      } catch (err) {
        error = err;
      }
      expect(
        error,
        `byte ${i} (${JSON.stringify(String.fromCharCode(bytes[i]!))}) flipped was accepted`,
      ).toBeInstanceOf(TimesealError);
      expect((error as Error).message, `byte ${i}`).toMatch(reasonAt(i));
    }
  });

  it.each([
    ['no header', text.slice(TLOG_PROOF_HEADER.length + 1), /line 1: expected/],
    ['another version', text.replace('@v1', '@v2'), /line 1: expected/],
    ['CRLF line ends', text.replace(/\n/g, '\r\n'), /line 1: expected/],
    ['a leading zero in the index', text.replace('index 8', 'index 08'), /expected "index N"/],
    ['a negative index', text.replace('index 8', 'index -8'), /expected "index N"/],
    ['a space after the index', text.replace('index 8', 'index 8 '), /expected "index N"/],
    ['an index beyond 2^53', text.replace('index 8', 'index 9007199254740993'), /larger than/],
    ['an empty extra line', text.replace(/extra [^\n]+/, 'extra '), /extra\): is empty/],
    ['extra after the index', text.replace(/(extra [^\n]+)\n(index 8)/, '$2\n$1'), /proof hash 1/],
    [
      'a hash of 31 bytes',
      text.replace(toBase64(log.proof.proof[0]!), toBase64(log.proof.proof[0]!.slice(1))),
      /proof hash 1\): 31 bytes/,
    ],
    [
      'unpadded base64',
      text.replace(toBase64(log.proof.proof[0]!), toBase64(log.proof.proof[0]!).replace('=', '')),
      /proof hash 1\): base64/,
    ],
    ['no empty line before the checkpoint', text.replace('\n\n', '\n'), /checkpoint|proof hash/],
    [
      '64 proof hashes',
      text.replace('index 8\n', `index 8\n${`${toBase64(new Uint8Array(32))}\n`.repeat(64)}`),
      /\d+ proof hashes, at most 63/,
    ],
    ['text after the checkpoint', `${text}trailing\n`, /tlog-proof checkpoint/],
    ['no newline at the end', text.slice(0, -1), /tlog-proof checkpoint/],
    ['an empty file', '', /line 1: expected/],
  ])('rejects %s', (_name, bad, reason) => {
    expect(() => verifyTlogProof(parseTlogProof(bad), keys)).toThrow(reason);
  });

  it('parses the example of c2sp.org/tlog-proof (test/vectors/tlog-proof), whose elided signatures it then rejects', () => {
    const example = fs.readFileSync(path.join(VECTORS, 'c2sp-example.tlog-proof'), 'utf8');
    expect(() => parseTlogProof(example)).toThrow(/tlog-proof checkpoint: note signature line 1/);
    // The same proof with the elided "[...]" signatures replaced by well-formed ones: every other line parses.
    const complete = example.replace(
      / [A-Za-z0-9+/]*\[\.\.\.\][A-Za-z0-9+/=]*\n/g,
      ` ${toBase64(new Uint8Array(68).fill(1))}\n`,
    );
    const p = parseTlogProof(complete);
    expect(new TextDecoder().decode(p.extra!).startsWith('age-v1.2.1-darwin-arm64.tar.gz')).toBe(true);
    expect(p.index).toBe(73894);
    expect(p.proof.map(toBase64)).toEqual([
      'gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=',
      'B95lDa8R83lS8n0eG+o0buTxRKQTYFi//1U8anccXmA=',
      'EKNzoDWG8LGC0Yp9o+sv3qllpMP9uHQ9B20KNL+Q1zs=',
      'RoopEkOdqkYqMB4MJXrbt/hMjOxsVn0IrWjpz1ZMMes=',
      'AHCioX9nLjsrse6YhjRRmk1WUEirVOLLRoOQ6vfO5vk=',
    ]);
    expect(
      p.checkpoint.startsWith('example.com/fancylog\n109482\nsFodV/vSp5O8n9a8QpW6PRY97tfOSW5bsc2Xl/EQi08=\n\n'),
    ).toBe(true);
    expect(p.checkpoint.split('\n\u2014 ').length - 1).toBe(4);
    expect(encodeTlogProof(p)).toBe(complete);
    expect(fromBase64('sFodV/vSp5O8n9a8QpW6PRY97tfOSW5bsc2Xl/EQi08=').length).toBe(32);
  });
});
