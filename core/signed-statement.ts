// SCITT Signed Statements (RFC 9943 §6: a COSE_Sign1, RFC 9052 §4.2) as Timeseal registers them (POST /entries,
// draft-ietf-scitt-scrapi-11 §2.3; docs/FORMAT.md §12): the structural part of the registration policy, the
// statement as the log holds it, its 32-byte log entry, and the Transparent Statement (a receipt in the
// unprotected header, label 394). Whether the signature verifies is the caller's step (runtime/statement-policy.ts,
// with node:crypto and the issuer's key); this module gives it the Sig_structure and the facts it needs.
//
// The statement on the log: RFC 9943 §6.3 sets the unprotected header to an empty map before a statement is
// included. Timeseal keeps the protected header, payload and signature byte for byte and writes the tagged
// COSE_Sign1 `18([protected, {}, payload, signature])` in the deterministic encoding (core/cbor.ts), so every
// statement has one form on the log whatever encoder made it; the signature covers only the protected header
// and the payload, so it still verifies. The log's entry for the statement (docs/FORMAT.md §1: entries are
// 32 bytes) is SHA-256 of those bytes; its leaf hash is SHA-256(0x00 || entry), as for every entry.
import { CborTag, decodeCbor, encodeCbor, type CborMap, type CborValue } from './cbor.ts';
import {
  COSE_SIGN1_TAG,
  CWT_ISS,
  CWT_SUB,
  HEADER_ALG,
  HEADER_CONTENT_TYPE,
  HEADER_CWT_CLAIMS,
  HEADER_RECEIPTS,
  HEADER_KID,
  HEADER_X5CHAIN,
  receiptKid,
  sigStructure,
  signSigStructure,
  type ReceiptSigningKey,
} from './cose-receipt.ts';
import { compareBytes, equalBytes, toHex } from './encoding.ts';
import { FormatError } from './errors.ts';
import { sha256, type Hasher } from './hash.ts';

/** The largest Signed Statement registered, in bytes (the registration policy, docs/API.md). */
export const STATEMENT_MAX_BYTES = 64 * 1024;

/** RFC 8392 §3.1.1: the length an `iss` may have (RFC 9943 §6.1: 1 to 8192 characters). */
const ISS_MAX_LENGTH = 8192;

/**
 * The signature algorithms a Signed Statement may use (IANA "COSE Algorithms"): the name, the digest, and the
 * key it needs. ESP256/ESP384 (RFC 9864) are ES256/ES384 under their fully specified names; Ed25519 (−19) is
 * EdDSA with that curve.
 */
export const STATEMENT_ALGORITHMS: ReadonlyMap<number, { name: string; hash: string | null; key: string }> = new Map([
  [-7, { name: 'ES256', hash: 'sha256', key: 'P-256' }],
  [-9, { name: 'ESP256', hash: 'sha256', key: 'P-256' }],
  [-35, { name: 'ES384', hash: 'sha384', key: 'P-384' }],
  [-51, { name: 'ESP384', hash: 'sha384', key: 'P-384' }],
  [-36, { name: 'ES512', hash: 'sha512', key: 'P-521' }],
  [-8, { name: 'EdDSA', hash: null, key: 'Ed25519' }],
  [-19, { name: 'Ed25519', hash: null, key: 'Ed25519' }],
  [-37, { name: 'PS256', hash: 'sha256', key: 'RSA' }],
  [-38, { name: 'PS384', hash: 'sha384', key: 'RSA' }],
  [-39, { name: 'PS512', hash: 'sha512', key: 'RSA' }],
]);

/**
 * Why a statement is refused: `title` one of SCRAPI's (draft-ietf-scitt-scrapi-11 §2 and §2.3: "Malformed
 * request", "Bad Signature Algorithm", "Payload Missing", "Rejected"), `detail` a sentence that says what to change.
 */
export class StatementRefusal extends Error {
  override readonly name = 'StatementRefusal';
  readonly title: string;
  readonly detail: string;
  constructor(title: string, detail: string) {
    super(`${title}: ${detail}`);
    this.title = title;
    this.detail = detail;
  }
}

const malformed = (detail: string) => new StatementRefusal('Malformed request', detail);
const rejected = (detail: string) => new StatementRefusal('Rejected', detail);

export interface SignedStatement {
  /** The protected header as sent (the bytes the signature covers). */
  protectedBytes: Uint8Array;
  protectedHeader: CborMap;
  alg: number;
  algName: string;
  /** The content type (label 3): a media type, or a CoAP Content-Format number. */
  contentType: string | number;
  iss: string;
  sub: string;
  /** The x5chain (label 33) of the protected header, the signer's certificate first (DER); [] without one. */
  x5chain: Uint8Array[];
  payload: Uint8Array;
  signature: Uint8Array;
  /** RFC 9052 §4.4: what the issuer signed. */
  toBeSigned: Uint8Array;
  /** The statement as the log holds it: `18([protected, {}, payload, signature])`, deterministically encoded. */
  ledgerBytes: Uint8Array;
  /** SHA-256(ledgerBytes): the statement's 32-byte log entry. */
  entry: Uint8Array;
}

const describe = (v: CborValue | undefined): string =>
  v === undefined
    ? 'absent'
    : v instanceof Uint8Array
      ? 'a byte string'
      : Array.isArray(v)
        ? 'an array'
        : v instanceof Map
          ? 'a map'
          : v instanceof CborTag
            ? `tag ${v.tag}`
            : typeof v === 'string'
              ? 'a text string'
              : typeof v;

/**
 * Reads a Signed Statement as the registration policy's structural checks say (docs/API.md): at most
 * STATEMENT_MAX_BYTES of well-formed CBOR (any encoder's: core/cbor.ts `deterministic: false`), a COSE_Sign1
 * (tag 18, or untagged), a protected header with `alg` among STATEMENT_ALGORITHMS, a content type and CWT
 * claims (15) with text `iss` and `sub`, an attached payload. Throws StatementRefusal naming the first thing
 * that is wrong. Does not check the signature.
 */
export function readSignedStatement(bytes: Uint8Array, hasher: Hasher = sha256): SignedStatement {
  if (bytes.length === 0)
    throw malformed('the body is empty: send the Signed Statement, a COSE_Sign1 (application/cose)');
  if (bytes.length > STATEMENT_MAX_BYTES)
    throw rejected(
      `the Signed Statement is ${bytes.length} bytes; this Transparency Service registers at most ${STATEMENT_MAX_BYTES} bytes`,
    );
  let item: CborValue;
  try {
    item = decodeCbor(bytes, 'Signed Statement', { deterministic: false });
  } catch (err) {
    throw malformed(`the body is not well-formed CBOR: ${(err as Error).message}`);
  }
  if (item instanceof CborTag) {
    if (item.tag !== COSE_SIGN1_TAG) throw malformed(`the body is CBOR tag ${item.tag}, not a COSE_Sign1 (tag 18)`);
    item = item.value;
  }
  if (!Array.isArray(item) || item.length !== 4)
    throw malformed(
      `the body is ${Array.isArray(item) ? `an array of ${item.length}` : describe(item)}, not a COSE_Sign1 (an array of 4: protected, unprotected, payload, signature)`,
    );
  const [protectedItem, unprotectedItem, payloadItem, signatureItem] = item as [
    CborValue,
    CborValue,
    CborValue,
    CborValue,
  ];
  if (!(protectedItem instanceof Uint8Array))
    throw malformed(`the protected header is ${describe(protectedItem)}, not a byte string`);
  if (!(unprotectedItem instanceof Map))
    throw malformed(`the unprotected header is ${describe(unprotectedItem)}, not a map`);
  if (!(signatureItem instanceof Uint8Array))
    throw malformed(`the signature is ${describe(signatureItem)}, not a byte string`);
  let protectedHeader: CborMap;
  try {
    const decoded =
      protectedItem.length === 0 ? new Map() : decodeCbor(protectedItem, 'protected header', { deterministic: false });
    if (!(decoded instanceof Map)) throw new Error(`it is ${describe(decoded)}, not a map`);
    protectedHeader = decoded;
  } catch (err) {
    throw malformed(`the protected header is not a CBOR map: ${(err as Error).message}`);
  }
  for (const label of protectedHeader.keys()) {
    if (unprotectedItem.has(label))
      throw malformed(`header parameter ${label} is in both the protected and the unprotected header (RFC 9052 §3)`);
  }

  const algValue = protectedHeader.get(HEADER_ALG);
  if (algValue === undefined)
    throw new StatementRefusal('Bad Signature Algorithm', 'the protected header has no alg (label 1)');
  const algorithm = typeof algValue === 'number' ? STATEMENT_ALGORITHMS.get(algValue) : undefined;
  if (typeof algValue !== 'number' || algorithm === undefined) {
    const names = [...STATEMENT_ALGORITHMS].map(([n, a]) => `${a.name} (${n})`).join(', ');
    throw new StatementRefusal(
      'Bad Signature Algorithm',
      `alg ${JSON.stringify(algValue instanceof Uint8Array ? 'bytes' : algValue)} is not supported; supported: ${names}`,
    );
  }
  const contentType = protectedHeader.get(HEADER_CONTENT_TYPE);
  if (typeof contentType !== 'string' && (typeof contentType !== 'number' || contentType < 0))
    throw rejected(
      `the protected header has no content type (label 3: a media type or a Content-Format number); it is ${describe(contentType)}`,
    );
  const claims = protectedHeader.get(HEADER_CWT_CLAIMS);
  if (!(claims instanceof Map))
    throw rejected(
      `the protected header has no CWT claims (label 15, a map with iss (1) and sub (2), RFC 9597); it is ${describe(claims)}`,
    );
  const iss = claims.get(CWT_ISS);
  const sub = claims.get(CWT_SUB);
  if (typeof iss !== 'string' || iss.length === 0 || iss.length > ISS_MAX_LENGTH)
    throw rejected(
      `the CWT claims have no iss (1): a text string of 1 to ${ISS_MAX_LENGTH} characters is needed; it is ${describe(iss)}`,
    );
  if (typeof sub !== 'string' || sub.length === 0)
    throw rejected(`the CWT claims have no sub (2): a non-empty text string is needed; it is ${describe(sub)}`);
  const x5chain = readX5chain(protectedHeader.get(HEADER_X5CHAIN));
  if (unprotectedItem.has(HEADER_X5CHAIN) && x5chain.length === 0)
    throw rejected(
      'the x5chain (33) is in the unprotected header, which the log does not keep: put it in the protected header',
    );
  if (payloadItem === null)
    throw new StatementRefusal(
      'Payload Missing',
      'the payload is detached (nil): send the Signed Statement with its payload attached, so that its signature can be checked',
    );
  if (!(payloadItem instanceof Uint8Array))
    throw malformed(`the payload is ${describe(payloadItem)}, not a byte string or nil`);

  const ledgerBytes = encodeCbor(new CborTag(COSE_SIGN1_TAG, [protectedItem, new Map(), payloadItem, signatureItem]));
  return {
    protectedBytes: protectedItem,
    protectedHeader,
    alg: algValue,
    algName: algorithm.name,
    contentType,
    iss,
    sub,
    x5chain,
    payload: payloadItem,
    signature: signatureItem,
    toBeSigned: sigStructure(protectedItem, payloadItem),
    ledgerBytes,
    entry: hasher(ledgerBytes),
  };
}

/** RFC 9360 §2: x5chain is one certificate (a bstr) or an array of two or more, the signer's first. */
function readX5chain(value: CborValue | undefined): Uint8Array[] {
  if (value === undefined) return [];
  if (value instanceof Uint8Array) return [value];
  if (Array.isArray(value) && value.length > 0 && value.every((c) => c instanceof Uint8Array))
    return value as Uint8Array[];
  throw rejected(
    `the x5chain (33) is ${describe(value)}: a DER certificate (byte string) or an array of them is needed`,
  );
}

/**
 * The Transparent Statement (RFC 9943 §7): the statement as the log holds it (`ledgerBytes`) with `receipts` in
 * its unprotected header (label 394, an array of COSE receipts, each a byte string of a tagged COSE_Sign1).
 */
export function transparentStatement(ledgerBytes: Uint8Array, receipts: readonly Uint8Array[]): Uint8Array {
  const item = decodeCbor(ledgerBytes, 'registered statement');
  if (!(item instanceof CborTag) || !Array.isArray(item.value) || item.value.length !== 4)
    throw new StatementRefusal('Malformed request', 'the registered statement is not a COSE_Sign1');
  const [protectedBytes, , payload, signature] = item.value as [CborValue, CborValue, CborValue, CborValue];
  const unprotected = new Map<number, CborValue>([[HEADER_RECEIPTS, [...receipts]]]);
  return encodeCbor(new CborTag(COSE_SIGN1_TAG, [protectedBytes, unprotected, payload, signature]));
}

/**
 * A Signed Statement of the Transparency Service itself (its registration policy, RFC 9943 §5.1.1), signed
 * with one of its ES256 receipt keys: protected `{1: alg, 3: contentType, 4: kid, 15: {1: iss, 2: sub}}`, an
 * empty unprotected header, the payload attached. Deterministic (RFC 6979), so the same inputs give the same
 * bytes and the same entry.
 */
export function signServiceStatement(
  key: ReceiptSigningKey,
  claims: { iss: string; sub: string },
  contentType: string,
  payload: Uint8Array,
): Uint8Array {
  const protectedBytes = encodeCbor(
    new Map<number, CborValue>([
      [HEADER_ALG, key.alg],
      [HEADER_CONTENT_TYPE, contentType],
      [HEADER_KID, receiptKid(key)],
      [
        HEADER_CWT_CLAIMS,
        new Map<number, CborValue>([
          [CWT_ISS, claims.iss],
          [CWT_SUB, claims.sub],
        ]),
      ],
    ]),
  );
  const signature = signSigStructure(sigStructure(protectedBytes, payload), key);
  return encodeCbor(new CborTag(COSE_SIGN1_TAG, [protectedBytes, new Map(), payload, signature]));
}

/** A statement of a day's statements file: its entry (SHA-256 of `bytes`) and its bytes as the log holds them. */
export interface DayStatement {
  entry: Uint8Array;
  bytes: Uint8Array;
}

/**
 * A day's statements file `YYYY-MM-DD.statements.cbor` (docs/FORMAT.md §12): a CBOR array of byte strings, each
 * a statement as the log holds it, in the byte order of their entries, each entry once.
 */
export function encodeDayStatements(statements: readonly Uint8Array[], hasher: Hasher = sha256): Uint8Array {
  const sorted = statements
    .map((bytes) => ({ entry: hasher(bytes), bytes }))
    .sort((a, b) => compareBytes(a.entry, b.entry));
  for (let i = 1; i < sorted.length; i++) {
    if (equalBytes(sorted[i - 1]!.entry, sorted[i]!.entry))
      throw new FormatError('statements', `entry ${toHex(sorted[i]!.entry)} is there twice`);
  }
  return encodeCbor(sorted.map((s) => s.bytes));
}

/**
 * Strict reader of a day's statements file: deterministic CBOR, an array of byte strings, each a Signed Statement
 * in its form on the log (reading it and writing it again gives its bytes), entries strictly ascending.
 */
export function parseDayStatements(bytes: Uint8Array, hasher: Hasher = sha256): DayStatement[] {
  const what = 'statements file';
  const item = decodeCbor(bytes, what);
  if (!Array.isArray(item)) throw new FormatError(what, 'expected a CBOR array of statements');
  const out: DayStatement[] = [];
  item.forEach((value, i) => {
    if (!(value instanceof Uint8Array)) throw new FormatError(`${what}[${i}]`, 'expected a byte string');
    let read: SignedStatement;
    try {
      read = readSignedStatement(value, hasher);
    } catch (err) {
      throw new FormatError(`${what}[${i}]`, (err as Error).message);
    }
    if (!equalBytes(read.ledgerBytes, value))
      throw new FormatError(
        `${what}[${i}]`,
        'not in its form on the log (an empty unprotected header, deterministic CBOR)',
      );
    const previous = out.at(-1);
    if (previous !== undefined && compareBytes(previous.entry, read.entry) >= 0)
      throw new FormatError(`${what}[${i}]`, `entry ${toHex(read.entry)} is not after ${toHex(previous.entry)}`);
    out.push({ entry: read.entry, bytes: value });
  });
  return out;
}

/** A Transparent Statement as a reader checks it: the entry of its statement on the log, and its receipts. */
export interface TransparentStatementParts {
  /** SHA-256 of the statement with an empty unprotected header (its form on the log): what the receipts are for. */
  entry: Uint8Array;
  /** The COSE receipts of its unprotected header (394), each a tagged COSE_Sign1. */
  receipts: Uint8Array[];
}

/**
 * Reads a Transparent Statement (RFC 9943 §7): a COSE_Sign1 whose unprotected header holds receipts (394, an
 * array of byte strings). Its entry is computed as the log's (the statement with `{}` as its unprotected header,
 * deterministic CBOR, hashed); each receipt is to be checked for that entry (core/cose-receipt.ts verifyReceipt).
 * Throws FormatError naming what is missing. The issuer's signature is not checked here.
 */
export function readTransparentStatement(bytes: Uint8Array, hasher: Hasher = sha256): TransparentStatementParts {
  const what = 'Transparent Statement';
  let item = decodeCbor(bytes, what, { deterministic: false });
  if (item instanceof CborTag && item.tag === COSE_SIGN1_TAG) item = item.value;
  if (!Array.isArray(item) || item.length !== 4)
    throw new FormatError(what, 'not a COSE_Sign1 (an array of 4: protected, unprotected, payload, signature)');
  const [protectedItem, unprotected, payload, signature] = item as [CborValue, CborValue, CborValue, CborValue];
  if (!(protectedItem instanceof Uint8Array) || !(payload instanceof Uint8Array) || !(signature instanceof Uint8Array))
    throw new FormatError(what, 'its protected header, attached payload and signature must be byte strings');
  const receipts = unprotected instanceof Map ? unprotected.get(HEADER_RECEIPTS) : undefined;
  if (!Array.isArray(receipts) || receipts.length === 0 || !receipts.every((r) => r instanceof Uint8Array))
    throw new FormatError(what, 'its unprotected header has no receipts (394: an array of COSE receipts)');
  const onTheLog = encodeCbor(new CborTag(COSE_SIGN1_TAG, [protectedItem, new Map(), payload, signature]));
  return { entry: hasher(onTheLog), receipts: receipts as Uint8Array[] };
}
