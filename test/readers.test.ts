// One proof, every reader: each kind of evidence Timeseal writes, valid and with one byte changed, given to each of
// our four readers through its own entry point, and the verdict each gives held to one table (core/evidence.ts
// READERS): a reader that checks the kind says valid for the valid file and invalid for the changed one; a reader
// that does not check it says so in the one sentence of notCheckedHere, naming the readers that do — never "not
// valid" for valid evidence. The readers:
//   verify-page   the Verify page (/verify) in Chromium against the real server: its receipt card given the file
//                 with its document (a timestamped PDF to its PDF card);
//   offline-page  the offline verifier's checks (site/offline-verifier/src/checks.ts verifyInputs, as the page runs
//                 them) given the file with the document, the day's files, the keys and the TSA root, as a person
//                 drops them;
//   client        `timeseal-client verify FILE --json`, from source, with the trust store `stamp` pinned;
//   cli           `timeseal receipt check FILE --file DOC --json` on the project.
// The evidence is made by the real parts: `timeseal-client stamp` (the receipt and the proof file, then `upgrade`
// once the day is built: its bundle and the .receipt.cose beside it), `timeseal-client stamp --pdf` (and `upgrade`
// of the proof file of its time-stamp's digest it writes beside the PDF), `timeseal
// proof` (bundle and tlog-proof), the OpenTimestamps client's hello-world.txt.ots with its block's header, and the
// Transparent Statement of a Signed Statement @transmute/cose's signer made, registered with POST /entries.
// A verdict here is valid (also "valid so far": a promise or an anchor still to come), invalid or not-checked; for a
// timestamped PDF whose day is published, kept: every reader must show each time-stamp's promise kept (the leaf
// and its inclusion proof in the day's signed ledger), not valid so far.
// A promise broken by omission, made for real: a hash stamped with timeseal-client, deleted from the server's
// database before the day's build, so that the day is published without it; `upgrade` then keeps the day's signed
// ledger beside the proof (timeseal-client-proof/2). Every reader that checks a client proof file says broken (the
// offline page given the kept ledger and its two signatures, not the archive's other day files), and invalid once a
// byte of the kept ledger or of the proof file is changed, or its receipt is another hash's (the ledger then breaks
// no promise of it); the others say in notCheckedHere's sentence who checks it. openssl verifies the kept ledger's
// ECDSA signature, and the hash's hex is not in it.
// A timestamped PDF is read whole by every reader: one whose time-stamp is followed by a 300 KiB update, and that
// one stamped again (its first time-stamp 300 KiB before the end), get the same verdicts as the others. A PDF
// that holds a time-stamp's words (in a stream's data, a comment, a string) but none is a document to each.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as cose from '@transmute/cose';
import Database from 'better-sqlite3';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  EVIDENCE_NAME,
  notCheckedHere,
  READERS,
  sniffEvidence,
  type EvidenceKind,
  type Reader,
} from '../core/evidence.ts';
import { ecdsaPublicKeyFromPem, mldsaPublicKeyFromPem } from '../core/sig.ts';
import { pemCertificates } from '../core/rfc3161.ts';
import { parseVkey } from '../core/cosignature.ts';
import { verifyInputs, type VerifierInputs } from '../site/offline-verifier/src/checks.ts';
import { classifyFile } from '../site/offline-verifier/src/inputs.ts';
import { projectEnv, startServer, type SpawnedServer } from '../ingest/test/fixture.ts';
import { entryOf, ISS, signStatement } from './cli/cose-helpers.ts';
import { removeTempProjects, run, tempProject } from './cli/helpers.ts';
import { appendUpdate, fixture, tool, withTimeStampWords } from './pdf/tools.ts';
import { launchChromium } from './support/chromium.ts';
import { clientFromSource } from './support/client-source.ts';
import { freePort } from './support/servers.ts';
import { capture, CAPTURE, ensureBuilt, pngProblems, SITE_DIR } from './site/helpers.ts';
import { buildVerifier, giveOfflinePage } from './verifier/helpers.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const OTS = path.join(ROOT, 'test/vectors/ots');
const DAY = '2025-11-02';
const NOW = `${DAY}T12:00:00.000Z`;
const NEXT = '2025-11-03T00:01:00.000Z';
const LATER = '2025-11-03T09:00:00.000Z';

type Verdict = 'kept' | 'valid' | 'broken' | 'invalid' | 'not-checked';
/** What every reader that checks the kind must say of the valid file: kept for a timestamped PDF (its day is
 * published when the readers are asked), valid for the others. */
const VALID: Partial<Record<EvidenceKind, Verdict>> = { 'timestamped-pdf': 'kept' };
interface Evidence {
  kind: EvidenceKind;
  file: string;
  /** The document it is for (the offline page, the Verify page, the CLI are given it); none for a PDF and a
   * Transparent Statement (their subject is in them). */
  document: string | null;
  /** Where one byte is changed for the tampered copy. */
  flipAt: (bytes: Buffer) => number;
  /** What every reader that checks the kind must say of it, when not what VALID says of the kind. */
  expected?: Verdict;
  /** The day's files the offline page is given (default: the archive's five). */
  dayFiles?: string[];
}

let dir: string;
let env: Record<string, string>;
let server: SpawnedServer | undefined;
let browser: Browser;
const evidence: Evidence[] = [];
/** The client proof of a promise broken by omission (its own row: kind client-proof, verdict broken). */
let broken: Evidence;
/** The kept ledger's files beside a version 2 proof file, in timeseal-ledgers/. */
const KEPT = ['.json', '.json.sig', '.json.dilithium.sig'];

const client = (args: string[]) => clientFromSource(dir, args);

const stop = async () => {
  if (server && server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  server = undefined;
};

const at = (name: string) => path.join(dir, name);
const sha256 = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
/** The position of the first base64 character after `marker`'s `skip`th character on. */
const after =
  (marker: string, skip = 0) =>
  (b: Buffer) => {
    let i = b.indexOf(marker) + marker.length + skip;
    while (!/[A-Za-z0-9+/]/.test(String.fromCharCode(b[i]!))) i++;
    return i;
  };

beforeAll(async () => {
  ensureBuilt();
  dir = tempProject('readers');
  // One port for the server before and after the day's build: the proof file names the server by its URL.
  // An issuer whose Signed Statement (made by @transmute/cose's signer) is registered: its Transparent Statement.
  const issuerKey = await cose.key.generate<cose.SecretKeyJwk>('ES256', 'application/jwk+json');
  fs.writeFileSync(
    path.join(dir, 'issuers.json'),
    JSON.stringify({ [ISS]: [await cose.key.publicFromPrivate<cose.PublicKeyJwk>(issuerKey)] }),
  );
  env = projectEnv(dir, {
    LOG_FORMAT: 'json',
    TIMESEAL_SITE: SITE_DIR,
    PORT: String(await freePort()),
    SCITT_ISSUER_KEYS: path.join(dir, 'issuers.json'),
  });
  const init = run(dir, ['keys', 'init'], { env: { ...env, TIMESEAL_NOW: `${DAY}T00:00:00.000Z` } });
  expect(init.code, init.stderr).toBe(0);
  // Other leaves of the day, so that the proofs have paths.
  const others = Array.from({ length: 5 }, (_, i) => crypto.createHash('sha256').update(`other ${i}`).digest('hex'));
  expect(
    run(dir, ['import', '-'], {
      env: { ...env, TIMESEAL_NOW: `${DAY}T08:00:00.000Z` },
      input: `${others.join('\n')}\n`,
    }).code,
  ).toBe(0);
  fs.writeFileSync(at('doc.txt'), 'The document every reader is asked about.\n');
  fs.writeFileSync(at('contract.pdf'), fixture('hello.pdf'));
  server = await startServer(dir, { ...env, TIMESEAL_NOW: NOW });
  const stamp = (args: string[]) => {
    const r = client([...args, '--server', server!.url]);
    expect(r.code, `${r.stdout}${r.stderr}`).toBe(0);
  };
  stamp(['stamp', 'doc.txt']);
  stamp(['stamp', '--pdf', 'contract.pdf']);
  // The same PDF with a 300 KiB update after its time-stamp, and that one stamped again: a time-stamp more than
  // 256 KiB before the end of the file.
  fs.writeFileSync(at('contract-grown.pdf'), appendUpdate(fs.readFileSync(at('contract.timestamped.pdf')), 300 << 10));
  stamp(['stamp', '--pdf', 'contract-grown.pdf']);
  // A PDF that holds a time-stamp's words but no time-stamp, stamped as a document (its proof file beside it).
  fs.writeFileSync(at('contract-words.pdf'), withTimeStampWords(fs.readFileSync(at('contract.pdf'))));
  stamp(['stamp', 'contract-words.pdf']);
  // The promise to break: a document of its own folder, stamped, then deleted from the database before the build.
  fs.mkdirSync(at('omitted'));
  fs.writeFileSync(at('omitted/left-out.txt'), 'The document the published day leaves out.\n');
  stamp(['stamp', 'omitted/left-out.txt']);
  const statement = await signStatement(issuerKey, new TextEncoder().encode('{"sbom":"every reader"}'));
  const registered = await fetch(`${server.url}/entries`, {
    method: 'POST',
    headers: { 'content-type': 'application/cose' },
    body: Buffer.from(statement),
    redirect: 'manual',
  });
  expect(registered.status).toBe(303);
  await stop();
  const db = new Database(path.join(dir, 'data/timeseal.db'));
  expect(db.prepare('DELETE FROM submissions WHERE hash = ?').run(sha256(at('omitted/left-out.txt'))).changes).toBe(1);
  db.close();
  expect(run(dir, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: NEXT } }).code).toBe(0);
  server = await startServer(dir, { ...env, TIMESEAL_NOW: LATER });
  // The document's proof file, and those of the timestamped PDFs' digests `stamp --pdf` wrote beside them: the PDF
  // stamped twice names both (its first time-stamp's proof is beside contract.timestamped.pdf).
  const upgraded = client(['upgrade', 'doc.txt', 'contract-grown.timestamped.pdf', '--json']);
  expect(upgraded.code, `${upgraded.stdout}${upgraded.stderr}`).toBe(2); // anchoring is still to come
  const upgradedProofs = upgraded.stdout
    .trim()
    .split('\n')
    .map((l) => {
      const r = JSON.parse(l) as { proof: string; stage: string };
      return `${r.proof} ${r.stage}`;
    });
  expect(upgradedProofs).toEqual([
    'doc.txt.timeseal.json published',
    'contract.timestamped.pdf.timeseal.json published',
    'contract-grown.timestamped.pdf.timeseal.json published',
  ]);
  // The day is published without it: upgrade says broken (exit 1) and keeps the day's signed ledger beside it.
  const omitted = client(['upgrade', 'omitted/left-out.txt', '--json']);
  expect(omitted.code, `${omitted.stdout}${omitted.stderr}`).toBe(1);
  expect(JSON.parse(omitted.stdout.trim())).toMatchObject({ state: 'broken', code: 'broken' });
  const hash = sha256(at('doc.txt'));
  const proofFile = JSON.parse(fs.readFileSync(at('doc.txt.timeseal.json'), 'utf8')) as { receipt: string };
  fs.writeFileSync(at('doc.txt.tsr'), Buffer.from(proofFile.receipt, 'base64'));
  const proof = run(dir, ['proof', hash, '--tlog-proof', at('doc.txt.tlog-proof')], {
    env: { ...env, TIMESEAL_NOW: LATER },
  });
  expect(proof.code, proof.stderr).toBe(0);
  fs.writeFileSync(at('proof.json'), proof.stdout);
  const transparent = await fetch(`${server.url}/entries/${await entryOf(statement)}/transparent-statement`);
  expect(transparent.status).toBe(200);
  fs.writeFileSync(at('sbom.cose'), new Uint8Array(await transparent.arrayBuffer()));
  fs.copyFileSync(path.join(OTS, 'opentimestamps-client/hello-world.txt'), at('hello-world.txt'));
  fs.copyFileSync(path.join(OTS, 'opentimestamps-client/hello-world.txt.ots'), at('hello-world.txt.ots'));
  const doc = at('doc.txt');
  evidence.push(
    { kind: 'proof-bundle', file: at('proof.json'), document: doc, flipAt: after('"inclusion_path": [', 6) },
    // In the client proof file, a byte of its bundle's ES256 COSE receipt (its signature).
    {
      kind: 'client-proof',
      file: at('doc.txt.timeseal.json'),
      document: doc,
      flipAt: after('"cose_receipts": [', 160),
    },
    { kind: 'receipt', file: at('doc.txt.tsr'), document: doc, flipAt: (b) => b.length - 10 },
    { kind: 'ots', file: at('hello-world.txt.ots'), document: at('hello-world.txt'), flipAt: (b) => b.length >> 1 },
    { kind: 'tlog-proof', file: at('doc.txt.tlog-proof'), document: doc, flipAt: after('\nindex ', 4) },
    { kind: 'timestamped-pdf', file: at('contract.timestamped.pdf'), document: null, flipAt: () => 200 },
    { kind: 'cose-receipt', file: at('doc.txt.receipt.cose'), document: doc, flipAt: (b) => b.length - 5 },
    // Its own subject (the statement's entry): in the issuer's signature, its last bytes.
    { kind: 'transparent-statement', file: at('sbom.cose'), document: null, flipAt: (b) => b.length - 5 },
  );
  broken = {
    kind: 'client-proof',
    file: at('omitted/left-out.txt.timeseal.json'),
    document: at('omitted/left-out.txt'),
    // A digit of the kept ledger's SHA-256 the proof file names (still a digit: the file still parses).
    flipAt: (b) => {
      let i = b.indexOf('"sha256": "', b.indexOf('"omittedFrom"')) + 11;
      while (!/[0-9]/.test(String.fromCharCode(b[i]!))) i++;
      return i;
    },
    expected: 'broken',
    dayFiles: KEPT.map((x) => at(`omitted/timeseal-ledgers/${DAY}${x}`)),
  };
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await stop();
  removeTempProjects();
});

/** A copy of `e` with one byte changed, in its own folder beside a copy of its document. */
function tampered(e: Evidence): Evidence {
  const sub = fs.mkdtempSync(path.join(dir, 'tampered-'));
  const bytes = fs.readFileSync(e.file);
  const i = e.flipAt(bytes);
  bytes[i] = bytes[i]! ^ 0x01;
  const file = path.join(sub, path.basename(e.file));
  fs.writeFileSync(file, bytes);
  let document = e.document;
  if (document !== null) {
    document = path.join(sub, path.basename(document));
    fs.copyFileSync(e.document!, document);
  }
  return { ...e, file, document };
}

// ---- the four readers ----

/** The sentence a reader gave for a kind it does not check, kept to compare with notCheckedHere. */
const sentences = new Map<string, string>();

async function verifyPage(e: Evidence): Promise<Verdict> {
  const page = await browser.newPage({ baseURL: server!.url });
  try {
    await page.goto('/verify');
    const pdf = e.kind === 'timestamped-pdf';
    const input = pdf ? '#pdf-check-file' : '#receipt-file';
    await page.locator(input).first().scrollIntoViewIfNeeded();
    await page.waitForFunction((s) => {
      const island = document.querySelector(s)?.closest('astro-island');
      return !!island && !island.hasAttribute('ssr');
    }, input);
    await page.setInputFiles(input, e.file);
    if (!pdf) {
      await page.locator('[data-testid=receipt-name]').waitFor();
      // A Transparent Statement is its own subject: any document will do for the card to be asked.
      await page.setInputFiles('#receipt-target', e.document ?? e.file);
      await page.locator('[data-testid=receipt-target-hash]').waitFor();
      await page.getByRole('button', { name: 'Check receipt' }).click();
    }
    const prefix = pdf ? 'pdf-check' : 'receipt';
    const result = page.locator(`[data-testid=${prefix}-result], [data-testid=${prefix}-other-kind]`);
    await result.first().waitFor({ timeout: 30_000 });
    if ((await result.first().getAttribute('data-testid'))!.endsWith('other-kind')) {
      sentences.set(`verify-page ${e.kind}`, (await result.first().innerText()).trim());
      return 'not-checked';
    }
    const state = (await result.first().getAttribute('data-state'))!;
    if (pdf) {
      const stamps = await page
        .locator('[data-testid=pdf-check-stamp]')
        .evaluateAll((els) => els.map((el) => el.getAttribute('data-state')));
      if (state === 'unreadable' || stamps.length === 0 || stamps.some((s) => s === 'invalid' || s === 'broken'))
        return 'invalid';
      // The card's state is the file's (valid or invalid); each time-stamp's is its promise's.
      return stamps.every((s) => s === 'kept') ? 'kept' : 'valid';
    }
    return ['kept', 'pending', 'valid'].includes(state) ? 'valid' : 'invalid';
  } finally {
    await page.close();
  }
}

async function offlinePage(e: Evidence): Promise<Verdict> {
  const read = (f: string) => classifyFile(path.basename(f), new Uint8Array(fs.readFileSync(f)));
  const keys = path.join(dir, 'keys');
  const pem = (name: string) => fs.readFileSync(path.join(keys, name), 'utf8');
  const vkey = (name: string) => parseVkey(pem(name).trim()).publicKey;
  const from = { source: 'keys/' };
  const dayFiles =
    e.dayFiles ??
    ['.json', '.json.sig', '.json.dilithium.sig', '.json.signatures.json', '.checkpoint'].map((s) =>
      path.join(dir, 'ledgers', `${DAY}${s}`),
    );
  const given: VerifierInputs = {
    ...(e.document === null ? {} : { document: { hash: sha256(e.document), source: 'the document' } }),
    files: [
      read(e.file),
      ...dayFiles.map(read),
      ...(e.kind === 'ots' ? [read(path.join(OTS, 'headers/block-358391-header.hex'))] : []),
    ],
    keys: {
      ecdsa: { key: ecdsaPublicKeyFromPem(pem('public.pem')), ...from },
      mldsa: { key: new Uint8Array(fs.readFileSync(path.join(keys, 'dilithium_public.key'))), ...from },
      ed25519: { key: vkey('ed25519.vkey'), ...from },
      mldsa44: { key: vkey('mldsa44.vkey'), ...from },
      receiptEs256: { key: ecdsaPublicKeyFromPem(pem('receipt-es256.pem')), ...from },
      receiptMldsa65: { key: mldsaPublicKeyFromPem(pem('receipt-mldsa65.pem')), ...from },
    },
    authority: { certs: pemCertificates(pem('timeseal-tsa-root.pem')), source: 'keys/timeseal-tsa-root.pem' },
    network: 'mainnet',
  };
  const report = await verifyInputs(given);
  if (report.summary.state === 'fail')
    return /^Not verified: broken promise/.test(report.summary.text) ? 'broken' : 'invalid';
  if (report.summary.state === 'empty') return 'not-checked';
  // Given the day's files, every check of a PDF passed: its time-stamps and their promises in the signed ledger.
  return e.kind === 'timestamped-pdf' && report.summary.state === 'ok' ? 'kept' : 'valid';
}

function clientVerdict(e: Evidence): Verdict {
  const r = client(['verify', e.file, '--json']);
  const records = r.stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { state: string; reason?: string; timeStamps?: ClientStamp[] });
  expect(records, `${r.stdout}${r.stderr}`).toHaveLength(1);
  const { state, reason } = records[0]!;
  if (state === 'not-checked') {
    sentences.set(`client ${e.kind}`, reason!);
    return 'not-checked';
  }
  expect(['complete', 'pending', 'invalid', 'broken'], `${r.stdout}${r.stderr}`).toContain(state);
  if (state === 'invalid' || state === 'broken') return state;
  const stamps = records[0]!.timeStamps?.map(clientStampVerdict) ?? [];
  return state === 'complete' && stamps.length > 0 && stamps.every((s) => s === 'kept') ? 'kept' : 'valid';
}

interface ClientStamp {
  state: 'valid' | 'invalid';
  promise: { state: string } | null;
}
/** A time-stamp's verdict in the client's record, in the words receipt check uses: its promise's, else its own. */
const clientStampVerdict = (t: ClientStamp) => (t.state === 'invalid' ? 'invalid' : (t.promise?.state ?? 'valid'));

function cliVerdict(e: Evidence): Verdict {
  const args = ['receipt', 'check', e.file, ...(e.document === null ? [] : ['--file', e.document]), '--json'];
  const r = run(dir, args, { env: { ...env, TIMESEAL_NOW: LATER } });
  const out = JSON.parse(r.stdout) as { state: string; reason?: string };
  if (out.state === 'not-checked') {
    sentences.set(`cli ${e.kind}`, out.reason!);
    return 'not-checked';
  }
  expect(['kept', 'valid', 'pending', 'invalid', 'broken'], `${r.stdout}${r.stderr}`).toContain(out.state);
  if (out.state === 'invalid' || out.state === 'broken') return 'invalid';
  return e.kind === 'timestamped-pdf' && out.state === 'kept' ? 'kept' : 'valid';
}

const READERS_RUN: Record<Reader, (e: Evidence) => Promise<Verdict> | Verdict> = {
  'verify-page': verifyPage,
  'offline-page': offlinePage,
  client: clientVerdict,
  cli: cliVerdict,
};

const KINDS = Object.keys(EVIDENCE_NAME) as EvidenceKind[];

/** Every reader's verdict on `e` is the one READERS holds it to: valid, invalid once changed, or not-checked. */
async function expectAgreement(e: Evidence, changed: boolean): Promise<void> {
  if (changed) expect(sniffEvidence(fs.readFileSync(e.file), e.file), 'still the same kind').toBe(e.kind);
  const verdicts: Record<string, Verdict> = {};
  const expected: Record<string, Verdict> = {};
  for (const reader of Object.keys(READERS_RUN) as Reader[]) {
    verdicts[reader] = await READERS_RUN[reader](e);
    expected[reader] = READERS[e.kind].includes(reader)
      ? changed
        ? 'invalid'
        : (e.expected ?? VALID[e.kind] ?? 'valid')
      : 'not-checked';
  }
  // One line a kind: each reader's verdict, and the sentence of each that does not check it.
  const said = Object.keys(verdicts).map((r) =>
    verdicts[r] === 'not-checked' ? `${r} not-checked: ${sentences.get(`${r} ${e.kind}`)}` : `${r} ${verdicts[r]}`,
  );
  console.log(`[readers ${e.kind}${changed ? ', changed' : ''}] ${said.join(' | ')}`);
  expect(verdicts).toEqual(expected);
}

describe('one proof, every reader', () => {
  test('every kind of evidence is in the table, each is told by the sniffer, and each has a reader', () => {
    expect(evidence.map((e) => e.kind).sort()).toEqual([...KINDS].sort());
    for (const e of evidence) expect(sniffEvidence(fs.readFileSync(e.file), e.file), e.file).toBe(e.kind);
    for (const kind of KINDS) expect(READERS[kind].length, kind).toBeGreaterThan(0);
  });

  test.each(
    KINDS.flatMap((kind) => [
      { kind, changed: false },
      { kind, changed: true },
    ]),
  )(
    '$kind, changed: $changed',
    async ({ kind, changed }) => {
      const valid = evidence.find((e) => e.kind === kind)!;
      await expectAgreement(changed ? tampered(valid) : valid, changed);
      // A reader that does not check the kind says what it is and which readers do, in the one sentence.
      for (const reader of ['client', 'cli'] as const)
        if (!READERS[kind].includes(reader))
          expect(sentences.get(`${reader} ${kind}`)).toBe(notCheckedHere(kind, reader));
      if (!READERS[kind].includes('verify-page'))
        expect(sentences.get(`verify-page ${kind}`)).toBe(notCheckedHere(kind, null));
    },
    180_000,
  );
});

describe('a client proof of a promise broken by omission', () => {
  /** The proof, its document and its kept ledger copied to a folder of their own, one byte of `which` changed. */
  const changedCopy = (which: 'ledger' | 'proof' | 'receipt'): Evidence => {
    const sub = fs.mkdtempSync(path.join(dir, 'tampered-'));
    fs.cpSync(at('omitted'), sub, { recursive: true });
    const moved = (f: string) => path.join(sub, path.relative(at('omitted'), f));
    const e = {
      ...broken,
      file: moved(broken.file),
      document: moved(broken.document!),
      dayFiles: broken.dayFiles!.map(moved),
    };
    if (which === 'receipt') {
      // Another hash's receipt (doc.txt's, which the day holds) in its place: the kept ledger breaks no promise of it.
      const proof = JSON.parse(fs.readFileSync(e.file, 'utf8')) as Record<string, unknown>;
      proof.receipt = (JSON.parse(fs.readFileSync(at('doc.txt.timeseal.json'), 'utf8')) as { receipt: string }).receipt;
      fs.writeFileSync(e.file, `${JSON.stringify(proof, null, 2)}\n`);
      return e;
    }
    const target = which === 'proof' ? e.file : e.dayFiles[0]!;
    const bytes = fs.readFileSync(target);
    // In the ledger: a hex digit of its last entry's hash (the file still parses; its signatures no longer verify).
    const i = which === 'proof' ? broken.flipAt(bytes) : bytes.length - 40;
    bytes[i] = bytes[i]! ^ 0x01;
    fs.writeFileSync(target, bytes);
    return e;
  };

  test.each([
    { what: 'as kept', changed: null },
    { what: 'one byte of the kept ledger changed', changed: 'ledger' as const },
    { what: 'one byte of the proof file changed', changed: 'proof' as const },
    { what: "another hash's receipt in the proof file", changed: 'receipt' as const },
  ])(
    '$what',
    async ({ changed }) => {
      await expectAgreement(changed === null ? broken : changedCopy(changed), changed !== null);
      for (const reader of ['client', 'cli'] as const)
        if (!READERS['client-proof'].includes(reader))
          expect(sentences.get(`${reader} client-proof`)).toBe(notCheckedHere('client-proof', reader));
      expect(sentences.get('verify-page client-proof')).toBe(notCheckedHere('client-proof', null));
    },
    180_000,
  );

  test('the offline page given the proof file without the kept ledger: one sentence naming the files it needs', async () => {
    const read = (f: string) => classifyFile(path.basename(f), new Uint8Array(fs.readFileSync(f)));
    const pem = fs.readFileSync(path.join(dir, 'keys', 'public.pem'), 'utf8');
    const report = await verifyInputs({
      document: { hash: sha256(broken.document!), source: 'the document' },
      files: [read(broken.file)],
      keys: {
        ecdsa: { key: ecdsaPublicKeyFromPem(pem), source: 'keys/' },
        mldsa: { key: new Uint8Array(fs.readFileSync(path.join(dir, 'keys/dilithium_public.key'))), source: 'keys/' },
      },
    });
    expect(report.summary.state).toBe('pending');
    const section = report.sections.find((x) => x.title === 'Broken promise in left-out.txt.timeseal.json')!;
    expect(section.checks.map((c) => [c.state, c.verdict])).toEqual([
      [
        'pending',
        `Not verified: this proof file says the signed ledger of ${DAY} does not hold its hash: add ${DAY}.json, ${DAY}.json.sig, ${DAY}.json.dilithium.sig (kept in timeseal-ledgers/ beside the proof file) to check it`,
      ],
    ]);
  });

  test("a tool we did not write agrees: openssl verifies the kept ledger's ECDSA signature, and the hash is not in it", () => {
    const proof = JSON.parse(fs.readFileSync(broken.file, 'utf8')) as {
      format: string;
      hash: string;
      omittedFrom: { ledger: string };
    };
    expect(proof.format).toBe('timeseal-client-proof/2');
    expect(proof.omittedFrom.ledger).toBe(`timeseal-ledgers/${DAY}.json`);
    const ledger = `timeseal-ledgers/${DAY}.json`;
    const r = tool(
      'openssl',
      ['dgst', '-sha256', '-verify', '../keys/public.pem', '-signature', `${ledger}.sig`, ledger],
      at('omitted'),
    );
    expect(r.stdout.trim(), r.stderr).toBe('Verified OK');
    const text = fs.readFileSync(at(`omitted/${ledger}`), 'utf8');
    expect(text.indexOf(proof.hash)).toBe(-1);
    expect(text.indexOf(sha256(at('doc.txt')))).toBeGreaterThan(0); // a hash the day holds is found the same way
  });

  test("the client given the proof's folder: the document broken, the kept ledger not taken for a document", () => {
    const r = client(['verify', at('omitted'), '--json']);
    expect(r.code, r.stdout).toBe(1);
    const records = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { file: string; state: string });
    expect(records.map((x) => [path.basename(x.file), x.state])).toEqual([['left-out.txt', 'broken']]);
  });
});

describe('a timestamped PDF is read wherever its time-stamps are', () => {
  const pdf = (name: string): Evidence => ({
    kind: 'timestamped-pdf',
    file: at(name),
    document: null,
    flipAt: () => 200,
  });

  test.each([
    { name: 'contract-grown.pdf', what: '300 KiB after its time-stamp', changed: false },
    { name: 'contract-grown.pdf', what: '300 KiB after its time-stamp', changed: true },
    { name: 'contract-grown.timestamped.pdf', what: 'stamped again 300 KiB on', changed: false },
    { name: 'contract-grown.timestamped.pdf', what: 'stamped again 300 KiB on', changed: true },
  ])(
    '$what, changed: $changed',
    async ({ name, changed }) => {
      const e = pdf(name);
      expect(sniffEvidence(fs.readFileSync(e.file), name)).toBe('timestamped-pdf');
      expect(fs.statSync(e.file).size - fs.statSync(at('contract.timestamped.pdf')).size).toBeGreaterThan(256 << 10);
      await expectAgreement(changed ? tampered(e) : e, changed);
    },
    180_000,
  );

  test('both time-stamps of the file stamped twice are read: the client and receipt check find both promises kept', () => {
    const file = at('contract-grown.timestamped.pdf');
    const v = client(['verify', file, '--json']);
    expect(v.code, v.stdout).toBe(0);
    const record = JSON.parse(v.stdout.trim().split('\n').at(-1)!) as { state: string; timeStamps: ClientStamp[] };
    expect(record.state).toBe('complete');
    expect(record.timeStamps.map(clientStampVerdict)).toEqual(['kept', 'kept']);
    const r = run(dir, ['receipt', 'check', file, '--json'], { env: { ...env, TIMESEAL_NOW: LATER } });
    const checked = JSON.parse(r.stdout) as { state: string; timeStamps: Array<{ state: string }> };
    expect(checked.state, r.stdout).toBe('kept');
    expect(checked.timeStamps.map((t) => t.state)).toEqual(['kept', 'kept']);
  });
});

describe('a timestamped PDF given with the proof file of its digest', () => {
  test("the offline page, given both: the proof's hash is the time-stamp's digest, so every check passes", async () => {
    const pdf = at('contract.timestamped.pdf');
    const read = (f: string) => classifyFile(path.basename(f), new Uint8Array(fs.readFileSync(f)));
    const pem = (name: string) => fs.readFileSync(path.join(dir, 'keys', name), 'utf8');
    const day = ['.json', '.json.sig', '.json.dilithium.sig', '.json.signatures.json', '.checkpoint'];
    const given = (files: string[]) =>
      verifyInputs({
        files: [...files.map(read), ...day.map((x) => read(path.join(dir, 'ledgers', `${DAY}${x}`)))],
        keys: {
          ecdsa: { key: ecdsaPublicKeyFromPem(pem('public.pem')), source: 'keys/' },
          mldsa: { key: new Uint8Array(fs.readFileSync(path.join(dir, 'keys/dilithium_public.key'))), source: 'keys/' },
        },
        authority: { certs: pemCertificates(pem('timeseal-tsa-root.pem')), source: 'keys/timeseal-tsa-root.pem' },
        network: 'mainnet',
      });
    const report = await given([pdf, `${pdf}.timeseal.json`]);
    expect(report.summary.state, report.summary.text).toBe('ok');
    const matches = report.sections
      .flatMap((s) => s.checks)
      .filter((c) => c.label === 'Hash matches the document')
      .map((c) => [c.state, c.details?.join(' ')]);
    expect(matches.length).toBeGreaterThan(0);
    for (const m of matches)
      expect(m).toEqual([
        'ok',
        expect.stringMatching(/over the ByteRange of time-stamp 1 of contract\.timestamped\.pdf$/),
      ]);
    // The proof alone: its document is still to be given.
    expect((await given([`${pdf}.timeseal.json`])).summary.state).toBe('pending');
  });
});

describe("a PDF that only holds a time-stamp's words is a PDF without a time-stamp", () => {
  test('every reader reads it as it reads the same PDF without the words: a document, not a timestamped PDF', async () => {
    const plain = at('contract.pdf');
    const words = at('contract-words.pdf');
    expect(fs.readFileSync(words).toString('latin1')).toMatch(/9 0 obj\n<< \/Type \/DocTimeStamp/);
    // The offline page: dropped, it is the document, and its proof file verifies it.
    const kind = (f: string) => classifyFile(path.basename(f), new Uint8Array(fs.readFileSync(f))).kind;
    expect(kind(words)).toBe(kind(plain));
    expect(kind(words)).not.toBe('timestamped-pdf');
    expect(
      await offlinePage({ kind: 'client-proof', file: `${words}.timeseal.json`, document: words, flipAt: () => 0 }),
    ).toBe('valid');
    // timeseal receipt check: the answer it gives the PDF without the words, that it has no time-stamp.
    const cli = (f: string) => {
      const r = run(dir, ['receipt', 'check', f], { env: { ...env, TIMESEAL_NOW: LATER } });
      return { code: r.code, said: `${r.stdout}${r.stderr}`.replaceAll(f, 'FILE') };
    };
    expect(cli(words)).toEqual(cli(plain));
    expect(cli(words).said).toMatch(/^INVALID: FILE: no document time-stamp is in it \(0 other signatures\)\.$/m);
    // timeseal-client verify: the document checked against its proof file.
    expect(clientVerdict({ kind: 'client-proof', file: words, document: null, flipAt: () => 0 })).toBe('valid');
    // The Verify page's receipt card: the verdict it gives the PDF without the words, no sentence naming a
    // timestamped PDF.
    const card = (file: string) => verifyPage({ kind: 'receipt', file, document: at('doc.txt'), flipAt: () => 0 });
    expect(await card(words)).toBe(await card(plain));
    expect(sentences.get('verify-page receipt')).toBeUndefined();
  }, 180_000);
});

describe('the pages, as a person sees them', () => {
  const shots: string[] = [];
  const start = Date.now();

  test('the offline verifier in Chromium, from disk, network off: a timestamped PDF and a COSE receipt verified', async () => {
    const out = path.join(dir, 'verifier');
    buildVerifier(out, path.join(dir, 'keys'));
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.setOffline(true);
    const page = await context.newPage();
    await page.goto(`file://${path.join(out, 'offline-verifier.html')}`);
    const day = ['.json', '.json.sig', '.json.dilithium.sig', '.json.signatures.json', '.checkpoint'].map((x) =>
      path.join(dir, 'ledgers', `${DAY}${x}`),
    );
    const given = (files: string[], doc?: string) => giveOfflinePage(page, files, doc);
    const root = path.join(dir, 'keys/timeseal-tsa-root.pem');
    expect(await given([at('contract.timestamped.pdf'), root, ...day])).toMatch(/^Verified: all \d+ checks passed/);
    const pdfRows = await page.locator('section.result', { hasText: 'Timestamped PDF' }).innerText();
    expect(pdfRows).toMatch(/Time-stamp 1 \(Timeseal time-stamp\)\s+Verified/);
    expect(pdfRows).toMatch(/promise: in the ledger of 2025-11-02\s+Verified/);
    shots.push(
      ...[await capture(page, 'offline-verifier-pdf-1280-light', { fullPage: true })].filter((f) => f !== undefined),
    );
    expect(await given([at('doc.txt.receipt.cose')], at('doc.txt'))).toMatch(/^Verified/);
    expect(await page.locator('section.result', { hasText: 'COSE receipt' }).innerText()).toMatch(
      /COSE receipt \(ES256\)\s+Verified/,
    );
    shots.push(
      ...[await capture(page, 'offline-verifier-cose-1280-light', { fullPage: true })].filter((f) => f !== undefined),
    );
    if (CAPTURE) {
      // The same two at phone width in the dark theme (the page follows the system's).
      await page.setViewportSize({ width: 390, height: 900 });
      await page.emulateMedia({ colorScheme: 'dark' });
      expect(await given([at('doc.txt.receipt.cose')], at('doc.txt'))).toMatch(/^Verified/);
      shots.push(
        ...[await capture(page, 'offline-verifier-cose-390-dark', { fullPage: true })].filter((f) => f !== undefined),
      );
      expect(await given([at('contract.timestamped.pdf'), root, ...day])).toMatch(/^Verified/);
      shots.push(
        ...[await capture(page, 'offline-verifier-pdf-390-dark', { fullPage: true })].filter((f) => f !== undefined),
      );
      expect(pngProblems(shots, start)).toEqual([]);
    }
    const changed = tampered(evidence.find((e) => e.kind === 'cose-receipt')!);
    expect(await given([changed.file], at('doc.txt'))).toMatch(
      /^Not verified: receipt \(ES256, kid [0-9a-f]{16}…\) over root/,
    );
    await context.close();
  }, 120_000);

  test.runIf(CAPTURE)(
    '/verify given a COSE receipt and a timestamped PDF, at 1280 and 390 px, dark and light',
    async () => {
      for (const theme of ['light', 'dark'] as const)
        for (const width of [1280, 390]) {
          const context = await browser.newContext({ viewport: { width, height: 900 }, baseURL: server!.url });
          await context.addInitScript((t) => localStorage.setItem('theme', t), theme);
          const page = await context.newPage();
          for (const [name, e] of [
            ['cose-valid', evidence.find((x) => x.kind === 'cose-receipt')!],
            ['cose-changed', tampered(evidence.find((x) => x.kind === 'cose-receipt')!)],
          ] as const) {
            await page.goto('/verify');
            await page.locator('#receipt-file').scrollIntoViewIfNeeded();
            await page.waitForFunction(
              () => !document.querySelector('#receipt-file')?.closest('astro-island')?.hasAttribute('ssr'),
            );
            await page.setInputFiles('#receipt-file', e.file);
            // A Transparent Statement is its own subject: any document will do for the card to be asked.
            await page.setInputFiles('#receipt-target', e.document ?? e.file);
            await page.locator('[data-testid=receipt-target-hash]').waitFor();
            await page.getByRole('button', { name: 'Check receipt' }).click();
            await page.locator('[data-testid=receipt-result]').waitFor();
            shots.push(
              ...[
                await capture(page.locator('[data-testid=receipt-check]'), `verify-${name}-${width}-${theme}`),
              ].filter((f) => f !== undefined),
            );
          }
          await page.goto('/verify');
          await page.locator('#pdf-check-file').scrollIntoViewIfNeeded();
          await page.waitForFunction(
            () => !document.querySelector('#pdf-check-file')?.closest('astro-island')?.hasAttribute('ssr'),
          );
          await page.setInputFiles('#pdf-check-file', at('contract.timestamped.pdf'));
          await page.locator('[data-testid=pdf-check-result]').waitFor();
          shots.push(
            ...[await capture(page.locator('[data-testid=pdf-check]'), `verify-pdf-kept-${width}-${theme}`)].filter(
              (f) => f !== undefined,
            ),
          );
          await context.close();
        }
      expect(pngProblems(shots, start)).toEqual([]);
    },
    240_000,
  );
});
