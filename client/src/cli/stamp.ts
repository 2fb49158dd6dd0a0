// `timeseal-client stamp`: hash files, folders, stdin and given digests, submit each distinct hash once (batches),
// write each proof file as soon as its hash is acknowledged and its receipt checks, and upgrade the pending proofs a
// re-run finds.
import fs from 'node:fs';
import path from 'node:path';
import { fromBase64, fromHex } from '../../../core/encoding.ts';
import { EXIT_CODES, worstOutcome, type Outcome } from '../../../core/exit-codes.ts';
import { checkReceipt } from '../../../core/receipt.ts';
import { isTemporary, TimesealClientError } from '../errors.ts';
import { checkHash } from '../hash.ts';
import { loadKeys } from '../keys.ts';
import { encodeProofFile, newProofFile, parseProofFile, PROOF_SUFFIX } from '../proof-file.ts';
import { MAX_BATCH, stamp } from '../stamp.ts';
import { pinServer } from '../trust.ts';
import type { ProofFile } from '../types.ts';
import { DEFAULT_HEADERS_FROM, upgrade } from '../upgrade.ts';
import {
  httpOf,
  isComplete,
  loadTrust,
  networkOf,
  printer,
  saveTrust,
  serverOf,
  shown,
  trustPath,
  type Common,
} from './common.ts';
import { controller } from './exit.ts';
import { keepOmissions } from './omission.ts';
import {
  digestProofPath,
  excluded,
  fileField,
  formatBytes,
  globToRegExp,
  hashFile,
  parseSha256sum,
  Progress,
  proofPathFor,
  readIfExists,
  walk,
  writeAtomic,
  type Skipped,
} from './files.ts';

interface StampTarget {
  display: string;
  doc: string | null;
  proofPath: string;
  hash?: string;
  stdin?: boolean;
}

export async function runStamp(
  paths: string[],
  opts: Common & {
    digest: string[];
    digestsFrom?: string;
    progress: boolean;
    concurrency: string;
    batchSize: string;
    headersFrom?: string;
  },
): Promise<Outcome> {
  const out = printer(!!opts.json);
  const server = serverOf(opts, true)!;
  const http = httpOf(opts);
  const batchSize = Number(opts.batchSize);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH)
    throw new TimesealClientError(
      'usage',
      `--batch-size must be a whole number from 1 to ${MAX_BATCH}, got ${JSON.stringify(opts.batchSize)}`,
    );
  const walkOptions = { all: !!opts.all, exclude: opts.exclude.map(globToRegExp) };
  const skipped: Skipped[] = [];
  const targets: StampTarget[] = [];
  const seen = new Set<string>();
  const add = (t: StampTarget) => {
    if (!seen.has(t.proofPath)) {
      seen.add(t.proofPath);
      targets.push(t);
    }
  };
  for (const p of paths) {
    if (p === '-') {
      add({ display: '(stdin)', doc: null, proofPath: '', stdin: true });
      continue;
    }
    const abs = path.resolve(p);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(abs);
    } catch {
      skipped.push({ file: p, reason: 'no such file or folder' });
      continue;
    }
    if (st.isSymbolicLink()) {
      const target = fs.statSync(abs, { throwIfNoEntry: false });
      if (target?.isFile()) add({ display: shown(abs), doc: abs, proofPath: proofPathFor(abs, opts.outDir) });
      else skipped.push({ file: p, reason: 'a symbolic link to a folder (not followed)' });
    } else if (st.isDirectory()) {
      for (const f of walk(abs, walkOptions, skipped, shown))
        add({ display: shown(f), doc: f, proofPath: proofPathFor(f, opts.outDir) });
    } else if (st.isFile()) {
      if (abs.endsWith(PROOF_SUFFIX)) skipped.push({ file: p, reason: 'a proof file' });
      else add({ display: shown(abs), doc: abs, proofPath: proofPathFor(abs, opts.outDir) });
    } else skipped.push({ file: p, reason: 'not a regular file' });
  }
  for (const d of opts.digest) {
    const hash = checkHash(d, '--digest');
    add({ display: hash, doc: null, proofPath: digestProofPath(hash, opts.outDir), hash });
  }
  if (opts.digestsFrom !== undefined) {
    const text = opts.digestsFrom === '-' ? fs.readFileSync(0, 'utf8') : fs.readFileSync(opts.digestsFrom, 'utf8');
    for (const { hash, name } of parseSha256sum(text, opts.digestsFrom)) {
      if (name === '-' || name === '')
        add({ display: hash, doc: null, proofPath: digestProofPath(hash, opts.outDir), hash });
      else {
        const abs = path.resolve(name);
        if (excluded(name.split(path.sep).join('/'), walkOptions.exclude)) continue;
        add({ display: name, doc: abs, proofPath: proofPathFor(abs, opts.outDir), hash });
      }
    }
  }
  const outcomes: Outcome[] = [];
  for (const s of skipped) {
    out.record({ file: s.file, action: 'skipped', reason: s.reason }, () => [`${s.file}: skipped: ${s.reason}`]);
    if (s.reason === 'no such file or folder') outcomes.push('not-found');
  }
  if (targets.length === 0) {
    out.note('nothing to stamp');
    return worstOutcome([...outcomes, 'not-found']);
  }

  // Hash what is not hashed yet, one file after the other, streamed.
  const progress = new Progress(opts.progress && !opts.json);
  let bytes = 0;
  const failures = new Map<StampTarget, string>();
  /** Targets that failed for a temporary reason (exit 75): a re-run may complete them. */
  const temporary = new Set<StampTarget>();
  for (const [i, t] of targets.entries()) {
    if (t.hash !== undefined) continue;
    const before = bytes;
    try {
      if (t.stdin) {
        t.hash = await hashFile(
          process.stdin,
          (n) => progress.update(`hashing stdin · ${formatBytes(before + n)}`),
          controller.signal,
        );
        t.proofPath = digestProofPath(t.hash, opts.outDir);
      } else {
        t.hash = await hashFile(
          t.doc!,
          (n) => {
            bytes = before + n;
            progress.update(`hashing ${i + 1}/${targets.length} files · ${formatBytes(bytes)}`);
          },
          controller.signal,
        );
      }
    } catch (err) {
      if (controller.signal.aborted) throw err;
      failures.set(t, `cannot read it: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  progress.done();

  const trustFile = trustPath(opts);
  const trust = loadTrust(trustFile);
  const pin = await pinServer(trust, server, http);
  if (pin.pinned === 'new') out.note(`pinned the keys of ${server} in ${trustFile}`);
  for (const n of pin.notes) out.note(n);
  saveTrust(trustFile, trust);
  const keys = loadKeys(trust.servers[server]!.keys);

  // Existing proofs: complete ones are left alone, pending ones upgraded, a changed document is an error.
  const toStamp: StampTarget[] = [];
  const toUpgrade: Array<{ t: StampTarget; proof: ProofFile }> = [];
  const done: Array<{ t: StampTarget; record: Record<string, unknown>; human: string }> = [];
  for (const t of targets) {
    if (failures.has(t)) continue;
    const existing = readIfExists(t.proofPath);
    if (existing === undefined) {
      toStamp.push(t);
      continue;
    }
    let proof: ProofFile;
    try {
      proof = parseProofFile(existing);
    } catch (err) {
      failures.set(t, `its proof file ${shown(t.proofPath)} is damaged: ${(err as Error).message}`);
      continue;
    }
    // A proof of a digest beside a document is its time-stamp's (stamp --pdf): upgraded as any pending proof.
    if (proof.hash !== t.hash && proof.file !== null)
      failures.set(
        t,
        `it changed since it was stamped: its SHA-256 is ${t.hash}, its proof ${shown(t.proofPath)} is for ${proof.hash} (move the old proof away to stamp it again)`,
      );
    else if (isComplete(proof))
      done.push({ t, record: { action: 'already-complete', stage: 'anchored' }, human: 'already complete' });
    else toUpgrade.push({ t, proof });
  }

  const byHash = new Map<string, StampTarget[]>();
  for (const t of toStamp) byHash.set(t.hash!, [...(byHash.get(t.hash!) ?? []), t]);
  const wantReceipt = keys.tsaRoots.length > 0;
  if (!wantReceipt) out.note(`${server} serves no TSA root (keys/timeseal-tsa-root.pem): stamping without receipts`);
  let sent = 0;
  let acknowledged = 0;
  const receiptChecks: Array<Promise<void>> = [];
  const summary =
    byHash.size === 0
      ? { requests: 0, batched: false, interrupted: null }
      : await stamp([...byHash.keys()], {
          ...http,
          server,
          receipt: wantReceipt,
          batchSize,
          concurrency: Number(opts.concurrency),
          onResult: (r) => {
            sent++;
            progress.update(`stamping ${sent}/${byHash.size} hashes`);
            const group = byHash.get(r.hash)!;
            if (!r.ok) {
              for (const t of group) {
                failures.set(t, `not stamped: ${r.error.message}`);
                if (isTemporary(r.error)) temporary.add(t);
              }
              return;
            }
            acknowledged++;
            // The receipt is checked beside the next results (Web Crypto's waits overlap); the proof file is written
            // once it checks, and never for a receipt that does not (for another hash, another TSA, not DER).
            const checked =
              r.receipt === null
                ? Promise.resolve(null)
                : Promise.resolve()
                    .then(() => checkReceipt(fromBase64(r.receipt!), keys.tsaRoots, fromHex(r.hash)))
                    .then((facts) => facts.genTime.toISOString());
            receiptChecks.push(
              checked.then(
                (genTime) => {
                  for (const t of group) {
                    const proof = newProofFile({
                      hash: r.hash,
                      server,
                      file: t.doc === null ? null : fileField(t.doc, t.proofPath),
                      submittedAt: r.submittedAt,
                      ledgerDate: r.ledgerDate,
                      receipt: r.receipt,
                    });
                    writeAtomic(t.proofPath, encodeProofFile(proof));
                  }
                  for (const t of group)
                    done.push({
                      t,
                      record: {
                        action: 'stamped',
                        stage: 'stamped',
                        submittedAt: r.submittedAt,
                        ledgerDate: r.ledgerDate,
                        receiptTime: genTime,
                      },
                      human: `stamped at ${r.submittedAt} (receipt ${genTime ?? 'not asked'}); the ledger of ${r.ledgerDate} is published at 00:01 UTC the next day`,
                    });
                },
                (err: unknown) => {
                  for (const t of group)
                    failures.set(
                      t,
                      `stamped, but its receipt does not check: ${(err as Error).message}; no proof file written`,
                    );
                },
              ),
            );
          },
        });
  await Promise.all(receiptChecks);
  progress.done();

  let upgraded = 0;
  if (toUpgrade.length > 0) {
    const results = await upgrade(
      toUpgrade.map((u) => u.proof),
      {
        ...http,
        trust,
        keysChecked: [server],
        network: networkOf(opts),
        headersFrom: opts.headersFrom ?? process.env.TIMESEAL_HEADERS_FROM ?? DEFAULT_HEADERS_FROM,
      },
    );
    await keepOmissions(
      results,
      toUpgrade.map((u) => u.t.proofPath),
      { ...http, trust },
    );
    results.forEach((r, i) => {
      const { t } = toUpgrade[i]!;
      if (r.error !== undefined) {
        failures.set(t, `its pending proof could not be upgraded: ${r.error.message}`);
        if (isTemporary(r.error)) temporary.add(t);
      } else {
        if (r.changed) {
          writeAtomic(t.proofPath, encodeProofFile(r.proof));
          upgraded++;
        }
        done.push({
          t,
          record: {
            action: r.changed ? 'upgraded' : 'unchanged',
            stage: r.stage,
            complete: r.complete,
            notes: r.notes,
          },
          human: `already stamped; ${r.stage}${r.complete ? ', complete' : ''} (${r.notes.join('; ')})`,
        });
      }
    });
  }
  saveTrust(trustFile, trust);

  for (const t of targets) {
    const fail = failures.get(t);
    const d = done.find((x) => x.t === t);
    const base = { file: t.display, proof: shown(t.proofPath), hash: t.hash ?? null };
    if (fail !== undefined) {
      outcomes.push(temporary.has(t) ? 'temporary' : 'failed');
      out.record({ ...base, action: 'failed', error: fail, ...(temporary.has(t) ? { temporary: true } : {}) }, () => [
        `${t.display}: FAILED: ${fail}`,
      ]);
    } else if (d !== undefined) {
      outcomes.push('ok');
      out.record({ ...base, ...d.record }, () => [`${t.display}: ${d.human}`]);
    }
  }
  out.note(
    `${targets.length} file(s), ${byHash.size} distinct hash(es) sent in ${summary.requests} request(s)${summary.batched ? ' (batched)' : ''}${toUpgrade.length > 0 ? `, ${upgraded} of ${toUpgrade.length} pending proof(s) upgraded` : ''}${failures.size > 0 ? `, ${failures.size} failed` : ''}`,
  );
  if (summary.interrupted !== null) {
    out.note(
      `stopped: ${summary.interrupted.message}. ${acknowledged} of ${byHash.size} hash(es) were stamped and their proofs written; the other ${byHash.size - acknowledged} were not acknowledged. Run the same command again to send them: files with a proof are not sent again (exit ${EXIT_CODES.temporary})`,
    );
  }
  return worstOutcome(outcomes);
}
