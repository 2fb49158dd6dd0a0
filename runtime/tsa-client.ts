// The check of an RFC 3161 answer from an outside time-stamp authority before it is published (docs/FORMAT.md
// §3a): status granted, a token whose TSTInfo holds exactly this imprint and this nonce, a CMS signature that
// verifies, a signer certificate with the critical time-stamping extended key usage, and a time within that
// certificate's validity. The ASN.1 and CMS work is pkijs (PeculiarVentures), a well-kept implementation, then
// core/rfc3161.ts reads every element again, strictly. The same check without the nonce verifies a published
// token (`timeseal verify`, the server's day pages). Here in runtime/ because pkijs is not one of core/'s
// packages; the request is core/tsa-client.ts's.
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { equalBytes, toHex } from '../core/encoding.ts';
import { checkToken } from '../core/rfc3161.ts';

const SHA256_OID = '2.16.840.1.101.3.4.2.1';
const EKU_OID = '2.5.29.37';
const TIME_STAMPING_OID = '1.3.6.1.5.5.7.3.8';
const TST_INFO_OID = '1.2.840.113549.1.9.16.1.4';

/** An answer that must not be published, with the reason in words. */
export class TsaAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TsaAnswerError';
  }
}

/** Web Crypto for pkijs, passed to each check that needs it (pkijs's own global engine is not changed). */
let webCrypto: pkijs.CryptoEngine | undefined;
const engine = (): pkijs.CryptoEngine =>
  (webCrypto ??= new pkijs.CryptoEngine({ name: 'webcrypto', crypto: globalThis.crypto }));

/** A fresh ArrayBuffer holding exactly `bytes` (a Buffer's .buffer may be a larger shared pool). */
function buffer(bytes: Uint8Array): ArrayBuffer {
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return copy.buffer;
}

export interface TokenFacts {
  /** The time the TSA states (TSTInfo genTime). */
  genTime: Date;
  /** The TSA's name: the signer certificate's subject (and TSTInfo's tsa field when present). */
  tsaName: string;
  serialNumber: string;
  /** DER of the signer certificate, for showing and for chain checks. */
  signerCertificate: Uint8Array;
}

export interface CheckOptions {
  /** The nonce sent; when given, the token must hold exactly it (checking an answer to our request). */
  nonce?: Uint8Array;
  /** DER certificates trusted as roots: when given, the signer's chain must lead to one of them. */
  trusted?: Uint8Array[];
}

/**
 * Checks a DER TimeStampResp (an answer) or a bare token (ContentInfo, as inside one) for `digest`. Resolves to
 * what it says, or rejects with a TsaAnswerError naming the first thing wrong.
 */
export async function checkTimeStamp(
  der: Uint8Array,
  digest: Uint8Array,
  options: CheckOptions = {},
): Promise<TokenFacts> {
  try {
    return await checkTimeStampOrThrow(der, digest, options);
  } catch (err) {
    // Whatever a malformed answer makes the ASN.1 layer throw is an answer not to publish, with its reason.
    if (err instanceof TsaAnswerError) throw err;
    throw new TsaAnswerError(`a malformed token: ${(err as Error).message}`);
  }
}

async function checkTimeStampOrThrow(der: Uint8Array, digest: Uint8Array, options: CheckOptions): Promise<TokenFacts> {
  let resp: pkijs.TimeStampResp;
  try {
    resp = pkijs.TimeStampResp.fromBER(buffer(der));
  } catch {
    throw new TsaAnswerError('not a DER TimeStampResp (RFC 3161 §2.4.2)');
  }
  const status = resp.status.status;
  if (status !== 0) {
    const text = resp.status.statusStrings?.map((s) => s.valueBlock.value).join('; ');
    throw new TsaAnswerError(`the TSA refused: status ${status}${text ? ` (${text})` : ''}`);
  }
  if (!resp.timeStampToken) throw new TsaAnswerError('status granted but no time-stamp token');
  // Strict DER: the bytes are exactly the encoding of what they parse to (no lenient lengths or tags).
  const reencoded = new Uint8Array(resp.toSchema().toBER(false));
  if (!equalBytes(reencoded, der)) throw new TsaAnswerError('not in DER form (a length or tag was changed)');
  const token = resp.timeStampToken;
  if (token.contentType !== pkijs.id_ContentType_SignedData)
    throw new TsaAnswerError('the token is not CMS SignedData');
  const signed = new pkijs.SignedData({ schema: token.content });
  if (signed.encapContentInfo.eContentType !== TST_INFO_OID)
    throw new TsaAnswerError('the token does not hold a TSTInfo');
  const eContent = signed.encapContentInfo.eContent;
  if (!eContent) throw new TsaAnswerError('the token holds no TSTInfo');
  let info: pkijs.TSTInfo;
  try {
    info = pkijs.TSTInfo.fromBER(eContent.getValue());
  } catch {
    throw new TsaAnswerError('the TSTInfo is malformed');
  }
  if (info.messageImprint.hashAlgorithm.algorithmId !== SHA256_OID)
    throw new TsaAnswerError(`the imprint is not SHA-256 (${info.messageImprint.hashAlgorithm.algorithmId})`);
  const imprint = new Uint8Array(info.messageImprint.hashedMessage.valueBlock.valueHexView);
  if (!equalBytes(imprint, digest))
    throw new TsaAnswerError(`the token is for another digest (${toHex(imprint)}, not the ledger's ${toHex(digest)})`);
  if (options.nonce !== undefined) {
    if (!info.nonce) throw new TsaAnswerError('the token has no nonce (the request sent one)');
    if (!equalBytes(strip(new Uint8Array(info.nonce.valueBlock.valueHexView)), strip(options.nonce)))
      throw new TsaAnswerError('the token holds another nonce than the request');
  }
  // The signed attributes must say the content is a TSTInfo; then the CMS signature is checked over them with
  // their message digest of the TSTInfo. (pkijs's own TSTInfo path wants the stamped data itself to re-hash; the
  // imprint was compared above, so the signature is checked as for plain data, on a copy of the structure.)
  const contentType = signed.signerInfos[0]?.signedAttrs?.attributes.find((a) => a.type === '1.2.840.113549.1.9.3');
  if ((contentType?.values[0] as asn1js.ObjectIdentifier | undefined)?.valueBlock.toString() !== TST_INFO_OID)
    throw new TsaAnswerError('the signed attributes do not name a TSTInfo');
  // What the signature does not cover must be exactly what it describes: versions, the one digest algorithm.
  const signerInfo = signed.signerInfos[0]!;
  if (signed.version !== 3 || signerInfo.version !== 1 || signed.signerInfos.length !== 1)
    throw new TsaAnswerError('unexpected SignedData or SignerInfo version');
  // Compared as DER, parameters included: an algorithm identifier the signature does not cover may differ in no byte.
  const algDer = (a: pkijs.AlgorithmIdentifier) => new Uint8Array(a.toSchema().toBER(false));
  if (
    signed.digestAlgorithms.length !== 1 ||
    !equalBytes(algDer(signed.digestAlgorithms[0]!), algDer(signerInfo.digestAlgorithm))
  )
    throw new TsaAnswerError("the token's digest algorithms are not its signer's");
  if (signerInfo.unsignedAttrs !== undefined) throw new TsaAnswerError('the token has unsigned attributes');
  const plain = new pkijs.SignedData({ schema: token.content });
  plain.encapContentInfo.eContentType = '1.2.840.113549.1.7.1';
  let verified: Awaited<ReturnType<pkijs.SignedData['verify']>>;
  try {
    const trusted = (options.trusted ?? []).map((c) => pkijs.Certificate.fromBER(buffer(c)));
    verified = await plain.verify(
      { signer: 0, checkChain: trusted.length > 0, trustedCerts: trusted, extendedMode: true, checkDate: info.genTime },
      engine(),
    );
  } catch (err) {
    const e = err as { message?: string; code?: number };
    throw new TsaAnswerError(`the token's signature does not verify${e.message ? `: ${e.message}` : ''}`);
  }
  if (!verified.signatureVerified) throw new TsaAnswerError("the token's signature does not verify");
  const cert = verified.signerCertificate;
  if (!cert) throw new TsaAnswerError("the token does not include the TSA's certificate");
  // Every certificate the token carries must be signed by its issuer when the token carries that too (a changed
  // byte in a chain certificate is a broken token, not noise).
  const carried = (signed.certificates ?? []).filter((c): c is pkijs.Certificate => c instanceof pkijs.Certificate);
  for (const c of carried) {
    const issuer = c.subject.isEqual(c.issuer) ? c : carried.find((i) => i.subject.isEqual(c.issuer));
    if (issuer && !(await c.verify(issuer, engine()).catch(() => false)))
      throw new TsaAnswerError(
        `the certificate of ${nameOf(c.subject)} in the token is not signed by ${nameOf(issuer.subject)}`,
      );
  }
  const eku = cert.extensions?.find((e) => e.extnID === EKU_OID);
  const purposes = (eku?.parsedValue as { keyPurposes?: string[] } | undefined)?.keyPurposes ?? [];
  if (!eku || !purposes.includes(TIME_STAMPING_OID))
    throw new TsaAnswerError("the TSA's certificate lacks the time-stamping extended key usage");
  if (!eku.critical)
    throw new TsaAnswerError("the TSA's certificate's extended key usage is not critical (RFC 3161 §2.3)");
  const genTime = info.genTime;
  if (genTime < cert.notBefore.value || genTime > cert.notAfter.value) {
    throw new TsaAnswerError(
      `the TSA's certificate was not valid at the stated time ${genTime.toISOString()} (valid ${cert.notBefore.value.toISOString()} to ${cert.notAfter.value.toISOString()})`,
    );
  }
  // A second, strict reading of every element, including the DER inside signature values, which pkijs reads
  // leniently (core/rfc3161.ts, the offline verifier's check).
  try {
    await checkToken(der, digest, options.trusted ?? []);
  } catch (err) {
    throw new TsaAnswerError((err as Error).message);
  }
  return {
    genTime,
    tsaName: nameOf(cert.subject),
    serialNumber: toHex(new Uint8Array(info.serialNumber.valueBlock.valueHexView)),
    signerCertificate: new Uint8Array(cert.toSchema().toBER(false)),
  };
}

const NAMES: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
};

function nameOf(name: pkijs.RelativeDistinguishedNames): string {
  return name.typesAndValues
    .map((t) => `${NAMES[t.type] ?? t.type}=${(t.value.valueBlock as { value?: unknown }).value ?? ''}`)
    .join(', ');
}

function strip(bytes: Uint8Array): Uint8Array {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  return bytes.subarray(i);
}
