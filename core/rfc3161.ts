// An RFC 3161 time-stamp answer (DER TimeStampResp, a day's `.tsr`) checked against the ledger's SHA-256 and,
// when given, the TSA's certificate authority, with core/der.ts's strict DER reader and Web Crypto. The offline
// verifier uses it instead of pkijs, which adds about 400 KB to a page whose budget is 160 KB (measured with
// esbuild, docs/BENCHMARKS.md). runtime/tsa-client.ts (pkijs) runs it too, as a second, stricter reading: pkijs reads the
// DER inside signature values leniently (a changed length byte in an ECDSA signature still verified there).
//
// What is checked: the status is "granted"; the token is CMS SignedData holding one TSTInfo; its SHA-256 imprint
// is the ledger's digest; the one signer's signed attributes name a TSTInfo and carry its digest; the signature
// over them verifies with the signer certificate's key; that certificate has the time-stamping extended key
// usage, critical (RFC 3161 §2.3), and was valid at the stated time; each certificate up the chain is signed by
// the next, to one of the given authority's certificates.
import {
  children as derChildren,
  contents as bytes,
  decode,
  encoding as whole,
  expectTag as expect,
  readInteger,
  readOid,
  TAG,
  type Der,
} from './der.ts';
import { equalBytes, fromBase64, toHex } from './encoding.ts';

const fail = (reason: string): never => {
  throw new Error(reason);
};

/** Every element is read with core/der.ts (strict DER); its refusals name the token. */
const children = (d: Der): Der[] => derChildren(d, 'the time-stamp token');
const oid = (d: Der | undefined, what = 'an object identifier'): string => readOid(d, what);

/** An AlgorithmIdentifier whose parameters are absent or NULL (hashes, signatures): its OID. */
function algorithm(d: Der | undefined, what: string): string {
  const [id, params, more] = children(expect(d, TAG.SEQUENCE, what));
  if (more || (params && (params.tag !== TAG.NULL || params.end !== params.body)))
    fail(`${what} has unexpected parameters`);
  return oid(id, what);
}

function time(d: Der): Date {
  const s = new TextDecoder().decode(bytes(d));
  const m = (
    d.tag === 0x17 ? /^(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)Z$/ : /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\.\d+)?Z$/
  ).exec(s);
  if (!m || (d.tag !== 0x17 && d.tag !== 0x18)) return fail(`a time (${s}) is not in DER form`);
  const year = d.tag === 0x17 ? (Number(m[1]) < 50 ? 2000 : 1900) + Number(m[1]) : Number(m[1]);
  return new Date(
    Date.UTC(
      year,
      Number(m[2]) - 1,
      Number(m[3]),
      Number(m[4]),
      Number(m[5]),
      Number(m[6]),
      m[7] ? Math.round(Number(m[7]) * 1000) : 0,
    ),
  );
}

const SHORT: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
};

/** A Name as runtime/tsa-client.ts prints it: `O=…, CN=…`. */
function nameOf(name: Der): string {
  return children(name)
    .flatMap(children)
    .map((atv) => {
      const [type, value] = children(atv);
      return `${SHORT[oid(type)] ?? oid(type)}=${new TextDecoder().decode(bytes(value!))}`;
    })
    .join(', ');
}

const HASHES: Record<string, string> = {
  '2.16.840.1.101.3.4.2.1': 'SHA-256',
  '2.16.840.1.101.3.4.2.2': 'SHA-384',
  '2.16.840.1.101.3.4.2.3': 'SHA-512',
};
/** Signature algorithms: ECDSA or RSA PKCS #1 v1.5, with their hash (rsaEncryption: the signer's digest). */
const SIGNATURES: Record<string, [string, string | null]> = {
  '1.2.840.10045.4.3.2': ['ECDSA', 'SHA-256'],
  '1.2.840.10045.4.3.3': ['ECDSA', 'SHA-384'],
  '1.2.840.10045.4.3.4': ['ECDSA', 'SHA-512'],
  '1.2.840.113549.1.1.11': ['RSASSA-PKCS1-v1_5', 'SHA-256'],
  '1.2.840.113549.1.1.12': ['RSASSA-PKCS1-v1_5', 'SHA-384'],
  '1.2.840.113549.1.1.13': ['RSASSA-PKCS1-v1_5', 'SHA-512'],
  '1.2.840.113549.1.1.1': ['RSASSA-PKCS1-v1_5', null],
};
const CURVES: Record<string, [string, number]> = {
  '1.2.840.10045.3.1.7': ['P-256', 32],
  '1.3.132.0.34': ['P-384', 48],
  '1.3.132.0.35': ['P-521', 66],
};

function subtle(): SubtleCrypto {
  return (
    globalThis.crypto?.subtle ??
    fail('this browser offers no Web Crypto here (check the token with `openssl ts -verify`)')
  );
}

/** A DER ECDSA signature as Web Crypto wants it: r and s, each `size` bytes (minimal positive INTEGERs). */
function rawEcdsa(sig: Uint8Array, size: number): Uint8Array {
  const what = 'an ECDSA signature';
  const parts = derChildren(expect(decode(sig, what), TAG.SEQUENCE, what), what);
  if (parts.length !== 2) fail(`${what} is not two INTEGERs`);
  const out = new Uint8Array(2 * size);
  parts.forEach((n, i) => {
    let v = readInteger(n, what);
    if (v[0]! & 0x80) fail(`${what} holds a negative number`);
    if (v.length > 1 && v[0] === 0) v = v.subarray(1);
    if (v.length > size) fail(`${what} is malformed`);
    out.set(v, (i + 1) * size - v.length);
  });
  return out;
}

/** Imported public keys by algorithm and SubjectPublicKeyInfo: a reader checking many tokens of one authority
 * (a folder of receipts, a day's tokens) imports its two keys once, not per token. At most KEY_CACHE keys. */
const KEY_CACHE = 32;
const importedKeys = new Map<string, Promise<CryptoKey>>();
function importSpki(
  c: SubtleCrypto,
  der: Uint8Array<ArrayBuffer>,
  algorithm: EcKeyImportParams | RsaHashedImportParams,
): Promise<CryptoKey> {
  const id = `${JSON.stringify(algorithm)} ${toHex(der)}`;
  let key = importedKeys.get(id);
  if (key === undefined) {
    key = c.importKey('spki', der, algorithm, false, ['verify']);
    key.catch(() => importedKeys.delete(id));
    if (importedKeys.size >= KEY_CACHE) importedKeys.delete(importedKeys.keys().next().value!);
    importedKeys.set(id, key);
  }
  return key;
}

/** Verifies `sig` over `data` with a SubjectPublicKeyInfo, by the signature algorithm `alg` (hash `fallback` for rsaEncryption). */
async function verifySignature(
  spki: Der,
  alg: string,
  fallback: string | undefined,
  sig: Uint8Array,
  data: Uint8Array,
): Promise<boolean> {
  const known =
    SIGNATURES[alg] ?? fail(`signature algorithm ${alg} is not one this page checks (use \`openssl ts -verify\`)`);
  const hash = known[1] ?? fallback ?? fail('no digest algorithm for an RSA signature');
  const [keyAlg] = children(spki);
  const [keyOid, params] = children(keyAlg!);
  const c = subtle();
  const der = whole(spki) as Uint8Array<ArrayBuffer>;
  if (known[0] === 'ECDSA') {
    const curve =
      (oid(keyOid) === '1.2.840.10045.2.1' && CURVES[oid(params)]) ||
      fail('the key is not an ECDSA key on a curve this page knows');
    const key = await importSpki(c, der, { name: 'ECDSA', namedCurve: curve[0] });
    return c.verify(
      { name: 'ECDSA', hash },
      key,
      rawEcdsa(sig, curve[1]) as Uint8Array<ArrayBuffer>,
      data as Uint8Array<ArrayBuffer>,
    );
  }
  if (oid(keyOid) !== '1.2.840.113549.1.1.1') fail('an RSA signature from a key that is not RSA');
  const key = await importSpki(c, der, { name: known[0], hash });
  return c.verify(known[0], key, sig as Uint8Array<ArrayBuffer>, data as Uint8Array<ArrayBuffer>);
}

interface Cert {
  raw: Uint8Array;
  tbs: Der;
  serial: Uint8Array;
  issuer: Der;
  subject: Der;
  notBefore: Date;
  notAfter: Date;
  spki: Der;
  sigAlg: string;
  signature: Uint8Array;
  extensions: Map<string, { critical: boolean; value: Uint8Array }>;
}

function certificate(d: Der): Cert {
  const [tbs, sigAlg, sigValue] = children(expect(d, 0x30, 'a certificate'));
  const t = children(expect(tbs, 0x30, 'a certificate'));
  const f = t[0]?.tag === 0xa0 ? t.slice(1) : t;
  const [serial, innerAlg, issuer, validity, subject, spki] = f;
  const alg = algorithm(sigAlg, "a certificate's signature algorithm");
  if (!innerAlg || !equalBytes(whole(innerAlg), whole(sigAlg!)))
    fail("a certificate's two signature algorithms differ");
  const [notBefore, notAfter] = children(expect(validity, 0x30, "a certificate's validity"));
  const extensions = new Map<string, { critical: boolean; value: Uint8Array }>();
  const ext = f.find((x) => x.tag === 0xa3);
  for (const e of ext ? children(children(ext)[0]!) : []) {
    const parts = children(e);
    const critical = parts[1]?.tag === 0x01 && bytes(parts[1])[0] === 0xff;
    extensions.set(oid(parts[0]), { critical, value: bytes(expect(parts.at(-1), 0x04, 'an extension')) });
  }
  const sv = bytes(expect(sigValue, 0x03, "a certificate's signature"));
  if (sv[0] !== 0) fail("a certificate's signature is malformed");
  return {
    raw: whole(d),
    tbs: tbs!,
    serial: readInteger(serial, "a certificate's serial number"),
    issuer: expect(issuer, 0x30, "a certificate's issuer"),
    subject: expect(subject, 0x30, "a certificate's subject"),
    notBefore: time(notBefore!),
    notAfter: time(notAfter!),
    spki: expect(spki, 0x30, "a certificate's key"),
    sigAlg: alg,
    signature: sv.subarray(1),
    extensions,
  };
}

const sameName = (a: Der, b: Der): boolean => equalBytes(whole(a), whole(b));

/** The certificates of a PEM text (a CA chain such as keys/tsa-ca.pem), as DER. */
export function pemCertificates(pem: string): Uint8Array[] {
  return [...pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)].map((m) =>
    fromBase64(m[1]!.replace(/\s+/g, ''), 'certificate'),
  );
}

export interface TokenFacts {
  genTime: Date;
  tsaName: string;
  serialNumber: string;
  /** The TSTInfo's policy OID and imprint (its hash algorithm, 'SHA-256', 'SHA-384' or 'SHA-512', and digest). */
  policy: string;
  imprintAlgorithm: string;
  imprint: Uint8Array;
  /** The DER TSTInfo the signature covers. */
  tstInfo: Uint8Array;
  /** The chain from the signer's certificate up, by subject; the last one is the authority's when `anchored`. */
  chain: string[];
  anchored: boolean;
}

/**
 * Checks a TimeStampResp for `digest` (the ledger's SHA-256); with `digest` null, for whatever SHA-2 imprint it
 * holds (the caller compares `imprint`, as for a receipt of a file). With `authority` (DER certificates the person
 * trusts), the signer's chain must lead to one of them; without, the token is checked as far as it carries its
 * own chain, and `anchored` is false. Rejects with the reason of the first thing wrong.
 */
export async function checkToken(
  der: Uint8Array,
  digest: Uint8Array | null,
  authority: Uint8Array[] = [],
): Promise<TokenFacts> {
  const resp = expect(decode(der, 'the TimeStampResp'), TAG.SEQUENCE, 'the TimeStampResp (RFC 3161 §2.4.2)');
  const [statusInfo, token] = children(resp);
  const status = readInteger(children(expect(statusInfo, 0x30, 'the status'))[0], 'the status');
  if (status.length !== 1 || status[0] !== 0) fail(`the TSA refused: status ${toHex(status)}`);
  const [contentType, content] = children(expect(token, 0x30, 'the time-stamp token'));
  if (oid(contentType) !== '1.2.840.113549.1.7.2') fail('the token is not CMS SignedData');
  const sd = children(expect(children(expect(content, 0xa0, 'the SignedData'))[0], 0x30, 'the SignedData'));
  const [sdVersion, digestAlgs, encap] = sd;
  if (!equalBytes(readInteger(sdVersion, 'the SignedData version'), Uint8Array.of(3)))
    fail('unexpected SignedData version');
  const signerInfos = children(expect(sd.at(-1), 0x31, 'the signer infos'));
  const certs = sd.find((x) => x.tag === 0xa0);
  const [eType, eWrap] = children(expect(encap, 0x30, 'the encapsulated content'));
  if (oid(eType) !== '1.2.840.113549.1.9.16.1.4') fail('the token does not hold a TSTInfo');
  const eContent = bytes(expect(children(expect(eWrap, 0xa0, 'the TSTInfo'))[0], 0x04, 'the TSTInfo'));
  const [tstVersion, policy, imprint, serial, genTimeDer] = children(
    expect(decode(eContent, 'the TSTInfo'), 0x30, 'the TSTInfo'),
  );
  if (!equalBytes(readInteger(tstVersion, 'the TSTInfo version'), Uint8Array.of(1))) fail('unexpected TSTInfo version');
  readInteger(serial, 'the serial number');
  const [imprintAlg, imprintHash] = children(expect(imprint, 0x30, 'the message imprint'));
  const imprintAlgorithm = HASHES[algorithm(imprintAlg, 'the imprint algorithm')] ?? fail('the imprint is not SHA-2');
  if (digest !== null && imprintAlgorithm !== 'SHA-256') fail('the imprint is not SHA-256');
  const stamped = bytes(expect(imprintHash, 0x04, 'the message imprint'));
  if (digest !== null && !equalBytes(stamped, digest))
    fail(`the token is for another digest (${toHex(stamped)}, not the ledger's ${toHex(digest)})`);
  const genTime = time(expect(genTimeDer, 0x18, 'the time'));

  if (signerInfos.length !== 1 || children(expect(digestAlgs, 0x31, 'the digest algorithms')).length !== 1)
    fail('the token does not have exactly one signer');
  const si = children(expect(signerInfos[0], 0x30, 'the signer info'));
  const [version, sid, digestAlg, attrs, sigAlg, signature, unsigned] = si;
  if (!equalBytes(readInteger(version, "the signer's version"), Uint8Array.of(1)) || unsigned)
    fail('unexpected SignerInfo version or unsigned attributes');
  if (!equalBytes(whole(digestAlg!), whole(children(digestAlgs!)[0]!)))
    fail("the token's digest algorithms are not its signer's");
  const hash =
    HASHES[algorithm(digestAlg, "the signer's digest algorithm")] ?? fail("the signer's digest algorithm is not SHA-2");
  const attributes = new Map(
    children(expect(attrs, 0xa0, 'the signed attributes')).map((a) => {
      const [type, values] = children(a);
      return [oid(type), children(expect(values, 0x31, 'an attribute'))[0]!] as const;
    }),
  );
  if (oid(attributes.get('1.2.840.113549.1.9.3'), 'a content-type attribute') !== '1.2.840.113549.1.9.16.1.4')
    fail('the signed attributes do not name a TSTInfo');
  const messageDigest = bytes(expect(attributes.get('1.2.840.113549.1.9.4'), 0x04, 'the message-digest attribute'));
  const c = subtle();
  if (!equalBytes(messageDigest, new Uint8Array(await c.digest(hash, eContent as Uint8Array<ArrayBuffer>))))
    fail("the token's signature does not verify: the signed digest is not the TSTInfo's");

  const carried = certs ? children(certs).map(certificate) : [];
  const [sidIssuer, sidSerial] = children(expect(sid, 0x30, "the signer's identifier"));
  const signer =
    carried.find(
      (x) =>
        sameName(x.issuer, sidIssuer!) && equalBytes(x.serial, readInteger(sidSerial, "the signer's serial number")),
    ) ?? fail("the token does not include the TSA's certificate");
  const signedAttrs = Uint8Array.from(whole(attrs!));
  signedAttrs[0] = 0x31;
  if (
    !(await verifySignature(
      signer.spki,
      algorithm(sigAlg, "the signer's signature algorithm"),
      hash,
      bytes(expect(signature, 0x04, 'the signature')),
      signedAttrs,
    ))
  )
    fail("the token's signature does not verify");

  const eku = signer.extensions.get('2.5.29.37');
  if (!eku || !children(decode(eku.value, 'the extended key usage')).some((p) => oid(p) === '1.3.6.1.5.5.7.3.8'))
    fail("the TSA's certificate lacks the time-stamping extended key usage");
  if (!eku!.critical) fail("the TSA's certificate's extended key usage is not critical (RFC 3161 §2.3)");

  // Every certificate the token carries is signed by its issuer, found in the authority given or in the token
  // (itself for a root); with an authority given, a certificate whose issuer is in neither is refused.
  const anchors = authority.map((a) => certificate(decode(a, "the authority's certificate")));
  const signs = async (by: Cert, c: Cert): Promise<void> => {
    if (!(await verifySignature(by.spki, c.sigAlg, undefined, c.signature, whole(c.tbs))))
      fail(`the certificate of ${nameOf(c.subject)} is not signed by ${nameOf(by.subject)}`);
  };
  for (const c of carried) {
    const by = [...anchors, ...carried].find((x) => sameName(x.subject, c.issuer));
    if (by) await signs(by, c);
    else if (anchors.length > 0)
      fail(
        `the token carries the certificate of ${nameOf(c.subject)}, issued by ${nameOf(c.issuer)}, which is neither in the token nor the authority given`,
      );
  }
  // Up the chain from the signer, each certificate valid at the stated time, to one of the authority's.

  const chain: string[] = [];
  for (let cert: Cert | undefined = signer, depth = 0; cert && depth < 8; depth++) {
    chain.push(nameOf(cert.subject));
    if (genTime < cert.notBefore || genTime > cert.notAfter) {
      fail(
        `the certificate of ${nameOf(cert.subject)} was not valid at the stated time ${genTime.toISOString()} (valid ${cert.notBefore.toISOString()} to ${cert.notAfter.toISOString()})`,
      );
    }
    if (anchors.some((a) => equalBytes(a.raw, cert!.raw))) return facts(true);
    const anchor = anchors.find((a) => sameName(a.subject, cert!.issuer));
    if (anchor) {
      await signs(anchor, cert);
      cert = anchor;
    } else
      cert = sameName(cert.subject, cert.issuer) ? undefined : carried.find((x) => sameName(x.subject, cert!.issuer));
  }
  if (anchors.length > 0)
    fail(`the TSA's certificate does not lead to the certificate authority given (its chain: ${chain.join(' → ')})`);
  return facts(false);

  function facts(anchored: boolean): TokenFacts {
    return {
      genTime,
      tsaName: nameOf(signer.subject),
      serialNumber: toHex(bytes(serial!)),
      policy: oid(policy, 'the policy'),
      imprintAlgorithm,
      imprint: stamped,
      tstInfo: eContent,
      chain,
      anchored,
    };
  }
}
