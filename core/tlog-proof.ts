// Transparency log proofs, c2sp.org/tlog-proof@v1 (docs/FORMAT.md §8a): a text file that proves offline, with
// the log's public keys, that one entry is in a signed checkpoint. Every line is separated by U+000A:
//
//   c2sp.org/tlog-proof@v1
//   extra <base64>          optional; Timeseal writes the entry, the 32-byte submitted hash
//   index <leaf index>      decimal, no leading zeroes
//   <base64 hash>           zero or more: the RFC 6962 inclusion proof, the leaf's sibling first
//   <empty line>
//   <the checkpoint>        a c2sp.org/tlog-checkpoint signed note, verbatim
//
// Timeseal's record hash is the RFC 6962 leaf hash SHA-256(0x00 || entry) over the submitted hash. The extra line
// is not trusted: it only names the hash, and verification recomputes the leaf from the hash the person holds
// (their document's SHA-256) when given, or else from the extra line, whose inclusion the proof then shows.
import type { PublicKeySet } from './day.ts';
import { fromBase64, fromHex, fromUtf8, toBase64, toHex, equalBytes } from './encoding.ts';
import { FormatError, MismatchError, withContext } from './errors.ts';
import { HASH_SIZE, sha256, type Hasher } from './hash.ts';
import { leafHash, verifyInclusion } from './merkle.ts';
import { parseCheckpoint, verifyCheckpoint } from './checkpoint.ts';
import { ecdsaNoteVerifier, mldsaNoteVerifier, parseNote } from './note.ts';
import type { ProofBundle } from './proof.ts';

/** tlog-proof §Format: the first line. */
export const TLOG_PROOF_HEADER = 'c2sp.org/tlog-proof@v1';
/** The spec names no media type; the format is UTF-8 text with newline line ends. */
export const TLOG_PROOF_MEDIA_TYPE = 'text/plain; charset=utf-8';
/** tlog-proof §Format: "Proofs SHOULD be stored with file extension .tlog-proof". */
export const TLOG_PROOF_EXTENSION = '.tlog-proof';
/** A tree of at most 2^63 leaves has inclusion proofs of at most 63 hashes. */
export const MAX_TLOG_PROOF_HASHES = 63;

const INDEX = /^index (0|[1-9][0-9]*)$/;
const EXTRA_PREFIX = 'extra ';

export interface TlogProof {
  /** Opaque, unauthenticated extra data, or null when the line is absent. */
  extra: Uint8Array | null;
  index: number;
  /** RFC 6962 inclusion proof, the leaf's sibling first, the root's child last. */
  proof: Uint8Array[];
  /** The signed checkpoint note, verbatim. */
  checkpoint: string;
}

export function encodeTlogProof(p: TlogProof): string {
  if (!Number.isSafeInteger(p.index) || p.index < 0)
    throw new FormatError('tlog-proof index', `${p.index} is not a leaf index`);
  if (p.extra !== null && p.extra.length === 0)
    throw new FormatError('tlog-proof extra', 'is empty (omit the line instead)');
  if (p.proof.length > MAX_TLOG_PROOF_HASHES)
    throw new FormatError('tlog-proof', `${p.proof.length} proof hashes, at most ${MAX_TLOG_PROOF_HASHES}`);
  p.proof.forEach((h, i) => {
    if (h.length !== HASH_SIZE)
      throw new FormatError(`tlog-proof hash ${i + 1}`, `${h.length} bytes, expected ${HASH_SIZE}`);
  });
  parseCheckpoint(parseNote(p.checkpoint).text);
  const lines = [
    TLOG_PROOF_HEADER,
    ...(p.extra ? [`${EXTRA_PREFIX}${toBase64(p.extra)}`] : []),
    `index ${p.index}`,
    ...p.proof.map(toBase64),
  ];
  return `${lines.join('\n')}\n\n${p.checkpoint}`;
}

/**
 * Strict parse: the header, an optional non-empty extra line, the index, 32-byte hashes in canonical base64, an
 * empty line, and a well-formed signed checkpoint running to the end of the file. Checks no signature.
 */
export function parseTlogProof(input: string | Uint8Array): TlogProof {
  const text = typeof input === 'string' ? input : fromUtf8(input, 'tlog-proof');
  const first = text.slice(0, Math.max(0, text.indexOf('\n')));
  if (first !== TLOG_PROOF_HEADER) {
    throw new FormatError('tlog-proof line 1', `expected "${TLOG_PROOF_HEADER}", got "${printable(first || text)}"`);
  }
  // The header lines are never empty, so the first empty line is the one before the checkpoint.
  const split = text.indexOf('\n\n');
  if (split < 0) throw new FormatError('tlog-proof', 'no empty line before the checkpoint');
  const lines = text.slice(0, split).split('\n');
  let at = 1;
  let extra: Uint8Array | null = null;
  if (lines[at]?.startsWith(EXTRA_PREFIX)) {
    extra = fromBase64(lines[at]!.slice(EXTRA_PREFIX.length), `tlog-proof line ${at + 1} (extra)`);
    if (extra.length === 0) throw new FormatError(`tlog-proof line ${at + 1} (extra)`, 'is empty');
    at++;
  }
  const indexLine = lines[at];
  const m = indexLine === undefined ? null : INDEX.exec(indexLine);
  if (!m) {
    throw new FormatError(
      `tlog-proof line ${at + 1}`,
      `expected "index N" (decimal, no leading zeroes), got "${printable(indexLine ?? '')}"`,
    );
  }
  const index = Number(m[1]);
  if (!Number.isSafeInteger(index))
    throw new FormatError(`tlog-proof line ${at + 1}`, `index ${m[1]} is larger than ${Number.MAX_SAFE_INTEGER}`);
  at++;
  const hashLines = lines.slice(at);
  if (hashLines.length > MAX_TLOG_PROOF_HASHES)
    throw new FormatError('tlog-proof', `${hashLines.length} proof hashes, at most ${MAX_TLOG_PROOF_HASHES}`);
  const proof = hashLines.map((line, i) => {
    const field = `tlog-proof line ${at + i + 1} (proof hash ${i + 1})`;
    const hash = fromBase64(line, field);
    if (hash.length !== HASH_SIZE) throw new FormatError(field, `${hash.length} bytes, expected ${HASH_SIZE}`);
    return hash;
  });
  const checkpoint = text.slice(split + 2);
  try {
    parseCheckpoint(parseNote(checkpoint).text);
  } catch (err) {
    throw withContext('tlog-proof checkpoint', err);
  }
  return { extra, index, proof, checkpoint };
}

/** Timeseal's export (FORMAT.md §8a) of a proof bundle: the same leaf, path and day checkpoint; extra = the hash. */
export function tlogProofFromBundle(bundle: ProofBundle): TlogProof {
  return {
    extra: fromHex(bundle.hash, 'hash'),
    index: bundle.leafIndex,
    proof: bundle.inclusionPath.map((h, i) => fromHex(h, `inclusion_path[${i}]`)),
    checkpoint: bundle.checkpoint,
  };
}

export interface TlogProofOptions {
  /** The 32-byte hash the person holds (their document's SHA-256). Without it, the extra line names it. */
  hash?: Uint8Array;
  /** When given, the checkpoint's origin must be this one. */
  origin?: string;
  hasher?: Hasher;
}

export interface VerifiedTlogProof {
  /** The entry proven, lower-case hex. */
  hash: string;
  /** Where the hash came from: the one given to the verifier, or the proof's extra line. */
  hashFrom: 'given' | 'extra';
  index: number;
  origin: string;
  treeSize: number;
  root: string;
}

/**
 * Verifies a Timeseal tlog-proof with the log's two public keys: the checkpoint's ECDSA P-256 and ML-DSA-65
 * lines both verify (lines of other keys, such as witnesses' cosignatures, are ignored as signed-note says), and
 * the inclusion proof leads from SHA-256(0x00 || hash) at the index to the checkpoint's root. Throws a typed
 * error naming the first thing that fails.
 */
export function verifyTlogProof(p: TlogProof, keys: PublicKeySet, options: TlogProofOptions = {}): VerifiedTlogProof {
  const hasher = options.hasher ?? sha256;
  if (p.extra !== null && p.extra.length !== HASH_SIZE) {
    throw new FormatError(
      'tlog-proof extra',
      `${p.extra.length} bytes; Timeseal's extra is the ${HASH_SIZE}-byte hash`,
    );
  }
  let entry: Uint8Array;
  if (options.hash !== undefined) {
    if (options.hash.length !== HASH_SIZE)
      throw new FormatError('hash', `${options.hash.length} bytes, expected ${HASH_SIZE}`);
    if (p.extra !== null && !equalBytes(p.extra, options.hash)) {
      throw new MismatchError('hash (yours vs the one the proof names)', toHex(options.hash), toHex(p.extra));
    }
    entry = options.hash;
  } else if (p.extra !== null) {
    entry = p.extra;
  } else {
    throw new FormatError('tlog-proof', 'no extra line names the hash: give the hash (or the document) it proves');
  }
  let origin: string;
  let checkpoint;
  try {
    origin = parseCheckpoint(parseNote(p.checkpoint).text).origin;
    checkpoint = verifyCheckpoint(
      p.checkpoint,
      [ecdsaNoteVerifier(origin, keys.ecdsa), mldsaNoteVerifier(origin, keys.mldsa)],
      {
        ...(options.origin !== undefined ? { origin: options.origin } : {}),
      },
    );
  } catch (err) {
    throw withContext('tlog-proof checkpoint', err);
  }
  try {
    verifyInclusion(leafHash(entry, hasher), p.index, checkpoint.size, p.proof, checkpoint.root, hasher);
  } catch (err) {
    throw withContext('tlog-proof inclusion proof', err);
  }
  return {
    hash: toHex(entry),
    hashFrom: options.hash !== undefined ? 'given' : 'extra',
    index: p.index,
    origin,
    treeSize: checkpoint.size,
    root: toHex(checkpoint.root),
  };
}

/** A line shown in an error: control characters escaped, long lines shortened. */
function printable(line: string): string {
  const escaped = line.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return escaped.length > 60 ? `${escaped.slice(0, 57)}…` : escaped;
}
