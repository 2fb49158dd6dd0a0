// The offline verifier's ECDSA P-256 (site/offline-verifier/src/p256.ts): Web Crypto in place of @noble/curves,
// resolved for core/sig.ts by the page's build. Here the same substitution is made under Node (vi.mock), so
// core/'s checks run exactly as in the page: a signature is verified only once Web Crypto has checked it, over
// the message or (the ledger's .sig, signed as a digest) the file whose SHA-256 it is. Compared with
// @noble/curves on real signatures, strict DER, high-S, the compact form, and points off the curve; then the
// verifier's checks on a real archive made by the pipeline, which verify, and fail with the reason once one
// byte of a signature changes.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';

vi.mock('@noble/curves/nist.js', () => import('../../site/offline-verifier/src/p256.ts'));

const { p256: noble } = await vi.importActual<typeof import('@noble/curves/nist.js')>('@noble/curves/nist.js');
const { p256, settled } = await import('../../site/offline-verifier/src/p256.ts');
const { ecdsaPublicKeyFromPem, ecdsaVerify, ecdsaVerifyDigest } = await import('../../core/sig.ts');
const { verifyInputs } = await import('../../site/offline-verifier/src/checks.ts');
const { classifyFile } = await import('../../site/offline-verifier/src/inputs.ts');
const { buildArchive, DAY1, DAY2, corruptCopy, tempDir } = await import('./helpers.ts');

const utf8 = (s: string) => new TextEncoder().encode(s);
const sha = (m: Uint8Array) => new Uint8Array(crypto.createHash('sha256').update(m).digest());

describe('p256.ts against @noble/curves', () => {
  const { secretKey } = noble.keygen(new Uint8Array(48).fill(7));
  const publicKey = noble.getPublicKey(secretKey, false);
  const message = utf8('a checkpoint text\n');
  const der = noble.sign(message, secretKey, { prehash: true, lowS: true, format: 'der' });
  const compact = noble.sign(message, secretKey, { prehash: true, lowS: true, format: 'compact' });

  test('core/sig.ts verifies through it only what Web Crypto checked: a pass, the answers, then the verdicts', async () => {
    const other = utf8('another text\n');
    const verdicts = await settled(async () => [
      ecdsaVerify(message, der, publicKey),
      ecdsaVerify(message, compact, publicKey),
      ecdsaVerify(other, der, publicKey),
    ]);
    expect(verdicts).toEqual([true, true, false]);
    // Outside a run, an answer it has not had is no: never valid by default.
    expect(ecdsaVerify(utf8('never asked\n'), der, publicKey)).toBe(false);
  });

  test('a digest signed as is (a ledger .sig) is checked over the file that has that SHA-256, else not valid', async () => {
    const ledger = utf8('{"format":"timeseal-ledger/1"}\n');
    const sig = noble.sign(ledger, secretKey, { prehash: true, lowS: true, format: 'der' });
    expect(await settled(async () => ecdsaVerifyDigest(sha(ledger), sig, publicKey), [ledger])).toBe(true);
    const unknown = utf8('a file the page was not given\n');
    const sig2 = noble.sign(unknown, secretKey, { prehash: true, lowS: true, format: 'der' });
    expect(await settled(async () => ecdsaVerifyDigest(sha(unknown), sig2, publicKey), [ledger])).toBe(false);
  });

  test('strict DER as @noble/curves reads it; high-S accepted as there', async () => {
    const n = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
    const sig = noble.Signature.fromBytes(compact, 'compact');
    const high = new noble.Signature(sig.r, n - sig.s).toBytes('der');
    // A zero byte before r that DER does not allow (non-minimal), a longer outer length, trailing bytes.
    const r = der.subarray(4, 4 + der[3]!);
    const padded = Uint8Array.from([0x30, der[1]! + 1, 0x02, r.length + 1, 0, ...r, ...der.subarray(4 + r.length)]);
    const variants = [
      der,
      high,
      padded,
      Uint8Array.from([...der, 0]),
      Uint8Array.from([0x30, der[1]! + 1, ...der.subarray(2)]),
    ];
    for (const v of variants) {
      const ours = await settled(async () => ecdsaVerify(message, v, publicKey));
      expect(ours, Buffer.from(v).toString('hex')).toBe(
        noble.verify(v, message, publicKey, { prehash: true, lowS: false, format: 'der' }),
      );
    }
    expect(await settled(async () => ecdsaVerify(message, high, publicKey))).toBe(true);
    expect(await settled(async () => ecdsaVerify(message, padded, publicKey))).toBe(false);
  });

  test('every single flipped byte of a DER signature is not valid', async () => {
    for (let i = 0; i < der.length; i++) {
      const bad = Uint8Array.from(der);
      bad[i]! ^= 0x01;
      expect(await settled(async () => ecdsaVerify(message, bad, publicKey)), `byte ${i}`).toBe(false);
    }
  });

  test('public keys: on the curve or not, as @noble/curves says', () => {
    expect(p256.utils.isValidPublicKey(publicKey)).toBe(true);
    for (const i of [1, 20, 33, 64]) {
      const bad = Uint8Array.from(publicKey);
      bad[i]! ^= 0x01;
      expect(p256.utils.isValidPublicKey(bad)).toBe(noble.utils.isValidPublicKey(bad, false));
      expect(p256.utils.isValidPublicKey(bad)).toBe(false);
    }
    expect(p256.utils.isValidPublicKey(publicKey.subarray(0, 33))).toBe(false);
  });
});

describe("the verifier's checks with p256.ts, on a real archive", () => {
  let archive: ReturnType<typeof buildArchive>;
  let work: string;
  beforeAll(() => {
    archive = buildArchive();
    work = tempDir('p256');
  }, 60_000);
  afterAll(() => {
    for (const d of [archive?.dir, work]) if (d) fs.rmSync(d, { recursive: true, force: true });
  });

  const read = (file: string) => classifyFile(path.basename(file), new Uint8Array(fs.readFileSync(file)));
  async function check(files: string[]) {
    const inputs = {
      files: files.map(read),
      keys: {
        ecdsa: {
          key: ecdsaPublicKeyFromPem(fs.readFileSync(path.join(archive.keys, 'public.pem'), 'utf8')),
          source: 'test',
        },
        mldsa: {
          key: new Uint8Array(fs.readFileSync(path.join(archive.keys, 'dilithium_public.key'))),
          source: 'test',
        },
      },
      document: { hash: archive.documentHash, source: 'test' },
    };
    let passes = 0;
    const report = await settled(
      () => (passes++, verifyInputs(inputs)),
      inputs.files.filter((f) => f.kind === 'ledger').map((f) => f.bytes),
    );
    return {
      report,
      passes,
      rows: report.sections.flatMap((s) => s.checks.map((c) => `${s.title} | ${c.label} | ${c.verdict}`)),
    };
  }

  test('the bundle and two days verify in one pass (every signature it took as valid is)', async () => {
    const { report, passes, rows } = await check([
      archive.bundle,
      ...archive.dayFiles(DAY1),
      ...archive.dayFiles(DAY2),
    ]);
    expect(report.summary.state, rows.join('\n')).toBe('ok');
    expect(rows).toContain(`Ledger ${DAY1} | ECDSA P-256 signature | Verified`);
    expect(rows).toContain(`Ledger ${DAY1} | Ledger format, signature metadata and the day's checkpoint | Verified`);
    expect(rows).toContain('Proof bundle proof.json | Checkpoint ECDSA P-256 signature | Verified');
    expect(passes).toBe(1);
    // Checked again (the page does so on every change): the answers are known, one pass.
    expect((await check([archive.bundle, ...archive.dayFiles(DAY1)])).passes).toBe(1);
  });

  test('a changed byte of the .sig, or of the ECDSA line of the checkpoint, is not verified, with the reason', async () => {
    const [, sig, , , checkpoint] = archive.dayFiles(DAY1) as [string, string, string, string, string];
    for (const at of [8, 30, 60]) {
      const bad = corruptCopy(sig, fs.mkdtempSync(path.join(work, 's')), at);
      const { report, rows, passes } = await check(archive.dayFiles(DAY1).map((f) => (f === sig ? bad : f)));
      // The first pass took the changed signature as valid: it is thrown away, the second has Web Crypto's no.
      expect(passes).toBe(2);
      expect(report.summary.text).toMatch(/^Not verified: 2025-11-01\.json\.sig: signature does not verify/);
      expect(rows).toContain(
        `Ledger ${DAY1} | ECDSA P-256 signature | Not verified: ${DAY1}.json.sig: signature does not verify`,
      );
    }
    // The first signature line of the checkpoint is the ECDSA one: a byte of its base64 changed.
    const text = fs.readFileSync(checkpoint, 'latin1');
    const at = text.indexOf('\u00e2\u0080\u0094 ') + 40;
    const c = text.charCodeAt(at);
    const bad = path.join(fs.mkdtempSync(path.join(work, 'c')), path.basename(checkpoint));
    fs.writeFileSync(
      bad,
      Buffer.from(text.slice(0, at) + String.fromCharCode(c === 0x41 ? 0x42 : 0x41) + text.slice(at + 1), 'latin1'),
    );
    const { report } = await check(archive.dayFiles(DAY1).map((f) => (f === checkpoint ? bad : f)));
    expect(report.summary.state).toBe('fail');
    expect(report.summary.text).toMatch(
      /^Not verified: 2025-11-01\.checkpoint: note: ECDSA-P256-SHA256 line of .* signature does not verify/,
    );
  });
});
