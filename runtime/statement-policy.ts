// The registration policy of POST /entries (docs/API.md, "Registration of Signed Statements"), and the check
// `timeseal verify` makes again of every published statement's signature: the structural
// checks of core/signed-statement.ts, then the signature, checked with node:crypto against the key of the
// leaf certificate of the statement's x5chain (label 33, RFC 9360) or against a key the operator configured
// for the statement's `iss` (SCITT_ISSUER_KEYS, a JSON file: docs/CONFIGURATION.md). The service's own `iss`
// (the log origin) has its ES256 receipt keys, in use and retired, so the policy statement Timeseal registers
// itself (ingest/routes/scitt-entries.ts) passes the same policy as everyone's.
//
// The policy as a document (`policyDocument`) is what GET /api/scitt/registration-policy serves and what the
// policy statement carries as its payload: one text, so that what is served is what is on the log.
import crypto from 'node:crypto';
import fs from 'node:fs';
import {
  readSignedStatement,
  StatementRefusal,
  STATEMENT_ALGORITHMS,
  STATEMENT_MAX_BYTES,
  type SignedStatement,
} from '../core/signed-statement.ts';
import { ALG_ES256, type ReceiptPublicKey } from '../core/cose-receipt.ts';
import { UsageError } from './usage-error.ts';
import { nodeSha256 } from './node-hash.ts';

/** The keys an `iss` may sign with: node:crypto public keys. */
export type IssuerKeys = ReadonlyMap<string, readonly crypto.KeyObject[]>;

/**
 * Reads SCITT_ISSUER_KEYS: a JSON object whose members are `iss` values, each an array of public keys, every
 * key a JWK object (RFC 7517) or an SPKI PEM text. Any other shape is a UsageError naming the member.
 */
export function loadIssuerKeys(file: string | undefined): Map<string, crypto.KeyObject[]> {
  const keys = new Map<string, crypto.KeyObject[]>();
  if (file === undefined) return keys;
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`SCITT_ISSUER_KEYS: ${file} cannot be read as JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new UsageError(`SCITT_ISSUER_KEYS: ${file} must hold an object {"<iss>": [<JWK or PEM>, …]}`);
  for (const [iss, list] of Object.entries(parsed)) {
    if (!Array.isArray(list) || list.length === 0)
      throw new UsageError(`SCITT_ISSUER_KEYS: ${file}: ${JSON.stringify(iss)} must be a non-empty array of keys`);
    keys.set(
      iss,
      list.map((k: unknown, i) => {
        try {
          if (typeof k === 'string') return crypto.createPublicKey(k);
          if (typeof k === 'object' && k !== null)
            return crypto.createPublicKey({ key: k, format: 'jwk' } as crypto.JsonWebKeyInput);
        } catch (err) {
          throw new UsageError(
            `SCITT_ISSUER_KEYS: ${file}: ${JSON.stringify(iss)}[${i}] is not a public key: ${(err as Error).message}`,
          );
        }
        throw new UsageError(
          `SCITT_ISSUER_KEYS: ${file}: ${JSON.stringify(iss)}[${i}] must be a JWK object or a PEM text`,
        );
      }),
    );
  }
  return keys;
}

/** An ES256 receipt key (a 65-byte uncompressed P-256 point) as a node:crypto key. */
export function receiptKeyObject(key: ReceiptPublicKey): crypto.KeyObject {
  const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
  return crypto.createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: b64(key.publicKey.subarray(1, 33)), y: b64(key.publicKey.subarray(33, 65)) },
    format: 'jwk',
  });
}

const CURVES: Record<string, string> = { 'P-256': 'prime256v1', 'P-384': 'secp384r1', 'P-521': 'secp521r1' };

/** Why `key` cannot check `alg`'s signatures, or null when it can. */
function keyMismatch(key: crypto.KeyObject, want: string): string | null {
  const type = key.asymmetricKeyType;
  if (want === 'RSA') return type === 'rsa' || type === 'rsa-pss' ? null : `a ${type} key, not RSA`;
  if (want === 'Ed25519') return type === 'ed25519' ? null : `a ${type} key, not Ed25519`;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  return type === 'ec' && curve === CURVES[want] ? null : `a ${type}${curve ? ` ${curve}` : ''} key, not ${want}`;
}

/** The signature check of RFC 9052 §4.4 with node:crypto: ECDSA as r || s (RFC 9053 §2.1), PSS with its hash's length of salt. */
function signatureVerifies(statement: SignedStatement, key: crypto.KeyObject): boolean {
  const algorithm = STATEMENT_ALGORITHMS.get(statement.alg)!;
  try {
    if (algorithm.key === 'Ed25519') return crypto.verify(null, statement.toBeSigned, key, statement.signature);
    if (algorithm.key === 'RSA') {
      const saltLength = { sha256: 32, sha384: 48, sha512: 64 }[algorithm.hash as 'sha256'];
      return crypto.verify(
        algorithm.hash,
        statement.toBeSigned,
        { key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength },
        statement.signature,
      );
    }
    return crypto.verify(algorithm.hash, statement.toBeSigned, { key, dsaEncoding: 'ieee-p1363' }, statement.signature);
  } catch {
    return false;
  }
}

/** The policy's refusal when there is no key to check the signature with (no x5chain, no key for the iss):
 * `timeseal verify` counts such a statement as not checked rather than as a problem. */
export class NoStatementKey extends StatementRefusal {}

export interface StatementPolicy {
  /** Applies the policy to a request body: the statement, or a StatementRefusal saying why not. */
  check(body: Uint8Array): SignedStatement;
}

/**
 * The policy with the operator's issuer keys and the service's own: `ownIss` (the log origin) with the ES256
 * receipt keys `ownKeys`.
 */
export function statementPolicy(
  issuerKeys: IssuerKeys,
  ownIss: string,
  ownKeys: readonly ReceiptPublicKey[],
): StatementPolicy {
  const own = ownKeys.filter((k) => k.alg === ALG_ES256).map(receiptKeyObject);
  const keysOf = (iss: string): readonly crypto.KeyObject[] => [
    ...(issuerKeys.get(iss) ?? []),
    ...(iss === ownIss ? own : []),
  ];
  return {
    check(body) {
      const statement = readSignedStatement(body, nodeSha256);
      const want = STATEMENT_ALGORITHMS.get(statement.alg)!.key;
      const candidates: Array<{ key: crypto.KeyObject; from: string }> = [];
      if (statement.x5chain.length > 0) {
        let leaf: crypto.X509Certificate;
        try {
          leaf = new crypto.X509Certificate(statement.x5chain[0]!);
        } catch (err) {
          throw new StatementRefusal(
            'Rejected',
            `the first certificate of the x5chain (33) cannot be read as DER X.509: ${(err as Error).message}`,
          );
        }
        candidates.push({ key: leaf.publicKey, from: "the x5chain's leaf certificate" });
      }
      for (const key of keysOf(statement.iss))
        candidates.push({ key, from: `a key configured for iss ${JSON.stringify(statement.iss)}` });
      if (candidates.length === 0) {
        throw new NoStatementKey(
          'Rejected',
          `no key to check the signature with: the statement has no x5chain (33) in its protected header and this Transparency Service has no key for iss ${JSON.stringify(statement.iss)}`,
        );
      }
      const usable = candidates.filter((c) => keyMismatch(c.key, want) === null);
      if (usable.length === 0) {
        throw new StatementRefusal(
          'Bad Signature Algorithm',
          `alg ${statement.algName} needs a ${want} key; ${candidates.map((c) => `${c.from} is ${keyMismatch(c.key, want)}`).join('; ')}`,
        );
      }
      if (!usable.some((c) => signatureVerifies(statement, c.key))) {
        throw new StatementRefusal(
          'Rejected',
          `the ${statement.algName} signature does not verify with ${usable.map((c) => c.from).join(' or ')}`,
        );
      }
      return statement;
    },
  };
}

/** The registration policy as served and as registered (docs/API.md): version 1. */
export function policyDocument(origin: string, ownIss: string): Record<string, unknown> {
  return {
    policy: 'timeseal-registration-policy/1',
    transparencyService: origin.replace(/\/+$/, ''),
    iss: ownIss,
    signedStatement: {
      envelope:
        'COSE_Sign1 (RFC 9052 §4.2), tag 18 or untagged, well-formed CBOR (RFC 8949), no indefinite lengths or floats',
      maxBytes: STATEMENT_MAX_BYTES,
      protectedHeader: {
        alg: [...STATEMENT_ALGORITHMS].map(([n, a]) => `${a.name} (${n})`),
        contentType: 'required (label 3)',
        cwtClaims: 'required (label 15): iss (1) and sub (2), text',
        x5chain: 'optional (label 33): the leaf certificate’s key may sign',
      },
      payload: 'attached (a detached payload is refused)',
      signature: `verifies (RFC 9052 §4.4) with the key of the x5chain's leaf certificate, or with a key the operator configured for the iss; the iss ${JSON.stringify(ownIss)} signs with this service's ES256 receipt keys`,
    },
    onTheLog:
      'the statement with its unprotected header set to an empty map, deterministic CBOR; the log entry is its SHA-256',
    registration: 'registered when the UTC day of its registration is published (00:01 UTC the next day)',
  };
}
