// Timestamped PDFs against a real `timeseal serve`: `timeseal-client stamp --pdf` (client/src/cli/pdf.ts, run
// from source) writes FILE.timestamped.pdf with a token from POST /tsa — the server receives only the digest
// over the ByteRange (its database holds that one hash, nothing of the PDF) — never over the input, not over an
// existing output without --force, and refuses an encrypted PDF with its sentence, sending nothing. The token in
// the file verifies with `openssl ts -verify` against keys/timeseal-tsa-root.pem (and not after one flipped byte of
// what it covers), qpdf --check passes, and a signature made before it by PDFBox still validates in pdfsig.
// `timeseal-client verify` checks it offline (exit 2, valid so far), `timeseal receipt check --pdf` finds it
// pending before the day's build (exit 2) and kept after (exit 0: the leaf and its inclusion proof in the day's
// signed ledger), broken for a digest deleted before the build (and so do the offline verifier's checks). The
// proof file of the time-stamp's digest `stamp --pdf` writes beside its output is completed by `upgrade` (of the
// PDF, or of its folder), and then `timeseal-client verify` finds the promise kept too (exit 0), offline; a
// changed character of that proof's checkpoint root makes it invalid, a bundle recording the digest after the
// token's time makes the promise broken, and a proof not upgraded leaves it pending. A PDF stamped by the site's
// code (site/src/lib/pdf-stamp.ts, run here against the server) has no proof file: verify says pending and names
// `upgrade --server`, which writes the proof of its digest beside it, and verify then finds it kept. `upgrade`
// of the deleted digest's proof, once its day is published, says the promise is broken (exit 1) and keeps the day's
// signed ledger beside it (openssl verifies its ECDSA signature; the digest is not in it): verify then says broken
// offline (exit 1), and a changed byte of the kept ledger, or its absence, is invalid, naming it; upgrade again
// checks the kept ledger without downloading it, and fetches it again once it is gone. A
// flipped byte, another TSA root and an unstamped PDF are invalid (exit 1); a signature added after the
// time-stamp is reported as bytes it does not cover.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { projectEnv, startServer, type SpawnedServer } from '../../ingest/test/fixture.ts';
import { removeTempProjects, run, runJson, tempProject } from '../cli/helpers.ts';
import { inspect } from '../../core/pdf-timestamp.ts';
import { pemCertificates } from '../../core/rfc3161.ts';
import { ecdsaPublicKeyFromPem } from '../../core/sig.ts';
import { verifyInputs } from '../../site/offline-verifier/src/checks.ts';
import { classifyFile } from '../../site/offline-verifier/src/inputs.ts';
import { stampPdfFile } from '../../site/src/lib/pdf-stamp.ts';
import { byteRangesOf, covered, fixture, gapToken, inflate, pdfbox, tool } from './tools.ts';
import { clientFromSource } from '../support/client-source.ts';
import { freePort } from '../support/servers.ts';

const DAY = '2025-11-02';
const NOW = `${DAY}T12:00:00.250Z`;
const NEXT = '2025-11-03T00:01:00.000Z';
const LATER = '2025-11-03T09:00:00.000Z';

let dir: string;
let env: Record<string, string>;
let server: SpawnedServer | undefined;
let java: ReturnType<typeof pdfbox>;

const client = (args: string[]) => clientFromSource(dir, args);
const clientJson = (args: string[]) => {
  const r = client([...args, '--json']);
  return { r, json: JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, any> };
};
const check = (file: string, extra: string[] = [], now = NEXT) =>
  runJson(dir, ['receipt', 'check', '--pdf', file, ...extra], { env: { ...env, TIMESEAL_NOW: now } });
const submitted = (): string[] => {
  const db = new Database(path.join(dir, 'data/timeseal.db'), { readonly: true });
  try {
    return (db.prepare('SELECT hash FROM submissions ORDER BY hash').all() as Array<{ hash: string }>).map(
      (r) => r.hash,
    );
  } finally {
    db.close();
  }
};
/** The SHA-256 over the ByteRange of a stamped file's first time-stamp (what its token is for), hex. */
const digestOf = async (file: string): Promise<string> => {
  const report = await inspect(new Uint8Array(fs.readFileSync(path.join(dir, file))), { inflate });
  return Buffer.from(report.signatures[0]!.digest).toString('hex');
};
const stop = async () => {
  if (server && server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  server = undefined;
};

beforeAll(async () => {
  dir = tempProject('pdf');
  // One port before and after the day's build: the proof file names the server by its URL.
  env = projectEnv(dir, { LOG_FORMAT: 'json', PORT: String(await freePort()) });
  const init = run(dir, ['keys', 'init'], { env: { ...env, TIMESEAL_NOW: `${DAY}T00:00:00.000Z` } });
  expect(init.code, init.stderr).toBe(0);
  java = pdfbox(fs.mkdtempSync(path.join(dir, 'java-')));
  fs.writeFileSync(path.join(dir, 'contract.pdf'), fixture('form.pdf'));
  java.sign(path.join(dir, 'contract.pdf'), path.join(dir, 'signed.pdf'));
  fs.writeFileSync(path.join(dir, 'spec.pdf'), fixture('shared-mime-info-spec.pdf'));
  const enc = tool('qpdf', [
    '--encrypt',
    'u',
    'o',
    '256',
    '--',
    path.join(dir, 'contract.pdf'),
    path.join(dir, 'locked.pdf'),
  ]);
  expect(enc.code, enc.stderr).toBe(0);
  server = await startServer(dir, { ...env, TIMESEAL_NOW: NOW });
}, 120_000);
afterAll(async () => {
  await stop();
  removeTempProjects();
});

describe('timeseal-client stamp --pdf, then verify, then timeseal receipt check --pdf', () => {
  let digest: string;
  let browserDigest: string;

  test('stamp: FILE.timestamped.pdf, the input a prefix of it, only the digest sent; openssl, qpdf and pdfsig accept it', () => {
    const before = submitted();
    const { r, json } = clientJson(['stamp', '--pdf', 'signed.pdf', '--server', server!.url]);
    expect(r.code, r.stderr).toBe(0);
    expect(json).toMatchObject({
      state: 'stamped',
      output: 'signed.timestamped.pdf',
      proof: 'signed.timestamped.pdf.timeseal.json',
      ledgerDate: DAY,
      genTime: NOW,
    });
    digest = json.digest as string;
    // Beside it, the proof file of that digest (not of the PDF's bytes: no `file`), holding the receipt.
    const proof = JSON.parse(fs.readFileSync(path.join(dir, 'signed.timestamped.pdf.timeseal.json'), 'utf8'));
    expect(proof).toMatchObject({ format: 'timeseal-client-proof/1', hash: digest, file: null, ledgerDate: DAY });
    expect(proof.receipt).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(proof.bundle).toBeNull();
    // The server received the one digest, nothing else.
    expect(submitted()).toEqual([...before, digest].sort());
    const input = path.join(dir, 'signed.pdf');
    const output = path.join(dir, 'signed.timestamped.pdf');
    expect(tool('cmp', ['-n', String(fs.statSync(input).size), input, output]).code).toBe(0);
    expect(tool('qpdf', ['--check', output]).code).toBe(0);
    const out = new Uint8Array(fs.readFileSync(output));
    const range = byteRangesOf(out).at(-1)!;
    fs.writeFileSync(path.join(dir, 'covered.bin'), covered(out, range));
    fs.writeFileSync(path.join(dir, 'token.der'), gapToken(out, range));
    const verifyArgs = [
      'ts',
      '-verify',
      '-data',
      'covered.bin',
      '-in',
      'token.der',
      '-token_in',
      '-CAfile',
      'keys/timeseal-tsa-root.pem',
    ];
    const v = tool('openssl', verifyArgs, dir);
    expect(v.stdout, v.stderr).toMatch(/Verification: OK/);
    // One byte of the covered range flipped (in the signed original): openssl refuses the token.
    const flipped = covered(out, range);
    flipped[flipped.length >> 1] = flipped[flipped.length >> 1]! ^ 0x20;
    fs.writeFileSync(path.join(dir, 'covered-flipped.bin'), flipped);
    const bad = tool(
      'openssl',
      [...verifyArgs.slice(0, 2), '-data', 'covered-flipped.bin', ...verifyArgs.slice(4)],
      dir,
    );
    expect(bad.stdout).not.toMatch(/Verification: OK/);
    expect(`${bad.stdout}${bad.stderr}`).toMatch(/Verification: FAILED[\s\S]*message imprint mismatch/);
    const sig = tool('pdfsig', [output]).stdout;
    expect(sig).toMatch(
      /Signature #1:[\s\S]*?Signature Validation: Signature is Valid\.[\s\S]*Signature #2:\n\s+- Signature Field Name: Timeseal time-stamp/,
    );
    expect(sig).toMatch(/Signer Certificate Common Name: Timeseal TSA/);
  });

  test('stamp never overwrites: the output exists → refused (exit 1) unless --force; the input is never the output', () => {
    const again = client(['stamp', '--pdf', 'signed.pdf', '--server', server!.url]);
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(
      /signed\.timestamped\.pdf exists already: move it away, or give --force to replace it/,
    );
    fs.writeFileSync(path.join(dir, 'spec.timestamped.pdf'), 'mine');
    expect(client(['stamp', '--pdf', 'spec.pdf', '--server', server!.url]).code).toBe(1);
    expect(fs.readFileSync(path.join(dir, 'spec.timestamped.pdf'), 'utf8')).toBe('mine');
    const forced = client(['stamp', '--pdf', 'spec.pdf', '--force', '--server', server!.url]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'spec.timestamped.pdf')).subarray(0, 5).toString()).toBe('%PDF-');
    expect(fs.readFileSync(path.join(dir, 'spec.pdf'))).toEqual(Buffer.from(fixture('shared-mime-info-spec.pdf')));
  });

  test('an encrypted PDF: one sentence, nothing sent, nothing written', () => {
    const before = submitted();
    const r = client(['stamp', '--pdf', 'locked.pdf', '--server', server!.url]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'locked.pdf: REFUSED: This PDF is encrypted, so a time-stamp cannot be added without its password: save an unencrypted copy and stamp that.',
    );
    expect(submitted()).toEqual(before);
    expect(fs.existsSync(path.join(dir, 'locked.timestamped.pdf'))).toBe(false);
  });

  test('a damaged PDF (its end cut off): one sentence, nothing sent, nothing written', () => {
    const whole = fs.readFileSync(path.join(dir, 'contract.pdf'));
    fs.writeFileSync(path.join(dir, 'cut.pdf'), whole.subarray(0, whole.length - 200));
    const before = submitted();
    const r = client(['stamp', '--pdf', 'cut.pdf', '--server', server!.url]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^cut\.pdf: REFUSED: This PDF is damaged: [^\n]+\.\n$/);
    expect(submitted()).toEqual(before);
    expect(fs.existsSync(path.join(dir, 'cut.timestamped.pdf'))).toBe(false);
  });

  test('a PDF stamped by the site\'s code (the drop zone\'s "Timestamp this PDF"): no proof file, the client says pending (2) and names upgrade --server', async () => {
    // site/src/lib/pdf-stamp.ts as the page runs it, its same-origin requests sent to the server.
    const pageFetch = globalThis.fetch;
    globalThis.fetch = (input, init) => pageFetch(new URL(String(input), server!.url), init);
    let outcome: Awaited<ReturnType<typeof stampPdfFile>>;
    try {
      outcome = await stampPdfFile(new File([fs.readFileSync(path.join(dir, 'contract.pdf'))], 'browser.pdf'));
    } finally {
      globalThis.fetch = pageFetch;
    }
    if (outcome.kind !== 'stamped') throw new Error(`not stamped: ${outcome.reason}`);
    expect(outcome).toMatchObject({ name: 'browser.timestamped.pdf', ledgerDate: DAY, genTime: NOW });
    browserDigest = outcome.digest;
    fs.writeFileSync(path.join(dir, 'browser.timestamped.pdf'), outcome.bytes);
    const v = clientJson(['verify', 'browser.timestamped.pdf']);
    expect(v.r.code, v.r.stdout + v.r.stderr).toBe(2);
    expect(v.json.timeStamps[0]).toMatchObject({ state: 'valid', server: server!.url, digest: browserDigest });
    expect(v.json.timeStamps[0].promise).toMatchObject({ state: 'pending', proof: false, hash: browserDigest });
    expect(v.json.timeStamps[0].promise.checked).toContain(
      `run timeseal-client upgrade on this PDF with --server ${server!.url} once the day is published`,
    );
  });

  test('before the day is built: the client finds it valid so far (2), receipt check --pdf pending (2)', () => {
    const v = clientJson(['verify', 'signed.timestamped.pdf']);
    expect(v.r.code, v.r.stdout + v.r.stderr).toBe(2);
    expect(v.json.state).toBe('pending');
    expect(v.json.timeStamps).toHaveLength(1);
    expect(v.json.timeStamps[0]).toMatchObject({
      state: 'valid',
      server: server!.url,
      digest,
      token: { genTime: NOW },
    });
    expect(v.json.timeStamps[0].promise).toMatchObject({
      state: 'pending',
      date: DAY,
      hash: digest,
      proof: true,
      proofFile: 'signed.timestamped.pdf.timeseal.json',
    });
    expect(v.json.otherSignatures).toBe(1);
    expect(v.json.afterLastTimeStamp.kind).toBe('validation-data');
    const human = client(['verify', 'signed.timestamped.pdf']);
    expect(human.stdout).toMatch(
      /^signed\.timestamped\.pdf: PENDING \(valid so far\): 1 document time-stamp, existed no later than 2025-11-02T12:00:00\.250Z/m,
    );
    expect(human.stdout).toMatch(
      /^ {2}pending promise 1 {7}the ledger of 2025-11-02 must hold [0-9a-f]{64}: its proof file does not hold the day's ledger yet \(run timeseal-client upgrade once the day is published, 00:01 UTC the next day\) \(its proof file signed\.timestamped\.pdf\.timeseal\.json\)$/m,
    );

    const { result, json } = check('signed.timestamped.pdf', [], '2025-11-02T18:00:00.000Z');
    expect(result.code, result.stderr).toBe(2);
    expect(json.state).toBe('pending');
    expect(json.timeStamps[0]).toMatchObject({ state: 'pending', digest, ledger: { date: DAY, hash: digest } });
  });

  test('after the build: kept (exit 0), with the inclusion proof; the DSS update named as validation data', async () => {
    await stop();
    // The broken promise, staged: spec.timestamped.pdf's acknowledged digest disappears before the build.
    const db = new Database(path.join(dir, 'data/timeseal.db'));
    expect(
      db.prepare('DELETE FROM submissions WHERE hash = ?').run(await digestOf('spec.timestamped.pdf')).changes,
    ).toBe(1);
    db.close();
    const built = run(dir, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: NEXT } });
    expect(built.code, built.stderr).toBe(0);
    const { result, json } = check('signed.timestamped.pdf');
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(json.state).toBe('kept');
    expect(json.timeStamps[0].promise).toMatchObject({ state: 'kept', date: DAY, recordedAt: NOW });
    expect(json.afterLastTimeStamp.kind).toBe('validation-data');
    const human = run(dir, ['receipt', 'check', '--pdf', 'signed.timestamped.pdf'], {
      env: { ...env, TIMESEAL_NOW: NEXT },
    });
    expect(human.stdout).toMatch(/^\s+KEPT: the signed ledger of 2025-11-02 holds it at leaf \d+/m);
    expect(human.stdout).toMatch(/after the last time-stamp: \d+ bytes after the last time-stamp are a DSS update/);
    expect(human.stdout).toMatch(/^KEPT: the time-stamp check and every Timeseal promise is kept\.$/m);
  });

  test('the client: upgrade completes the proof beside the PDF, then verify finds its promise kept (exit 0), offline', async () => {
    server = await startServer(dir, { ...env, TIMESEAL_NOW: LATER });
    try {
      const up = clientJson(['upgrade', 'signed.timestamped.pdf']);
      expect(up.r.code, up.r.stdout + up.r.stderr).toBe(2); // the Bitcoin anchor is still to come
      expect(up.json).toMatchObject({
        proof: 'signed.timestamped.pdf.timeseal.json',
        hash: digest,
        stage: 'published',
      });
      // The folder: every proof in it, that of the PDF's digest among them (spec.timestamped.pdf's: not published).
      const folder = client(['upgrade', '.', '--json']);
      const records = folder.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(records.map((r) => r.proof)).toEqual(
        expect.arrayContaining(['signed.timestamped.pdf.timeseal.json', 'spec.timestamped.pdf.timeseal.json']),
      );
      // `stamp` of the PDF as a file: the proof beside it is its time-stamp's, upgraded, not a changed document.
      const again = clientJson(['stamp', 'signed.timestamped.pdf', '--server', server!.url]);
      expect(again.r.code, again.r.stdout + again.r.stderr).toBe(0);
      expect(again.json).toMatchObject({ file: 'signed.timestamped.pdf', action: 'unchanged', stage: 'published' });
    } finally {
      await stop();
    }
    const v = clientJson(['verify', 'signed.timestamped.pdf']);
    expect(v.r.code, v.r.stdout + v.r.stderr).toBe(0);
    expect(v.json.state).toBe('complete');
    expect(v.json.timeStamps[0]).toMatchObject({ state: 'valid', digest });
    expect(v.json.timeStamps[0].promise).toMatchObject({
      state: 'kept',
      date: DAY,
      hash: digest,
      proofFile: 'signed.timestamped.pdf.timeseal.json',
    });
    const human = client(['verify', 'signed.timestamped.pdf']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(
      /^signed\.timestamped\.pdf: COMPLETE: 1 document time-stamp, existed no later than 2025-11-02T12:00:00\.250Z \([^)]*Timeseal TSA[^)]*\); its promise kept$/m,
    );
    expect(human.stdout).toMatch(
      /^ {2}ok {6}promise 1 {7}kept: the ledger of 2025-11-02 holds [0-9a-f]{64}: leaf \d+ of the log /m,
    );
    // Verifying the folder reads the PDF as a timestamped PDF with its proof, not as a document whose bytes changed.
    const all = client(['verify', '.', '--json']);
    const allRecords = all.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { file: string; state: string });
    const pdfRecord = allRecords.find((r) => r.file === 'signed.timestamped.pdf');
    expect(pdfRecord, all.stdout).toMatchObject({ state: 'complete' });
    // The day's ledger the folder's upgrade kept for spec.timestamped.pdf (below) is not a document of the folder.
    expect(allRecords.filter((r) => r.file.startsWith('timeseal-ledgers'))).toEqual([]);
    // The PDF whose day was published without its digest: broken, from the kept ledger, in the folder's verify too.
    expect(allRecords.find((r) => r.file === 'spec.timestamped.pdf')).toMatchObject({ state: 'broken' });
    // The digest deleted before the build: the folder's upgrade found the day published without it and kept the
    // day's signed ledger beside its proof, so the client's proof shows the promise broken.
    const spec = clientJson(['verify', 'spec.timestamped.pdf']);
    expect(spec.r.code).toBe(1);
    expect(spec.json.timeStamps[0].promise).toMatchObject({ state: 'broken', proof: true });
    // One changed character of the root in the proof's checkpoint: the promise is not shown kept, the PDF is
    // invalid.
    const proofPath = path.join(dir, 'signed.timestamped.pdf.timeseal.json');
    const good = fs.readFileSync(proofPath, 'utf8');
    try {
      const proof = JSON.parse(good);
      const lines = (proof.bundle.checkpoint as string).split('\n');
      lines[2] = `${lines[2]![0] === 'A' ? 'B' : 'A'}${lines[2]!.slice(1)}`;
      proof.bundle.checkpoint = lines.join('\n');
      fs.writeFileSync(proofPath, `${JSON.stringify(proof, null, 2)}\n`);
      const bad = clientJson(['verify', 'signed.timestamped.pdf']);
      expect(bad.r.code).toBe(1);
      expect(bad.json.state).toBe('invalid');
      expect(bad.json.timeStamps[0].promise).toMatchObject({ state: 'invalid' });
      expect(bad.json.problems[0]).toMatch(/^promise 1: its proof file does not check: ledger: /);
      // A bundle that records the digest after the token's time (its own statement, not signed): a broken promise.
      const late = JSON.parse(good);
      late.bundle.submitted_at = `${DAY}T23:00:00.000Z`;
      fs.writeFileSync(proofPath, `${JSON.stringify(late, null, 2)}\n`);
      const broken = clientJson(['verify', 'signed.timestamped.pdf']);
      expect(broken.r.code).toBe(1);
      expect(broken.json.timeStamps[0].promise).toMatchObject({ state: 'broken', date: DAY });
      expect(broken.json.problems[0]).toMatch(/^promise 1: .*after the receipt's time: a broken promise$/);
    } finally {
      fs.writeFileSync(proofPath, good);
    }
  }, 120_000);

  test('the PDF stamped in the browser: upgrade --server writes the proof file of its digest beside it, then verify finds its promise kept (exit 0)', async () => {
    const proofPath = path.join(dir, 'browser.timestamped.pdf.timeseal.json');
    expect(fs.existsSync(proofPath)).toBe(false);
    server = await startServer(dir, { ...env, TIMESEAL_NOW: LATER });
    try {
      // A folder given with --server: its PDF stamped in the browser gets the proof file of its digest too, and
      // a PDF without a time-stamp beside it is left alone (no proof file, nothing said of it).
      const folder = path.join(dir, 'from-the-site');
      fs.mkdirSync(folder);
      fs.copyFileSync(path.join(dir, 'browser.timestamped.pdf'), path.join(folder, 'copy.timestamped.pdf'));
      fs.copyFileSync(path.join(dir, 'contract.pdf'), path.join(folder, 'plain.pdf'));
      const inFolder = clientJson(['upgrade', 'from-the-site', '--server', server!.url]);
      expect(inFolder.r.code, inFolder.r.stdout + inFolder.r.stderr).toBe(2); // the Bitcoin anchor is still to come
      expect(inFolder.json).toMatchObject({ hash: browserDigest, stage: 'published' });
      expect(fs.readdirSync(folder).sort()).toEqual([
        'copy.timestamped.pdf',
        'copy.timestamped.pdf.receipt.cose', // the leaf's COSE receipt, as upgrade writes beside every proof
        'copy.timestamped.pdf.timeseal.json',
        'plain.pdf',
      ]);
      expect(inFolder.r.stdout + inFolder.r.stderr).not.toContain('plain.pdf');
      const up = clientJson(['upgrade', 'browser.timestamped.pdf', '--server', server!.url]);
      expect(up.r.code, up.r.stdout + up.r.stderr).toBe(2); // the Bitcoin anchor is still to come
      expect(up.json).toMatchObject({
        proof: 'browser.timestamped.pdf.timeseal.json',
        hash: browserDigest,
        stage: 'published',
      });
      expect(up.r.stderr).toContain('browser.timestamped.pdf: wrote browser.timestamped.pdf.timeseal.json');
      const proof = JSON.parse(fs.readFileSync(proofPath, 'utf8'));
      expect(proof).toMatchObject({ hash: browserDigest, file: null, ledgerDate: DAY, server: server!.url });
      expect(proof.bundle).not.toBeNull();
    } finally {
      await stop();
    }
    const v = clientJson(['verify', 'browser.timestamped.pdf']);
    expect(v.r.code, v.r.stdout + v.r.stderr).toBe(0);
    expect(v.json.state).toBe('complete');
    expect(v.json.timeStamps[0].promise).toMatchObject({
      state: 'kept',
      hash: browserDigest,
      proofFile: 'browser.timestamped.pdf.timeseal.json',
    });
  }, 120_000);

  test("upgrade of a proof whose digest the published day lacks: broken (exit 1), the day's signed ledger kept beside it, and verify says broken offline", async () => {
    server = await startServer(dir, { ...env, TIMESEAL_NOW: LATER });
    let specDigest: string;
    try {
      // spec.timestamped.pdf's digest was deleted before the build: the day is published without it. The folder's
      // upgrade above kept the day's ledger already: removed, so that this one downloads it.
      fs.rmSync(path.join(dir, 'timeseal-ledgers'), { recursive: true });
      const spec = clientJson(['upgrade', 'spec.timestamped.pdf']);
      expect(spec.r.code, spec.r.stdout + spec.r.stderr).toBe(1);
      expect(spec.json).toMatchObject({ proof: 'spec.timestamped.pdf.timeseal.json', state: 'broken', code: 'broken' });
      expect(spec.json.error).toMatch(
        /^the ledger of 2025-11-02 is published and does not hold this hash: the promise is broken; its signed ledger \(\d+ bytes, SHA-256 [0-9a-f]{64}, .*\) is kept in timeseal-ledgers\/2025-11-02\.json /,
      );
      specDigest = spec.json.hash as string;
    } finally {
      await stop();
    }
    // The proof file is version 2 and names the kept ledger, the archive's own bytes.
    const proof = JSON.parse(fs.readFileSync(path.join(dir, 'spec.timestamped.pdf.timeseal.json'), 'utf8'));
    const kept = path.join(dir, 'timeseal-ledgers', `${DAY}.json`);
    const published = fs.readFileSync(path.join(dir, 'ledgers', `${DAY}.json`));
    expect(proof).toMatchObject({
      format: 'timeseal-client-proof/2',
      hash: specDigest,
      omittedFrom: { date: DAY, ledger: `timeseal-ledgers/${DAY}.json`, size: published.length },
    });
    expect(fs.readFileSync(kept)).toEqual(published);
    const info = clientJson(['info', 'spec.timestamped.pdf.timeseal.json']);
    expect(info.json.omittedFrom).toEqual(proof.omittedFrom);
    expect(client(['info', 'spec.timestamped.pdf.timeseal.json']).stdout).toMatch(
      /^ {2}ledger: {4}the signed ledger of 2025-11-02 does not hold it: kept in timeseal-ledgers\/2025-11-02\.json \(\d+ bytes, SHA-256 [0-9a-f]{64}; verify checks it\)$/m,
    );
    for (const sig of ['.sig', '.dilithium.sig'])
      expect(fs.readFileSync(`${kept}${sig}`)).toEqual(fs.readFileSync(path.join(dir, 'ledgers', `${DAY}.json${sig}`)));
    // A tool we did not write agrees: openssl verifies the kept ledger's ECDSA signature, and the digest is not in it.
    const ossl = tool(
      'openssl',
      [
        'dgst',
        '-sha256',
        '-verify',
        'keys/public.pem',
        '-signature',
        `timeseal-ledgers/${DAY}.json.sig`,
        `timeseal-ledgers/${DAY}.json`,
      ],
      dir,
    );
    expect(ossl.stdout.trim(), ossl.stderr).toBe('Verified OK');
    expect(published.indexOf(specDigest)).toBe(-1);

    // Offline: the PDF's promise is broken (exit 1), from the kept ledger.
    const v = clientJson(['verify', 'spec.timestamped.pdf']);
    expect(v.r.code, v.r.stdout + v.r.stderr).toBe(1);
    expect(v.json.state).toBe('broken');
    expect(v.json.timeStamps[0]).toMatchObject({ state: 'valid', promise: { state: 'broken', date: DAY } });
    expect(v.json.timeStamps[0].promise.checked).toMatch(
      /broken promise: the signed ledger of 2025-11-02 \(kept in timeseal-ledgers\/2025-11-02\.json\) does not hold the hash$/,
    );
    expect(client(['verify', 'spec.timestamped.pdf']).stdout).toMatch(/^spec\.timestamped\.pdf: BROKEN: promise 1: /m);
    // The proof file alone: broken too.
    const alone = clientJson(['verify', 'spec.timestamped.pdf.timeseal.json']);
    expect(alone.r.code).toBe(1);
    expect(alone.json.state).toBe('broken');

    // One changed byte of the kept ledger: not broken, not valid — invalid, naming the file and `upgrade`.
    const good = fs.readFileSync(kept);
    const changed = Buffer.from(good);
    changed[changed.length - 40] = changed[changed.length - 40]! ^ 0x01;
    fs.writeFileSync(kept, changed);
    try {
      const bad = clientJson(['verify', 'spec.timestamped.pdf.timeseal.json']);
      expect(bad.r.code).toBe(1);
      expect(bad.json.state).toBe('invalid');
      expect(bad.json.problems[0]).toMatch(
        /^ledger: timeseal-ledgers\/2025-11-02\.json changed since upgrade kept it, or is not the one this proof names: .*; run timeseal-client upgrade on this proof file again, online, to fetch and check it again$/,
      );
      fs.rmSync(kept);
      const gone = clientJson(['verify', 'spec.timestamped.pdf.timeseal.json']);
      expect(gone.json.state).toBe('invalid');
      expect(gone.json.problems[0]).toBe(
        `ledger: timeseal-ledgers/${DAY}.json, the day's signed ledger this proof file keeps for its broken promise, is missing: run timeseal-client upgrade on this proof file again, online, to fetch and check it again`,
      );
    } finally {
      fs.writeFileSync(kept, good);
    }

    // upgrade again: the intact kept ledger is checked again, not downloaded; once removed, it is fetched again.
    server = await startServer(dir, { ...env, TIMESEAL_NOW: LATER });
    try {
      const again = clientJson(['upgrade', 'spec.timestamped.pdf']);
      expect(again.r.code).toBe(1);
      expect(again.json).toMatchObject({ state: 'broken', code: 'broken' });
      expect(again.json.error).toMatch(
        /kept in timeseal-ledgers\/2025-11-02\.json, checked again .*not downloaded again\)$/,
      );
      fs.rmSync(kept);
      const restored = clientJson(['upgrade', 'spec.timestamped.pdf']);
      expect(restored.r.code).toBe(1);
      expect(restored.json.state).toBe('broken');
      expect(restored.json.error).toMatch(/is kept in timeseal-ledgers\/2025-11-02\.json with its \.sig/);
      expect(fs.readFileSync(kept)).toEqual(published);
    } finally {
      await stop();
    }
    expect(clientJson(['verify', 'spec.timestamped.pdf']).json.state).toBe('broken');
  }, 120_000);

  test("broken: a time-stamp whose digest the day's signed ledger does not hold (exit 1), in receipt check and the offline verifier's checks", async () => {
    const { result, json } = check('spec.timestamped.pdf');
    expect(result.code, result.stdout + result.stderr).toBe(1);
    expect(json.state).toBe('broken');
    expect(json.timeStamps[0]).toMatchObject({ state: 'broken', promise: { state: 'broken', date: DAY } });
    const human = run(dir, ['receipt', 'check', '--pdf', 'spec.timestamped.pdf'], {
      env: { ...env, TIMESEAL_NOW: NEXT },
    });
    expect(human.stdout).toMatch(/^\s+BROKEN: /m);

    const read = (f: string) => classifyFile(path.basename(f), new Uint8Array(fs.readFileSync(path.join(dir, f))));
    const day = ['.json', '.json.sig', '.json.dilithium.sig', '.json.signatures.json', '.checkpoint'];
    const pem = (name: string) => fs.readFileSync(path.join(dir, 'keys', name), 'utf8');
    const report = await verifyInputs({
      files: [read('spec.timestamped.pdf'), ...day.map((x) => read(`ledgers/${DAY}${x}`))],
      keys: {
        ecdsa: { key: ecdsaPublicKeyFromPem(pem('public.pem')), source: 'keys/' },
        mldsa: { key: new Uint8Array(fs.readFileSync(path.join(dir, 'keys/dilithium_public.key'))), source: 'keys/' },
      },
      authority: { certs: pemCertificates(pem('timeseal-tsa-root.pem')), source: 'keys/timeseal-tsa-root.pem' },
    });
    expect(report.summary.state).toBe('fail');
    expect(report.summary.text).toMatch(/^Not verified: .*broken promise/);
  });

  test('invalid: a flipped byte, another TSA root, a PDF with no time-stamp (exit 1)', () => {
    const out = new Uint8Array(fs.readFileSync(path.join(dir, 'signed.timestamped.pdf')));
    out[200] = out[200]! ^ 0x01;
    fs.writeFileSync(path.join(dir, 'flipped.pdf'), out);
    const flipped = check('flipped.pdf');
    expect(flipped.result.code).toBe(1);
    expect(flipped.json.state).toBe('invalid');
    expect(flipped.json.timeStamps[0].reason).toMatch(/its token is for another SHA-256 digest/);
    const v = client(['verify', '--pdf', 'flipped.pdf']);
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(/INVALID: time-stamp 1: its token is for another SHA-256 digest/);

    const other = tool(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        'o.key',
        '-out',
        'other-root.pem',
        '-subj',
        '/CN=Other root',
        '-days',
        '30',
      ],
      dir,
    );
    expect(other.code).toBe(0);
    const rooted = check('signed.timestamped.pdf', ['--tsa-root', 'other-root.pem']);
    expect(rooted.result.code).toBe(1);
    expect(rooted.json.timeStamps[0].reason).toMatch(/its token does not check/);

    const none = check('contract.pdf');
    expect(none.result.code).toBe(1);
    expect(none.json.reason).toMatch(/no document time-stamp is in it/);
    // Given as the receipt, without --pdf: the same answer, not a request for --file.
    const alone = run(dir, ['receipt', 'check', 'contract.pdf'], { env: { ...env, TIMESEAL_NOW: NEXT } });
    expect({ code: alone.code, out: alone.stdout + alone.stderr }).toEqual({
      code: 1,
      out: 'INVALID: contract.pdf: no document time-stamp is in it (0 other signatures).\n',
    });
  });

  test('a signature after the time-stamp: still kept, and its bytes named as not covered', () => {
    java.sign(path.join(dir, 'signed.timestamped.pdf'), path.join(dir, 'later.pdf'));
    const { result, json } = check('later.pdf');
    expect(result.code, result.stdout).toBe(0);
    expect(json.otherSignatures).toBe(2);
    expect(json.afterLastTimeStamp.kind).toBe('changes');
    const human = run(dir, ['receipt', 'check', '--pdf', 'later.pdf'], { env: { ...env, TIMESEAL_NOW: NEXT } });
    expect(human.stdout).toMatch(
      /after the last time-stamp: \d+ bytes after the last time-stamp are not covered by it/,
    );
  });
});
