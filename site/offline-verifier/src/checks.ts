// Every check the offline verifier runs, as a pure function from what the person gave (document hash, files,
// keys, fetched block headers) to a report of plain verdicts. The checking itself is core/'s: the same parsers
// and verifiers the site, the CLI and the pipeline use. This module only decides which core function applies to
// which inputs, and turns each outcome into "Verified" or "Not verified: <reason>". It has no DOM and no I/O, so
// it runs unchanged under Node in the tests.
//
// One module per kind of input, under checks/: bundle.ts, tlog-proof.ts, day.ts (a day's files), checkpoint.ts (a
// checkpoint's lines, wherever it comes from), receipt.ts, ots-file.ts, bitcoin.ts (attestations and block
// headers); context.ts holds what they share and report.ts the rows they make. This module groups what was
// given and runs them.
import { parseCheckpoint } from '../../../core/checkpoint.ts';
import type { PublicKeySet } from '../../../core/day.ts';
import { fromBase64, fromUtf8, toHex } from '../../../core/encoding.ts';
import type { Ledger } from '../../../core/ledger.ts';
import { parseNote } from '../../../core/note.ts';
import { parseDetached, walkAttestations } from '../../../core/ots.ts';
import { parseProofBundle } from '../../../core/proof.ts';
import {
  ALG_ES256,
  ALG_ML_DSA_65,
  ALGORITHM_NAMES,
  receiptKid,
  type ReceiptPublicKey,
} from '../../../core/cose-receipt.ts';
import { ecdsaPublicKeyToSpkiDer, fingerprint } from '../../../core/sig.ts';
import { describeQuorum, readWitnessPolicy } from '../../../core/witness-policy.ts';
import { headerSection, HeaderPool, type BitcoinClaim } from './checks/bitcoin.ts';
import { bundleSection } from './checks/bundle.ts';
import { checkpointSection } from './checks/checkpoint.ts';
import { coseReceiptSection, daySignatureSection, transparentStatementSection } from './checks/cose-receipt.ts';
import { ledgerOf, sha256Of, type Context, type PolicyInput, type VerifierInputs } from './checks/context.ts';
import { daySection, type Day } from './checks/day.ts';
import { omissionClaim, omissionSection } from './checks/omission.ts';
import { otsSection } from './checks/ots-file.ts';
import { checkPdfs, pdfDigests, pdfSection } from './checks/pdf.ts';
import { receiptSection } from './checks/receipt.ts';
import {
  fail,
  info,
  message,
  NO_ECDSA,
  NO_MLDSA,
  pending,
  type Check,
  type Report,
  type Section,
} from './checks/report.ts';
import { tlogProofSection } from './checks/tlog-proof.ts';
import { clientProofParts, type ClassifiedInput } from './inputs.ts';

export type { FetchedHeader } from './checks/bitcoin.ts';
export type { KeyInput, VerifierInputs } from './checks/context.ts';
export type { Check, Report } from './checks/report.ts';

function keySection(inputs: VerifierInputs, policy: PolicyInput | undefined, problems: ClassifiedInput[]): Section {
  const checks: Check[] = [];
  const { ecdsa, mldsa } = inputs.keys;
  checks.push(
    ecdsa
      ? info('ECDSA P-256 public key', `fingerprint ${fingerprint(ecdsaPublicKeyToSpkiDer(ecdsa.key))}`, [
          `From ${ecdsa.source}`,
        ])
      : pending('ECDSA P-256 public key', NO_ECDSA),
  );
  checks.push(
    mldsa
      ? info('ML-DSA-65 public key', `fingerprint ${fingerprint(mldsa.key)}`, [`From ${mldsa.source}`])
      : pending('ML-DSA-65 public key', NO_MLDSA),
  );
  for (const [label, k] of [
    ['ES256 receipt key', inputs.keys.receiptEs256],
    ['ML-DSA-65 receipt key', inputs.keys.receiptMldsa65],
  ] as const) {
    const alg = label.startsWith('ES256') ? ALG_ES256 : ALG_ML_DSA_65;
    if (k) checks.push(info(label, `kid ${toHex(receiptKid({ alg, publicKey: k.key }))}`, [`From ${k.source}`]));
  }
  const retired = inputs.keys.retiredReceipt;
  for (const k of retired?.keys ?? [])
    checks.push(
      info(
        `Retired ${ALGORITHM_NAMES[k.alg]} receipt key`,
        `kid ${toHex(receiptKid(k))}${k.days ? `, signed ${k.days[0]} to ${k.days[1]}` : ''}`,
        [`From ${retired!.source}`],
      ),
    );
  if (policy)
    checks.push(
      info(
        'Witness policy',
        `${policy.policy.witnesses.map((w) => w.name).join(', ')}; quorum ${describeQuorum(policy.policy)}`,
        [`From ${policy.source}`],
      ),
    );
  if (inputs.authority)
    checks.push(
      info(
        'TSA certificate authority',
        `${inputs.authority.certs.length} certificate${inputs.authority.certs.length === 1 ? '' : 's'}`,
        [`From ${inputs.authority.source}`],
      ),
    );
  for (const p of problems) checks.push(fail(`Key file ${p.name}`, p.problem ?? 'not a public key'));
  return { title: 'Public keys', checks };
}

/** Checks everything given and returns the report the page shows. */
export async function verifyInputs(given: VerifierInputs): Promise<Report> {
  // A timeseal-client proof file is checked as the bundle, receipt and headers it holds, and (version 2) as the
  // broken promise it keeps the day's signed ledger for.
  const omissions = given.files.flatMap((f) => omissionClaim(f) ?? []);
  const inputs = { ...given, files: given.files.flatMap(clientProofParts) };
  const files = inputs.files;
  const keys: Partial<PublicKeySet> = {};
  if (inputs.keys.ecdsa) keys.ecdsa = inputs.keys.ecdsa.key;
  if (inputs.keys.mldsa) keys.mldsa = inputs.keys.mldsa.key;
  if (inputs.keys.ed25519) keys.ed25519 = inputs.keys.ed25519.key;
  if (inputs.keys.mldsa44) keys.mldsa44 = inputs.keys.mldsa44.key;
  const receiptKeys: ReceiptPublicKey[] = [];
  if (inputs.keys.receiptEs256) receiptKeys.push({ alg: ALG_ES256, publicKey: inputs.keys.receiptEs256.key });
  if (inputs.keys.receiptMldsa65) receiptKeys.push({ alg: ALG_ML_DSA_65, publicKey: inputs.keys.receiptMldsa65.key });
  receiptKeys.push(...(inputs.keys.retiredReceipt?.keys ?? []));

  const ledgers = files
    .filter((f) => f.kind === 'ledger')
    .map((input) => {
      let ledger: Ledger | undefined;
      try {
        ledger = ledgerOf(input.bytes);
      } catch {
        ledger = undefined;
      }
      return { input, sha256: toHex(sha256Of(input.bytes)), ...(ledger ? { ledger } : {}) };
    });
  const bundles = files
    .filter((f) => f.kind === 'bundle')
    .map((input) => {
      try {
        return { input, bundle: parseProofBundle(fromUtf8(input.bytes)) };
      } catch {
        return { input };
      }
    });

  // Every Bitcoin attestation in any proof given, for pairing block headers with them.
  const claims: BitcoinClaim[] = [];
  const otsSources: Uint8Array[] = [
    ...files.filter((f) => f.kind === 'ots').map((f) => f.bytes),
    ...bundles.flatMap((b) => {
      try {
        return b.bundle?.ots ? [fromBase64(b.bundle.ots)] : [];
      } catch {
        return [];
      }
    }),
  ];
  for (const bytes of otsSources) {
    try {
      for (const a of walkAttestations(parseDetached(bytes).timestamp)) {
        if (a.attestation.kind === 'bitcoin') claims.push({ height: a.attestation.height, message: a.message });
      }
    } catch {
      // Reported in the proof's own section.
    }
  }
  // The witness policy is the person's to give (built in, it would grow the file with every witness past its
  // size budget): the last one dropped counts; inputs.ts has read it already.
  const policyFile = files.filter((f) => f.kind === 'witness-policy' && typeof f.value === 'string').at(-1);
  const policy = policyFile
    ? { policy: readWitnessPolicy(policyFile.value as string), source: policyFile.name }
    : undefined;
  // The PDFs first: a proof of a time-stamp's digest (timeseal-client's) is for that PDF, its document.
  const pdfs = checkPdfs(
    files.filter((f) => f.kind === 'timestamped-pdf'),
    inputs.authority?.certs ?? [],
  );
  const ctx: Context = {
    inputs,
    pdfDigests: await pdfDigests(pdfs),
    ...(policy ? { policy } : {}),
    keys,
    receiptKeys,
    ledgers,
    bundles,
    pool: new HeaderPool(files, inputs.fetchedHeaders ?? [], claims),
    network: inputs.network ?? 'mainnet',
    later: [],
    verified: new Map(),
  };

  const sections: Section[] = [];
  for (const b of bundles) sections.push(bundleSection(ctx, b));
  for (const t of files.filter((f) => f.kind === 'tlog-proof')) sections.push(tlogProofSection(ctx, t));

  // Group the day files by date: from their names, else from the ledger's content; a lone unnamed signature
  // belongs to the only ledger given.
  const days = new Map<string, Day>();
  const dayOf = (date: string): Day => {
    let d = days.get(date);
    if (!d) days.set(date, (d = { date }));
    return d;
  };
  const unplaced: ClassifiedInput[] = [];
  for (const l of ledgers) {
    const date = l.input.date ?? l.ledger?.date;
    if (date) dayOf(date).ledger = l;
    else unplaced.push(l.input);
  }
  const onlyDate = days.size === 1 ? [...days.keys()][0] : undefined;
  const slot = { 'ecdsa-signature': 'ecdsa', 'mldsa-signature': 'mldsa', 'signatures-meta': 'meta' } as const;
  for (const f of files) {
    if (f.kind === 'ecdsa-signature' || f.kind === 'mldsa-signature' || f.kind === 'signatures-meta') {
      const date = f.date ?? onlyDate;
      if (date) dayOf(date)[slot[f.kind]] = f;
      else unplaced.push(f);
    }
    if (f.kind === 'cosignatures' || f.kind === 'tsr') {
      const date = f.date ?? onlyDate;
      if (!date) unplaced.push(f);
      else if (f.kind === 'tsr') (dayOf(date).tokens ??= []).push(f);
      else dayOf(date).cosignatures = f;
    }
  }
  const standaloneCheckpoints: ClassifiedInput[] = [];
  for (const f of files.filter((x) => x.kind === 'checkpoint')) {
    const date =
      f.date ??
      [...days.values()].find((d) => {
        try {
          const cp = parseCheckpoint(parseNote(f.bytes).text);
          return d.ledger?.ledger && cp.size === d.ledger.ledger.treeSize && toHex(cp.root) === d.ledger.ledger.root;
        } catch {
          return false;
        }
      })?.date;
    if (date && days.has(date) && !dayOf(date).checkpoint) dayOf(date).checkpoint = f;
    else standaloneCheckpoints.push(f);
  }
  for (const day of [...days.values()].sort((a, b) => (a.date < b.date ? -1 : 1)))
    sections.push(daySection(ctx, day, days));
  for (const c of standaloneCheckpoints) sections.push(checkpointSection(ctx, c));
  for (const o of omissions) sections.push(omissionSection(ctx, o));
  for (const r of files.filter((f) => f.kind === 'receipt')) sections.push(receiptSection(ctx, r));
  for (const { input, bundle } of bundles) {
    bundle?.receipts.forEach((r, i) =>
      sections.push(
        receiptSection(ctx, { kind: 'receipt', name: `${i + 1} in ${input.name}`, bytes: fromBase64(r) }, bundle),
      ),
    );
  }
  for (const { input, bundle } of bundles) {
    bundle?.coseReceipts.forEach((r, i) => {
      let bytes: Uint8Array;
      try {
        bytes = fromBase64(r, 'cose_receipts');
      } catch (err) {
        sections.push({
          title: `COSE receipt ${i + 1} in ${input.name}`,
          checks: [fail('COSE receipt', message(err))],
        });
        return;
      }
      sections.push(
        coseReceiptSection(ctx, { kind: 'cose-receipt', name: `${i + 1} in ${input.name}`, bytes }, bundle),
      );
    });
  }
  for (const c of files.filter((f) => f.kind === 'cose-receipt')) sections.push(coseReceiptSection(ctx, c));
  for (const t of files.filter((f) => f.kind === 'transparent-statement'))
    sections.push(transparentStatementSection(ctx, t));
  for (const d of files.filter((f) => f.kind === 'day-receipt-signature')) sections.push(daySignatureSection(ctx, d));
  for (const [p, check] of pdfs) sections.push(pdfSection(ctx, p, check));
  for (const o of files.filter((f) => f.kind === 'ots')) sections.push(otsSection(ctx, o));
  for (const h of ctx.pool.unused()) sections.push(headerSection(h, ctx.pool, ctx.network));
  for (const u of unplaced) {
    sections.push({
      title: u.name,
      checks: [
        fail(
          `${u.name}`,
          `cannot tell which day this ${u.kind.replace('-', ' ')} belongs to: name it as in the archive (YYYY-MM-DD.json…)`,
        ),
      ],
    });
  }

  const evidence = sections.length;
  const keyProblems = files.filter(
    (f) =>
      (f.kind === 'ecdsa-key' ||
        f.kind === 'mldsa-key' ||
        f.kind === 'receipt-key' ||
        f.kind === 'retired-receipt-keys' ||
        f.kind === 'tsa-ca' ||
        f.kind === 'witness-policy') &&
      f.problem,
  );
  sections.unshift(keySection(inputs, ctx.policy, keyProblems));
  await Promise.all(ctx.later);
  if (inputs.document) {
    const { hash, source, digests = {} } = inputs.document;
    sections.unshift({
      title: 'Your document',
      checks: [
        info(`SHA-${hash.length * 4}`, hash, [`From ${source}`]),
        ...Object.entries(digests).map(([a, d]) => info(a, d)),
      ],
    });
  }
  return { summary: summarize(sections, evidence, keyProblems.length > 0), sections };
}

function summarize(sections: Section[], evidence: number, keyProblem: boolean): Report['summary'] {
  const rows = sections.flatMap((s) => s.checks.map((c) => ({ s, c })));
  const failed = rows.find((r) => r.c.state === 'fail');
  if (failed) return { state: 'fail', text: `${failed.c.verdict} (${failed.s.title}: ${failed.c.label})` };
  if (evidence === 0 && !keyProblem)
    return { state: 'empty', text: 'Add your document and its proof files to check them.' };
  const waiting =
    rows.find((r) => r.c.state === 'pending' && r.s.title !== 'Public keys') ??
    rows.find((r) => r.c.state === 'pending');
  if (waiting) return { state: 'pending', text: `${waiting.c.verdict} (${waiting.s.title}: ${waiting.c.label})` };
  const passed = rows.filter((r) => r.c.state === 'ok').length;
  // What the person did not give is said, not hidden behind "all checks passed": without a Bitcoin block
  // checked, nothing here shows the time is anchored beyond the log's own signatures.
  const anchored = rows.some((r) => r.c.state === 'ok' && r.c.label.startsWith('Bitcoin block '));
  const bundleWithoutOts = rows.some((r) => r.c.label === 'Bitcoin anchor' && r.c.state === 'info');
  const notChecked = anchored
    ? ''
    : ` Bitcoin anchor not checked: ${bundleWithoutOts ? 'the bundle has no .ots yet' : 'no .ots given'}.`;
  return { state: 'ok', text: `Verified: all ${passed} checks passed.${notChecked}` };
}
