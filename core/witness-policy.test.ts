// core/witness-policy.ts against a table of policy cases: each is parsed by it and by an independent reader
// written from the c2sp.org/tlog-policy text (test/support/tlog-policy.ts); both must accept or refuse it, and
// agree on the quorum for every subset of witnesses. Then what Timeseal writes (encodeWitnessPolicy) is read by
// the independent reader; the older `quorum N` form is still read; cosignature lines are judged: a known
// witness's line must verify, an unknown one is ignored.
import { describe, expect, it } from 'vitest';
import { readTlogPolicy } from '../test/support/tlog-policy.ts';
import {
  ed25519CosignatureSigner,
  ed25519NoteSigner,
  ed25519PublicKey,
  encodeVkey,
  mldsa44PublicKey,
  NOTE_TYPE_ED25519,
  NOTE_TYPE_ED25519_COSIGNATURE,
  NOTE_TYPE_MLDSA44_COSIGNATURE,
  vkeyVerifier,
} from './cosignature.ts';
import {
  describeQuorum,
  encodeWitnessPolicy,
  judgeCheckpoint,
  parseWitnessPolicy,
  quorumMet,
  readWitnessPolicy,
} from './witness-policy.ts';
import { signNote } from './note.ts';

const seed = (n: number) => new Uint8Array(32).fill(n);
const ed = (name: string, n: number) => encodeVkey(name, NOTE_TYPE_ED25519_COSIGNATURE, ed25519PublicKey(seed(n)));
const ml = (name: string, n: number) => encodeVkey(name, NOTE_TYPE_MLDSA44_COSIGNATURE, mldsa44PublicKey(seed(n)));
const LOG = encodeVkey('log.example', NOTE_TYPE_ED25519, ed25519PublicKey(seed(1)));
const [X1, X2, X3, Y1, Y2] = [
  ed('x1.example', 2),
  ed('x2.example', 3),
  ml('x3.example', 4),
  ed('y1.example', 5),
  ed('y2.example', 6),
];

/** Policy texts, valid or not. */
const CASES: Array<[string, string]> = [
  [
    'the spec example (two levels of groups)',
    `log ${LOG}\n\nwitness X1 ${X1}\nwitness X2 ${X2}\nwitness X3 ${X3}\ngroup X 2 X1 X2 X3\n\nwitness Y1 ${Y1}\nwitness Y2 ${Y2}\ngroup Y any Y1 Y2\n\ngroup XY all X Y\nquorum XY\n`,
  ],
  [
    'comments, tabs and surrounding spaces',
    `# a comment\n  witness\tX1 ${X1} https://x1.example/\n\t# another\nwitness X2 ${X2}   \ngroup G any X1 X2\nquorum G\n`,
  ],
  ['one witness as the quorum', `witness X1 ${X1}\nquorum X1\n`],
  ['quorum none, no witnesses', `log ${LOG}\nquorum none\n`],
  ['no quorum line', `witness X1 ${X1}\n`],
  ['two quorum lines', `witness X1 ${X1}\nquorum X1\nquorum X1\n`],
  ['a group naming a later witness', `group G any X1\nwitness X1 ${X1}\nquorum G\n`],
  ['a member twice', `witness X1 ${X1}\ngroup G 1 X1 X1\nquorum G\n`],
  ['threshold above the members', `witness X1 ${X1}\nwitness X2 ${X2}\ngroup G 3 X1 X2\nquorum G\n`],
  ['threshold zero', `witness X1 ${X1}\ngroup G 0 X1\nquorum G\n`],
  ['a name used twice', `witness X1 ${X1}\nwitness X1 ${X2}\nquorum X1\n`],
  ['none as a name', `witness none ${X1}\nquorum none\n`],
  [
    'the same key twice',
    `witness X1 ${X1}\nwitness X2 ${X1.replace('x1.example', 'other.example').replace(/\+[0-9a-f]{8}\+/, `+${ed('other.example', 2).split('+')[1]}+`)}\nquorum X1\n`,
  ],
  ['an unknown keyword', `witness X1 ${X1}\nwitnes X2 ${X2}\nquorum X1\n`],
  ['a malformed vkey', `witness X1 x1.example+nothex+AAAA\nquorum X1\n`],
  ['a quorum naming nothing defined', `witness X1 ${X1}\nquorum G\n`],
  ['a control character', `witness X1 ${X1}\r\nquorum X1\n`],
];

function subsets(names: string[]): Set<string>[] {
  return Array.from({ length: 2 ** names.length }, (_, m) => new Set(names.filter((_, i) => m & (1 << i))));
}

describe('witness policies (c2sp.org/tlog-policy)', () => {
  it.each(CASES)('%s: this parser and the independent reader agree', (_label, text) => {
    let ours: ReturnType<typeof parseWitnessPolicy> | Error;
    let theirs: ReturnType<typeof readTlogPolicy> | Error;
    try {
      ours = parseWitnessPolicy(text);
    } catch (err) {
      ours = err as Error;
    }
    try {
      theirs = readTlogPolicy(text);
    } catch (err) {
      theirs = err as Error;
    }
    expect(ours instanceof Error, ours instanceof Error ? ours.message : 'accepted').toBe(theirs instanceof Error);
    if (ours instanceof Error || theirs instanceof Error) return;
    expect(ours.witnesses.map((w) => [w.name, w.text])).toEqual([...theirs.witnesses]);
    expect(ours.logs.map((l) => l.text)).toEqual(theirs.logs);
    for (const set of subsets(ours.witnesses.map((w) => w.name)))
      expect(quorumMet(ours, set), [...set].join(',')).toBe(theirs.satisfied(set));
  });

  it('refuses what the spec forbids (the table has both kinds)', () => {
    const refused = CASES.filter(([, t]) => {
      try {
        parseWitnessPolicy(t);
        return false;
      } catch {
        return true;
      }
    });
    expect(refused.length).toBeGreaterThan(8);
    expect(refused.length).toBeLessThan(CASES.length);
  });

  it('what Timeseal publishes is read by the independent reader: the log, named witnesses with URLs, the quorum', () => {
    const text = encodeWitnessPolicy({
      log: LOG,
      witnesses: [
        { text: X1, url: 'https://x1.example/w' },
        { text: X3, url: 'https://x3.example' },
        { text: ed('x1.example', 9) },
      ],
      threshold: 2,
    });
    const theirs = readTlogPolicy(text);
    expect(theirs.logs).toEqual([LOG]);
    expect([...theirs.witnesses.keys()]).toEqual(['x1.example', 'x3.example', 'x1.example#2']);
    expect(theirs.satisfied(new Set(['x1.example']))).toBe(false);
    expect(theirs.satisfied(new Set(['x1.example', 'x1.example#2']))).toBe(true);
    const ours = parseWitnessPolicy(text);
    expect(ours.witnesses.map((w) => w.url)).toEqual(['https://x1.example/w', 'https://x3.example', undefined]);
    expect(describeQuorum(ours)).toBe('2');
    expect(describeQuorum(parseWitnessPolicy(`witness a ${X1}\nquorum a\n`))).toBe('a');
    expect(describeQuorum(parseWitnessPolicy('quorum none\n'))).toBe('none');
    expect(readTlogPolicy(encodeWitnessPolicy({ witnesses: [], threshold: 0 })).satisfied(new Set())).toBe(true);
    expect(encodeWitnessPolicy({ witnesses: [{ text: X1 }, { text: X2 }], threshold: 2 })).toContain(
      'group witnesses all x1.example x2.example\nquorum witnesses\n',
    );
  });

  it('reads the older "quorum N" form for archives made before; a quorum of nested groups is described by its name', () => {
    const older = readWitnessPolicy(`quorum 1\n${X1}\n${X2}\n`);
    expect(older.witnesses.map((w) => w.name)).toEqual(['x1.example', 'x2.example']);
    expect(quorumMet(older, new Set(['x2.example']))).toBe(true);
    expect(() => readWitnessPolicy(`quorum 3\n${X1}\n${X2}\n`)).toThrow(/threshold 3/);
    expect(() => parseWitnessPolicy(`quorum 1\n${X1}\n`)).toThrow(/line 1/);
    expect(describeQuorum(parseWitnessPolicy(`witness A ${X1}\nwitness B ${X2}\ngroup G 2 A B\nquorum G\n`))).toBe('2');
    expect(describeQuorum(parseWitnessPolicy(CASES[0]![1]))).toBe('group XY');
  });

  it("judges cosignature lines: the log's are left alone, a known witness must verify once, an unknown line is ignored, the quorum is counted on the rest", () => {
    const body = 'log.example\n5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n';
    const logSigner = ed25519NoteSigner('log.example', seed(1));
    const note = signNote(body, [logSigner]);
    const w1 = ed25519CosignatureSigner('x1.example', seed(2), () => 1_700_000_000);
    const w2 = ed25519CosignatureSigner('x2.example', seed(3), () => 1_700_000_001);
    const stranger = ed25519CosignatureSigner('gone.example', seed(42), () => 1_700_000_000);
    const lines = (...signers: (typeof w1)[]) => signNote(body, signers).slice(body.length + 1);
    const policy = parseWitnessPolicy(`log ${LOG}\nwitness a ${X1}\nwitness b ${X2}\ngroup g 2 a b\nquorum g\n`);
    const verify = (w: { vkey: Parameters<typeof vkeyVerifier>[0] }, text: Uint8Array, sig: Uint8Array) =>
      vkeyVerifier(w.vkey).verify(text, sig);
    const one = judgeCheckpoint(policy, note, lines(w1, stranger), verify);
    expect(one).toEqual({
      cosigned: [{ witness: 'a', time: 1_700_000_000 }],
      groups: [{ name: 'g', met: false }],
      met: false,
      problems: [],
      ignored: [
        { name: 'log.example', keyId: logSigner.keyId, reason: 'log' },
        { name: 'gone.example', keyId: stranger.keyId, reason: 'unknown key' },
      ],
    });
    // The same lines inside the note (the latest checkpoint) are judged the same.
    expect(judgeCheckpoint(policy, `${note}${lines(w1, stranger)}`, undefined, verify)).toEqual(one);
    expect(judgeCheckpoint(policy, note, lines(w2, w1), verify)).toMatchObject({
      cosigned: [{ witness: 'b' }, { witness: 'a' }],
      met: true,
      problems: [],
    });
    // x2's line over another checkpoint: its key, not this checkpoint's signature.
    const other = 'log.example\n6\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n';
    const forged = signNote(other, [w2]).slice(other.length + 1);
    expect(judgeCheckpoint(policy, note, lines(w1) + forged, verify)).toMatchObject({
      cosigned: [{ witness: 'a' }],
      met: false,
      problems: [
        { witness: 'b', reason: 'the Ed25519 cosignature line of x2.example does not verify against the checkpoint' },
      ],
    });
    expect(judgeCheckpoint(policy, note, lines(w1, w1), verify)).toMatchObject({
      cosigned: [{ witness: 'a' }],
      problems: [{ witness: 'a', reason: 'x1.example cosigned twice' }],
    });
    expect(judgeCheckpoint(policy, note, lines(w1, w2), () => undefined)).toMatchObject({
      cosigned: [],
      met: false,
      ignored: [{ reason: 'log' }, { reason: 'not checked here' }, { reason: 'not checked here' }],
    });
    expect(() => judgeCheckpoint(policy, note, lines(w1).slice(0, -1), verify)).toThrow(/newline/);
    expect(judgeCheckpoint(parseWitnessPolicy('quorum none\n'), note, undefined, verify)).toMatchObject({
      cosigned: [],
      met: true,
    });
  });
});
