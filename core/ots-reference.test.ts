// Cross-check of the OpenTimestamps codec with the reference implementation, python-opentimestamps, as Debian
// packages it. Needs the apt package `python3-opentimestamps` (test tools installer: add it there). Skipped,
// with the reason in the test name, only when no python3 on this machine can `import opentimestamps`.
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from './encoding.ts';
import {
  addAttestation,
  addOp,
  appendOp,
  bitcoinAttestation,
  formatAttestation,
  formatTimestampTree,
  newDetached,
  newTimestamp,
  parseDetached,
  pendingAttestation,
  prependOp,
  serializeDetached,
  serializeTimestamp,
  SHA256_OP,
  walkAttestations,
  type DetachedTimestampFile,
  type Timestamp,
} from './ots.ts';
import { buildFromPlan, planArb } from '../test/ots-arbitraries.ts';
import { isRejectedVector, loadOtsVectors } from '../test/ots-vectors.ts';

/** The first python3 that can import the reference library (pyenv shims may hide Debian's). */
function findReferencePython(): string | undefined {
  for (const candidate of ['python3', '/usr/bin/python3']) {
    const r = spawnSync(candidate, ['-c', 'import opentimestamps'], { stdio: 'ignore' });
    if (r.status === 0) return candidate;
  }
  return undefined;
}

const PYTHON = findReferencePython();
const SKIP_REASON = PYTHON
  ? ''
  : ' — SKIPPED: no python3 can `import opentimestamps` (apt-get install python3-opentimestamps)';

/**
 * Reads a JSON list of {kind: 'detached'|'bare', hex, message?} on stdin; for each, prints what the reference
 * makes of it: its re-serialization, every (message, attestation) it reaches, and its `ots info` tree.
 */
const REFERENCE_SCRIPT = `
import json, sys, warnings
warnings.simplefilter('ignore')
from opentimestamps.core.serialize import BytesDeserializationContext, BytesSerializationContext
from opentimestamps.core.timestamp import DetachedTimestampFile, Timestamp
out = []
for job in json.load(sys.stdin):
    try:
        ctx = BytesDeserializationContext(bytes.fromhex(job['hex']))
        if job['kind'] == 'detached':
            d = DetachedTimestampFile.deserialize(ctx)
            t = d.timestamp
        else:
            t = Timestamp.deserialize(ctx, bytes.fromhex(job['message']))
            ctx.assert_eof()
            d = t
        w = BytesSerializationContext()
        d.serialize(w)
        out.append({'ok': True, 'hex': w.getbytes().hex(),
                    'attestations': sorted(m.hex() + ' ' + repr(a) for m, a in t.all_attestations()),
                    'tree': t.str_tree()})
    except Exception as e:
        out.append({'ok': False, 'error': type(e).__name__ + ': ' + str(e)})
json.dump(out, sys.stdout)
`;

interface ReferenceAnswer {
  ok: boolean;
  error?: string;
  hex?: string;
  attestations?: string[];
  tree?: string;
}
type Job = { kind: 'detached'; hex: string } | { kind: 'bare'; hex: string; message: string };

function askReference(jobs: Job[]): ReferenceAnswer[] {
  const r = spawnSync(PYTHON!, ['-c', REFERENCE_SCRIPT], { input: JSON.stringify(jobs), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`python3 failed (${r.status}): ${r.stderr}`);
  const answers = JSON.parse(r.stdout) as ReferenceAnswer[];
  expect(answers).toHaveLength(jobs.length);
  return answers;
}

const ours = (t: Timestamp) =>
  walkAttestations(t)
    .map((x) => `${toHex(x.message)} ${formatAttestation(x.attestation)}`)
    .sort();

describe.skipIf(!PYTHON)(`cross-check with python-opentimestamps${SKIP_REASON}`, () => {
  it('reads a proof this codec wrote (append, prepend, sha256, Bitcoin + pending) to the same messages', () => {
    const d: DetachedTimestampFile = newDetached(
      'sha256',
      fromHex('03ba204e50d126e4674c005e04d82e84c21366780af1f43bd54a37816b6ab340'),
    );
    const day = addOp(addOp(d.timestamp, prependOp(fromHex('00'))), SHA256_OP);
    const left = addOp(addOp(day, prependOp(fromHex('01' + 'ab'.repeat(32)))), SHA256_OP);
    const commitment = addOp(addOp(left, appendOp(fromHex('cd'.repeat(32)))), SHA256_OP);
    addAttestation(commitment, bitcoinAttestation(358391));
    const calendar = addOp(addOp(commitment, appendOp(fromHex('7c9a2a1b3e4f5d6c'))), SHA256_OP);
    addAttestation(calendar, pendingAttestation('https://alice.btc.calendar.opentimestamps.org'));
    const other = addOp(addOp(day, appendOp(fromHex('ef'.repeat(16)))), SHA256_OP);
    addAttestation(other, pendingAttestation('https://bob.btc.calendar.opentimestamps.org'));
    addAttestation(other, bitcoinAttestation(900000));

    const bytes = serializeDetached(d);
    const [answer] = askReference([{ kind: 'detached', hex: toHex(bytes) }]);
    expect(answer!.error).toBeUndefined();
    expect(answer!.attestations).toHaveLength(4);
    expect(answer!.attestations).toEqual(ours(d.timestamp));
    expect(answer!.hex).toBe(toHex(bytes));
    expect(answer!.tree).toBe(formatTimestampTree(d.timestamp));
  });

  it('agrees on every vector: accepted or not, canonical bytes, attestations and `ots info` tree', () => {
    const vectors = loadOtsVectors();
    const answers = askReference(vectors.map((v) => ({ kind: 'detached', hex: toHex(v.bytes) })));
    vectors.forEach((v, i) => {
      const answer = answers[i]!;
      if (isRejectedVector(v.name)) {
        // different-blockchains.txt.ots is the one the reference accepts (it knows keccak256); we refuse it.
        if (!v.name.endsWith('different-blockchains.txt.ots')) expect(answer.ok, v.name).toBe(false);
        expect(() => parseDetached(v.bytes), v.name).toThrow();
        return;
      }
      expect(answer.error, v.name).toBeUndefined();
      const d = parseDetached(v.bytes);
      expect(toHex(serializeDetached(d)), v.name).toBe(answer.hex);
      expect(ours(d.timestamp), v.name).toEqual(answer.attestations);
      expect(formatTimestampTree(d.timestamp), v.name).toBe(answer.tree);
    });
  });

  it('agrees on random trees', () => {
    const samples = fc.sample(fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 64 }), planArb), 150);
    const trees = samples.map(([message, plan]) => {
      const t = newTimestamp(message);
      buildFromPlan(t, plan);
      return t;
    });
    const answers = askReference(
      trees.map((t) => ({ kind: 'bare', hex: toHex(serializeTimestamp(t)), message: toHex(t.message) })),
    );
    trees.forEach((t, i) => {
      const answer = answers[i]!;
      expect(answer.error).toBeUndefined();
      expect(answer.hex).toBe(toHex(serializeTimestamp(t)));
      expect(answer.attestations).toEqual(ours(t));
      expect(answer.tree).toBe(formatTimestampTree(t));
    });
  });

  it('agrees on the nesting limit: 255 ops deep is read, 256 is refused', () => {
    const chain = (ops: number) => toHex(new Uint8Array(ops).fill(0x08)) + '000588960d73d719010105';
    const message = toHex(new Uint8Array(32));
    const [ok, tooDeep] = askReference([
      { kind: 'bare', hex: chain(255), message },
      { kind: 'bare', hex: chain(256), message },
    ]);
    expect(ok!.ok).toBe(true);
    expect(tooDeep!.ok).toBe(false);
    expect(tooDeep!.error).toMatch(/RecursionLimitError/);
  });
});
