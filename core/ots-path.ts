// The two OpenTimestamps proofs that follow from one calendar proof per day (docs/FORMAT.md §7–§8). For day D with
// checkpoint root R and ledger file digest F = SHA-256(ledger file), the pipeline submits the commitment
// C = SHA-256(R || F) to the calendars. From the calendar tree rooted at C:
//   - the ledger proof `D.json.ots` starts at F:        prepend R, sha256 → C → calendar tree;
//   - a per-hash proof starts at the submitted hash h:  the RFC 6962 inclusion path to R written as OTS ops
//     (prepend 0x00, sha256; per level prepend 0x01||left, or prepend 0x01 and append right; sha256), then
//     append F, sha256 → C → calendar tree.
// Both are ordinary detached `.ots` files (file hash op sha256) that any OpenTimestamps client verifies.
// Pure: no I/O, Uint8Array only, so the pipeline, the server and the browser build identical proofs.
import {
  addOp,
  applyOp,
  mergeTimestamps,
  newDetached,
  prependOp,
  appendOp,
  SHA256_OP,
  type DetachedTimestampFile,
  type OtsOp,
  type Timestamp,
} from './ots.ts';
import { concatBytes, equalBytes, toHex } from './encoding.ts';
import { FormatError, MismatchError } from './errors.ts';
import { HASH_SIZE, sha256 } from './hash.ts';

/** RFC 6962 §2.1: leaf prefix 0x00, interior node prefix 0x01. */
const LEAF_PREFIX = Uint8Array.of(0x00);
const NODE_PREFIX = Uint8Array.of(0x01);

/** C = SHA-256(R || F): what the calendars timestamp for a day. */
export function dayCommitment(root: Uint8Array, ledgerSha256: Uint8Array): Uint8Array {
  checkDigest(root, 'root');
  checkDigest(ledgerSha256, 'ledger sha256');
  return sha256(concatBytes(root, ledgerSha256));
}

/**
 * The OTS ops that lead from the submitted hash (the leaf's entry) to the tree root, following the
 * verification walk of RFC 9162 §2.1.3.2 for leaf `index` in a tree of `size` leaves with audit `path`.
 */
export function inclusionPathOps(index: number, size: number, path: readonly Uint8Array[]): OtsOp[] {
  if (!Number.isSafeInteger(size) || size < 1)
    throw new FormatError('tree size', `must be a positive integer, got ${size}`);
  if (!Number.isSafeInteger(index) || index < 0 || index >= size) {
    throw new FormatError('leaf index', `${index} is outside a tree of ${size} leaves`);
  }
  const ops: OtsOp[] = [prependOp(LEAF_PREFIX), SHA256_OP];
  let fn = index;
  let sn = size - 1;
  for (const [i, p] of path.entries()) {
    checkDigest(p, `inclusion path[${i}]`);
    if (sn === 0) throw new FormatError('inclusion path', 'longer than the path to the root');
    if (fn % 2 === 1 || fn === sn) {
      ops.push(prependOp(concatBytes(NODE_PREFIX, p)), SHA256_OP);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      ops.push(prependOp(NODE_PREFIX), appendOp(p), SHA256_OP);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) throw new FormatError('inclusion path', 'shorter than the path to the root');
  return ops;
}

/** The result of running `ops` on `message` (what an OTS client computes along a chain). */
export function runOps(message: Uint8Array, ops: readonly OtsOp[]): Uint8Array {
  let m = message;
  for (const op of ops) m = applyOp(op, m);
  return m;
}

/** Adds the chain `ops` below `t` (reusing existing branches) and returns the node it ends at. */
export function addChain(t: Timestamp, ops: readonly OtsOp[]): Timestamp {
  let node = t;
  for (const op of ops) node = addOp(node, op);
  return node;
}

/** The ledger proof `D.json.ots`: F, prepend R, sha256, then the calendar tree (rooted at C). */
export function ledgerTimestamp(
  root: Uint8Array,
  ledgerSha256: Uint8Array,
  calendar: Timestamp,
): DetachedTimestampFile {
  const c = dayCommitment(root, ledgerSha256);
  checkCalendarTree(calendar, c);
  const detached = newDetached('sha256', ledgerSha256);
  const node = addChain(detached.timestamp, [prependOp(root), SHA256_OP]);
  mergeTimestamps(node, calendar);
  return detached;
}

export interface InclusionFacts {
  /** The submitted 32-byte hash (the leaf's entry). */
  hash: Uint8Array;
  leafIndex: number;
  treeSize: number;
  path: readonly Uint8Array[];
  /** The day's checkpoint root R. */
  root: Uint8Array;
  /** F, the SHA-256 of the day's ledger file. */
  ledgerSha256: Uint8Array;
}

/**
 * The per-hash proof: h, the inclusion path to R, append F, sha256, then the calendar tree. A path that does
 * not lead to R is a MismatchError, so a wrong path never produces a proof.
 */
export function perHashTimestamp(facts: InclusionFacts, calendar: Timestamp): DetachedTimestampFile {
  checkDigest(facts.hash, 'hash');
  const c = dayCommitment(facts.root, facts.ledgerSha256);
  checkCalendarTree(calendar, c);
  const pathOps = inclusionPathOps(facts.leafIndex, facts.treeSize, facts.path);
  const reached = runOps(facts.hash, pathOps);
  if (!equalBytes(reached, facts.root)) {
    throw new MismatchError(
      `inclusion path of leaf ${facts.leafIndex} in a tree of ${facts.treeSize}`,
      toHex(facts.root),
      toHex(reached),
    );
  }
  const detached = newDetached('sha256', facts.hash);
  const node = addChain(detached.timestamp, [...pathOps, appendOp(facts.ledgerSha256), SHA256_OP]);
  mergeTimestamps(node, calendar);
  return detached;
}

/**
 * The calendar tree (the node at C) inside a ledger proof: follows prepend R, sha256 from the file digest.
 * Throws when the proof is not the ledger proof of (R, F).
 */
export function calendarTreeOf(
  ledgerProof: DetachedTimestampFile,
  root: Uint8Array,
  ledgerSha256: Uint8Array,
): Timestamp {
  if (ledgerProof.fileHashOp !== 'sha256' || !equalBytes(ledgerProof.timestamp.message, ledgerSha256)) {
    throw new MismatchError('ledger proof file digest', toHex(ledgerSha256), toHex(ledgerProof.timestamp.message));
  }
  const prepend = ledgerProof.timestamp.ops.find((b) => b.op.kind === 'prepend' && equalBytes(b.op.argument, root));
  const hashed = prepend?.timestamp.ops.find((b) => b.op.kind === 'sha256');
  if (hashed === undefined) {
    throw new FormatError('ledger proof', `does not start with "prepend ${toHex(root)}, sha256" (the day's root)`);
  }
  return hashed.timestamp;
}

function checkCalendarTree(calendar: Timestamp, commitment: Uint8Array): void {
  if (!equalBytes(calendar.message, commitment)) {
    throw new MismatchError('calendar tree message (the day commitment)', toHex(commitment), toHex(calendar.message));
  }
  if (calendar.attestations.length === 0 && calendar.ops.length === 0) {
    throw new FormatError('calendar tree', 'holds no attestation');
  }
}

function checkDigest(d: Uint8Array, field: string): void {
  if (d.length !== HASH_SIZE) throw new FormatError(field, `expected ${HASH_SIZE} bytes, got ${d.length}`);
}
