// OpenTimestamps proofs: the detached `.ots` file, the bare timestamp a calendar answers with, and the tree of
// operations and attestations inside both. The wire format is the one of the reference implementation,
// python-opentimestamps 0.4 (opentimestamps/core/{timestamp,op,notary,serialize}.py); the writer produces the
// reference's canonical order, so every proof it writes parses and re-serializes to the same bytes there.
//
// Deliberate differences from the reference, all on inputs its own writer never produces:
// - keccak256 (op 0x67) is refused with an OtsFormatError (Timeseal anchors to Bitcoin only);
// - a varuint must be minimally encoded and at most 2^53 - 1, so that every parsed value re-encodes the same;
// - an op repeated within one node is merged with its twin (the reference silently keeps the last one);
// - a proof holds at most MAX_TIMESTAMP_NODES operations and attestations (the reference has no such bound).
import { sha1 as nobleSha1, ripemd160 as nobleRipemd160 } from '@noble/hashes/legacy.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { compareBytes, concatBytes, equalBytes, fromHex, toHex, utf8 } from './encoding.ts';
import { FormatError, NotFoundError } from './errors.ts';
import { bitcoinTransactionId, reversedHex } from './bitcoin.ts';

/** Any bytes that break the OpenTimestamps format or its limits. `field` names the offending part. */
export class OtsFormatError extends FormatError {
  constructor(field: string, problem: string, options?: ErrorOptions) {
    super(field, problem, options);
    this.name = 'OtsFormatError';
  }
}

// --- Constants (python-opentimestamps 0.4.2) ---------------------------------------------------------------

/** timestamp.py DetachedTimestampFile.HEADER_MAGIC. */
export const HEADER_MAGIC: Uint8Array = concatBytes(
  utf8('\x00OpenTimestamps\x00\x00Proof\x00'),
  fromHex('bf89e2e884e89294'),
);
/** timestamp.py DetachedTimestampFile.MAJOR_VERSION. */
export const MAJOR_VERSION = 1;
/** op.py Op.MAX_MSG_LENGTH and Op.MAX_RESULT_LENGTH (also the longest append/prepend argument). */
export const MAX_MESSAGE_LENGTH = 4096;
export const MAX_RESULT_LENGTH = 4096;
/** notary.py TimeAttestation.MAX_PAYLOAD_SIZE and TAG_SIZE. */
export const MAX_ATTESTATION_PAYLOAD = 8192;
export const ATTESTATION_TAG_SIZE = 8;
/** notary.py PendingAttestation.MAX_URI_LENGTH and ALLOWED_URI_CHARS. */
export const MAX_PENDING_URI_LENGTH = 1000;
const PENDING_URI_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._/:';
/** timestamp.py Timestamp.deserialize(_recursion_limit=256): at most 256 nested nodes, the root included. */
export const MAX_TIMESTAMP_DEPTH = 256;
/**
 * Not in the reference: the most operations and attestations (counted together) one proof or calendar answer
 * may hold. The depth is capped above but the breadth was not: a 964 KB file of 60,000 leaves took `ots info`
 * 195 s and 4.6 GB before it died out of memory. Real proofs have tens to a few hundred (the largest vector
 * here, bitcoin.pdf.ots, 101; a calendar's path to a Bitcoin block about 40), so 10,000 refuses only crafted
 * files. The writer keeps to it too, so every proof it writes can be read back.
 */
export const MAX_TIMESTAMP_NODES = 10_000;
/** notary.py: PendingAttestation.TAG and BitcoinBlockHeaderAttestation.TAG. */
export const PENDING_TAG: Uint8Array = fromHex('83dfe30d2ef90c8e');
export const BITCOIN_TAG: Uint8Array = fromHex('0588960d73d71901');

/** timestamp.py: 0xff announces that another item follows; 0x00 opens an attestation. */
const MORE_ITEMS = 0xff;
const ATTESTATION_MARK = 0x00;

// --- Types --------------------------------------------------------------------------------------------------

export type HashOpKind = 'sha256' | 'sha1' | 'ripemd160';
export type OtsOp =
  | { readonly kind: 'append' | 'prepend'; readonly argument: Uint8Array }
  | { readonly kind: HashOpKind | 'reverse' | 'hexlify' };

export type OtsAttestation =
  | { readonly kind: 'pending'; readonly uri: string }
  | { readonly kind: 'bitcoin'; readonly height: number }
  /** Any other notary, kept byte for byte (tag: 8 bytes; payload: the attestation's raw payload). */
  | { readonly kind: 'unknown'; readonly tag: Uint8Array; readonly payload: Uint8Array };

/**
 * One node of the proof: the message it commits to, the attestations on that message, and the ops leading to
 * child nodes. Both lists are kept in the reference's canonical order, without duplicates; change them only
 * through addOp, addAttestation and mergeTimestamps.
 */
export interface Timestamp {
  readonly message: Uint8Array;
  readonly attestations: readonly OtsAttestation[];
  readonly ops: readonly OpBranch[];
}
export interface OpBranch {
  readonly op: OtsOp;
  readonly timestamp: Timestamp;
}

/** A detached `.ots` file: the hash op of the stamped file; `timestamp.message` is the file's digest. */
export interface DetachedTimestampFile {
  readonly fileHashOp: HashOpKind;
  readonly timestamp: Timestamp;
}

export interface AttestationAt {
  /** The message the attestation commits to (for Bitcoin: the block's merkle root, in header byte order). */
  readonly message: Uint8Array;
  readonly attestation: OtsAttestation;
}

// --- Op tags (op.py; hash tags follow RFC 4880 §9.4) --------------------------------------------------------

const OP_TAG: Record<OtsOp['kind'], number> = {
  sha1: 0x02,
  ripemd160: 0x03,
  sha256: 0x08,
  append: 0xf0,
  prepend: 0xf1,
  reverse: 0xf2,
  hexlify: 0xf3,
};
const OP_BY_TAG = new Map<number, OtsOp['kind']>(
  Object.entries(OP_TAG).map(([kind, tag]) => [tag, kind as OtsOp['kind']]),
);
/** op.py OpKECCAK256.TAG: known to the reference, refused here. */
const KECCAK256_TAG = 0x67;
const DIGEST_LENGTH: Record<HashOpKind, number> = { sha1: 20, ripemd160: 20, sha256: 32 };
const HASH_FUNCTIONS: Record<HashOpKind, (data: Uint8Array) => Uint8Array> = {
  sha256: (data) => nobleSha256(data),
  sha1: (data) => nobleSha1(data),
  ripemd160: (data) => nobleRipemd160(data),
};

export const SHA256_OP: OtsOp = { kind: 'sha256' };
export function appendOp(argument: Uint8Array): OtsOp {
  return { kind: 'append', argument: Uint8Array.from(argument) };
}
export function prependOp(argument: Uint8Array): OtsOp {
  return { kind: 'prepend', argument: Uint8Array.from(argument) };
}
export function pendingAttestation(uri: string): OtsAttestation {
  checkPendingUri(uri);
  return { kind: 'pending', uri };
}
export function bitcoinAttestation(height: number): OtsAttestation {
  checkHeight(height);
  return { kind: 'bitcoin', height };
}

/** The digest a detached file records for `data`. */
export function hashFile(fileHashOp: HashOpKind, data: Uint8Array): Uint8Array {
  return HASH_FUNCTIONS[fileHashOp](data);
}

/** The result of `op` on `message`, under the reference's limits (op.py Op.__call__). */
export function applyOp(op: OtsOp, message: Uint8Array): Uint8Array {
  checkOp(op);
  const maxMessage = op.kind === 'hexlify' ? MAX_RESULT_LENGTH / 2 : MAX_MESSAGE_LENGTH; // op.py OpHexlify
  if (message.length > maxMessage) {
    throw new OtsFormatError(op.kind, `message too long (${message.length} > ${maxMessage} bytes)`);
  }
  let result: Uint8Array;
  switch (op.kind) {
    case 'append':
      result = concatBytes(message, op.argument);
      break;
    case 'prepend':
      result = concatBytes(op.argument, message);
      break;
    case 'reverse':
    case 'hexlify':
      if (message.length === 0) throw new OtsFormatError(op.kind, 'the message is empty');
      result = op.kind === 'reverse' ? message.slice().reverse() : utf8(toHex(message));
      break;
    default:
      result = HASH_FUNCTIONS[op.kind](message);
  }
  if (result.length > MAX_RESULT_LENGTH) {
    throw new OtsFormatError(op.kind, `result too long (${result.length} > ${MAX_RESULT_LENGTH} bytes)`);
  }
  return result;
}

// --- Building and merging trees -----------------------------------------------------------------------------

export function newTimestamp(message: Uint8Array): Timestamp {
  if (message.length > MAX_MESSAGE_LENGTH) {
    throw new OtsFormatError('message', `too long (${message.length} > ${MAX_MESSAGE_LENGTH} bytes)`);
  }
  return { message: Uint8Array.from(message), attestations: [], ops: [] };
}

export function newDetached(fileHashOp: HashOpKind, fileDigest: Uint8Array): DetachedTimestampFile {
  const expected = DIGEST_LENGTH[fileHashOp];
  if (fileDigest.length !== expected) {
    throw new OtsFormatError('file digest', `${fileHashOp} digests are ${expected} bytes, got ${fileDigest.length}`);
  }
  return { fileHashOp, timestamp: newTimestamp(fileDigest) };
}

/**
 * The node reached from `t` by `op`: the existing one if `t` already has that op, else a new empty node.
 * addOp and addAttestation insert in sorted place, one at a time (for building and merging trees, whose lists
 * are short); the parser appends and sorts once instead.
 */
export function addOp(t: Timestamp, op: OtsOp): Timestamp {
  const ops = t.ops as OpBranch[];
  const { index, found } = search(ops, op, (branch, key) => compareOps(branch.op, key));
  if (found) return ops[index]!.timestamp;
  const child = newTimestamp(applyOp(op, t.message));
  ops.splice(index, 0, { op: copyOp(op), timestamp: child });
  return child;
}

/** Adds `a` to the node (no effect if an equal attestation is already there). */
export function addAttestation(t: Timestamp, a: OtsAttestation): void {
  checkAttestation(a);
  const list = t.attestations as OtsAttestation[];
  const { index, found } = search(list, a, compareAttestations);
  if (!found) list.splice(index, 0, copyAttestation(a));
}

/**
 * Merges `from` (typically a calendar's answer for a pending commitment) into every node of `into` whose
 * message equals `from.message`, as the reference's Timestamp.merge does. Returns how many nodes took it;
 * a NotFoundError when none did.
 */
export function mergeTimestamps(into: Timestamp, from: Timestamp): number {
  visit(from, (node) => {
    for (const { op, timestamp } of node.ops) {
      if (!equalBytes(applyOp(op, node.message), timestamp.message)) {
        throw new OtsFormatError('merge', `op ${formatOp(op)} does not lead to the message recorded for it`);
      }
    }
  });
  const targets: Timestamp[] = [];
  visit(into, (node) => {
    if (equalBytes(node.message, from.message)) targets.push(node);
  });
  if (targets.length === 0) {
    throw new NotFoundError(`merge: no node of the timestamp has message ${toHex(from.message)}`);
  }
  for (const node of targets) mergeNode(node, from);
  return targets.length;
}

/** `counter`: the parser's, when it merges a repeated op; each item merged counts against MAX_TIMESTAMP_NODES. */
function mergeNode(into: Timestamp, from: Timestamp, counter?: Reader): void {
  for (const a of from.attestations) {
    counter?.countNode();
    addAttestation(into, a);
  }
  for (const branch of from.ops) {
    counter?.countNode();
    mergeNode(addOp(into, branch.op), branch.timestamp, counter);
  }
}

/** Every attestation with the message it commits to, in canonical (serialization) order. */
export function walkAttestations(t: Timestamp): AttestationAt[] {
  const out: AttestationAt[] = [];
  visit(t, (node) => {
    for (const attestation of node.attestations) out.push({ message: node.message, attestation });
  });
  return out;
}

function visit(t: Timestamp, fn: (node: Timestamp) => void): void {
  const stack: Timestamp[] = [t];
  while (stack.length > 0) {
    const node = stack.pop()!;
    fn(node);
    for (let i = node.ops.length - 1; i >= 0; i--) stack.push(node.ops[i]!.timestamp);
  }
}

// --- Order and validation -----------------------------------------------------------------------------------

/** op.py Op.__lt__: by tag, then by argument bytes. */
function compareOps(a: OtsOp, b: OtsOp): number {
  const byTag = OP_TAG[a.kind] - OP_TAG[b.kind];
  if (byTag !== 0) return byTag;
  return 'argument' in a && 'argument' in b ? compareBytes(a.argument, b.argument) : 0;
}

/** notary.py __lt__: by tag; then pending by URI, Bitcoin by height, unknown by payload bytes. */
function compareAttestations(a: OtsAttestation, b: OtsAttestation): number {
  const byTag = compareBytes(attestationTag(a), attestationTag(b));
  if (byTag !== 0) return byTag;
  if (a.kind === 'pending' && b.kind === 'pending') return a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0;
  if (a.kind === 'bitcoin' && b.kind === 'bitcoin') return a.height - b.height;
  if (a.kind === 'unknown' && b.kind === 'unknown') return compareBytes(a.payload, b.payload);
  return 0;
}

function attestationTag(a: OtsAttestation): Uint8Array {
  return a.kind === 'pending' ? PENDING_TAG : a.kind === 'bitcoin' ? BITCOIN_TAG : a.tag;
}

function search<T, K>(list: readonly T[], key: K, compare: (item: T, key: K) => number) {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const c = compare(list[mid]!, key);
    if (c === 0) return { index: mid, found: true };
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return { index: lo, found: false };
}

function checkOp(op: OtsOp): void {
  if (!Object.hasOwn(OP_TAG, op.kind)) throw new OtsFormatError('op', `unsupported op ${String(op.kind)}`);
  if ('argument' in op) {
    if (op.argument.length < 1 || op.argument.length > MAX_RESULT_LENGTH) {
      throw new OtsFormatError(op.kind, `argument must be 1..${MAX_RESULT_LENGTH} bytes, got ${op.argument.length}`);
    }
  }
}

function checkPendingUri(uri: string): void {
  if (uri.length > MAX_PENDING_URI_LENGTH) {
    throw new OtsFormatError('pending URI', `longer than ${MAX_PENDING_URI_LENGTH} characters`);
  }
  for (const ch of uri) {
    if (!PENDING_URI_CHARS.includes(ch)) {
      throw new OtsFormatError('pending URI', `character ${JSON.stringify(ch)} is not allowed`);
    }
  }
}

function checkHeight(height: number): void {
  if (!Number.isSafeInteger(height) || height < 0) {
    throw new OtsFormatError('bitcoin attestation', `height must be an integer 0..2^53-1, got ${height}`);
  }
}

function checkAttestation(a: OtsAttestation): void {
  if (a.kind === 'pending') checkPendingUri(a.uri);
  else if (a.kind === 'bitcoin') checkHeight(a.height);
  else if (a.kind === 'unknown') {
    if (a.tag.length !== ATTESTATION_TAG_SIZE) {
      throw new OtsFormatError('attestation tag', `must be ${ATTESTATION_TAG_SIZE} bytes, got ${a.tag.length}`);
    }
    if (equalBytes(a.tag, PENDING_TAG) || equalBytes(a.tag, BITCOIN_TAG)) {
      throw new OtsFormatError('attestation tag', `${toHex(a.tag)} is a known notary; use its own kind`);
    }
    if (a.payload.length > MAX_ATTESTATION_PAYLOAD) {
      throw new OtsFormatError('attestation payload', `longer than ${MAX_ATTESTATION_PAYLOAD} bytes`);
    }
  } else {
    throw new OtsFormatError('attestation', `unknown kind ${String((a as { kind: unknown }).kind)}`);
  }
}

function copyOp(op: OtsOp): OtsOp {
  return 'argument' in op ? { kind: op.kind, argument: Uint8Array.from(op.argument) } : { kind: op.kind };
}

function copyAttestation(a: OtsAttestation): OtsAttestation {
  if (a.kind === 'pending') return { kind: 'pending', uri: a.uri };
  if (a.kind === 'bitcoin') return { kind: 'bitcoin', height: a.height };
  return { kind: 'unknown', tag: Uint8Array.from(a.tag), payload: Uint8Array.from(a.payload) };
}

// --- Reading ------------------------------------------------------------------------------------------------

class Reader {
  readonly bytes: Uint8Array;
  offset = 0;
  /** Operations and attestations read (or merged) so far, against MAX_TIMESTAMP_NODES. */
  nodes = 0;
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }

  byte(field: string): number {
    if (this.offset >= this.bytes.length) throw new OtsFormatError(field, 'truncated (unexpected end of data)');
    return this.bytes[this.offset++]!;
  }

  take(length: number, field: string): Uint8Array {
    if (length > this.bytes.length - this.offset) {
      throw new OtsFormatError(field, `truncated (needs ${length} bytes, ${this.bytes.length - this.offset} left)`);
    }
    const out = this.bytes.slice(this.offset, this.offset + length);
    this.offset += length;
    return out;
  }

  /** serialize.py read_varuint (LEB128), restricted to minimal encodings of at most 2^53 - 1. */
  varuint(field: string): number {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const b = this.byte(field);
      if (shift === 49 && b > 0x0f) throw new OtsFormatError(field, 'varuint larger than 2^53 - 1');
      value += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) {
        if (b === 0 && shift > 0) throw new OtsFormatError(field, 'varuint is not minimally encoded');
        return value;
      }
    }
  }

  /** serialize.py read_varbytes(max_len, min_len). */
  varbytes(field: string, maxLength: number, minLength = 0): Uint8Array {
    const length = this.varuint(field);
    if (length > maxLength) throw new OtsFormatError(field, `length ${length} exceeds ${maxLength}`);
    if (length < minLength) throw new OtsFormatError(field, `length ${length} is below ${minLength}`);
    return this.take(length, field);
  }

  countNode(): void {
    if (++this.nodes > MAX_TIMESTAMP_NODES) throw tooManyNodes();
  }

  end(field: string): void {
    if (this.offset !== this.bytes.length) {
      throw new OtsFormatError(field, `${this.bytes.length - this.offset} trailing bytes after the end`);
    }
  }
}

/** A detached `.ots` file (timestamp.py DetachedTimestampFile.deserialize); trailing bytes are rejected. */
export function parseDetached(bytes: Uint8Array): DetachedTimestampFile {
  const r = new Reader(bytes);
  const magic = r.take(Math.min(HEADER_MAGIC.length, bytes.length), 'header');
  if (!equalBytes(magic, HEADER_MAGIC)) {
    throw new OtsFormatError('header', 'not an OpenTimestamps proof (bad magic bytes)');
  }
  const major = r.varuint('major version');
  if (major !== MAJOR_VERSION) {
    throw new OtsFormatError('major version', `version ${major} is not supported (only ${MAJOR_VERSION})`);
  }
  const tag = r.byte('file hash op');
  const kind = OP_BY_TAG.get(tag);
  if (kind !== 'sha256' && kind !== 'sha1' && kind !== 'ripemd160') {
    throw new OtsFormatError('file hash op', `0x${hex2(tag)} is not a supported hash (sha256, sha1, ripemd160)`);
  }
  const digest = r.take(DIGEST_LENGTH[kind], 'file digest');
  const timestamp = readNode(r, digest, MAX_TIMESTAMP_DEPTH);
  r.end('detached timestamp');
  return { fileHashOp: kind, timestamp };
}

/** A bare timestamp (a calendar's answer) rooted at `message`; the bytes must hold exactly one timestamp. */
export function parseTimestamp(bytes: Uint8Array, message: Uint8Array): Timestamp {
  const r = new Reader(bytes);
  const timestamp = readNode(r, newTimestamp(message).message, MAX_TIMESTAMP_DEPTH);
  r.end('timestamp');
  return timestamp;
}

function tooManyNodes(): OtsFormatError {
  return new OtsFormatError(
    'timestamp',
    `more than ${MAX_TIMESTAMP_NODES} operations and attestations (the most a proof may hold here)`,
  );
}

/**
 * Items are appended as read and put in canonical order once per node (a sort only when the file has them out
 * of order), never inserted one by one into the middle of a list. A repeated op's subtree is merged into its
 * twin's, each merged item counted against MAX_TIMESTAMP_NODES like the ones read.
 */
function readNode(r: Reader, message: Uint8Array, depthLeft: number): Timestamp {
  if (depthLeft === 0) {
    throw new OtsFormatError('timestamp', `nested deeper than ${MAX_TIMESTAMP_DEPTH} levels`);
  }
  const node = newTimestamp(message);
  const attestations = node.attestations as OtsAttestation[];
  const ops = node.ops as OpBranch[];
  let more: boolean;
  do {
    let tag = r.byte('timestamp');
    more = tag === MORE_ITEMS;
    if (more) tag = r.byte('timestamp');
    r.countNode();
    if (tag === ATTESTATION_MARK) {
      attestations.push(readAttestation(r));
    } else {
      const op = readOp(r, tag);
      ops.push({ op, timestamp: readNode(r, applyOp(op, message), depthLeft - 1) });
    }
  } while (more);
  canonicalOrder(attestations, compareAttestations, () => {});
  canonicalOrder(
    ops,
    (a, b) => compareOps(a.op, b.op),
    (kept, twin) => mergeNode(kept.timestamp, twin.timestamp, r),
  );
  return node;
}

/** Sorts `list` (stable) unless already strictly ascending, then drops each repeat after `merge`-ing it into the first. */
function canonicalOrder<T>(list: T[], compare: (a: T, b: T) => number, merge: (kept: T, twin: T) => void): void {
  let ordered = true;
  for (let i = 1; ordered && i < list.length; i++) ordered = compare(list[i - 1]!, list[i]!) < 0;
  if (ordered) return;
  list.sort(compare);
  let kept = 0;
  for (let i = 1; i < list.length; i++) {
    if (compare(list[kept]!, list[i]!) === 0) merge(list[kept]!, list[i]!);
    else list[++kept] = list[i]!;
  }
  list.length = kept + 1;
}

function readOp(r: Reader, tag: number): OtsOp {
  if (tag === KECCAK256_TAG) throw new OtsFormatError('op', 'keccak256 (0x67) is not supported');
  const kind = OP_BY_TAG.get(tag);
  if (kind === undefined) throw new OtsFormatError('op', `unknown op tag 0x${hex2(tag)}`);
  if (kind === 'append' || kind === 'prepend') {
    return { kind, argument: r.varbytes(`${kind} argument`, MAX_RESULT_LENGTH, 1) };
  }
  return { kind };
}

function readAttestation(r: Reader): OtsAttestation {
  const tag = r.take(ATTESTATION_TAG_SIZE, 'attestation tag');
  const payload = r.varbytes('attestation payload', MAX_ATTESTATION_PAYLOAD);
  const p = new Reader(payload);
  let attestation: OtsAttestation;
  if (equalBytes(tag, PENDING_TAG)) {
    const uriBytes = p.varbytes('pending URI', MAX_PENDING_URI_LENGTH);
    const uri = String.fromCharCode(...uriBytes); // only ASCII passes the check below
    checkPendingUri(uri);
    attestation = { kind: 'pending', uri };
  } else if (equalBytes(tag, BITCOIN_TAG)) {
    attestation = { kind: 'bitcoin', height: p.varuint('bitcoin height') };
  } else {
    return { kind: 'unknown', tag, payload };
  }
  p.end('attestation payload'); // notary.py: known attestations must consume their whole payload
  return attestation;
}

// --- Writing ------------------------------------------------------------------------------------------------

class Writer {
  private chunks: Uint8Array[] = [];
  /** Operations and attestations written so far, against MAX_TIMESTAMP_NODES. */
  nodes = 0;
  bytes(b: Uint8Array): void {
    this.chunks.push(b);
  }
  byte(b: number): void {
    this.chunks.push(Uint8Array.of(b));
  }
  varuint(value: number): void {
    this.chunks.push(encodeVaruint(value));
  }
  varbytes(b: Uint8Array): void {
    this.varuint(b.length);
    this.bytes(b);
  }
  finish(): Uint8Array {
    return concatBytes(...this.chunks);
  }
}

function encodeVaruint(value: number): Uint8Array {
  const out: number[] = [];
  let v = value;
  while (v > 0x7f) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Uint8Array.from(out);
}

export function serializeDetached(d: DetachedTimestampFile): Uint8Array {
  if (!Object.hasOwn(DIGEST_LENGTH, d.fileHashOp)) {
    throw new OtsFormatError('file hash op', `unsupported ${String(d.fileHashOp)}`);
  }
  const expected = DIGEST_LENGTH[d.fileHashOp];
  if (d.timestamp.message.length !== expected) {
    throw new OtsFormatError(
      'file digest',
      `${d.fileHashOp} digests are ${expected} bytes, got ${d.timestamp.message.length}`,
    );
  }
  const w = new Writer();
  w.bytes(HEADER_MAGIC);
  w.varuint(MAJOR_VERSION);
  w.byte(OP_TAG[d.fileHashOp]);
  w.bytes(d.timestamp.message);
  writeNode(w, d.timestamp, MAX_TIMESTAMP_DEPTH);
  return w.finish();
}

/** A bare timestamp (no header, no file digest), as calendars answer. */
export function serializeTimestamp(t: Timestamp): Uint8Array {
  const w = new Writer();
  writeNode(w, t, MAX_TIMESTAMP_DEPTH);
  return w.finish();
}

/** timestamp.py Timestamp.serialize: attestations sorted, then ops sorted; every item but the last after 0xff. */
function writeNode(w: Writer, t: Timestamp, depthLeft: number): void {
  if (depthLeft === 0) throw new OtsFormatError('timestamp', `nested deeper than ${MAX_TIMESTAMP_DEPTH} levels`);
  const attestations = [...t.attestations].sort(compareAttestations);
  const ops = [...t.ops].sort((a, b) => compareOps(a.op, b.op));
  const count = attestations.length + ops.length;
  if (count === 0) throw new OtsFormatError('timestamp', 'a node with no attestation and no op cannot be written');
  if ((w.nodes += count) > MAX_TIMESTAMP_NODES) throw tooManyNodes();
  let written = 0;
  for (const a of attestations) {
    if (++written < count) w.byte(MORE_ITEMS);
    checkAttestation(a);
    w.byte(ATTESTATION_MARK);
    writeAttestation(w, a);
  }
  for (const { op, timestamp } of ops) {
    if (!equalBytes(applyOp(op, t.message), timestamp.message)) {
      throw new OtsFormatError('timestamp', `op ${formatOp(op)} does not lead to the message recorded for it`);
    }
    if (++written < count) w.byte(MORE_ITEMS);
    w.byte(OP_TAG[op.kind]);
    if ('argument' in op) w.varbytes(op.argument);
    writeNode(w, timestamp, depthLeft - 1);
  }
}

function writeAttestation(w: Writer, a: OtsAttestation): void {
  w.bytes(attestationTag(a));
  if (a.kind === 'pending') {
    w.varbytes(concatBytes(encodeVaruint(a.uri.length), utf8(a.uri)));
  } else if (a.kind === 'bitcoin') {
    w.varbytes(encodeVaruint(a.height));
  } else {
    w.varbytes(a.payload);
  }
}

// --- Text, like `ots info` ----------------------------------------------------------------------------------

/** The op as the reference prints it: `sha256`, `append 0a0b…`. */
export function formatOp(op: OtsOp): string {
  return 'argument' in op ? `${op.kind} ${toHex(op.argument)}` : op.kind;
}

/** The attestation as the reference prints it (its Python repr). */
export function formatAttestation(a: OtsAttestation): string {
  if (a.kind === 'pending') return `PendingAttestation('${a.uri}')`;
  if (a.kind === 'bitcoin') return `BitcoinBlockHeaderAttestation(${a.height})`;
  return `UnknownAttestation(${pythonBytesRepr(a.tag)}, ${pythonBytesRepr(a.payload)})`;
}

/**
 * The tree as text, in the layout of the reference's Timestamp.str_tree (what `ots info` prints): a chain of
 * single ops stays at one indentation, a fork lists each branch after ` -> ` and indents it by four.
 */
export function formatTimestampTree(t: Timestamp): string {
  const lines: string[] = [];
  formatNode(t, 0, lines);
  return lines.map((line) => `${line}\n`).join('');
}

/** `ots info` for a detached file: the file digest, then the tree. */
export function formatDetached(d: DetachedTimestampFile): string {
  return `File ${d.fileHashOp} hash: ${toHex(d.timestamp.message)}\nTimestamp:\n${formatTimestampTree(d.timestamp)}`;
}

function formatNode(start: Timestamp, indent: number, lines: string[]): void {
  const pad = ' '.repeat(indent);
  let t = start;
  for (;;) {
    for (const a of t.attestations) {
      lines.push(`${pad}verify ${formatAttestation(a)}`);
      if (a.kind === 'bitcoin') lines.push(`${pad}# Bitcoin block merkle root ${reversedHex(t.message)}`);
    }
    const txid = t.ops.length > 0 ? bitcoinTransactionId(t.message) : undefined;
    if (t.ops.length === 1) {
      if (txid !== undefined) lines.push(`${pad}# Transaction id ${txid}`);
      const { op, timestamp } = t.ops[0]!;
      lines.push(`${pad}${formatOp(op)}`);
      t = timestamp;
      continue;
    }
    for (const { op, timestamp } of t.ops) {
      if (txid !== undefined) lines.push(`${pad}* Transaction id ${txid}`);
      lines.push(`${pad} -> ${formatOp(op)}`);
      formatNode(timestamp, indent + 4, lines);
    }
    return;
  }
}

function pythonBytesRepr(bytes: Uint8Array): string {
  const hasSingle = bytes.includes(0x27);
  const quote = hasSingle && !bytes.includes(0x22) ? '"' : "'";
  let out = '';
  for (const b of bytes) {
    if (b === 0x5c) out += '\\\\';
    else if (b === 0x09) out += '\\t';
    else if (b === 0x0a) out += '\\n';
    else if (b === 0x0d) out += '\\r';
    else if (b === quote.charCodeAt(0)) out += `\\${quote}`;
    else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
    else out += `\\x${hex2(b)}`;
  }
  return `b${quote}${out}${quote}`;
}

function hex2(b: number): string {
  return b.toString(16).padStart(2, '0');
}
