// The per-hash and ledger OpenTimestamps proofs (core/ots-path.ts): the inclusion path as OTS ops reaches the
// RFC 6962 root computed by an independent node:crypto implementation, for every leaf of many tree sizes;
// both proofs reach the same calendar attestations; wrong paths and foreign calendar trees are refused.
import crypto from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { concatBytes, equalBytes, toHex } from './encoding.ts';
import {
  addOp,
  appendOp,
  addAttestation,
  bitcoinAttestation,
  newTimestamp,
  parseDetached,
  pendingAttestation,
  serializeDetached,
  SHA256_OP,
  walkAttestations,
  type Timestamp,
} from './ots.ts';
import {
  calendarTreeOf,
  dayCommitment,
  inclusionPathOps,
  ledgerTimestamp,
  perHashTimestamp,
  runOps,
} from './ots-path.ts';

const H = (...parts: Uint8Array[]): Uint8Array =>
  new Uint8Array(
    crypto
      .createHash('sha256')
      .update(concatBytes(...parts))
      .digest(),
  );
const leaf = (e: Uint8Array) => H(Uint8Array.of(0), e);
const node = (l: Uint8Array, r: Uint8Array) => H(Uint8Array.of(1), l, r);
const split = (n: number) => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};
/** RFC 6962 §2.1 MTH over leaf hashes. */
function mth(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 1) return leaves[0]!;
  const k = split(leaves.length);
  return node(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}
/** RFC 6962 §2.1.1 PATH(m, D[n]). */
function auditPath(m: number, leaves: Uint8Array[]): Uint8Array[] {
  if (leaves.length <= 1) return [];
  const k = split(leaves.length);
  return m < k
    ? [...auditPath(m, leaves.slice(0, k)), mth(leaves.slice(k))]
    : [...auditPath(m - k, leaves.slice(k)), mth(leaves.slice(0, k))];
}
const entries = (n: number, label = 'e') =>
  Array.from({ length: n }, (_, i) => H(new TextEncoder().encode(`${label}-${i}`)));

/** A calendar tree at `c` as a real calendar answers: prepend time, append nonce, pending; one branch mined. */
function calendarTree(c: Uint8Array): Timestamp {
  const t = newTimestamp(c);
  const pending = addOp(
    addOp(t, { kind: 'prepend', argument: Uint8Array.of(0x5a, 0xaa, 0x52, 0x3d) }),
    appendOp(Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8)),
  );
  addAttestation(pending, pendingAttestation('https://alice.example'));
  const mined = addOp(addOp(t, appendOp(new Uint8Array(32).fill(7))), SHA256_OP);
  addAttestation(mined, bitcoinAttestation(812345));
  return t;
}

describe('inclusion path as OTS ops', () => {
  it('reaches the RFC 6962 root from every leaf of trees of 1..70 leaves', () => {
    for (let size = 1; size <= 70; size++) {
      const es = entries(size);
      const leaves = es.map(leaf);
      const root = mth(leaves);
      for (let i = 0; i < size; i++) {
        const reached = runOps(es[i]!, inclusionPathOps(i, size, auditPath(i, leaves)));
        expect(toHex(reached), `leaf ${i} of ${size}`).toBe(toHex(root));
      }
    }
  });

  it('reaches the root for random large trees (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3000 }), fc.nat(), (size, seed) => {
        const i = seed % size;
        const es = entries(size, `p${size}`);
        const leaves = es.map(leaf);
        return equalBytes(runOps(es[i]!, inclusionPathOps(i, size, auditPath(i, leaves))), mth(leaves));
      }),
      { numRuns: 25 },
    );
  });

  it('refuses paths of the wrong length and indexes outside the tree', () => {
    const leaves = entries(5).map(leaf);
    const p = auditPath(2, leaves);
    expect(() => inclusionPathOps(2, 5, p.slice(1))).toThrow(/shorter/);
    expect(() => inclusionPathOps(2, 5, [...p, p[0]!])).toThrow(/longer/);
    expect(() => inclusionPathOps(5, 5, p)).toThrow(/outside/);
    expect(() => inclusionPathOps(0, 1, [new Uint8Array(31)])).toThrow(/32 bytes/);
  });

  it('uses the documented op shapes: prepend 00, sha256; prepend 01||left or prepend 01 + append right', () => {
    const es = entries(3);
    const leaves = es.map(leaf);
    const ops = inclusionPathOps(2, 3, auditPath(2, leaves));
    // leaf 2 of 3: its sibling is the left subtree of leaves 0..1.
    expect(ops.map((o) => ('argument' in o ? `${o.kind} ${toHex(o.argument).slice(0, 4)}` : o.kind))).toEqual([
      'prepend 00',
      'sha256',
      `prepend 01${toHex(node(leaves[0]!, leaves[1]!)).slice(0, 2)}`,
      'sha256',
    ]);
    const first = inclusionPathOps(0, 2, auditPath(0, es.slice(0, 2).map(leaf)));
    expect(first.map((o) => o.kind)).toEqual(['prepend', 'sha256', 'prepend', 'append', 'sha256']);
  });
});

describe('ledger and per-hash proofs', () => {
  const es = entries(11, 'day');
  const leaves = es.map(leaf);
  const root = mth(leaves);
  const ledgerSha256 = H(new TextEncoder().encode('the ledger file'));
  const c = dayCommitment(root, ledgerSha256);

  it('C = SHA-256(R || F)', () => {
    expect(toHex(c)).toBe(toHex(H(root, ledgerSha256)));
  });

  it('both proofs reach exactly the calendar attestations, after a serialize/parse round trip', () => {
    const cal = calendarTree(c);
    const ledger = parseDetached(serializeDetached(ledgerTimestamp(root, ledgerSha256, cal)));
    expect(toHex(ledger.timestamp.message)).toBe(toHex(ledgerSha256));
    const expected = walkAttestations(cal).map((a) => `${toHex(a.message)} ${JSON.stringify(a.attestation)}`);
    const fromLedger = walkAttestations(ledger.timestamp).map(
      (a) => `${toHex(a.message)} ${JSON.stringify(a.attestation)}`,
    );
    expect(fromLedger).toEqual(expected);
    for (const i of [0, 5, 10]) {
      const proof = perHashTimestamp(
        { hash: es[i]!, leafIndex: i, treeSize: 11, path: auditPath(i, leaves), root, ledgerSha256 },
        calendarTreeOf(ledger, root, ledgerSha256),
      );
      const again = parseDetached(serializeDetached(proof));
      expect(toHex(again.timestamp.message)).toBe(toHex(es[i]!));
      expect(
        walkAttestations(again.timestamp).map((a) => `${toHex(a.message)} ${JSON.stringify(a.attestation)}`),
      ).toEqual(expected);
    }
  });

  it('refuses a path that does not lead to the root, and a calendar tree for another commitment', () => {
    const cal = calendarTree(c);
    const wrong = auditPath(3, leaves);
    expect(() =>
      perHashTimestamp({ hash: es[4]!, leafIndex: 4, treeSize: 11, path: wrong, root, ledgerSha256 }, cal),
    ).toThrow(/inclusion path/);
    expect(() => ledgerTimestamp(root, H(ledgerSha256), cal)).toThrow(/commitment/);
  });

  it('calendarTreeOf refuses a ledger proof of another day', () => {
    const ledger = ledgerTimestamp(root, ledgerSha256, calendarTree(c));
    expect(() => calendarTreeOf(ledger, H(root), ledgerSha256)).toThrow(/does not start with/);
    expect(() => calendarTreeOf(ledger, root, H(ledgerSha256))).toThrow(/file digest/);
  });
});
