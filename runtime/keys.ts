// The signing keys on disk (docs/FORMAT.md §9). Public keys go to the served keys folder; private keys to a
// separate folder outside anything served, mode 0600. `initKeys` refuses to overwrite any existing key.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { TimesealError, withContext } from '../core/errors.ts';
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
import { equalBytes } from '../core/encoding.ts';

export const PUBLIC_ECDSA_PEM = 'public.pem';
export const PUBLIC_MLDSA_RAW = 'dilithium_public.key';
export const PUBLIC_MLDSA_PEM = 'dilithium_public.pem';
export const PRIVATE_ECDSA_PEM = 'ecdsa_private.pem';
export const PRIVATE_MLDSA_PEM = 'dilithium_private.pem';

export interface PublicKeys {
  ecdsa: Uint8Array;
  mldsa: Uint8Array;
}

export interface SigningKeys {
  public: PublicKeys;
  ecdsaSecret: Uint8Array;
  mldsaSeed: Uint8Array;
}

export interface KeyDirs {
  keys: string;
  privateKeys: string;
}

/** Creates both key pairs. Throws (changing nothing) if any of the five files already exists. */
export function initKeys(dirs: KeyDirs): string[] {
  const files = [
    path.join(dirs.keys, PUBLIC_ECDSA_PEM),
    path.join(dirs.keys, PUBLIC_MLDSA_RAW),
    path.join(dirs.keys, PUBLIC_MLDSA_PEM),
    path.join(dirs.privateKeys, PRIVATE_ECDSA_PEM),
    path.join(dirs.privateKeys, PRIVATE_MLDSA_PEM),
  ];
  const existing = files.filter((f) => fs.existsSync(f));
  if (existing.length > 0) {
    throw new TimesealError('conflict', `keys already exist, refusing to overwrite: ${existing.join(', ')}`);
  }
  const ecdsa = ecdsaKeygen(crypto.randomBytes(ECDSA_KEYGEN_SEED_SIZE));
  const mldsa = mldsaKeygen(crypto.randomBytes(MLDSA_SEED_SIZE));
  fs.mkdirSync(dirs.keys, { recursive: true });
  fs.mkdirSync(dirs.privateKeys, { recursive: true, mode: 0o700 });
  const writePrivate = (file: string, text: string) => fs.writeFileSync(file, text, { mode: 0o600, flag: 'wx' });
  writePrivate(files[3]!, ecdsaSecretKeyToPkcs8Pem(ecdsa.secretKey));
  writePrivate(files[4]!, mldsaSeedToPkcs8Pem(mldsa.seed));
  fs.writeFileSync(files[0]!, ecdsaPublicKeyToPem(ecdsa.publicKey), { flag: 'wx' });
  fs.writeFileSync(files[1]!, mldsa.publicKey, { flag: 'wx' });
  fs.writeFileSync(files[2]!, mldsaPublicKeyToPem(mldsa.publicKey), { flag: 'wx' });
  return files;
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw withContext(`cannot read key ${file} (run \`timeseal keys init\` first)`, err);
  }
}

/** The public keys; the raw ML-DSA key must equal the key inside its PEM. */
export function loadPublicKeys(keysDir: string): PublicKeys {
  const ecdsa = ecdsaPublicKeyFromPem(readText(path.join(keysDir, PUBLIC_ECDSA_PEM)));
  const mldsa = mldsaPublicKeyFromPem(readText(path.join(keysDir, PUBLIC_MLDSA_PEM)));
  const rawFile = path.join(keysDir, PUBLIC_MLDSA_RAW);
  let raw: Uint8Array;
  try {
    raw = fs.readFileSync(rawFile);
  } catch (err) {
    throw withContext(`cannot read key ${rawFile}`, err);
  }
  if (!equalBytes(raw, mldsa)) {
    throw new TimesealError('mismatch', `${rawFile} is not the key in ${PUBLIC_MLDSA_PEM}`);
  }
  return { ecdsa, mldsa };
}

/** Private and public keys; each private key must belong to its public key. */
export function loadSigningKeys(dirs: KeyDirs): SigningKeys {
  const pub = loadPublicKeys(dirs.keys);
  const ecdsa = ecdsaSecretKeyFromPkcs8Pem(readText(path.join(dirs.privateKeys, PRIVATE_ECDSA_PEM)));
  const mldsa = mldsaKeygen(mldsaSeedFromPkcs8Pem(readText(path.join(dirs.privateKeys, PRIVATE_MLDSA_PEM))));
  if (!equalBytes(ecdsa.publicKey, pub.ecdsa)) {
    throw new TimesealError('mismatch', `the ECDSA private key does not match ${PUBLIC_ECDSA_PEM}`);
  }
  if (!equalBytes(mldsa.publicKey, pub.mldsa)) {
    throw new TimesealError('mismatch', `the ML-DSA-65 private key does not match ${PUBLIC_MLDSA_PEM}`);
  }
  return { public: pub, ecdsaSecret: ecdsa.secretKey, mldsaSeed: mldsa.seed };
}
