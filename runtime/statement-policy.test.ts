// The registration policy's signature step (runtime/statement-policy.ts): a statement signed with the key of a
// certificate that openssl made (not our code) and carried in its protected header's x5chain (label 33) is
// admitted with no configured key; one whose x5chain is another key's certificate, or whose alg does not fit the
// certificate's key, is refused; an iss with configured keys admits its key's statements (PEM or JWK).
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CborTag, encodeCbor, type CborValue } from '../core/cbor.ts';
import { sigStructure } from '../core/cose-receipt.ts';
import { StatementRefusal } from '../core/signed-statement.ts';
import { loadIssuerKeys, statementPolicy } from './statement-policy.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-statement-policy-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A self-signed certificate by openssl for a new P-256 (or P-384) key: [its DER, the private key]. */
function certificate(name: string, curve = 'prime256v1'): [Uint8Array, crypto.KeyObject] {
  const keyFile = path.join(dir, `${name}.key`);
  const certFile = path.join(dir, `${name}.der`);
  execFileSync('openssl', ['ecparam', '-name', curve, '-genkey', '-noout', '-out', keyFile]);
  execFileSync('openssl', [
    'req',
    '-new',
    '-x509',
    '-key',
    keyFile,
    '-subj',
    `/CN=${name}`,
    '-days',
    '2',
    '-outform',
    'DER',
    '-out',
    certFile,
  ]);
  return [new Uint8Array(fs.readFileSync(certFile)), crypto.createPrivateKey(fs.readFileSync(keyFile))];
}

function statement(key: crypto.KeyObject, header: Array<[number, CborValue]>, alg = -7, hash = 'sha256'): Uint8Array {
  const protectedBytes = encodeCbor(
    new Map<number, CborValue>([
      [1, alg],
      [3, 'application/json'],
      [
        15,
        new Map<number, CborValue>([
          [1, 'https://issuer.example'],
          [2, 'urn:example:a'],
        ]),
      ],
      ...header,
    ]),
  );
  const payload = new TextEncoder().encode('{"ok":true}');
  const signature = crypto.sign(hash, sigStructure(protectedBytes, payload), { key, dsaEncoding: 'ieee-p1363' });
  return encodeCbor(new CborTag(18, [protectedBytes, new Map(), payload, new Uint8Array(signature)]));
}

const refusal = (fn: () => unknown): StatementRefusal => {
  try {
    fn();
  } catch (err) {
    if (err instanceof StatementRefusal) return err;
    throw err;
  }
  throw new Error('admitted');
};

describe('the registration policy: x5chain and configured keys', () => {
  const [cert, key] = certificate('issuer');
  const [otherCert] = certificate('other');
  const [p384Cert, p384Key] = certificate('p384', 'secp384r1');
  const policy = statementPolicy(new Map(), 'timeseal.test', []);

  it("admits a statement signed with its x5chain's leaf certificate key (one certificate, or a chain)", () => {
    expect(policy.check(statement(key, [[33, cert]])).iss).toBe('https://issuer.example');
    expect(policy.check(statement(key, [[33, [cert, otherCert]]])).x5chain).toHaveLength(2);
    expect(policy.check(statement(p384Key, [[33, p384Cert]], -35, 'sha384')).algName).toBe('ES384');
  });

  it('refuses another key’s certificate, an alg the certificate’s key does not fit, an unreadable certificate, and no key at all', () => {
    expect(refusal(() => policy.check(statement(key, [[33, otherCert]]))).detail).toMatch(
      /the ES256 signature does not verify with the x5chain's leaf certificate/,
    );
    const wrongAlg = refusal(() => policy.check(statement(p384Key, [[33, p384Cert]])));
    expect([wrongAlg.title, wrongAlg.detail]).toEqual([
      'Bad Signature Algorithm',
      "alg ES256 needs a P-256 key; the x5chain's leaf certificate is a ec secp384r1 key, not P-256",
    ]);
    expect(refusal(() => policy.check(statement(key, [[33, new Uint8Array(10)]]))).detail).toMatch(
      /cannot be read as DER X\.509/,
    );
    expect(refusal(() => policy.check(statement(key, []))).detail).toMatch(
      /no key to check the signature with: the statement has no x5chain \(33\) .* no key for iss "https:\/\/issuer\.example"/,
    );
  });

  it('admits the statements of a configured iss key, given as a PEM or a JWK, and refuses a key of another iss', () => {
    const file = path.join(dir, 'issuers.json');
    const publicKey = crypto.createPublicKey(key);
    for (const entry of [publicKey.export({ format: 'pem', type: 'spki' }), publicKey.export({ format: 'jwk' })]) {
      fs.writeFileSync(file, JSON.stringify({ 'https://issuer.example': [entry] }));
      expect(statementPolicy(loadIssuerKeys(file), 'timeseal.test', []).check(statement(key, [])).sub).toBe(
        'urn:example:a',
      );
    }
    fs.writeFileSync(file, JSON.stringify({ 'https://other.example': [publicKey.export({ format: 'jwk' })] }));
    expect(
      refusal(() => statementPolicy(loadIssuerKeys(file), 'timeseal.test', []).check(statement(key, []))).title,
    ).toBe('Rejected');
    fs.writeFileSync(file, JSON.stringify({ 'https://issuer.example': ['not a key'] }));
    expect(() => loadIssuerKeys(file)).toThrow(
      /SCITT_ISSUER_KEYS: .*"https:\/\/issuer\.example"\[0\] is not a public key/,
    );
  });
});
