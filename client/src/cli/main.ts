// `timeseal-client`: stamp files, upgrade their proofs, verify them offline, show what a proof holds.
// Exit codes: 0 complete (or done), 2 pending (valid so far), 1 invalid or error (bad usage too), 3 not found,
// 75 temporary (stamp and upgrade: the server could not be reached, the connection broke, or it answered 429 or
// 5xx; what it acknowledged is saved, and running the same command again continues). With several files the
// worst wins: 1, then 75, then 3, then 2. `--json` prints one JSON object per file, one a line,
// and nothing else on stdout; notes and progress go to stderr (progress only on a terminal).
import { setMaxListeners } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command, Option } from 'commander';
import { fromBase64, fromHex } from '../../../core/encoding.ts';
import { checkReceipt } from '../../../core/receipt.ts';
import { isTemporary, TimesealClientError } from '../errors.ts';
import { checkHash } from '../hash.ts';
import { normalizeServer, type HttpOptions } from '../http.ts';
import { describeProof } from '../info.ts';
import { loadKeys } from '../keys.ts';
import { encodeProofFile, newProofFile, parseProofFile, PROOF_SUFFIX, stageOf } from '../proof-file.ts';
import { mapInOrder } from '../pool.ts';
import { MAX_BATCH, stamp } from '../stamp.ts';
import { emptyTrust, encodeTrust, keyFilesFrom, parseTrust, pinServer } from '../trust.ts';
import type { BitcoinNetwork, KeyFiles, ProofFile, TrustData, VerifyReport } from '../types.ts';
import { DEFAULT_HEADERS_FROM, upgrade, type UpgradeResult } from '../upgrade.ts';
import { verify } from '../verify.ts';
import { VerifyCache } from '../cache.ts';
import { digestProofPath, excluded, fileField, formatBytes, globToRegExp, hashFile, parseSha256sum, Progress, proofPathFor, readIfExists, walk, walkProofs, writeAtomic, type Skipped } from './files.ts';

declare const CLIENT_VERSION: string;
const VERSION = typeof CLIENT_VERSION === 'string' ? CLIENT_VERSION : '0.0.0-dev';

/** 75 is sysexits.h's EX_TEMPFAIL: a temporary failure, the user is invited to try again. */
type Exit = 0 | 1 | 2 | 3 | 75;
const TEMPORARY = 75;
/** Files verified at once. */
const VERIFY_CONCURRENCY = 8;
/** The exit code of many results: 1 before 75 before 3 before 2 before 0. */
const worst = (codes: Exit[]): Exit => ([1, TEMPORARY, 3, 2] as const).find((c) => codes.includes(c)) ?? 0;

interface Common {
  server?: string;
  trust?: string;
  json?: boolean;
  outDir?: string;
  network?: string;
  timeout: string;
  all?: boolean;
  exclude: string[];
}

const controller = new AbortController();
// Every request in flight listens to it (pinning fetches a dozen key files at once): no leak warning for that.
setMaxListeners(0, controller.signal);
process.once('SIGINT', () => controller.abort(new Error('interrupted')));

function trustPath(opts: Common): string {
  if (opts.trust !== undefined) return path.resolve(opts.trust);
  if (process.env.TIMESEAL_TRUST) return path.resolve(process.env.TIMESEAL_TRUST);
  const config = process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(config, 'timeseal-client', 'trust.json');
}

function loadTrust(file: string): TrustData {
  const text = readIfExists(file);
  return text === undefined ? emptyTrust() : parseTrust(text);
}

/** Saves the trust store, merging what another run may have written meanwhile (its pins and checkpoints). */
function saveTrust(file: string, trust: TrustData): void {
  const onDisk = readIfExists(file);
  if (onDisk !== undefined) {
    try {
      const other = parseTrust(onDisk);
      for (const [url, s] of Object.entries(other.servers)) trust.servers[url] ??= s;
      for (const [origin, log] of Object.entries(other.logs)) {
        const mine = (trust.logs[origin] ??= { checkpoints: [], latest: null });
        for (const c of log.checkpoints) if (!mine.checkpoints.some((x) => x.size === c.size)) mine.checkpoints.push(c);
        mine.checkpoints.sort((a, b) => a.size - b.size);
        mine.latest ??= log.latest;
      }
    } catch {
      // an unreadable store is replaced by this one
    }
  }
  writeAtomic(file, encodeTrust(trust));
}

function serverOf(opts: Common, required: boolean): string | undefined {
  const s = opts.server ?? process.env.TIMESEAL_SERVER;
  if (s === undefined || s === '') {
    if (required) throw new TimesealClientError('usage', 'no server: give --server URL or set TIMESEAL_SERVER');
    return undefined;
  }
  return normalizeServer(s);
}

function networkOf(opts: Common): BitcoinNetwork {
  const n = opts.network ?? process.env.TIMESEAL_BITCOIN_NETWORK ?? 'mainnet';
  if (n !== 'mainnet' && n !== 'regtest') throw new TimesealClientError('usage', `--network must be mainnet or regtest, got ${JSON.stringify(n)}`);
  return n;
}

function httpOf(opts: Common): HttpOptions {
  const timeoutMs = Number(opts.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new TimesealClientError('usage', `--timeout must be a whole number of milliseconds, got ${JSON.stringify(opts.timeout)}`);
  return { signal: controller.signal, timeoutMs };
}

const cwd = process.cwd();
/** A path as shown: relative to the working folder when under it. */
const shown = (abs: string): string => {
  const rel = path.relative(cwd, abs);
  return rel === '' ? '.' : rel.startsWith('..') || path.isAbsolute(rel) ? abs : rel;
};

function printer(json: boolean) {
  return {
    record(obj: Record<string, unknown>, human: () => string[]): void {
      if (json) process.stdout.write(`${JSON.stringify(obj)}\n`);
      else for (const line of human()) process.stdout.write(`${line}\n`);
    },
    note(text: string): void {
      process.stderr.write(`timeseal-client: ${text}\n`);
    },
  };
}

function readProof(file: string): ProofFile {
  const text = readIfExists(file);
  if (text === undefined) throw new TimesealClientError('not-found', `${shown(file)}: no such proof file`);
  try {
    return parseProofFile(text);
  } catch (err) {
    throw new TimesealClientError('invalid', `${shown(file)}: ${(err as Error).message}`, { cause: err });
  }
}

const isComplete = (p: ProofFile) => stageOf(p) === 'anchored' && p.consistency !== null;

// ---- stamp ------------------------------------------------------------------------------------------------

interface StampTarget {
  display: string;
  doc: string | null;
  proofPath: string;
  hash?: string;
  stdin?: boolean;
}

async function runStamp(paths: string[], opts: Common & { digest: string[]; digestsFrom?: string; progress: boolean; concurrency: string; batchSize: string; headersFrom?: string }): Promise<Exit> {
  const out = printer(!!opts.json);
  const server = serverOf(opts, true)!;
  const http = httpOf(opts);
  const batchSize = Number(opts.batchSize);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH) throw new TimesealClientError('usage', `--batch-size must be a whole number from 1 to ${MAX_BATCH}, got ${JSON.stringify(opts.batchSize)}`);
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
      for (const f of walk(abs, walkOptions, skipped, shown)) add({ display: shown(f), doc: f, proofPath: proofPathFor(f, opts.outDir) });
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
      if (name === '-' || name === '') add({ display: hash, doc: null, proofPath: digestProofPath(hash, opts.outDir), hash });
      else {
        const abs = path.resolve(name);
        if (excluded(name.split(path.sep).join('/'), walkOptions.exclude)) continue;
        add({ display: name, doc: abs, proofPath: proofPathFor(abs, opts.outDir), hash });
      }
    }
  }
  const codes: Exit[] = [];
  for (const s of skipped) {
    out.record({ file: s.file, action: 'skipped', reason: s.reason }, () => [`${s.file}: skipped: ${s.reason}`]);
    if (s.reason === 'no such file or folder') codes.push(3);
  }
  if (targets.length === 0) {
    out.note('nothing to stamp');
    return worst([...codes, 3]);
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
        t.hash = await hashFile(process.stdin, (n) => progress.update(`hashing stdin · ${formatBytes(before + n)}`), controller.signal);
        t.proofPath = digestProofPath(t.hash, opts.outDir);
      } else {
        t.hash = await hashFile(t.doc!, (n) => {
          bytes = before + n;
          progress.update(`hashing ${i + 1}/${targets.length} files · ${formatBytes(bytes)}`);
        }, controller.signal);
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
  const done: Array<{ t: StampTarget; record: Record<string, unknown>; human: string; code: Exit }> = [];
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
    if (proof.hash !== t.hash) failures.set(t, `it changed since it was stamped: its SHA-256 is ${t.hash}, its proof ${shown(t.proofPath)} is for ${proof.hash} (move the old proof away to stamp it again)`);
    else if (isComplete(proof)) done.push({ t, record: { action: 'already-complete', stage: 'anchored' }, human: 'already complete', code: 0 });
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
            // Saved at once; the receipt is checked meanwhile, beside the next results (Web Crypto's waits overlap).
            for (const t of group) {
              const proof = newProofFile({ hash: r.hash, server, file: t.doc === null ? null : fileField(t.doc, t.proofPath), submittedAt: r.submittedAt, ledgerDate: r.ledgerDate, receipt: r.receipt });
              writeAtomic(t.proofPath, encodeProofFile(proof));
            }
            const checked = r.receipt === null ? Promise.resolve(null) : checkReceipt(fromBase64(r.receipt), keys.tsaRoots, fromHex(r.hash)).then((facts) => facts.genTime.toISOString());
            receiptChecks.push(
              checked.then(
                (genTime) => {
                  for (const t of group) done.push({ t, record: { action: 'stamped', stage: 'stamped', submittedAt: r.submittedAt, ledgerDate: r.ledgerDate, receiptTime: genTime }, human: `stamped at ${r.submittedAt} (receipt ${genTime ?? 'not asked'}); the ledger of ${r.ledgerDate} is published at 00:01 UTC the next day`, code: 0 });
                },
                (err: unknown) => {
                  for (const t of group) failures.set(t, `stamped, but its receipt does not check: ${(err as Error).message}`);
                },
              ),
            );
          },
        });
  await Promise.all(receiptChecks);
  progress.done();

  if (toUpgrade.length > 0) {
    const results = await upgrade(toUpgrade.map((u) => u.proof), { ...http, trust, network: networkOf(opts), headersFrom: opts.headersFrom ?? process.env.TIMESEAL_HEADERS_FROM ?? DEFAULT_HEADERS_FROM });
    results.forEach((r, i) => {
      const { t } = toUpgrade[i]!;
      if (r.error !== undefined) {
        failures.set(t, `its pending proof could not be upgraded: ${r.error.message}`);
        if (isTemporary(r.error)) temporary.add(t);
      }
      else {
        if (r.changed) writeAtomic(t.proofPath, encodeProofFile(r.proof));
        done.push({ t, record: { action: r.changed ? 'upgraded' : 'unchanged', stage: r.stage, complete: r.complete, notes: r.notes }, human: `already stamped; ${r.stage}${r.complete ? ', complete' : ''} (${r.notes.join('; ')})`, code: 0 });
      }
    });
  }
  saveTrust(trustFile, trust);

  for (const t of targets) {
    const fail = failures.get(t);
    const d = done.find((x) => x.t === t);
    const base = { file: t.display, proof: shown(t.proofPath), hash: t.hash ?? null };
    if (fail !== undefined) {
      codes.push(temporary.has(t) ? TEMPORARY : 1);
      out.record({ ...base, action: 'failed', error: fail, ...(temporary.has(t) ? { temporary: true } : {}) }, () => [`${t.display}: FAILED: ${fail}`]);
    } else if (d !== undefined) {
      codes.push(d.code);
      out.record({ ...base, ...d.record }, () => [`${t.display}: ${d.human}`]);
    }
  }
  out.note(`${targets.length} file(s), ${byHash.size} distinct hash(es) sent in ${summary.requests} request(s)${summary.batched ? ' (batched)' : ''}${toUpgrade.length > 0 ? `, ${toUpgrade.length} pending proof(s) upgraded` : ''}${failures.size > 0 ? `, ${failures.size} failed` : ''}`);
  if (summary.interrupted !== null) {
    out.note(`stopped: ${summary.interrupted.message}. ${acknowledged} of ${byHash.size} hash(es) were stamped and their proofs written; the other ${byHash.size - acknowledged} were not acknowledged. Run the same command again to send them: files with a proof are not sent again (exit ${TEMPORARY})`);
  }
  return worst(codes);
}

// ---- upgrade ----------------------------------------------------------------------------------------------

async function runUpgrade(paths: string[], opts: Common & { wait?: boolean; poll: string; maxWait: string; headersFrom?: string }): Promise<Exit> {
  const out = printer(!!opts.json);
  const http = httpOf(opts);
  const walkOptions = { all: !!opts.all, exclude: opts.exclude.map(globToRegExp) };
  const files: string[] = [];
  const codes: Exit[] = [];
  for (const p of paths.length === 0 ? [opts.outDir ?? '.'] : paths) {
    const abs = path.resolve(p);
    const st = fs.statSync(abs, { throwIfNoEntry: false });
    if (st === undefined) {
      codes.push(3);
      out.record({ file: p, state: 'not-found', error: 'no such file or folder' }, () => [`${p}: NOT FOUND: no such file or folder`]);
    } else if (st.isDirectory()) files.push(...walkProofs(abs, walkOptions));
    else if (abs.endsWith(PROOF_SUFFIX)) files.push(abs);
    else {
      const proof = proofPathFor(abs, opts.outDir);
      if (fs.existsSync(proof)) files.push(proof);
      else {
        codes.push(3);
        out.record({ file: p, proof: shown(proof), state: 'not-found', error: 'no proof file' }, () => [`${p}: NOT FOUND: no proof file ${shown(proof)} (stamp it first)`]);
      }
    }
  }
  const proofs = new Map<string, ProofFile>();
  for (const f of [...new Set(files)]) {
    try {
      proofs.set(f, readProof(f));
    } catch (err) {
      codes.push(1);
      out.record({ proof: shown(f), state: 'invalid', error: (err as Error).message }, () => [`${shown(f)}: FAILED: ${(err as Error).message}`]);
    }
  }
  if (proofs.size === 0 && codes.length === 0) {
    out.note('no proof files found');
    return 3;
  }
  const trustFile = trustPath(opts);
  const trust = loadTrust(trustFile);
  const server = serverOf(opts, false);
  const headersFrom = opts.headersFrom ?? process.env.TIMESEAL_HEADERS_FROM ?? DEFAULT_HEADERS_FROM;
  const poll = Number(opts.poll);
  const maxWait = Number(opts.maxWait);
  if (!(poll > 0) || !(maxWait > 0)) throw new TimesealClientError('usage', '--poll and --max-wait take a positive number of seconds');
  const deadline = Date.now() + maxWait * 1000;

  let pending = [...proofs.keys()];
  const final = new Map<string, UpgradeResult>();
  for (;;) {
    const round = pending;
    const results = await upgrade(round.map((f) => proofs.get(f)!), {
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
        }
      },
    });
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
    for (const f of pending) if (final.get(f)!.error !== undefined) out.note(`${shown(f)}: ${final.get(f)!.error!.message}; asking again`);
    const wakeAt = Math.max(Date.now() + poll * 1000, Math.min(...nextChecks));
    if (wakeAt > deadline) {
      out.note(`--max-wait reached with ${pending.length} proof(s) still pending`);
      break;
    }
    out.note(`${pending.length} proof(s) pending; asking again at ${new Date(wakeAt).toISOString()}`);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, wakeAt - Date.now());
      controller.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(new TimesealClientError('aborted', 'interrupted while waiting'));
      }, { once: true });
    });
  }
  for (const [f, r] of final) {
    const p = proofs.get(f)!;
    const base = { proof: shown(f), file: p.file, hash: r.hash };
    if (r.error !== undefined) {
      codes.push(r.error.code === 'not-found' ? 3 : isTemporary(r.error) ? TEMPORARY : 1);
      out.record({ ...base, state: 'error', code: r.error.code, error: r.error.message }, () => [`${shown(f)}: FAILED (${r.error!.code}): ${r.error!.message}`]);
    } else {
      codes.push(r.complete ? 0 : 2);
      out.record({ ...base, state: r.complete ? 'complete' : 'pending', stage: r.stage, changed: r.changed, nextCheck: r.nextCheck, notes: r.notes }, () => [`${shown(f)}: ${r.complete ? 'COMPLETE' : 'PENDING'} (${r.stage}${r.changed ? ', updated' : ''}): ${r.notes.join('; ') || 'nothing new'}${r.nextCheck ? `; next check ${r.nextCheck}` : ''}`]);
    }
  }
  return worst(codes);
}

// ---- verify -----------------------------------------------------------------------------------------------

interface VerifyPair {
  display: string;
  doc: string | null;
  digest?: string;
  proofPath: string;
}

async function runVerify(paths: string[], opts: Common & { digest: string[]; proof?: string; keys?: string }): Promise<Exit> {
  const out = printer(!!opts.json);
  const walkOptions = { all: !!opts.all, exclude: opts.exclude.map(globToRegExp) };
  const pairs: VerifyPair[] = [];
  const codes: Exit[] = [];
  const notFound = (file: string, why: string, extra: Record<string, unknown> = {}) => {
    codes.push(3);
    out.record({ file, state: 'not-found', exitCode: 3, error: why, ...extra }, () => [`${file}: NOT FOUND: ${why}`]);
  };
  const proofs = paths.filter((p) => p.endsWith(PROOF_SUFFIX));
  const docs = paths.filter((p) => !p.endsWith(PROOF_SUFFIX));
  for (const d of opts.digest) {
    const hash = checkHash(d, '--digest');
    const given = opts.proof ?? (opts.digest.length === 1 && docs.length === 0 && proofs.length === 1 ? proofs[0] : undefined);
    pairs.push({ display: hash, doc: null, digest: hash, proofPath: given !== undefined ? path.resolve(given) : digestProofPath(hash, opts.outDir) });
  }
  if (opts.digest.length === 0) {
    const pairedProof = opts.proof ?? (docs.length === 1 && proofs.length === 1 ? proofs[0] : undefined);
    if (pairedProof !== undefined) {
      if (docs.length !== 1) throw new TimesealClientError('usage', '--proof goes with exactly one file (or one --digest)');
      pairs.push({ display: docs[0]!, doc: path.resolve(docs[0]!), proofPath: path.resolve(pairedProof) });
    } else {
      for (const p of paths) {
        const abs = path.resolve(p);
        if (p.endsWith(PROOF_SUFFIX)) {
          pairs.push({ display: p, doc: null, proofPath: abs });
          continue;
        }
        const st = fs.statSync(abs, { throwIfNoEntry: false });
        if (st === undefined) notFound(p, 'no such file or folder');
        else if (st.isDirectory()) {
          const skipped: Skipped[] = [];
          for (const f of walk(abs, walkOptions, skipped, shown)) pairs.push({ display: shown(f), doc: f, proofPath: proofPathFor(f, opts.outDir) });
        } else pairs.push({ display: p, doc: abs, proofPath: proofPathFor(abs, opts.outDir) });
      }
    }
  }
  if (pairs.length === 0 && codes.length === 0) throw new TimesealClientError('usage', 'nothing to verify: give files, folders, proof files or --digest HEX');

  const trustFile = trustPath(opts);
  const trust = loadTrust(trustFile);
  let keys: KeyFiles | undefined;
  if (opts.keys !== undefined) {
    const dir = path.resolve(opts.keys);
    keys = keyFilesFrom((name) => {
      try {
        return new Uint8Array(fs.readFileSync(path.join(dir, name)));
      } catch {
        return undefined;
      }
    });
  }
  const network = networkOf(opts);
  const cache = new VerifyCache();
  /** What verifying one pair gives: its exit code and its record. */
  interface Outcome {
    code: Exit;
    record: Record<string, unknown>;
    human: () => string[];
  }
  const missing = (file: string, why: string, extra: Record<string, unknown> = {}): Outcome => ({ code: 3, record: { file, state: 'not-found', exitCode: 3, error: why, ...extra }, human: () => [`${file}: NOT FOUND: ${why}`] });
  const verifyPair = async (pair: VerifyPair): Promise<Outcome> => {
    const proofText = readIfExists(pair.proofPath);
    if (proofText === undefined) return missing(pair.display, `no proof file ${shown(pair.proofPath)}`, { proof: shown(pair.proofPath) });
    let proof: ProofFile;
    try {
      proof = parseProofFile(proofText);
    } catch (err) {
      return { code: 1, record: { file: pair.display, proof: shown(pair.proofPath), state: 'invalid', exitCode: 1, problems: [(err as Error).message] }, human: () => [`${pair.display}: INVALID: ${shown(pair.proofPath)}: ${(err as Error).message}`] };
    }
    let doc = pair.doc;
    let display = pair.display;
    if (doc === null && pair.digest === undefined && proof.file !== null) {
      doc = path.resolve(path.dirname(pair.proofPath), proof.file);
      display = shown(doc);
    }
    let hash = pair.digest;
    if (doc !== null) {
      try {
        hash = await hashFile(doc, undefined, controller.signal);
      } catch (err) {
        if (controller.signal.aborted) throw err;
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return missing(display, `the document is missing (its proof is ${shown(pair.proofPath)})`, { proof: shown(pair.proofPath) });
        throw err;
      }
    }
    const report = await verify(proof, { trust, ...(keys === undefined ? {} : { keys }), ...(hash === undefined ? {} : { hash }), network, signal: controller.signal, cache });
    return { code: report.exitCode, record: { file: display, proof: shown(pair.proofPath), ...report }, human: () => humanReport(display, report) };
  };
  // A few files at once, printed in order: reading a file and Web Crypto's checks wait on other threads.
  await mapInOrder(pairs, VERIFY_CONCURRENCY, verifyPair, (o) => {
    codes.push(o.code);
    out.record(o.record, o.human);
  });
  saveTrust(trustFile, trust);
  return worst(codes);
}

function humanReport(name: string, r: VerifyReport): string[] {
  const head =
    r.state === 'complete'
      ? `COMPLETE${r.existedNoLaterThan ? `: existed no later than ${r.existedNoLaterThan.time} (${r.existedNoLaterThan.by})` : ''}`
      : r.state === 'pending'
        ? `PENDING (valid so far)${r.existedNoLaterThan ? `: existed no later than ${r.existedNoLaterThan.time} (${r.existedNoLaterThan.by})` : ''}`
        : `INVALID: ${r.problems[0] ?? ''}`;
  return [
    `${name}: ${head}`,
    ...r.layers.map((l) => `  ${l.status.padEnd(8)}${l.layer.padEnd(16)}${l.checked}${l.bound ? ` — existed no later than ${l.bound.time} (${l.bound.by})` : ''}`),
  ];
}

// ---- info -------------------------------------------------------------------------------------------------

async function runInfo(paths: string[], opts: Common): Promise<Exit> {
  const out = printer(!!opts.json);
  const codes: Exit[] = [];
  for (const p of paths) {
    const file = p.endsWith(PROOF_SUFFIX) ? path.resolve(p) : proofPathFor(path.resolve(p), opts.outDir);
    let proof: ProofFile;
    try {
      proof = readProof(file);
    } catch (err) {
      const code = err instanceof TimesealClientError && err.code === 'not-found' ? 3 : 1;
      codes.push(code);
      out.record({ proof: shown(file), error: (err as Error).message }, () => [`${shown(file)}: ${code === 3 ? 'NOT FOUND' : 'INVALID'}: ${(err as Error).message}`]);
      continue;
    }
    const info = await describeProof(proof);
    codes.push(0);
    out.record({ proof: shown(file), ...info }, () => [
      `${shown(file)}: ${info.stage}`,
      `  hash:      ${info.hash}${info.file === null ? '' : ` (${info.file})`}`,
      `  server:    ${info.server}`,
      `  submitted: ${info.submittedAt ?? 'unknown'}${info.ledgerDate === null ? '' : `, for the ledger of ${info.ledgerDate}`}`,
      `  receipt:   ${info.receipt === null ? 'none' : `${info.receipt.genTime}, ${info.receipt.tsa}, serial ${info.receipt.serialNumber}`}`,
      `  ledger:    ${info.ledger === null ? 'not published in this proof yet' : `${info.ledger.date}, leaf ${info.ledger.leafIndex} of ${info.ledger.treeSize}, log ${info.ledger.origin}`}`,
      `  bitcoin:   ${info.ots === null ? 'no .ots yet' : `${info.ots.bitcoin.length > 0 ? `block(s) ${info.ots.bitcoin.join(', ')}` : 'not yet'}${info.ots.pending.length > 0 ? `; pending at ${info.ots.pending.join(', ')}` : ''}`}; headers kept: ${info.headers.join(', ') || 'none'}`,
      `  updated:   ${info.updatedAt}`,
    ]);
  }
  return worst(codes);
}

// ---- the program ------------------------------------------------------------------------------------------

const collect = (value: string, previous: string[]) => [...previous, value];

function common(cmd: Command, { server = true, walkOpts = true } = {}): Command {
  if (server) cmd.option('--server <url>', 'the Timeseal server (default: TIMESEAL_SERVER)');
  cmd
    .option('--trust <file>', 'the trust store: keys pinned per server, checkpoints seen (default: TIMESEAL_TRUST, else ~/.config/timeseal-client/trust.json)')
    .option('--out-dir <dir>', 'proof files under this folder (at each file\'s path relative to the working folder) instead of beside each file')
    .option('--json', 'one JSON object per file, one a line, and nothing else on stdout');
  if (walkOpts) cmd.option('--all', 'include dot-files and dot-folders').option('--exclude <glob>', 'leave out paths matching the glob (repeatable; matched against the path under the folder given and the name)', collect, []);
  return cmd.option('--timeout <ms>', 'deadline of each HTTP request, milliseconds', '30000');
}

export async function main(argv: string[]): Promise<number> {
  const program = new Command('timeseal-client')
    .version(VERSION)
    .description('Timestamp files with a Timeseal server and verify the proofs offline. Exit codes: 0 complete, 2 pending (valid so far), 1 invalid or error, 3 not found, 75 temporary (stamp, upgrade: the server could not be reached or failed; run the same command again to continue).')
    .showHelpAfterError();
  let exit: number = 0;
  common(
    program
      .command('stamp')
      .description('hash files locally (streamed) and timestamp the hashes; writes <file>.timeseal.json with the receipt at once; a re-run skips complete proofs and upgrades pending ones')
      .argument('[paths...]', 'files, folders (recursive; symbolic links are not followed) or - for stdin')
      .option('--digest <hex>', 'a SHA-256 to stamp as it is (repeatable); its proof is <hex>.timeseal.json', collect, [])
      .option('--digests-from <file>', 'sha256sum output (- for stdin): each hash is stamped, its proof beside the file named')
      .option('--no-progress', 'no progress line (it shows only on a terminal anyway)')
      .option('--batch-size <n>', `hashes per request to the batch route (1 to ${MAX_BATCH})`, String(MAX_BATCH))
      .option('--concurrency <n>', 'requests in flight when the server has no batch route', '8')
      .option('--headers-from <url>', 'Esplora API for Bitcoin block headers, when upgrading pending proofs (default: TIMESEAL_HEADERS_FROM, else https://blockstream.info/api)')
      .addOption(new Option('--network <name>', 'Bitcoin network of the block headers (default: TIMESEAL_BITCOIN_NETWORK, else mainnet)').choices(['mainnet', 'regtest'])),
  ).action(async (paths: string[], opts) => {
    if (paths.length === 0 && opts.digest.length === 0 && opts.digestsFrom === undefined) throw new TimesealClientError('usage', 'nothing to stamp: give files, folders, -, --digest HEX or --digests-from FILE');
    exit = await runStamp(paths, opts);
  });
  common(
    program
      .command('upgrade')
      .description('complete proof files once the day is published: the proof bundle, a consistency proof to the latest checkpoint, and once anchored the Bitcoin block headers (exit 0 all complete, 2 some pending)')
      .argument('[paths...]', 'proof files, documents (their proofs) or folders (every proof under them); default: the working folder')
      .option('--wait', 'keep asking until every proof is complete, politely (--poll, the server\'s Retry-After, the publication time)')
      .option('--poll <seconds>', 'with --wait: the least time between two rounds', '300')
      .option('--max-wait <seconds>', 'with --wait: give up after this long', String(48 * 3600))
      .option('--headers-from <url>', 'Esplora API for Bitcoin block headers (default: TIMESEAL_HEADERS_FROM, else https://blockstream.info/api)')
      .addOption(new Option('--network <name>', 'Bitcoin network of the block headers (default: TIMESEAL_BITCOIN_NETWORK, else mainnet)').choices(['mainnet', 'regtest'])),
  ).action(async (paths: string[], opts) => {
    exit = await runUpgrade(paths, opts);
  });
  common(
    program
      .command('verify')
      .description('verify offline: every layer the proof holds, with the pinned keys; exit 0 complete, 2 pending (valid so far), 1 invalid, 3 not found')
      .argument('[paths...]', 'a file and optionally its proof, files, folders, or proof files (their documents beside them)')
      .option('--digest <hex>', 'verify a SHA-256 instead of a file (repeatable)', collect, [])
      .option('--proof <file>', 'the proof file of the one file (or digest) given')
      .option('--keys <dir>', 'a folder of the server\'s public keys (public.pem, dilithium_public.key, timeseal-tsa-root.pem, …) to use instead of the pinned ones')
      .addOption(new Option('--network <name>', 'Bitcoin network whose proof-of-work limit applies (default: TIMESEAL_BITCOIN_NETWORK, else mainnet)').choices(['mainnet', 'regtest'])),
    { server: false },
  ).action(async (paths: string[], opts) => {
    exit = await runVerify(paths, opts);
  });
  common(program.command('info').description('what a proof file holds, without checking it').argument('<proofs...>', 'proof files, or documents (their proofs)'), { server: false, walkOpts: false }).action(async (paths: string[], opts) => {
    exit = await runInfo(paths, { ...opts, exclude: [] });
  });
  try {
    await program.parseAsync(argv);
  } catch (err) {
    const e = err as TimesealClientError;
    process.stderr.write(`timeseal-client: ${e.code === undefined ? '' : `${e.code}: `}${e.message}\n`);
    if (e.code === 'not-found') return 3;
    return e instanceof TimesealClientError && isTemporary(e) && !controller.signal.aborted ? TEMPORARY : 1;
  }
  return exit;
}
