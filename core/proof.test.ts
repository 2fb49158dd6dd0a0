import { describe, expect, it } from 'vitest';
import { signCheckpoint } from './checkpoint.ts';
import { keyFingerprints } from './day.ts';
import { fromHex, toHex } from './encoding.ts';
import { TimesealError } from './errors.ts';
import { sha256 } from './hash.ts';
import { inclusionProof, leafHash, type HashReader } from './merkle.ts';
import { ecdsaNoteSigner, mldsaNoteSigner } from './note.ts';
import { encodeProofBundle, parseProofBundle, verifyProofBundle, type ProofBundle } from './proof.ts';
import { ecdsaKeygen, mldsaKeygen } from './sig.ts';
import { appendLeaves } from './tiles.ts';

const ecdsa = ecdsaKeygen(new Uint8Array(48).fill(7));
const mldsa = mldsaKeygen(new Uint8Array(32).fill(9));
const keys = { ecdsa: ecdsa.publicKey, mldsa: mldsa.publicKey };
const origin = 'timeseal.example';

/** A two-day log built with core alone: 5 leaves on 2025-11-01, 7 on 2025-11-02. */
function makeBundle(): ProofBundle {
  const hashes = Array.from({ length: 12 }, (_, i) => sha256(new Uint8Array([i])));
  const leaves = hashes.map((h) => leafHash(h));
  const nodes = new Map<string, Uint8Array>();
  const read: HashReader = (level, index) => {
    if (level === 0) return leaves[index]!;
    const key = `${level}/${index}`;
    if (!nodes.has(key)) {
      const l = read(level - 1, 2 * index);
      const r = read(level - 1, 2 * index + 1);
      nodes.set(key, sha256(new Uint8Array([1, ...l, ...r])));
    }
    return nodes.get(key)!;
  };
  const { root, size } = appendLeaves(0, read, leaves);
  const checkpoint = signCheckpoint({ origin, size, root }, [
    ecdsaNoteSigner(origin, ecdsa.secretKey, ecdsa.publicKey),
    mldsaNoteSigner(origin, mldsa.seed, mldsa.publicKey),
  ]);
  const leafIndex = 8;
  const fp = keyFingerprints(keys);
  return {
    hash: toHex(hashes[leafIndex]!),
    date: '2025-11-02',
    submittedAt: '2025-11-02T08:00:00.000Z',
    leafIndex,
    treeSize: size,
    inclusionPath: inclusionProof(leafIndex, size, read).map(toHex),
    checkpoint,
    ledger: { path: '2025-11-02.json', sha256: 'ab'.repeat(32), firstIndex: 5, entryCount: 7 },
    keys: { ecdsaP256Fingerprint: fp.ecdsa, mlDsa65Fingerprint: fp.mldsa },
    ots: null,
    rfc3161: [],
    receipts: [],
    coseReceipts: [],
  };
}

describe('proof bundle (FORMAT.md §8)', () => {
  const bundle = makeBundle();

  it('verifies offline with the two public keys and survives its JSON encoding', () => {
    const parsed = parseProofBundle(encodeProofBundle(bundle));
    expect(parsed).toEqual(bundle);
    const result = verifyProofBundle(parsed, keys);
    expect(result).toMatchObject({ hash: bundle.hash, date: '2025-11-02', origin, treeSize: 12 });
  });

  it('fails, naming the reason, for every kind of tampering', () => {
    const flipHex = (h: string) => (h[0] === '0' ? '1' : '0') + h.slice(1);
    const other = mldsaKeygen(new Uint8Array(32).fill(1)).publicKey;
    const cases: Array<[string, () => unknown, RegExp]> = [
      ['hash', () => verifyProofBundle({ ...bundle, hash: flipHex(bundle.hash) }, keys), /inclusion proof/],
      [
        'path',
        () =>
          verifyProofBundle(
            { ...bundle, inclusionPath: bundle.inclusionPath.map((h, i) => (i === 1 ? flipHex(h) : h)) },
            keys,
          ),
        /inclusion proof/,
      ],
      ['leaf index', () => verifyProofBundle({ ...bundle, leafIndex: 9 }, keys), /inclusion proof/],
      ['leaf outside the day', () => verifyProofBundle({ ...bundle, leafIndex: 2 }, keys), /outside the day/],
      ['tree size', () => verifyProofBundle({ ...bundle, treeSize: 11 }, keys), /tree size/],
      [
        'day range',
        () => verifyProofBundle({ ...bundle, ledger: { ...bundle.ledger, entryCount: 6 } }, keys),
        /range end/,
      ],
      ['date', () => verifyProofBundle({ ...bundle, date: '2025-11-03' }, keys), /date/],
      [
        'checkpoint size',
        () => verifyProofBundle({ ...bundle, checkpoint: bundle.checkpoint.replace('\n12\n', '\n13\n') }, keys),
        /signature/,
      ],
      [
        'checkpoint signature',
        () =>
          verifyProofBundle(
            {
              ...bundle,
              checkpoint: bundle.checkpoint.replace(/— (\S+) (.)/, (_m, n, c) => `— ${n} ${c === 'A' ? 'B' : 'A'}`),
            },
            keys,
          ),
        /signature|key/,
      ],
      ['other ML-DSA key', () => verifyProofBundle(bundle, { ...keys, mldsa: other }), /fingerprint/],
    ];
    for (const [what, run, reason] of cases) {
      expect(run, what).toThrow(TimesealError);
      expect(run, what).toThrow(reason);
    }
  });

  it('rejects unknown and missing fields when parsing', () => {
    const json = JSON.parse(encodeProofBundle(bundle));
    expect(() => parseProofBundle(JSON.stringify({ ...json, extra: 1 }))).toThrow(/unknown field extra/);
    delete json.leaf_index;
    expect(() => parseProofBundle(JSON.stringify(json))).toThrow(/missing field leaf_index/);
    expect(() => parseProofBundle('{')).toThrow(/JSON/);
    expect(() =>
      parseProofBundle(JSON.stringify({ ...JSON.parse(encodeProofBundle(bundle)), rfc3161: ['not base64!'] })),
    ).toThrow(/rfc3161/);
    expect(() =>
      parseProofBundle(JSON.stringify({ ...JSON.parse(encodeProofBundle(bundle)), rfc3161: 'MIIB' })),
    ).toThrow(/rfc3161/);
    expect(fromHex(bundle.hash).length).toBe(32);
  });

  it('writes version 4 with the RFC 3161 tokens, the receipts and the COSE receipts, and still reads version 3 (no COSE receipts), 2 (no receipts either) and 1 (no tokens either), strictly', () => {
    const full = {
      ...bundle,
      rfc3161: ['MIIBAAECAw==', 'AAEC'],
      receipts: ['MIIGAAECAw==', 'AAED'],
      coseReceipts: ['0oRYAQ==', '0oRZ'],
    };
    const json = JSON.parse(encodeProofBundle(full));
    expect(json.format).toBe('timeseal-proof/4');
    expect(Object.keys(json).slice(-3)).toEqual(['rfc3161', 'receipts', 'cose_receipts']);
    expect(parseProofBundle(JSON.stringify(json))).toEqual(full);
    expect(verifyProofBundle(parseProofBundle(JSON.stringify(json)), keys)).toMatchObject({ hash: bundle.hash });
    // Version 3: tokens and receipts, no COSE receipts (the field is then unknown).
    const { cose_receipts: _noCose, ...v3 } = { ...json, format: 'timeseal-proof/3' };
    expect(parseProofBundle(JSON.stringify(v3))).toEqual({ ...full, coseReceipts: [] });
    expect(() => parseProofBundle(JSON.stringify({ ...v3, cose_receipts: [] }))).toThrow(/unknown field cose_receipts/);
    // Version 2: the tokens, no receipts (the field is then unknown).
    const { receipts: _none, ...v2 } = { ...v3, format: 'timeseal-proof/2' };
    expect(parseProofBundle(JSON.stringify(v2))).toEqual({ ...full, receipts: [], coseReceipts: [] });
    expect(() => parseProofBundle(JSON.stringify({ ...v2, receipts: [] }))).toThrow(/unknown field receipts/);
    expect(() => parseProofBundle(JSON.stringify({ ...v2, rfc3161: undefined }))).toThrow(/missing field rfc3161/);
    // Version 1: neither.
    const { rfc3161: _dropped, ...v1 } = { ...v2, format: 'timeseal-proof/1' };
    expect(parseProofBundle(JSON.stringify(v1))).toEqual({ ...bundle, rfc3161: [], receipts: [], coseReceipts: [] });
    expect(() => parseProofBundle(JSON.stringify({ ...v1, rfc3161: [] }))).toThrow(/unknown field rfc3161/);
    expect(() => parseProofBundle(JSON.stringify({ ...v1, receipts: [] }))).toThrow(/unknown field receipts/);
    // Version 4: all three required, all arrays of base64.
    const { receipts: _gone, ...noReceipts } = json;
    expect(() => parseProofBundle(JSON.stringify(noReceipts))).toThrow(/missing field receipts/);
    const { rfc3161: _gone2, ...noTokens } = json;
    expect(() => parseProofBundle(JSON.stringify(noTokens))).toThrow(/missing field rfc3161/);
    const { cose_receipts: _gone3, ...noCose } = json;
    expect(() => parseProofBundle(JSON.stringify(noCose))).toThrow(/missing field cose_receipts/);
    expect(() => parseProofBundle(JSON.stringify({ ...json, receipts: ['not base64!'] }))).toThrow(/proof\.receipts/);
    expect(() => parseProofBundle(JSON.stringify({ ...json, receipts: [''] }))).toThrow(/proof\.receipts/);
    expect(() => parseProofBundle(JSON.stringify({ ...json, receipts: 'MIIB' }))).toThrow(/proof\.receipts/);
    expect(() => parseProofBundle(JSON.stringify({ ...json, receipts: null }))).toThrow(/proof\.receipts/);
    expect(() => parseProofBundle(JSON.stringify({ ...json, cose_receipts: ['?'] }))).toThrow(/proof\.cose_receipts/);
    expect(() => parseProofBundle(JSON.stringify({ ...json, format: 'timeseal-proof/5' }))).toThrow(
      /expected "timeseal-proof\/4"/,
    );
    expect(() => parseProofBundle(JSON.stringify({ ...json, format: 4 }))).toThrow(/expected "timeseal-proof\/4"/);
  });
});
