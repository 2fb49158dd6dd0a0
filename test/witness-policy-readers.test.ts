// The four readers of a witness policy agree: a table of policies and cosignature lines is run through each
// reader's own entry point — `timeseal verify`'s check of the days' cosignatures (pipeline/witness.ts
// checkCosignatures, over an archive of one day: its checkpoint and its .cosignatures file), the site's verified
// search (site/src/lib/checkpoint-lines.ts otherLines, over the latest checkpoint: the log's lines and the
// witnesses' in one note), the offline verifier (verifyInputs, with that checkpoint, the log's keys and the
// policy file dropped) and the client library (checkpointLines, with the keys as pinned) — and each must give
// the verdict the table states: refused (a known witness's false or second line, or lines that are not
// signature lines), else which witnesses cosigned and whether the quorum is met. In-process, with real keys and
// signatures (Ed25519 and ML-DSA-44 witnesses, the log's four keys); nothing is stubbed.
import { describe, expect, test } from 'vitest';
import { cosignaturesPath, dayCheckpointPath, type DayRecord } from '../core/archive.ts';
import { signCheckpoint } from '../core/checkpoint.ts';
import {
  ed25519CosignatureSigner,
  ed25519NoteSigner,
  ed25519PublicKey,
  encodeVkey,
  mldsa44CosignatureSigner,
  mldsa44PublicKey,
  NOTE_TYPE_ED25519,
  NOTE_TYPE_ED25519_COSIGNATURE,
  NOTE_TYPE_MLDSA44_COSIGNATURE,
} from '../core/cosignature.ts';
import { toBase64, utf8 } from '../core/encoding.ts';
import { ecdsaNoteSigner, mldsaNoteSigner, signNote, type NoteSigner } from '../core/note.ts';
import { ecdsaKeygen, ecdsaPublicKeyToPem, ECDSA_KEYGEN_SEED_SIZE, mldsaKeygen } from '../core/sig.ts';
import { encodeWitnessPolicy } from '../core/witness-policy.ts';
import type { ArchiveReader } from '../pipeline/archive-reader.ts';
import { checkCosignatures } from '../pipeline/witness.ts';
import { otherLines } from '../site/src/lib/checkpoint-lines.ts';
import { verifyInputs } from '../site/offline-verifier/src/checks.ts';
import { classifyFile, classifyText } from '../site/offline-verifier/src/inputs.ts';
import { checkpointLines } from '../client/src/checks.ts';
import { readTlogPolicy } from './support/tlog-policy.ts';
import { loadKeys } from '../client/src/keys.ts';

const ORIGIN = 'log.example/readers';
const DATE = '2026-01-02';
const seed = (n: number) => new Uint8Array(32).fill(n);
const NOW = 1_767_312_000;

// The log's four keys: every checkpoint carries its ECDSA P-256, ML-DSA-65, Ed25519 and ML-DSA-44 lines.
const ecdsa = ecdsaKeygen(new Uint8Array(ECDSA_KEYGEN_SEED_SIZE).fill(1));
const mldsa = mldsaKeygen(seed(2));
const LOG_SIGNERS: NoteSigner[] = [
  ecdsaNoteSigner(ORIGIN, ecdsa.secretKey, ecdsa.publicKey),
  mldsaNoteSigner(ORIGIN, seed(2), mldsa.publicKey),
  ed25519NoteSigner(ORIGIN, seed(3)),
  mldsa44CosignatureSigner(ORIGIN, seed(4)),
];
const LOG_ED = encodeVkey(ORIGIN, NOTE_TYPE_ED25519, ed25519PublicKey(seed(3)));
const LOG_ML = encodeVkey(ORIGIN, NOTE_TYPE_MLDSA44_COSIGNATURE, mldsa44PublicKey(seed(4)));
const TEXT = `${ORIGIN}\n42\n${toBase64(new Uint8Array(32).fill(7))}\n`;
const CHECKPOINT = signCheckpoint({ origin: ORIGIN, size: 42, root: new Uint8Array(32).fill(7) }, LOG_SIGNERS);

// Witnesses: a, c, d and the stranger s sign with Ed25519 (0x04), b with ML-DSA-44 (0x06); a2 is a.example's
// ML-DSA-44 key, which no policy here names.
const ed = (name: string, n: number, at = NOW) => ({
  signer: ed25519CosignatureSigner(name, seed(n), () => at),
  vkey: encodeVkey(name, NOTE_TYPE_ED25519_COSIGNATURE, ed25519PublicKey(seed(n))),
});
const ml = (name: string, n: number) => ({
  signer: mldsa44CosignatureSigner(name, seed(n), () => NOW),
  vkey: encodeVkey(name, NOTE_TYPE_MLDSA44_COSIGNATURE, mldsa44PublicKey(seed(n))),
});
const A = ed('a.example', 11);
const B = ml('b.example', 12);
const C = ed('c.example', 13);
const D = ed('d.example', 14);
const S = ed('s.example', 15);
const A2 = ml('a.example', 16);

/** The signature lines of `signers` over the checkpoint text (or over another checkpoint's: a false line). */
const lines = (signers: NoteSigner[], text = TEXT): string => signNote(text, signers).slice(text.length + 1);
const OTHER_TEXT = `${ORIGIN}\n43\n${toBase64(new Uint8Array(32).fill(8))}\n`;

const FLAT = encodeWitnessPolicy({
  log: LOG_ED,
  witnesses: [{ text: A.vkey }, { text: B.vkey }, { text: C.vkey }],
  threshold: 2,
});
const NESTED = `log ${LOG_ED}\nwitness a.example ${A.vkey}\nwitness b.example ${B.vkey}\nwitness c.example ${C.vkey}\ngroup X 2 a.example b.example c.example\nwitness d.example ${D.vkey}\ngroup Y any d.example\ngroup XY all X Y\nquorum XY\n`;

type Verdict = { refused: true } | { refused: false; cosigned: string[]; met: boolean };
interface Case {
  label: string;
  policy: string;
  lines: string;
  expected: Verdict;
}

const CASES: Case[] = [
  {
    label: 'quorum met: two of three (Ed25519 and ML-DSA-44)',
    policy: FLAT,
    lines: lines([A.signer, B.signer]),
    expected: { refused: false, cosigned: ['a.example', 'b.example'], met: true },
  },
  {
    label: 'quorum not met: one of three',
    policy: FLAT,
    lines: lines([B.signer]),
    expected: { refused: false, cosigned: ['b.example'], met: false },
  },
  { label: 'no cosignature yet', policy: FLAT, lines: '', expected: { refused: false, cosigned: [], met: false } },
  {
    label: 'nested groups, met',
    policy: NESTED,
    lines: lines([A.signer, C.signer, D.signer]),
    expected: { refused: false, cosigned: ['a.example', 'c.example', 'd.example'], met: true },
  },
  {
    label: 'nested groups, one group short',
    policy: NESTED,
    lines: lines([A.signer, B.signer, C.signer]),
    expected: { refused: false, cosigned: ['a.example', 'b.example', 'c.example'], met: false },
  },
  {
    label: 'an unknown witness line is ignored (quorum not met)',
    policy: FLAT,
    lines: lines([A.signer, S.signer]),
    expected: { refused: false, cosigned: ['a.example'], met: false },
  },
  {
    label: 'an unknown witness line is ignored (quorum met)',
    policy: FLAT,
    lines: lines([S.signer, C.signer, A.signer]),
    expected: { refused: false, cosigned: ['a.example', 'c.example'], met: true },
  },
  {
    label: 'a bad Ed25519 signature (a line over another checkpoint)',
    policy: FLAT,
    lines: lines([B.signer]) + lines([A.signer], OTHER_TEXT),
    expected: { refused: true },
  },
  {
    label: 'a bad ML-DSA-44 signature, the quorum met by the others',
    policy: FLAT,
    lines: lines([A.signer, C.signer]) + lines([B.signer], OTHER_TEXT),
    expected: { refused: true },
  },
  {
    label: 'a duplicate cosignature (the same witness twice)',
    policy: FLAT,
    lines: lines([A.signer, C.signer, ed('a.example', 11, NOW + 60).signer]),
    expected: { refused: true },
  },
  {
    label: "a witness's key of another algorithm than the policy's",
    policy: FLAT,
    lines: lines([A2.signer, C.signer]),
    expected: { refused: false, cosigned: ['c.example'], met: false },
  },
  {
    label: "the log's own key named as a witness is no cosigner",
    policy: `witness log ${LOG_ED}\nwitness c.example ${C.vkey}\ngroup g any log c.example\nquorum g\n`,
    lines: '',
    expected: { refused: false, cosigned: [], met: false },
  },
  {
    label: 'an old "quorum N" file',
    policy: `quorum 2\n${A.vkey}\n${B.vkey}\n${C.vkey}\n`,
    lines: lines([C.signer, A.signer]),
    expected: { refused: false, cosigned: ['a.example', 'c.example'], met: true },
  },
  {
    label: 'an old "quorum N" file, not met',
    policy: `quorum 2\n${A.vkey}\n${B.vkey}\n`,
    lines: lines([B.signer, S.signer]),
    expected: { refused: false, cosigned: ['b.example'], met: false },
  },
  {
    label: 'quorum none',
    policy: `log ${LOG_ED}\nquorum none\n`,
    lines: lines([A.signer]),
    expected: { refused: false, cosigned: [], met: true },
  },
  {
    label: 'one witness as the quorum; another cosigned',
    policy: `witness a.example ${A.vkey}\nwitness b.example ${B.vkey}\nquorum a.example\n`,
    lines: lines([B.signer]),
    expected: { refused: false, cosigned: ['b.example'], met: false },
  },
  {
    label: 'a cosignature line that is not a signature line',
    policy: FLAT,
    lines: `${lines([A.signer])}\u2014 b.example not-base64!\n`,
    expected: { refused: true },
  },
];

const sorted = (names: Iterable<string>) => [...names].sort();

/** `timeseal verify`'s check of a day's cosignatures (pipeline/verify.ts calls checkCosignatures). */
async function pipelineVerdict(c: Case): Promise<Verdict> {
  const files = new Map<string, Uint8Array>([[dayCheckpointPath(DATE), utf8(CHECKPOINT)]]);
  if (c.lines !== '') files.set(cosignaturesPath(DATE), utf8(c.lines));
  const reader: ArchiveReader = {
    location: 'memory',
    read: async (rel) => files.get(rel),
    stream: async () => undefined,
  };
  const day: DayRecord = {
    date: DATE,
    firstIndex: 0,
    entryCount: 42,
    treeSize: 42,
    root: '07'.repeat(32),
    sha256: '00'.repeat(32),
  } as DayRecord;
  const r = await checkCosignatures(reader, c.policy, [day]);
  if (r.problems.length > 0) return { refused: true };
  const v = r.verdicts.find((x) => x.date === DATE)!.verdict;
  return { refused: false, cosigned: sorted(v.cosigned.map((x) => x.witness)), met: v.met };
}

/** The site's verified search, on the latest checkpoint (the log's lines and the witnesses'). */
async function siteVerdict(c: Case): Promise<Verdict> {
  let r: Awaited<ReturnType<typeof otherLines>>;
  try {
    r = await otherLines(utf8(CHECKPOINT + c.lines), ORIGIN, [], utf8(LOG_ED), utf8(LOG_ML), utf8(c.policy));
  } catch {
    return { refused: true };
  }
  expect(r.signers!.slice(0, 2), 'the log lines').toEqual(['Ed25519', 'ML-DSA-44']);
  const cosigned = r.witnesses!.filter((w) => w.cosigned).map((w) => w.name);
  // The result panel shows "k of n (q required)" only where counting is the whole rule: then it must agree.
  if (r.witnessQuorum !== undefined)
    expect(cosigned.length >= r.witnessQuorum, 'the count the page shows').toBe(r.witnessQuorumMet);
  return { refused: false, cosigned: sorted(cosigned), met: r.witnessQuorumMet! };
}

/** The offline verifier: the latest checkpoint, the policy file and the log's keys dropped on the page. */
async function offlineVerdict(c: Case): Promise<Verdict> {
  const report = await verifyInputs({
    files: [classifyFile('checkpoint', utf8(CHECKPOINT + c.lines)), classifyText(c.policy, 'witnesses')!],
    keys: {
      ecdsa: { key: ecdsa.publicKey, source: 'test' },
      mldsa: { key: mldsa.publicKey, source: 'test' },
      ed25519: { key: ed25519PublicKey(seed(3)), source: 'test' },
      mldsa44: { key: mldsa44PublicKey(seed(4)), source: 'test' },
    },
  });
  const rows = report.sections.flatMap((s) => s.checks);
  if (rows.some((r) => r.state === 'fail')) return { refused: true };
  const summary = rows.find((r) => r.label === 'Witnesses')!;
  const witnessRows = rows.filter((r) => r.label.startsWith('Witness ') && r.label !== 'Witness policy');
  expect(
    witnessRows.every((r) => r.state === 'ok'),
    witnessRows.map((r) => `${r.label} ${r.verdict}`).join('; '),
  ).toBe(true);
  return {
    refused: false,
    cosigned: sorted(witnessRows.map((r) => r.label.slice('Witness '.length))),
    met: /, met\)$/.test(summary.verdict),
  };
}

/** The client library, with the keys pinned from the server. */
function clientVerdict(c: Case): Verdict {
  const keys = loadKeys({
    publicPem: ecdsaPublicKeyToPem(ecdsa.publicKey),
    dilithiumKey: toBase64(mldsa.publicKey),
    ed25519Vkey: LOG_ED,
    mldsa44Vkey: LOG_ML,
    witnessPolicy: c.policy,
  });
  let facts: ReturnType<typeof checkpointLines>;
  try {
    facts = checkpointLines(CHECKPOINT + c.lines, ORIGIN, keys);
  } catch {
    return { refused: true };
  }
  const w = facts.witnesses!;
  if (w.problems.length > 0) return { refused: true };
  return { refused: false, cosigned: sorted(w.cosigned.map((x) => x.name)), met: w.met };
}

describe('the four readers agree on a witness policy', () => {
  test('the table covers what it says: both verdicts of the quorum, refusals, ignored lines', () => {
    expect(CASES.filter((c) => c.expected.refused).length).toBeGreaterThanOrEqual(4);
    expect(CASES.filter((c) => !c.expected.refused && c.expected.met).length).toBeGreaterThanOrEqual(4);
    expect(CASES.filter((c) => !c.expected.refused && !c.expected.met).length).toBeGreaterThanOrEqual(4);
    expect(TEXT).toBe(CHECKPOINT.slice(0, TEXT.length));
  });

  test("the table's quorum verdicts are the independent tlog-policy reader's (test/support/tlog-policy.ts)", () => {
    const judged = CASES.filter((c) => !c.expected.refused && !c.policy.startsWith('quorum '));
    expect(judged.length).toBeGreaterThan(8);
    for (const c of judged) {
      const expected = c.expected as Extract<Verdict, { refused: false }>;
      expect(readTlogPolicy(c.policy).satisfied(new Set(expected.cosigned)), c.label).toBe(expected.met);
    }
  });

  test.each(CASES)('$label', async (c) => {
    const verdicts = {
      'timeseal verify': await pipelineVerdict(c),
      site: await siteVerdict(c),
      'offline verifier': await offlineVerdict(c),
      client: clientVerdict(c),
    };
    expect(verdicts).toEqual({
      'timeseal verify': c.expected,
      site: c.expected,
      'offline verifier': c.expected,
      client: c.expected,
    });
  });
});
