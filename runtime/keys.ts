// The signing keys on disk (docs/FORMAT.md §9). Public keys go to the served keys folder; private keys to a
// separate folder outside anything served, mode 0600. `initKeys` refuses to overwrite any existing key.
// Besides the ECDSA P-256 and ML-DSA-65 keys that sign every ledger file and checkpoint, two keys sign the
// checkpoints in the forms witnesses know (docs/FORMAT.md §4): Ed25519 (type 0x01) and an ML-DSA-44 cosignature (0x06),
// published as C2SP vkeys named after the log origin. An archive made before them gets them with
// `addCheckpointKeys` (`timeseal keys add`); its past checkpoints are not touched.
import crypto from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import fs from 'node:fs';
import path from 'node:path';
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

export const PUBLIC_ECDSA_PEM = 'public.pem';
export const PUBLIC_MLDSA_RAW = 'dilithium_public.key';
export const PUBLIC_MLDSA_PEM = 'dilithium_public.pem';
export const PRIVATE_ECDSA_PEM = 'ecdsa_private.pem';
export const PRIVATE_MLDSA_PEM = 'dilithium_private.pem';
export const PUBLIC_ED25519_VKEY = 'ed25519.vkey';
export const PUBLIC_MLDSA44_VKEY = 'mldsa44.vkey';
export const PRIVATE_ED25519_PEM = 'ed25519_private.pem';
export const PRIVATE_MLDSA44_PEM = 'mldsa44_private.pem';

export interface PublicKeys {
  ecdsa: Uint8Array;
  mldsa: Uint8Array;
  /** The checkpoint keys witnesses know, when the archive has them: raw public keys and the name they sign as. */
  ed25519?: Uint8Array;
  mldsa44?: Uint8Array;
  checkpointKeyName?: string;
}

export interface SigningKeys {
  public: PublicKeys;
  ecdsaSecret: Uint8Array;
  mldsaSeed: Uint8Array;
  ed25519Seed?: Uint8Array;
  mldsa44Seed?: Uint8Array;
}

export interface KeyDirs {
  keys: string;
  privateKeys: string;
}

/**
 * Creates the ECDSA P-256 and ML-DSA-65 key pairs, and with `origin` the Ed25519 and ML-DSA-44 checkpoint keys
 * too (named after it). Throws (changing nothing) if any of the files already exists.
 */
export function initKeys(dirs: KeyDirs, origin?: string, now: Date = new Date()): string[] {
  if (origin !== undefined) refuseExisting([...checkpointKeyFiles(dirs), ...tsaKeyFiles(dirs)]);
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
  return origin === undefined ? files : [...files, ...addCheckpointKeys(dirs, origin), ...addTsaKeys(dirs, origin, now)];
}

function checkpointKeyFiles(dirs: KeyDirs): string[] {
  return [
    path.join(dirs.keys, PUBLIC_ED25519_VKEY),
    path.join(dirs.keys, PUBLIC_MLDSA44_VKEY),
    path.join(dirs.privateKeys, PRIVATE_ED25519_PEM),
    path.join(dirs.privateKeys, PRIVATE_MLDSA44_PEM),
  ];
}

function refuseExisting(files: string[]): void {
  const existing = files.filter((f) => fs.existsSync(f));
  if (existing.length > 0) throw new TimesealError('conflict', `keys already exist, refusing to overwrite: ${existing.join(', ')}`);
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
  fs.mkdirSync(dirs.keys, { recursive: true });
  fs.mkdirSync(dirs.privateKeys, { recursive: true, mode: 0o700 });
  fs.writeFileSync(files[2]!, seedToPkcs8Pem('Ed25519', ed25519), { mode: 0o600, flag: 'wx' });
  fs.writeFileSync(files[3]!, seedToPkcs8Pem('ML-DSA-44', mldsa44), { mode: 0o600, flag: 'wx' });
  fs.writeFileSync(files[0]!, `${encodeVkey(origin, NOTE_TYPE_ED25519, ed25519PublicKey(ed25519))}\n`, { flag: 'wx' });
  fs.writeFileSync(files[1]!, `${encodeVkey(origin, NOTE_TYPE_MLDSA44_COSIGNATURE, mldsa44PublicKey(mldsa44))}\n`, { flag: 'wx' });
  return files;
}

/**
 * `timeseal keys add`: the checkpoint keys and the time-stamp authority's key and certificates, each set only
 * if the archive lacks it entirely; existing keys are not touched. Throws if it has both sets already.
 */
export function addMissingKeys(dirs: KeyDirs, origin: string, now: Date = new Date()): { checkpoint: string[]; tsa: string[] } {
  const absent = (files: string[]) => files.every((f) => !fs.existsSync(f));
  const checkpointFiles = checkpointKeyFiles(dirs);
  const tsaFiles = tsaKeyFiles(dirs);
  if (!absent(checkpointFiles) && !absent(tsaFiles)) refuseExisting([...checkpointFiles, ...tsaFiles]);
  // A partial set is refused by its own function, naming the files that exist.
  const checkpoint = checkpointFiles.every((f) => fs.existsSync(f)) ? [] : addCheckpointKeys(dirs, origin);
  const tsa = tsaFiles.every((f) => fs.existsSync(f)) ? [] : addTsaKeys(dirs, origin, now);
  return { checkpoint, tsa };
}

/** Rewrites the two checkpoint vkeys under the name `origin` (only while no checkpoint carries their lines). */
export function renameCheckpointKeys(keysDir: string, keys: SigningKeys, origin: string): void {
  if (keys.ed25519Seed === undefined || keys.mldsa44Seed === undefined) return;
  const write = (name: string, text: string): void => {
    const file = path.join(keysDir, name);
    fs.writeFileSync(`${file}.tmp`, text);
    fs.renameSync(`${file}.tmp`, file);
  };
  write(PUBLIC_ED25519_VKEY, `${encodeVkey(origin, NOTE_TYPE_ED25519, ed25519PublicKey(keys.ed25519Seed))}\n`);
  write(PUBLIC_MLDSA44_VKEY, `${encodeVkey(origin, NOTE_TYPE_MLDSA44_COSIGNATURE, mldsa44PublicKey(keys.mldsa44Seed))}\n`);
  keys.public.checkpointKeyName = origin;
}

/** The checkpoint keys in a keys folder's vkey texts (either may be absent; both or neither in a sound folder). */
export function checkpointKeysFromVkeys(ed25519Text: string | undefined, mldsa44Text: string | undefined): Pick<PublicKeys, 'ed25519' | 'mldsa44' | 'checkpointKeyName'> {
  if (ed25519Text === undefined && mldsa44Text === undefined) return {};
  if (ed25519Text === undefined || mldsa44Text === undefined) {
    throw new TimesealError('not-found', `only one of ${PUBLIC_ED25519_VKEY} and ${PUBLIC_MLDSA44_VKEY} is published; both or neither`);
  }
  const ed = parseVkey(ed25519Text);
  const ml = parseVkey(mldsa44Text);
  if (ed.type !== NOTE_TYPE_ED25519) throw new TimesealError('format', `${PUBLIC_ED25519_VKEY} is not an Ed25519 (0x01) vkey`);
  if (ml.type !== NOTE_TYPE_MLDSA44_COSIGNATURE) throw new TimesealError('format', `${PUBLIC_MLDSA44_VKEY} is not an ML-DSA-44 cosignature (0x06) vkey`);
  if (ed.name !== ml.name) throw new TimesealError('mismatch', `${PUBLIC_ED25519_VKEY} and ${PUBLIC_MLDSA44_VKEY} name different signers (${ed.name}, ${ml.name})`);
  return { ed25519: ed.publicKey, mldsa44: ml.publicKey, checkpointKeyName: ed.name };
}

function readOptionalText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw withContext(`cannot read key ${file}`, err);
  }
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
  const checkpointKeys = checkpointKeysFromVkeys(readOptionalText(path.join(keysDir, PUBLIC_ED25519_VKEY)), readOptionalText(path.join(keysDir, PUBLIC_MLDSA44_VKEY)));
  return { ecdsa, mldsa, ...checkpointKeys };
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
  const keys: SigningKeys = { public: pub, ecdsaSecret: ecdsa.secretKey, mldsaSeed: mldsa.seed };
  if (pub.ed25519 !== undefined && pub.mldsa44 !== undefined) {
    keys.ed25519Seed = seedFromPkcs8Pem('Ed25519', readText(path.join(dirs.privateKeys, PRIVATE_ED25519_PEM)));
    keys.mldsa44Seed = seedFromPkcs8Pem('ML-DSA-44', readText(path.join(dirs.privateKeys, PRIVATE_MLDSA44_PEM)));
    if (!equalBytes(ed25519PublicKey(keys.ed25519Seed), pub.ed25519)) throw new TimesealError('mismatch', `the Ed25519 private key does not match ${PUBLIC_ED25519_VKEY}`);
    if (!equalBytes(mldsa44PublicKey(keys.mldsa44Seed), pub.mldsa44)) throw new TimesealError('mismatch', `the ML-DSA-44 private key does not match ${PUBLIC_MLDSA44_VKEY}`);
  }
  return keys;
}

// ---- Timeseal's own RFC 3161 time-stamp authority (docs/FORMAT.md §3b) ----
// An ECDSA P-256 key, the TSA certificate (time stamping only) and the self-signed root that issued it. Not
// keys/tsa-ca.pem: that file holds the authorities of the *external* TSAs the ledgers are stamped by.

export const PUBLIC_TSA_CHAIN_PEM = 'timeseal-tsa.pem';
export const PUBLIC_TSA_ROOT_PEM = 'timeseal-tsa-root.pem';
export const PRIVATE_TSA_PEM = 'tsa_private.pem';
const TSA_VALIDITY_YEARS = 10;
const ROOT_VALIDITY_YEARS = 20;

function tsaKeyFiles(dirs: KeyDirs): string[] {
  return [path.join(dirs.keys, PUBLIC_TSA_CHAIN_PEM), path.join(dirs.keys, PUBLIC_TSA_ROOT_PEM), path.join(dirs.privateKeys, PRIVATE_TSA_PEM)];
}

function pem(label: string, der: Uint8Array): string {
  const b64 = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

/** A Name of two RDNs, O then CN (built as DER: pkijs would put both in one multi-valued RDN). */
function name(commonName: string, organization: string): pkijs.RelativeDistinguishedNames {
  const rdn = (type: string, value: string): asn1js.Set =>
    new asn1js.Set({ value: [new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: type }), new asn1js.Utf8String({ value })] })] });
  const der = new asn1js.Sequence({ value: [rdn('2.5.4.10', organization), rdn('2.5.4.3', commonName)] }).toBER(false);
  return pkijs.RelativeDistinguishedNames.fromBER(der);
}

function extension(id: string, critical: boolean, value: asn1js.BaseBlock): pkijs.Extension {
  return new pkijs.Extension({ extnID: id, critical, extnValue: value.toBER(false) });
}

/** A DER X.509 v3 certificate for `subjectKey` signed by `issuerKey` (ECDSA P-256 with SHA-256). */
function makeCertificate(o: {
  subject: pkijs.RelativeDistinguishedNames;
  issuer: pkijs.RelativeDistinguishedNames;
  subjectKey: crypto.KeyObject;
  issuerKey: crypto.KeyObject;
  issuerKeyId: Uint8Array;
  years: number;
  ca: boolean;
  now: Date;
}): Uint8Array {
  const spki = new Uint8Array(o.subjectKey.export({ type: 'spki', format: 'der' }));
  const keyId = subjectKeyId(o.subjectKey);
  const serial = crypto.randomBytes(16);
  serial[0] = (serial[0]! & 0x3f) | 0x40;
  const notBefore = new Date(Math.floor(o.now.getTime() / 1000) * 1000 - 60_000);
  const notAfter = new Date(notBefore);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + o.years);
  const keyUsage = (bits: number): asn1js.BitString => {
    // digitalSignature (0) alone: 0x80, 7 unused bits; keyCertSign (5) + cRLSign (6): 0x06, 1 unused bit.
    return new asn1js.BitString({ valueHex: Uint8Array.of(bits).buffer, unusedBits: bits === 0x80 ? 7 : 1 });
  };
  const cert = new pkijs.Certificate({
    version: 2,
    serialNumber: new asn1js.Integer({ valueHex: serial.buffer.slice(serial.byteOffset, serial.byteOffset + 16) }),
    signature: new pkijs.AlgorithmIdentifier({ algorithmId: '1.2.840.10045.4.3.2' }),
    issuer: o.issuer,
    subject: o.subject,
    notBefore: new pkijs.Time({ type: 0, value: notBefore }),
    notAfter: new pkijs.Time({ type: notAfter.getUTCFullYear() < 2050 ? 0 : 1, value: notAfter }),
    subjectPublicKeyInfo: pkijs.PublicKeyInfo.fromBER(spki),
    extensions: [
      extension('2.5.29.19', true, o.ca ? new asn1js.Sequence({ value: [new asn1js.Boolean({ value: true })] }) : new asn1js.Sequence()),
      extension('2.5.29.15', true, keyUsage(o.ca ? 0x06 : 0x80)),
      ...(o.ca ? [] : [extension('2.5.29.37', true, new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: '1.3.6.1.5.5.7.3.8' })] }))]),
      extension('2.5.29.14', false, new asn1js.OctetString({ valueHex: Uint8Array.from(keyId).buffer })),
      extension('2.5.29.35', false, new asn1js.Sequence({ value: [new asn1js.Primitive({ idBlock: { tagClass: 3, tagNumber: 0 }, valueHex: Uint8Array.from(o.issuerKeyId).buffer })] })),
    ],
  });
  cert.signatureAlgorithm = new pkijs.AlgorithmIdentifier({ algorithmId: '1.2.840.10045.4.3.2' });
  const tbs = new Uint8Array(cert.encodeTBS().toBER(false));
  const signature = crypto.sign('sha256', tbs, { key: o.issuerKey, dsaEncoding: 'der' });
  cert.signatureValue = new asn1js.BitString({ valueHex: signature.buffer.slice(signature.byteOffset, signature.byteOffset + signature.length) });
  return new Uint8Array(cert.toSchema(true).toBER(false));
}

function subjectKeyId(key: crypto.KeyObject): Uint8Array {
  const spki = new Uint8Array(key.export({ type: 'spki', format: 'der' }));
  return new Uint8Array(crypto.createHash('sha1').update(pkijs.PublicKeyInfo.fromBER(spki).subjectPublicKey.valueBlock.valueHexView).digest());
}

/**
 * Creates the time-stamp authority's key, its certificate (subject: the log origin; extended key usage
 * time stamping only, critical) and the self-signed root that issued it. The root's private key is not kept:
 * it signs this one certificate and is dropped. Both are valid from a minute before `now` (the project's clock,
 * TIMESEAL_NOW in tests). Throws (changing nothing) if any of the files exists.
 */
export function addTsaKeys(dirs: KeyDirs, origin: string, now: Date = new Date()): string[] {
  const files = tsaKeyFiles(dirs);
  refuseExisting(files);
  const rootKey = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const tsaKey = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const rootName = name('Timeseal TSA root', origin);
  const rootId = subjectKeyId(rootKey.publicKey);
  const root = makeCertificate({ subject: rootName, issuer: rootName, subjectKey: rootKey.publicKey, issuerKey: rootKey.privateKey, issuerKeyId: rootId, years: ROOT_VALIDITY_YEARS, ca: true, now });
  const leaf = makeCertificate({ subject: name(`Timeseal TSA ${origin}`, origin), issuer: rootName, subjectKey: tsaKey.publicKey, issuerKey: rootKey.privateKey, issuerKeyId: rootId, years: TSA_VALIDITY_YEARS, ca: false, now });
  fs.mkdirSync(dirs.keys, { recursive: true });
  fs.mkdirSync(dirs.privateKeys, { recursive: true, mode: 0o700 });
  fs.writeFileSync(files[2]!, tsaKey.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  fs.writeFileSync(files[0]!, pem('CERTIFICATE', leaf) + pem('CERTIFICATE', root), { flag: 'wx' });
  fs.writeFileSync(files[1]!, pem('CERTIFICATE', root), { flag: 'wx' });
  return files;
}

/** The TSA's key and certificates as `serve` uses them; undefined when the archive has none (made before them). */
export interface TsaKeys {
  /** DER certificates, the TSA's first, then the root. */
  certificates: Uint8Array[];
  /** The chain as published (keys/timeseal-tsa.pem). */
  chainPem: string;
  /** The TSA certificate's validity: no token is given for a time outside it. */
  validFrom: Date;
  validTo: Date;
  privateKey: crypto.KeyObject;
}

export function loadTsaKeys(dirs: KeyDirs): TsaKeys | undefined {
  const chainPem = readOptionalText(path.join(dirs.keys, PUBLIC_TSA_CHAIN_PEM));
  const keyPem = readOptionalText(path.join(dirs.privateKeys, PRIVATE_TSA_PEM));
  if (chainPem === undefined || keyPem === undefined) return undefined;
  const certificates = [...chainPem.matchAll(/-----BEGIN CERTIFICATE-----([^-]+)-----END CERTIFICATE-----/g)].map((m) => new Uint8Array(Buffer.from(m[1]!, 'base64')));
  if (certificates.length === 0) throw new TimesealError('format', `${PUBLIC_TSA_CHAIN_PEM} holds no certificate`);
  const privateKey = crypto.createPrivateKey(keyPem);
  const spki = (k: crypto.KeyObject): Buffer => k.export({ type: 'spki', format: 'der' });
  const leaf = new crypto.X509Certificate(certificates[0]!);
  if (!spki(leaf.publicKey).equals(spki(crypto.createPublicKey(privateKey)))) {
    throw new TimesealError('mismatch', `the TSA private key does not match the first certificate of ${PUBLIC_TSA_CHAIN_PEM}`);
  }
  return { certificates, chainPem, privateKey, validFrom: leaf.validFromDate, validTo: leaf.validToDate };
}
