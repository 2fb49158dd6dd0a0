// The client's proof file (`<file>.timeseal.json`): JSON, two-space indented, keys in a fixed order. Parsing is
// strict (unknown or missing fields are errors, per version) so a damaged file is refused, not half-read. The
// bundle inside is kept as the server sent it and parsed by core/proof.ts when it is used. Version 2
// (`timeseal-client-proof/2`) is version 1 with one more field, `omittedFrom`: the day's signed ledger that does
// not hold the hash, kept beside the proof (a promise broken by omission); every other proof file is version 1.
import { fromBase64 } from '../../core/encoding.ts';
import { TimesealClientError } from './errors.ts';
import { bitcoinHeights, bundleOf } from './bundle.ts';
import {
  PROOF_FILE_FORMAT,
  PROOF_FILE_FORMAT_OMITTED,
  type HeaderRecord,
  type Omission,
  type ProofFile,
  type ProofStage,
} from './types.ts';

const FIELDS = [
  'format',
  'hash',
  'file',
  'server',
  'submittedAt',
  'ledgerDate',
  'receipt',
  'bundle',
  'consistency',
  'headers',
  'updatedAt',
] as const;

/** The file name the client writes next to a document: `<name>.timeseal.json`. */
export const PROOF_SUFFIX = '.timeseal.json';

/** Version 2's fields: version 1's and `omittedFrom`, last. */
const FIELDS_OMITTED = [...FIELDS, 'omittedFrom'] as const;

export function encodeProofFile(p: ProofFile): string {
  const ordered: Record<string, unknown> = {};
  for (const k of FIELDS) ordered[k] = p[k];
  ordered.format = p.omittedFrom === undefined ? PROOF_FILE_FORMAT : PROOF_FILE_FORMAT_OMITTED;
  if (p.omittedFrom !== undefined) {
    const { date, ledger, sha256, size } = p.omittedFrom;
    ordered.omittedFrom = { date, ledger, sha256, size };
  }
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

const bad = (field: string, problem: string): never => {
  throw new TimesealClientError('invalid', `proof file: ${field}: ${problem}`);
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const HEX64 = /^[0-9a-f]{64}$/;
const nullableString = (o: Record<string, unknown>, k: string, test?: (s: string) => boolean): string | null => {
  const v = o[k];
  if (v === null) return null;
  if (typeof v !== 'string' || (test !== undefined && !test(v))) return bad(k, 'has the wrong form');
  return v;
};

/** Strict parse of a proof file's text. */
export function parseProofFile(text: string): ProofFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new TimesealClientError('invalid', `proof file: not valid JSON (${(err as Error).message})`, { cause: err });
  }
  if (!isObject(raw)) return bad('(top)', 'expected an object');
  if (raw.format !== PROOF_FILE_FORMAT && raw.format !== PROOF_FILE_FORMAT_OMITTED)
    return bad(
      'format',
      `expected "${PROOF_FILE_FORMAT}" or "${PROOF_FILE_FORMAT_OMITTED}", got ${JSON.stringify(raw.format)}`,
    );
  const fields: readonly string[] = raw.format === PROOF_FILE_FORMAT ? FIELDS : FIELDS_OMITTED;
  const extra = Object.keys(raw).filter((k) => !fields.includes(k));
  if (extra.length > 0) bad(extra[0]!, `unknown field (in ${raw.format as string})`);
  const missing = fields.filter((k) => !(k in raw));
  if (missing.length > 0) bad(missing[0]!, 'missing');
  const hash =
    typeof raw.hash === 'string' && HEX64.test(raw.hash) ? raw.hash : bad('hash', 'expected 64 lower-case hex digits');
  if (typeof raw.server !== 'string' || !/^https?:\/\//.test(raw.server)) bad('server', 'expected an http(s) URL');
  const receipt = nullableString(raw, 'receipt', (s) => {
    try {
      return fromBase64(s).length > 0;
    } catch {
      return false;
    }
  });
  if (raw.bundle !== null && !isObject(raw.bundle)) bad('bundle', 'expected an object or null');
  let consistency: ProofFile['consistency'] = null;
  if (raw.consistency !== null) {
    const c = raw.consistency;
    if (
      !isObject(c) ||
      typeof c.checkpoint !== 'string' ||
      !Array.isArray(c.proof) ||
      !c.proof.every((h) => typeof h === 'string' && HEX64.test(h)) ||
      Object.keys(c).length !== 2
    ) {
      bad('consistency', 'expected {"checkpoint": text, "proof": [hex…]} or null');
    }
    consistency = { checkpoint: (c as { checkpoint: string }).checkpoint, proof: (c as { proof: string[] }).proof };
  }
  if (!Array.isArray(raw.headers)) bad('headers', 'expected an array');
  const headers = (raw.headers as unknown[]).map((h, i): HeaderRecord => {
    if (
      !isObject(h) ||
      !Number.isSafeInteger(h.height) ||
      (h.height as number) < 0 ||
      typeof h.hash !== 'string' ||
      !HEX64.test(h.hash) ||
      typeof h.header !== 'string' ||
      !/^[0-9a-f]{160}$/.test(h.header) ||
      Object.keys(h).length !== 3
    ) {
      return bad(`headers[${i}]`, 'expected {"height", "hash" (64 hex), "header" (160 hex)}');
    }
    return { height: h.height as number, hash: h.hash, header: h.header };
  });
  const omittedFrom = raw.format === PROOF_FILE_FORMAT ? undefined : omissionOf(raw.omittedFrom);
  return {
    format: omittedFrom === undefined ? PROOF_FILE_FORMAT : PROOF_FILE_FORMAT_OMITTED,
    hash,
    file: nullableString(raw, 'file'),
    server: raw.server as string,
    submittedAt: nullableString(raw, 'submittedAt'),
    ledgerDate: nullableString(raw, 'ledgerDate', (s) => /^\d{4}-\d{2}-\d{2}$/.test(s)),
    receipt,
    bundle: raw.bundle as Record<string, unknown> | null,
    consistency,
    headers,
    updatedAt: typeof raw.updatedAt === 'string' ? raw.updatedAt : bad('updatedAt', 'expected a time'),
    ...(omittedFrom === undefined ? {} : { omittedFrom }),
  };
}

/** Version 2's `omittedFrom`: the day, the kept ledger's relative path (no absolute path, no backslash), its
 * SHA-256 and size. */
function omissionOf(v: unknown): Omission {
  const o = isObject(v) ? v : bad('omittedFrom', 'expected an object');
  const keys = Object.keys(o).sort().join(',');
  if (keys !== 'date,ledger,sha256,size')
    bad('omittedFrom', 'expected {"date", "ledger", "sha256", "size"} and nothing else');
  if (typeof o.date !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(o.date)) bad('omittedFrom.date', 'expected YYYY-MM-DD');
  if (typeof o.ledger !== 'string' || !/^[^/\\][^\\]*\.json$/.test(o.ledger) || o.ledger.includes('\0'))
    bad('omittedFrom.ledger', 'expected the relative path of a ledger file (…/YYYY-MM-DD.json)');
  const ledger = o.ledger as string;
  if (ledger.slice(ledger.lastIndexOf('/') + 1) !== `${o.date as string}.json`)
    bad('omittedFrom.ledger', `expected the ledger file of ${o.date as string} (…/${o.date as string}.json)`);
  if (typeof o.sha256 !== 'string' || !HEX64.test(o.sha256))
    bad('omittedFrom.sha256', 'expected 64 lower-case hex digits');
  if (!Number.isSafeInteger(o.size) || (o.size as number) <= 0)
    bad('omittedFrom.size', 'expected a positive number of bytes');
  return { date: o.date as string, ledger, sha256: o.sha256 as string, size: o.size as number };
}

/** A new proof file for a submission's answer. */
export function newProofFile(
  fields: {
    hash: string;
    server: string;
    file?: string | null;
    submittedAt?: string | null;
    ledgerDate?: string | null;
    receipt?: string | null;
  },
  now: Date = new Date(),
): ProofFile {
  return {
    format: PROOF_FILE_FORMAT,
    hash: fields.hash,
    file: fields.file ?? null,
    server: fields.server,
    submittedAt: fields.submittedAt ?? null,
    ledgerDate: fields.ledgerDate ?? null,
    receipt: fields.receipt ?? null,
    bundle: null,
    consistency: null,
    headers: [],
    updatedAt: now.toISOString(),
  };
}

/**
 * How far the proof has come: 'anchored' once the bundle's `.ots` has a Bitcoin attestation and the file holds
 * its block header, 'published' once it holds the bundle, else 'stamped'. Says nothing about validity (verify).
 */
export function stageOf(p: ProofFile): ProofStage {
  let bundle;
  try {
    bundle = bundleOf(p);
  } catch {
    return 'stamped';
  }
  if (bundle === null) return 'stamped';
  const heights = bitcoinHeights(bundle);
  return heights.length > 0 && heights.some((h) => p.headers.some((r) => r.height === h)) ? 'anchored' : 'published';
}
