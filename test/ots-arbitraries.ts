// fast-check generators of OpenTimestamps trees, shared by the codec's property tests and the cross-check with
// the reference implementation. A plan is built with the codec's own helpers (addOp, addAttestation).
import fc from 'fast-check';
import { equalBytes } from '../core/encoding.ts';
import {
  addAttestation,
  addOp,
  appendOp,
  applyOp,
  bitcoinAttestation,
  BITCOIN_TAG,
  OtsFormatError,
  pendingAttestation,
  PENDING_TAG,
  prependOp,
  type OtsAttestation,
  type OtsOp,
  type Timestamp,
} from '../core/ots.ts';

export interface Plan {
  readonly attestations: readonly OtsAttestation[];
  readonly children: readonly { readonly op: OtsOp; readonly plan: Plan }[];
}

export const opArb: fc.Arbitrary<OtsOp> = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 40 }).map(appendOp),
  fc.uint8Array({ minLength: 1, maxLength: 40 }).map(prependOp),
  fc.constantFrom<OtsOp>(
    { kind: 'sha256' },
    { kind: 'sha1' },
    { kind: 'ripemd160' },
    { kind: 'reverse' },
    { kind: 'hexlify' },
  ),
);
export const attestationArb: fc.Arbitrary<OtsAttestation> = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9._/:-]{0,60}$/).map(pendingAttestation),
  fc.maxSafeNat().map(bitcoinAttestation),
  fc
    .record({ tag: fc.uint8Array({ minLength: 8, maxLength: 8 }), payload: fc.uint8Array({ maxLength: 50 }) })
    .filter(({ tag }) => !equalBytes(tag, PENDING_TAG) && !equalBytes(tag, BITCOIN_TAG))
    .map(({ tag, payload }): OtsAttestation => ({ kind: 'unknown', tag, payload })),
);
export const planArb: fc.Arbitrary<Plan> = fc.letrec<{ plan: Plan }>((tie) => ({
  plan: fc.oneof(
    { maxDepth: 4, depthIdentifier: 'plan' },
    fc.record({ attestations: fc.array(attestationArb, { minLength: 1, maxLength: 2 }), children: fc.constant([]) }),
    fc.record({
      attestations: fc.array(attestationArb, { maxLength: 2 }),
      children: fc.array(fc.record({ op: opArb, plan: tie('plan') }), { minLength: 1, maxLength: 3 }),
    }),
  ),
})).plan;

export function buildFromPlan(node: Timestamp, plan: Plan, reversed = false): void {
  const attestations = reversed ? [...plan.attestations].reverse() : plan.attestations;
  const children = reversed ? [...plan.children].reverse() : plan.children;
  for (const a of attestations) addAttestation(node, a);
  for (const { op, plan: childPlan } of children) {
    let child: Timestamp;
    try {
      applyOp(op, node.message);
      child = addOp(node, op);
    } catch (err) {
      if (err instanceof OtsFormatError) continue; // e.g. reverse of an empty message
      throw err;
    }
    buildFromPlan(child, childPlan, reversed);
  }
  if (node.attestations.length === 0 && node.ops.length === 0) addAttestation(node, bitcoinAttestation(0));
}
