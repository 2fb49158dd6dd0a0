// Timeseal as an RFC 3161 time-stamp authority (docs/FORMAT.md §3b): the strict reading of a DER TimeStampReq
// and the DER TimeStampResp answered to it — a granted TimeStampToken (CMS SignedData version 3 over a TSTInfo,
// one ECDSA P-256 / SHA-256 signer with the signed attributes contentType, messageDigest and
// signingCertificateV2) or a rejection with its failInfo and a sentence. The signature itself is made by the
// caller's `sign` (the private key stays in runtime/); this module only arranges bytes, so it is written as a
// small DER writer and reader rather than through pkijs, whose encoder does not give DER's fractional
// GeneralizedTime. core/tsa.ts (pkijs) and OpenSSL check what it makes (test/cli/tsa-authority.test.ts).
import { sha256, sha384, sha512 } from '@noble/hashes/sha2.js';

/** Timeseal's TSA policy (a UUID-derived OID, ITU-T X.667): docs/FORMAT.md §3b. */
export const TSA_POLICY_OID = '2.25.98735976325990746299618456542211080382';

const OID = {
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha384: '2.16.840.1.101.3.4.2.2',
  sha512: '2.16.840.1.101.3.4.2.3',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  signedData: '1.2.840.113549.1.7.2',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
} as const;

export type ImprintAlgorithm = 'sha256' | 'sha384' | 'sha512';
const DIGEST_LENGTH: Record<ImprintAlgorithm, number> = { sha256: 32, sha384: 48, sha512: 64 };

/** PKIFailureInfo bits (RFC 3161 §2.4.2). */
export const FAIL_INFO = {
  badAlg: 0,
  badRequest: 2,
  badDataFormat: 5,
  timeNotAvailable: 14,
  unacceptedPolicy: 15,
  unacceptedExtension: 16,
  addInfoNotAvailable: 17,
  systemFailure: 25,
} as const;
export type FailInfo = keyof typeof FAIL_INFO;

// ---- DER writer ----

/** The element `tag` holding `contents` back to back, written into one new array (one copy of each part). */
function tlv(tag: number, ...contents: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const c of contents) n += c.length;
  const lengthBytes = n < 0x80 ? 0 : n < 0x100 ? 1 : n < 0x10000 ? 2 : 3;
  const out = new Uint8Array(2 + lengthBytes + n);
  out[0] = tag;
  if (lengthBytes === 0) out[1] = n;
  else {
    out[1] = 0x80 | lengthBytes;
    for (let i = 0; i < lengthBytes; i++) out[2 + i] = (n >> (8 * (lengthBytes - 1 - i))) & 0xff;
  }
  let at = 2 + lengthBytes;
  for (const c of contents) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

const seq = (...c: Uint8Array[]): Uint8Array => tlv(0x30, ...c);
const octets = (b: Uint8Array): Uint8Array => tlv(0x04, b);
const ascii = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));

/** A DER SET OF: its elements sorted by their encodings (X.690 §11.6). */
function setOf(items: Uint8Array[]): Uint8Array {
  const sorted = [...items].sort((a, b) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
    return a.length - b.length;
  });
  return tlv(0x31, ...sorted);
}

/** An INTEGER from a non-negative number or the big-endian bytes of a non-negative value. */
function integer(value: number | Uint8Array): Uint8Array {
  let bytes: number[];
  if (typeof value === 'number') {
    bytes = [];
    for (let v = value; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  } else {
    bytes = [...value];
  }
  while (bytes.length > 1 && bytes[0] === 0) bytes.shift();
  if (bytes.length === 0) bytes = [0];
  if (bytes[0]! & 0x80) bytes.unshift(0);
  return tlv(0x02, Uint8Array.from(bytes));
}

/** OID encodings, made once each: a token names about nine. */
const oidCache = new Map<string, Uint8Array>();

function oid(text: string): Uint8Array {
  let der = oidCache.get(text);
  if (der === undefined) {
    der = encodeOid(text);
    if (oidCache.size < 64) oidCache.set(text, der);
  }
  return der;
}

function encodeOid(text: string): Uint8Array {
  const arcs = text.split('.').map((a) => BigInt(a));
  const first = arcs[0]! * 40n + arcs[1]!;
  const out: number[] = [];
  for (const arc of [first, ...arcs.slice(2)]) {
    const chunk: number[] = [Number(arc & 0x7fn)];
    for (let v = arc >> 7n; v > 0n; v >>= 7n) chunk.unshift(Number(v & 0x7fn) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Uint8Array.from(out));
}

const algorithm = (id: string): Uint8Array => seq(oid(id));

/** A named-bit BIT STRING with one bit set (DER: trailing zero bits dropped). */
function namedBit(bit: number): Uint8Array {
  const bytes = new Uint8Array(Math.floor(bit / 8) + 1);
  bytes[bytes.length - 1] = 0x80 >> bit % 8;
  return tlv(0x03, Uint8Array.of(7 - (bit % 8)), bytes);
}

/** GeneralizedTime in DER: UTC, fraction of a second without trailing zeros, none when zero (X.690 §11.7). */
export function generalizedTime(time: Date): Uint8Array {
  const iso = time.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const millis = iso.slice(20, 23).replace(/0+$/, '');
  const text = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}${millis ? `.${millis}` : ''}Z`;
  return tlv(0x18, ascii(text));
}

// ---- DER reader (strict: definite, minimal lengths; one-byte tags) ----

interface Der {
  tag: number;
  /** The whole element. */
  raw: Uint8Array;
  /** Its contents. */
  body: Uint8Array;
}

class Malformed extends Error {}

function read(buf: Uint8Array, at: number): Der {
  const tag = buf[at];
  const first = buf[at + 1];
  if (tag === undefined || first === undefined || (tag & 0x1f) === 0x1f) throw new Malformed('an element is cut short');
  let len = first;
  let body = at + 2;
  if (first & 0x80) {
    const n = first & 0x7f;
    if (n === 0 || n > 3 || buf[body] === 0) throw new Malformed('an indefinite or non-minimal length');
    len = 0;
    for (let i = 0; i < n; i++) {
      const b = buf[body++];
      if (b === undefined) throw new Malformed('a length is cut short');
      len = len * 256 + b;
    }
    if (len < 0x80) throw new Malformed('a non-minimal length');
  }
  if (body + len > buf.length) throw new Malformed('an element runs past its end');
  return { tag, raw: buf.subarray(at, body + len), body: buf.subarray(body, body + len) };
}

/** The elements that make up `body`, exactly. */
function children(body: Uint8Array): Der[] {
  const out: Der[] = [];
  for (let at = 0; at < body.length; ) {
    const d = read(body, at);
    out.push(d);
    at += d.raw.length;
  }
  return out;
}

function oidText(d: Der): string {
  if (d.tag !== 0x06 || d.body.length === 0 || d.body[d.body.length - 1]! & 0x80) throw new Malformed('an OBJECT IDENTIFIER was expected');
  const arcs: bigint[] = [];
  let v = 0n;
  for (let i = 0; i < d.body.length; i++) {
    const b = d.body[i]!;
    if (v === 0n && b === 0x80) throw new Malformed('a non-minimal OBJECT IDENTIFIER');
    v = (v << 7n) | BigInt(b & 0x7f);
    if (!(b & 0x80)) {
      arcs.push(v);
      v = 0n;
    }
  }
  const first = arcs[0]!;
  const head = first < 80n ? [first / 40n, first % 40n] : [2n, first - 80n];
  return [...head, ...arcs.slice(1)].join('.');
}

function integerBytes(d: Der): Uint8Array {
  if (d.tag !== 0x02 || d.body.length === 0) throw new Malformed('an INTEGER was expected');
  if (d.body.length > 1 && ((d.body[0] === 0 && !(d.body[1]! & 0x80)) || (d.body[0] === 0xff && d.body[1]! & 0x80))) {
    throw new Malformed('a non-minimal INTEGER');
  }
  return d.body;
}

// ---- The request ----

export interface TimeStampRequest {
  algorithm: ImprintAlgorithm;
  digest: Uint8Array;
  /** The MessageImprint's DER as sent, echoed in the TSTInfo. */
  messageImprint: Uint8Array;
  /** The nonce INTEGER's contents, echoed as they are. */
  nonce?: Uint8Array;
  certReq: boolean;
}

export interface Rejection {
  failInfo: FailInfo;
  text: string;
}

const reject = (failInfo: FailInfo, text: string): { rejection: Rejection } => ({ rejection: { failInfo, text } });

/** Reads a DER TimeStampReq (RFC 3161 §2.4.1); a request Timeseal does not grant is a Rejection saying why. */
export function parseTimeStampRequest(der: Uint8Array): { request: TimeStampRequest } | { rejection: Rejection } {
  try {
    const top = read(der, 0);
    if (top.raw.length !== der.length) throw new Malformed('bytes follow the request');
    if (top.tag !== 0x30) throw new Malformed('a TimeStampReq is a SEQUENCE');
    const fields = children(top.body);
    const version = fields[0];
    const imprint = fields[1];
    if (version === undefined || imprint === undefined) throw new Malformed('the version or the messageImprint is missing');
    const v = integerBytes(version);
    if (v.length !== 1 || v[0] !== 1) return reject('badRequest', 'Only TimeStampReq version 1 is known.');
    if (imprint.tag !== 0x30) throw new Malformed('the messageImprint is not a SEQUENCE');
    const [algId, hashed, ...extra] = children(imprint.body);
    if (algId === undefined || hashed === undefined || extra.length > 0 || algId.tag !== 0x30 || hashed.tag !== 0x04) {
      throw new Malformed('the messageImprint is not an AlgorithmIdentifier and an OCTET STRING');
    }
    const [algOid, params, ...more] = children(algId.body);
    if (algOid === undefined || more.length > 0 || (params !== undefined && (params.tag !== 0x05 || params.body.length !== 0))) {
      throw new Malformed('the hash algorithm identifier is malformed');
    }
    const algText = oidText(algOid);
    const algorithm = (Object.keys(DIGEST_LENGTH) as ImprintAlgorithm[]).find((a) => OID[a] === algText);
    if (algorithm === undefined) {
      const name = algText === OID.sha1 ? 'SHA-1' : `the algorithm ${algText}`;
      return reject('badAlg', `The imprint is made with ${name}; this time-stamp authority accepts SHA-256, SHA-384 and SHA-512 only.`);
    }
    if (hashed.body.length !== DIGEST_LENGTH[algorithm]) {
      return reject('badDataFormat', `A ${algorithm.toUpperCase().replace('SHA', 'SHA-')} imprint is ${DIGEST_LENGTH[algorithm]} bytes; this one is ${hashed.body.length}.`);
    }
    let at = 2;
    let next = fields[at];
    if (next?.tag === 0x06) {
      const policy = oidText(next);
      if (policy !== TSA_POLICY_OID) return reject('unacceptedPolicy', `This time-stamp authority issues tokens under its policy ${TSA_POLICY_OID} only, not ${policy}.`);
      next = fields[++at];
    }
    let nonce: Uint8Array | undefined;
    if (next?.tag === 0x02) {
      nonce = integerBytes(next);
      next = fields[++at];
    }
    let certReq = false;
    if (next?.tag === 0x01) {
      if (next.body.length !== 1 || (next.body[0] !== 0 && next.body[0] !== 0xff)) throw new Malformed('a BOOLEAN is not DER');
      // DER omits a DEFAULT FALSE; a sent FALSE is read as it says.
      certReq = next.body[0] === 0xff;
      next = fields[++at];
    }
    if (next?.tag === 0xa0) return reject('unacceptedExtension', 'This time-stamp authority accepts no request extensions.');
    if (next !== undefined) throw new Malformed('an unknown field follows the request');
    return { request: { algorithm, digest: hashed.body, messageImprint: imprint.raw, ...(nonce ? { nonce } : {}), certReq } };
  } catch (err) {
    if (err instanceof Malformed) return reject('badDataFormat', `The request is not a DER TimeStampReq (${err.message}).`);
    throw err;
  }
}

// ---- The answer ----

/** The TSA's certificates and its signing function. */
export interface TsaIdentity {
  /** DER certificates, the TSA's own first, then up to the root. */
  certificates: Uint8Array[];
  /** The DER ECDSA P-256 signature over SHA-256 of `data` by the TSA's key. */
  sign(data: Uint8Array): Uint8Array;
  /** SHA-256, when the caller has a faster one than @noble/hashes (the server passes node:crypto's). */
  sha256?(data: Uint8Array): Uint8Array;
}

interface CertificateParts {
  issuer: Uint8Array;
  serial: Uint8Array;
  subject: Uint8Array;
}

/** Per certificate (the TSA's own, the same object for every token): its parts and its SHA-256, read once. */
const certificateCache = new WeakMap<Uint8Array, { parts: CertificateParts; sha256: Uint8Array }>();

function cachedCertificate(cert: Uint8Array): { parts: CertificateParts; sha256: Uint8Array } {
  let known = certificateCache.get(cert);
  if (known === undefined) {
    known = { parts: certificateParts(cert), sha256: sha256(cert) };
    certificateCache.set(cert, known);
  }
  return known;
}

/** The issuer, serial number and subject of a DER certificate. */
export function certificateParts(cert: Uint8Array): CertificateParts {
  const [tbs] = children(read(cert, 0).body);
  if (tbs === undefined) throw new Error('not a certificate');
  const f = children(tbs.body);
  const o = f[0]?.tag === 0xa0 ? 1 : 0; // [0] version
  return { serial: f[o]!.raw, issuer: f[o + 2]!.raw, subject: f[o + 4]!.raw };
}

/** The request a JSON submission's receipt answers: a SHA-256 imprint of `digest`, no nonce, certificates included. */
export function receiptRequest(digest: Uint8Array): TimeStampRequest {
  if (digest.length !== DIGEST_LENGTH.sha256) throw new Error('a receipt is made for a SHA-256 digest');
  return { algorithm: 'sha256', digest, messageImprint: seq(algorithm(OID.sha256), octets(digest)), certReq: true };
}

/** The hash that goes into the ledger for a request: the imprint itself if SHA-256, else SHA-256 of the TSTInfo. */
export function ledgerHash(request: TimeStampRequest, tstInfo: Uint8Array): Uint8Array {
  return request.algorithm === 'sha256' ? request.digest : sha256(tstInfo);
}

/** A positive serial number of at most 127 bits: 16 random bytes with the top bit clear and the next set. */
export function randomSerial(): Uint8Array {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0]! & 0x3f) | 0x40;
  return bytes;
}

/** The DER TSTInfo (RFC 3161 §2.4.2) for `request` at `genTime`, accuracy one second. */
export function tstInfo(request: TimeStampRequest, identity: TsaIdentity, genTime: Date, serial: Uint8Array): Uint8Array {
  const { subject } = cachedCertificate(identity.certificates[0]!).parts;
  return seq(
    integer(1),
    oid(TSA_POLICY_OID),
    request.messageImprint,
    integer(serial),
    generalizedTime(genTime),
    seq(integer(1)), // accuracy: seconds 1
    ...(request.nonce ? [tlv(0x02, request.nonce)] : []),
    tlv(0xa0, tlv(0xa4, subject)), // tsa [0] GeneralName directoryName [4]
  );
}

const STATUS_GRANTED = 0;
const STATUS_REJECTION = 2;

/** certificates [0] IMPLICIT SET OF, in DER order (sorted), made once per certificate list. */
const certificateSets = new WeakMap<Uint8Array[], Uint8Array>();
function certificateSet(certificates: Uint8Array[]): Uint8Array {
  let der = certificateSets.get(certificates);
  if (der === undefined) {
    der = tlv(0xa0, read(setOf(certificates), 0).body);
    certificateSets.set(certificates, der);
  }
  return der;
}

/** A granted TimeStampResp holding the token over `info` (a DER TSTInfo). */
export function grantedResponse(info: Uint8Array, request: TimeStampRequest, identity: TsaIdentity): Uint8Array {
  const leaf = identity.certificates[0]!;
  const cert = cachedCertificate(leaf);
  const { issuer, serial } = cert.parts;
  const attribute = (type: string, value: Uint8Array): Uint8Array => seq(oid(type), setOf([value]));
  const attrs = [
    attribute(OID.contentType, oid(OID.tstInfo)),
    attribute(OID.messageDigest, octets((identity.sha256 ?? sha256)(info))),
    // SigningCertificateV2 { certs SEQUENCE OF ESSCertIDv2 { hashAlgorithm DEFAULT sha256 (omitted), certHash } }
    attribute(OID.signingCertificateV2, seq(seq(seq(octets(cert.sha256))))),
  ];
  const signedAttrs = setOf(attrs);
  const signature = identity.sign(signedAttrs);
  const signerInfo = seq(
    integer(1),
    seq(issuer, serial),
    algorithm(OID.sha256),
    tlv(0xa0, read(signedAttrs, 0).body), // signedAttrs [0] IMPLICIT: the SET signed, re-tagged
    algorithm(OID.ecdsaWithSha256),
    octets(signature),
  );
  const signedData = seq(
    integer(3),
    setOf([algorithm(OID.sha256)]),
    seq(oid(OID.tstInfo), tlv(0xa0, octets(info))),
    // certificates [0] IMPLICIT SET OF, in DER order (sorted); a verifier finds the signer's by its sid.
    ...(request.certReq ? [certificateSet(identity.certificates)] : []),
    setOf([signerInfo]),
  );
  const token = seq(oid(OID.signedData), tlv(0xa0, signedData));
  return seq(seq(integer(STATUS_GRANTED)), token);
}

/** A TimeStampResp with status rejection, `failInfo` and `text` as its statusString. */
export function rejectionResponse(rejection: Rejection): Uint8Array {
  const utf8 = new TextEncoder().encode(rejection.text);
  return seq(seq(integer(STATUS_REJECTION), seq(tlv(0x0c, utf8)), namedBit(FAIL_INFO[rejection.failInfo])));
}

/** Digest of `data` with an imprint algorithm (for tests and tools). */
export function imprintDigest(algorithm: ImprintAlgorithm, data: Uint8Array): Uint8Array {
  return { sha256, sha384, sha512 }[algorithm](data);
}
