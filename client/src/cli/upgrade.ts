// `timeseal-client upgrade`: complete proof files (the bundle, the consistency proof, the Bitcoin headers), once
// or, with --wait, round after round until complete; given a timestamped PDF, the proof of each of its
// time-stamps' digests (cli/pdf.ts). Once a bundle holds the leaf's COSE receipt (RFC 9942,
// ES256; docs/FORMAT.md §11), it is also written beside the proof file as `<name>.receipt.cose`, for SCITT tools.
// A proof whose day is published without its hash (the library's 'broken', from the server's 404) gets the day's
// signed ledger kept beside it, checked first (omission.ts fetchDayLedger: downloaded once per day and run, in
// pieces, never held), in `timeseal-ledgers/` of its folder, and is written as `timeseal-client-proof/2` naming it:
// verify then shows the broken promise offline.
import fs from 'node:fs';
import path from 'node:path';
import { worstOutcome, type Outcome } from '../../../core/exit-codes.ts';
import { isTemporary, TimesealClientError } from '../errors.ts';
import { encodeProofFile, PROOF_SUFFIX } from '../proof-file.ts';
import type { ProofFile } from '../types.ts';
import { pinServer } from '../trust.ts';
import { DEFAULT_HEADERS_FROM, upgrade, type UpgradeResult } from '../upgrade.ts';
import {
  httpOf,
  loadTrust,
  networkOf,
  printer,
  readProof,
  saveTrust,
  serverOf,
  shown,
  trustPath,
  type Common,
} from './common.ts';
import { controller, outcomeOfError } from './exit.ts';
import { globToRegExp, proofPathFor, RECEIPT_SUFFIX, walk, walkProofs, writeAtomic } from './files.ts';
import { keepOmissions } from './omission.ts';
import { proofsOfPdf, writeMissingPdfProofs } from './pdf.ts';

export async function runUpgrade(
  paths: string[],
  opts: Common & { wait?: boolean; poll: string; maxWait: string; headersFrom?: string },
): Promise<Outcome> {
  const out = printer(!!opts.json);
  const http = httpOf(opts);
  const walkOptions = { all: !!opts.all, exclude: opts.exclude.map(globToRegExp) };
  const files: string[] = [];
  const outcomes: Outcome[] = [];
  const trustFile = trustPath(opts);
  const trust = loadTrust(trustFile);
  const server = serverOf(opts, false);
  // A timestamped PDF without the proof files of its time-stamps (stamped in the browser) gets them written:
  // its tokens are checked against the TSA root of --server, pinned here when it is not yet.
  let pinned = false;
  const proofsWritten = async (abs: string, inFolder = false): Promise<string[]> => {
    if (server !== undefined && !pinned) {
      pinned = true;
      const pin = await pinServer(trust, server, http);
      if (pin.pinned === 'new') out.note(`pinned the keys of ${server} in ${trustFile}`);
      for (const n of pin.notes) out.note(n);
    }
    const made = await writeMissingPdfProofs(abs, opts.outDir, trust);
    for (const f of made.written) out.note(`${shown(abs)}: wrote ${shown(f)}, the proof file of a time-stamp's digest`);
    // In a folder, a time-stamp of another authority is not this command's to name.
    if (made.unpinned.length > 0 && !inFolder) {
      outcomes.push('not-found');
      const error = `time-stamp ${made.unpinned.join(', ')} has no proof file, and no server whose TSA root its token chains to is pinned: give --server URL of the server that made it`;
      out.record({ file: shown(abs), state: 'not-found', error }, () => [`${shown(abs)}: NOT FOUND: ${error}`]);
    }
    return made.written;
  };
  for (const p of paths.length === 0 ? [opts.outDir ?? '.'] : paths) {
    const abs = path.resolve(p);
    const st = fs.statSync(abs, { throwIfNoEntry: false });
    if (st === undefined) {
      outcomes.push('not-found');
      out.record({ file: p, state: 'not-found', error: 'no such file or folder' }, () => [
        `${p}: NOT FOUND: no such file or folder`,
      ]);
    } else if (st.isDirectory()) {
      files.push(...walkProofs(abs, walkOptions));
      // With --server, the folder's PDFs stamped in the browser (no proof file yet) get theirs written too; without
      // it no PDF is read (a folder of documents is not read whole for the time-stamps that may be in them).
      if (server !== undefined) {
        for (const doc of walk(abs, walkOptions, [], shown)) {
          if (/\.pdf$/i.test(doc)) files.push(...(await proofsWritten(doc, true)));
        }
      }
    } else if (abs.endsWith(PROOF_SUFFIX)) files.push(abs);
    else {
      const proof = proofPathFor(abs, opts.outDir);
      // A timestamped PDF: the proof of each of its time-stamps' digests (an earlier version's among them).
      const made = await proofsWritten(abs);
      const ofPdf = await proofsOfPdf(abs, opts.outDir);
      if (ofPdf.length > 0) files.push(...ofPdf);
      else if (made.length > 0) files.push(...made);
      else if (fs.existsSync(proof)) files.push(proof);
      else {
        outcomes.push('not-found');
        out.record({ file: p, proof: shown(proof), state: 'not-found', error: 'no proof file' }, () => [
          `${p}: NOT FOUND: no proof file ${shown(proof)} (stamp it first)`,
        ]);
      }
    }
  }
  const proofs = new Map<string, ProofFile>();
  for (const f of [...new Set(files)]) {
    try {
      proofs.set(f, readProof(f));
    } catch (err) {
      outcomes.push('failed');
      out.record({ proof: shown(f), state: 'invalid', error: (err as Error).message }, () => [
        `${shown(f)}: FAILED: ${(err as Error).message}`,
      ]);
    }
  }
  if (proofs.size === 0 && outcomes.length === 0) {
    out.note('no proof files found');
    return 'not-found';
  }
  const headersFrom = opts.headersFrom ?? process.env.TIMESEAL_HEADERS_FROM ?? DEFAULT_HEADERS_FROM;
  const poll = Number(opts.poll);
  const maxWait = Number(opts.maxWait);
  if (!(poll > 0) || !(maxWait > 0))
    throw new TimesealClientError('usage', '--poll and --max-wait take a positive number of seconds');
  const deadline = Date.now() + maxWait * 1000;

  let pending = [...proofs.keys()];
  const final = new Map<string, UpgradeResult>();
  for (;;) {
    const round = pending;
    const results = await upgrade(
      round.map((f) => proofs.get(f)!),
      {
        ...http,
        trust,
        ...(server === undefined ? {} : { server }),
        headersFrom,
        network: networkOf(opts),
        onResult: (r, i) => {
          const f = round[i]!;
          if (r.changed) {
            writeAtomic(f, encodeProofFile(r.proof));
            proofs.set(f, r.proof);
            writeCoseReceipt(f, r.proof);
          }
        },
      },
    );
    await keepOmissions(results, round, { ...http, trust, ...(server === undefined ? {} : { server }) });
    for (const [i, r] of results.entries()) if (r.proof.omittedFrom !== undefined) proofs.set(round[i]!, r.proof);
    saveTrust(trustFile, trust);
    results.forEach((r, i) => final.set(round[i]!, r));
    // With --wait, a server that cannot be reached or fails (5xx) is asked again next round; a proof that does
    // not check, a fork or changed keys are final.
    pending = pending.filter((f) => {
      const r = final.get(f)!;
      return r.error === undefined ? !r.complete : !!opts.wait && isTemporary(r.error);
    });
    if (!opts.wait || pending.length === 0) break;
    const nextChecks = pending.map((f) => Date.parse(final.get(f)!.nextCheck ?? '') || Date.now() + poll * 1000);
    for (const f of pending)
      if (final.get(f)!.error !== undefined) out.note(`${shown(f)}: ${final.get(f)!.error!.message}; asking again`);
    const wakeAt = Math.max(Date.now() + poll * 1000, Math.min(...nextChecks));
    if (wakeAt > deadline) {
      out.note(`--max-wait reached with ${pending.length} proof(s) still pending`);
      break;
    }
    out.note(`${pending.length} proof(s) pending; asking again at ${new Date(wakeAt).toISOString()}`);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, wakeAt - Date.now());
      controller.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          reject(new TimesealClientError('aborted', 'interrupted while waiting'));
        },
        { once: true },
      );
    });
  }
  for (const [f, r] of final) {
    const p = proofs.get(f)!;
    const base = { proof: shown(f), file: p.file, hash: r.hash };
    if (r.error !== undefined && r.proof.omittedFrom !== undefined && r.error.code === 'broken') {
      // The promise broken, and the day's signed ledger that shows it kept beside the proof.
      outcomes.push('failed');
      out.record(
        { ...base, state: 'broken', code: r.error.code, error: r.error.message, omittedFrom: r.proof.omittedFrom },
        () => [`${shown(f)}: BROKEN: ${r.error!.message}`],
      );
    } else if (r.error !== undefined) {
      outcomes.push(outcomeOfError(r.error));
      out.record({ ...base, state: 'error', code: r.error.code, error: r.error.message }, () => [
        `${shown(f)}: FAILED (${r.error!.code}): ${r.error!.message}`,
      ]);
    } else {
      outcomes.push(r.complete ? 'ok' : 'pending');
      out.record(
        {
          ...base,
          state: r.complete ? 'complete' : 'pending',
          stage: r.stage,
          changed: r.changed,
          nextCheck: r.nextCheck,
          notes: r.notes,
        },
        () => [
          `${shown(f)}: ${r.complete ? 'COMPLETE' : 'PENDING'} (${r.stage}${r.changed ? ', updated' : ''}): ${r.notes.join('; ') || 'nothing new'}${r.nextCheck ? `; next check ${onServerClock(r.nextCheck, r.serverLead)}` : ''}`,
        ],
      );
    }
  }
  return worstOutcome(outcomes);
}

/** `<name>.receipt.cose` beside the proof file `<name>.timeseal.json`: the bundle's ES256 COSE receipt, once. */
function writeCoseReceipt(proofFile: string, proof: ProofFile): void {
  const receipts = proof.bundle?.['cose_receipts'];
  if (!Array.isArray(receipts) || typeof receipts[0] !== 'string') return;
  const file = `${proofFile.slice(0, -PROOF_SUFFIX.length)}${RECEIPT_SUFFIX}`;
  if (!fs.existsSync(file)) writeAtomic(file, Buffer.from(receipts[0], 'base64'));
}

/** A time of ours as the server's clock reads it, when the two differ by a minute or more (a moved development
 * clock): the person compares it with the server's times (the day published, the site's countdown). */
function onServerClock(iso: string, lead: number | undefined): string {
  if (lead === undefined || Math.abs(lead) < 60_000) return iso;
  return `${new Date(Date.parse(iso) + lead).toISOString()} server time (${iso} here)`;
}
