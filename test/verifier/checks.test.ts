// The verifier's logic without a browser: what each input is taken for (table), and verdicts for inputs that
// are incomplete or mismatched, on an archive made by the real pipeline.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ecdsaPublicKeyFromPem, mldsaPublicKeyFromPem } from '../../core/sig.ts';
import { verifyInputs, type KeyInput, type VerifierInputs } from '../../site/offline-verifier/src/checks.ts';
import { classifyFile, classifyText } from '../../site/offline-verifier/src/inputs.ts';
import { buildArchive, DAY1, DAY2, OTS_VECTORS, sha256Hex, type TestArchive } from './helpers.ts';

let archive: TestArchive;
let keys: { ecdsa: KeyInput; mldsa: KeyInput };
const read = (file: string) => classifyFile(path.basename(file), new Uint8Array(fs.readFileSync(file)));

beforeAll(() => {
  archive = buildArchive();
  keys = {
    ecdsa: {
      key: ecdsaPublicKeyFromPem(fs.readFileSync(path.join(archive.keys, 'public.pem'), 'utf8')),
      source: 'test',
    },
    mldsa: { key: new Uint8Array(fs.readFileSync(path.join(archive.keys, 'dilithium_public.key'))), source: 'test' },
  };
}, 60_000);
afterAll(() => fs.rmSync(archive.dir, { recursive: true, force: true }));

describe('the checkpoint keys witnesses know, loaded as .vkey files', () => {
  test('a vkey is taken for a key; the ML-DSA-44 line is checked with it, a wrong key fails it', async () => {
    const ed = read(path.join(archive.keys, 'ed25519.vkey'));
    const ml = read(path.join(archive.keys, 'mldsa44.vkey'));
    expect([ed.kind, (ed.value as Uint8Array).length, ml.kind, (ml.value as Uint8Array).length]).toEqual([
      'vkey',
      32,
      'vkey',
      1312,
    ]);
    const files = archive.dayFiles(DAY1).map(read);
    const rows = (r: Awaited<ReturnType<typeof verifyInputs>>) =>
      r.sections.flatMap((s) => s.checks).map((c) => `${c.label} | ${c.verdict}`);
    const withKey = await verifyInputs({
      files,
      keys: { ...keys, mldsa44: { key: ml.value as Uint8Array, source: 'mldsa44.vkey' } },
    });
    expect(withKey.summary.state, rows(withKey).join('\n')).toBe('ok');
    // Day files without their .ots: verified, and the headline names what was not checked.
    expect(withKey.summary.text).toMatch(
      /^Verified: all \d+ checks passed\. Bitcoin anchor not checked: no \.ots given\.$/,
    );
    expect(rows(withKey)).toContain('Checkpoint ML-DSA-44 cosignature | Verified');
    const other = await verifyInputs({
      files,
      keys: { ...keys, mldsa44: { key: new Uint8Array(1312).fill(5), source: 'other.vkey' } },
    });
    expect(rows(other).some((r) => r.startsWith('Checkpoint ML-DSA-44 cosignature | Verified'))).toBe(false);
    expect(classifyText('x+0000000a+AQ==')).toMatchObject({ kind: 'vkey', problem: expect.any(String) });
  });

  test('a witness policy is read as one, in either published form; a log key in it is not taken for a cosigner, and a damaged one is named', async () => {
    const ed = fs.readFileSync(path.join(archive.keys, 'ed25519.vkey'), 'utf8').trim();
    // keys/witnesses in the c2sp.org/tlog-policy format (core/witness-policy.ts), here naming the log's own key.
    const text = `# a policy\nwitness log ${ed}\nquorum log\n`;
    expect(classifyText(text, 'witnesses')).toMatchObject({ kind: 'witness-policy', value: text });
    expect(classifyText('witness a not-a-vkey\nquorum a\n', 'witnesses')).toMatchObject({
      kind: 'witness-policy',
      problem: expect.stringMatching(/line 1/),
    });
    // The older `quorum N` form is read too (archives made before the change).
    expect(classifyText(`quorum 1\n${ed}\n`, 'witnesses')).toMatchObject({
      kind: 'witness-policy',
      value: `quorum 1\n${ed}\n`,
    });
    expect(classifyText(`quorum 2\n${ed}\n`, 'witnesses')).toMatchObject({
      kind: 'witness-policy',
      problem: expect.stringMatching(/threshold 2/),
    });
    // The log's own Ed25519 key (0x01), whose line the checkpoint has: not a cosignature.
    const files = [...archive.dayFiles(DAY1).map(read), classifyText(text, 'witnesses')!];
    const r = await verifyInputs({ files, keys });
    const rows = r.sections.flatMap((s) => s.checks).map((c) => `${c.label} | ${c.verdict}`);
    expect(rows).toContainEqual(
      expect.stringMatching(
        /^Witnesses \| 0 of the 1 witnesses of the policy cosigned this checkpoint \(quorum log, not met yet/,
      ),
    );
    expect(rows).toContainEqual('Witness policy | log; quorum log');
    expect(rows.filter((x) => x.startsWith('Witness log'))).toEqual([]);
  });
});

describe('classifying inputs', () => {
  test('archive files by name, others by content; a damaged file keeps its kind', async () => {
    const kinds = (files: string[]) => files.map((f) => read(f).kind);
    expect(kinds(archive.dayFiles(DAY1))).toEqual([
      'ledger',
      'ecdsa-signature',
      'mldsa-signature',
      'signatures-meta',
      'checkpoint',
    ]);
    expect(read(archive.bundle).kind).toBe('bundle');
    expect(read(path.join(archive.keys, 'public.pem')).kind).toBe('ecdsa-key');
    expect(read(path.join(archive.keys, 'dilithium_public.pem')).kind).toBe('mldsa-key');
    expect(read(path.join(archive.keys, 'dilithium_public.key')).kind).toBe('mldsa-key');
    expect(read(path.join(OTS_VECTORS, 'opentimestamps-client/hello-world.txt.ots')).kind).toBe('ots');
    expect(read(path.join(OTS_VECTORS, 'headers/block-358391-header.hex')).kind).toBe('header');
    expect(read(archive.document).kind).toBe('document');
    // The bundle under another name, with its first byte (the brace) or its format damaged, is still a bundle.
    const text = fs.readFileSync(archive.bundle, 'utf8');
    expect(classifyFile('x.json', new TextEncoder().encode(`[${text.slice(1)}`)).kind).toBe('bundle');
    expect(
      classifyFile('x.json', new TextEncoder().encode(text.replace('timeseal-proof/1', 'timeseal-proog/1'))).kind,
    ).toBe('bundle');
  });

  test.each([
    ['a'.repeat(64), 'hash'],
    [`  ${'AB'.repeat(32)}\n`, 'hash'],
    ['00'.repeat(80), 'header'],
    ['hello world', undefined],
    ['ab'.repeat(40), undefined],
  ])('pasted %j is %s', (text, kind) => {
    expect(classifyText(text)?.kind).toBe(kind);
  });
});

describe('verdicts', () => {
  const given = (files: string[], extra: Partial<VerifierInputs> = {}): VerifierInputs => ({
    files: files.map(read),
    keys,
    ...extra,
  });
  const rows = (r: Awaited<ReturnType<typeof verifyInputs>>) =>
    r.sections.flatMap((s) => s.checks.map((c) => `${s.title} | ${c.label} | ${c.verdict}`));

  test('nothing given: nothing to say yet', async () => {
    expect((await verifyInputs({ files: [], keys })).summary.state).toBe('empty');
  });

  test('a bundle without the document is not verified yet, and says what to add', async () => {
    const r = await verifyInputs(given([archive.bundle]));
    expect(r.summary.state).toBe('pending');
    expect(r.summary.text).toMatch(/^Not verified: no document given/);
    expect(rows(r)).toContain(`Proof bundle proof.json | Inclusion proof leads to the checkpoint root | Verified`);
  });

  test('a ledger without some of its files names the missing ones', async () => {
    const [ledger, ecdsaSig] = archive.dayFiles(DAY2);
    const r = await verifyInputs(given([ledger!, ecdsaSig!]));
    expect(r.summary.text).toBe(
      `Not verified: ${DAY2}.json.dilithium.sig is missing (Ledger ${DAY2}: ML-DSA-65 signature)`,
    );
    expect(rows(r)).toContain(
      `Ledger ${DAY2} | Ledger format, signature metadata and the day's checkpoint | Not verified: missing ${DAY2}.json.dilithium.sig, ${DAY2}.json.signatures.json, ${DAY2}.checkpoint`,
    );
    expect(rows(r)).toContain(`Ledger ${DAY2} | ECDSA P-256 signature | Verified`);
  });

  test("one day's signature given for another day's ledger fails", async () => {
    const files = archive.dayFiles(DAY2).map((f, i) => (i === 1 ? archive.dayFiles(DAY1)[1]! : f));
    const copy = path.join(archive.dir, `${DAY2}.json.sig`);
    fs.copyFileSync(files[1]!, copy);
    files[1] = copy;
    expect((await verifyInputs(given(files))).summary.text).toMatch(
      new RegExp(`^Not verified: ${DAY2}\\.json\\.sig: signature does not verify`),
    );
  });

  test('a block header alone: its proof of work is checked and it waits for the proof it should confirm', async () => {
    const r = await verifyInputs(given([path.join(OTS_VECTORS, 'headers/block-358391-header.hex')]));
    expect(rows(r)).toContain('Block header block-358391-header.hex | Proof of work | Verified');
    expect(r.summary.text).toMatch(/^Not verified: add the \.ots file/);
  });

  test('the document hash must match the .ots digest', async () => {
    const ots = path.join(OTS_VECTORS, 'opentimestamps-client/hello-world.txt.ots');
    const r = await verifyInputs(given([ots], { document: { hash: sha256Hex('other'), source: 'test' } }));
    expect(r.summary.text).toMatch(
      /^Not verified: the \.ots is for 03ba204e50d126e4674c005e04d82e84c21366780af1f43bd54a37816b6ab340, not your document's hash/,
    );
  });

  test("the day's COSE receipt signatures: checked over its ledger's root with the receipt keys, never taken for the document", async () => {
    const signatures = ['es256', 'mldsa65'].map((k) => path.join(archive.ledgers, `${DAY1}.receipt-${k}.cose`));
    expect(signatures.map((f) => read(f).kind)).toEqual(['day-receipt-signature', 'day-receipt-signature']);
    const pem = (name: string) => fs.readFileSync(path.join(archive.keys, name), 'utf8');
    const receiptKeys = {
      receiptEs256: { key: ecdsaPublicKeyFromPem(pem('receipt-es256.pem')), source: 'test' },
      receiptMldsa65: { key: mldsaPublicKeyFromPem(pem('receipt-mldsa65.pem')), source: 'test' },
    };
    const withKeys = { keys: { ...keys, ...receiptKeys } };
    const ok = await verifyInputs(given([...archive.dayFiles(DAY1), ...signatures], withKeys));
    expect(ok.summary.state, ok.summary.text).toBe('ok');
    const sig = rows(ok).filter((r) => r.includes('COSE receipt signature of the day'));
    expect(sig).toHaveLength(2);
    expect(sig.every((r) => r.endsWith('| Verified'))).toBe(true);
    // With another day's files beside it, it is checked over its own day's ledger.
    const other = await verifyInputs(
      given([...archive.dayFiles(DAY2), path.join(archive.ledgers, `${DAY1}.json`), signatures[0]!], withKeys),
    );
    expect(rows(other).find((r) => r.includes('COSE receipt signature'))).toMatch(/\| Verified$/);
    const bytes = fs.readFileSync(signatures[0]!);
    bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 0x01;
    const changed = path.join(archive.dir, `${DAY1}.receipt-es256.cose`);
    fs.writeFileSync(changed, bytes);
    const bad = await verifyInputs(given([...archive.dayFiles(DAY1), changed], withKeys));
    expect(bad.summary.text).toMatch(/^Not verified: receipt signature \(ES256\) over root [0-9a-f]{64}/);
    const alone = await verifyInputs(given([signatures[0]!], withKeys));
    expect(rows(alone).join('\n')).toContain(`add the ledger of ${DAY1} (${DAY1}.json) to check it`);
  });
});
