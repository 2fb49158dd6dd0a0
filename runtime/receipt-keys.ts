// The receipt keys (docs/FORMAT.md §11): a P-256 key (COSE ES256) and an ML-DSA-65 key (COSE −49) that sign
// each day's checkpoint root for the COSE receipts (core/cose-receipt.ts), apart from the log's own keys so that
// either can be rotated alone. Public keys in the served keys folder as SubjectPublicKeyInfo PEM (RFC 5480,
// RFC 9881), private keys beside the others (mode 0600). `timeseal keys init` makes them with the rest;
// `timeseal keys add` gives them to an archive made before them (its published days keep no receipt).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { makeFolderDurably, syncFolder, writeNewFileDurably } from './durable-file.ts';
import {
  ALG_ES256,
  ALG_ML_DSA_65,
  parseRetiredReceiptKeys,
  RETIRED_RECEIPT_KEYS,
  type ReceiptKeyEntry,
  type ReceiptPublicKey,
  type ReceiptSigningKey,
} from '../core/cose-receipt.ts';
import { equalBytes } from '../core/encoding.ts';
import { TimesealError } from '../core/errors.ts';
import {
  ecdsaKeygen,
  ecdsaPublicKeyFromPem,
  ecdsaPublicKeyToPem,
  ecdsaSecretKeyFromPkcs8Pem,
  ecdsaSecretKeyToPkcs8Pem,
  ECDSA_KEYGEN_SEED_SIZE,
  mldsaKeygen,
  mldsaPublicKeyFromPem,
  mldsaPublicKeyToPem,
  mldsaSeedFromPkcs8Pem,
  mldsaSeedToPkcs8Pem,
  MLDSA_SEED_SIZE,
} from '../core/sig.ts';
import { readKeyText, refuseExisting, type KeyDirs } from './key-files.ts';

export const PUBLIC_RECEIPT_ES256_PEM = 'receipt-es256.pem';
export const PUBLIC_RECEIPT_MLDSA_PEM = 'receipt-mldsa65.pem';
export const PRIVATE_RECEIPT_ES256_PEM = 'receipt_es256_private.pem';
export const PRIVATE_RECEIPT_MLDSA_PEM = 'receipt_mldsa65_private.pem';
export { parseRetiredReceiptKeys, RETIRED_RECEIPT_KEYS };

/** The four files of the receipt keys: the two public, then the two private. */
export function receiptKeyFiles(dirs: KeyDirs): string[] {
  return [
    path.join(dirs.keys, PUBLIC_RECEIPT_ES256_PEM),
    path.join(dirs.keys, PUBLIC_RECEIPT_MLDSA_PEM),
    path.join(dirs.privateKeys, PRIVATE_RECEIPT_ES256_PEM),
    path.join(dirs.privateKeys, PRIVATE_RECEIPT_MLDSA_PEM),
  ];
}

/** Whether the archive has all four receipt key files (false when it has none; a partial set is an error). */
export function hasReceiptKeys(dirs: KeyDirs): boolean {
  const present = receiptKeyFiles(dirs).filter((f) => fs.existsSync(f));
  if (present.length === 0) return false;
  if (present.length === 4) return true;
  throw new TimesealError(
    'not-found',
    `only some of the receipt keys exist (${present.join(', ')}); all four or none (\`timeseal keys add\` makes them when none exists)`,
  );
}

/** Creates the two receipt key pairs. Throws (changing nothing) if any of their files exists. */
export function addReceiptKeys(dirs: KeyDirs): string[] {
  const files = receiptKeyFiles(dirs);
  refuseExisting(files);
  const es256 = ecdsaKeygen(crypto.randomBytes(ECDSA_KEYGEN_SEED_SIZE));
  const mldsa = mldsaKeygen(crypto.randomBytes(MLDSA_SEED_SIZE));
  makeFolderDurably(dirs.keys);
  makeFolderDurably(dirs.privateKeys, 0o700);
  writeNewFileDurably(files[2]!, ecdsaSecretKeyToPkcs8Pem(es256.secretKey), 0o600);
  writeNewFileDurably(files[3]!, mldsaSeedToPkcs8Pem(mldsa.seed), 0o600);
  writeNewFileDurably(files[0]!, ecdsaPublicKeyToPem(es256.publicKey));
  writeNewFileDurably(files[1]!, mldsaPublicKeyToPem(mldsa.publicKey));
  return files;
}

/** The receipt keys in a keys folder's two PEM texts (from a folder or a URL): ES256 first; both or neither. */
export function receiptKeysFromPems(es256: string | undefined, mldsa: string | undefined): ReceiptPublicKey[] {
  if (es256 === undefined && mldsa === undefined) return [];
  if (es256 === undefined || mldsa === undefined)
    throw new TimesealError(
      'not-found',
      `only one of ${PUBLIC_RECEIPT_ES256_PEM} and ${PUBLIC_RECEIPT_MLDSA_PEM} is published; both or neither`,
    );
  return [
    { alg: ALG_ES256, publicKey: ecdsaPublicKeyFromPem(es256) },
    { alg: ALG_ML_DSA_65, publicKey: mldsaPublicKeyFromPem(mldsa) },
  ];
}

/** The published receipt keys, ES256 first; empty for an archive without them. */
export function loadReceiptPublicKeys(keysDir: string): ReceiptPublicKey[] {
  const read = (name: string): string | undefined => {
    const file = path.join(keysDir, name);
    return fs.existsSync(file) ? readKeyText(file) : undefined;
  };
  return receiptKeysFromPems(read(PUBLIC_RECEIPT_ES256_PEM), read(PUBLIC_RECEIPT_MLDSA_PEM));
}

/** The retired receipt keys of a keys folder; empty when it has none. */
export function loadRetiredReceiptKeys(keysDir: string): ReceiptKeyEntry[] {
  const file = path.join(keysDir, RETIRED_RECEIPT_KEYS);
  return fs.existsSync(file) ? parseRetiredReceiptKeys(readKeyText(file)) : [];
}

/**
 * Replaces both receipt keys with new ones (`timeseal keys rotate-receipt`): the current keys are appended to
 * RETIRED_RECEIPT_KEYS with the days they signed, `[first, last]`, before new key files replace theirs (each
 * written to a temporary file and renamed), so a published receipt stays verifiable with the key set, which
 * lists retired keys too. Returns the files written.
 */
export function rotateReceiptKeys(dirs: KeyDirs, signed: [string, string]): string[] {
  if (!hasReceiptKeys(dirs))
    throw new TimesealError('not-found', 'no receipt keys to rotate (`timeseal keys add` makes them)');
  const current = loadReceiptPublicKeys(dirs.keys);
  const lines = current.map(
    (k) =>
      `retired ${k.alg === ALG_ES256 ? 'ES256' : 'ML-DSA-65'} ${signed[0]} ${signed[1]} ${Buffer.from(k.publicKey).toString('base64')}\n`,
  );
  const retired = path.join(dirs.keys, RETIRED_RECEIPT_KEYS);
  const fd = fs.openSync(retired, 'a');
  try {
    fs.writeFileSync(fd, lines.join(''));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  syncFolder(dirs.keys);
  const es256 = ecdsaKeygen(crypto.randomBytes(ECDSA_KEYGEN_SEED_SIZE));
  const mldsa = mldsaKeygen(crypto.randomBytes(MLDSA_SEED_SIZE));
  const [pubEs, pubMl, privEs, privMl] = receiptKeyFiles(dirs);
  // Each new key durable (runtime/durable-file.ts) in a temporary file with its mode, then renamed over the old.
  const replace = (file: string, text: string, mode?: number) => {
    fs.rmSync(`${file}.tmp`, { force: true });
    writeNewFileDurably(`${file}.tmp`, text, mode);
    fs.renameSync(`${file}.tmp`, file);
    syncFolder(path.dirname(file));
  };
  // Private keys first: a rotation stopped between the two pairs leaves keys that do not match, which
  // loadReceiptSigningKeys refuses, naming them, rather than signing with a key the key set does not list.
  replace(privEs!, ecdsaSecretKeyToPkcs8Pem(es256.secretKey), 0o600);
  replace(privMl!, mldsaSeedToPkcs8Pem(mldsa.seed), 0o600);
  replace(pubEs!, ecdsaPublicKeyToPem(es256.publicKey));
  replace(pubMl!, mldsaPublicKeyToPem(mldsa.publicKey));
  return [retired, pubEs!, pubMl!, privEs!, privMl!];
}

/** The receipt signing keys, each private key checked against its published key; empty without them. */
export function loadReceiptSigningKeys(dirs: KeyDirs): ReceiptSigningKey[] {
  if (!hasReceiptKeys(dirs)) return [];
  const [es256Public, mldsaPublic] = loadReceiptPublicKeys(dirs.keys);
  const es256 = ecdsaSecretKeyFromPkcs8Pem(readKeyText(path.join(dirs.privateKeys, PRIVATE_RECEIPT_ES256_PEM)));
  const mldsa = mldsaKeygen(mldsaSeedFromPkcs8Pem(readKeyText(path.join(dirs.privateKeys, PRIVATE_RECEIPT_MLDSA_PEM))));
  if (!equalBytes(es256.publicKey, es256Public!.publicKey))
    throw new TimesealError('mismatch', `the ES256 receipt private key does not match ${PUBLIC_RECEIPT_ES256_PEM}`);
  if (!equalBytes(mldsa.publicKey, mldsaPublic!.publicKey))
    throw new TimesealError('mismatch', `the ML-DSA-65 receipt private key does not match ${PUBLIC_RECEIPT_MLDSA_PEM}`);
  return [
    { alg: ALG_ES256, publicKey: es256.publicKey, secret: es256.secretKey },
    { alg: ALG_ML_DSA_65, publicKey: mldsa.publicKey, secret: mldsa.seed },
  ];
}
