// The offline verifier reads a timeseal-client proof file (`<file>.timeseal.json`, timeseal-client-proof/1:
// client/src/types.ts ProofFile) as the proof bundle, receipt and block headers it holds, and gives the verdict
// it gives for the bundle alone: it answered a valid one "Not verified: proof: unknown field file" (it took the
// whole file for a bundle). The proof file is the one the client writes once the day is published: the server's
// bundle as `timeseal proof` prints it, on an archive made by the real pipeline.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ecdsaPublicKeyFromPem } from '../../core/sig.ts';
import { verifyInputs, type KeyInput, type VerifierInputs } from '../../site/offline-verifier/src/checks.ts';
import { classifyFile, type ClassifiedInput } from '../../site/offline-verifier/src/inputs.ts';
import { buildArchive, DAY1, type TestArchive } from './helpers.ts';

let archive: TestArchive;
let keys: { ecdsa: KeyInput; mldsa: KeyInput };

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

/** A proof file as timeseal-client writes it after the day's publication (the bundle fetched, no receipt). */
function proofFile(bundle: Record<string, unknown>): Uint8Array {
  const file = {
    format: 'timeseal-client-proof/1',
    hash: archive.documentHash,
    file: 'contract.txt',
    server: 'https://timeseal.test',
    submittedAt: `${DAY1}T09:15:00.123Z`,
    ledgerDate: DAY1,
    receipt: null,
    bundle,
    consistency: null,
    headers: [],
    updatedAt: '2025-11-03T00:02:00.000Z',
  };
  return new TextEncoder().encode(`${JSON.stringify(file, null, 2)}\n`);
}

const withDocument = (files: ClassifiedInput[]): VerifierInputs => ({
  files,
  keys,
  document: { hash: archive.documentHash, source: 'contract.txt' },
});

describe('a timeseal-client proof file on the offline page', () => {
  test('valid: classified as a client proof file and verified as its bundle is', async () => {
    const bundle = JSON.parse(fs.readFileSync(archive.bundle, 'utf8')) as Record<string, unknown>;
    const input = classifyFile('contract.txt.timeseal.json', proofFile(bundle));
    expect(input.kind).toBe('client-proof');
    const fromFile = await verifyInputs(withDocument([input]));
    const alone = await verifyInputs(
      withDocument([classifyFile('proof.json', new Uint8Array(fs.readFileSync(archive.bundle)))]),
    );
    expect(fromFile.summary.state, fromFile.summary.text).toBe('ok');
    expect(fromFile.summary.state).toBe(alone.summary.state);
    const verdicts = (r: typeof alone) => r.sections.flatMap((s) => s.checks.map((c) => `${c.label} | ${c.verdict}`));
    expect(verdicts(fromFile)).toEqual(verdicts(alone));
    expect(JSON.stringify(fromFile)).not.toMatch(/unknown field/);
  });

  test('tampered: the bundle inside it with another leaf index is not verified', async () => {
    const bundle = JSON.parse(fs.readFileSync(archive.bundle, 'utf8')) as Record<string, unknown>;
    const tampered = { ...bundle, leaf_index: (bundle.leaf_index as number) + 1 };
    const r = await verifyInputs(withDocument([classifyFile('contract.txt.timeseal.json', proofFile(tampered))]));
    expect(r.summary.state).toBe('fail');
    expect(r.summary.text).toMatch(/^Not verified: /);
    expect(r.summary.text).not.toMatch(/unknown field/);
  });
});
