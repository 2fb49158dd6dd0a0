// Tests for core/note.ts (c2sp.org/signed-note): parser table, tamper detection, unknown keys, key id
// formulas computed independently with node:crypto, and signatures checked by node:crypto / OpenSSL.
import crypto from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FormatError, MismatchError, SignatureError } from './errors.ts';
import {
  ecdsaNoteKeyId,
  ecdsaNoteSigner,
  ecdsaNoteVerifier,
  mldsaNoteKeyId,
  mldsaNoteSigner,
  mldsaNoteVerifier,
  openNote,
  parseNote,
  signNote,
  verifyNoteSignatures,
} from './note.ts';
import { ecdsaKeygen, ecdsaPublicKeyToPem, ecdsaPublicKeyToSpkiDer, mldsaKeygen, mldsaPublicKeyToPem } from './sig.ts';

const NAME = 'timeseal.example';
const TEXT = 'timeseal.example\n42\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n';
const enc = new TextEncoder();
const ecdsa = ecdsaKeygen(new Uint8Array(48).fill(1));
const mldsa = mldsaKeygen(new Uint8Array(32).fill(2));
const ecdsaSigner = ecdsaNoteSigner(NAME, ecdsa.secretKey, ecdsa.publicKey);
const mldsaSigner = mldsaNoteSigner(NAME, mldsa.seed, mldsa.publicKey);
const ecdsaVerifier = ecdsaNoteVerifier(NAME, ecdsa.publicKey);
const mldsaVerifier = mldsaNoteVerifier(NAME, mldsa.publicKey);
const both = signNote(TEXT, [ecdsaSigner, mldsaSigner]);
const ecdsaOnly = signNote(TEXT, [ecdsaSigner]);
const signatureLines = (note: string) =>
  note
    .slice(note.lastIndexOf('\n\n') + 2)
    .slice(0, -1)
    .split('\n');
const nodeSha256 = (...parts: Uint8Array[]) => {
  const h = crypto.createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

describe('key ids', () => {
  it('ECDSA (type 0x02): first 4 bytes of SHA-256 of the SPKI DER', () => {
    const expected = nodeSha256(ecdsaPublicKeyToSpkiDer(ecdsa.publicKey)).readUInt32BE(0);
    expect(ecdsaNoteKeyId(ecdsa.publicKey)).toBe(expected);
    expect(ecdsaSigner.keyId).toBe(expected);
    expect(ecdsaVerifier.keyId).toBe(expected);
  });
  it('ML-DSA-65 (0xff "timeseal/ML-DSA-65"): first 4 bytes of SHA-256(name || 0x0A || 0xff || id || key)', () => {
    const expected = nodeSha256(
      enc.encode(NAME),
      Uint8Array.of(0x0a, 0xff),
      enc.encode('timeseal/ML-DSA-65'),
      mldsa.publicKey,
    ).readUInt32BE(0);
    expect(mldsaNoteKeyId(NAME, mldsa.publicKey)).toBe(expected);
    expect(mldsaSigner.keyId).toBe(expected);
    expect(mldsaVerifier.keyId).toBe(expected);
    expect(mldsaNoteKeyId('other.example', mldsa.publicKey)).not.toBe(expected);
  });
  it('each signature line starts with the big-endian key id', () => {
    const [ecdsaLine, mldsaLine] = signatureLines(both);
    for (const [line, keyId, length] of [
      [ecdsaLine!, ecdsaSigner.keyId, undefined],
      [mldsaLine!, mldsaSigner.keyId, 4 + 3309],
    ] as const) {
      expect(line.startsWith(`\u2014 ${NAME} `)).toBe(true);
      const bytes = Buffer.from(line.split(' ')[2]!, 'base64');
      expect(bytes.readUInt32BE(0)).toBe(keyId);
      if (length !== undefined) expect(bytes.length).toBe(length);
    }
  });
});

describe('signNote / openNote', () => {
  it('writes text, a blank line and one line per signer', () => {
    expect(both.startsWith(TEXT + '\n\u2014 ')).toBe(true);
    expect(signatureLines(both)).toHaveLength(2);
    expect(both.endsWith('\n')).toBe(true);
  });
  it('signatures are deterministic', () => {
    expect(signNote(TEXT, [ecdsaSigner, mldsaSigner])).toBe(both);
  });
  it('opens with either key or both', () => {
    expect(openNote(both, [ecdsaVerifier])).toBe(TEXT);
    expect(openNote(both, [mldsaVerifier])).toBe(TEXT);
    expect(openNote(both, [ecdsaVerifier, mldsaVerifier])).toBe(TEXT);
    expect(verifyNoteSignatures(both, [mldsaVerifier, ecdsaVerifier]).verified).toEqual([ecdsaVerifier, mldsaVerifier]);
    expect(openNote(enc.encode(both), [ecdsaVerifier])).toBe(TEXT);
  });
  it('the signatures verify with node:crypto (OpenSSL): DER ECDSA over SHA-256(text), pure ML-DSA-65 over text', () => {
    const [ecdsaLine, mldsaLine] = signatureLines(both).map((line) =>
      Buffer.from(line.split(' ')[2]!, 'base64').subarray(4),
    );
    expect(crypto.verify('sha256', enc.encode(TEXT), ecdsaPublicKeyToPem(ecdsa.publicKey), ecdsaLine!)).toBe(true);
    expect(crypto.verify(null, enc.encode(TEXT), mldsaPublicKeyToPem(mldsa.publicKey), mldsaLine!)).toBe(true);
  });
  it('round-trips any valid text', () => {
    const char = fc.constantFrom('a', 'Z', ' ', '\n', '\u2014', '+', 'é', '😀', '-', '=');
    fc.assert(
      fc.property(fc.array(char, { maxLength: 40 }), (chars) => {
        const text = chars.join('') + '\n';
        const note = signNote(text, [ecdsaSigner]);
        expect(parseNote(note).text).toBe(text);
        expect(openNote(note, [ecdsaVerifier])).toBe(text);
      }),
      { numRuns: 50 },
    );
  });
  it('refuses to sign invalid text or with an invalid name', () => {
    expect(() => signNote('no newline', [ecdsaSigner])).toThrow(FormatError);
    expect(() => signNote('tab\there\n', [ecdsaSigner])).toThrow(FormatError);
    expect(() => signNote('lone \ud800\n', [ecdsaSigner])).toThrow(FormatError);
    expect(() => signNote(TEXT, [])).toThrow(FormatError);
    expect(() => ecdsaNoteSigner('has space', ecdsa.secretKey, ecdsa.publicKey)).toThrow(FormatError);
    expect(() => mldsaNoteVerifier('a+b', mldsa.publicKey)).toThrow(FormatError);
    expect(() => ecdsaNoteVerifier('', ecdsa.publicKey)).toThrow(FormatError);
  });
  it('refuses a signer whose public key does not match its secret', () => {
    expect(() => ecdsaNoteSigner(NAME, ecdsa.secretKey, ecdsaKeygen().publicKey)).toThrow(MismatchError);
    expect(() => mldsaNoteSigner(NAME, mldsa.seed, mldsaKeygen().publicKey)).toThrow(MismatchError);
    expect(mldsaNoteSigner(NAME, mldsa.secretKey, mldsa.publicKey).keyId).toBe(mldsaSigner.keyId);
  });
});

describe('parseNote rejects malformed notes with a FormatError', () => {
  const [ecdsaLine] = signatureLines(ecdsaOnly);
  const b64 = ecdsaLine!.split(' ')[2]!;
  const cases: Array<[string, string | Uint8Array]> = [
    ['no blank line', TEXT + ecdsaLine + '\n'],
    ['missing final newline', ecdsaOnly.slice(0, -1)],
    ['hyphen instead of em dash', ecdsaOnly.replace('\u2014 ', '- ')],
    ['en dash instead of em dash', ecdsaOnly.replace('\u2014 ', '\u2013 ')],
    ['em dash without the space', ecdsaOnly.replace('\u2014 ', '\u2014')],
    ['bad base64 character', ecdsaOnly.replace(b64, '!' + b64.slice(1))],
    ['unpadded base64', ecdsaOnly.replace(b64, b64.replace(/=+$/, ''))],
    ['a tab in the text', signNoteUnchecked('a\tb\n')],
    ['a carriage return', ecdsaOnly.replaceAll('\n', '\r\n')],
    ['a NUL byte', signNoteUnchecked('a\u0000\n')],
    ['a control character in a signature line', ecdsaOnly.replace(`${NAME} `, `${NAME}\u0007 `)],
    ["'+' in the key name", ecdsaOnly.replace(`${NAME} `, 'a+b ')],
    ['a space in the key name', ecdsaOnly.replace(`${NAME} `, 'a b ')],
    ['a Unicode space in the key name', ecdsaOnly.replace(`${NAME} `, 'a\u00a0b ')],
    ['an empty key name', ecdsaOnly.replace(`${NAME} `, ' ')],
    ['a line without a signature', ecdsaOnly.replace(` ${b64}`, '')],
    ['a signature shorter than key id + 1 byte', ecdsaOnly.replace(b64, 'AAAAAA==')],
    ['101 signature lines', TEXT + '\n' + `${ecdsaLine}\n`.repeat(101)],
    ['no signature lines', TEXT + '\n'],
    ['a blank line after the signatures', ecdsaOnly + '\n'],
    [
      'invalid UTF-8',
      new Uint8Array([...enc.encode('a\xff').subarray(0, 1), 0xff, ...enc.encode(ecdsaOnly.slice(TEXT.length - 1))]),
    ],
    ['a lone surrogate', 'a\ud800\n\n' + ecdsaLine + '\n'],
    ['an empty note', ''],
  ];
  it.each(cases)('%s', (_, note) => {
    expect(() => parseNote(note)).toThrow(FormatError);
    expect(() => openNote(note, [ecdsaVerifier])).toThrow(FormatError);
  });
  it('accepts exactly 100 signature lines, and text with blank lines of its own', () => {
    expect(parseNote(TEXT + '\n' + `${ecdsaLine}\n`.repeat(100)).signatures).toHaveLength(100);
    const text = 'first\n\nthird\n\n';
    expect(openNote(signNote(text, [ecdsaSigner]), [ecdsaVerifier])).toBe(text);
  });
  it('returns names, key ids and signature bytes', () => {
    const { text, signatures } = parseNote(both);
    expect(text).toBe(TEXT);
    expect(signatures.map((s) => [s.name, s.keyId, s.signature.length > 0])).toEqual([
      [NAME, ecdsaSigner.keyId, true],
      [NAME, mldsaSigner.keyId, true],
    ]);
    expect(signatures[1]!.signature.length).toBe(3309);
  });
});

/** A note with a valid-looking signature line over text signNote would refuse, to test the parser. */
function signNoteUnchecked(text: string): string {
  return text + '\n' + signatureLines(ecdsaOnly)[0] + '\n';
}

describe('tampering', () => {
  const textBytes = enc.encode(TEXT);
  it('a flipped bit anywhere in the note text fails verification, for each key', () => {
    const bytes = enc.encode(both);
    for (let i = 0; i < textBytes.length; i++) {
      const tampered = bytes.slice();
      tampered[i]! ^= 0x01;
      expect(() => openNote(tampered, [ecdsaVerifier]), `byte ${i}`).toThrow();
      expect(() => openNote(tampered, [mldsaVerifier]), `byte ${i}`).toThrow();
    }
  });
  it('a flipped bit anywhere in the text of an otherwise well-formed note is a SignatureError', () => {
    let checked = 0;
    for (let i = 0; i < textBytes.length; i++) {
      const text = textBytes.slice();
      text[i]! ^= 0x20;
      const tampered = new TextDecoder().decode(text) + both.slice(TEXT.length);
      if (tampered.split('\n\n').length !== both.split('\n\n').length || /[\u0000-\u0009\u000b-\u001f]/.test(tampered))
        continue;
      expect(() => openNote(tampered, [ecdsaVerifier, mldsaVerifier]), `byte ${i}`).toThrow(SignatureError);
      checked++;
    }
    expect(checked).toBeGreaterThan(textBytes.length / 2);
  });
  it('a flipped byte anywhere in either signature is a SignatureError', () => {
    const { signatures } = parseNote(both);
    for (const [index, verifier] of [
      [0, ecdsaVerifier],
      [1, mldsaVerifier],
    ] as const) {
      const sig = signatures[index]!;
      // Every byte of the ECDSA signature; of ML-DSA-65's 3,309 (each check ~4 ms), every byte of its first and
      // last 128 (the challenge c̃, the start of z, and the hint h at its end) and every 7th between, which
      // lands in each of z's 5 polynomials at every bit position of its 20-bit packing.
      const flipped = (i: number): boolean => index === 0 || i < 128 || i >= sig.signature.length - 128 || i % 7 === 0;
      for (let i = 0; i < sig.signature.length; i++) {
        if (!flipped(i)) continue;
        const changed = sig.signature.slice();
        changed[i]! ^= 0x01;
        expect(verifier.verify(textBytes, changed), `signature ${index} byte ${i}`).toBe(false);
      }
      const changed = sig.signature.slice();
      changed[changed.length - 1]! ^= 0x01;
      const line = `\u2014 ${NAME} ${Buffer.concat([Buffer.from([sig.keyId >>> 24, (sig.keyId >>> 16) & 255, (sig.keyId >>> 8) & 255, sig.keyId & 255]), changed]).toString('base64')}`;
      const lines = signatureLines(both);
      lines[index] = line;
      const tampered = TEXT + '\n' + lines.join('\n') + '\n';
      expect(() => openNote(tampered, [ecdsaVerifier, mldsaVerifier])).toThrow(SignatureError);
      expect(() => openNote(tampered, [verifier])).toThrow(SignatureError);
    }
  });
  it('a known key with a signature over other text rejects the whole note, even when another key verifies', () => {
    const other = signNote('other\n', [mldsaSigner]);
    const note = TEXT + '\n' + signatureLines(ecdsaOnly)[0] + '\n' + signatureLines(other)[0] + '\n';
    expect(openNote(note, [ecdsaVerifier])).toBe(TEXT);
    expect(() => openNote(note, [ecdsaVerifier, mldsaVerifier])).toThrow(SignatureError);
  });
});

describe('unknown keys', () => {
  const stranger = ecdsaKeygen(new Uint8Array(48).fill(3));
  it('lines from unknown keys are ignored, including same name with another id and same id with another name', () => {
    const sameName = ecdsaNoteSigner(NAME, stranger.secretKey, stranger.publicKey);
    const otherName = ecdsaNoteSigner('witness.example', ecdsa.secretKey, ecdsa.publicKey);
    const forged = { ...sameName, sign: () => new Uint8Array(70) };
    const garbageSameId = { ...otherName, sign: () => new Uint8Array(70) };
    const note = signNote(TEXT, [forged, garbageSameId, ecdsaSigner]);
    expect(signatureLines(note)).toHaveLength(3);
    expect(openNote(note, [ecdsaVerifier])).toBe(TEXT);
    expect(verifyNoteSignatures(note, [ecdsaVerifier]).verified).toEqual([ecdsaVerifier]);
  });
  it('a note signed only by unknown keys is rejected with a SignatureError', () => {
    const note = signNote(TEXT, [ecdsaNoteSigner(NAME, stranger.secretKey, stranger.publicKey)]);
    expect(() => openNote(note, [ecdsaVerifier, mldsaVerifier])).toThrow(SignatureError);
    expect(() => openNote(both, [])).toThrow(SignatureError);
    expect(() => openNote(both, [ecdsaNoteVerifier('other.example', ecdsa.publicKey)])).toThrow(SignatureError);
  });
});
