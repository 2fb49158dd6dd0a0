// The key and certificates of Timeseal's own RFC 3161 time-stamp authority (`POST /tsa`, docs/FORMAT.md §3b):
// an ECDSA P-256 key, the TSA certificate (time stamping only) and the self-signed root that issued it, made by
// `addTsaKeys` (`timeseal keys init`/`keys add`: the certificate factory); or the operator's own key and chain
// (TsaKeyDirs, docs/OPERATIONS.md "Your own TSA certificate"). `loadTsaKeys` checks either the same way before
// `serve` signs a token with them (the chain checks). Not keys/tsa-ca.pem: that file holds the authorities of
// the *external* TSAs the ledgers are stamped by. runtime/keys.ts makes and loads the other keys, and exports
// these with them.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as Asn1js from 'asn1js';
import type * as Pkijs from 'pkijs';
import { TimesealError } from '../core/errors.ts';
import { makeFolderDurably, writeNewFileDurably } from './durable-file.ts';
import { readOptionalKeyText, refuseExisting, type KeyDirs } from './key-files.ts';

/** asn1js and pkijs, loaded by the first TSA certificate made or checked (~0.1 s of CPU): a command that loads
 * the signing keys only (`ledger build`) does not pay for them. Both are CommonJS packages, so `require` gives the very
 * instances an `import` elsewhere (runtime/tsa-client.ts) gives. */
function lazyPackage<T extends object>(name: string): T {
  let loaded: T | undefined;
  return new Proxy({} as T, {
    get: (_, key) => Reflect.get((loaded ??= createRequire(import.meta.url)(name) as T), key),
  });
}
const asn1js = lazyPackage<typeof Asn1js>('asn1js');
const pkijs = lazyPackage<typeof Pkijs>('pkijs');

export const PUBLIC_TSA_CHAIN_PEM = 'timeseal-tsa.pem';
export const PUBLIC_TSA_ROOT_PEM = 'timeseal-tsa-root.pem';
export const PRIVATE_TSA_PEM = 'tsa_private.pem';
const TSA_VALIDITY_YEARS = 10;
const ROOT_VALIDITY_YEARS = 20;

/** The three files of the TSA's key and certificates: the chain and the root (public), then the private key. */
export function tsaKeyFiles(dirs: KeyDirs): string[] {
  return [
    path.join(dirs.keys, PUBLIC_TSA_CHAIN_PEM),
    path.join(dirs.keys, PUBLIC_TSA_ROOT_PEM),
    path.join(dirs.privateKeys, PRIVATE_TSA_PEM),
  ];
}

function pem(label: string, der: Uint8Array): string {
  const b64 = Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

/** A Name of two RDNs, O then CN (built as DER: pkijs would put both in one multi-valued RDN). */
function name(commonName: string, organization: string): Pkijs.RelativeDistinguishedNames {
  const rdn = (type: string, value: string): Asn1js.Set =>
    new asn1js.Set({
      value: [
        new asn1js.Sequence({
          value: [new asn1js.ObjectIdentifier({ value: type }), new asn1js.Utf8String({ value })],
        }),
      ],
    });
  const der = new asn1js.Sequence({ value: [rdn('2.5.4.10', organization), rdn('2.5.4.3', commonName)] }).toBER(false);
  return pkijs.RelativeDistinguishedNames.fromBER(der);
}

function extension(id: string, critical: boolean, value: Asn1js.BaseBlock): Pkijs.Extension {
  return new pkijs.Extension({ extnID: id, critical, extnValue: value.toBER(false) });
}

/** A DER X.509 v3 certificate for `subjectKey` signed by `issuerKey` (ECDSA P-256 with SHA-256). */
function makeCertificate(o: {
  subject: Pkijs.RelativeDistinguishedNames;
  issuer: Pkijs.RelativeDistinguishedNames;
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
  const keyUsage = (bits: number): Asn1js.BitString => {
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
      extension(
        '2.5.29.19',
        true,
        o.ca ? new asn1js.Sequence({ value: [new asn1js.Boolean({ value: true })] }) : new asn1js.Sequence(),
      ),
      extension('2.5.29.15', true, keyUsage(o.ca ? 0x06 : 0x80)),
      ...(o.ca
        ? []
        : [
            extension(
              '2.5.29.37',
              true,
              new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: '1.3.6.1.5.5.7.3.8' })] }),
            ),
          ]),
      extension('2.5.29.14', false, new asn1js.OctetString({ valueHex: Uint8Array.from(keyId).buffer })),
      extension(
        '2.5.29.35',
        false,
        new asn1js.Sequence({
          value: [
            new asn1js.Primitive({
              idBlock: { tagClass: 3, tagNumber: 0 },
              valueHex: Uint8Array.from(o.issuerKeyId).buffer,
            }),
          ],
        }),
      ),
    ],
  });
  cert.signatureAlgorithm = new pkijs.AlgorithmIdentifier({ algorithmId: '1.2.840.10045.4.3.2' });
  const tbs = new Uint8Array(cert.encodeTBS().toBER(false));
  const signature = crypto.sign('sha256', tbs, { key: o.issuerKey, dsaEncoding: 'der' });
  cert.signatureValue = new asn1js.BitString({
    valueHex: signature.buffer.slice(signature.byteOffset, signature.byteOffset + signature.length),
  });
  return new Uint8Array(cert.toSchema(true).toBER(false));
}

function subjectKeyId(key: crypto.KeyObject): Uint8Array {
  const spki = new Uint8Array(key.export({ type: 'spki', format: 'der' }));
  return new Uint8Array(
    crypto
      .createHash('sha1')
      .update(pkijs.PublicKeyInfo.fromBER(spki).subjectPublicKey.valueBlock.valueHexView)
      .digest(),
  );
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
  const root = makeCertificate({
    subject: rootName,
    issuer: rootName,
    subjectKey: rootKey.publicKey,
    issuerKey: rootKey.privateKey,
    issuerKeyId: rootId,
    years: ROOT_VALIDITY_YEARS,
    ca: true,
    now,
  });
  const leaf = makeCertificate({
    subject: name(`Timeseal TSA ${origin}`, origin),
    issuer: rootName,
    subjectKey: tsaKey.publicKey,
    issuerKey: rootKey.privateKey,
    issuerKeyId: rootId,
    years: TSA_VALIDITY_YEARS,
    ca: false,
    now,
  });
  makeFolderDurably(dirs.keys);
  makeFolderDurably(dirs.privateKeys, 0o700);
  writeNewFileDurably(files[2]!, tsaKey.privateKey.export({ type: 'pkcs8', format: 'pem' }), 0o600);
  writeNewFileDurably(files[0]!, pem('CERTIFICATE', leaf) + pem('CERTIFICATE', root));
  writeNewFileDurably(files[1]!, pem('CERTIFICATE', root));
  return files;
}

/** The TSA's key and certificates as `serve` uses them; undefined when the archive has none (made before them). */
export interface TsaKeys {
  /** DER certificates, the TSA's first, then up to and including the root. */
  certificates: Uint8Array[];
  /** The chain as published (keys/timeseal-tsa.pem, or the operator's TIMESEAL_TSA_CHAIN_FILE). */
  chainPem: string;
  /** The TSA certificate's validity: no token is given for a time outside it. */
  validFrom: Date;
  validTo: Date;
  privateKey: crypto.KeyObject;
}

/**
 * Where the TSA's key and chain are: by default data/private-keys/tsa_private.pem and keys/timeseal-tsa.pem
 * (made by `keys init`/`keys add`); an operator's own pair (TIMESEAL_TSA_KEY_FILE and TIMESEAL_TSA_CHAIN_FILE,
 * runtime/config.ts: both or neither) replaces them. docs/OPERATIONS.md "Your own TSA certificate".
 */
export interface TsaKeyDirs extends KeyDirs {
  /** A PEM private key (PKCS#8 or SEC 1, not encrypted). */
  tsaKeyFile?: string | undefined;
  /** PEM certificates: the TSA's own first, each followed by its issuer, up to and including the self-signed root. */
  tsaChainFile?: string | undefined;
}

const OID_KEY_USAGE = '2.5.29.15';
const OID_EXT_KEY_USAGE = '2.5.29.37';
const OID_TIME_STAMPING = '1.3.6.1.5.5.7.3.8';
/** Names of the purposes an extended key usage commonly lists, for the messages. */
const PURPOSES: Record<string, string> = {
  '1.3.6.1.5.5.7.3.1': 'serverAuth',
  '1.3.6.1.5.5.7.3.2': 'clientAuth',
  '1.3.6.1.5.5.7.3.3': 'codeSigning',
  '1.3.6.1.5.5.7.3.4': 'emailProtection',
  [OID_TIME_STAMPING]: 'timeStamping',
  '1.3.6.1.5.5.7.3.9': 'OCSPSigning',
  '2.5.29.37.0': 'anyExtendedKeyUsage',
};
const EKU_RULE =
  'RFC 3161 §2.3 requires exactly one purpose, timeStamping, in an extension marked critical (OpenSSL and Java refuse anything else)';

/**
 * Loads the TSA's key and chain and checks them (`serve` runs this at start and refuses to start on any
 * failure): every certificate is signed by the next one (its issuer: a CA) and the last is self-signed; each is
 * valid at `now`; the TSA certificate (the first) is an end entity (basicConstraints absent or CA:FALSE), its
 * key usage, when present, allows digital signatures (and nonRepudiation, nothing else), its extended key usage
 * is present, critical and timeStamping only; its key is ECDSA P-256 (the token writer, core/tsa-authority.ts, signs
 * with ECDSA P-256 and SHA-256 only); and the private key is that certificate's. Each failure throws one line
 * naming the problem and the file.
 *
 * `now` is the machine's clock, not TIMESEAL_NOW: a certificate's validity is a fact of the real world, and
 * tests move the archive's clock to days long past; POST /tsa still refuses a token for a project time outside
 * the TSA certificate's validity. Without configured files, an archive lacking either default file has no TSA
 * (undefined: POST /tsa answers 503), as archives made before it.
 */
export function loadTsaKeys(dirs: TsaKeyDirs, now: Date = new Date()): TsaKeys | undefined {
  const configured = dirs.tsaKeyFile !== undefined || dirs.tsaChainFile !== undefined;
  if (configured && (dirs.tsaKeyFile === undefined || dirs.tsaChainFile === undefined)) {
    throw new TimesealError(
      'usage',
      'TIMESEAL_TSA_KEY_FILE and TIMESEAL_TSA_CHAIN_FILE go together: set both or neither',
    );
  }
  const chainFile = dirs.tsaChainFile ?? path.join(dirs.keys, PUBLIC_TSA_CHAIN_PEM);
  const keyFile = dirs.tsaKeyFile ?? path.join(dirs.privateKeys, PRIVATE_TSA_PEM);
  let chainPem: string | undefined;
  let keyPem: string | undefined;
  if (configured) {
    const read = (file: string, what: string): string => {
      try {
        return fs.readFileSync(file, 'utf8');
      } catch (err) {
        throw new TimesealError('not-found', `cannot read the ${what} (${file}): ${(err as Error).message}`);
      }
    };
    chainPem = read(chainFile, 'TSA certificate chain');
    keyPem = read(keyFile, 'TSA private key');
  } else {
    chainPem = readOptionalKeyText(chainFile);
    keyPem = readOptionalKeyText(keyFile);
    if (chainPem === undefined || keyPem === undefined) return undefined;
  }
  const certificates = [...chainPem.matchAll(/-----BEGIN CERTIFICATE-----([^-]+)-----END CERTIFICATE-----/g)].map(
    (m) => new Uint8Array(Buffer.from(m[1]!, 'base64')),
  );
  if (certificates.length === 0)
    throw new TimesealError('format', `the TSA certificate chain holds no PEM certificate (${chainFile})`);
  let privateKey: crypto.KeyObject;
  try {
    privateKey = crypto.createPrivateKey(keyPem);
  } catch (err) {
    throw new TimesealError(
      'format',
      `the TSA private key cannot be read (${keyFile}): ${(err as Error).message}; a PEM key, not encrypted, is needed`,
    );
  }
  const leaf = checkTsaChain(certificates, privateKey, { chain: chainFile, key: keyFile }, now);
  return { certificates, chainPem, privateKey, validFrom: leaf.validFromDate, validTo: leaf.validToDate };
}

/** The checks of loadTsaKeys, in the order a person fixes them: the TSA certificate, then the chain. Returns the TSA certificate. */
function checkTsaChain(
  der: Uint8Array[],
  privateKey: crypto.KeyObject,
  files: { chain: string; key: string },
  now: Date,
): crypto.X509Certificate {
  const fail = (problem: string): never => {
    throw new TimesealError('format', problem);
  };
  const at = `(${files.chain})`;
  const certs = der.map((d, i) => {
    try {
      return { x509: new crypto.X509Certificate(d), parsed: pkijs.Certificate.fromBER(Uint8Array.from(d)) };
    } catch (err) {
      return fail(`certificate ${i + 1} of the TSA chain cannot be read ${at}: ${(err as Error).message}`);
    }
  });
  const label = (i: number): string =>
    `certificate ${i + 1} of the TSA chain (${certs[i]!.x509.subject.split('\n').join(', ')})`;
  const leaf = certs[0]!;

  // The key: ECDSA P-256, and the private key's.
  const key = leaf.x509.publicKey;
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    const kind =
      key.asymmetricKeyType === 'ec'
        ? `EC ${key.asymmetricKeyDetails?.namedCurve}`
        : key.asymmetricKeyType === 'rsa'
          ? `RSA (${key.asymmetricKeyDetails?.modulusLength} bits)`
          : String(key.asymmetricKeyType);
    fail(
      `the TSA certificate's key is ${kind} ${at}: Timeseal signs time-stamp tokens with ECDSA P-256 and SHA-256 only, so the TSA certificate must certify a P-256 key`,
    );
  }
  const spki = (k: crypto.KeyObject): Buffer => k.export({ type: 'spki', format: 'der' });
  if (!spki(key).equals(spki(crypto.createPublicKey(privateKey)))) {
    fail(`the TSA private key (${files.key}) does not match the TSA certificate, the first of ${files.chain}`);
  }

  // The TSA certificate's extensions.
  const extensions = leaf.parsed.extensions ?? [];
  const extension = (oid: string): Pkijs.Extension | undefined => extensions.find((e) => e.extnID === oid);
  if (leaf.x509.ca)
    fail(
      `the TSA certificate is a CA certificate (basicConstraints CA:TRUE) ${at}: a time-stamping certificate must be an end entity`,
    );
  const keyUsage = extension(OID_KEY_USAGE)?.parsedValue as Asn1js.BitString | undefined;
  if (keyUsage !== undefined) {
    const bytes = keyUsage.valueBlock.valueHexView;
    const others = Array.from(bytes).some((b, i) => (i === 0 ? b & 0x3f : b) !== 0);
    if (((bytes[0] ?? 0) & 0x80) === 0)
      fail(`the TSA certificate's key usage does not allow digital signatures ${at}: it must include digitalSignature`);
    if (others)
      fail(
        `the TSA certificate's key usage allows more than digitalSignature and nonRepudiation ${at}: OpenSSL refuses such a certificate for time stamping`,
      );
  }
  const ekus = extensions.filter((e) => e.extnID === OID_EXT_KEY_USAGE);
  if (ekus.length === 0) fail(`the TSA certificate has no extended key usage ${at}: ${EKU_RULE}`);
  if (ekus.length > 1) fail(`the TSA certificate has ${ekus.length} extended key usage extensions ${at}: ${EKU_RULE}`);
  const eku = ekus[0]!;
  const purposes = (eku.parsedValue as Pkijs.ExtKeyUsage | undefined)?.keyPurposes ?? [];
  if (!purposes.includes(OID_TIME_STAMPING))
    fail(`the TSA certificate's extended key usage does not name timeStamping ${at}: ${EKU_RULE}`);
  const extra = purposes.filter((p) => p !== OID_TIME_STAMPING);
  if (extra.length > 0)
    fail(
      `the TSA certificate's extended key usage names other purposes besides timeStamping (${extra.map((p) => PURPOSES[p] ?? p).join(', ')}) ${at}: ${EKU_RULE}`,
    );
  if (eku.critical !== true) fail(`the TSA certificate's extended key usage is not critical ${at}: ${EKU_RULE}`);

  // The chain: each certificate issued and signed by the next, a CA; the last self-signed.
  for (let i = 0; i + 1 < certs.length; i++) {
    const cert = certs[i]!.x509;
    const issuer = certs[i + 1]!.x509;
    if (!cert.checkIssued(issuer) || !cert.verify(issuer.publicKey)) {
      fail(
        `${label(i)} is not signed by the next one, ${label(i + 1)} ${at}: the chain must run from the TSA certificate, each followed by its issuer, up to and including the root`,
      );
    }
    if (!issuer.ca) fail(`${label(i + 1)} issues the one before it but is not a CA (basicConstraints CA:TRUE) ${at}`);
  }
  const last = certs.length - 1;
  const root = certs[last]!.x509;
  if (!root.checkIssued(root) || !root.verify(root.publicKey)) {
    fail(
      `the last certificate of the TSA chain, ${label(last)}, is not a self-signed root ${at}: the chain must end with the root that issued it (append the CA's root certificate)`,
    );
  }

  // Each valid now.
  certs.forEach(({ x509 }, i) => {
    if (now < x509.validFromDate) fail(`${label(i)} is not valid before ${x509.validFromDate.toISOString()} ${at}`);
    if (now > x509.validToDate) fail(`${label(i)} expired on ${x509.validToDate.toISOString()} ${at}`);
  });
  return leaf.x509;
}
