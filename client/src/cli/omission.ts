// A promise broken by omission, on disk: for the proofs the library's upgrade found broken (the server's 404 once
// its days.json lists the day), the day's signed ledger is downloaded, checked (omission.ts fetchDayLedger) and kept
// in `timeseal-ledgers/` beside them, and each proof is written as `timeseal-client-proof/2` naming it. `upgrade`
// and `stamp` (its upgrade of pending proofs) call it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { TimesealClientError } from '../errors.ts';
import { normalizeServer, type HttpOptions } from '../http.ts';
import { loadKeys } from '../keys.ts';
import { checkKeptLedger, fetchDayLedger, keptSignatures, type LedgerSink } from '../omission.ts';
import { encodeProofFile } from '../proof-file.ts';
import type { ProofFile, TrustData } from '../types.ts';
import type { UpgradeResult } from '../upgrade.ts';
import { shown } from './common.ts';
import { besideProof, KEPT_LEDGERS, nodeDigests, writeAtomic } from './files.ts';

/**
 * For each proof the library found broken (the server's 404 once days.json lists its day): the day's signed ledger,
 * downloaded once per server and day (shared by every such proof of the run), checked (fetchDayLedger) and kept in
 * `timeseal-ledgers/` of the first proof's folder (copied into the others'); each proof whose hash it does not hold
 * is written as version 2 naming it. A hash the signed ledger holds makes the server's 404 wrong: said, nothing
 * kept (an 'http' error, exit 1). A download or check that fails keeps nothing, and its error is the proof's.
 * A proof that is version 2 already, whose kept ledger still checks (checkKeptLedger, as verify checks it), is
 * not downloaded for again (a day may be a gigabyte, and `upgrade .` runs often); one whose kept files are missing
 * or changed is, and they are written anew. `results` are changed in place; the files are written here.
 */
export async function keepOmissions(
  results: UpgradeResult[],
  files: string[],
  options: HttpOptions & { trust: TrustData; server?: string },
): Promise<void> {
  const groups = new Map<string, number[]>();
  for (const [i, r] of results.entries()) {
    if (r.error?.code !== 'broken' || r.proof.ledgerDate === null) continue;
    const key = `${normalizeServer(options.server ?? r.proof.server)} ${r.proof.ledgerDate}`;
    groups.set(key, [...(groups.get(key) ?? []), i]);
  }
  for (const [key, all] of groups) {
    const [server, date] = key.split(' ') as [string, string];
    const pinned = options.trust.servers[server];
    if (pinned === undefined) continue;
    const members: number[] = [];
    for (const i of all) {
      const r = results[i]!;
      const o = r.proof.omittedFrom;
      const kept =
        o === undefined || o.date !== date
          ? null
          : await checkKeptLedger(
              o,
              r.proof.hash,
              loadKeys(pinned.keys),
              pinned.origin,
              besideProof(files[i]!),
              nodeDigests,
            );
      if (kept !== null && 'facts' in kept && kept.facts.absent.length > 0)
        results[i] = {
          ...r,
          error: new TimesealClientError(
            'broken',
            `the ledger of ${date} is published and does not hold this hash: the promise is broken; its signed ledger, kept in ${shown(path.join(path.dirname(files[i]!), ...o!.ledger.split('/')))}, checked again (both signatures with the pinned keys; not downloaded again)`,
          ),
        };
      else members.push(i);
    }
    if (members.length === 0) continue;
    const folders = [...new Set(members.map((i) => path.dirname(files[i]!)))];
    const relative = `${KEPT_LEDGERS}/${date}.json`;
    const home = path.join(folders[0]!, ...relative.split('/'));
    let facts;
    try {
      facts = await fetchDayLedger(
        server,
        date,
        members.map((i) => results[i]!.proof.hash),
        loadKeys(pinned.keys),
        pinned.origin,
        fileSink(home),
        { ...options, digests: nodeDigests },
      );
    } catch (err) {
      const e = err instanceof TimesealClientError ? err : new TimesealClientError('invalid', (err as Error).message);
      for (const i of members)
        results[i] = {
          ...results[i]!,
          error: new TimesealClientError(
            e.code,
            `${results[i]!.error!.message}; the day's signed ledger, which would show it, was not kept: ${e.message}`,
            { cause: e, ...(e.status === undefined ? {} : { status: e.status }) },
          ),
        };
      continue;
    }
    if (pinned.origin === null) pinned.origin = facts.head.origin;
    const names = keptSignatures(relative);
    if (facts.absent.length > 0)
      for (const folder of folders.slice(1))
        for (const f of [relative, names.ecdsa, names.mldsa]) {
          const to = path.join(folder, ...f.split('/'));
          fs.mkdirSync(path.dirname(to), { recursive: true });
          const tmp = `${to}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
          fs.copyFileSync(path.join(folders[0]!, ...f.split('/')), tmp);
          fs.renameSync(tmp, to);
        }
    for (const i of members) {
      const r = results[i]!;
      const leaf = facts.present.get(r.proof.hash);
      if (leaf !== undefined) {
        results[i] = {
          ...r,
          error: new TimesealClientError(
            'http',
            `${server} answered 404 for ${r.proof.hash}, but its signed ledger of ${date} (both signatures checked with the pinned keys) holds it at leaf ${leaf}: the server's answer is wrong, and nothing is kept; run upgrade again later`,
            { status: 404 },
          ),
        };
        continue;
      }
      const proof: ProofFile = {
        ...r.proof,
        omittedFrom: { date, ledger: relative, sha256: facts.sha256, size: facts.size },
        updatedAt: new Date().toISOString(),
      };
      writeAtomic(files[i]!, encodeProofFile(proof));
      results[i] = {
        ...r,
        proof,
        changed: true,
        error: new TimesealClientError(
          'broken',
          `the ledger of ${date} is published and does not hold this hash: the promise is broken; its signed ledger (${facts.size} bytes, SHA-256 ${facts.sha256}, the one ${server}/ledgers/days.json lists; both signatures checked with the pinned keys; ${facts.head.treeSize - facts.head.firstIndex} hashes, not this one) is kept in ${shown(path.join(path.dirname(files[i]!), ...relative.split('/')))} with its .sig and .dilithium.sig, and the proof file names it: verify shows the broken promise offline`,
        ),
      };
    }
  }
}

/** A kept ledger written to a temporary file beside `file` as it is read, renamed to `file` once it checked (its
 * signatures written beside it first). */
function fileSink(file: string): LedgerSink {
  const tmp = `${file}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  let handle: fs.promises.FileHandle | undefined;
  return {
    async write(piece) {
      if (handle === undefined) {
        await fs.promises.mkdir(path.dirname(file), { recursive: true });
        handle = await fs.promises.open(tmp, 'w');
      }
      await handle.write(piece);
    },
    async keep({ ecdsa, mldsa }) {
      await handle?.close();
      handle = undefined;
      writeAtomic(`${file}.sig`, ecdsa);
      writeAtomic(`${file}.dilithium.sig`, mldsa);
      fs.renameSync(tmp, file);
    },
    async discard() {
      await handle?.close();
      handle = undefined;
      fs.rmSync(tmp, { force: true });
    },
  };
}
