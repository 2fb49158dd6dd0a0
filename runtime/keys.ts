// The signing keys on disk (docs/FORMAT.md §9). Public keys go to the served keys folder; private keys to a
// separate folder outside anything served, mode 0600. `initKeys` refuses to overwrite any existing key.
// Besides the ECDSA P-256 and ML-DSA-65 keys that sign every ledger file and checkpoint, two keys sign the
// checkpoints in the forms witnesses know (docs/FORMAT.md §4): Ed25519 (type 0x01) and an ML-DSA-44 cosignature (0x06),
// published as C2SP vkeys named after the log origin. An archive made before them gets them with
// `addCheckpointKeys` (`timeseal keys add`); its past checkpoints are not touched. The time-stamp authority's key
// and certificates (runtime/tsa-keys.ts) and the COSE receipt keys (runtime/receipt-keys.ts) are made and loaded
// with these; the TSA's are exported from here too, as part of every key on disk.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { makeFolderDurably, replaceFileDurably, writeNewFileDurably } from './durable-file.ts';
import {
  ed25519PublicKey,
  encodeVkey,
  mldsa44PublicKey,
  NOTE_TYPE_ED25519,
  NOTE_TYPE_MLDSA44_COSIGNATURE,
  parseVkey,
  seedFromPkcs8Pem,
  seedToPkcs8Pem,
} from '../core/cosignature.ts';
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
import type { ReceiptKeyEntry, ReceiptPublicKey, ReceiptSigningKey } from '../core/cose-receipt.ts';
import {
  addReceiptKeys,
  hasReceiptKeys,
  loadReceiptPublicKeys,
  loadReceiptSigningKeys,
  loadRetiredReceiptKeys,
  receiptKeyFiles,
} from './receipt-keys.ts';
import { readKeyText, readOptionalKeyText, refuseExisting, type KeyDirs } from './key-files.ts';
import { addTsaKeys, tsaKeyFiles } from './tsa-keys.ts';

export type { KeyDirs } from './key-files.ts';
export {
  addTsaKeys,
  loadTsaKeys,
  PRIVATE_TSA_PEM,
  PUBLIC_TSA_CHAIN_PEM,
  PUBLIC_TSA_ROOT_PEM,
  type TsaKeyDirs,
  type TsaKeys,
} from './tsa-keys.ts';

export const PUBLIC_ECDSA_PEM = 'public.pem';
export const PUBLIC_MLDSA_RAW = 'dilithium_public.key';
export const PUBLIC_MLDSA_PEM = 'dilithium_public.pem';
export const PRIVATE_ECDSA_PEM = 'ecdsa_private.pem';
export const PRIVATE_MLDSA_PEM = 'dilithium_private.pem';
export const PUBLIC_ED25519_VKEY = 'ed25519.vkey';
export const PUBLIC_MLDSA44_VKEY = 'mldsa44.vkey';
export const PRIVATE_ED25519_PEM = 'ed25519_private.pem';
export const PRIVATE_MLDSA44_PEM = 'mldsa44_private.pem';

/** A key file's text; a missing one names the command that makes it. */
const readText = (file: string): string => readKeyText(file, 'run `timeseal keys init` first');

export interface PublicKeys {
  ecdsa: Uint8Array;
  mldsa: Uint8Array;
  /** The checkpoint keys witnesses know, when the archive has them: raw public keys and the name they sign as. */
  ed25519?: Uint8Array;
  mldsa44?: Uint8Array;
  checkpointKeyName?: string;
  /** The COSE receipt keys (runtime/receipt-keys.ts), ES256 then ML-DSA-65; empty for an archive without them. */
  receipt?: ReceiptPublicKey[];
  /** Receipt keys a rotation retired, with the days they signed (keys/receipt-keys.retired). */
  retiredReceipt?: ReceiptKeyEntry[];
}

export interface SigningKeys {
  public: PublicKeys;
  ecdsaSecret: Uint8Array;
  /** The ML-DSA-65 seed (what the private key file holds) and its secret key, expanded once here: each signature
   *  made with the expanded key saves the expansion (about half a signature). */
  mldsaSeed: Uint8Array;
  mldsaSecret: Uint8Array;
  ed25519Seed?: Uint8Array;
  mldsa44Seed?: Uint8Array;
  /** The COSE receipt signing keys; empty for an archive without them. */
  receipt?: ReceiptSigningKey[];
}

/**
 * Creates the ECDSA P-256 and ML-DSA-65 key pairs, and with `origin` the Ed25519 and ML-DSA-44 checkpoint keys
 * too (named after it), the time-stamp authority's (named `tsaName`: the host of the links origin, which follows
 * PORT in development while the log origin does not) and the COSE receipt keys. Throws (changing nothing) if any
 * of the files already exists.
 */
export function initKeys(dirs: KeyDirs, origin?: string, now: Date = new Date(), tsaName = origin): string[] {
  if (origin !== undefined)
    refuseExisting([...checkpointKeyFiles(dirs), ...tsaKeyFiles(dirs), ...receiptKeyFiles(dirs)]);
  const files = [
    path.join(dirs.keys, PUBLIC_ECDSA_PEM),
    path.join(dirs.keys, PUBLIC_MLDSA_RAW),
    path.join(dirs.keys, PUBLIC_MLDSA_PEM),
    path.join(dirs.privateKeys, PRIVATE_ECDSA_PEM),
    path.join(dirs.privateKeys, PRIVATE_MLDSA_PEM),
  ];
  refuseExisting(files);
  const ecdsa = ecdsaKeygen(crypto.randomBytes(ECDSA_KEYGEN_SEED_SIZE));
  const mldsa = mldsaKeygen(crypto.randomBytes(MLDSA_SEED_SIZE));
  makeFolderDurably(dirs.keys);
  makeFolderDurably(dirs.privateKeys, 0o700);
  const writePrivate = (file: string, text: string) => writeNewFileDurably(file, text, 0o600);
  writePrivate(files[3]!, ecdsaSecretKeyToPkcs8Pem(ecdsa.secretKey));
  writePrivate(files[4]!, mldsaSeedToPkcs8Pem(mldsa.seed));
  writeNewFileDurably(files[0]!, ecdsaPublicKeyToPem(ecdsa.publicKey));
  writeNewFileDurably(files[1]!, mldsa.publicKey);
  writeNewFileDurably(files[2]!, mldsaPublicKeyToPem(mldsa.publicKey));
  return origin === undefined
    ? files
    : [
        ...files,
        ...addCheckpointKeys(dirs, origin),
        ...addTsaKeys(dirs, tsaName ?? origin, now),
        ...addReceiptKeys(dirs),
      ];
}

function checkpointKeyFiles(dirs: KeyDirs): string[] {
  return [
    path.join(dirs.keys, PUBLIC_ED25519_VKEY),
    path.join(dirs.keys, PUBLIC_MLDSA44_VKEY),
    path.join(dirs.privateKeys, PRIVATE_ED25519_PEM),
    path.join(dirs.privateKeys, PRIVATE_MLDSA44_PEM),
  ];
}

/**
 * Creates the Ed25519 and ML-DSA-44 checkpoint keys named `origin` (the log origin) beside existing keys: from
 * the next build on, every new checkpoint carries their lines too. Throws (changing nothing) if any exists.
 */
export function addCheckpointKeys(dirs: KeyDirs, origin: string): string[] {
  const files = checkpointKeyFiles(dirs);
  refuseExisting(files);
  const ed25519 = crypto.randomBytes(32);
  const mldsa44 = crypto.randomBytes(32);
  makeFolderDurably(dirs.keys);
  makeFolderDurably(dirs.privateKeys, 0o700);
  writeNewFileDurably(files[2]!, seedToPkcs8Pem('Ed25519', ed25519), 0o600);
  writeNewFileDurably(files[3]!, seedToPkcs8Pem('ML-DSA-44', mldsa44), 0o600);
  writeNewFileDurably(files[0]!, `${encodeVkey(origin, NOTE_TYPE_ED25519, ed25519PublicKey(ed25519))}\n`);
  writeNewFileDurably(files[1]!, `${encodeVkey(origin, NOTE_TYPE_MLDSA44_COSIGNATURE, mldsa44PublicKey(mldsa44))}\n`);
  return files;
}

/**
 * `timeseal keys add`: the checkpoint keys and the time-stamp authority's key and certificates, each set only
 * if the archive lacks it entirely; existing keys are not touched. Throws if it has both sets already. The
 * checkpoint keys are named `origin` (the log origin), the TSA `tsaName` (as in initKeys).
 */
export function addMissingKeys(
  dirs: KeyDirs,
  origin: string,
  now: Date = new Date(),
  tsaName: string = origin,
): { checkpoint: string[]; tsa: string[]; receipt: string[] } {
  const absent = (files: string[]) => files.every((f) => !fs.existsSync(f));
  const checkpointFiles = checkpointKeyFiles(dirs);
  const tsaFiles = tsaKeyFiles(dirs);
  const hasReceipt = hasReceiptKeys(dirs);
  if (!absent(checkpointFiles) && !absent(tsaFiles) && hasReceipt) refuseExisting([...checkpointFiles, ...tsaFiles]);
  // A partial set is refused by its own function, naming the files that exist.
  const checkpoint = checkpointFiles.every((f) => fs.existsSync(f)) ? [] : addCheckpointKeys(dirs, origin);
  const tsa = tsaFiles.every((f) => fs.existsSync(f)) ? [] : addTsaKeys(dirs, tsaName, now);
  const receipt = hasReceipt ? [] : addReceiptKeys(dirs);
  return { checkpoint, tsa, receipt };
}

/** Rewrites the two checkpoint vkeys under the name `origin` (only while no checkpoint carries their lines). */
export function renameCheckpointKeys(keysDir: string, keys: SigningKeys, origin: string): void {
  if (keys.ed25519Seed === undefined || keys.mldsa44Seed === undefined) return;
  const write = (name: string, text: string): void => {
    const file = path.join(keysDir, name);
    replaceFileDurably(file, text);
  };
  write(PUBLIC_ED25519_VKEY, `${encodeVkey(origin, NOTE_TYPE_ED25519, ed25519PublicKey(keys.ed25519Seed))}\n`);
  write(
    PUBLIC_MLDSA44_VKEY,
    `${encodeVkey(origin, NOTE_TYPE_MLDSA44_COSIGNATURE, mldsa44PublicKey(keys.mldsa44Seed))}\n`,
  );
  keys.public.checkpointKeyName = origin;
}

/** The checkpoint keys in a keys folder's vkey texts (either may be absent; both or neither in a sound folder). */
export function checkpointKeysFromVkeys(
  ed25519Text: string | undefined,
  mldsa44Text: string | undefined,
): Pick<PublicKeys, 'ed25519' | 'mldsa44' | 'checkpointKeyName'> {
  if (ed25519Text === undefined && mldsa44Text === undefined) return {};
  if (ed25519Text === undefined || mldsa44Text === undefined) {
    throw new TimesealError(
      'not-found',
      `only one of ${PUBLIC_ED25519_VKEY} and ${PUBLIC_MLDSA44_VKEY} is published; both or neither`,
    );
  }
  const ed = parseVkey(ed25519Text);
  const ml = parseVkey(mldsa44Text);
  if (ed.type !== NOTE_TYPE_ED25519)
    throw new TimesealError('format', `${PUBLIC_ED25519_VKEY} is not an Ed25519 (0x01) vkey`);
  if (ml.type !== NOTE_TYPE_MLDSA44_COSIGNATURE)
    throw new TimesealError('format', `${PUBLIC_MLDSA44_VKEY} is not an ML-DSA-44 cosignature (0x06) vkey`);
  if (ed.name !== ml.name)
    throw new TimesealError(
      'mismatch',
      `${PUBLIC_ED25519_VKEY} and ${PUBLIC_MLDSA44_VKEY} name different signers (${ed.name}, ${ml.name})`,
    );
  return { ed25519: ed.publicKey, mldsa44: ml.publicKey, checkpointKeyName: ed.name };
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
  const checkpointKeys = checkpointKeysFromVkeys(
    readOptionalKeyText(path.join(keysDir, PUBLIC_ED25519_VKEY)),
    readOptionalKeyText(path.join(keysDir, PUBLIC_MLDSA44_VKEY)),
  );
  const receipt = loadReceiptPublicKeys(keysDir);
  const retiredReceipt = loadRetiredReceiptKeys(keysDir);
  return {
    ecdsa,
    mldsa,
    ...checkpointKeys,
    ...(receipt.length > 0 ? { receipt } : {}),
    ...(retiredReceipt.length > 0 ? { retiredReceipt } : {}),
  };
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
  const keys: SigningKeys = {
    public: pub,
    ecdsaSecret: ecdsa.secretKey,
    mldsaSeed: mldsa.seed,
    mldsaSecret: mldsa.secretKey,
  };
  const receipt = loadReceiptSigningKeys(dirs);
  if (receipt.length > 0) keys.receipt = receipt;
  if (pub.ed25519 !== undefined && pub.mldsa44 !== undefined) {
    keys.ed25519Seed = seedFromPkcs8Pem('Ed25519', readText(path.join(dirs.privateKeys, PRIVATE_ED25519_PEM)));
    keys.mldsa44Seed = seedFromPkcs8Pem('ML-DSA-44', readText(path.join(dirs.privateKeys, PRIVATE_MLDSA44_PEM)));
    if (!equalBytes(ed25519PublicKey(keys.ed25519Seed), pub.ed25519))
      throw new TimesealError('mismatch', `the Ed25519 private key does not match ${PUBLIC_ED25519_VKEY}`);
    if (!equalBytes(mldsa44PublicKey(keys.mldsa44Seed), pub.mldsa44))
      throw new TimesealError('mismatch', `the ML-DSA-44 private key does not match ${PUBLIC_MLDSA44_VKEY}`);
  }
  return keys;
}
