// What each dropped file or pasted text is. The verifier takes any mix of files at once, so every input is
// classified here: first by the archive's own file names (docs/FORMAT.md §3–§4, §9), which are unambiguous,
// then by content. A damaged file must still be recognised as what it claims to be (so that it fails its check
// instead of being mistaken for the person's document), which is why content rules look for several markers.
import { dateOfDayFile } from '../../../core/archive.ts';
import { equalBytes, fromBase64, fromHex, fromUtf8, utf8 } from '../../../core/encoding.ts';
import { HEADER_MAGIC } from '../../../core/ots.ts';
import {
  ecdsaPublicKeyFromPem,
  mldsaPublicKeyFromPem,
  MLDSA_PUBLIC_KEY_SIZE,
  MLDSA_SIGNATURE_SIZE,
} from '../../../core/sig.ts';
import { BLOCK_HEADER_SIZE } from '../../../core/bitcoin.ts';
import { parseVkey } from '../../../core/cosignature.ts';
import { readWitnessPolicy } from '../../../core/witness-policy.ts';
import { sniffEvidence } from '../../../core/evidence.ts';
import {
  ALG_ES256,
  ALG_ML_DSA_65,
  parseRetiredReceiptKeys,
  RETIRED_RECEIPT_KEYS,
  type ReceiptKeyEntry,
} from '../../../core/cose-receipt.ts';
import { pemCertificates } from '../../../core/rfc3161.ts';

/** DER of the id-ct-TSTInfo OID (1.2.840.113549.1.9.16.1.4), which every RFC 3161 token holds. */
const TST_INFO_OID = Uint8Array.of(0x06, 0x0b, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x10, 0x01, 0x04);

/** DER of Timeseal's TSA policy OID (2.25.98735976325990746299618456542211080382, docs/FORMAT.md §3b), which
 * every Timeseal receipt names; and the start of its TSA certificates' names, a second marker. */
const RECEIPT_MARKERS = [fromHex('0614698194c7edded393928ee59d88a692b38cb8813e'), utf8('Timeseal TSA')];

/** An RFC 3161 answer: a Timeseal receipt (its policy, or its certificates, are Timeseal's), else a TSA's token. */
const token = (name: string, bytes: Uint8Array): ClassifiedInput => ({
  kind: RECEIPT_MARKERS.some((m) => includes(bytes, m)) ? 'receipt' : 'tsr',
  name,
  bytes,
});

function includes(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length && i < 4096; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

export type InputKind =
  | 'client-proof'
  | 'bundle'
  | 'timestamped-pdf'
  | 'cose-receipt'
  | 'transparent-statement'
  | 'day-receipt-signature'
  | 'receipt-key'
  | 'retired-receipt-keys'
  | 'tlog-proof'
  | 'ledger'
  | 'signatures-meta'
  | 'ecdsa-signature'
  | 'mldsa-signature'
  | 'checkpoint'
  | 'ots'
  | 'header'
  | 'ecdsa-key'
  | 'mldsa-key'
  | 'vkey'
  | 'tsr'
  | 'receipt'
  | 'days'
  | 'tsa-ca'
  | 'witness-policy'
  | 'cosignatures'
  | 'hash'
  | 'document';

export interface ClassifiedInput {
  kind: InputKind;
  name: string;
  bytes: Uint8Array;
  /** The date named by an archive file name (2025-11-02.json.sig → 2025-11-02). */
  date?: string;
  /** Decoded value for keys (raw public key), headers (80 bytes), hashes (lower-case hex), certificate
   * authorities (DER certificates), receipt keys (their COSE algorithm and raw public key) and retired receipt
   * keys (each with the days it signed). */
  value?: Uint8Array | string | Uint8Array[] | ReceiptKeyValue | ReceiptKeyEntry[];
  /** Why a file that looks like `kind` could not be decoded (a damaged key or header). */
  problem?: string;
}

/** A COSE receipt key (keys/receipt-es256.pem, keys/receipt-mldsa65.pem): ES256 (−7) or ML-DSA-65 (−49). */
export interface ReceiptKeyValue {
  alg: typeof ALG_ES256 | typeof ALG_ML_DSA_65;
  publicKey: Uint8Array;
}

/** keys/receipt-es256.pem or keys/receipt-mldsa65.pem (by name: the PEM alone looks like the log's keys). */
function receiptKey(name: string, bytes: Uint8Array, t: string | undefined): ClassifiedInput {
  const mldsa = /mldsa|ml-dsa/i.test(name);
  try {
    const pem = (t ?? '').replace(/\r\n/g, '\n').trim() + '\n';
    const value: ReceiptKeyValue = mldsa
      ? { alg: ALG_ML_DSA_65, publicKey: mldsaPublicKeyFromPem(pem) }
      : { alg: ALG_ES256, publicKey: ecdsaPublicKeyFromPem(pem) };
    return { kind: 'receipt-key', name, bytes, value };
  } catch (err) {
    return { kind: 'receipt-key', name, bytes, problem: (err as Error).message };
  }
}

/** keys/receipt-keys.retired: the receipt keys a rotation retired, with the days they signed (docs/FORMAT.md §11). */
function retiredReceiptKeys(name: string, bytes: Uint8Array, t: string | undefined): ClassifiedInput {
  try {
    return { kind: 'retired-receipt-keys', name, bytes, value: parseRetiredReceiptKeys(t ?? '') };
  } catch (err) {
    return { kind: 'retired-receipt-keys', name, bytes, problem: (err as Error).message };
  }
}

export const KIND_LABEL: Record<InputKind, string> = {
  'client-proof': 'timeseal-client proof file',
  bundle: 'proof bundle',
  'timestamped-pdf': 'timestamped PDF',
  'cose-receipt': 'COSE receipt (RFC 9942)',
  'transparent-statement': 'SCITT Transparent Statement (RFC 9943)',
  'day-receipt-signature': "day's COSE receipt signature",
  'receipt-key': 'COSE receipt key',
  'retired-receipt-keys': 'retired COSE receipt keys',
  'tlog-proof': 'tlog-proof (C2SP)',
  ledger: 'ledger file',
  'signatures-meta': 'signature metadata',
  'ecdsa-signature': 'ECDSA P-256 signature',
  'mldsa-signature': 'ML-DSA-65 signature',
  checkpoint: 'checkpoint',
  ots: 'OpenTimestamps proof',
  header: 'Bitcoin block header',
  'ecdsa-key': 'ECDSA P-256 public key',
  'mldsa-key': 'ML-DSA-65 public key',
  vkey: 'checkpoint key (C2SP vkey)',
  tsr: 'RFC 3161 time-stamp',
  receipt: 'Timeseal receipt (RFC 3161)',
  days: 'published days (days.json)',
  'tsa-ca': 'TSA certificate authority',
  'witness-policy': 'witness policy',
  cosignatures: "witnesses' cosignatures",
  hash: 'SHA-256 hash',
  document: 'document to hash',
};

function text(bytes: Uint8Array): string | undefined {
  try {
    return fromUtf8(bytes);
  } catch {
    return undefined;
  }
}

const HEX = /^[0-9a-fA-F]*$/;

function headerFromText(t: string): Pick<ClassifiedInput, 'value' | 'problem'> {
  const hex = t.trim();
  if (hex.length !== 2 * BLOCK_HEADER_SIZE)
    return { problem: `a block header is ${2 * BLOCK_HEADER_SIZE} hex digits, this is ${hex.length}` };
  try {
    return { value: fromHex(hex, 'block header') };
  } catch (err) {
    return { problem: (err as Error).message };
  }
}

function keyFromPem(pem: string, name: string): ClassifiedInput {
  const bytes = new TextEncoder().encode(pem);
  const normalized = pem.replace(/\r\n/g, '\n').trim() + '\n';
  try {
    return { kind: 'ecdsa-key', name, bytes, value: ecdsaPublicKeyFromPem(normalized) };
  } catch (ecdsaError) {
    try {
      return { kind: 'mldsa-key', name, bytes, value: mldsaPublicKeyFromPem(normalized) };
    } catch {
      const kind = /dilithium|ml-?dsa/i.test(name) ? 'mldsa-key' : 'ecdsa-key';
      return { kind, name, bytes, problem: (ecdsaError as Error).message };
    }
  }
}

/** Classifies a file by its name and bytes. Anything not recognised is a document to hash. */
export function classifyFile(name: string, bytes: Uint8Array): ClassifiedInput {
  const base = name.split(/[\\/]/).pop() ?? name;
  const date = dateOfDayFile(base) ?? undefined;
  const t = text(bytes);
  const withDate = (kind: InputKind): ClassifiedInput => ({ kind, name: base, bytes, ...(date ? { date } : {}) });

  if (date) {
    if (base.endsWith('.json.signatures.json')) return withDate('signatures-meta');
    if (base.endsWith('.json.dilithium.sig')) return withDate('mldsa-signature');
    if (base.endsWith('.json.sig')) return withDate('ecdsa-signature');
    if (base.endsWith('.checkpoint')) return withDate('checkpoint');
    if (base.endsWith('.cosignatures')) return withDate('cosignatures');
    if (base.endsWith('.tsr')) return withDate('tsr');
    if (/\.receipt-(es256|mldsa65)\.cose$/.test(base)) return withDate('day-receipt-signature');
    if (base.endsWith('.json')) return withDate('ledger');
  }
  if (/^receipt-(es256|mldsa65)\.pem$/i.test(base)) return receiptKey(base, bytes, t);
  if (base === RETIRED_RECEIPT_KEYS) return retiredReceiptKeys(base, bytes, t);
  // The kinds core/evidence.ts tells for every reader: a PDF with document time-stamps, a COSE receipt, a
  // Transparent Statement.
  const evidence = sniffEvidence(bytes, base);
  if (evidence === 'timestamped-pdf' || evidence === 'cose-receipt' || evidence === 'transparent-statement')
    return { kind: evidence, name: base, bytes };
  if (bytes.length >= HEADER_MAGIC.length && equalBytes(bytes.subarray(0, HEADER_MAGIC.length), HEADER_MAGIC)) {
    return { kind: 'ots', name: base, bytes };
  }
  if (/\.ots$/i.test(base)) return { kind: 'ots', name: base, bytes };
  // An RFC 3161 answer under another name than the archive's (YYYY-MM-DD.json.tsr, above, a day's token): any .tsr,
  // or any DER that holds the TSTInfo content type; a Timeseal receipt by its markers.
  if (/\.tsr$/i.test(base) || (bytes[0] === 0x30 && includes(bytes, TST_INFO_OID))) return token(base, bytes);
  if (/\.tlog-proof$/i.test(base)) return { kind: 'tlog-proof', name: base, bytes };
  if (base === 'checkpoint') return { kind: 'checkpoint', name: base, bytes };
  if (/\.dilithium\.sig$/i.test(base)) return { kind: 'mldsa-signature', name: base, bytes };
  if (/\.sig$/i.test(base))
    return { kind: bytes.length === MLDSA_SIGNATURE_SIZE ? 'mldsa-signature' : 'ecdsa-signature', name: base, bytes };
  if (base === 'dilithium_public.key' || (bytes.length === MLDSA_PUBLIC_KEY_SIZE && /\.key$/i.test(base))) {
    return bytes.length === MLDSA_PUBLIC_KEY_SIZE
      ? { kind: 'mldsa-key', name: base, bytes, value: bytes }
      : {
          kind: 'mldsa-key',
          name: base,
          bytes,
          problem: `a raw ML-DSA-65 public key is ${MLDSA_PUBLIC_KEY_SIZE} bytes, this file is ${bytes.length}`,
        };
  }
  const headerName = /header|\.hex$/i.test(base);
  if (bytes.length === BLOCK_HEADER_SIZE && (headerName || /\.bin$/i.test(base))) {
    return { kind: 'header', name: base, bytes, value: bytes };
  }
  if (t !== undefined) {
    const fromText = classifyText(t, base);
    // A receipt saved as base64 text is its DER; anything else keeps the file's own bytes.
    if (fromText) return fromText.kind === 'receipt' || fromText.kind === 'tsr' ? fromText : { ...fromText, bytes };
    if (headerName && t.trim().length === 2 * BLOCK_HEADER_SIZE)
      return { kind: 'header', name: base, bytes, ...headerFromText(t) };
  }
  return { kind: 'document', name: base, bytes };
}

/**
 * Classifies pasted text, or the text of a file. Returns undefined for text that is none of the verifier's
 * inputs (for a file: then it is a document).
 */
export function classifyText(t: string, name = 'pasted text'): ClassifiedInput | undefined {
  const bytes = new TextEncoder().encode(t);
  const trimmed = t.trim();
  // SHA-256, SHA-384 or SHA-512 (a receipt's imprint may be either).
  if (/^([0-9a-fA-F]{32}){2,4}$/.test(trimmed)) return { kind: 'hash', name, bytes, value: trimmed.toLowerCase() };
  if (trimmed.length === 2 * BLOCK_HEADER_SIZE && HEX.test(trimmed))
    return { kind: 'header', name, bytes, ...headerFromText(trimmed) };
  if (trimmed.startsWith('-----BEGIN PUBLIC KEY-----')) return keyFromPem(t, name);
  // keys/witnesses: a c2sp.org/tlog-policy file (or the older `quorum N` form), checked here; the text is kept
  // for the report.
  if (/^\s*(#.*\n\s*)*(log|witness|group|quorum)[ \t]/.test(t)) {
    try {
      readWitnessPolicy(t);
      return { kind: 'witness-policy', name, bytes, value: t };
    } catch (err) {
      return { kind: 'witness-policy', name, bytes, problem: (err as Error).message };
    }
  }
  if (trimmed.includes('-----BEGIN CERTIFICATE-----')) {
    try {
      const certs = pemCertificates(t);
      if (certs.length > 0) return { kind: 'tsa-ca', name, bytes, value: certs };
    } catch {
      // A damaged PEM: reported below.
    }
    return { kind: 'tsa-ca', name, bytes, problem: 'no certificate could be read from it' };
  }
  // A C2SP verifier key (keys/ed25519.vkey, keys/mldsa44.vkey): <name>+<8 hex>+<base64>.
  if (/^[^\s+]+\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+$/.test(trimmed)) {
    try {
      const v = parseVkey(trimmed);
      if (v.type !== 0x01 && v.type !== 0x06)
        return { kind: 'vkey', name, bytes, problem: "not one of the log's checkpoint keys (type 0x01 or 0x06)" };
      return { kind: 'vkey', name, bytes, value: v.publicKey };
    } catch (err) {
      return { kind: 'vkey', name, bytes, problem: (err as Error).message };
    }
  }
  // JSON files: several markers each, so that one damaged byte (even the opening brace) cannot hide what
  // the file is. A timeseal-client proof file holds a bundle, so it is told apart first.
  if (/"format":\s*"timeseal-client-proof\//.test(t)) return { kind: 'client-proof', name, bytes };
  if (/timeseal-proof\/|"inclusion_path"|"leaf_index"|"submitted_at"/.test(t)) return { kind: 'bundle', name, bytes };
  // c2sp.org/tlog-proof@v1 (docs/FORMAT.md §8a): its header, or (header damaged) an index line and proof hashes.
  if (/^c2sp\.org\/tlog-proof@|\nindex \d+\n[A-Za-z0-9+/]{43}=\n/.test(t)) return { kind: 'tlog-proof', name, bytes };
  if (/timeseal-days\/|"entry_count": \d/.test(t) || name === 'days.json') return { kind: 'days', name, bytes };
  if (/timeseal-ledger\/|"first_index":\d+,"entry_count"|"entries":\[/.test(t)) return { kind: 'ledger', name, bytes };
  if (/timeseal-signatures\/|"key_fingerprint"|"signatures": \[/.test(t))
    return { kind: 'signatures-meta', name, bytes };
  if (/\n\n\u2014 /.test(t) && /^[^\n]+\n\d+\n[A-Za-z0-9+/=]+\n/.test(t)) return { kind: 'checkpoint', name, bytes };
  // A receipt as the JSON submissions answer it: base64 of the DER (line breaks allowed).
  const b64 = trimmed.replace(/\s+/g, '');
  if (/^[A-Za-z0-9+/]{200,}={0,2}$/.test(b64)) {
    try {
      const der = fromBase64(b64);
      if (includes(der, TST_INFO_OID)) return token(name, der);
    } catch {
      // Not base64 after all.
    }
  }
  return undefined;
}

/**
 * What a timeseal-client proof file (`<file>.timeseal.json`, `timeseal-client-proof/1` or `/2`: client/src/types.ts
 * ProofFile) holds, as the inputs this page checks: its proof bundle (once the day is published), its receipt
 * (when the bundle carries none) and the Bitcoin block headers it keeps. Anything else is the input itself
 * (a file that is not such JSON keeps its kind, and fails as a bundle would).
 */
export function clientProofParts(input: ClassifiedInput): ClassifiedInput[] {
  if (input.kind !== 'client-proof') return [input];
  let raw: { bundle?: unknown; receipt?: unknown; headers?: unknown };
  try {
    raw = JSON.parse(fromUtf8(input.bytes)) as typeof raw;
  } catch {
    return [{ ...input, kind: 'bundle' }];
  }
  const parts: ClassifiedInput[] = [];
  const bundle = raw.bundle && typeof raw.bundle === 'object' ? (raw.bundle as { receipts?: unknown }) : null;
  if (bundle) parts.push({ kind: 'bundle', name: `bundle in ${input.name}`, bytes: utf8(JSON.stringify(bundle)) });
  const bundleReceipts = Array.isArray(bundle?.receipts) && bundle.receipts.length > 0;
  if (typeof raw.receipt === 'string' && !bundleReceipts) {
    try {
      parts.push({ ...token(`receipt in ${input.name}`, fromBase64(raw.receipt)), kind: 'receipt' });
    } catch {
      parts.push({ kind: 'receipt', name: `receipt in ${input.name}`, bytes: new Uint8Array(0) });
    }
  }
  for (const h of Array.isArray(raw.headers) ? raw.headers : []) {
    const hex = typeof (h as { header?: unknown }).header === 'string' ? (h as { header: string }).header : '';
    const name = `block ${String((h as { height?: unknown }).height)} in ${input.name}`;
    parts.push({ kind: 'header', name, bytes: utf8(hex), ...headerFromText(hex) });
  }
  return parts;
}
