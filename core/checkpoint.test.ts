// Tests for core/checkpoint.ts (c2sp.org/tlog-checkpoint): body encoding and strict parsing, and the
// dual-signature rule of docs/FORMAT.md §4, with the ECDSA line checked by the openssl command.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeCheckpoint, parseCheckpoint, signCheckpoint, verifyCheckpoint } from './checkpoint.ts';
import { FormatError, MismatchError, SignatureError } from './errors.ts';
import { ecdsaNoteSigner, ecdsaNoteVerifier, mldsaNoteSigner, mldsaNoteVerifier, signNote } from './note.ts';
import { ecdsaKeygen, ecdsaPublicKeyToPem, mldsaKeygen } from './sig.ts';

const ORIGIN = 'timeseal.example';
const root = Uint8Array.from({ length: 32 }, (_, i) => 255 - i);
const rootBase64 = Buffer.from(root).toString('base64');
const toHexString = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('encodeCheckpoint', () => {
  it('writes origin, size and base64 root, one a line, with no extension lines', () => {
    expect(encodeCheckpoint({ origin: ORIGIN, size: 40, root })).toBe(`${ORIGIN}\n40\n${rootBase64}\n`);
    expect(encodeCheckpoint({ origin: ORIGIN, size: 0, root })).toBe(`${ORIGIN}\n0\n${rootBase64}\n`);
  });
  it.each([
    ['an empty origin', { origin: '', size: 1, root }],
    ['an origin with a space', { origin: 'a b', size: 1, root }],
    ['an origin with a newline', { origin: 'a\nb', size: 1, root }],
    ["an origin with '+'", { origin: 'a+b', size: 1, root }],
    ['a negative size', { origin: ORIGIN, size: -1, root }],
    ['a fractional size', { origin: ORIGIN, size: 1.5, root }],
    ['an unsafe size', { origin: ORIGIN, size: 2 ** 53, root }],
    ['a 31-byte root', { origin: ORIGIN, size: 1, root: root.subarray(1) }],
  ])('rejects %s', (_, checkpoint) => {
    expect(() => encodeCheckpoint(checkpoint)).toThrow(FormatError);
  });
  it('round-trips through parseCheckpoint', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z0-9./-]{1,40}$/),
        fc.nat({ max: Number.MAX_SAFE_INTEGER }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        (origin, size, hash) => {
          const parsed = parseCheckpoint(encodeCheckpoint({ origin, size, root: hash }));
          expect(parsed.origin).toBe(origin);
          expect(parsed.size).toBe(size);
          expect(toHexString(parsed.root)).toBe(toHexString(hash));
          expect(parsed.extensions).toEqual([]);
        },
      ),
    );
  });
});

describe('parseCheckpoint', () => {
  it('returns extension lines as they are', () => {
    const parsed = parseCheckpoint(`${ORIGIN}\n7\n${rootBase64}\next one\n— ext two\n`);
    expect(parsed.size).toBe(7);
    expect(parsed.extensions).toEqual(['ext one', '— ext two']);
  });
  it('accepts any non-empty origin, as clients must not assume its format', () => {
    expect(parseCheckpoint(`example.com/log 42\n1\n${rootBase64}\n`).origin).toBe('example.com/log 42');
  });
  it.each([
    ['no final newline', `${ORIGIN}\n1\n${rootBase64}`],
    ['only two lines', `${ORIGIN}\n1\n`],
    ['an empty origin', `\n1\n${rootBase64}\n`],
    ['a leading zero', `${ORIGIN}\n01\n${rootBase64}\n`],
    ['a negative size', `${ORIGIN}\n-1\n${rootBase64}\n`],
    ['a plus sign', `${ORIGIN}\n+1\n${rootBase64}\n`],
    ['a decimal point', `${ORIGIN}\n1.0\n${rootBase64}\n`],
    ['spaces around the size', `${ORIGIN}\n 1\n${rootBase64}\n`],
    ['an empty size', `${ORIGIN}\n\n${rootBase64}\n`],
    ['hex size', `${ORIGIN}\n0x10\n${rootBase64}\n`],
    ['a size beyond 2^53 - 1', `${ORIGIN}\n9007199254740992\n${rootBase64}\n`],
    ['a 31-byte root', `${ORIGIN}\n1\n${Buffer.from(root.subarray(1)).toString('base64')}\n`],
    ['a 33-byte root', `${ORIGIN}\n1\n${Buffer.from([...root, 0]).toString('base64')}\n`],
    ['an unpadded root', `${ORIGIN}\n1\n${rootBase64.replace('=', '')}\n`],
    ['a hex root', `${ORIGIN}\n1\n${toHexString(root)}\n`],
    ['an empty extension line', `${ORIGIN}\n1\n${rootBase64}\n\n`],
  ])('rejects %s', (_, text) => {
    expect(() => parseCheckpoint(text)).toThrow(FormatError);
  });
});

describe('signed checkpoints', () => {
  const ecdsa = ecdsaKeygen(new Uint8Array(48).fill(5));
  const mldsa = mldsaKeygen(new Uint8Array(32).fill(6));
  const signers = [
    ecdsaNoteSigner(ORIGIN, ecdsa.secretKey, ecdsa.publicKey),
    mldsaNoteSigner(ORIGIN, mldsa.seed, mldsa.publicKey),
  ];
  const verifiers = [ecdsaNoteVerifier(ORIGIN, ecdsa.publicKey), mldsaNoteVerifier(ORIGIN, mldsa.publicKey)];
  const checkpoint = { origin: ORIGIN, size: 40, root };
  const signed = signCheckpoint(checkpoint, signers);

  it('is the checkpoint body, a blank line, the ECDSA line then the ML-DSA-65 line, both named after the origin', () => {
    const lines = signed.split('\n');
    expect(lines.slice(0, 4)).toEqual([ORIGIN, '40', rootBase64, '']);
    expect(lines.slice(4, 6).map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual([
      `\u2014 ${ORIGIN}`,
      `\u2014 ${ORIGIN}`,
    ]);
    expect(Buffer.from(lines[4]!.split(' ')[2]!, 'base64').readUInt32BE(0)).toBe(signers[0]!.keyId);
    expect(Buffer.from(lines[5]!.split(' ')[2]!, 'base64').readUInt32BE(0)).toBe(signers[1]!.keyId);
    expect(lines.slice(6)).toEqual(['']);
  });
  it('verifies and returns the parsed checkpoint', () => {
    const parsed = verifyCheckpoint(signed, verifiers, { origin: ORIGIN });
    expect([parsed.origin, parsed.size, toHexString(parsed.root), parsed.extensions]).toEqual([
      ORIGIN,
      40,
      toHexString(root),
      [],
    ]);
  });
  it('openssl verifies the ECDSA line over the note text', () => {
    const dir = mkdtempSync(join(tmpdir(), 'timeseal-checkpoint-'));
    try {
      const line = signed.split('\n')[4]!;
      writeFileSync(join(dir, 'text'), encodeCheckpoint(checkpoint));
      writeFileSync(join(dir, 'sig'), Buffer.from(line.split(' ')[2]!, 'base64').subarray(4));
      writeFileSync(join(dir, 'pub.pem'), ecdsaPublicKeyToPem(ecdsa.publicKey));
      const out = spawnSync('openssl', ['dgst', '-sha256', '-verify', 'pub.pem', '-signature', 'sig', 'text'], {
        cwd: dir,
        encoding: 'utf8',
      });
      expect(out.stdout.trim()).toBe('Verified OK');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('requires both algorithms when both verifiers are given, unless relaxed', () => {
    const ecdsaOnly = signCheckpoint(checkpoint, [signers[0]!]);
    const mldsaOnly = signCheckpoint(checkpoint, [signers[1]!]);
    expect(() => verifyCheckpoint(ecdsaOnly, verifiers)).toThrow(SignatureError);
    expect(() => verifyCheckpoint(ecdsaOnly, verifiers)).toThrow(/no ML-DSA-65 line/);
    expect(() => verifyCheckpoint(mldsaOnly, verifiers)).toThrow(/no ECDSA-P256-SHA256 line/);
    expect(verifyCheckpoint(ecdsaOnly, verifiers, { requireEveryAlgorithm: false }).size).toBe(40);
    expect(verifyCheckpoint(mldsaOnly, [verifiers[1]!]).size).toBe(40);
  });
  it('a verifier knowing one key checks that line and ignores the other', () => {
    expect(verifyCheckpoint(signed, [verifiers[0]!]).size).toBe(40);
    expect(verifyCheckpoint(signed, [verifiers[1]!]).size).toBe(40);
  });
  it('rejects a changed size or root, and a signature by other keys', () => {
    const changedSize = signed.replace('\n40\n', '\n41\n');
    expect(() => verifyCheckpoint(changedSize, verifiers)).toThrow(SignatureError);
    const otherRoot = Buffer.from(root.map((b, i) => (i === 31 ? b ^ 1 : b))).toString('base64');
    expect(() => verifyCheckpoint(signed.replace(rootBase64, otherRoot), verifiers)).toThrow(SignatureError);
    const stranger = mldsaKeygen(new Uint8Array(32).fill(7));
    const foreign = signCheckpoint(checkpoint, [mldsaNoteSigner(ORIGIN, stranger.seed, stranger.publicKey)]);
    expect(() => verifyCheckpoint(foreign, verifiers)).toThrow(SignatureError);
  });
  it('rejects another origin when one is expected', () => {
    const elsewhere = { origin: 'other.example', size: 40, root };
    const otherSigners = [ecdsaNoteSigner('other.example', ecdsa.secretKey, ecdsa.publicKey)];
    const note = signCheckpoint(elsewhere, otherSigners);
    const otherVerifiers = [ecdsaNoteVerifier('other.example', ecdsa.publicKey)];
    expect(verifyCheckpoint(note, otherVerifiers).origin).toBe('other.example');
    expect(() => verifyCheckpoint(note, otherVerifiers, { origin: ORIGIN })).toThrow(MismatchError);
  });
  it('rejects a validly signed note whose text is not a checkpoint', () => {
    const note = signNote(`${ORIGIN}\nforty\n${rootBase64}\n`, signers);
    expect(() => verifyCheckpoint(note, verifiers)).toThrow(FormatError);
  });
});
