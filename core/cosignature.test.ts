import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeCheckpoint } from './checkpoint.ts';
import {
  ed25519CosignatureSigner,
  ed25519CosignatureVerifier,
  ed25519NoteSigner,
  ed25519NoteVerifier,
  ed25519PublicKey,
  encodeVkey,
  mldsa44CosignatureSigner,
  mldsa44CosignatureVerifier,
  mldsa44CosignedMessage,
  mldsa44PublicKey,
  MLDSA44_SIGNATURE_SIZE,
  NOTE_TYPE_ED25519,
  NOTE_TYPE_MLDSA44_COSIGNATURE,
  parseVkey,
  seedFromPkcs8Pem,
  seedToPkcs8Pem,
  typedKeyId,
  vkeyVerifier,
} from './cosignature.ts';
import { concatBytes, fromBase64, fromHex, toHex, utf8 } from './encoding.ts';
import { parseNote, signNote, verifyNoteSignatures } from './note.ts';

const VECTORS = path.resolve(import.meta.dirname, '../test/vectors/signed-note');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-cosignature-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const seed = (n: number) => new Uint8Array(32).fill(n);
const checkpoint = { origin: 'timeseal.test', size: 1234, root: new Uint8Array(32).fill(0xab) };
const text = encodeCheckpoint(checkpoint);

describe('Ed25519 note signatures (type 0x01)', () => {
  it('verifies the signed-note spec example with its vkey, and rejects a changed byte', () => {
    const vkey = parseVkey(fs.readFileSync(path.join(VECTORS, 'example.vkey'), 'utf8'));
    expect(vkey).toMatchObject({ name: 'example.com/foo', keyId: 0x530d903a, type: NOTE_TYPE_ED25519 });
    const note = fs.readFileSync(path.join(VECTORS, 'example.note'), 'utf8');
    expect(verifyNoteSignatures(note, [vkeyVerifier(vkey)]).text).toBe('This is an example message.\n');
    expect(() =>
      verifyNoteSignatures(note.replace('example message', 'example massage'), [vkeyVerifier(vkey)]),
    ).toThrow(/Ed25519 line of example.com\/foo/);
  });

  it('signs what OpenSSL verifies, with a private key file OpenSSL reads', () => {
    const signer = ed25519NoteSigner('timeseal.test', seed(7));
    const note = signNote(text, [signer]);
    const { signatures } = parseNote(note);
    expect(signatures[0]!.keyId).toBe(typedKeyId('timeseal.test', 0x01, ed25519PublicKey(seed(7))));
    const keyFile = path.join(tmp, 'ed25519.pem');
    fs.writeFileSync(keyFile, seedToPkcs8Pem('Ed25519', seed(7)));
    const pubPem = execFileSync('openssl', ['pkey', '-in', keyFile, '-pubout'], { encoding: 'utf8' });
    const der = crypto.createPublicKey(pubPem).export({ format: 'der', type: 'spki' });
    expect(toHex(der.subarray(-32))).toBe(toHex(ed25519PublicKey(seed(7))));
    fs.writeFileSync(path.join(tmp, 'text'), text);
    fs.writeFileSync(path.join(tmp, 'sig'), signatures[0]!.signature);
    fs.writeFileSync(path.join(tmp, 'pub.pem'), pubPem);
    const out = execFileSync(
      'openssl',
      [
        'pkeyutl',
        '-verify',
        '-pubin',
        '-inkey',
        path.join(tmp, 'pub.pem'),
        '-rawin',
        '-in',
        path.join(tmp, 'text'),
        '-sigfile',
        path.join(tmp, 'sig'),
      ],
      { encoding: 'utf8' },
    );
    expect(out).toMatch(/Signature Verified Successfully/);
    expect(seedFromPkcs8Pem('Ed25519', fs.readFileSync(keyFile, 'utf8'))).toEqual(seed(7));
    expect(() => seedFromPkcs8Pem('ML-DSA-44', fs.readFileSync(keyFile, 'utf8'))).toThrow(
      /not a PKCS#8 ML-DSA-44 seed/,
    );
    expect(
      verifyNoteSignatures(note, [ed25519NoteVerifier('timeseal.test', ed25519PublicKey(seed(7)))]).verified,
    ).toHaveLength(1);
  });
});

describe('ML-DSA-44 cosignatures (tlog-cosignature, type 0x06)', () => {
  it('signs the subtree/v1 cosigned_message of the checkpoint, deterministically, and verifies it', () => {
    const message = mldsa44CosignedMessage('timeseal.test', 0, checkpoint);
    const expected = concatBytes(
      utf8('subtree/v1\n\0'),
      Uint8Array.of(13),
      utf8('timeseal.test'),
      new Uint8Array(8),
      Uint8Array.of(13),
      utf8('timeseal.test'),
      new Uint8Array(8),
      Uint8Array.of(0, 0, 0, 0, 0, 0, 0x04, 0xd2),
      checkpoint.root,
    );
    expect(toHex(message)).toBe(toHex(expected));
    const signer = mldsa44CosignatureSigner('timeseal.test', seed(9));
    const a = signNote(text, [signer]);
    expect(signNote(text, [signer])).toBe(a);
    const line = parseNote(a).signatures[0]!;
    expect(line.signature.length).toBe(8 + MLDSA44_SIGNATURE_SIZE);
    expect(toHex(line.signature.subarray(0, 8))).toBe('0000000000000000');
    const verifier = mldsa44CosignatureVerifier('timeseal.test', mldsa44PublicKey(seed(9)));
    expect(line.keyId).toBe(verifier.keyId);
    expect(verifyNoteSignatures(a, [verifier]).verified).toEqual([verifier]);
    // An implementation not written here agrees: Node's crypto (OpenSSL 3.5) verifies the ML-DSA-44 signature
    // over the cosigned_message with the key in an RFC 9881 SubjectPublicKeyInfo.
    const spki = concatBytes(fromHex('30820532300b06096086480165030403110382052100'), mldsa44PublicKey(seed(9)));
    const nodeKey = crypto.createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' });
    expect(nodeKey.asymmetricKeyType).toBe('ml-dsa-44');
    expect(crypto.verify(null, message, nodeKey, line.signature.subarray(8))).toBe(true);
    // Another root, size or origin; another cosigner name for the same key; a changed timestamp: all refused.
    for (const other of [
      { ...checkpoint, size: 1235 },
      { ...checkpoint, root: new Uint8Array(32) },
      { ...checkpoint, origin: 'other.test' },
    ]) {
      expect(verifier.verify(utf8(encodeCheckpoint(other)), line.signature)).toBe(false);
    }
    expect(
      mldsa44CosignatureVerifier('timeseal.other', mldsa44PublicKey(seed(9))).verify(utf8(text), line.signature),
    ).toBe(false);
    const retimed = line.signature.slice();
    retimed[7] = 1;
    expect(verifier.verify(utf8(text), retimed)).toBe(false);
    expect(verifier.verify(utf8('not a checkpoint\n'), line.signature)).toBe(false);
  });

  it('carries the timestamp a witness gives it', () => {
    const signer = mldsa44CosignatureSigner('witness.test/w1', seed(3), () => 1_764_000_000);
    const sig = parseNote(signNote(text, [signer])).signatures[0]!.signature;
    const verifier = mldsa44CosignatureVerifier('witness.test/w1', mldsa44PublicKey(seed(3)));
    expect(verifier.timestamp(sig)).toBe(1_764_000_000);
    expect(verifier.verify(utf8(text), sig)).toBe(true);
  });

  it('private key files hold the seed (RFC 9881 seed-only PKCS#8 with id-ml-dsa-44)', () => {
    const pem = seedToPkcs8Pem('ML-DSA-44', seed(5));
    const der = fromBase64(
      pem
        .split('\n')
        .filter((l) => l && !l.startsWith('-----'))
        .join(''),
    );
    expect(toHex(der.subarray(0, 22))).toBe('3034020100300b060960864801650304031104228020');
    expect(seedFromPkcs8Pem('ML-DSA-44', pem)).toEqual(seed(5));
  });
});

describe('Ed25519 cosignatures (type 0x04) and vkeys', () => {
  it('verifies cosignature/v1 over the time line and the note text', () => {
    const signer = ed25519CosignatureSigner('witness.test/w2', seed(4), () => 1_700_000_000);
    const sig = parseNote(signNote(text, [signer])).signatures[0]!.signature;
    const verifier = ed25519CosignatureVerifier('witness.test/w2', ed25519PublicKey(seed(4)));
    expect(verifier.verify(utf8(text), sig)).toBe(true);
    expect(verifier.timestamp(sig)).toBe(1_700_000_000);
    // The log's own Ed25519 key id (type 0x01) differs from the cosigner's (0x04) for the same key and name.
    expect(ed25519NoteVerifier('witness.test/w2', ed25519PublicKey(seed(4))).keyId).not.toBe(verifier.keyId);
    const shifted = sig.slice();
    shifted[7]! ^= 1;
    expect(verifier.verify(utf8(text), shifted)).toBe(false);
  });

  it('encodes and strictly parses vkeys', () => {
    const pub = mldsa44PublicKey(seed(2));
    const text6 = encodeVkey('witness.test/w1', NOTE_TYPE_MLDSA44_COSIGNATURE, pub);
    expect(parseVkey(text6)).toEqual({
      name: 'witness.test/w1',
      keyId: typedKeyId('witness.test/w1', 6, pub),
      type: 6,
      publicKey: pub,
    });
    const [, name, id, key] = /^([^+]*)\+([^+]*)\+(.*)$/.exec(text6) as unknown as [string, string, string, string];
    expect(() => parseVkey(`${name}+${id.replace(/^./, id[0] === '0' ? '1' : '0')}+${key}`)).toThrow(/key ID/);
    expect(() => parseVkey(`${name}+${id}`)).toThrow(/expected/);
    expect(() =>
      parseVkey(`${name}+${id}+${Buffer.concat([Buffer.of(2), Buffer.from(pub)]).toString('base64')}`),
    ).toThrow(/0x02 is not one Timeseal knows/);
    expect(() =>
      parseVkey(`${name}+${id}+${Buffer.concat([Buffer.of(6), Buffer.from(pub.subarray(1))]).toString('base64')}`),
    ).toThrow(/1312 bytes/);
  });
});
