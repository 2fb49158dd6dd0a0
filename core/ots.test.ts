// The OpenTimestamps codec against real proofs from the public calendars (test/vectors/ots, provenance in its
// README.md), the limits of the reference implementation, and property tests (round trips, corruption).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { concatBytes, equalBytes, fromHex, toHex, utf8 } from './encoding.ts';
import { NotFoundError } from './errors.ts';
import {
  addAttestation,
  addOp,
  appendOp,
  bitcoinAttestation,
  BITCOIN_TAG,
  formatAttestation,
  formatDetached,
  formatTimestampTree,
  hashFile,
  HEADER_MAGIC,
  mergeTimestamps,
  newDetached,
  newTimestamp,
  OtsFormatError,
  parseDetached,
  parseTimestamp,
  pendingAttestation,
  PENDING_TAG,
  prependOp,
  serializeDetached,
  serializeTimestamp,
  SHA256_OP,
  walkAttestations,
  type HashOpKind,
  type OtsAttestation,
  type OtsOp,
  type Timestamp,
} from './ots.ts';
import { buildFromPlan, planArb } from '../test/ots-arbitraries.ts';
import { isRejectedVector, loadOtsVectors, OTS_VECTORS_DIR, readOtsVector } from '../test/ots-vectors.ts';

const vectors = loadOtsVectors();
const valid = vectors.filter((v) => !isRejectedVector(v.name));
const rejected = vectors.filter((v) => isRejectedVector(v.name));
/** Written by javascript-opentimestamps with its branches out of canonical order (see the vectors' README). */
const NON_CANONICAL = 'javascript-opentimestamps/ripemd160/README.md.ots';

const parseVector = (name: string) => parseDetached(readOtsVector(`opentimestamps-client/${name}`));
const describeAttestation = (x: { message: Uint8Array; attestation: OtsAttestation }) =>
  `${toHex(x.message)} ${formatAttestation(x.attestation)}`;

function bitcoinAt(t: Timestamp, height: number): Uint8Array[] {
  return walkAttestations(t)
    .filter((x) => x.attestation.kind === 'bitcoin' && x.attestation.height === height)
    .map((x) => x.message);
}

function depthOfAttestations(t: Timestamp, depth = 0): number[] {
  return [
    ...(t.attestations.length > 0 ? [depth] : []),
    ...t.ops.flatMap((branch) => depthOfAttestations(branch.timestamp, depth + 1)),
  ];
}

describe('vectors', () => {
  it('finds the vectors', () => {
    expect(valid.length).toBeGreaterThanOrEqual(13);
    expect(rejected.length).toBe(4);
  });

  it.each(valid.filter((v) => v.name !== NON_CANONICAL).map((v) => [v.name, v]))(
    '%s re-serializes byte for byte',
    (_name, v) => {
      const d = parseDetached(v.bytes);
      expect(toHex(serializeDetached(d))).toBe(toHex(v.bytes));
    },
  );

  it('re-serializes the non-canonical JavaScript proof in canonical order, keeping every attestation', () => {
    const bytes = readOtsVector(NON_CANONICAL);
    const d = parseDetached(bytes);
    const canonical = serializeDetached(d);
    expect(canonical.length).toBe(bytes.length);
    expect(equalBytes(canonical, bytes)).toBe(false);
    const again = parseDetached(canonical);
    expect(toHex(serializeDetached(again))).toBe(toHex(canonical));
    expect(walkAttestations(again.timestamp).map(describeAttestation)).toEqual(
      walkAttestations(d.timestamp).map(describeAttestation),
    );
    expect(
      walkAttestations(d.timestamp)
        .map((x) => formatAttestation(x.attestation))
        .sort(),
    ).toEqual([
      "PendingAttestation('https://alice.btc.calendar.opentimestamps.org')",
      "PendingAttestation('https://bob.btc.calendar.opentimestamps.org')",
      "PendingAttestation('https://finney.calendar.eternitywall.com')",
    ]);
  });

  it("each stamped file's digest equals the proof's file digest", () => {
    const originals: [string, string][] = [];
    for (const v of valid) {
      const base = v.path.slice(0, -'.ots'.length);
      if (existsSync(base)) originals.push([v.name, base]);
    }
    for (const file of ['a', 'b']) {
      originals.push([
        'opentimestamps-client/sha1/a-or-b.ots',
        join(OTS_VECTORS_DIR, 'opentimestamps-client/sha1', file),
      ]);
    }
    expect(originals.length).toBeGreaterThanOrEqual(12);
    for (const [name, original] of originals) {
      const d = parseDetached(readOtsVector(name));
      const digest = hashFile(d.fileHashOp, new Uint8Array(readFileSync(original)));
      expect(toHex(d.timestamp.message), name).toBe(toHex(digest));
    }
  });

  it('the two SHAttered files share the sha1 digest the proof records', () => {
    const d = parseVector('sha1/a-or-b.ots');
    expect(d.fileHashOp).toBe('sha1');
    expect(toHex(d.timestamp.message)).toBe('f92d74e3874587aaf443d1db961d4e26dde13e9c');
    expect(bitcoinAt(d.timestamp, 466906)).toHaveLength(1);
    expect(walkAttestations(d.timestamp).filter((x) => x.attestation.kind === 'pending').length).toBeGreaterThan(0);
  });

  it('hello-world.txt reaches its Bitcoin message at height 358391', () => {
    const d = parseVector('hello-world.txt.ots');
    expect(d.fileHashOp).toBe('sha256');
    expect(toHex(d.timestamp.message)).toBe('03ba204e50d126e4674c005e04d82e84c21366780af1f43bd54a37816b6ab340');
    expect(bitcoinAt(d.timestamp, 358391).map(toHex)).toEqual([
      '007ee445d23ad061af4a36b809501fab1ac4f2d7e7a739817dd0cbb7ec661b8a',
    ]);
  });

  it("bad-stamp.txt claims 358391 with a message that is not that block's merkle root", () => {
    const d = parseVector('bad-stamp.txt.ots');
    expect(bitcoinAt(d.timestamp, 358391).map(toHex)).toEqual([
      '921f81b9147c9aebe712d7805d810cf0f762479967e4c26008178277b89db41b',
    ]);
  });

  it('empty reaches its message at height 129405', () => {
    const d = parseVector('empty.ots');
    expect(toHex(d.timestamp.message)).toBe(toHex(hashFile('sha256', new Uint8Array(0))));
    expect(bitcoinAt(d.timestamp, 129405).map(toHex)).toEqual([
      '715b7e36276a66d842e56dd102c9d9eddfe4d9f2dfa908ae31157ac2c2fd29db',
    ]);
  });

  it('bitcoin.pdf reaches its message at height 465751, 100 ops deep', () => {
    const d = parseVector('bitcoin.pdf.ots');
    expect(d.fileHashOp).toBe('sha1');
    expect(toHex(d.timestamp.message)).toBe('8de2fdb04edce612738eb51e14ecc426381f8ed8');
    expect(bitcoinAt(d.timestamp, 465751).map(toHex)).toEqual([
      '76086b72bf393f2c72e3c8c4d07d6844abbd63de4af16c35522d522e8d9f9898',
    ]);
    expect(depthOfAttestations(d.timestamp)).toEqual([100]);
  });

  it("incomplete.txt's pending commitment is the calendar key", () => {
    const d = parseVector('incomplete.txt.ots');
    const pending = walkAttestations(d.timestamp);
    expect(pending).toHaveLength(1);
    expect(pending[0]!.attestation).toEqual({ kind: 'pending', uri: 'https://alice.btc.calendar.opentimestamps.org' });
    expect(toHex(pending[0]!.message)).toBe(
      '57cfa5c46716df9bd9e83595bce439c58108d8fcc1678f30d4c6731c3f1fa6c79ed712c66fb1ac8d4e4eb0e7',
    );
  });

  it('merkle1-3: three files stamped in one tree reach the same calendar commitments', () => {
    const keys = ['merkle1.txt.ots', 'merkle2.txt.ots', 'merkle3.txt.ots'].map((name) =>
      walkAttestations(parseVector(name).timestamp).map(describeAttestation),
    );
    expect(keys[0]).toHaveLength(2);
    expect(keys[1]).toEqual(keys[0]);
    expect(keys[2]).toEqual(keys[0]);
    const digests = ['merkle1.txt.ots', 'merkle2.txt.ots', 'merkle3.txt.ots'].map((n) =>
      toHex(parseVector(n).timestamp.message),
    );
    expect(new Set(digests).size).toBe(3);
  });

  it('two-calendars forks (0xff) into two pending branches', () => {
    const d = parseVector('two-calendars.txt.ots');
    const uris = walkAttestations(d.timestamp).map((x) => (x.attestation.kind === 'pending' ? x.attestation.uri : ''));
    expect(uris).toEqual([
      'https://alice.btc.calendar.opentimestamps.org',
      'https://bob.btc.calendar.opentimestamps.org',
    ]);
  });

  it.each([['unknown-notary.txt.ots'], ['known-and-unknown-notary.txt.ots']])(
    '%s keeps the unknown notary byte for byte',
    (name) => {
      const bytes = readOtsVector(`opentimestamps-client/${name}`);
      const d = parseDetached(bytes);
      const unknown = walkAttestations(d.timestamp).filter((x) => x.attestation.kind === 'unknown');
      expect(unknown).toHaveLength(1);
      const a = unknown[0]!.attestation;
      if (a.kind !== 'unknown') throw new Error('unreachable');
      expect(toHex(a.tag)).toBe('0102030405060708');
      expect(new TextDecoder().decode(a.payload)).toMatch(/^x+$/);
      expect(toHex(serializeDetached(d))).toBe(toHex(bytes));
    },
  );

  it.each(rejected.map((v) => [v.name, v]))('%s is rejected with an OtsFormatError', (_name, v) => {
    expect(() => parseDetached(v.bytes)).toThrow(OtsFormatError);
  });

  it('names what is wrong in each rejected vector', () => {
    const reason = (name: string) => {
      try {
        parseDetached(readOtsVector(`opentimestamps-client/${name}`));
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(reason('invalid/bad-major-version.ots')).toMatch(/major version: version 1151 is not supported/);
    expect(reason('invalid/exceeds-max-msg-length.ots')).toMatch(/result too long \(4112 > 4096/);
    expect(reason('invalid/invalid-file-digest-type.ots')).toMatch(/file hash op: 0xf3 is not a supported hash/);
    expect(reason('different-blockchains.txt.ots')).toMatch(/keccak256 \(0x67\) is not supported/);
  });
});

describe('text like `ots info`', () => {
  it('prints the chain, the calendar transaction and the block merkle root as explorers show it', () => {
    const text = formatDetached(parseVector('hello-world.txt.ots'));
    const lines = text.split('\n');
    expect(lines[0]).toBe('File sha256 hash: 03ba204e50d126e4674c005e04d82e84c21366780af1f43bd54a37816b6ab340');
    expect(lines[1]).toBe('Timestamp:');
    expect(lines[2]).toBe('ripemd160');
    expect(lines).toContain('# Transaction id 7e9f0f7d9daa2d9e51b2e22f4abe814c3f90539afa778a9bef88dc64627cb2ec');
    expect(lines.slice(-3)).toEqual([
      'verify BitcoinBlockHeaderAttestation(358391)',
      '# Bitcoin block merkle root 8a1b66ecb7cbd07d8139a7e7d7f2c41aab1f5009b8364aaf61d03ad245e47e00',
      '',
    ]);
  });

  it('indents each branch of a fork', () => {
    const lines = formatTimestampTree(parseVector('two-calendars.txt.ots').timestamp).split('\n');
    const forks = lines.filter((l) => l.startsWith(' -> '));
    expect(forks).toHaveLength(2);
    expect(lines).toContain("    verify PendingAttestation('https://alice.btc.calendar.opentimestamps.org')");
    expect(lines).toContain("    verify PendingAttestation('https://bob.btc.calendar.opentimestamps.org')");
  });

  it('shows an unknown notary as the reference does', () => {
    const text = formatTimestampTree(parseVector('unknown-notary.txt.ots').timestamp);
    expect(text).toContain(
      `verify UnknownAttestation(b'\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08', b'${'x'.repeat(46)}')`,
    );
  });
});

// --- Limits of the reference, on hand-made bytes -------------------------------------------------------------

const DIGEST = fromHex('03ba204e50d126e4674c005e04d82e84c21366780af1f43bd54a37816b6ab340');
const varuint = (n: number): Uint8Array => {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n % 128) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Uint8Array.from(out);
};
const varbytes = (b: Uint8Array) => concatBytes(varuint(b.length), b);
const bitcoinItem = (payload: Uint8Array = Uint8Array.of(5)) =>
  concatBytes(Uint8Array.of(0), BITCOIN_TAG, varbytes(payload));
const detached = (...body: Uint8Array[]) => concatBytes(HEADER_MAGIC, Uint8Array.of(1, 0x08), DIGEST, ...body);
const filled = (n: number, b = 0x61) => new Uint8Array(n).fill(b);

function rejection(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(OtsFormatError);
    return (err as Error).message;
  }
  return 'accepted';
}

describe('limits', () => {
  it('accepts the smallest proof and rejects trailing bytes after it', () => {
    const d = parseDetached(detached(bitcoinItem()));
    expect(walkAttestations(d.timestamp).map((x) => x.attestation)).toEqual([{ kind: 'bitcoin', height: 5 }]);
    expect(rejection(() => parseDetached(detached(bitcoinItem(), Uint8Array.of(0))))).toMatch(/1 trailing bytes/);
    expect(rejection(() => parseTimestamp(concatBytes(bitcoinItem(), Uint8Array.of(0)), DIGEST))).toMatch(/trailing/);
  });

  it('rejects a bad magic, another major version, and every truncation', () => {
    const good = detached(bitcoinItem());
    const badMagic = good.slice();
    badMagic[1] = 0x6f;
    expect(rejection(() => parseDetached(badMagic))).toMatch(/bad magic/);
    const v2 = good.slice();
    v2[HEADER_MAGIC.length] = 2;
    expect(rejection(() => parseDetached(v2))).toMatch(/version 2 is not supported/);
    for (let n = 0; n < good.length; n++)
      expect(rejection(() => parseDetached(good.subarray(0, n)))).not.toBe('accepted');
  });

  it('bounds op arguments to 1..4096 bytes', () => {
    const empty = new Uint8Array(0);
    const append = (n: number) => concatBytes(Uint8Array.of(0xf0), varbytes(filled(n)), bitcoinItem());
    expect(rejection(() => parseTimestamp(append(0), empty))).toMatch(/append argument: length 0 is below 1/);
    expect(walkAttestations(parseTimestamp(append(4096), empty))[0]!.message.length).toBe(4096);
    expect(rejection(() => parseTimestamp(append(4097), empty))).toMatch(/append argument: length 4097 exceeds 4096/);
    expect(() => addOp(newTimestamp(empty), prependOp(new Uint8Array(0)))).toThrow(OtsFormatError);
  });

  it('bounds op results and messages to 4096 bytes', () => {
    const prepend = (n: number) => concatBytes(Uint8Array.of(0xf1), varbytes(filled(n)), bitcoinItem());
    expect(parseDetached(detached(prepend(4064)))).toBeTruthy();
    expect(rejection(() => parseDetached(detached(prepend(4065))))).toMatch(/result too long \(4097 > 4096/);
    expect(rejection(() => newTimestamp(filled(4097)))).toMatch(/message: too long/);
    expect(rejection(() => parseTimestamp(bitcoinItem(), filled(4097)))).toMatch(/too long/);
  });

  it('supports hexlify and reverse within their limits', () => {
    const hexlify = concatBytes(Uint8Array.of(0xf3), bitcoinItem());
    expect(walkAttestations(parseTimestamp(hexlify, Uint8Array.of(0xab, 0x01)))[0]!.message).toEqual(utf8('ab01'));
    expect(walkAttestations(parseTimestamp(hexlify, filled(2048)))[0]!.message.length).toBe(4096);
    expect(rejection(() => parseTimestamp(hexlify, filled(2049)))).toMatch(/hexlify: message too long/);
    expect(rejection(() => parseTimestamp(hexlify, new Uint8Array(0)))).toMatch(/empty/);
    const reverse = concatBytes(Uint8Array.of(0xf2), bitcoinItem());
    expect(walkAttestations(parseTimestamp(reverse, Uint8Array.of(1, 2, 3)))[0]!.message).toEqual(
      Uint8Array.of(3, 2, 1),
    );
    expect(rejection(() => parseTimestamp(reverse, new Uint8Array(0)))).toMatch(/reverse: the message is empty/);
  });

  it('rejects unknown ops, keccak256 and a doubled 0xff', () => {
    expect(rejection(() => parseTimestamp(concatBytes(Uint8Array.of(0x04), bitcoinItem()), DIGEST))).toMatch(
      /unknown op tag 0x04/,
    );
    expect(rejection(() => parseTimestamp(concatBytes(Uint8Array.of(0x67), bitcoinItem()), DIGEST))).toMatch(
      /keccak256/,
    );
    expect(rejection(() => parseTimestamp(concatBytes(Uint8Array.of(0xff, 0xff), bitcoinItem()), DIGEST))).toMatch(
      /0xff/,
    );
  });

  it('bounds attestation payloads to 8192 bytes and pending URIs to 1000 allowed characters', () => {
    const unknown = (n: number) => concatBytes(Uint8Array.of(0), fromHex('0102030405060708'), varbytes(filled(n)));
    expect(walkAttestations(parseTimestamp(unknown(8192), DIGEST))).toHaveLength(1);
    expect(rejection(() => parseTimestamp(unknown(8193), DIGEST))).toMatch(
      /attestation payload: length 8193 exceeds 8192/,
    );
    const pending = (uri: Uint8Array) => concatBytes(Uint8Array.of(0), PENDING_TAG, varbytes(varbytes(uri)));
    const uri1000 = utf8(`https://${'a'.repeat(992)}`);
    const parsed = walkAttestations(parseTimestamp(pending(uri1000), DIGEST))[0]!.attestation;
    expect(parsed.kind === 'pending' && parsed.uri.length).toBe(1000);
    expect(rejection(() => parseTimestamp(pending(utf8(`https://${'a'.repeat(993)}`)), DIGEST))).toMatch(
      /exceeds 1000/,
    );
    expect(rejection(() => parseTimestamp(pending(utf8('https://a.example/?q')), DIGEST))).toMatch(
      /"\?" is not allowed/,
    );
    expect(rejection(() => parseTimestamp(pending(Uint8Array.of(0xc3, 0xa9)), DIGEST))).toMatch(/not allowed/);
    expect(rejection(() => pendingAttestation('https://a.example/#x'))).toMatch(/not allowed/);
    expect(rejection(() => pendingAttestation(`https://${'a'.repeat(993)}`))).toMatch(/longer than 1000/);
  });

  it('requires known attestations to use their whole payload and varuints to be minimal and safe', () => {
    expect(rejection(() => parseTimestamp(bitcoinItem(Uint8Array.of(5, 0)), DIGEST))).toMatch(/1 trailing bytes/);
    expect(rejection(() => parseTimestamp(bitcoinItem(Uint8Array.of(0x85, 0x00)), DIGEST))).toMatch(
      /not minimally encoded/,
    );
    const max = walkAttestations(parseTimestamp(bitcoinItem(varuint(Number.MAX_SAFE_INTEGER)), DIGEST))[0]!.attestation;
    expect(max).toEqual({ kind: 'bitcoin', height: Number.MAX_SAFE_INTEGER });
    const tooBig = Uint8Array.of(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10); // 2^53
    expect(rejection(() => parseTimestamp(bitcoinItem(tooBig), DIGEST))).toMatch(/larger than 2\^53 - 1/);
    expect(rejection(() => bitcoinAttestation(-1))).toMatch(/height/);
    expect(rejection(() => bitcoinAttestation(1.5))).toMatch(/height/);
  });

  it('nests at most 256 levels, as the reference does', () => {
    const chain = (ops: number) => concatBytes(filled(ops, 0x08), bitcoinItem());
    expect(depthOfAttestations(parseTimestamp(chain(255), DIGEST))).toEqual([255]);
    expect(rejection(() => parseTimestamp(chain(256), DIGEST))).toMatch(/nested deeper than 256/);
    const t = newTimestamp(DIGEST);
    let node = t;
    for (let i = 0; i < 256; i++) node = addOp(node, SHA256_OP);
    addAttestation(node, bitcoinAttestation(1));
    expect(rejection(() => serializeTimestamp(t))).toMatch(/nested deeper than 256/);
  });

  it('refuses to write what it could not read back', () => {
    expect(rejection(() => serializeTimestamp(newTimestamp(DIGEST)))).toMatch(/no attestation and no op/);
    const forged: Timestamp = {
      message: DIGEST,
      attestations: [],
      ops: [{ op: SHA256_OP, timestamp: { message: DIGEST, attestations: [{ kind: 'bitcoin', height: 1 }], ops: [] } }],
    };
    expect(rejection(() => serializeTimestamp(forged))).toMatch(/does not lead to the message/);
    expect(rejection(() => newDetached('sha1', DIGEST))).toMatch(/sha1 digests are 20 bytes, got 32/);
    expect(
      rejection(() =>
        addAttestation(newTimestamp(DIGEST), { kind: 'unknown', tag: BITCOIN_TAG, payload: new Uint8Array(0) }),
      ),
    ).toMatch(/known notary/);
  });
});

describe('building and merging', () => {
  it('builds the proof of a calendar commitment with the add-op helpers', () => {
    const d = newDetached('sha256', DIGEST);
    const nonce = fromHex('7c9a2a1b3e4f5d6c7b8a99aabbccddee');
    const node = addOp(addOp(d.timestamp, appendOp(nonce)), SHA256_OP);
    addAttestation(node, pendingAttestation('https://alice.btc.calendar.opentimestamps.org'));
    expect(addOp(d.timestamp, appendOp(nonce))).toBe(d.timestamp.ops[0]!.timestamp);
    const expected = hashFile('sha256', concatBytes(DIGEST, nonce));
    expect(toHex(walkAttestations(d.timestamp)[0]!.message)).toBe(toHex(expected));
    const back = parseDetached(serializeDetached(d));
    expect(walkAttestations(back.timestamp).map(describeAttestation)).toEqual(
      walkAttestations(d.timestamp).map(describeAttestation),
    );
  });

  it("merges a calendar's answer at the pending commitment of a real proof", () => {
    const full = parseVector('hello-world.txt.ots');
    // Cut the real proof after its first five ops: the node there stands for the pending commitment, and the
    // rest of the proof, served as a bare timestamp, for the calendar's answer.
    const path: OtsOp[] = [];
    let node = full.timestamp;
    for (let i = 0; i < 5; i++) {
      expect(node.ops).toHaveLength(1);
      path.push(node.ops[0]!.op);
      node = node.ops[0]!.timestamp;
    }
    const answer = serializeTimestamp(node);
    const pendingProof = newDetached('sha256', full.timestamp.message);
    let leaf = pendingProof.timestamp;
    for (const op of path) leaf = addOp(leaf, op);
    addAttestation(leaf, pendingAttestation('https://alice.btc.calendar.opentimestamps.org'));
    expect(bitcoinAt(pendingProof.timestamp, 358391)).toHaveLength(0);

    expect(mergeTimestamps(pendingProof.timestamp, parseTimestamp(answer, leaf.message))).toBe(1);
    const upgraded = parseDetached(serializeDetached(pendingProof));
    expect(bitcoinAt(upgraded.timestamp, 358391).map(toHex)).toEqual([
      '007ee445d23ad061af4a36b809501fab1ac4f2d7e7a739817dd0cbb7ec661b8a',
    ]);
    expect(walkAttestations(upgraded.timestamp).map((x) => x.attestation.kind)).toEqual(['pending', 'bitcoin']);
    // Merging the same answer again changes nothing.
    mergeTimestamps(pendingProof.timestamp, parseTimestamp(answer, leaf.message));
    expect(toHex(serializeDetached(pendingProof))).toBe(toHex(serializeDetached(upgraded)));
  });

  it('refuses an answer for a message the proof does not contain', () => {
    const t = newTimestamp(DIGEST);
    addAttestation(t, bitcoinAttestation(1));
    const other = newTimestamp(fromHex('00'.repeat(32)));
    addAttestation(other, bitcoinAttestation(2));
    expect(() => mergeTimestamps(t, other)).toThrow(NotFoundError);
  });
});

// --- Properties ---------------------------------------------------------------------------------------------

describe('properties', () => {
  it('random trees round trip, whatever order they were built in', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), planArb, (message, plan) => {
        const t = newTimestamp(message);
        buildFromPlan(t, plan);
        const bytes = serializeTimestamp(t);
        const back = parseTimestamp(bytes, message);
        expect(toHex(serializeTimestamp(back))).toBe(toHex(bytes));
        expect(walkAttestations(back).map(describeAttestation)).toEqual(walkAttestations(t).map(describeAttestation));
        expect(formatTimestampTree(back)).toBe(formatTimestampTree(t));
        const other = newTimestamp(message);
        buildFromPlan(other, plan, true);
        expect(toHex(serializeTimestamp(other))).toBe(toHex(bytes));
      }),
      { numRuns: 300 },
    );
  });

  it('random detached files round trip', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<HashOpKind>('sha256', 'sha1', 'ripemd160'),
        fc.uint8Array(),
        planArb,
        (op, file, plan) => {
          const d = newDetached(op, hashFile(op, file));
          buildFromPlan(d.timestamp, plan);
          const bytes = serializeDetached(d);
          const back = parseDetached(bytes);
          expect(back.fileHashOp).toBe(op);
          expect(toHex(serializeDetached(back))).toBe(toHex(bytes));
        },
      ),
      { numRuns: 200 },
    );
  });

  const mutationArb = fc.array(
    fc.record({
      kind: fc.constantFrom('set', 'insert', 'delete', 'truncate'),
      position: fc.nat(),
      value: fc.integer({ min: 0, max: 255 }),
    }),
    { minLength: 1, maxLength: 4 },
  );

  it('corrupted real proofs fail only with OtsFormatError, and what parses re-serializes stably', () => {
    let parsed = 0;
    let failed = 0;
    fc.assert(
      fc.property(fc.constantFrom(...valid), mutationArb, (v, mutations) => {
        let bytes = Array.from(v.bytes);
        for (const m of mutations) {
          const at = m.position % (bytes.length + 1);
          if (m.kind === 'set' && at < bytes.length) bytes[at] = m.value;
          else if (m.kind === 'insert') bytes.splice(at, 0, m.value);
          else if (m.kind === 'delete') bytes.splice(at, 1);
          else if (m.kind === 'truncate') bytes = bytes.slice(0, at);
        }
        let d;
        try {
          d = parseDetached(Uint8Array.from(bytes));
        } catch (err) {
          expect(err).toBeInstanceOf(OtsFormatError);
          failed++;
          return;
        }
        parsed++;
        const again = serializeDetached(d);
        expect(toHex(serializeDetached(parseDetached(again)))).toBe(toHex(again));
      }),
      { numRuns: 3000 },
    );
    expect(failed).toBeGreaterThan(0);
    expect(parsed).toBeGreaterThan(0);
  });

  it('random bytes as a bare timestamp fail only with OtsFormatError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.uint8Array({ maxLength: 300 }), (message, bytes) => {
        try {
          const t = parseTimestamp(bytes, message);
          expect(toHex(serializeTimestamp(t))).toBe(
            toHex(serializeTimestamp(parseTimestamp(serializeTimestamp(t), message))),
          );
        } catch (err) {
          expect(err).toBeInstanceOf(OtsFormatError);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
