// core/receipt-anchor.ts: the `.ots` of a receipt's root, cut from per-hash proofs (core/ots-path.ts) of a small
// day with a calendar tree shaped as a real calendar answers (pending branch, one mined branch): it starts at R,
// reaches C = SHA-256(R || F) by `append F, sha256`, carries exactly the calendar's attestations, is the same
// bytes from every leaf, and survives a serialize/parse round trip; proofs of another shape are refused.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { concatBytes, toHex } from './encoding.ts';
import { FormatError } from './errors.ts';
import { inclusionProof, leafHash, nodeHash, treeHash } from './merkle.ts';
import {
  addAttestation,
  addOp,
  appendOp,
  bitcoinAttestation,
  newTimestamp,
  parseDetached,
  pendingAttestation,
  serializeDetached,
  SHA256_OP,
  walkAttestations,
  type Timestamp,
} from './ots.ts';
import { dayCommitment, perHashTimestamp, runOps } from './ots-path.ts';
import { receiptRootTimestamp } from './receipt-anchor.ts';

const H = (...parts: Uint8Array[]) =>
  new Uint8Array(
    crypto
      .createHash('sha256')
      .update(concatBytes(...parts))
      .digest(),
  );
const entries = Array.from({ length: 9 }, (_, i) => H(new TextEncoder().encode(`anchor ${i}`)));
const leaves = entries.map((e) => leafHash(e));
const read = (level: number, index: number): Uint8Array =>
  level === 0 ? leaves[index]! : nodeHash(read(level - 1, 2 * index), read(level - 1, 2 * index + 1));
const root = treeHash(entries.length, read);
const ledgerSha256 = H(new TextEncoder().encode('the ledger file'));
const commitment = dayCommitment(root, ledgerSha256);

function calendarTree(c: Uint8Array): Timestamp {
  const t = newTimestamp(c);
  const pending = addOp(
    addOp(t, { kind: 'prepend', argument: Uint8Array.of(0x5a, 0xaa, 0x52, 0x3d) }),
    appendOp(Uint8Array.of(1, 2, 3)),
  );
  addAttestation(pending, pendingAttestation('https://alice.example'));
  addAttestation(addOp(addOp(t, appendOp(new Uint8Array(32).fill(7))), SHA256_OP), bitcoinAttestation(812345));
  return t;
}
const perHash = (i: number) =>
  perHashTimestamp(
    {
      hash: entries[i]!,
      leafIndex: i,
      treeSize: entries.length,
      path: inclusionProof(i, entries.length, read),
      root,
      ledgerSha256,
    },
    calendarTree(commitment),
  );
const attested = (t: Timestamp) =>
  walkAttestations(t).map((a) => `${toHex(a.message)} ${JSON.stringify(a.attestation)}`);

describe('the .ots of a receipt root', () => {
  it('starts at R, reaches C by append F, sha256, and carries the calendar attestations; the same bytes from every leaf', () => {
    const bytes = entries.map((_, i) => toHex(serializeDetached(receiptRootTimestamp(perHash(i), root, ledgerSha256))));
    expect(new Set(bytes).size).toBe(1);
    const parsed = parseDetached(Buffer.from(bytes[0]!, 'hex'));
    expect(parsed.fileHashOp).toBe('sha256');
    expect(toHex(parsed.timestamp.message)).toBe(toHex(root));
    expect(toHex(runOps(root, [appendOp(ledgerSha256), SHA256_OP]))).toBe(toHex(commitment));
    expect(attested(parsed.timestamp)).toEqual(attested(calendarTree(commitment)));
  });

  it('refuses another root, another ledger digest and a proof that is not a per-hash proof', () => {
    expect(() => receiptRootTimestamp(perHash(2), H(root), ledgerSha256)).toThrow(FormatError);
    expect(() => receiptRootTimestamp(perHash(2), root, H(ledgerSha256))).toThrow(/is not followed by "append/);
    const forked = perHash(2);
    addOp(forked.timestamp, appendOp(Uint8Array.of(9)));
    expect(() => receiptRootTimestamp(forked, root, ledgerSha256)).toThrow(/does not reach the root/);
  });
});
