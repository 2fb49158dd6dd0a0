// Timeseal as an RFC 3161 time-stamp authority (docs/FORMAT.md §3b): the strict reading of a DER TimeStampReq
// and the DER TimeStampResp answered to it — a granted TimeStampToken (CMS SignedData version 3 over a TSTInfo,
// one ECDSA P-256 / SHA-256 signer with the signed attributes contentType, messageDigest and
// signingCertificateV2) or a rejection with its failInfo and a sentence. The signature itself is made by the
// caller's `sign` (the private key stays in runtime/); this module only arranges bytes, so it is written with
// core/der.ts rather than through pkijs, whose encoder does not give DER's fractional GeneralizedTime. runtime/tsa-client.ts (pkijs) and OpenSSL check what it makes (test/cli/tsa-authority.test.ts).
import { sha256, sha384, sha512 } from '@noble/hashes/sha2.js';
import {
  children,
  contents,
  contentsEqual,
  decode,
  DerWriter,
  encode as tlv,
  encodedSize as sized,
  encoding,
  expectTag,
  integer,
  namedBit,
  octetString as octets,
  oid as encodeOid,
  readBoolean,
  readInteger,
  readOid,
  sequence as seq,
  setOf,
  TAG,
  type Der,
} from './der.ts';
import { FormatError } from './errors.ts';

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

const algorithm = (id: string): Uint8Array => seq(oid(id));

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

/** The contents of the OIDs a request is compared with, encoded once. */
const IMPRINT_OIDS: [ImprintAlgorithm, Uint8Array][] = (['sha256', 'sha384', 'sha512'] as const).map((a) => [
  a,
  oid(OID[a]).subarray(2),
]);
const POLICY_OID = oid(TSA_POLICY_OID).subarray(2);

/** Reads a DER TimeStampReq (RFC 3161 §2.4.1); a request Timeseal does not grant is a Rejection saying why. */
export function parseTimeStampRequest(der: Uint8Array): { request: TimeStampRequest } | { rejection: Rejection } {
  try {
    const fields = children(expectTag(decode(der, 'the request'), TAG.SEQUENCE, 'the TimeStampReq'), 'the request');
    const version = readInteger(fields[0], 'the version');
    if (version.length !== 1 || version[0] !== 1) return reject('badRequest', 'Only TimeStampReq version 1 is known.');
    const imprint = expectTag(fields[1], TAG.SEQUENCE, 'the messageImprint');
    const [algId, hashed, ...extra] = children(imprint, 'the messageImprint');
    if (extra.length > 0) throw new FormatError('the messageImprint', 'more than an algorithm and a digest');
    const [algOid, params, ...more] = children(
      expectTag(algId, TAG.SEQUENCE, 'the hash algorithm'),
      'the hash algorithm',
    );
    if (more.length > 0 || (params !== undefined && (params.tag !== TAG.NULL || params.end !== params.body)))
      throw new FormatError('the hash algorithm', 'parameters other than none or NULL');
    expectTag(algOid, TAG.OID, 'the hash algorithm');
    const digest = contents(expectTag(hashed, TAG.OCTET_STRING, 'the hashed message'));
    const algorithm = IMPRINT_OIDS.find(([, bytes]) => contentsEqual(algOid!, bytes))?.[0];
    if (algorithm === undefined) {
      const algText = readOid(algOid, 'the hash algorithm');
      const name = algText === OID.sha1 ? 'SHA-1' : `the algorithm ${algText}`;
      return reject(
        'badAlg',
        `The imprint is made with ${name}; this time-stamp authority accepts SHA-256, SHA-384 and SHA-512 only.`,
      );
    }
    if (digest.length !== DIGEST_LENGTH[algorithm]) {
      return reject(
        'badDataFormat',
        `A ${algorithm.toUpperCase().replace('SHA', 'SHA-')} imprint is ${DIGEST_LENGTH[algorithm]} bytes; this one is ${digest.length}.`,
      );
    }
    let at = 2;
    let next = fields[at];
    if (next?.tag === TAG.OID) {
      if (!contentsEqual(next, POLICY_OID)) {
        return reject(
          'unacceptedPolicy',
          `This time-stamp authority issues tokens under its policy ${TSA_POLICY_OID} only, not ${readOid(next, 'the policy')}.`,
        );
      }
      next = fields[++at];
    }
    let nonce: Uint8Array | undefined;
    if (next?.tag === TAG.INTEGER) {
      nonce = readInteger(next, 'the nonce');
      next = fields[++at];
    }
    let certReq = false;
    if (next?.tag === TAG.BOOLEAN) {
      // DER omits a DEFAULT FALSE; a sent FALSE is read as it says.
      certReq = readBoolean(next, 'certReq');
      next = fields[++at];
    }
    if (next?.tag === 0xa0)
      return reject('unacceptedExtension', 'This time-stamp authority accepts no request extensions.');
    if (next !== undefined) throw new FormatError('the request', 'an unknown field follows certReq');
    const request: TimeStampRequest = { algorithm, digest, messageImprint: encoding(imprint), certReq };
    if (nonce !== undefined) request.nonce = nonce;
    return { request };
  } catch (err) {
    if (err instanceof FormatError)
      return reject('badDataFormat', `The request is not a DER TimeStampReq (${err.message}).`);
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

/** The issuer, serial number and subject of a DER certificate. */
function certificateParts(cert: Uint8Array): { issuer: Uint8Array; serial: Uint8Array; subject: Uint8Array } {
  const field = "the TSA's certificate";
  const tbs = children(expectTag(decode(cert, field), TAG.SEQUENCE, field), field)[0];
  const f = children(expectTag(tbs, TAG.SEQUENCE, field), field);
  const o = f[0]?.tag === 0xa0 ? 1 : 0; // [0] version
  const raw = (d: Der | undefined, tag: number, name: string): Uint8Array =>
    encoding(expectTag(d, tag, `${field}: ${name}`));
  return {
    serial: raw(f[o], TAG.INTEGER, 'serial number'),
    issuer: raw(f[o + 2], TAG.SEQUENCE, 'issuer'),
    subject: raw(f[o + 4], TAG.SEQUENCE, 'subject'),
  };
}

/** The request a JSON submission's receipt answers: a SHA-256 imprint of `digest`, no nonce, certificates included. */
export function receiptRequest(digest: Uint8Array): TimeStampRequest {
  if (digest.length !== DIGEST_LENGTH.sha256) throw new Error('a receipt is made for a SHA-256 digest');
  const messageImprint = new Uint8Array(SHA256_IMPRINT_HEAD.length + digest.length);
  messageImprint.set(SHA256_IMPRINT_HEAD);
  messageImprint.set(digest, SHA256_IMPRINT_HEAD.length);
  return {
    algorithm: 'sha256',
    digest: messageImprint.subarray(SHA256_IMPRINT_HEAD.length),
    messageImprint,
    certReq: true,
  };
}

/** The hash that goes into the ledger for a request: the imprint itself if SHA-256, else SHA-256 of the TSTInfo. */
export function ledgerHash(request: TimeStampRequest, tstInfo: Uint8Array): Uint8Array {
  return request.algorithm === 'sha256' ? request.digest : sha256(tstInfo);
}

/** Random bytes drawn 4 KiB at a time: one call to the system's generator per 256 serial numbers. */
let serialPool = new Uint8Array(0);
let serialPoolAt = 0;

/** A positive serial number of at most 127 bits: 16 random bytes with the top bit clear and the next set. */
export function randomSerial(): Uint8Array {
  if (serialPoolAt + 16 > serialPool.length) {
    // A new pool each time: the serials handed out are views of the old one, never overwritten.
    serialPool = globalThis.crypto.getRandomValues(new Uint8Array(4096));
    serialPoolAt = 0;
  }
  const bytes = serialPool.subarray(serialPoolAt, (serialPoolAt += 16));
  bytes[0] = (bytes[0]! & 0x3f) | 0x40;
  return bytes;
}

// The token is written into one array of its exact size: the parts that are the same in every token are encoded
// once (below, and per certificate list in TokenTemplate), and each token adds only its own fields and the
// length headers around them.

/** MessageImprint { AlgorithmIdentifier sha256 (no parameters), OCTET STRING of 32 bytes }, up to the digest. */
const SHA256_IMPRINT_HEAD = seq(algorithm(OID.sha256), octets(new Uint8Array(32))).subarray(0, -32);
/** TSTInfo: version 1, then the policy. */
const TST_HEAD = Uint8Array.of(...integer(1), ...oid(TSA_POLICY_OID));
/** TSTInfo accuracy SEQUENCE { seconds 1 }. */
const ACCURACY = seq(integer(1));
/** PKIStatusInfo { status granted }. */
const STATUS_GRANTED = seq(integer(0));
const SIGNED_DATA_OID = oid(OID.signedData);
/** SignedData: version 3, digestAlgorithms SET { sha256 }. */
const SIGNED_DATA_HEAD = Uint8Array.of(...integer(3), ...setOf([algorithm(OID.sha256)]));
const TST_INFO_OID = oid(OID.tstInfo);
/** SignerInfo's signatureAlgorithm. */
const ECDSA_SHA256 = algorithm(OID.ecdsaWithSha256);

/** What every token signed with one certificate list shares, encoded once. */
interface TokenTemplate {
  /** TSTInfo's tsa [0]: directoryName [4] with the TSA certificate's subject. */
  tsaName: Uint8Array;
  /** SignerInfo up to its signed attributes: version 1, sid (issuer and serial number), digestAlgorithm sha256. */
  signerHead: Uint8Array;
  /** The signed attributes as signed (a SET OF) with a zero messageDigest, and where its 32 bytes go. */
  signedAttrs: Uint8Array;
  digestAt: number;
  /** SignedData's certificates [0] IMPLICIT SET OF, in DER order (sorted); a verifier finds the signer's by its sid. */
  certificates: Uint8Array;
}

const templates = new WeakMap<Uint8Array[], TokenTemplate>();

function template(identity: TsaIdentity): TokenTemplate {
  let t = templates.get(identity.certificates);
  if (t === undefined) {
    t = makeTemplate(identity.certificates);
    templates.set(identity.certificates, t);
  }
  return t;
}

function makeTemplate(certificates: Uint8Array[]): TokenTemplate {
  const leaf = certificates[0];
  if (leaf === undefined) throw new Error('the TSA has no certificate');
  const { issuer, serial, subject } = certificateParts(leaf);
  const attribute = (type: string, value: Uint8Array): Uint8Array => seq(oid(type), setOf([value]));
  const signedAttrs = (digest: Uint8Array): Uint8Array =>
    setOf([
      attribute(OID.contentType, oid(OID.tstInfo)),
      attribute(OID.messageDigest, octets(digest)),
      // SigningCertificateV2 { certs SEQUENCE OF ESSCertIDv2 { hashAlgorithm DEFAULT sha256 (omitted), certHash } }
      attribute(OID.signingCertificateV2, seq(seq(seq(octets(sha256(leaf)))))),
    ]);
  // The three attributes differ in length before any digest byte, so their DER order does not depend on the
  // digest: the set made with 32 zero bytes and the one made with 32 0xff bytes differ in those bytes only.
  const zeros = signedAttrs(new Uint8Array(32));
  const ones = signedAttrs(new Uint8Array(32).fill(0xff));
  const digestAt = zeros.findIndex((b, i) => b !== ones[i]);
  if (
    zeros.length !== ones.length ||
    digestAt < 0 ||
    zeros.some((b, i) => (b !== ones[i]) !== (i >= digestAt && i < digestAt + 32))
  ) {
    throw new Error('the signed attributes do not keep their order');
  }
  const certificateSet = setOf(certificates);
  return {
    tsaName: tlv(0xa0, tlv(0xa4, subject)),
    signerHead: Uint8Array.of(...integer(1), ...seq(issuer, serial), ...algorithm(OID.sha256)),
    signedAttrs: zeros,
    digestAt,
    // [0] IMPLICIT: the SET OF re-tagged, its length header unchanged.
    certificates: Uint8Array.of(0xa0, ...certificateSet.subarray(1)),
  };
}

/** The DER TSTInfo (RFC 3161 §2.4.2) for `request` at `genTime`, accuracy one second. */
export function tstInfo(
  request: TimeStampRequest,
  identity: TsaIdentity,
  genTime: Date,
  serial: Uint8Array,
): Uint8Array {
  const { tsaName } = template(identity);
  // serialNumber INTEGER: leading zero bytes dropped, one added before a high bit (a positive number).
  let serialFrom = 0;
  while (serialFrom < serial.length - 1 && serial[serialFrom] === 0) serialFrom++;
  const serialPad = serial.length === 0 || serial[serialFrom]! & 0x80 ? 1 : 0;
  const serialLength = serialPad + serial.length - serialFrom;
  // GeneralizedTime in DER: YYYYMMDDHHMMSS in UTC, a fraction of a second without trailing zeros, none when
  // zero, then Z (X.690 §11.7).
  const iso = genTime.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  let fraction = 3;
  while (fraction > 0 && iso.charCodeAt(19 + fraction) === 0x30) fraction--;
  const timeLength = 15 + (fraction > 0 ? 1 + fraction : 0);
  const nonce = request.nonce;
  const contents =
    TST_HEAD.length +
    request.messageImprint.length +
    sized(serialLength) +
    sized(timeLength) +
    ACCURACY.length +
    (nonce ? sized(nonce.length) : 0) +
    tsaName.length;
  const w = new DerWriter(new Uint8Array(sized(contents)));
  w.header(0x30, contents);
  w.bytes(TST_HEAD);
  w.bytes(request.messageImprint);
  w.header(0x02, serialLength);
  if (serialPad) w.out[w.at++] = 0;
  w.bytes(serial.subarray(serialFrom));
  w.header(0x18, timeLength);
  for (const at of TIME_DIGITS) w.out[w.at++] = iso.charCodeAt(at);
  if (fraction > 0) for (let i = 19; i <= 19 + fraction; i++) w.out[w.at++] = iso.charCodeAt(i);
  w.out[w.at++] = 0x5a; // Z
  w.bytes(ACCURACY);
  if (nonce) w.element(0x02, nonce);
  w.bytes(tsaName);
  return w.done();
}

/** Where the digits of YYYYMMDDHHMMSS stand in an ISO-8601 time. */
const TIME_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18];

/**
 * The signed attributes of the token over `info` (a DER TSTInfo): contentType, messageDigest (SHA-256 of `info`)
 * and signingCertificateV2, as a DER SET OF — the bytes the TSA's signature covers.
 */
export function signedAttributes(info: Uint8Array, identity: TsaIdentity): Uint8Array {
  const t = template(identity);
  const attrs = t.signedAttrs.slice();
  attrs.set((identity.sha256 ?? sha256)(info), t.digestAt);
  return attrs;
}

/** A granted TimeStampResp holding the token over `info` (a DER TSTInfo), signed with `identity.sign`. */
export function grantedResponse(info: Uint8Array, request: TimeStampRequest, identity: TsaIdentity): Uint8Array {
  const attrs = signedAttributes(info, identity);
  return signedResponse(info, request, identity, attrs, identity.sign(attrs));
}

/**
 * A granted TimeStampResp from the token's parts: `info`, its `signedAttrs` (signedAttributes) and `signature`,
 * the DER ECDSA signature over them by the TSA's key, made by the caller (the server signs on another thread).
 */
export function signedResponse(
  info: Uint8Array,
  request: TimeStampRequest,
  identity: TsaIdentity,
  signedAttrs: Uint8Array,
  signature: Uint8Array,
): Uint8Array {
  const t = template(identity);
  if (signedAttrs.length !== t.signedAttrs.length || signedAttrs[0] !== 0x31)
    throw new Error('these are not the signed attributes of a token');
  // Contents lengths, innermost first.
  const encapsulated = TST_INFO_OID.length + sized(sized(info.length)); // eContentType, eContent [0] { OCTET STRING }
  const signerInfo = t.signerHead.length + signedAttrs.length + ECDSA_SHA256.length + sized(signature.length);
  const signedData =
    SIGNED_DATA_HEAD.length +
    sized(encapsulated) +
    (request.certReq ? t.certificates.length : 0) +
    sized(sized(signerInfo));
  const contentInfo = SIGNED_DATA_OID.length + sized(sized(signedData));
  const response = STATUS_GRANTED.length + sized(contentInfo);
  const w = new DerWriter(new Uint8Array(sized(response)));
  w.header(0x30, response);
  w.bytes(STATUS_GRANTED);
  w.header(0x30, contentInfo); // timeStampToken ContentInfo
  w.bytes(SIGNED_DATA_OID);
  w.header(0xa0, sized(signedData));
  w.header(0x30, signedData);
  w.bytes(SIGNED_DATA_HEAD);
  w.header(0x30, encapsulated); // encapContentInfo
  w.bytes(TST_INFO_OID);
  w.header(0xa0, sized(info.length));
  w.element(0x04, info);
  if (request.certReq) w.bytes(t.certificates);
  w.header(0x31, sized(signerInfo)); // signerInfos SET OF, one
  w.header(0x30, signerInfo);
  w.bytes(t.signerHead);
  const attrsAt = w.at;
  w.bytes(signedAttrs);
  w.out[attrsAt] = 0xa0; // signedAttrs [0] IMPLICIT: the SET signed, re-tagged
  w.bytes(ECDSA_SHA256);
  w.element(0x04, signature);
  return w.done();
}

/** PKIStatus rejection (RFC 3161 §2.4.2). */
const STATUS_REJECTION = 2;

/** A TimeStampResp with status rejection, `failInfo` and `text` as its statusString. */
export function rejectionResponse(rejection: Rejection): Uint8Array {
  const utf8 = new TextEncoder().encode(rejection.text);
  return seq(seq(integer(STATUS_REJECTION), seq(tlv(0x0c, utf8)), namedBit(FAIL_INFO[rejection.failInfo])));
}

/** Digest of `data` with an imprint algorithm (for tests and tools). */
export function imprintDigest(algorithm: ImprintAlgorithm, data: Uint8Array): Uint8Array {
  return { sha256, sha384, sha512 }[algorithm](data);
}
